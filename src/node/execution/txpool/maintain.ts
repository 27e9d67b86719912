/**
 * Pool maintenance: what a change of the canonical chain does to the pool, as reth's
 * transaction-pool `maintain.rs` keeps the pool in step with the chain. Transactions a block
 * included leave the pool and the journal; senders whose nonce moved lose what is now below it;
 * after a reorganisation, the reverted blocks' transactions that the new branch did not include
 * come back through admission (source `reorg`).
 */
import type { Logger } from '../../../util/log.js';
import type { CanonicalChange } from '../canonical.js';
import type { Admission } from './admission.js';
import type { TxPool } from './pool.js';

/** What maintenance uses of admission: the removals, the re-admission and the pool's recount. */
export type MaintainedPool = Pick<Admission, 'forget' | 'dropStale' | 'submit'> & { readonly pool: Pick<TxPool, 'touch'> };

/** Brings the pool in step with a committed canonical change (see the module comment). */
export function maintainPool(change: CanonicalChange, admission: MaintainedPool, log: Logger): void {
  const senders = new Set<string>();
  for (const { txHashes, senders: from } of change.applied) {
    admission.forget(txHashes);
    for (const s of from) senders.add(s);
  }
  for (const s of senders) admission.dropStale(s);
  // Reverted senders' nonces went back: their pooled transactions' queued counts change.
  for (const r of change.reverted) for (const s of r.senders) admission.pool.touch(s);
  // Only a reorg re-pools: an import's notification (its answer waits for it) builds no set of its hashes.
  if (change.reverted.length > 0) {
    const reapplied = new Set(change.applied.flatMap((r) => r.txHashes));
    for (const r of change.reverted) {
      r.transactions.forEach((tx, i) => {
        if (reapplied.has(r.txHashes[i]!)) return;
        admission.submit(tx, 'reorg').catch((err: Error) => log.debug('reverted tx not re-pooled', { error: err.message }));
      });
    }
  }
}
