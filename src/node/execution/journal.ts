/**
 * The pool journal (as geth journals local transactions): every admitted transaction's envelope
 * under `p:<hash>` in the chain database, written and synced before the submitter is answered,
 * and replayed through admission on start. Concurrent writes share one synced batch (group
 * commit): one fsync covers every submission that arrived while the previous one ran, so the
 * cost per transaction falls as load rises instead of capping admission at the disk's sync rate.
 */
import { parseBase64, toBase64 } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import type { Logger } from '../../util/log.js';
import { type ChainStore, Keys, WriteBatch } from './store.js';

/** Stored value of a journal entry. */
interface JournalValue {
  /** Signed envelope, base64. */
  env: string;
  /** Unix ms of admission: replay keeps the arrival order among equal nonces. */
  at: number;
}

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

type Op = WriteBatch['ops'][number];

export class PoolJournal {
  private pending: Op[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  /** The running flush loop, while one runs. */
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: ChainStore,
    private readonly log: Logger,
  ) {}

  /**
   * Queues the journal entry of an admitted transaction, the removal of the entries it displaced
   * and any `extra` writes (the faucet's claim record), all in one atomic batch; resolves once
   * that batch is synced. Puts go before deletes, so a replacement is never durable without the
   * transaction replacing it.
   */
  add(tx: JournalEntry, displaced: readonly string[] = [], extra?: WriteBatch): Promise<void> {
    const value: JournalValue = { env: toBase64(tx.envelope), at: tx.receivedAt };
    const batch = new WriteBatch().put(Keys.poolTx(tx.hash), value);
    for (const h of displaced) batch.del(Keys.poolTx(h));
    return this.enqueue([...batch.ops, ...(extra?.ops ?? [])]);
  }

  /**
   * Forgets transactions that left the pool (included, stale, evicted, dropped on replay).
   * Nobody waits on it: a removal lost in a crash only makes the replay drop the transaction
   * again, or keep one that is still valid.
   */
  remove(hashes: readonly string[]): void {
    if (hashes.length === 0) return;
    const batch = new WriteBatch();
    for (const h of hashes) batch.del(Keys.poolTx(h));
    this.enqueue(batch.ops).catch((err: Error) => this.log.warn('pool journal removal failed', { count: hashes.length, error: err.message }));
  }

  /** Every journaled transaction, in key order. An undecodable value is returned as an empty envelope (the replay drops it). */
  async entries(): Promise<JournalEntry[]> {
    const rows = await this.store.scan<JournalValue>(Keys.poolTx(''));
    return rows.map(({ key, value }) => {
      const hash = key.slice(Keys.poolTx('').length);
      try {
        return { hash, envelope: parseBase64(value.env, 'journal.env'), receivedAt: typeof value.at === 'number' ? value.at : 0 };
      } catch {
        return { hash, envelope: new Uint8Array(0), receivedAt: 0 };
      }
    });
  }

  /** Resolves once every queued write has been attempted (before closing the database). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private enqueue(ops: Op[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      for (const op of ops) this.pending.push(op);
      this.waiters.push({ resolve, reject: (err) => reject(new JournalError(err)) });
      this.flushing ??= this.flush();
    });
  }

  /** Writes what is queued, one synced batch at a time, until nothing is left. */
  private async flush(): Promise<void> {
    // Yield once so the submissions of the current event-loop turn share the first batch.
    await new Promise<void>((r) => setImmediate(r));
    while (this.waiters.length > 0) {
      const batch = new WriteBatch();
      for (const op of this.pending) batch.ops.push(op);
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        await this.store.write(batch);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.flushing = undefined;
  }
}
