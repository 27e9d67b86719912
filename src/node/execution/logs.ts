/**
 * The log index: the events of canonical blocks, kept so that eth_getLogs and REST logs read in
 * proportion to what they return. Two key families in the execution LevelDB:
 *
 * - `g:<height 16>:<block hash>` → JSON LogJson[] of a canonical block that emitted logs (blocks
 *   without logs have no key), so a query without an address reads one value per block in range
 *   that has logs;
 * - `G:<address>:<height 16>:<log index 6>:<block hash>` → JSON LogJson, so a query by address
 *   reads one value per matching log.
 *
 * Keys carry the block hash, so a reorg's `revert` of the old block and `put` of the new one at
 * the same height touch different keys and commute within one batch.
 */
import { type LogJson, MAX_LOG_BLOCK_RANGE, type Receipt } from '../../api/execution.js';
import { parseHex } from '../../core/codec/bytes.js';
import { keccak256 } from '../../core/crypto/hash.js';
import { ExecutionError } from './errors.js';
import type { ChainStore, WriteBatch } from '../shared/store.js';

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const HEIGHT_WIDTH = 16;

/** Key layout of the log index (see the module comment). */
export const LogKeys = {
  block: (height: number, hash: string) => `g:${pad(height, HEIGHT_WIDTH)}:${hash}`,
  /** Range bounds over the `g:` family, both inclusive by height. */
  blockFrom: (height: number) => `g:${pad(height, HEIGHT_WIDTH)}:`,
  blockTo: (height: number) => `g:${pad(height, HEIGHT_WIDTH)}:\xff`,
  address: (address: string, height: number, logIndex: number, hash: string) => `G:${address}:${pad(height, HEIGHT_WIDTH)}:${pad(logIndex, 6)}:${hash}`,
  addressFrom: (address: string, height: number) => `G:${address}:${pad(height, HEIGHT_WIDTH)}:`,
  addressTo: (address: string, height: number) => `G:${address}:${pad(height, HEIGHT_WIDTH)}:\xff`,
} as const;

/** Bounds of one log query. */
export interface LogLimits {
  /** Most blocks one query may span. */
  maxBlockRange: number;
  /** Most logs one query may return. */
  maxResults: number;
}

/** Defaults in line with public Ethereum endpoints. */
export const DEFAULT_LOG_LIMITS: LogLimits = { maxBlockRange: MAX_LOG_BLOCK_RANGE, maxResults: 10_000 };

/** A log filter: a height range, optional emitters and positional topic alternatives. */
export interface LogFilter {
  fromBlock: number;
  toBlock: number;
  /** Emitting contracts (lowercase 0x); empty or undefined: any. */
  addresses?: readonly string[];
  /** Per position: null matches anything, otherwise one of the listed topics (lowercase 0x). */
  topics?: ReadonlyArray<readonly string[] | null>;
}

/** A log query that breaks a limit or is inconsistent; `code` says which. */
export class LogQueryError extends ExecutionError {}

/** Whether a log's topics satisfy positional alternatives (a missing topic fails a non-null position). */
export function topicsMatch(log: Pick<LogJson, 'topics'>, topics: LogFilter['topics']): boolean {
  if (!topics) return true;
  for (let i = 0; i < topics.length; i++) {
    const want = topics[i];
    if (want === null || want === undefined || want.length === 0) continue;
    const have = log.topics[i];
    if (have === undefined || !want.includes(have)) return false;
  }
  return true;
}

/** Every log of a block's receipts, in block order (a failed transaction has none). */
export function blockLogs(receipts: readonly Receipt[]): LogJson[] {
  return receipts.flatMap((r) => r.logs);
}

/**
 * Ethereum's 2048-bit logs bloom with Keccak-256 (yellow paper, M3:2048): for the address and each
 * topic, three bits chosen by the first three byte pairs of the item's hash. Tooling filters on it
 * before asking for logs, so it follows Ethereum's definition rather than SHA3-256.
 */
export function logsBloom(logs: readonly Pick<LogJson, 'address' | 'topics'>[]): Uint8Array {
  const bloom = new Uint8Array(256);
  const add = (item: Uint8Array) => {
    const h = keccak256(item);
    for (let i = 0; i < 6; i += 2) {
      const bit = ((h[i]! << 8) | h[i + 1]!) & 2047;
      bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  };
  for (const log of logs) {
    add(parseHex(log.address, 'log.address'));
    for (const t of log.topics) add(parseHex(t, 'log.topic'));
  }
  return bloom;
}

/** Reads and maintains the log index; the chain calls `put`/`revert` in the batch that moves its head. */
export class LogIndex {
  /** Values read by queries since construction: how queries are shown to cost what they return. */
  readonly reads = { values: 0 };

  constructor(
    private readonly store: ChainStore,
    private readonly limits: LogLimits = DEFAULT_LOG_LIMITS,
  ) {}

  /** Indexes the logs of a block that became canonical. */
  put(batch: WriteBatch, block: { hash: string; index: number }, receipts: readonly Receipt[]): void {
    const logs = blockLogs(receipts);
    if (logs.length === 0) return;
    batch.put(LogKeys.block(block.index, block.hash), logs);
    for (const log of logs) batch.put(LogKeys.address(log.address, block.index, log.logIndex, block.hash), log);
  }

  /** Removes the logs of a block that stopped being canonical. */
  revert(batch: WriteBatch, block: { hash: string; index: number }, receipts: readonly Receipt[]): void {
    const logs = blockLogs(receipts);
    if (logs.length === 0) return;
    batch.del(LogKeys.block(block.index, block.hash));
    for (const log of logs) batch.del(LogKeys.address(log.address, block.index, log.logIndex, block.hash));
  }

  /** The indexed logs of a canonical block (empty when it emitted none or is not canonical). */
  async ofBlock(block: { hash: string; index: number }): Promise<LogJson[]> {
    return (await this.store.get<LogJson[]>(LogKeys.block(block.index, block.hash))) ?? [];
  }

  /** The logs of any stored block: from the index when it is canonical, else from its receipts (side branches are not indexed). */
  async ofStoredBlock(block: { hash: string; index: number; tx_count: number }, canonical: boolean, receipts: () => Promise<Receipt[]>): Promise<LogJson[]> {
    if (block.tx_count === 0) return [];
    return canonical ? this.ofBlock(block) : blockLogs(await receipts());
  }

  /** Refuses a range that is inverted, negative or wider than the limit. */
  checkRange(fromBlock: number, toBlock: number): void {
    if (!Number.isSafeInteger(fromBlock) || !Number.isSafeInteger(toBlock) || fromBlock < 0 || toBlock < 0) {
      throw new LogQueryError('INVALID_LOG_RANGE', 'log range bounds must be non-negative block numbers');
    }
    if (fromBlock > toBlock) throw new LogQueryError('INVALID_LOG_RANGE', `fromBlock ${fromBlock} is after toBlock ${toBlock}`);
    const span = toBlock - fromBlock + 1;
    if (span > this.limits.maxBlockRange) {
      throw new LogQueryError('LOG_RANGE_TOO_LARGE', `log queries may span at most ${this.limits.maxBlockRange} blocks; this one spans ${span} (narrow fromBlock..toBlock)`);
    }
  }

  /** The logs matching `filter`, by block then log index; refuses ranges and results beyond the limits. */
  async query(filter: LogFilter): Promise<LogJson[]> {
    const { fromBlock, toBlock } = filter;
    this.checkRange(fromBlock, toBlock);
    const out: LogJson[] = [];
    const keep = (log: LogJson) => {
      if (!topicsMatch(log, filter.topics)) return;
      if (out.length >= this.limits.maxResults) {
        throw new LogQueryError('LOG_RESULT_TOO_LARGE', `the query matches more than ${this.limits.maxResults} logs; narrow the block range, addresses or topics`);
      }
      out.push(log);
    };
    const db = this.store.db;
    const addresses = [...new Set(filter.addresses ?? [])];
    if (addresses.length === 0) {
      for await (const value of db.values({ gte: LogKeys.blockFrom(fromBlock), lte: LogKeys.blockTo(toBlock) })) {
        this.reads.values++;
        for (const log of parse<LogJson[]>(value)) keep(log);
      }
      return out;
    }
    for (const a of addresses) {
      for await (const value of db.values({ gte: LogKeys.addressFrom(a, fromBlock), lte: LogKeys.addressTo(a, toBlock) })) {
        this.reads.values++;
        keep(parse<LogJson>(value));
      }
    }
    if (addresses.length > 1) out.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex);
    return out;
  }
}

function parse<T>(raw: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new ExecutionError('CORRUPT_DB', 'a log index value is not valid JSON');
  }
}
