/**
 * The libp2p host behind `P2pHost`: TCP, yamux, the hybrid Noise + ML-KEM-1024 encrypter (the only
 * one), identify, gossipsub, and discovery (address book + peer exchange, discovery.ts). Loaded by `host.ts` through a dynamic import, after the
 * `Promise.withResolvers` polyfill is in place.
 */
import './polyfill.js';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp, type TCPSocketOptions } from '@libp2p/tcp';
import { yamux } from '@libp2p/yamux';
import { identify, type Identify } from '@libp2p/identify';
import { gossipsub, TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id';
import type { Connection, PeerId } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { createServer } from 'node:net';
import { P2pError } from './errors.js';
import { PRESETS } from '../../core/genesis/genesis.js';
import type { Logger } from '../../util/log.js';
import { FairQueue, gossipMessageId, messageIdHex, PenaltyBook, SeenIds, SEEN_TTL_MS, topicScoreParams, SCORE_THRESHOLDS, PENALTY_POINTS, DISCONNECT_POINTS, BAN_MS } from './gossip.js';
import { parseBootnode, type Bootnode } from './bootnodes.js';
import { Discovery, type DiscoveryHost } from './discovery.js';
import { instrumentGossipsubInput } from './gossipsub-input.js';
import { HYBRID_NOISE_PROTOCOL, hybridNoise } from './hybrid-noise.js';
import { loadOrCreatePeerKey, loadPeerKeyFile } from './identity.js';
import { P2pMetrics } from './metrics.js';
import { exchange, MAX_INBOUND_STREAMS_PER_PEER, MAX_OUTBOUND_STREAMS_PER_PEER, RequestError, serveStream, type ReqRespContext } from './reqresp.js';
import { DEFAULT_MAX_PEERS, PEER_EXCHANGE_PROTOCOL, type GossipValidator, type GossipVerdict, type P2pHost, type P2pOptions, type PeerView, type ProtocolLimits, type RequestHandler, type Topic, type TopicOptions } from './types.js';

/**
 * Largest gossipsub RPC decoded at all: the largest topic payload (a block, 16 MiB) plus room
 * for the RPC framing around it; per-topic limits are tighter.
 */
export const MAX_GOSSIP_RPC_BYTES = 17 * 1024 * 1024;
/**
 * Unread bytes a yamux stream may buffer. yamux's default (4 MiB) aborts the stream under any
 * larger message, silently: a gossiped block above it never arrived and the peer's outbound
 * stream was gone. It must hold the largest RPC or request/response frame.
 */
export const STREAM_READ_BUFFER_BYTES = MAX_GOSSIP_RPC_BYTES + 1024 * 1024;
/** Deadline of one dial (TCP connect + hybrid handshake + muxer). */
export const DIAL_TIMEOUT_MS = 10_000;
/**
 * Deadline of a dial's TCP connect, a quarter slot within these bounds. A reachable host's kernel
 * answers a SYN within a round trip whatever its load, so a connect that takes longer is a cut
 * link or a lost SYN: giving up and redialling (address-book.ts) beats waiting for the kernel's
 * later SYN retransmits (3 s, 7 s after the first), which would leave a healed link unused for
 * seconds. Not below 2 s: the first retransmit (at 1 s) still falls inside it, so a shorter one
 * would find a healed link no sooner, and the timer must not beat a connect that completed while
 * a loaded process's event loop lagged.
 */
export const TCP_CONNECT_TIMEOUT_MS = { min: 2_000, max: 3_000 } as const;
/** Ban after an explicit `disconnect`, so the peer does not come straight back. */
export const DISCONNECT_BAN_MS = 30_000;

type Services = { identify: Identify; pubsub: GossipSub };

/**
 * Fails with `P2P_PORT_IN_USE` if the TCP port cannot be bound. libp2p reports a busy port only inside
 * an error message, so the port is probed first with the same address (nothing else listens on it
 * between the probe closing and libp2p binding unless another process races for it).
 */
async function assertPortFree(layer: string, host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        reject(new P2pError('P2P_PORT_IN_USE', `${layer} P2P port ${port} on ${host} is already in use (choose another with --p2p-port${layer === 'execution' ? ' or --execution-p2p-port' : ''}, or run without P2P: --no-p2p)`, { cause: err }));
      } else reject(new P2pError('P2P_LISTEN_FAILED', `${layer} P2P cannot listen on ${host}:${port}: ${err.message}`, { cause: err }));
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

function hexToBytes(hex: string): Uint8Array {
  const clean = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (!/^[0-9a-fA-F]{64}$/.test(clean)) throw new P2pError('P2P_BAD_GENESIS_HASH', `genesis hash must be 32 bytes of hex, got ${hex}`);
  return new Uint8Array(Buffer.from(clean, 'hex'));
}

class Libp2pHost implements P2pHost, DiscoveryHost {
  readonly peerId: string;
  private readonly metrics: P2pMetrics;
  private readonly log: Logger;
  private readonly seen = new SeenIds();
  private readonly idCache = new WeakMap<Uint8Array, Uint8Array>();
  private readonly validationQueue = new FairQueue();
  private readonly penalties = new PenaltyBook();
  private readonly bans = new Map<string, number>();
  private readonly agents = new Map<string, string>();
  private readonly connectListeners: Array<(peer: string) => void> = [];
  private readonly topicLimits = new Map<string, number>();
  private readonly bootnodes: Bootnode[];
  readonly discovery: Discovery;
  private readonly maxPeers: number;
  private graylistTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  node!: Libp2p<Services>;

  constructor(
    private readonly options: P2pOptions,
    peerId: string,
    metrics: P2pMetrics,
    bootnodes: Bootnode[],
  ) {
    this.peerId = peerId;
    this.metrics = metrics;
    this.log = options.log;
    this.bootnodes = bootnodes.filter((b) => b.peerId !== peerId);
    this.maxPeers = options.maxPeers ?? DEFAULT_MAX_PEERS;
    this.discovery = new Discovery(this, {
      layer: options.layer,
      dataDir: options.dataDir,
      genesisHash: options.genesisHash,
      slotMs: options.slotMs ?? PRESETS.mainnet.slot_seconds * 1000,
      maxPeers: this.maxPeers,
      metrics,
      log: options.log,
    });
  }

  private get reqCtx(): ReqRespContext {
    return { metrics: this.metrics, log: this.log, penalise: (p, r) => this.penalise(p, r) };
  }

  /** Whether a peer is currently refused. */
  isBanned(peer: string, now = Date.now()): boolean {
    const until = this.bans.get(peer);
    if (until === undefined) return false;
    if (until > now) return true;
    this.bans.delete(peer);
    this.penalties.clear(peer);
    return false;
  }

  /** Wires libp2p events to metrics and listeners, before libp2p starts so no connection is missed. */
  attach(node: Libp2p<Services>): void {
    this.node = node;
    const instrumented = instrumentGossipsubInput(
      node.services.pubsub,
      (peer, reason) => {
        this.metrics.messageRejected('rpc', reason);
        this.penalise(peer, reason);
      },
      // A stream a network cut or a reset ended proves nothing against the peer.
      () => this.metrics.messageIgnored('rpc', 'stream_broken'),
    );
    if (!instrumented) this.log.warn('p2p cannot count malformed gossipsub RPCs with this gossipsub version');
    const refreshConnections = (): void => this.metrics.connectionsActive(node.getConnections().length);
    node.addEventListener('connection:open', () => refreshConnections());
    node.addEventListener('connection:close', () => refreshConnections());
    node.addEventListener('peer:identify', (evt) => {
      const peer = evt.detail.peerId.toString();
      if (evt.detail.agentVersion) this.agents.set(peer, evt.detail.agentVersion);
      this.discovery.onIdentify(peer, evt.detail.listenAddrs);
    });
    node.addEventListener('peer:connect', (evt) => {
      const peer = evt.detail.toString();
      this.discovery.onConnected(peer);
      // Without a layer check, the handshake (bound to the genesis hash) is the chain check.
      if (this.options.chainCheck !== 'layer') this.discovery.confirm(peer);
      this.log.debug('p2p peer connected', { layer: this.options.layer, peer });
      for (const listener of this.connectListeners) {
        try {
          listener(peer);
        } catch (err) {
          this.log.error('p2p peer-connected listener failed', { error: (err as Error).message });
        }
      }
    });
    node.addEventListener('peer:disconnect', (evt) => {
      const peer = evt.detail.toString();
      this.agents.delete(peer);
      this.discovery.onDisconnected(peer);
      this.log.debug('p2p peer disconnected', { layer: this.options.layer, peer });
    });
  }

  /** Starts discovery (address book, bootnodes, peer exchange) and the graylist checks, once libp2p listens. */
  async begin(): Promise<void> {
    this.metrics.connectionsActive(this.node.getConnections().length);
    this.handle(PEER_EXCHANGE_PROTOCOL, (req, peer) => this.discovery.serve(req, peer), this.discovery.limits);
    this.graylistTimer = setInterval(() => this.dropGraylisted(), 1000);
    this.graylistTimer.unref();
    await this.discovery.start(this.bootnodes);
  }

  /** Peers with an open connection. */
  connectedPeers(): Set<string> {
    return new Set(this.node.getPeers().map((p) => p.toString()));
  }

  /** Dials a peer at its known addresses (each with `/p2p/<peer>`, so the handshake must prove that identity). */
  async dial(_peer: string, addrs: string[], timeoutMs: number, onReached?: () => void): Promise<void> {
    await this.node.dial(addrs.map((a) => multiaddr(a)), {
      signal: AbortSignal.timeout(Math.min(timeoutMs, DIAL_TIMEOUT_MS)),
      // The upgrader starts encrypting once TCP connected: the peer's address answered.
      onProgress: (evt: { type: string }) => {
        if (evt.type === 'upgrader:encrypt-outbound-connection') onReached?.();
      },
    });
  }

  /** The oldest open connection to `peer`. */
  connectionOf(peer: string): { remoteAddr: Multiaddr; direction: 'inbound' | 'outbound' } | undefined {
    let first: Connection | undefined;
    for (const c of this.node.getConnections(peerIdFromString(peer))) if (c.status === 'open' && (!first || c.timeline.open < first.timeline.open)) first = c;
    return first && { remoteAddr: first.remoteAddr, direction: first.direction };
  }

  /** Whether a new peer would exceed the peer target. */
  isFull(peer: string): boolean {
    const connected = this.connectedPeers();
    return !connected.has(peer) && connected.size >= this.maxPeers;
  }

  confirmPeer(peer: string): void {
    this.discovery.confirm(peer);
  }

  /**
   * Disconnects and bans peers whose gossipsub score fell below the graylist threshold: gossipsub then
   * ignores their RPCs, so our validators (and penalties) would never see their next offence.
   */
  private dropGraylisted(): void {
    if (this.stopped) return;
    // getScore is public on gossipsub's class but missing from its exported interface.
    const pubsub = this.node.services.pubsub as unknown as { getScore?: (peer: string) => number };
    if (typeof pubsub.getScore !== 'function') return;
    for (const peerId of this.node.getPeers()) {
      const peer = peerId.toString();
      if (this.isBanned(peer)) continue;
      const score = pubsub.getScore(peer);
      if (score < SCORE_THRESHOLDS.graylistThreshold) {
        this.log.warn('p2p peer banned', { layer: this.options.layer, peer, reason: 'gossip_score', score: Math.round(score) });
        this.bans.set(peer, Date.now() + BAN_MS);
        this.metrics.disconnect('gossip_score');
        void this.hangUp(peer);
      }
    }
  }

  /** Message id of a payload (SHA3-256), reusing the one computed on arrival. */
  messageId(data: Uint8Array): Uint8Array {
    return this.idCache.get(data) ?? gossipMessageId(data);
  }

  /** Duplicate ledger and `received` count, run by gossipsub for every message before its own dedupe. */
  observeIncoming(topic: string, data: Uint8Array): string {
    const raw = gossipMessageId(data);
    // Gossipsub asks for the message id of the same bytes again right after: hash once.
    this.idCache.set(data, raw);
    const id = messageIdHex(raw);
    this.metrics.messageReceived(topic);
    if (this.seen.observe(id)) this.metrics.messageIgnored(topic, 'duplicate');
    return id;
  }

  multiaddrs(): string[] {
    return this.node.getMultiaddrs().map((a) => a.toString());
  }

  subscribe(topic: Topic, validate: GossipValidator, options: TopicOptions): void {
    this.topicLimits.set(topic, options.maxBytes);
    const pubsub = this.node.services.pubsub;
    pubsub.topicValidators.set(topic, async (peerId: PeerId, msg) => {
      const from = peerId.toString();
      const data = msg.data;
      if (data.length > options.maxBytes) {
        this.metrics.messageRejected(topic, 'oversize');
        this.penalise(from, 'gossip_oversize');
        return TopicValidatorResult.Reject;
      }
      let verdict: GossipVerdict | 'queue_full';
      try {
        verdict = await this.validationQueue.run(from, data.length, () => validate(data, from));
      } catch (err) {
        // The contract says validators do not throw; if one does, the message is dropped unpunished.
        this.log.error('p2p gossip validator threw', { topic, error: (err as Error).message });
        this.metrics.messageIgnored(topic, 'validator_error');
        return TopicValidatorResult.Ignore;
      }
      switch (verdict) {
        case 'accept':
          this.metrics.messageAccepted(topic);
          return TopicValidatorResult.Accept;
        case 'queue_full':
          this.metrics.messageIgnored(topic, 'queue_full');
          return TopicValidatorResult.Ignore;
        case 'ignore':
          this.metrics.messageIgnored(topic, 'layer');
          return TopicValidatorResult.Ignore;
        case 'reject':
          this.metrics.messageRejected(topic, 'invalid');
          this.penalise(from, 'gossip_invalid');
          return TopicValidatorResult.Reject;
      }
    });
    pubsub.subscribe(topic);
  }

  async publish(topic: Topic, data: Uint8Array): Promise<number> {
    this.seen.observe(messageIdHex(gossipMessageId(data)));
    const result = await this.node.services.pubsub.publish(topic, data);
    this.metrics.messageSent(topic);
    return result.recipients.length;
  }

  handle(protocol: string, handler: RequestHandler, limits: ProtocolLimits): void {
    void this.node
      .handle(
        protocol,
        (stream, connection) => {
          void serveStream(this.reqCtx, protocol, stream, connection.remotePeer.toString(), handler, limits);
        },
        { maxInboundStreams: MAX_INBOUND_STREAMS_PER_PEER, maxOutboundStreams: MAX_OUTBOUND_STREAMS_PER_PEER },
      )
      .catch((err: unknown) => this.log.error('p2p handle failed', { protocol, error: (err as Error).message }));
  }

  async request(peer: string, protocol: string, request: Uint8Array, limits: ProtocolLimits): Promise<Uint8Array[]> {
    let stream;
    try {
      stream = await this.node.dialProtocol(peerIdFromString(peer), protocol, { signal: AbortSignal.timeout(limits.timeoutMs) });
    } catch (err) {
      this.metrics.request(protocol, 'outbound', 'dial');
      throw new RequestError('dial', `cannot open ${protocol} to ${peer}: ${(err as Error).message}`, { cause: err });
    }
    return exchange(this.reqCtx, protocol, stream, peer, request, limits);
  }

  penalise(peer: string, reason: string): void {
    this.metrics.penalty(reason);
    const points = this.penalties.add(peer, PENALTY_POINTS);
    if (points >= DISCONNECT_POINTS && !this.isBanned(peer)) {
      this.log.warn('p2p peer banned', { layer: this.options.layer, peer, reason, points: Math.round(points) });
      this.bans.set(peer, Date.now() + BAN_MS);
      this.metrics.disconnect('penalties');
      void this.hangUp(peer);
    }
  }

  /** Gossipsub's app-specific score: minus the peer's penalty points. */
  appScore(peer: string): number {
    return -this.penalties.get(peer);
  }

  private async hangUp(peer: string): Promise<void> {
    try {
      await this.node.hangUp(peerIdFromString(peer));
    } catch (err) {
      this.log.debug('p2p hang-up failed', { peer, error: (err as Error).message });
    }
  }

  async disconnect(peer: string, reason: string): Promise<void> {
    this.metrics.disconnect(reason);
    const until = Date.now() + DISCONNECT_BAN_MS;
    if ((this.bans.get(peer) ?? 0) < until) this.bans.set(peer, until);
    this.log.info('p2p peer disconnected', { layer: this.options.layer, peer, reason });
    if (reason === 'other_chain') this.discovery.forget(peer);
    await this.hangUp(peer);
  }

  onPeerConnected(listener: (peer: string) => void): void {
    this.connectListeners.push(listener);
  }

  peers(): PeerView[] {
    const byPeer = new Map<string, Connection>();
    for (const conn of this.node.getConnections()) {
      const peer = conn.remotePeer.toString();
      const first = byPeer.get(peer);
      if (!first || conn.timeline.open < first.timeline.open) byPeer.set(peer, conn);
    }
    return [...byPeer.entries()].map(([peer, conn]) => ({
      peer_id: peer,
      address: conn.remoteAddr.toString(),
      direction: conn.direction,
      agent: this.agents.get(peer) ?? null,
      connected_since: new Date(conn.timeline.open).toISOString(),
      handshake: conn.encryption ?? 'unknown',
    }));
  }

  peerCount(): number {
    return this.node.getPeers().length;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.graylistTimer) clearInterval(this.graylistTimer);
    await this.discovery.stop();
    await this.node.stop();
    this.metrics.connectionsActive(0);
  }
}

/** Starts a libp2p host per `options` (see `startP2p` in host.ts). */
export async function createHost(options: P2pOptions): Promise<P2pHost> {
  const genesisHash = hexToBytes(options.genesisHash);
  const maxPeers = options.maxPeers ?? DEFAULT_MAX_PEERS;
  if (!Number.isSafeInteger(maxPeers) || maxPeers < 1) throw new P2pError('P2P_BAD_MAX_PEERS', `the peer target must be a positive integer, got ${maxPeers}`);
  if (options.slotMs !== undefined && !(options.slotMs > 0)) throw new P2pError('P2P_BAD_SLOT', `the slot length must be positive, got ${options.slotMs} ms`);
  const bootnodes = options.bootnodes.filter((b) => b.trim() !== '').map((b) => parseBootnode(b.trim()));
  const privateKey = options.keyFile ? await loadPeerKeyFile(options.keyFile) : await loadOrCreatePeerKey(options.dataDir);
  const metrics = new P2pMetrics(options.metrics, options.layer);
  const peerId = peerIdFromPrivateKey(privateKey).toString();
  const host = new Libp2pHost(options, peerId, metrics, bootnodes);
  const slotMs = options.slotMs ?? PRESETS.mainnet.slot_seconds * 1000;
  const dialOpts: TCPSocketOptions & { timeout: number } = { timeout: Math.min(TCP_CONNECT_TIMEOUT_MS.max, Math.max(TCP_CONNECT_TIMEOUT_MS.min, Math.floor(slotMs / 4))) };
  const ipFamily = options.host.includes(':') ? 'ip6' : 'ip4';
  const listen = `/${ipFamily}/${options.host}/tcp/${options.port}`;
  await assertPortFree(options.layer, options.host, options.port);
  const node = await createLibp2p<Services>({
    start: false,
    privateKey,
    nodeInfo: { name: 'svc', userAgent: `svc/${options.layer}` },
    addresses: { listen: [listen] },
    // net.connect's `timeout` (passed through dialOpts) bounds the connect only: the connection's
    // own inactivity timeout replaces it once the socket is open.
    transports: [tcp({ dialOpts })],
    streamMuxers: [yamux({ streamOptions: { maxReadBufferLength: STREAM_READ_BUFFER_BYTES } })],
    connectionEncrypters: [hybridNoise({ genesisHash, observer: { handshake: (r, d, s) => metrics.handshake(r, d, s), bytes: (d, n) => metrics.encryptedBytes(d, n) } })],
    // libp2p's default admits 5 inbound connections per second per IP; a devnet's nodes all dial
    // from 127.0.0.1 at once, and the connection cap still bounds what one address can hold.
    connectionManager: { maxConnections: maxPeers, dialTimeout: DIAL_TIMEOUT_MS, inboundConnectionThreshold: Math.max(maxPeers, 5) },
    connectionGater: {
      // Loopback and private addresses are where devnets and the three-host deployment live.
      denyDialMultiaddr: () => false,
      denyDialPeer: (peer) => host.isBanned(peer.toString()),
      // At the peer target a new peer is refused (one already connected may open another connection).
      denyInboundEncryptedConnection: (peer) => host.isBanned(peer.toString()) || host.isFull(peer.toString()),
      denyOutboundEncryptedConnection: (peer) => host.isBanned(peer.toString()),
    },
    services: {
      identify: identify(),
      pubsub: gossipsub({
        globalSignaturePolicy: 'StrictNoSign',
        msgIdFn: (msg) => host.messageId(msg.data),
        msgIdToStrFn: (id) => messageIdHex(id),
        fastMsgIdFn: (rpcMsg) => host.observeIncoming(rpcMsg.topic, rpcMsg.data ?? new Uint8Array(0)),
        seenTTL: SEEN_TTL_MS,
        allowPublishToZeroTopicPeers: true,
        ignoreDuplicatePublishError: true,
        emitSelf: false,
        maxInboundDataLength: MAX_GOSSIP_RPC_BYTES,
        scoreParams: {
          topics: topicScoreParams(),
          appSpecificScore: (p) => host.appScore(p),
          appSpecificWeight: 1,
          // Every devnet peer shares 127.0.0.1; colocation is not evidence of a Sybil here.
          IPColocationFactorWeight: 0,
        },
        scoreThresholds: { ...SCORE_THRESHOLDS },
      }),
    },
  });
  host.attach(node);
  try {
    await node.start();
  } catch (err) {
    await Promise.resolve(node.stop()).catch(() => undefined);
    throw new P2pError('P2P_LISTEN_FAILED', `${options.layer} P2P cannot listen on ${listen}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await host.begin();
  } catch (err) {
    await host.stop().catch(() => undefined);
    throw err;
  }
  options.log.info('p2p listening', { layer: options.layer, peerId, addrs: host.multiaddrs(), handshake: HYBRID_NOISE_PROTOCOL });
  return host;
}
