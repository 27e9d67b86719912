/**
 * Discovery: keeps the host at its peer target by dialling what the address book knows (bootnodes,
 * peers persisted from earlier runs, candidates from peer exchange) and by asking confirmed peers
 * for theirs (`/service/req/peers/1`, peer-exchange.ts). Bootnodes are only the first contact: once
 * a peer has told us of the others, losing the bootnode loses one peer, not the network.
 */
import type { Multiaddr } from '@multiformats/multiaddr';
import { P2pError } from './errors.js';
import type { Logger } from '../../util/log.js';
import { AddressBook, type BookEntry } from './address-book.js';
import type { Bootnode } from './bootnodes.js';
import type { P2pMetrics } from './metrics.js';
import { decodePexRequest, decodePexResponse, dialableAddr, encodePexRequest, encodePexResponse, isLoopback, MAX_PEER_RECORDS, PeerExchangeError, peerExchangeLimits } from './peer-exchange.js';
import { PEER_EXCHANGE_PROTOCOL, type ProtocolLimits } from './types.js';
import { singleAnswer } from './reqresp.js';

/** Dials under way at once (each costs a hybrid handshake). */
export const MAX_DIALS_IN_FLIGHT = 8;
/** Peer-exchange requests a peer may make in a burst; one more is allowed per slot. */
export const PEX_BURST = 4;
/** Once at the peer target, peer exchange slows to one request per this many slots. */
const PEX_IDLE_SLOTS = 10;
/** How long a peer's identify listen addresses are kept while its chain check is pending. */
const PENDING_LISTEN_MAX = 1024;

/** What discovery needs from the host. */
export interface DiscoveryHost {
  readonly peerId: string;
  /** Peers with at least one open connection. */
  connectedPeers(): Set<string>;
  isBanned(peer: string): boolean;
  /** Dials `peer` at `addrs` (each already ending in `/p2p/<peer>`); `onReached` when a TCP connection to it opened. */
  dial(peer: string, addrs: string[], timeoutMs: number, onReached?: () => void): Promise<void>;
  request(peer: string, protocol: string, request: Uint8Array, limits: ProtocolLimits): Promise<Uint8Array[]>;
  penalise(peer: string, reason: string): void;
  /** Remote address of our first open connection to `peer`, and its direction. */
  connectionOf(peer: string): { remoteAddr: Multiaddr; direction: 'inbound' | 'outbound' } | undefined;
}

export interface DiscoveryOptions {
  layer: string;
  dataDir: string;
  genesisHash: string;
  slotMs: number;
  maxPeers: number;
  metrics: P2pMetrics;
  log: Logger;
}

/** Per-peer token bucket of served peer-exchange requests. */
class PexBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly refillMs: number) {}

  /** Takes one request's token; false when the peer spent its burst. */
  take(peer: string, now = Date.now()): boolean {
    const b = this.buckets.get(peer) ?? { tokens: PEX_BURST, at: now };
    b.tokens = Math.min(PEX_BURST, b.tokens + (now - b.at) / this.refillMs);
    b.at = now;
    if (this.buckets.size > 4096) this.buckets.clear();
    this.buckets.set(peer, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}

/** The dialer, the peer-exchange client and server, and the address book behind them. */
export class Discovery {
  readonly book: AddressBook;
  readonly limits: ProtocolLimits;
  private readonly budget: PexBudget;
  private readonly listenAddrs = new Map<string, Multiaddr[]>();
  /** Every peer ever learned of in this run, so a discovery is counted once. */
  private readonly known = new Set<string>();
  private inFlight = 0;
  private nextPexAt = 0;
  private nextSaveAt = 0;
  private pexTurn = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly host: DiscoveryHost,
    private readonly opts: DiscoveryOptions,
  ) {
    this.book = new AddressBook(opts.dataDir, opts.genesisHash.toLowerCase(), opts.slotMs, opts.log);
    this.limits = peerExchangeLimits(opts.slotMs);
    this.budget = new PexBudget(opts.slotMs);
  }

  /**
   * A dial into a cut link should give up soon enough to be retried after the heal, but not so
   * soon that a slow handshake on a loaded host never finishes (the peers dialling us in the
   * meantime cover the heal too).
   */
  private get dialTimeoutMs(): number {
    return Math.min(10_000, Math.max(5_000, 2 * this.opts.slotMs));
  }

  /** Loads the persisted book, adds the bootnodes and starts dialling. */
  async start(bootnodes: readonly Bootnode[]): Promise<void> {
    const loaded = await this.book.load();
    for (const e of loaded) this.known.add(e.peerId);
    for (const b of bootnodes) {
      if (b.peerId === this.host.peerId) continue;
      this.book.addBootnode(b.peerId, b.addr.toString().replace(/\/p2p\/[^/]+$/, ''));
      this.discovered(b.peerId, 'bootnode');
    }
    if (loaded.length > 0) this.opts.log.info('p2p address book loaded', { layer: this.opts.layer, peers: loaded.length, path: this.book.path });
    const tickMs = Math.max(100, Math.min(1_000, Math.floor(this.opts.slotMs / 4)));
    this.timer = setInterval(() => this.tick(), tickMs);
    this.timer.unref();
    this.tick();
  }

  /** Stops dialling and writes the book. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // Connected peers were seen until now.
    for (const p of this.host.connectedPeers()) this.book.connected(p);
    await this.book.save(true);
  }

  private discovered(peer: string, source: 'bootnode' | 'peer_exchange' | 'inbound'): void {
    if (this.known.has(peer)) return;
    if (this.known.size < 100_000) this.known.add(peer);
    this.opts.metrics.peerDiscovered(source);
  }

  private tick(): void {
    if (this.stopped) return;
    const now = Date.now();
    const connected = this.host.connectedPeers();
    this.dialDue(connected, now);
    if (now >= this.nextPexAt) {
      this.nextPexAt = now + (connected.size < this.opts.maxPeers ? this.opts.slotMs : PEX_IDLE_SLOTS * this.opts.slotMs);
      const confirmed = [...connected].filter((p) => this.book.get(p)?.confirmed);
      if (confirmed.length > 0) void this.askPeers(confirmed[this.pexTurn++ % confirmed.length]!);
    }
    if (now >= this.nextSaveAt) {
      this.nextSaveAt = now + Math.max(2_000, this.opts.slotMs);
      void this.book.save();
    }
  }

  private dialDue(connected: Set<string>, now: number): void {
    let room = Math.min(MAX_DIALS_IN_FLIGHT - this.inFlight, this.opts.maxPeers - connected.size - this.inFlight);
    if (room <= 0) return;
    const due: BookEntry[] = [];
    for (const e of this.book.all()) {
      if (e.dialing || e.nextDialAt > now || connected.has(e.peerId) || this.host.isBanned(e.peerId)) continue;
      due.push(e);
    }
    // Peers known to be on this chain first, then bootnodes, then hearsay.
    due.sort((a, b) => rank(a) - rank(b) || a.nextDialAt - b.nextDialAt);
    for (const e of due) {
      if (room-- <= 0) break;
      this.dial(e);
    }
  }

  private dial(e: BookEntry): void {
    e.dialing = true;
    this.inFlight++;
    const addrs = e.addrs.map((a) => `${a}/p2p/${e.peerId}`);
    let reached = false;
    this.host
      .dial(e.peerId, addrs, this.dialTimeoutMs, () => {
        reached = true;
      })
      .then(() => {
        if (e.bootnode) this.opts.metrics.bootnodeDial('ok');
      })
      .catch((err: unknown) => {
        if (e.bootnode) this.opts.metrics.bootnodeDial('failed');
        this.book.dialFailed(e.peerId, reached);
        this.opts.log.debug('p2p dial failed', { layer: this.opts.layer, peer: e.peerId, bootnode: e.bootnode, confirmed: e.confirmed, reached, retryInMs: Math.max(0, e.nextDialAt - Date.now()), error: (err as Error).message });
      })
      .finally(() => {
        e.dialing = false;
        this.inFlight--;
      });
  }

  /** A peer's first connection opened. */
  onConnected(peer: string): void {
    if (!this.book.get(peer)) this.discovered(peer, 'inbound');
    this.book.connected(peer);
  }

  /** A peer's last connection closed: redial it soon if it was worth knowing. */
  onDisconnected(peer: string): void {
    this.listenAddrs.delete(peer);
    this.book.disconnected(peer);
  }

  /** Identify told us the peer's listen addresses. */
  onIdentify(peer: string, addrs: Multiaddr[]): void {
    if (this.listenAddrs.size >= PENDING_LISTEN_MAX) this.listenAddrs.clear();
    this.listenAddrs.set(peer, addrs.slice(0, 16));
    this.book.updateAddrs(peer, this.dialableOf(peer));
  }

  /** The peer passed the chain check: into the book, and ask it whom it knows. */
  confirm(peer: string): void {
    if (!this.host.connectedPeers().has(peer)) return;
    const fresh = this.book.confirm(peer, this.dialableOf(peer));
    if (fresh) {
      this.opts.log.debug('p2p peer confirmed', { layer: this.opts.layer, peer });
      void this.askPeers(peer);
    }
  }

  /** The peer proved to be on another chain. */
  forget(peer: string): void {
    this.book.forget(peer);
  }

  /** The peer's dialable addresses: those it listens on (identify), else the one we reached it at. */
  private dialableOf(peer: string): string[] {
    const conn = this.host.connectionOf(peer);
    const loopback = conn ? isLoopback(conn.remoteAddr) : false;
    const out: string[] = [];
    for (const a of this.listenAddrs.get(peer) ?? []) {
      const d = dialableAddr(a, peer, loopback);
      if (d && !out.includes(d)) out.push(d);
    }
    if (conn?.direction === 'outbound') {
      const d = dialableAddr(conn.remoteAddr, peer, true);
      if (d && !out.includes(d)) out.unshift(d);
    }
    return out;
  }

  /** Serves a peer-exchange request: confirmed peers, with addresses the asker can dial. */
  async *serve(request: Uint8Array, peer: string): AsyncIterable<Uint8Array> {
    if (!this.budget.take(peer)) throw new P2pError('P2P_RATE_LIMITED', `more than ${PEX_BURST} peer-exchange requests in a burst (one more per slot)`);
    const n = decodePexRequest(request);
    const conn = this.host.connectionOf(peer);
    const loopback = conn ? isLoopback(conn.remoteAddr) : false;
    const records = this.book.shareable(new Set([peer, this.host.peerId]), MAX_PEER_RECORDS).map((r) => ({
      peerId: r.peerId,
      addrs: loopback ? r.addrs : r.addrs.filter((a) => !/^\/ip4\/127\.|^\/ip6\/::1\/|^\/dns\d?\/localhost\//.test(a)),
    }));
    yield encodePexResponse(this.opts.genesisHash, records.filter((r) => r.addrs.length > 0).slice(0, n));
  }

  /** Asks `peer` for its peers and learns the dialable ones. Never throws. */
  async askPeers(peer: string): Promise<void> {
    let chunks: Uint8Array[];
    try {
      chunks = await this.host.request(peer, PEER_EXCHANGE_PROTOCOL, encodePexRequest(MAX_PEER_RECORDS), this.limits);
    } catch (err) {
      this.opts.log.debug('p2p peer exchange failed', { layer: this.opts.layer, peer, error: (err as Error).message });
      return;
    }
    let records;
    try {
      const answer = singleAnswer(chunks);
      if (answer === null) {
        this.opts.metrics.messageIgnored(PEER_EXCHANGE_PROTOCOL, 'no_answer');
        this.opts.log.debug('p2p peer exchange ended without an answer', { layer: this.opts.layer, peer });
        return;
      }
      records = decodePexResponse(answer, this.opts.genesisHash).records;
    } catch (err) {
      const fault = err instanceof PeerExchangeError ? err.fault : 'malformed';
      this.opts.metrics.messageRejected(PEER_EXCHANGE_PROTOCOL, fault);
      this.host.penalise(peer, `pex_${fault}`);
      this.opts.log.warn('p2p peer-exchange response refused', { layer: this.opts.layer, peer, reason: fault, error: (err as Error).message });
      return;
    }
    const conn = this.host.connectionOf(peer);
    const loopback = conn ? isLoopback(conn.remoteAddr) : false;
    let learned = 0;
    for (const r of records) {
      if (r.peerId === this.host.peerId) continue;
      const addrs = r.addrs.map((a) => dialableAddr(a, r.peerId, loopback)).filter((a): a is string => a !== undefined);
      if (addrs.length < r.addrs.length) this.opts.metrics.messageIgnored(PEER_EXCHANGE_PROTOCOL, 'undialable_address');
      if (addrs.length === 0) continue;
      if (this.book.learn(r.peerId, [...new Set(addrs)])) {
        learned++;
        this.discovered(r.peerId, 'peer_exchange');
      }
    }
    if (learned > 0) {
      this.opts.log.debug('p2p peers learned by peer exchange', { layer: this.opts.layer, from: peer, learned });
      this.dialDue(this.host.connectedPeers(), Date.now());
    }
  }
}

function rank(e: BookEntry): number {
  return e.confirmed ? 0 : e.bootnode ? 1 : 2;
}
