/** Worker thread: decodes envelopes and verifies their signatures with the fast backend. */
import { parentPort, workerData } from 'node:worker_threads';
import { toHex } from '../../core/codec/bytes.js';
import { initSignatureBackend } from '../../core/crypto/mldsa.js';
import { verifyEnvelope } from '../../core/types/transaction.js';

interface Job {
  id: number;
  envelopes: Uint8Array[];
}

const { chainId } = workerData as { chainId: string };
await initSignatureBackend('auto', () => undefined);
parentPort!.on('message', (job: Job) => {
  const results = job.envelopes.map((env) => {
    const start = performance.now();
    const signer = verifyEnvelope(env, chainId);
    return { signer: signer && toHex(signer), ms: performance.now() - start };
  });
  parentPort!.postMessage({ id: job.id, results });
});
parentPort!.postMessage({ ready: true });
