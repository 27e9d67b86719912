/**
 * The pool journal (as geth journals local transactions): every admitted transaction's envelope
 * under `p:<hash>` in the chain database, written and synced before the submitter is answered,
 * and replayed through admission on start. Concurrent writes share one synced batch (group
 * commit): one fsync covers every submission that arrived while the previous one ran, so the
 * cost per transaction falls as load rises instead of capping admission at the disk's sync rate.
 */
import { SvcError } from '../../core/errors.js';
import { GroupCommit } from '../../util/group-commit.js';
import type { Logger } from '../../util/log.js';
import { type BatchOp, type ChainStore, type WriteBatch } from '../shared/store.js';
import { Keys } from './store.js';

/** Bytes before the envelope in a journal value: the admission time, u64 little-endian Unix ms. */
const AT_BYTES = 8;

/** A journaled transaction as read back on start. */
export interface JournalEntry {
  hash: string;
  envelope: Uint8Array;
  receivedAt: number;
}

/** The journal could not be written; the submission was not kept. */
export class JournalError extends SvcError {
  constructor(cause: unknown) {
    super('POOL_JOURNAL_FAILED', `transaction not accepted: the pool journal could not be written (${(cause as Error).message})`, 503, { cause });
  }
}

/**
 * Stored value of a journal entry: the admission time (replay keeps the arrival order among
 * equal nonces), then the signed envelope. Binary, not JSON: base64 and JSON would add a third
 * to the bytes written and most of the main-thread cost per admission.
 */
export function encodeJournalValue(envelope: Uint8Array, receivedAt: number): Uint8Array {
  const out = new Uint8Array(AT_BYTES + envelope.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(Math.max(0, Math.trunc(receivedAt))), true);
  out.set(envelope, AT_BYTES);
  return out;
}

export class PoolJournal {
  private readonly commits: GroupCommit<BatchOp>;

  constructor(
    private readonly store: ChainStore,
    private readonly log: Logger,
    /** Called after each synced batch with the number of writes it carried (for metrics). */
    synced: (writes: number) => void = () => undefined,
  ) {
    // Synced like every chain write, so an answered submission survives power loss too.
    this.commits = new GroupCommit((ops) => this.store.db.batch(ops as never, { sync: true } as never), synced);
  }

  /**
   * Queues the journal entry of an admitted transaction, the removal of the entries it displaced
   * and any `extra` writes (the faucet's claim record), all in one atomic batch, so a replaced
   * transaction never leaves the journal without its replacement; resolves once that batch is
   * synced.
   */
  add(tx: JournalEntry, displaced: readonly string[] = [], extra?: WriteBatch): Promise<void> {
    const ops: BatchOp[] = [{ type: 'put', key: Keys.poolTx(tx.hash), value: encodeJournalValue(tx.envelope, tx.receivedAt), valueEncoding: 'view' }];
    for (const h of displaced) ops.push({ type: 'del', key: Keys.poolTx(h) });
    if (extra) for (const op of extra.ops) ops.push(op);
    return this.enqueue(ops);
  }

  /**
   * Forgets transactions that left the pool (included, stale, evicted, dropped on replay).
   * Nobody waits on it: a removal lost in a crash only makes the replay drop the transaction
   * again, or keep one that is still valid.
   */
  remove(hashes: readonly string[]): void {
    if (hashes.length === 0) return;
    this.enqueue(hashes.map((h): BatchOp => ({ type: 'del', key: Keys.poolTx(h) }))).catch((err: Error) => this.log.warn('pool journal removal failed', { count: hashes.length, error: err.message }));
  }

  /** Every journaled transaction, in key order. A value too short to hold a time comes back as an empty envelope (the replay drops it). */
  async entries(): Promise<JournalEntry[]> {
    const prefix = Keys.poolTx('');
    const out: JournalEntry[] = [];
    const rows = this.store.db.iterator({ gte: prefix, lt: prefix + '\xff', valueEncoding: 'view' } as never) as AsyncIterable<[string, Uint8Array]>;
    for await (const [key, value] of rows) {
      const hash = key.slice(prefix.length);
      if (value.length < AT_BYTES) {
        out.push({ hash, envelope: new Uint8Array(0), receivedAt: 0 });
        continue;
      }
      const at = new DataView(value.buffer, value.byteOffset, value.byteLength).getBigUint64(0, true);
      out.push({ hash, envelope: value.subarray(AT_BYTES), receivedAt: Number(at) });
    }
    return out;
  }

  /** Resolves once every queued write has been attempted (before closing the database). */
  drain(): Promise<void> {
    return this.commits.drain();
  }

  private enqueue(ops: BatchOp[]): Promise<void> {
    return this.commits.submit(ops).catch((err: unknown) => {
      throw new JournalError(err);
    });
  }
}
