/**
 * Worker thread of the all-cores raw ML-DSA-65 verification row: loads liboqs, checks the
 * pre-made signatures, waits for the start signal (so every worker runs at the same time), then
 * verifies them round-robin for about `seconds` and reports its rate.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadLiboqsBackend } from '../src/core/crypto/mldsa.js';
import { cycle, measure } from './harness.js';

interface Signed {
  pk: Uint8Array;
  msg: Uint8Array;
  sig: Uint8Array;
}

const { signed, seconds } = workerData as { signed: Signed[]; seconds: number };
const backend = await loadLiboqsBackend();
if (!signed.every((s) => backend.verify(s.pk, s.msg, s.sig))) throw new Error('verify worker: a pre-made signature does not verify');
const next = cycle(signed);
parentPort!.once('message', () => {
  const rate = measure(() => {
    const s = next();
    return backend.verify(s.pk, s.msg, s.sig);
  }, seconds);
  parentPort!.postMessage({ rate });
});
parentPort!.postMessage({ ready: true });
