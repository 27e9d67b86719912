/** writeFileAtomic: contents, mode, no temporary file left, refusal without force, replacement with it, concurrent writers. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcError } from '../../src/core/errors.js';
import { writeFileAtomic } from '../../src/util/fs.js';

const fsSuite = suite('util/fs');
let dir = '';

fsSuite.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-fs-test-'));
});
fsSuite.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

fsSuite('writes the contents with mode 0600, creating the directory, and leaves no temporary file', async () => {
  const path = join(dir, 'sub', 'key.json');
  await writeFileAtomic(path, '{"a":1}\n');
  assert.is(await readFile(path, 'utf8'), '{"a":1}\n');
  assert.is((await stat(path)).mode & 0o777, 0o600);
  assert.equal(await readdir(join(dir, 'sub')), ['key.json']);
});

fsSuite('refuses an existing file without force and keeps it; replaces it with force', async () => {
  const path = join(dir, 'f');
  await writeFileAtomic(path, new Uint8Array([1, 2, 3]));
  try {
    await writeFileAtomic(path, 'other');
    assert.unreachable('an existing file was overwritten without force');
  } catch (err) {
    assert.instance(err, SvcError);
    assert.is((err as SvcError).code, 'FILE_EXISTS');
  }
  assert.equal([...(await readFile(path))], [1, 2, 3]);
  await writeFileAtomic(path, 'other', { force: true, mode: 0o640 });
  assert.is(await readFile(path, 'utf8'), 'other');
  assert.is((await stat(path)).mode & 0o777, 0o640);
  assert.equal(await readdir(dir), ['f']);
});

fsSuite('of two concurrent writers without force, exactly one wins and the file is whole', async () => {
  const path = join(dir, 'race');
  const a = 'a'.repeat(100_000);
  const b = 'b'.repeat(100_000);
  const results = await Promise.allSettled([writeFileAtomic(path, a), writeFileAtomic(path, b)]);
  assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  assert.is((loser.reason as SvcError).code, 'FILE_EXISTS');
  const got = await readFile(path, 'utf8');
  assert.ok(got === a || got === b, 'the file is one writer\'s whole contents');
  assert.equal(await readdir(dir), ['race']);
});

fsSuite.run();
