/**
 * Synchronous state reads through the reader thread: a value the main thread wrote is served, a
 * missing key is undefined, and a reader thread that dies leaves the main thread with a typed
 * error instead of a hang, also when it dies while the main thread is blocked on it. A real classic-level directory, shared with `multithreading: true`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { SvcError } from '../../../../src/core/errors.js';
import { WorkerSyncReader } from '../../../../src/node/execution/state/sync-reader.js';

const reader = suite('state: synchronous reader thread');

async function withDb(fn: (db: ClassicLevel<string, Uint8Array>, location: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sync-reader-'));
  const location = join(dir, 'chain');
  const db = new ClassicLevel<string, Uint8Array>(location, { keyEncoding: 'utf8', valueEncoding: 'view', multithreading: true } as never);
  await db.open();
  try {
    await fn(db, location);
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

reader('a miss is served synchronously, a missing key is undefined, and writes after start are seen', async () => {
  await withDb(async (db, location) => {
    await db.put('n:one', Uint8Array.of(1, 2, 3));
    const r = await WorkerSyncReader.start(location);
    try {
      assert.equal(r.read('n:one'), Uint8Array.of(1, 2, 3));
      assert.is(r.read('n:absent'), undefined);
      const big = new Uint8Array(300_000).map((_, i) => i & 0xff);
      await db.put('c:big', big);
      assert.equal(r.read('c:big'), big);
      for (let i = 0; i < 200; i++) await db.put(`n:${i}`, Uint8Array.of(i & 0xff));
      for (let i = 0; i < 200; i++) assert.equal(r.read(`n:${i}`), Uint8Array.of(i & 0xff));
    } finally {
      await r.close();
    }
  });
});

reader('a dead reader thread gives a typed error, not a hang', async () => {
  await withDb(async (db, location) => {
    await db.put('n:one', Uint8Array.of(1));
    const r = await WorkerSyncReader.start(location);
    assert.equal(r.read('n:one'), Uint8Array.of(1));
    await r.kill();
    try {
      r.read('n:one');
      assert.unreachable('a read after the thread died must throw');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'STATE_READER_DEAD');
    }
    await r.close();
  });
});

reader('a reader thread that dies while the main thread waits wakes it with a typed error', async () => {
  await withDb(async (db, location) => {
    await db.put('n:one', Uint8Array.of(1));
    const r = await WorkerSyncReader.start(location);
    // The exit request is queued before the read, so the thread ends while read() is blocked.
    (r as unknown as { port: { postMessage(m: unknown): void } }).port.postMessage({ id: -1, key: '', exit: true });
    const t = Date.now();
    assert.throws(() => r.read('n:one'), (e: SvcError) => e instanceof SvcError && e.code === 'STATE_READER_DEAD');
    assert.ok(Date.now() - t < 30_000, 'woken by the thread’s exit, not by the read timeout');
    await r.close();
  });
});

reader('a read after the thread died unobserved (its exit not yet seen by the event loop) fails at once with a typed error', async () => {
  await withDb(async (db, location) => {
    await db.put('n:one', Uint8Array.of(1));
    const r = await WorkerSyncReader.start(location);
    assert.equal(r.read('n:one'), Uint8Array.of(1));
    const internals = r as unknown as { port: { postMessage(m: unknown): void }; flag: Int32Array };
    internals.port.postMessage({ id: -1, key: '', exit: true });
    // Blocks this thread until the reader's exit handler has flagged it: no event turn runs, so
    // only the flag tells read() the thread is gone (it used to be reset and waited on until the timeout).
    while (Atomics.load(internals.flag, 0) !== 2) Atomics.wait(internals.flag, 0, Atomics.load(internals.flag, 0), 100);
    const t = Date.now();
    assert.throws(() => r.read('n:one'), (e: SvcError) => e instanceof SvcError && e.code === 'STATE_READER_DEAD');
    assert.ok(Date.now() - t < 1_000, `failed in ${Date.now() - t} ms, not after the read timeout`);
    await r.close();
  });
});

reader.run();
