/**
 * The `service_p2p_*` metrics (SPEC, Metrics: P2P) plus the ones an operator needs to see why a peer
 * was dropped. Every series carries `layer`, because `svc node all` may put both hosts on one
 * registry: a metric already registered there is reused rather than registered twice.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

type Labels<L extends string> = Partial<Record<L, string | number>>;

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
}

/** One host's view of the shared P2P metrics, with its `layer` label applied. */
export class P2pMetrics {
  private readonly sent: Counter<'layer' | 'topic'>;
  private readonly received: Counter<'layer' | 'topic'>;
  private readonly rejected: Counter<'layer' | 'topic' | 'reason'>;
  private readonly ignored: Counter<'layer' | 'topic' | 'reason'>;
  private readonly accepted: Counter<'layer' | 'topic'>;
  private readonly connections: Gauge<'layer'>;
  private readonly discovery: Counter<'layer' | 'source'>;
  private readonly handshakes: Counter<'layer' | 'result' | 'direction'>;
  private readonly handshakeSeconds: Histogram<'layer'>;
  private readonly encrypted: Counter<'layer' | 'direction'>;
  private readonly penalties: Counter<'layer' | 'reason'>;
  private readonly disconnects: Counter<'layer' | 'reason'>;
  private readonly requests: Counter<'layer' | 'protocol' | 'direction' | 'result'>;
  private readonly dials: Counter<'layer' | 'result'>;

  constructor(
    registry: Registry,
    private readonly layer: string,
  ) {
    this.sent = counter(registry, 'service_p2p_messages_sent_total', 'Gossip messages published by this node, by topic', ['layer', 'topic']);
    this.received = counter(registry, 'service_p2p_messages_received_total', 'Gossip messages received from peers (before deduplication), by topic', ['layer', 'topic']);
    this.rejected = counter(registry, 'service_p2p_messages_rejected_total', 'Gossip messages and request/response frames rejected, by topic or protocol and reason', ['layer', 'topic', 'reason']);
    this.ignored = counter(registry, 'service_p2p_messages_ignored_total', 'Gossip messages dropped without penalty (duplicate, queue full, layer ignore), by topic and reason', ['layer', 'topic', 'reason']);
    this.accepted = counter(registry, 'service_p2p_messages_accepted_total', 'Gossip messages the layer accepted (and that were re-gossiped), by topic', ['layer', 'topic']);
    this.connections = gauge(registry, 'service_p2p_peer_connections_active', 'Open libp2p connections', ['layer']);
    this.discovery = counter(registry, 'service_p2p_peer_discovery_total', 'Peers learned of for the first time in this run, by source (bootnode, peer_exchange, inbound)', ['layer', 'source']);
    this.handshakes = counter(registry, 'service_p2p_kyber_handshakes_total', 'Hybrid Noise + ML-KEM-1024 (Kyber-1024) handshakes, by result and direction', ['layer', 'result', 'direction']);
    this.handshakeSeconds = histogram(registry, 'service_p2p_handshake_seconds', 'Duration of successful hybrid handshakes', ['layer'], [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
    this.encrypted = counter(registry, 'service_p2p_encrypted_bytes_total', 'Bytes sealed (out) and opened (in) by the hybrid encrypter, handshake and transport', ['layer', 'direction']);
    this.penalties = counter(registry, 'service_p2p_peer_penalties_total', 'Penalties applied to peers, by reason', ['layer', 'reason']);
    this.disconnects = counter(registry, 'service_p2p_peer_disconnects_total', 'Peers this node disconnected, by reason', ['layer', 'reason']);
    this.dials = counter(registry, 'service_p2p_bootnode_dials_total', 'Bootnode dials, by result', ['layer', 'result']);
    this.requests = counter(registry, 'service_p2p_requests_total', 'Request/response exchanges, by protocol, direction (inbound = served) and result', ['layer', 'protocol', 'direction', 'result']);
  }

  private l<L extends string>(extra: Labels<L>): Labels<L | 'layer'> {
    return { layer: this.layer, ...extra } as Labels<L | 'layer'>;
  }

  /** One gossip message published. */
  messageSent(topic: string): void {
    this.sent.inc(this.l({ topic }));
  }
  /** One gossip message arrived from a peer. */
  messageReceived(topic: string): void {
    this.received.inc(this.l({ topic }));
  }
  /** A gossip message or req/resp frame rejected (`topic` is the protocol id for req/resp). */
  messageRejected(topic: string, reason: string): void {
    this.rejected.inc(this.l({ topic, reason }));
  }
  /** A gossip message dropped without penalty. */
  messageIgnored(topic: string, reason: string): void {
    this.ignored.inc(this.l({ topic, reason }));
  }
  /** A gossip message accepted by its layer. */
  messageAccepted(topic: string): void {
    this.accepted.inc(this.l({ topic }));
  }
  /** Current number of open connections. */
  connectionsActive(n: number): void {
    this.connections.set(this.l({}), n);
  }
  /** A peer learned of for the first time (`bootnode`, `peer_exchange`, `inbound`). */
  peerDiscovered(source: string): void {
    this.discovery.inc(this.l({ source }));
  }
  /** A hybrid handshake finished. */
  handshake(result: 'success' | 'failure', direction: 'inbound' | 'outbound', seconds?: number): void {
    this.handshakes.inc(this.l({ result, direction }));
    if (result === 'success' && seconds !== undefined) this.handshakeSeconds.observe(this.l({}), seconds);
  }
  /** Bytes through the hybrid encrypter. */
  encryptedBytes(direction: 'in' | 'out', n: number): void {
    this.encrypted.inc(this.l({ direction }), n);
  }
  /** A penalty applied to a peer. */
  penalty(reason: string): void {
    this.penalties.inc(this.l({ reason }));
  }
  /** A peer disconnected by this node. */
  disconnect(reason: string): void {
    this.disconnects.inc(this.l({ reason }));
  }
  /** A bootnode dial ended. */
  bootnodeDial(result: 'ok' | 'failed'): void {
    this.dials.inc(this.l({ result }));
  }
  /** A request/response exchange ended. */
  request(protocol: string, direction: 'inbound' | 'outbound', result: string): void {
    this.requests.inc(this.l({ protocol, direction, result }));
  }
}
