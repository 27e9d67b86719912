/** Worker thread: decodes envelopes and verifies their signatures with the fast backend. */
import { parentPort, workerData } from 'node:worker_threads';
import { toHex } from '../../core/codec/bytes.js';
import { backendFromEnv, initSignatureBackend } from '../../core/crypto/mldsa.js';
import { verifyEnvelope } from '../../core/types/transaction.js';

interface Job {
  id: number;
  /** Envelopes back to back; `lengths` splits them. */
  packed: Uint8Array;
  lengths: number[];
}

const { chainId } = workerData as { chainId: string };
// Same choice as the main thread (workers inherit its environment), so one process uses one backend.
await initSignatureBackend(backendFromEnv(), () => undefined);
parentPort!.on('message', (job: Job) => {
  let off = 0;
  const envelopes = job.lengths.map((n) => job.packed.subarray(off, (off += n)));
  const results = envelopes.map((env) => {
    const start = performance.now();
    const signer = verifyEnvelope(env, chainId);
    return { signer: signer && toHex(signer), ms: performance.now() - start };
  });
  parentPort!.postMessage({ id: job.id, results });
});
parentPort!.postMessage({ ready: true });
