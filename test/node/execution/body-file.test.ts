/**
 * The append-only block body file (body-file.ts): bodies read back by their index, uncommitted
 * bytes are overwritten by the next body and cut on open, a file shorter than the database's end
 * is refused, and damaged index values are typed errors.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../../../src/core/errors.js';
import { BodyFile, bodyBytes, decodeBodyIndex, encodeBodyIndex, type BodyIndex } from '../../../src/node/execution/body-file.js';
import { withTempDir } from './fixture.js';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
/** Envelopes as an SSZ block carries them: views lying back to back in one buffer (and one apart). */
function envelopes(fill: number): Uint8Array[] {
  const buf = new Uint8Array(300).fill(fill);
  return [buf.subarray(0, 100), buf.subarray(100, 250), bytes(7, fill + 1)];
}
const receipts = (tag: string) => [`{"r":"${tag}0"}`, `{"r":"${tag}1","é":1}`, `{"r":"${tag}2"}`];

/** Reads the envelopes and receipts of `ix` back from the file. */
async function readBack(f: BodyFile, ix: BodyIndex): Promise<{ envelopes: Uint8Array[]; receipts: string[] }> {
  const all = await f.read(ix.offset, bodyBytes(ix));
  const env: Uint8Array[] = [];
  let at = 0;
  for (const n of ix.envelopeLengths) env.push(new Uint8Array(all.subarray(at, (at += n))));
  const rec: string[] = [];
  for (const n of ix.receiptLengths) rec.push(all.toString('utf8', at, (at += n)));
  return { envelopes: env, receipts: rec };
}

const t = suite('body file');

t('bodies read back by their index; an abandoned body is overwritten by the next', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'blocks.bodies');
    const f = await BodyFile.open(path, 0);
    try {
      const a = f.begin(envelopes(1)).finish(receipts('a'));
      await a.synced;
      assert.is(a.index.offset, 0);
      f.committed(a.index.offset + bodyBytes(a.index));
      // Refused after its envelopes were written: nothing commits it.
      const dropped = f.begin([bytes(5000, 9)]);
      await dropped.settle();
      const b = f.begin(envelopes(3)).finish(receipts('b'));
      await b.synced;
      assert.is(b.index.offset, bodyBytes(a.index), 'the next body starts at the committed end, over the abandoned one');
      f.committed(b.index.offset + bodyBytes(b.index));
      assert.equal(await readBack(f, a.index), { envelopes: envelopes(1).map((e) => new Uint8Array(e)), receipts: receipts('a') });
      assert.equal(await readBack(f, b.index), { envelopes: envelopes(3).map((e) => new Uint8Array(e)), receipts: receipts('b') });
      // The abandoned body's tail is still past the end until the next open cuts it.
      assert.ok((await stat(path)).size > f.committedEnd);
    } finally {
      await f.close();
    }
    const end = 2 * bodyBytes({ offset: 0, envelopeLengths: Uint32Array.of(100, 150, 7), receiptLengths: Uint32Array.from(receipts('a'), (r) => Buffer.byteLength(r)) });
    const again = await BodyFile.open(path, end);
    await again.close();
    assert.is((await stat(path)).size, end, 'opening cut the bytes no index names');
  });
});

t('opening cuts what a crash left past the indexed end, and refuses a file shorter than it', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'blocks.bodies');
    await writeFile(path, bytes(100, 1));
    await appendFile(path, bytes(50, 2));
    const f = await BodyFile.open(path, 100);
    assert.is(f.committedEnd, 100);
    await f.close();
    assert.is((await stat(path)).size, 100);
    await truncate(path, 60);
    try {
      await BodyFile.open(path, 100);
      assert.unreachable('a file shorter than the indexed end opened');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'CORRUPT_DB');
    }
  });
});

t('a read past the end of the file is a typed error, not short data', async () => {
  await withTempDir(async (dir) => {
    const f = await BodyFile.open(join(dir, 'blocks.bodies'), 0);
    try {
      await f.read(0, 10);
      assert.unreachable('read past the end');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'CORRUPT_DB');
    } finally {
      await f.close();
    }
  });
});

t('index values round-trip; damaged ones are CORRUPT_DB', () => {
  const ix: BodyIndex = { offset: 2 ** 40 + 5, envelopeLengths: Uint32Array.of(5346, 1, 0), receiptLengths: Uint32Array.of(420, 2 ** 31, 3) };
  const enc = encodeBodyIndex(ix);
  assert.equal(decodeBodyIndex(enc, 'j:x'), ix);
  for (const bad of [enc.subarray(0, 9), enc.subarray(0, enc.length - 1), new Uint8Array(0)]) {
    try {
      decodeBodyIndex(bad, 'j:x');
      assert.unreachable(`decoded ${bad.length} bytes`);
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'CORRUPT_DB');
    }
  }
});

t.run();
