/**
 * The bridge store's records and LevelDB keys (beacon LevelDB; nothing else uses an `X` prefix),
 * and the atomic change one input makes to them (src/node/beacon/bridge/store.ts):
 * - `X:<bid>` the record (JSON);
 * - `Xs:<bid>:<validator index>` a BID signature (hex);
 * - `Xn:<seq>` → bid, arrival order (the newest-first listing walks it backwards);
 * - `Xt:<direction>:<status>:<seq>` → bid, the status index (moved on every transition);
 * - `Xa:<address>:<seq>` → bid, sender and recipient;
 * - `Xe:<timeout>:<bid>`: outgoing BIDs the clock can still expire (the expiry queue);
 * - `Xf:<block index>:<bid>`: outgoing BIDs whose lock is not yet known final (the finality queue);
 * - `Xc` the per-status counts (the gauge, without a scan at start-up).
 */
import type { BidDirection, BidStatus, BidView } from '../../../api/bridge.js';
import { WriteBatch } from '../../shared/store.js';

/** Both sides a BID can be on. */
export const DIRECTIONS: readonly BidDirection[] = ['outgoing', 'incoming'];
/** Statuses after which nothing more happens to a BID. */
export const SETTLED: ReadonlySet<BidStatus> = new Set(['COMPLETED', 'REFUNDED']);

/** Zero-padded decimal, so keys sort numerically. */
export const pad = (n: number, w: number) => String(n).padStart(w, '0');
/** The keys (see the header). */
export const K = {
  bid: (bid: string) => `X:${bid}`,
  sig: (bid: string, v: number) => `Xs:${bid}:${pad(v, 8)}`,
  sigs: (bid: string) => `Xs:${bid}:`,
  order: (seq: number) => `Xn:${pad(seq, 16)}`,
  status: (d: BidDirection, s: BidStatus, seq: number) => `Xt:${d}:${s}:${pad(seq, 16)}`,
  statusPrefix: (d: BidDirection, s: BidStatus) => `Xt:${d}:${s}:`,
  address: (a: string, seq: number) => `Xa:${a}:${pad(seq, 16)}`,
  addressPrefix: (a: string) => `Xa:${a}:`,
  expiry: (timeout: number, bid: string) => `Xe:${pad(timeout, 16)}:${bid}`,
  unfinal: (index: number, bid: string) => `Xf:${pad(index, 16)}:${bid}`,
  counts: 'Xc',
} as const;

/** What the store keeps per BID: the served view's identity, fields and history, plus its bookkeeping. */
export interface BidRecord extends Pick<BidView, 'bid' | 'direction' | 'status' | 'fields' | 'source' | 'destination' | 'history'> {
  /** Blocks holding the lock (outgoing) or release (incoming): more than one only when a reorg re-included it. */
  blocks: Array<{ hash: string; index: number }>;
  /** Outgoing: the block holding the lock is finalised with a finalised block above it. */
  finalized: boolean;
  /** Validators whose BID signature is stored, ascending. */
  signers: number[];
  /** Arrival order on this node. */
  seq: number;
}

/** What a transition announces once written. */
export type Announcement = { kind: 'registered'; record: BidRecord } | { kind: 'status'; record: BidRecord; status: BidStatus; previous: BidStatus | null };

/** One atomic change: the records it touched, its batch and what it announces after the write. */
export class Change {
  readonly batch: WriteBatch;
  readonly touched = new Map<string, BidRecord>();
  readonly announce: Announcement[] = [];
  readonly counts: Map<string, number>;
  latencies: number[] = [];
  registered = false;

  constructor(counts: ReadonlyMap<string, number>) {
    this.batch = new WriteBatch();
    this.counts = new Map(counts);
  }

  /** Moves the per-status count the change will write. */
  count(d: BidDirection, s: BidStatus, delta: number): void {
    const k = `${d}:${s}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + delta);
  }
}

/** What caused a transition: the block and transaction of the operation. */
export interface Cause {
  block_hash: string;
  tx_hash: string;
}
