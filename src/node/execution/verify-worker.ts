/** Worker thread: verifies envelopes' signatures with the fast backend and, when asked, derives their transaction hashes. */
import { parentPort, workerData } from 'node:worker_threads';
import { toHex } from '../../core/codec/bytes.js';
import { backendFromEnv, initSignatureBackend } from '../../core/crypto/mldsa.js';
import { verifyEnvelope } from '../../core/types/transaction.js';
import { sha3 } from '../../core/crypto/hash.js';

interface Job {
  id: number;
  /** Envelopes back to back; `lengths` splits them. */
  packed: Uint8Array;
  lengths: number[];
  /** Per envelope: derive its transaction hash too (the caller did not know it). */
  hashIt?: boolean[];
}

const { chainId } = workerData as { chainId: string };
// Same choice as the main thread (workers inherit its environment), so one process uses one backend.
await initSignatureBackend(backendFromEnv(), () => undefined);
parentPort!.on('message', (job: Job) => {
  let off = 0;
  const envelopes = job.lengths.map((n) => job.packed.subarray(off, (off += n)));
  const results = envelopes.map((env, i) => {
    const start = performance.now();
    const signer = verifyEnvelope(env, chainId);
    const ms = performance.now() - start;
    return job.hashIt?.[i] ? { signer: signer && toHex(signer), ms, hash: toHex(sha3(env)) } : { signer: signer && toHex(signer), ms };
  });
  parentPort!.postMessage({ id: job.id, results });
});
parentPort!.postMessage({ ready: true });
