/**
 * Worker thread of the all-core verification rows (bench/verify-cores.ts): raw ML-DSA-65 verifies
 * of pre-made signatures, or a node verifier thread's work per transfer (EnvelopeVerifier and the
 * transaction hash), with liboqs or with svc-wasm (whose key cache the input check fills). Loads liboqs, checks its inputs, waits for the start signal (so every
 * worker runs at the same time), runs for about `seconds`, raises its flag in `done` (which a busy
 * main thread polls) and reports its rate and its own CPU per operation.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { sha3Hex } from '../src/core/crypto/hash.js';
import { initSignatureBackend, loadLiboqsBackend } from '../src/core/crypto/mldsa.js';
import { EnvelopeVerifier } from '../src/core/types/transaction.js';
import { cycle, measure } from './harness.js';
import { ownThreadCpuSeconds } from './threads.js';
import type { VerifyWork, VerifyWorkerReport } from './verify-cores.js';

const { work, seconds, done, index } = workerData as { work: VerifyWork; seconds: number; done?: Int32Array; index: number };

async function operation(): Promise<() => boolean> {
  if (work.kind === 'raw') {
    const backend = await loadLiboqsBackend();
    if (!work.signed.every((s) => backend.verify(s.pk, s.msg, s.sig))) throw new Error('verify worker: a pre-made signature does not verify');
    const next = cycle(work.signed);
    return () => {
      const s = next();
      return backend.verify(s.pk, s.msg, s.sig);
    };
  }
  await initSignatureBackend(work.backend);
  const verifier = new EnvelopeVerifier(work.chainId);
  if (!work.envelopes.every((e) => verifier.signer(e) !== null)) throw new Error('verify worker: a pre-made envelope does not verify');
  const next = cycle(work.envelopes);
  return () => {
    const e = next();
    return verifier.signer(e) !== null && sha3Hex(e).length > 0;
  };
}

const op = await operation();
parentPort!.once('message', () => {
  let calls = 0;
  const c0 = ownThreadCpuSeconds();
  const rate = measure(() => {
    calls++;
    return op();
  }, seconds);
  const c1 = ownThreadCpuSeconds();
  if (done) Atomics.store(done, index, 1);
  const report: VerifyWorkerReport = { rate, ...(c0 === undefined || c1 === undefined ? {} : { cpuUsPerOp: ((c1 - c0) * 1e6) / calls }) };
  parentPort!.postMessage(report);
});
parentPort!.postMessage({ ready: true });
