/** Worker thread: verifies envelopes' signatures with the fast backend and, when asked, derives their transaction hashes. */
import { parentPort, workerData } from 'node:worker_threads';
import { backendFromEnv, initSignatureBackend } from '../../core/crypto/mldsa.js';
import { EnvelopeVerifier } from '../../core/types/transaction.js';
import { sha3Hex } from '../../core/crypto/hash.js';

interface Job {
  id: number;
  /** Envelopes back to back from offset 0 (the buffer may be longer); `lengths` splits them. */
  packed: Uint8Array<ArrayBuffer>;
  lengths: number[];
  /** Per envelope: derive its transaction hash too (the caller did not know it). */
  hashIt?: boolean[];
}

const { chainId } = workerData as { chainId: string };
// Same choice as the main thread (workers inherit its environment), so one process uses one backend.
const backend = await initSignatureBackend(backendFromEnv(), () => undefined);
// One per thread: it reuses its preimage buffer, so a verification allocates no copy of the envelope.
const verifier = new EnvelopeVerifier(chainId);
parentPort!.on('message', (job: Job) => {
  const { packed, lengths, hashIt } = job;
  const results = new Array<{ signer: string | null; ms: number; hash?: string }>(lengths.length);
  let off = 0;
  for (let i = 0; i < lengths.length; i++) {
    const env = packed.subarray(off, (off += lengths[i]!));
    const start = performance.now();
    const signer = verifier.signer(env);
    const ms = performance.now() - start;
    results[i] = hashIt?.[i] ? { signer, ms, hash: sha3Hex(env) } : { signer, ms };
  }
  // The envelopes' buffer goes back to the main thread for its next message (the results hold none of its bytes).
  // The key cache's counters ride along (cumulative: the main thread keeps the latest of each thread).
  parentPort!.postMessage({ id: job.id, results, buffer: packed.buffer, keys: backend.keyCacheStats?.() }, [packed.buffer]);
});
parentPort!.postMessage({ ready: true });
