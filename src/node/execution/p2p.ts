/**
 * Execution's P2P: transactions on `/service/txs/v1`. Every gossiped envelope runs the whole
 * admission pipeline (the `p2p` ingress: same checks, verifier and cache, same journal) before the
 * host re-gossips it, and every transaction admitted locally (REST, JSON-RPC, faucet) is published.
 * The pool exchange (pool-exchange.ts) recovers what gossip lost. The host (src/node/p2p/) does
 * scoring, message ids, deduplication, size limits and per-peer queues.
 */
import { toHex } from '../../core/codec/bytes.js';
import { MAX_TX_BYTES } from '../../core/constants.js';
import { sha3 } from '../../core/crypto/hash.js';
import type { Logger } from '../../util/log.js';
import type { PriorityGate } from '../../util/priority-gate.js';
import { startP2p } from '../p2p/host.js';
import { type GossipVerdict, type P2pHost, type P2pOptions, Topics } from '../p2p/types.js';
import type { Admission, AdmittedTx, TxSource } from './txpool/admission.js';
import type { ExecutionMetrics } from './metrics.js';
import { admitFromPeer } from './txpool/peer-tx.js';
import { PoolExchange } from './pool-exchange.js';

export { verdictOfRefusal } from './txpool/peer-tx.js';

/** Where and to whom the execution host listens and dials (`--p2p-host`, `--p2p-port`, `--bootnodes`). */
export type ExecutionP2pOptions = Pick<P2pOptions, 'host' | 'port' | 'bootnodes' | 'keyFile' | 'maxPeers'>;

/**
 * Ingress paths whose admissions this node publishes; gossip re-gossips its own through the host.
 * What the pool exchange fetched is published too: the peers it reached this node through may be
 * the only ones that had it (a node that was cut off).
 */
const PUBLISHED_SOURCES: ReadonlySet<TxSource> = new Set(['rest', 'rpc', 'faucet', 'pool']);

/**
 * Most admitted transactions waiting for a first peer to publish to. Past it the oldest are
 * dropped from the retry queue (they stay pooled and this node can still include them).
 */
export const MAX_UNSENT = 4096;

/** Retries of the unsent per slot: often enough that a transaction reaches a proposer before the next slot. */
const UNSENT_RETRIES_PER_SLOT = 4;

/** What the transaction gossip needs from the node. */
export interface TxGossipDeps {
  admission: Admission;
  metrics: ExecutionMetrics;
  /** Gossip admission is public work: it waits while engine calls are in flight. */
  enginePriority: PriorityGate;
  log: Logger;
  /** Slot length (genesis): transactions that found no peer are offered again a few times a slot. */
  slotMs: number;
}

/** The `/service/txs/v1` topic of one execution node. */
export class TxGossip {
  /** Hashes of admitted transactions not yet sent to any peer, oldest first. */
  private readonly unsent = new Set<string>();
  private retryTimer: NodeJS.Timeout | undefined;
  private retrying = false;
  private stopped = false;
  /** What the pools of peers hold and this node lacks, fetched on connection and a few times a slot. */
  readonly exchange: PoolExchange;

  private constructor(
    readonly host: P2pHost,
    private readonly deps: TxGossipDeps,
  ) {
    this.exchange = new PoolExchange(host, deps);
  }

  /**
   * Starts the execution host, subscribes to the transaction topic and starts announcing
   * admissions. What the pool holds at start (the replayed journal) is announced too: the node
   * may have stopped between acknowledging a transaction and sending it.
   */
  static async start(options: ExecutionP2pOptions & Pick<P2pOptions, 'dataDir' | 'genesisHash' | 'metrics' | 'slotMs'>, deps: TxGossipDeps): Promise<TxGossip> {
    const host = await startP2p({ ...options, layer: 'execution', log: deps.log });
    const gossip = new TxGossip(host, deps);
    try {
      host.subscribe(Topics.txs, (data, from) => gossip.validate(data, from), { maxBytes: MAX_TX_BYTES });
      gossip.exchange.start();
    } catch (err) {
      await host.stop();
      throw err;
    }
    deps.admission.onAdmitted((tx) => gossip.admitted(tx));
    host.onPeerConnected(() => gossip.scheduleRetry());
    for (const e of deps.admission.pool.entries().slice(0, MAX_UNSENT)) gossip.unsent.add(e.hash);
    gossip.scheduleRetry();
    return gossip;
  }

  /**
   * The full admission of one gossiped envelope. Accepted means admitted and durable in the pool
   * journal, like a REST submission answered 202. Never throws.
   */
  async validate(data: Uint8Array, from: string): Promise<GossipVerdict> {
    const { verdict, reason } = await admitFromPeer(this.deps, data, from, 'p2p');
    this.deps.metrics.gossipTxs.inc({ verdict, reason });
    // A peer sent what this node still meant to publish (it fetched it from our pool): publishing
    // it now would reach nobody (gossipsub has seen it), so the retry would never end.
    if (reason === 'ALREADY_KNOWN' && this.unsent.size > 0 && this.unsent.delete(toHex(sha3(data)))) this.deps.metrics.gossipPublished.inc({ result: 'peer_has' });
    return verdict;
  }

  /** Connected peers of the execution host. */
  peerCount(): number {
    return this.host.peerCount();
  }

  /** Stops announcing and closes the host; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.exchange.stop();
    await this.host.stop();
  }

  private admitted(tx: AdmittedTx): void {
    if (this.stopped || !PUBLISHED_SOURCES.has(tx.source)) return;
    this.send(tx.hash, tx.envelope).catch(() => undefined);
  }

  /**
   * Publishes one envelope; with no peer to take it, keeps its hash for a retry. Without any
   * connection it is not even offered to the host, which would remember it as published and
   * refuse it as a duplicate later. A publish the host throws on is not retried.
   */
  private async send(hash: string, envelope: Uint8Array): Promise<void> {
    const { metrics, log } = this.deps;
    let peers = 0;
    try {
      if (this.host.peerCount() > 0) peers = await this.host.publish(Topics.txs, envelope);
    } catch (err) {
      log.debug('tx publish refused', { hash, error: (err as Error).message });
      if (this.unsent.delete(hash)) metrics.gossipPublished.inc({ result: 'dropped' });
      metrics.gossipPublished.inc({ result: 'refused' });
      return;
    }
    if (peers > 0) {
      this.unsent.delete(hash);
      metrics.gossipPublished.inc({ result: 'sent' });
      return;
    }
    if (this.unsent.has(hash)) return;
    metrics.gossipPublished.inc({ result: 'no_peers' });
    this.unsent.add(hash);
    if (this.unsent.size > MAX_UNSENT) {
      this.unsent.delete(this.unsent.values().next().value as string);
      metrics.gossipPublished.inc({ result: 'dropped' });
    }
    this.scheduleRetry();
  }

  // Connections alone do not wake the retry: a new peer's topic subscription arrives after its
  // connection, and until it does a publish reaches nobody. While peers are connected the
  // unsent are offered again a few times a slot; with none, the next connection starts the timer.
  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer || this.unsent.size === 0 || this.host.peerCount() === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.retry();
    }, this.deps.slotMs / UNSENT_RETRIES_PER_SLOT);
    this.retryTimer.unref();
  }

  /** Offers the unsent transactions that are still pooled again, oldest first, while peers take them. */
  private async retry(): Promise<void> {
    if (this.retrying || this.stopped) return;
    this.retrying = true;
    try {
      for (const hash of [...this.unsent]) {
        if (this.stopped) return;
        const entry = this.deps.admission.pool.get(hash);
        if (!entry) {
          this.unsent.delete(hash);
          continue;
        }
        await this.send(hash, entry.envelope);
        // Still unsent: no peer has subscribed yet, the rest would fare no better.
        if (this.unsent.has(hash)) break;
      }
    } finally {
      this.retrying = false;
      this.scheduleRetry();
    }
  }
}
