/**
 * The transaction pool: per-sender nonce-ordered queues, same-nonce replacement by a higher gas
 * price, a capacity with eviction of the cheapest tail, and the validator's build order.
 * Pure data structure: admission rules and state reads live in admission.ts.
 */
import { SvcError } from '../../../core/errors.js';
import type { ErrorCode } from '../../../api/errors.js';
import type { Transaction } from '../../../core/types/transaction.js';
import { TX_BASE_GAS } from '../../../core/constants.js';
import { Heap, IndexedHeap } from '../../../util/heap.js';
import type { PoolStatus } from '../../../api/execution.js';

/** A pooled transaction with the fields the pool orders by. */
export interface PoolEntry {
  tx: Transaction;
  /** The canonical signed envelope: what the journal keeps and a proposer is handed (the tx's byte fields may be views into it). */
  envelope: Uint8Array;
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
export const POOL_ERROR_CODES = ['ALREADY_KNOWN', 'NONCE_TOO_HIGH', 'QUEUE_FULL', 'REPLACEMENT_UNDERPRICED', 'POOL_FULL'] as const satisfies readonly ErrorCode[];
export type PoolErrorCode = (typeof POOL_ERROR_CODES)[number];

/** Pool refusals (not admission-rule failures). */
export class PoolError extends SvcError<PoolErrorCode> {
  constructor(code: PoolErrorCode, message: string) {
    super(code, message);
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

/**
 * One sender's pooled entries. `run` caches the sender's ready run for one account nonce: every
 * nonce in [from, end) is pooled and `end` is not, so the pending nonce (and each entry's status)
 * is a lookup; inserts and removals keep it true in O(1), and a different account nonce inside
 * [from, end] just moves `from`.
 */
interface SenderQueue {
  txs: Map<bigint, PoolEntry>;
  /** Highest-nonce entry: the sender's eviction candidate. */
  tail: PoolEntry;
  /** Lowest-nonce entry: the sender's first transaction in a block when it is at the account nonce. */
  head: PoolEntry;
  run?: { from: bigint; end: bigint };
}

/** Longest stretch, in ms, a sliced block build runs before it lets the event loop run. */
export const BUILD_SLICE_MS = 1;

/** A block build in progress: the heads still to consider, what it took, the gas used. */
/** What a sliced build held the event loop for: its slices and the longest (ms, the snapshot included in the first). */
export interface BuildSlices {
  slices: number;
  longestMs: number;
}

interface Build {
  heads: Heap<PoolEntry>;
  out: PoolEntry[];
  gas: bigint;
  nonceOf: (sender: string) => bigint;
  maxGas: bigint;
  take: ((e: PoolEntry) => boolean) | undefined;
}

/**
 * `input` as a pool entry with its sequence number, built field by field: a spread copies
 * through a generic path per admission, and every entry gets the same shape whatever the
 * caller's object looked like, so the pool's code sees one kind of entry.
 */
function pooledEntry(input: Omit<PoolEntry, 'seq'>, seq: number): PoolEntry {
  return { tx: input.tx, envelope: input.envelope, hash: input.hash, sender: input.sender, nonce: input.nonce, gasPrice: input.gasPrice, gasLimit: input.gasLimit, size: input.size, seq, receivedAt: input.receivedAt };
}

/** Eviction order of sender tails: cheapest first, the newest on equal prices. */
const cheaperTail = (a: PoolEntry, b: PoolEntry): boolean => a.gasPrice < b.gasPrice || (a.gasPrice === b.gasPrice && a.seq > b.seq);
/** Build order across senders (spec): gas price descending, submission order on ties. */
const richerHead = (a: PoolEntry, b: PoolEntry): boolean => (a.gasPrice !== b.gasPrice ? a.gasPrice > b.gasPrice : a.seq < b.seq);

export class TxPool {
  private readonly bySender = new Map<string, SenderQueue>();
  /** Every entry by hash; a Map keeps insertion order, which is submission (`seq`) order. */
  private readonly byHash = new Map<string, PoolEntry>();
  /** Each sender's tail, cheapest first: eviction at capacity is O(log n). */
  private readonly tails = new IndexedHeap<PoolEntry>(cheaperTail);
  /**
   * Each sender's head in build order, kept as entries come and go, so building a block pops
   * what it includes instead of reading every sender's account and heaping every head.
   */
  private readonly heads = new IndexedHeap<PoolEntry>(richerHead);
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
    return [...this.byHash.values()];
  }

  /** `limit` entries from `offset`, in submission order, without copying the rest of the pool. */
  page(offset: number, limit: number): PoolEntry[] {
    const out: PoolEntry[] = [];
    if (offset >= this.byHash.size) return out;
    let i = 0;
    for (const e of this.byHash.values()) {
      if (i++ < offset) continue;
      if (out.length >= limit) break;
      out.push(e);
    }
    return out;
  }

  /**
   * At most `limit` entries admitted at or after sequence number `from`, oldest first, and the
   * sequence number to continue from. Entries are kept in sequence order (a replacement is
   * re-inserted at the end with a new number), so this is a cursor over what arrived since.
   */
  since(from: number, limit: number): { entries: PoolEntry[]; next: number; more: boolean } {
    const entries: PoolEntry[] = [];
    let next = from;
    for (const e of this.byHash.values()) {
      if (e.seq < from) continue;
      if (entries.length >= limit) return { entries, next, more: true };
      entries.push(e);
      next = e.seq + 1;
    }
    return { entries, next, more: false };
  }

  /** The entry a sender has at `nonce`, if any. */
  atNonce(sender: string, nonce: bigint): PoolEntry | undefined {
    return this.bySender.get(sender)?.txs.get(nonce);
  }

  /** Highest nonce + 1 of the sender's contiguous run from `accountNonce` (the "pending" nonce). */
  pendingNonce(sender: string, accountNonce: bigint): bigint {
    const q = this.bySender.get(sender);
    if (!q) return accountNonce;
    const r = q.run;
    if (r && accountNonce >= r.from && accountNonce <= r.end) {
      r.from = accountNonce;
      return r.end;
    }
    let n = accountNonce;
    while (q.txs.has(n)) n++;
    q.run = { from: accountNonce, end: n };
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
      const n = q.txs.size - Number(this.pendingNonce(s, nonce) - nonce);
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
      throw new PoolError('NONCE_TOO_HIGH', `nonce too high: ${nonce} is more than ${this.options.accountQueue} past the sender's next nonce ${pending}; send the missing nonces first`);
    }
    if (this.queuedCount(nonceOf) >= this.options.globalQueue) {
      throw new PoolError('QUEUE_FULL', `transaction pool queue is full (${this.options.globalQueue} transactions wait for missing nonces): send nonce ${pending} first`);
    }
  }

  /**
   * Adds an entry. A same-nonce entry is replaced only if the new gas price is at least
   * `replaceBumpPercent` higher; at capacity the cheapest tail entry is evicted, or the new one
   * is refused if it is not more valuable. With `nonceOf` (account nonces), a new nonce must
   * also pass the queue bounds (`accountQueue`, `globalQueue`).
   */
  add(input: Omit<PoolEntry, 'seq'>, nonceOf?: (sender: string) => bigint): { entry: PoolEntry; replaced?: PoolEntry; evicted: PoolEntry[] } {
    if (this.byHash.has(input.hash)) throw new PoolError('ALREADY_KNOWN', 'already known');
    const existing = this.atNonce(input.sender, input.nonce);
    if (!existing && nonceOf) this.checkQueue(input.sender, input.nonce, nonceOf);
    if (existing) {
      const min = existing.gasPrice + (existing.gasPrice * this.options.replaceBumpPercent + 99n) / 100n;
      if (input.gasPrice < min) {
        throw new PoolError('REPLACEMENT_UNDERPRICED', `replacement transaction underpriced: needs a gas price of at least ${min} wei (+${this.options.replaceBumpPercent}%)`);
      }
      const entry = pooledEntry(input, this.seq++);
      this.swap(existing, entry);
      return { entry, replaced: existing, evicted: [] };
    }
    const entry = pooledEntry(input, this.seq++);
    const evicted: PoolEntry[] = [];
    if (this.byHash.size >= this.options.capacity) {
      const victim = this.tails.peek();
      if (!victim || victim.gasPrice >= entry.gasPrice) {
        throw new PoolError('POOL_FULL', `transaction pool is full (${this.options.capacity}): gas price must exceed ${victim?.gasPrice ?? 0n} wei`);
      }
      this.remove(victim.hash);
      evicted.push(victim);
    }
    this.insert(entry);
    return { entry, evicted };
  }

  /** A same-nonce replacement in place: the sender's run and counts do not change. */
  private swap(prev: PoolEntry, next: PoolEntry): void {
    const q = this.bySender.get(prev.sender)!;
    q.txs.set(next.nonce, next);
    this.byHash.delete(prev.hash);
    this.byHash.set(next.hash, next);
    if (q.tail === prev) {
      q.tail = next;
      this.tails.replace(prev, next);
    }
    if (q.head === prev) {
      q.head = next;
      this.heads.replace(prev, next);
    }
  }

  private insert(entry: PoolEntry): void {
    let q = this.bySender.get(entry.sender);
    if (!q) {
      q = { txs: new Map(), tail: entry, head: entry };
      this.bySender.set(entry.sender, q);
      this.tails.push(entry);
      this.heads.push(entry);
    } else if (entry.nonce > q.tail.nonce) {
      this.tails.replace(q.tail, entry);
      q.tail = entry;
    } else if (entry.nonce < q.head.nonce) {
      this.heads.replace(q.head, entry);
      q.head = entry;
    }
    q.txs.set(entry.nonce, entry);
    this.byHash.set(entry.hash, entry);
    const r = q.run;
    if (r && entry.nonce === r.end) {
      // The gap at the run's end is filled: the run now reaches the next missing nonce.
      let n = r.end + 1n;
      while (q.txs.has(n)) n++;
      r.end = n;
    }
    this.touch(entry.sender);
  }

  /** Removes an entry by hash; returns it if it was pooled. */
  remove(hash: string): PoolEntry | undefined {
    const e = this.byHash.get(hash);
    if (!e) return undefined;
    this.byHash.delete(hash);
    this.touch(e.sender);
    const q = this.bySender.get(e.sender)!;
    q.txs.delete(e.nonce);
    if (q.txs.size === 0) {
      this.bySender.delete(e.sender);
      this.tails.delete(e);
      this.heads.delete(e);
      return e;
    }
    const r = q.run;
    if (r && e.nonce >= r.from && e.nonce < r.end) {
      // Removing the run's first nonce leaves the rest a run from the next one; any other cuts it short.
      if (e.nonce === r.from) r.from = e.nonce + 1n;
      else r.end = e.nonce;
    }
    if (q.tail === e) {
      const tail = this.nearest(q, e.nonce, -1n);
      q.tail = tail;
      this.tails.replace(e, tail);
    } else if (q.head === e) {
      const head = this.nearest(q, e.nonce, 1n);
      q.head = head;
      this.heads.replace(e, head);
    }
    return e;
  }

  /**
   * Removes entries by hash, as `remove` on each in order, and returns those that were pooled.
   * A block includes runs of a sender's nonces, and `remove` moves the sender's head (a heap
   * sift) once per included entry; here each sender's head and tail are fixed once, after all
   * its entries are gone, so a block costs a Map delete per transaction and a heap step per sender.
   */
  removeMany(hashes: readonly string[]): PoolEntry[] {
    const gone: PoolEntry[] = [];
    // Queues of the senders that lost entries; their `head` and `tail` are still the heaps' entries.
    const changed = new Map<string, SenderQueue>();
    for (const hash of hashes) {
      const e = this.byHash.get(hash);
      if (!e) continue;
      this.byHash.delete(hash);
      const q = this.bySender.get(e.sender)!;
      q.txs.delete(e.nonce);
      const r = q.run;
      if (r && e.nonce >= r.from && e.nonce < r.end) {
        if (e.nonce === r.from) r.from = e.nonce + 1n;
        else r.end = e.nonce;
      }
      changed.set(e.sender, q);
      gone.push(e);
    }
    for (const [sender, q] of changed) {
      this.touch(sender);
      if (q.txs.size === 0) {
        this.bySender.delete(sender);
        this.tails.delete(q.tail);
        this.heads.delete(q.head);
        continue;
      }
      if (q.txs.get(q.tail.nonce) !== q.tail) {
        const tail = this.nearest(q, q.tail.nonce, -1n);
        this.tails.replace(q.tail, tail);
        q.tail = tail;
      }
      if (q.txs.get(q.head.nonce) !== q.head) {
        const head = this.nearest(q, q.head.nonce, 1n);
        this.heads.replace(q.head, head);
        q.head = head;
      }
    }
    return gone;
  }

  /**
   * The sender's entry nearest `nonce` in direction `step` (-1: highest below, +1: lowest above):
   * walks from it (nonces are mostly contiguous, so this is usually one step) and scans the
   * sender's entries only if that finds nothing sooner.
   */
  private nearest(q: SenderQueue, nonce: bigint, step: -1n | 1n): PoolEntry {
    let n = nonce + step;
    for (let i = 0; i < q.txs.size && n >= 0n; i++, n += step) {
      const e = q.txs.get(n);
      if (e) return e;
    }
    let best: PoolEntry | undefined;
    for (const x of q.txs.values()) if (!best || (step < 0n ? x.nonce > best.nonce : x.nonce < best.nonce)) best = x;
    return best!;
  }

  /** Drops a sender's entries whose nonce is now below the account nonce (they can never be included). */
  dropStale(sender: string, accountNonce: bigint): PoolEntry[] {
    // Called when the account nonce moved, which can turn queued entries ready.
    this.touch(sender);
    const q = this.bySender.get(sender);
    if (!q) return [];
    const stale = [...q.txs.values()].filter((e) => e.nonce < accountNonce);
    for (const e of stale) this.remove(e.hash);
    return stale;
  }

  /** Senders with pooled transactions. */
  senders(): string[] {
    return [...this.bySender.keys()];
  }

  /** Pending (ready) and queued counts given each sender's account nonce. */
  counts(nonceOf: (sender: string) => bigint): { pending: number; queued: number } {
    // The queued total is kept up to date for the senders touched since: no walk over every sender.
    const queued = this.queuedCount(nonceOf);
    return { pending: this.byHash.size - queued, queued };
  }

  /**
   * Build order (spec): nonce ascending per sender, gas price descending across senders,
   * submission order as tie-break; only ready transactions, packed greedily under `maxGas`.
   * A sender whose next transaction does not fit is skipped from then on (its later nonces
   * could not be valid without it). `take`, when given, is asked about each entry that fits and
   * may refuse it (e.g. the sender cannot pay for it), with the same effect on the sender.
   */
  buildOrder(nonceOf: (sender: string) => bigint, maxGas: bigint, take?: (e: PoolEntry) => boolean): PoolEntry[] {
    const b = this.startBuild(nonceOf, maxGas, take);
    this.stepBuild(b, Infinity);
    return b.out;
  }

  /**
   * The build order, computed in slices of at most `sliceMs` with the event loop free between
   * them, so a full pool never stalls the node's other work. Same order as `buildOrder` for a
   * pool that does not change meanwhile; an entry that leaves the pool during the build is left
   * out with the rest of its sender's run (it changed after the build started).
   */
  async buildOrderSliced(nonceOf: (sender: string) => bigint, maxGas: bigint, take?: (e: PoolEntry) => boolean, sliceMs = BUILD_SLICE_MS, stats?: BuildSlices): Promise<PoolEntry[]> {
    let t0 = performance.now();
    const b = this.startBuild(nonceOf, maxGas, take);
    for (;;) {
      const done = this.stepBuild(b, t0 + sliceMs);
      if (stats) {
        const ms = performance.now() - t0;
        stats.slices++;
        if (ms > stats.longestMs) stats.longestMs = ms;
      }
      if (done) return b.out;
      await new Promise<void>((resolve) => setImmediate(resolve));
      t0 = performance.now();
    }
  }

  private startBuild(nonceOf: (sender: string) => bigint, maxGas: bigint, take: ((e: PoolEntry) => boolean) | undefined): Build {
    return { heads: this.heads.snapshot(), out: [], gas: 0n, nonceOf, maxGas, take };
  }

  /**
   * Advances a build until it is complete (true) or `deadline` (performance.now() ms) passed.
   * Pops the kept heads in order and asks for a sender's account nonce only when its head comes
   * up: a sender whose lowest entry is not at its account nonce has nothing ready. Entries below
   * the account nonce are dropped when it moves (dropStale), so a stale head is rare; when one
   * comes up, the exact build from every sender's account nonce runs instead.
   */
  private stepBuild(b: Build, deadline: number): boolean {
    for (let popped = 0; ; popped++) {
      // Clock reads are not free: every 32 pops.
      if ((popped & 31) === 31 && performance.now() > deadline) return false;
      const e = b.heads.pop();
      if (!e) return true;
      const q = this.bySender.get(e.sender);
      if (!q || this.byHash.get(e.hash) !== e) continue;
      if (q.head === e) {
        const nonce = b.nonceOf(e.sender);
        if (e.nonce < nonce) {
          b.out = this.buildOrderFromAccounts(b.nonceOf, b.maxGas, b.take);
          return true;
        }
        if (e.nonce > nonce) continue;
      }
      if (b.gas + e.gasLimit > b.maxGas) continue;
      if (b.take && !b.take(e)) continue;
      b.gas += e.gasLimit;
      b.out.push(e);
      // Every value transaction needs the intrinsic 21,000 gas; gas-free authorisations wait for a block with room.
      if (b.maxGas - b.gas < TX_BASE_GAS) return true;
      const next = q.txs.get(e.nonce + 1n);
      if (next) b.heads.push(next);
    }
  }

  /** The build order from each sender's entry at its account nonce (reads every sender's account). */
  private buildOrderFromAccounts(nonceOf: (sender: string) => bigint, maxGas: bigint, take?: (e: PoolEntry) => boolean): PoolEntry[] {
    const heads = new Heap<PoolEntry>(richerHead);
    for (const [s, q] of this.bySender) {
      const e = q.txs.get(nonceOf(s));
      if (e) heads.push(e);
    }
    const out: PoolEntry[] = [];
    let gas = 0n;
    for (let e = heads.pop(); e; e = heads.pop()) {
      if (gas + e.gasLimit > maxGas) continue;
      if (take && !take(e)) continue;
      gas += e.gasLimit;
      out.push(e);
      if (maxGas - gas < TX_BASE_GAS) break;
      const next = this.bySender.get(e.sender)?.txs.get(e.nonce + 1n);
      if (next) heads.push(next);
    }
    return out;
  }


}
