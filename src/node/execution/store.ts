/**
 * Persistent chain data in LevelDB (classic-level; memory-level in unit tests). Keys are
 * prefixed strings; values are UTF-8 JSON, or raw bytes where a value is binary (block shells,
 * transaction envelopes, transaction-hash lists) so nothing is base64-inflated or parsed as JSON.
 * Every block, reorg or reward credit is one batch, so a process killed at any instant restarts
 * with all of it or none of it.
 */
import type { AbstractLevel } from 'abstract-level';
import { SvcError } from '../../core/errors.js';

/** The level instance type both classic-level and memory-level satisfy. */
export type Db = AbstractLevel<string | Uint8Array | Buffer, string, string>;

/**
 * Version of the execution key layout. Version 2 split the one-JSON-value block record (v1,
 * unversioned) into metadata, state changes, a binary shell, and per-transaction receipts and
 * envelopes; an older data directory is refused rather than misread.
 */
export const SCHEMA_VERSION = 2;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Key layout. Heights and indexes are zero-padded so lexicographic order is numeric order. */
export const Keys = {
  meta: (name: 'head' | 'finalized' | 'genesis' | 'schema') => `m:${name}`,
  account: (address: string) => `a:${address}`,
  validator: (index: number) => `v:${pad(index, 8)}`,
  /** Small JSON metadata of a block (any branch): what traversal, reorgs and views need. */
  block: (hash: string) => `b:${hash}`,
  /** JSON state changes of a block (diff, registry, authorisations), read when it moves canonically. */
  blockChanges: (hash: string) => `d:${hash}`,
  /** Binary SSZ of the block without its transactions (header and signature). */
  blockShell: (hash: string) => `s:${hash}`,
  /** Binary concatenation of the block's 32-byte transaction hashes, in order. */
  blockTxHashes: (hash: string) => `k:${hash}`,
  /** Binary envelope of the block's `index`-th transaction (keyed by block, so side branches keep theirs). */
  blockTx: (hash: string, index: number) => `x:${hash}:${pad(index, 6)}`,
  /** Prefix of all envelopes of a block, in index order. */
  blockTxPrefix: (hash: string) => `x:${hash}:`,
  /** JSON receipt of the block's `index`-th transaction. */
  receipt: (hash: string, index: number) => `r:${hash}:${pad(index, 6)}`,
  /** Prefix of all receipts of a block, in index order. */
  receiptPrefix: (hash: string) => `r:${hash}:`,
  canonical: (height: number) => `h:${pad(height, 16)}`,
  txLocation: (txHash: string) => `t:${txHash}`,
  faucetClaim: (address: string) => `f:${address}`,
  rewardEpoch: (epoch: number) => `c:${pad(epoch, 12)}`,
  authorizations: (account: string) => `e:${account}`,
  /** Pool journal: the envelope of a transaction the pool holds (see journal.ts). */
  poolTx: (txHash: string) => `p:${txHash}`,
} as const;

/** One queued operation; binary puts carry their own value encoding. */
export type BatchOp =
  | { type: 'put'; key: string; value: string }
  | { type: 'put'; key: string; value: Uint8Array; valueEncoding: 'view' }
  | { type: 'del'; key: string };

/** A batch of puts and deletes applied atomically. */
export class WriteBatch {
  readonly ops: BatchOp[] = [];

  /** Queues a JSON put. */
  put(key: string, value: unknown): this {
    this.ops.push({ type: 'put', key, value: JSON.stringify(value) });
    return this;
  }

  /** Queues a put of raw bytes. */
  putBytes(key: string, value: Uint8Array): this {
    this.ops.push({ type: 'put', key, value, valueEncoding: 'view' });
    return this;
  }

  /** Queues a delete. */
  del(key: string): this {
    this.ops.push({ type: 'del', key });
    return this;
  }
}

/** Bytes and values read from the database since start: how lookups are shown to cost their own size. */
export interface ReadStats {
  values: number;
  bytes: number;
}

/** Typed JSON and binary access to the database. */
export class ChainStore {
  readonly reads: ReadStats = { values: 0, bytes: 0 };

  constructor(readonly db: Db) {}

  private counted(size: number): void {
    this.reads.values++;
    this.reads.bytes += size;
  }

  /** Reads and parses a JSON value, or undefined. */
  async get<T>(key: string): Promise<T | undefined> {
    const raw = await this.db.get(key);
    if (raw === undefined) return undefined;
    this.counted(raw.length);
    return parseJson<T>(raw, key);
  }

  /** Reads a binary value, or undefined. */
  async getBytes(key: string): Promise<Uint8Array | undefined> {
    const raw = (await this.db.get<string, Uint8Array>(key, { valueEncoding: 'view' })) as Uint8Array | undefined;
    if (raw === undefined) return undefined;
    this.counted(raw.length);
    return raw;
  }

  /** Commits a batch atomically (with sync, so an acknowledged write survives power loss). */
  async write(batch: WriteBatch): Promise<void> {
    if (batch.ops.length === 0) return;
    await this.db.batch(batch.ops as never, { sync: true } as never);
  }

  /** All values whose key starts with `prefix`, in key order. */
  async scan<T>(prefix: string): Promise<Array<{ key: string; value: T }>> {
    const out: Array<{ key: string; value: T }> = [];
    for await (const [key, value] of this.db.iterator({ gte: prefix, lt: prefix + '\xff' })) {
      this.counted(value.length);
      out.push({ key, value: parseJson<T>(value, key) });
    }
    return out;
  }

  /** All binary values whose key starts with `prefix`, in key order. */
  async scanBytes(prefix: string): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for await (const value of this.db.values<string, Uint8Array>({ gte: prefix, lt: prefix + '\xff', valueEncoding: 'view' })) {
      this.counted(value.length);
      out.push(value);
    }
    return out;
  }
}

function parseJson<T>(raw: string, key: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new SvcError('CORRUPT_DB', `database value at ${key} is not valid JSON`, 500);
  }
}
