/**
 * Devnet log files: the list (logFiles), the last lines (tailLines) and following new output
 * (followLog). Waits are on observable conditions with deadlines, never fixed sleeps.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getEventListeners } from 'node:events';
import { appendFileSync, closeSync, openSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { devnetLayout } from '../../src/devnet/layout.js';
import { followLog, logFiles, tailLines } from '../../src/devnet/logs.js';
import { DevnetError, manifestPath, writeManifest } from '../../src/devnet/manifest.js';
import { expectError } from '../helpers/assert.js';
import { sampleManifest, waitUntil, withTempDir, within } from './fixture.js';

const KIB = 1024;

// ---------------------------------------------------------------------------------------------
// tailLines

test('tailLines: [] for a file that does not exist (yet)', () =>
  withTempDir(async (dir) => {
    assert.equal(await tailLines(join(dir, 'nope.log'), 10), []);
    assert.equal(await tailLines(join(dir, 'no', 'such', 'dir.log'), 1), []);
  }),
);

test('tailLines: [] for n = 0 and for an empty file', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    await writeFile(path, 'one\ntwo\n');
    assert.equal(await tailLines(path, 0), []);
    await writeFile(path, '');
    assert.equal(await tailLines(path, 5), []);
  }),
);

test('tailLines: every line when the file has fewer than n, exactly n lines', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    await writeFile(path, 'one\ntwo\nthree\n');
    assert.equal(await tailLines(path, 10), ['one', 'two', 'three']);
    assert.equal(await tailLines(path, 3), ['one', 'two', 'three']);
  }),
);

test('tailLines: the last n lines of a longer file', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    await writeFile(path, Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(''));
    assert.equal(await tailLines(path, 2), ['line 98', 'line 99']);
    assert.equal(await tailLines(path, 1), ['line 99']);
    assert.equal((await tailLines(path, 100)).length, 100);
    assert.equal((await tailLines(path, 101)).length, 100);
  }),
);

test('tailLines: a last line without a trailing newline counts as a line', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    await writeFile(path, 'one\ntwo\nthree');
    assert.equal(await tailLines(path, 1), ['three']);
    assert.equal(await tailLines(path, 2), ['two', 'three']);
    assert.equal(await tailLines(path, 5), ['one', 'two', 'three']);
    await writeFile(path, 'only');
    assert.equal(await tailLines(path, 3), ['only']);
  }),
);

test('tailLines: blank lines are kept (only the final newline is not a line)', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    await writeFile(path, 'a\n\nb\n\n');
    assert.equal(await tailLines(path, 10), ['a', '', 'b', '']);
    assert.equal(await tailLines(path, 1), ['']);
  }),
);

test('tailLines: a file much larger than 64 KiB with long lines', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'big.log');
    // 12 lines of 20 KiB each (240 KiB): the last n lines span several 64 KiB chunks.
    const lines = Array.from({ length: 12 }, (_, i) => String.fromCharCode(97 + i).repeat(20 * KIB - 3) + `-${String(i).padStart(2, '0')}`);
    await writeFile(path, lines.join('\n') + '\n');
    assert.equal(await tailLines(path, 1), lines.slice(-1));
    assert.equal(await tailLines(path, 4), lines.slice(-4));
    assert.equal(await tailLines(path, 7), lines.slice(-7), 'seven lines need more than two chunks');
    assert.equal(await tailLines(path, 12), lines);
    assert.equal(await tailLines(path, 50), lines);
    await writeFile(path, lines.join('\n'));
    assert.equal(await tailLines(path, 5), lines.slice(-5), 'same without the trailing newline');
  }),
);

test('tailLines: one line longer than the whole 64 KiB chunk', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'big.log');
    const huge = 'x'.repeat(150 * KIB);
    await writeFile(path, `first\n${huge}\nlast\n`);
    assert.equal(await tailLines(path, 1), ['last']);
    assert.equal(await tailLines(path, 2), [huge, 'last']);
    assert.equal(await tailLines(path, 3), ['first', huge, 'last']);
  }),
);

test('tailLines: multi-byte UTF-8 characters split by a 64 KiB chunk boundary come back intact', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'utf8.log');
    // 'é' is two bytes; the file is 100 003 bytes, so the last chunk starts at byte 34 467,
    // in the middle of an 'é' of the long line.
    const long = 'é'.repeat(50_000);
    await writeFile(path, `${long}\nx\n`);
    assert.is(Buffer.byteLength(`${long}\nx\n`) - 64 * KIB, 34_467);
    const got = await tailLines(path, 2);
    assert.is(got.length, 2);
    assert.ok(!got[0]!.includes('\uFFFD'), 'no replacement characters');
    assert.equal(got, [long, 'x']);
    // Three-byte and four-byte characters at every alignment.
    for (const ch of ['€', '😀']) {
      for (let pad = 0; pad < 4; pad++) {
        const line = 'p'.repeat(pad) + ch.repeat(30_000);
        await writeFile(path, `head\n${line}\ntail\n`);
        assert.equal(await tailLines(path, 2), [line, 'tail'], `${ch} with ${pad} padding byte(s)`);
      }
    }
  }),
);

// ---------------------------------------------------------------------------------------------
// followLog

/**
 * Starts following `path` (an existing file) every 10 ms and returns once the follower is known to
 * be past its start-up: a marker line appended to the file has been delivered (re-appended until
 * one is, since markers written before the follower took the file's size are, rightly, not
 * delivered). `text()` is what was delivered after that; `all()` includes the markers.
 */
async function follow(path: string) {
  const chunks: string[] = [];
  let skip = 0;
  const ac = new AbortController();
  const done = followLog(path, (c) => chunks.push(c), ac.signal, 10);
  const all = () => chunks.join('');
  const text = () => chunks.slice(skip).join('');
  const stop = async () => {
    ac.abort();
    await within('followLog to return after abort', done);
  };
  for (let k = 0; ; k++) {
    appendFileSync(path, `sync ${k}\n`);
    try {
      await waitUntil(`marker ${k}`, () => all().includes(`sync ${k}\n`), 250);
      break;
    } catch (err) {
      if (k >= 20) {
        await stop();
        throw err;
      }
    }
  }
  skip = chunks.length;
  return {
    ac,
    all,
    text,
    /** Waits until what was delivered after start-up satisfies `pred`. */
    until: (what: string, pred: (t: string) => boolean) => waitUntil(what, () => pred(text())),
    stop,
  };
}

test('followLog: delivers text appended after it starts, not what was there before', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, 'old line\n');
    const f = await follow(path);
    try {
      appendFileSync(path, 'new 1\n');
      await f.until('first append', (t) => t === 'new 1\n');
      appendFileSync(path, 'new 2\nnew 3\n');
      await f.until('second append', (t) => t === 'new 1\nnew 2\nnew 3\n');
    } finally {
      await f.stop();
    }
    assert.is(f.text(), 'new 1\nnew 2\nnew 3\n');
    assert.ok(!f.all().includes('old line'), 'what was in the file before is not delivered');
  }),
);

test('followLog: a file created after it starts is followed from its start', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'later.log');
    const chunks: string[] = [];
    const ac = new AbortController();
    const done = followLog(path, (c) => chunks.push(c), ac.signal, 10);
    try {
      writeFileSync(path, 'hello\n');
      await waitUntil('the new file', () => chunks.join('') === 'hello\n');
      appendFileSync(path, 'world\n');
      await waitUntil('the append', () => chunks.join('') === 'hello\nworld\n');
    } finally {
      ac.abort();
      await within('followLog to return after abort', done);
    }
  }),
);

test('followLog: a truncated file is followed from its start', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, 'a long line written before the restart\n');
    const f = await follow(path);
    try {
      truncateSync(path, 0);
      appendFileSync(path, 'restarted\n');
      await f.until('the restarted log', (t) => t === 'restarted\n');
      appendFileSync(path, 'more\n');
      await f.until('more', (t) => t === 'restarted\nmore\n');
    } finally {
      await f.stop();
    }
  }),
);

test('followLog: a file replaced by a new, longer one is followed from the new file\'s start', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, 'old\n');
    const f = await follow(path);
    try {
      // Atomically replaced: the follower never sees the path missing or shorter than before.
      const fresh = `a recreated log, longer than the old one ${'-'.repeat(400)}\n`;
      writeFileSync(join(dir, 'next.log'), fresh);
      renameSync(join(dir, 'next.log'), path);
      await f.until('the new file', (t) => t.endsWith(fresh));
      assert.is(f.text(), fresh);
    } finally {
      await f.stop();
    }
  }),
);

test('followLog: a file deleted and recreated (longer) is followed from the new file\'s start', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, 'old\n');
    const f = await follow(path);
    // Holding the old file open keeps its inode allocated, so the new file is surely a different one.
    const held = openSync(path, 'r');
    try {
      rmSync(path);
      const fresh = `recreated and longer ${'-'.repeat(400)}\n`;
      writeFileSync(path, fresh);
      await f.until('the recreated file', (t) => t.endsWith(fresh));
      assert.is(f.text(), fresh);
    } finally {
      closeSync(held);
      await f.stop();
    }
  }),
);

test('followLog: returns when the signal aborts mid-wait and delivers nothing afterwards', () =>
  withTempDir(async (dir) => {
    // A missing file: followLog takes offset 0 without awaiting, so it is already waiting out its
    // 60 s interval when followLog() returns.
    const path = join(dir, 'a.log');
    const chunks: string[] = [];
    const ac = new AbortController();
    const done = followLog(path, (c) => chunks.push(c), ac.signal, 60_000);
    ac.abort();
    // Returning well within the interval means the abort cut the wait short.
    await within('followLog to return after abort', done, 2_000);
    writeFileSync(path, 'after abort\n');
    assert.equal(chunks, []);
  }),
);

test('followLog: stops following once aborted (10 ms polls)', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, '');
    const f = await follow(path);
    appendFileSync(path, 'before\n');
    await f.until('before', (t) => t === 'before\n');
    await f.stop();
    appendFileSync(path, 'after\n');
    assert.is(f.text(), 'before\n');
  }),
);

test('followLog: returns at once for an already aborted signal', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, 'x\n');
    const chunks: string[] = [];
    await within('followLog with an aborted signal', followLog(path, (c) => chunks.push(c), AbortSignal.abort(), 60_000), 2_000);
    assert.equal(chunks, []);
  }),
);

test('followLog: does not pile up abort listeners while it polls', () =>
  withTempDir(async (dir) => {
    const path = join(dir, 'a.log');
    writeFileSync(path, '');
    const f = await follow(path);
    try {
      // Each append is delivered by a later poll, so this waits for at least 30 polls.
      for (let i = 0; i < 30; i++) {
        appendFileSync(path, `${i}\n`);
        await f.until(`line ${i}`, (t) => t.endsWith(`${i}\n`));
      }
      const listeners = getEventListeners(f.ac.signal, 'abort').length;
      assert.ok(listeners <= 1, `${listeners} abort listeners after 30 polls`);
    } finally {
      await f.stop();
    }
  }),
);

// ---------------------------------------------------------------------------------------------
// logFiles

test('logFiles: DEVNET_NOT_FOUND without a manifest', () =>
  withTempDir((dir) => {
    const err = expectError(() => logFiles(dir), DevnetError, { code: 'DEVNET_NOT_FOUND', status: 404 });
    assert.ok(err.message.includes(dir), err.message);
    expectError(() => logFiles(join(dir, 'missing')), DevnetError, { code: 'DEVNET_NOT_FOUND' });
  }),
);

test('logFiles: DEVNET_MANIFEST_INVALID for a broken manifest', () =>
  withTempDir(async (dir) => {
    await writeFile(manifestPath(dir), '[]');
    expectError(() => logFiles(dir), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
  }),
);

test('logFiles: every process in manifest order, then the supervisor log when it exists', () =>
  withTempDir(async (dir) => {
    const m = sampleManifest(dir);
    await writeManifest(m);
    const expected = m.processes.map((p) => ({ name: p.name, path: p.log }));
    assert.equal(logFiles(dir), expected);
    const layout = devnetLayout(dir);
    await mkdir(layout.dir, { recursive: true });
    await writeFile(layout.supervisorLog, '');
    assert.equal(logFiles(dir), [...expected, { name: 'supervisor', path: layout.supervisorLog }]);
  }),
);

test.run();
