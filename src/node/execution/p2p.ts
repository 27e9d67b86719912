/**
 * Execution's P2P: transactions on `/service/txs/v1`. Every gossiped envelope runs the whole
 * admission pipeline (the `p2p` ingress: same checks, verifier and cache, same journal) before the
 * host re-gossips it, and every transaction admitted locally (REST, JSON-RPC, faucet) is published.
 * The host (src/node/p2p/) does scoring, message ids, deduplication, size limits and per-peer queues.
 */
import { toHex } from '../../core/codec/bytes.js';
import { MAX_TX_BYTES } from '../../core/constants.js';
import { sha3 } from '../../core/crypto/hash.js';
import { MalformedError, SvcError, TxError, type TxErrorName } from '../../core/errors.js';
import { decodeTxViews, type Transaction } from '../../core/types/transaction.js';
import type { Logger } from '../../util/log.js';
import type { PriorityGate } from '../../util/priority-gate.js';
import { startP2p } from '../p2p/host.js';
import { type GossipVerdict, type P2pHost, type P2pOptions, Topics } from '../p2p/types.js';
import type { Admission, AdmittedTx, TxSource } from './admission.js';
import type { ExecutionMetrics } from './metrics.js';

/** Where and to whom the execution host listens and dials (`--p2p-host`, `--p2p-port`, `--bootnodes`). */
export type ExecutionP2pOptions = Pick<P2pOptions, 'host' | 'port' | 'bootnodes' | 'keyFile' | 'maxPeers'>;

/** Ingress paths whose admissions this node announces; gossip re-gossips its own through the host. */
const PUBLISHED_SOURCES: ReadonlySet<TxSource> = new Set(['rest', 'rpc', 'faucet']);

/**
 * Most admitted transactions waiting for a first peer to publish to. Past it the oldest are
 * dropped from the retry queue (they stay pooled and this node can still include them).
 */
export const MAX_UNSENT = 4096;

/** Retries of the unsent per slot: often enough that a transaction reaches a proposer before the next slot. */
const UNSENT_RETRIES_PER_SLOT = 4;

/**
 * Failures the bytes alone prove, whatever the sender's view of the chain: the sender relayed (or
 * made) an invalid transaction and is penalised. Everything else (nonce already used, balance
 * spent, pool or queue bounds, already known, a feature this node lacks, its own storage failing)
 * depends on state or local policy, and an honest peer may relay it: ignored.
 */
const REJECTED_TX_ERRORS: ReadonlySet<TxErrorName> = new Set(['ErrInvalidSignature', 'ErrInvalidSender', 'ErrGasTooLow', 'ErrGasTooHigh', 'ErrGasPriceTooLow']);

/** The gossip verdict of an admission failure, and the reason it is counted under. */
export function verdictOfRefusal(err: unknown): { verdict: Exclude<GossipVerdict, 'accept'>; reason: string } {
  if (err instanceof MalformedError) return { verdict: 'reject', reason: err.code };
  if (err instanceof TxError) return { verdict: REJECTED_TX_ERRORS.has(err.specName) ? 'reject' : 'ignore', reason: err.code };
  if (err instanceof SvcError) return { verdict: 'ignore', reason: err.code };
  return { verdict: 'ignore', reason: 'INTERNAL' };
}

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

  private constructor(
    readonly host: P2pHost,
    private readonly deps: TxGossipDeps,
  ) {}

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
    const { admission, metrics, enginePriority, log } = this.deps;
    const count = (verdict: GossipVerdict, reason: string): GossipVerdict => {
      metrics.gossipTxs.inc({ verdict, reason });
      return verdict;
    };
    // The transaction hash is the hash of the envelope: a pooled duplicate costs one hash, no
    // decoding and no signature check.
    if (admission.pool.has(toHex(sha3(data)))) return count('ignore', 'ALREADY_KNOWN');
    // A copy: the pool and the journal keep it, and the host's buffer may be a slice of a larger
    // one. The transaction's fields are views into the copy, so the pool holds the bytes once.
    const envelope = data.slice();
    let tx: Transaction;
    try {
      tx = decodeTxViews(envelope);
    } catch (err) {
      log.debug('gossiped tx malformed', { from, error: (err as Error).message });
      return count('reject', verdictOfRefusal(err).reason);
    }
    await enginePriority.idle();
    try {
      await admission.submit(tx, 'p2p', { envelope });
      return count('accept', 'ADMITTED');
    } catch (err) {
      const { verdict, reason } = verdictOfRefusal(err);
      if (reason === 'INTERNAL') log.warn('gossiped tx failed', { from, error: (err as Error).message });
      return count(verdict, reason);
    }
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
