/**
 * The transaction-pool exchange: what gossip cannot recover. A transaction published while a node
 * was cut off (its connections not yet known dead) went nowhere, and gossip never offers it again;
 * a node that joins late never saw what was gossiped before. So, as eth/68 does with
 * `NewPooledTransactionHashes` and `GetPooledTransactions`, nodes exchange what their pools hold
 * and fetch what they lack: on every new connection from the start of the peer's pool, then a few
 * times a slot what it admitted since (a cursor over its pool, docs/protocol.md "Pool exchange").
 *
 * Bounded everywhere: pages of at most 4,096 hashes, fetches of at most 256 transactions and
 * 2 MiB, one poll and one fetch in flight per peer, a few fetches at once in all, a bounded set of
 * wanted hashes, and per-peer rate limits on what this node serves. Everything fetched runs the
 * full admission of the gossip ingress; only what is provably invalid (a malformed page or
 * envelope, a bad signature, a transaction it was not asked for) costs the peer a penalty. A peer
 * that does not answer only fails its request: the hashes it announced are fetched from others.
 */
import { toHex } from '../../core/codec/bytes.js';
import { sha3 } from '../../core/crypto/hash.js';
import { SeenIds } from '../p2p/gossip.js';
import type { P2pHost } from '../p2p/types.js';
import { singleAnswer } from '../p2p/reqresp.js';
import { RateLimiter } from './api/rate-limit.js';
import type { ExecutionMetrics } from './metrics.js';
import { admitFromPeer, type PeerTxDeps, type PeerTxOutcome } from './txpool/peer-tx.js';
import {
  type Announced,
  decodeHashesPage,
  decodeHashesRequest,
  decodeTxsRequest,
  encodeHashesPage,
  encodeHashesRequest,
  encodeTxsRequest,
  MAX_ANNOUNCE_HASHES,
  MAX_FETCH_BYTES,
  MAX_FETCH_HASHES,
  poolLimits,
  PoolProtocols,
} from './pool-exchange-codec.js';

/** Polls of each peer per slot: a transaction one peer holds reaches this node within half a slot of the link being up. */
const POLLS_PER_SLOT = 2;
/** Pages one poll reads back to back before it yields to the next poll (a full 50,000 pool is 13 pages). */
const MAX_PAGES_PER_POLL = 16;
/** Announced hashes waiting to be fetched; beyond it new announcements are dropped (a later poll brings them again). */
export const MAX_WANTED = 16_384;
/** Fetches in flight across all peers: fetched transactions queue for the same admission as gossip. */
const MAX_CONCURRENT_FETCHES = 4;
/** How long a hash whose transaction admission refused is not fetched again (stale, underpriced, invalid). */
const REFUSED_TTL_MS = 120_000;
const MAX_REFUSED = 65_536;
/**
 * What one peer may ask of this node: an honest peer polls twice a slot and pages through a whole
 * pool once per connection, and fetches at most 2 MiB per request, one at a time.
 */
const HASHES_PER_SECOND = 8;
const HASHES_BURST = 32;
const TXS_PER_SECOND = 4;
const TXS_BURST = 16;

/** What the pool exchange needs from the node. */
export interface PoolExchangeDeps extends PeerTxDeps {
  metrics: ExecutionMetrics;
  /** Slot length (genesis): the poll period and request deadline derive from it. */
  slotMs: number;
}

/** One connected peer's exchange state. */
interface PeerState {
  /** The peer's cursor: where the next page of its pool starts. */
  cursor: bigint;
  polling: boolean;
  fetching: boolean;
  nextPollAt: number;
}

/** An announced hash not yet fetched. */
interface Wanted {
  size: number;
  /** Peers that announced it, in order. */
  announcers: Set<string>;
  /** The peer it is being fetched from. */
  inFlight?: string;
}

/** The pool exchange of one execution node's host. */
export class PoolExchange {
  private readonly peers = new Map<string, PeerState>();
  private readonly wanted = new Map<string, Wanted>();
  private readonly refused = new SeenIds(REFUSED_TTL_MS, MAX_REFUSED);
  private readonly hashesLimiter = new RateLimiter(HASHES_PER_SECOND, HASHES_BURST, 'pool hashes requests of peer');
  private readonly txsLimiter = new RateLimiter(TXS_PER_SECOND, TXS_BURST, 'pool transaction requests of peer');
  private readonly limits;
  private readonly pollMs: number;
  private fetches = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly host: P2pHost,
    private readonly deps: PoolExchangeDeps,
  ) {
    this.pollMs = Math.max(1, Math.floor(deps.slotMs / POLLS_PER_SLOT));
    // An answer takes milliseconds; a slot is the most a request may hold a peer's poll up.
    this.limits = poolLimits(deps.slotMs);
  }

  /** Serves both protocols, and polls every peer on connection and then a few times a slot. */
  start(): void {
    this.host.handle(PoolProtocols.hashes, (req, peer) => this.serveHashes(req, peer), this.limits.hashes);
    this.host.handle(PoolProtocols.txs, (req, peer) => this.serveTxs(req, peer), this.limits.txs);
    this.host.onPeerConnected((peer) => {
      // A new connection starts from the beginning of the peer's pool: whatever it holds may be news.
      this.peers.set(peer, { cursor: 0n, polling: false, fetching: false, nextPollAt: 0 });
      this.tick();
    });
    this.timer = setInterval(() => this.tick(), this.pollMs);
    this.timer.unref();
  }

  /** Stops polling; the host (stopped by the caller) ends what is in flight. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Hashes waiting to be fetched (tests and metrics). */
  get wantedCount(): number {
    return this.wanted.size;
  }

  /** One page of this node's pool from the requested cursor. */
  async *serveHashes(request: Uint8Array, peer: string): AsyncIterable<Uint8Array> {
    const { cursor, limit } = decodeHashesRequest(request);
    this.hashesLimiter.take(peer);
    const from = cursor > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(cursor);
    const page = this.deps.admission.pool.since(from, limit);
    const body = encodeHashesPage({ next: BigInt(page.next), more: page.more, entries: page.entries.map((e) => ({ hash: e.hash, size: e.size })) });
    this.deps.metrics.poolExchangeServed.inc({ protocol: PoolProtocols.hashes }, body.length);
    yield body;
  }

  /** The requested transactions this node pools, in request order, up to MAX_FETCH_BYTES (at least one). */
  async *serveTxs(request: Uint8Array, peer: string): AsyncIterable<Uint8Array> {
    const hashes = decodeTxsRequest(request);
    this.txsLimiter.take(peer);
    let bytes = 0;
    for (const hash of hashes) {
      const entry = this.deps.admission.pool.get(hash);
      if (!entry) continue;
      if (bytes > 0 && bytes + entry.envelope.length > MAX_FETCH_BYTES) break;
      bytes += entry.envelope.length;
      this.deps.metrics.poolExchangeServed.inc({ protocol: PoolProtocols.txs }, entry.envelope.length);
      yield entry.envelope;
    }
  }

  /** Starts the polls that are due and the fetches that can run; forgets peers that left. */
  private tick(): void {
    if (this.stopped) return;
    const connected = new Set(this.host.peers().map((p) => p.peer_id));
    for (const peer of this.peers.keys()) if (!connected.has(peer)) this.forget(peer);
    const now = Date.now();
    for (const peer of connected) {
      let st = this.peers.get(peer);
      if (!st) {
        st = { cursor: 0n, polling: false, fetching: false, nextPollAt: 0 };
        this.peers.set(peer, st);
      }
      if (!st.polling && st.nextPollAt <= now) void this.poll(peer, st);
    }
    this.pump();
  }

  /** Drops a gone peer: what only it announced is no longer wanted. */
  private forget(peer: string): void {
    this.peers.delete(peer);
    for (const [hash, w] of this.wanted) {
      w.announcers.delete(peer);
      if (w.announcers.size === 0 && w.inFlight === undefined) this.wanted.delete(hash);
    }
  }

  /** Reads the peer's pool from its cursor, page after page while it says there is more. */
  private async poll(peer: string, st: PeerState): Promise<void> {
    const { metrics, log } = this.deps;
    st.polling = true;
    const started = Date.now();
    try {
      for (let page = 0; page < MAX_PAGES_PER_POLL && !this.stopped; page++) {
        let chunks: Uint8Array[];
        try {
          chunks = await this.host.request(peer, PoolProtocols.hashes, encodeHashesRequest({ cursor: st.cursor, limit: MAX_ANNOUNCE_HASHES }), this.limits.hashes);
        } catch (err) {
          // A peer that does not answer, refuses (rate limit) or is not an svc execution node: no penalty, try again next period.
          log.debug('pool hashes request failed', { peer, error: (err as Error).message });
          return;
        }
        if (this.peers.get(peer) !== st) return;
        let next;
        try {
          const answer = singleAnswer(chunks);
          if (answer === null) {
            log.debug('pool hashes request ended without an answer', { peer });
            return;
          }
          next = decodeHashesPage(answer, MAX_ANNOUNCE_HASHES);
        } catch (err) {
          metrics.poolExchangeHashes.inc({ result: 'malformed' });
          log.debug('pool hashes page malformed', { peer, error: (err as Error).message });
          this.host.penalise(peer, 'pool_malformed_page');
          return;
        }
        st.cursor = next.next;
        this.announced(peer, next.entries);
        this.pump();
        if (!next.more) return;
      }
    } finally {
      st.polling = false;
      // Due at the next tick after the one that started it, even if that tick fires a hair early.
      st.nextPollAt = started + this.pollMs / 2;
    }
  }

  /** Records what a peer announced: hashes neither pooled, wanted nor lately refused become wanted. */
  private announced(peer: string, entries: readonly Announced[]): void {
    const { admission, metrics } = this.deps;
    let wanted = 0;
    let known = 0;
    let dropped = 0;
    for (const e of entries) {
      const w = this.wanted.get(e.hash);
      if (w) {
        w.announcers.add(peer);
        known++;
      } else if (admission.pool.has(e.hash) || this.refused.has(e.hash)) {
        known++;
      } else if (this.wanted.size >= MAX_WANTED) {
        dropped++;
      } else {
        this.wanted.set(e.hash, { size: e.size, announcers: new Set([peer]) });
        wanted++;
      }
    }
    if (wanted) metrics.poolExchangeHashes.inc({ result: 'wanted' }, wanted);
    if (known) metrics.poolExchangeHashes.inc({ result: 'known' }, known);
    if (dropped) metrics.poolExchangeHashes.inc({ result: 'dropped' }, dropped);
  }

  /** Starts fetches from idle peers for the wanted hashes they announced, within the global bound. */
  private pump(): void {
    if (this.stopped || this.wanted.size === 0) return;
    for (const [peer, st] of this.peers) {
      if (this.fetches >= MAX_CONCURRENT_FETCHES) return;
      if (st.fetching) continue;
      const batch: string[] = [];
      let bytes = 0;
      let maxSize = 0;
      for (const [hash, w] of this.wanted) {
        if (w.inFlight !== undefined || !w.announcers.has(peer)) continue;
        if (batch.length > 0 && bytes + w.size > MAX_FETCH_BYTES) break;
        batch.push(hash);
        bytes += w.size;
        maxSize = Math.max(maxSize, w.size);
        if (batch.length >= MAX_FETCH_HASHES) break;
      }
      if (batch.length === 0) continue;
      for (const hash of batch) this.wanted.get(hash)!.inFlight = peer;
      st.fetching = true;
      this.fetches++;
      void this.fetch(peer, batch, maxSize).finally(() => {
        st.fetching = false;
        this.fetches--;
        this.pump();
      });
    }
  }

  /**
   * Fetches `batch` from `peer` and admits what comes back. Each answer chunk must be one of the
   * asked transactions, once (at most the announced size: the reader's limit); the asked ones not
   * sent are fetched from another announcer, or forgotten.
   */
  private async fetch(peer: string, batch: readonly string[], maxSize: number): Promise<void> {
    const { metrics, log } = this.deps;
    const served = new Set<string>();
    try {
      let chunks: Uint8Array[];
      try {
        chunks = await this.host.request(peer, PoolProtocols.txs, encodeTxsRequest(batch), { ...this.limits.txs, maxResponseChunks: batch.length, maxChunkBytes: maxSize });
      } catch (err) {
        log.debug('pool transactions request failed', { peer, error: (err as Error).message });
        return;
      }
      const asked = new Set(batch);
      const toAdmit: Array<{ hash: string; data: Uint8Array }> = [];
      let unrequested = 0;
      for (const data of chunks) {
        const hash = toHex(sha3(data));
        if (!asked.has(hash) || served.has(hash)) {
          unrequested++;
          continue;
        }
        served.add(hash);
        toAdmit.push({ hash, data });
      }
      if (unrequested > 0) {
        metrics.poolExchangeTxs.inc({ verdict: 'reject', reason: 'UNREQUESTED' }, unrequested);
        // One penalty per answer: it broke the protocol once, however many it slipped in.
        this.host.penalise(peer, 'pool_unrequested');
      }
      // Submitted together, in the order asked: one admission batch, a sender's nonces in order.
      const outcomes = await Promise.all(toAdmit.map((t) => admitFromPeer(this.deps, t.data, peer, 'pool')));
      outcomes.forEach((o: PeerTxOutcome, i) => {
        const { hash } = toAdmit[i]!;
        metrics.poolExchangeTxs.inc({ verdict: o.verdict, reason: o.reason });
        this.wanted.delete(hash);
        if (o.verdict !== 'accept' && o.reason !== 'ALREADY_KNOWN') this.refused.observe(hash);
        if (o.verdict === 'reject') this.host.penalise(peer, 'pool_invalid_tx');
      });
    } finally {
      let notServed = 0;
      for (const hash of batch) {
        if (served.has(hash)) continue;
        const w = this.wanted.get(hash);
        if (!w) continue;
        notServed++;
        w.inFlight = undefined;
        w.announcers.delete(peer);
        if (w.announcers.size === 0) this.wanted.delete(hash);
      }
      if (notServed > 0) metrics.poolExchangeTxs.inc({ verdict: 'ignore', reason: 'NOT_SERVED' }, notServed);
    }
  }
}
