/**
 * Persistent chain data in LevelDB (classic-level; memory-level in unit tests). Keys are
 * prefixed strings, values UTF-8 JSON. Every block, reorg or reward credit is one batch, so a
 * process killed at any instant restarts with all of it or none of it.
 */
import type { AbstractLevel } from 'abstract-level';
import { SvcError } from '../../core/errors.js';

/** The level instance type both classic-level and memory-level satisfy. */
export type Db = AbstractLevel<string | Uint8Array | Buffer, string, string>;

/** Key layout. Heights are zero-padded so lexicographic order is numeric order. */
export const Keys = {
  meta: (name: 'head' | 'finalized' | 'genesis') => `m:${name}`,
  account: (address: string) => `a:${address}`,
  validator: (index: number) => `v:${String(index).padStart(8, '0')}`,
  block: (hash: string) => `b:${hash}`,
  canonical: (height: number) => `h:${String(height).padStart(16, '0')}`,
  txLocation: (txHash: string) => `t:${txHash}`,
  faucetClaim: (address: string) => `f:${address}`,
  rewardEpoch: (epoch: number) => `c:${String(epoch).padStart(12, '0')}`,
  authorizations: (account: string) => `e:${account}`,
  /** Pool journal: the envelope of a transaction the pool holds (see journal.ts). */
  poolTx: (txHash: string) => `p:${txHash}`,
} as const;

/** A batch of puts and deletes applied atomically. */
export class WriteBatch {
  readonly ops: Array<{ type: 'put'; key: string; value: string } | { type: 'del'; key: string }> = [];

  /** Queues a JSON put. */
  put(key: string, value: unknown): this {
    this.ops.push({ type: 'put', key, value: JSON.stringify(value) });
    return this;
  }

  /** Queues a delete. */
  del(key: string): this {
    this.ops.push({ type: 'del', key });
    return this;
  }
}

/** Typed JSON access to the database. */
export class ChainStore {
  constructor(readonly db: Db) {}

  /** Reads and parses a JSON value, or undefined. */
  async get<T>(key: string): Promise<T | undefined> {
    const raw = await this.db.get(key);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as T;
    } catch {
      throw new SvcError('CORRUPT_DB', `database value at ${key} is not valid JSON`, 500);
    }
  }

  /** Commits a batch atomically (with sync, so an acknowledged write survives power loss). */
  async write(batch: WriteBatch): Promise<void> {
    if (batch.ops.length === 0) return;
    await this.db.batch(batch.ops, { sync: true } as never);
  }

  /** All values whose key starts with `prefix`, in key order. */
  async scan<T>(prefix: string): Promise<Array<{ key: string; value: T }>> {
    const out: Array<{ key: string; value: T }> = [];
    for await (const [key, value] of this.db.iterator({ gte: prefix, lt: prefix + '\xff' })) out.push({ key, value: JSON.parse(value) as T });
    return out;
  }
}
