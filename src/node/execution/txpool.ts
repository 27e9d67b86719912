/**
 * The transaction pool: per-sender nonce-ordered queues, same-nonce replacement by a higher gas
 * price, a capacity with eviction of the cheapest tail, and the validator's build order.
 * Pure data structure: admission rules and state reads live in admission.ts.
 */
import { SvcError } from '../../core/errors.js';
import type { Transaction } from '../../core/types/transaction.js';
import { TX_BASE_GAS } from '../../core/constants.js';
import { Heap } from '../../util/heap.js';
import type { PoolStatus } from '../../api/execution.js';

/** A pooled transaction with the fields the pool orders by. */
export interface PoolEntry {
  tx: Transaction;
  hash: string;
  sender: string;
  nonce: bigint;
  gasPrice: bigint;
  gasLimit: bigint;
  /** Encoded envelope size in bytes. */
  size: number;
  /** Submission order, the final tie-break. */
  seq: number;
  receivedAt: number;
}

/** Machine codes of the pool's refusals. */
export const POOL_ERROR_CODES = ['ALREADY_KNOWN', 'NONCE_TOO_HIGH', 'QUEUE_FULL', 'REPLACEMENT_UNDERPRICED', 'POOL_FULL'] as const;
export type PoolErrorCode = (typeof POOL_ERROR_CODES)[number];

/** Pool refusals (not admission-rule failures). */
export class PoolError extends SvcError {
  constructor(code: PoolErrorCode, message: string, status: number) {
    super(code, message, status);
  }
}

export interface PoolOptions {
  /** Most transactions held; above it the cheapest tail is evicted. */
  capacity: number;
  /** Minimum gas price increase, in percent, for a same-nonce replacement. */
  replaceBumpPercent: bigint;
  /**
   * How far past the sender's pending nonce (the end of its ready run) a transaction may be
   * queued, so one sender queues at most this many (geth's AccountQueue). A ready run is not
   * bounded by it: only capacity bounds those.
   */
  accountQueue: number;
  /** Most queued (not ready) transactions across all senders (geth's GlobalQueue). */
  globalQueue: number;
}

/** geth's AccountQueue and GlobalQueue defaults. */
export const DEFAULT_ACCOUNT_QUEUE = 64;
export const DEFAULT_GLOBAL_QUEUE = 1024;

export const DEFAULT_POOL_OPTIONS: PoolOptions = { capacity: 50_000, replaceBumpPercent: 10n, accountQueue: DEFAULT_ACCOUNT_QUEUE, globalQueue: DEFAULT_GLOBAL_QUEUE };

export class TxPool {
  private readonly bySender = new Map<string, Map<bigint, PoolEntry>>();
  private readonly byHash = new Map<string, PoolEntry>();
  /** Highest-nonce entry of each sender: the eviction candidates. */
  private readonly tails = new Map<string, PoolEntry>();
  /**
   * Queued counts of senders whose entries and account nonce are unchanged since they were
   * counted, and their sum; senders touched since are recounted when the total is next needed,
   * so the global-queue bound costs what changed, not the pool size.
   */
  private readonly queuedOf = new Map<string, number>();
  private readonly recount = new Set<string>();
  private queuedCounted = 0;
  private seq = 0;

  constructor(readonly options: PoolOptions = DEFAULT_POOL_OPTIONS) {}

  get size(): number {
    return this.byHash.size;
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  get(hash: string): PoolEntry | undefined {
    return this.byHash.get(hash);
  }

  /** Every entry, in submission order. */
  entries(): PoolEntry[] {
    return [...this.byHash.values()].sort((a, b) => a.seq - b.seq);
  }

  /** The entry a sender has at `nonce`, if any. */
  atNonce(sender: string, nonce: bigint): PoolEntry | undefined {
    return this.bySender.get(sender)?.get(nonce);
  }

  /** Highest nonce + 1 of the sender's contiguous run from `accountNonce` (the "pending" nonce). */
  pendingNonce(sender: string, accountNonce: bigint): bigint {
    const q = this.bySender.get(sender);
    let n = accountNonce;
    while (q?.has(n)) n++;
    return n;
  }

  /** ready when every nonce from the account nonce up to this one is pooled. */
  status(entry: PoolEntry, accountNonce: bigint): PoolStatus {
    return this.pendingNonce(entry.sender, accountNonce) > entry.nonce ? 'ready' : 'queued';
  }

  /** Queued (not ready) transactions across all senders, with `nonceOf` giving account nonces. */
  queuedCount(nonceOf: (sender: string) => bigint): number {
    for (const s of this.recount) {
      const q = this.bySender.get(s);
      if (!q) continue;
      const nonce = nonceOf(s);
      const n = q.size - Number(this.pendingNonce(s, nonce) - nonce);
      this.queuedOf.set(s, n);
      this.queuedCounted += n;
    }
    this.recount.clear();
    return this.queuedCounted;
  }

  /** Marks a sender for recounting (its entries or its account nonce changed). */
  touch(sender: string): void {
    if (this.recount.has(sender)) return;
    this.queuedCounted -= this.queuedOf.get(sender) ?? 0;
    this.queuedOf.delete(sender);
    this.recount.add(sender);
  }

  /**
   * Refuses a new nonce more than `accountQueue` past the sender's pending nonce, or a queued
   * one while `globalQueue` transactions are queued: without them, nonces a million ahead
   * would sit in the pool forever, and a few funded accounts could fill it with them.
   */
  private checkQueue(sender: string, nonce: bigint, nonceOf: (sender: string) => bigint): void {
    const pending = this.pendingNonce(sender, nonceOf(sender));
    if (nonce <= pending) return;
    const max = pending + BigInt(this.options.accountQueue);
    if (nonce > max) {
      throw new PoolError('NONCE_TOO_HIGH', `nonce too high: ${nonce} is more than ${this.options.accountQueue} past the sender's next nonce ${pending}; send the missing nonces first`, 400);
    }
    if (this.queuedCount(nonceOf) >= this.options.globalQueue) {
      throw new PoolError('QUEUE_FULL', `transaction pool queue is full (${this.options.globalQueue} transactions wait for missing nonces): send nonce ${pending} first`, 409);
    }
  }

  /**
   * Adds an entry. A same-nonce entry is replaced only if the new gas price is at least
   * `replaceBumpPercent` higher; at capacity the cheapest tail entry is evicted, or the new one
   * is refused if it is not more valuable. With `nonceOf` (account nonces), a new nonce must
   * also pass the queue bounds (`accountQueue`, `globalQueue`).
   */
  add(input: Omit<PoolEntry, 'seq'>, nonceOf?: (sender: string) => bigint): { entry: PoolEntry; replaced?: PoolEntry; evicted: PoolEntry[] } {
    if (this.byHash.has(input.hash)) throw new PoolError('ALREADY_KNOWN', 'already known', 409);
    const existing = this.atNonce(input.sender, input.nonce);
    if (!existing && nonceOf) this.checkQueue(input.sender, input.nonce, nonceOf);
    const entry: PoolEntry = { ...input, seq: this.seq++ };
    if (existing) {
      const min = existing.gasPrice + (existing.gasPrice * this.options.replaceBumpPercent + 99n) / 100n;
      if (entry.gasPrice < min) {
        throw new PoolError('REPLACEMENT_UNDERPRICED', `replacement transaction underpriced: needs a gas price of at least ${min} wei (+${this.options.replaceBumpPercent}%)`, 409);
      }
      this.remove(existing.hash);
      this.insert(entry);
      return { entry, replaced: existing, evicted: [] };
    }
    const evicted: PoolEntry[] = [];
    if (this.byHash.size >= this.options.capacity) {
      const victim = this.cheapestTail();
      if (!victim || victim.gasPrice >= entry.gasPrice) {
        throw new PoolError('POOL_FULL', `transaction pool is full (${this.options.capacity}): gas price must exceed ${victim?.gasPrice ?? 0n} wei`, 409);
      }
      this.remove(victim.hash);
      evicted.push(victim);
    }
    this.insert(entry);
    return { entry, evicted };
  }

  private insert(entry: PoolEntry): void {
    let q = this.bySender.get(entry.sender);
    if (!q) this.bySender.set(entry.sender, (q = new Map()));
    q.set(entry.nonce, entry);
    this.byHash.set(entry.hash, entry);
    this.touch(entry.sender);
    const tail = this.tails.get(entry.sender);
    if (!tail || entry.nonce > tail.nonce) this.tails.set(entry.sender, entry);
  }

  /** Eviction candidate: the lowest-priced highest-nonce entry of any sender (newest on ties). */
  private cheapestTail(): PoolEntry | undefined {
    let victim: PoolEntry | undefined;
    for (const t of this.tails.values()) {
      if (!victim || t.gasPrice < victim.gasPrice || (t.gasPrice === victim.gasPrice && t.seq > victim.seq)) victim = t;
    }
    return victim;
  }

  /** Removes an entry by hash; returns it if it was pooled. */
  remove(hash: string): PoolEntry | undefined {
    const e = this.byHash.get(hash);
    if (!e) return undefined;
    this.byHash.delete(hash);
    this.touch(e.sender);
    const q = this.bySender.get(e.sender)!;
    q.delete(e.nonce);
    if (q.size === 0) {
      this.bySender.delete(e.sender);
      this.tails.delete(e.sender);
    } else if (this.tails.get(e.sender) === e) {
      let tail: PoolEntry | undefined;
      for (const x of q.values()) if (!tail || x.nonce > tail.nonce) tail = x;
      this.tails.set(e.sender, tail!);
    }
    return e;
  }

  /** Drops a sender's entries whose nonce is now below the account nonce (they can never be included). */
  dropStale(sender: string, accountNonce: bigint): PoolEntry[] {
    // Called when the account nonce moved, which can turn queued entries ready.
    this.touch(sender);
    const q = this.bySender.get(sender);
    if (!q) return [];
    const stale = [...q.values()].filter((e) => e.nonce < accountNonce);
    for (const e of stale) this.remove(e.hash);
    return stale;
  }

  /** Senders with pooled transactions. */
  senders(): string[] {
    return [...this.bySender.keys()];
  }

  /** Pending (ready) and queued counts given each sender's account nonce. */
  counts(nonceOf: (sender: string) => bigint): { pending: number; queued: number } {
    let pending = 0;
    for (const s of this.bySender.keys()) pending += Number(this.pendingNonce(s, nonceOf(s)) - nonceOf(s));
    return { pending, queued: this.byHash.size - pending };
  }

  /**
   * Build order (spec): nonce ascending per sender, gas price descending across senders,
   * submission order as tie-break; only ready transactions, packed greedily under `maxGas`.
   * A sender whose next transaction does not fit is skipped from then on (its later nonces
   * could not be valid without it). `take`, when given, is asked about each entry that fits and
   * may refuse it (e.g. the sender cannot pay for it), with the same effect on the sender.
   */
  buildOrder(nonceOf: (sender: string) => bigint, maxGas: bigint, take?: (e: PoolEntry) => boolean): PoolEntry[] {
    const heads = new Heap<PoolEntry>((a, b) => (a.gasPrice !== b.gasPrice ? a.gasPrice > b.gasPrice : a.seq < b.seq));
    for (const [s, q] of this.bySender) {
      const e = q.get(nonceOf(s));
      if (e) heads.push(e);
    }
    const out: PoolEntry[] = [];
    let gas = 0n;
    for (let e = heads.pop(); e; e = heads.pop()) {
      if (gas + e.gasLimit > maxGas) continue;
      if (take && !take(e)) continue;
      gas += e.gasLimit;
      out.push(e);
      // Every value transaction needs the intrinsic 21,000 gas; gas-free authorisations wait for a block with room.
      if (maxGas - gas < TX_BASE_GAS) break;
      const next = this.bySender.get(e.sender)?.get(e.nonce + 1n);
      if (next) heads.push(next);
    }
    return out;
  }

}
