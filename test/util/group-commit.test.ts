/**
 * Group commit: concurrent submissions share batches, operations keep their submission order
 * across batches, and a failed batch rejects only its own callers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GroupCommit } from '../../src/util/group-commit.js';

test('concurrent submissions share batches and keep their order', async () => {
  const batches: number[][] = [];
  let release: () => void = () => undefined;
  const callers: number[] = [];
  const gc = new GroupCommit<number>(
    async (ops) => {
      batches.push(ops);
      // The first write stays open until the test has queued more: those must form one batch.
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
    },
    (n) => callers.push(n),
  );
  const first = gc.submit([1, 2]);
  await new Promise<void>((r) => setImmediate(r));
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(batches, [[1, 2]], 'the first batch is being written');
  const rest = [gc.submit([3]), gc.submit([4, 5]), gc.submit([6])];
  release();
  await Promise.all([first, ...rest]);
  assert.equal(batches, [[1, 2], [3, 4, 5, 6]]);
  assert.equal(callers, [1, 3]);
  await gc.drain();
});

test('a failed batch rejects its callers only; the next batch is written', async () => {
  let fail = true;
  const written: number[][] = [];
  const gc = new GroupCommit<number>(async (ops) => {
    if (fail) {
      fail = false;
      throw new Error('disk full');
    }
    written.push(ops);
  });
  const a = gc.submit([1]);
  const b = gc.submit([2]);
  const failures = await Promise.all([a, b].map((p) => p.then(() => 'written', (err: Error) => err.message)));
  assert.equal(failures, ['disk full', 'disk full']);
  await gc.submit([3]);
  assert.equal(written, [[3]]);
});

test('drain waits for every queued batch', async () => {
  const written: number[] = [];
  const gc = new GroupCommit<number>(async (ops) => {
    await new Promise<void>((r) => setTimeout(r, 5));
    written.push(...ops);
  });
  void gc.submit([1]);
  void gc.submit([2]);
  await gc.drain();
  assert.equal(written, [1, 2]);
});

test('deferred operations start no batch, ride with the next one in call order, and drain writes them', async () => {
  const batches: number[][] = [];
  const gc = new GroupCommit<number>(async (ops) => {
    batches.push(ops);
  });
  gc.defer([1]);
  await new Promise<void>((r) => setImmediate(r));
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(batches, [], 'nothing written for a deferred operation alone');
  await gc.submit([2]);
  assert.equal(batches, [[1, 2]]);
  gc.defer([3]);
  await gc.drain();
  assert.equal(batches, [[1, 2], [3]]);
});

test.run();
