/**
 * Persistent node data in LevelDB (classic-level; memory-level in unit tests), shared by the
 * execution layer and the beacon. Keys are prefixed strings; values are UTF-8 JSON, or raw bytes
 * where a value is binary, so nothing is base64-inflated or parsed as JSON. Batches are atomic
 * and synced.
 */
import type { AbstractLevel } from 'abstract-level';
import { NodeError } from './errors.js';

/** The level instance type both classic-level and memory-level satisfy. */
export type Db = AbstractLevel<string | Uint8Array | Buffer, string, string>;

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

/** Options of a binary put, one object for every put (a block queues thousands). */
const VIEW_PUT = Object.freeze({ valueEncoding: 'view' });

/** Typed JSON and binary access to the database. */
export class ChainStore {
  readonly reads: ReadStats = { values: 0, bytes: 0 };

  constructor(readonly db: Db) {}

  /** Counts one value of `size` bytes read (also for reads beside the database, such as the block body file). */
  counted(size: number): void {
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
    // A chained batch: the array form copies and re-validates every operation with the batch's
    // options spread into it, about a third more CPU for a block's thousands of trie nodes.
    const chained = this.db.batch();
    for (const op of batch.ops) {
      if (op.type === 'del') chained.del(op.key);
      else if ('valueEncoding' in op) chained.put(op.key, op.value as never, VIEW_PUT as never);
      else chained.put(op.key, op.value);
    }
    await chained.write({ sync: true } as never);
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
    throw new NodeError('CORRUPT_DB', `database value at ${key} is not valid JSON`);
  }
}
