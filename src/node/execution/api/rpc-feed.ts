/**
 * Chain events as JSON-RPC filters (rpc-filters.ts) and WebSocket subscriptions (rpc-ws.ts) see
 * them: each new canonical head, the logs of blocks that joined the canonical chain and of those
 * that left it (`removed`, as geth reports a reorg), and the hash of each admitted transaction.
 * Deliveries run one change after another, so every sink sees them in chain order; a block's logs
 * are read from its own receipts (never the height index, which a later reorg may have moved)
 * and only while some sink wants logs, so an idle feed costs nothing per block.
 */
import type { LogJson } from '../../../api/execution.js';
import type { Logger } from '../../../util/log.js';
import type { BlockRecord } from '../blocks.js';
import type { CanonicalChange } from '../chain.js';

/** A log with whether it left the canonical chain. */
export interface FeedLog {
  log: LogJson;
  removed: boolean;
}

/** A consumer of the feed; every callback is optional. */
export interface FeedSink {
  /** A block that joined the canonical chain, oldest first. */
  head?(record: BlockRecord): void;
  /** Whether logs must be read for this sink now (a sink with no log filter says no). */
  wantsLogs?(): boolean;
  logs?(logs: readonly FeedLog[]): void;
  /** A transaction admitted to the pool. */
  pending?(hash: string): void;
}

/** Fans chain events out to the RPC's filters and subscriptions. */
export class RpcFeed {
  private readonly sinks = new Set<FeedSink>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    /** The logs of a stored block, from its own receipts. */
    private readonly logsOf: (record: BlockRecord) => Promise<LogJson[]>,
    private readonly log: Logger,
  ) {}

  /** Adds a sink; returns its removal. */
  add(sink: FeedSink): () => void {
    this.sinks.add(sink);
    return () => void this.sinks.delete(sink);
  }

  /** Number of sinks (for tests and metrics). */
  get size(): number {
    return this.sinks.size;
  }

  /** Queues a committed canonical change for delivery. */
  canonical(change: CanonicalChange): void {
    if (this.sinks.size === 0) return;
    this.queue = this.queue.then(() => this.deliver(change)).catch((err: Error) => this.log.warn('rpc feed delivery failed', { error: err.message }));
  }

  /** Delivers an admitted transaction's hash at once (no read involved, so no queue). */
  pending(hash: string): void {
    for (const s of this.sinks) s.pending?.(hash);
  }

  /** Resolves once every queued change has been delivered (tests, shutdown). */
  drained(): Promise<void> {
    return this.queue;
  }

  private async deliver(change: CanonicalChange): Promise<void> {
    if ([...this.sinks].some((s) => s.wantsLogs?.() === true)) {
      const out: FeedLog[] = [];
      for (const r of change.reverted) for (const log of await this.logsOf(r.record)) out.push({ log, removed: true });
      for (const a of change.applied) for (const log of await this.logsOf(a.record)) out.push({ log, removed: false });
      if (out.length > 0) for (const s of this.sinks) if (s.wantsLogs?.() === true) s.logs?.(out);
    }
    for (const a of change.applied) for (const s of this.sinks) s.head?.(a.record);
  }
}
