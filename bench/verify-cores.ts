/**
 * The verification rows' load: one worker thread per core verifying at the same time, raw ML-DSA-65
 * (the ceiling every throughput row is compared with) or a node verifier thread's whole job per
 * transfer (its floor), alone or beside a main thread kept busy, which measures what sharing the
 * cores costs each verification in CPU time (cache and scheduling), not only in rate.
 */
import { Worker } from 'node:worker_threads';

/** A pre-made signature. */
export interface Signed {
  pk: Uint8Array;
  msg: Uint8Array;
  sig: Uint8Array;
}

/**
 * What each worker verifies, round-robin: raw signatures (liboqs), or envelopes as a node's
 * verifier thread does, with liboqs (every key unseen) or svc-wasm (the senders' keys cached).
 */
export type VerifyWork = { kind: 'raw'; signed: Signed[] } | { kind: 'envelope'; envelopes: Uint8Array[]; chainId: string; backend: 'liboqs' | 'svc-wasm' };

/** One worker's figures: operations per second (wall) and its own CPU µs per operation (Linux). */
export interface VerifyWorkerReport {
  rate: number;
  cpuUsPerOp?: number;
}

/** A busy main thread gives up after this long past the workers' own budget (a dead worker never raises its flag). */
const BUSY_MAIN_GRACE_MS = 30_000;

function nextMessage<T>(w: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
}

/**
 * Allocating JavaScript work on the main thread until every flag in `done` is up: short-lived
 * objects and strings, as admission's main thread makes, so the workers share the cores with a
 * thread that also keeps the garbage collector busy.
 */
function busyUntil(done: Int32Array, deadlineMs: number): number {
  let sink = 0;
  const finished = (): boolean => done.every((_, i) => Atomics.load(done, i) === 1);
  while (!finished() && performance.now() < deadlineMs) {
    for (let i = 0; i < 1000; i++) {
      const o = { i, s: `k${i}`, a: [i, i + 1, i + 2] };
      sink += JSON.stringify(o).length;
    }
  }
  return sink;
}

/** Runs `work` on `threads` workers for about `seconds`; with `busyMain`, the main thread stays busy meanwhile. */
export async function verifyOnAllCores(work: VerifyWork, threads: number, seconds: number, opts: { busyMain?: boolean } = {}): Promise<VerifyWorkerReport[]> {
  const done = opts.busyMain ? new Int32Array(new SharedArrayBuffer(4 * threads)) : undefined;
  const workers = Array.from({ length: threads }, (_, index) => new Worker(new URL('./verify-worker.js', import.meta.url), { workerData: { work, seconds, done, index } }));
  try {
    await Promise.all(workers.map((w) => nextMessage(w)));
    const reports = workers.map((w) => nextMessage<VerifyWorkerReport>(w));
    for (const w of workers) w.postMessage('go');
    if (done) busyUntil(done, performance.now() + seconds * 1000 + BUSY_MAIN_GRACE_MS);
    return await Promise.all(reports);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
