/**
 * The contract between the P2P host (src/node/p2p/) and the layers that use it (execution gossips
 * transactions; the beacon gossips blocks and attestations and serves sync). The layers see only
 * this: topics and protocols carry bytes, validation verdicts come back from the layer, and the
 * host does the scoring, deduplication, framing, limits and metrics.
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../../util/log.js';
import type { PeerView } from '../../api/beacon.js';

// The wire view of a peer is an API type; the host's contract hands it out.
export type { PeerView };

/** GossipSub topics (DECISIONS.md, P2P). Payloads are SSZ encodings. */
export const Topics = {
  txs: '/service/txs/v1',
  blocks: '/service/blocks/v1',
  attestations: '/service/attestations/v1',
  /** Slashing evidence (src/core/consensus/slashing.ts encoding), fully verified before re-gossip. */
  slashings: '/service/slashings/v1',
  /** Validators' BID signatures (src/node/beacon/bridge/gossip.ts), verified before re-gossip. */
  bidSignatures: '/service/bid_signatures/v1',
} as const;
export type Topic = (typeof Topics)[keyof typeof Topics];

/** Request/response protocol ids of the beacon's sync. */
export const SyncProtocols = {
  status: '/service/req/status/1',
  blocksByRange: '/service/req/blocks_by_range/1',
} as const;

/** The default peer target (SPEC Limits: a healthy node has 10 to 50 peers); libp2p prunes connections above the target. */
export const DEFAULT_MAX_PEERS = 50;

/** The spec's libp2p port (SPEC fact 2). */
export const DEFAULT_P2P_PORT = 9000;
/** libp2p is public (SPEC, security: port 9000 is public), unlike the HTTP servers. */
export const DEFAULT_P2P_HOST = '0.0.0.0';

/** Request/response protocol id of peer exchange (src/node/p2p/peer-exchange.ts), served by every host. */
export const PEER_EXCHANGE_PROTOCOL = '/service/req/peers/1';

/**
 * A layer's verdict on a gossiped message, after the full validation of its kind:
 * accept (valid and new: re-gossip), ignore (duplicate, too early, unknown parent: drop without
 * penalty), reject (invalid: drop and penalise the sender through gossipsub scoring).
 */
export type GossipVerdict = 'accept' | 'ignore' | 'reject';

/** Validates one gossiped payload; `from` is the sender's peer id. Must not throw for bad input. */
export type GossipValidator = (data: Uint8Array, from: string) => Promise<GossipVerdict>;

export interface TopicOptions {
  /** Payloads above this size are rejected before the validator runs. */
  maxBytes: number;
}

/** Limits of one request/response protocol; frames beyond them are rejected and the peer penalised. */
export interface ProtocolLimits {
  maxRequestBytes: number;
  maxResponseChunks: number;
  maxChunkBytes: number;
  /** Deadline for a whole exchange. */
  timeoutMs: number;
}

/**
 * Serves one request: returns the response chunks in order (streamed to the requester). A thrown
 * `SvcError` whose code answers 400 (src/api/errors.ts) is a bad request: the peer is penalised and
 * the stream reset; one whose code answers 429 (over a rate limit) resets the stream without a penalty.
 */
export type RequestHandler = (request: Uint8Array, peer: string) => AsyncIterable<Uint8Array>;

export interface P2pOptions {
  /** Which layer runs the host (label of every metric and log line). */
  layer: 'execution' | 'beacon';
  /** Listen address (`--p2p-host`, default 0.0.0.0). */
  host: string;
  /** Listen TCP port (`--p2p-port`, default 9000); 0 picks a free one. */
  port: number;
  /** Multiaddrs `/ip4/…/tcp/…/p2p/<peer id>`: the first contact, dialled at start and redialled while disconnected. */
  bootnodes: string[];
  /**
   * The data directory; the Ed25519 peer key is persisted in `<dataDir>/p2p/peer-key`, the address
   * book (peers that passed the chain check) in `<dataDir>/p2p/address-book.json`.
   */
  dataDir: string;
  /** The chain's slot length (genesis): redial backoff and peer-exchange cadence are paced by it. Default: the mainnet preset's. */
  slotMs?: number | undefined;
  /** Peer target (`--max-peers`, default 50, SPEC Limits 10–50): discovery dials until this many are connected. */
  maxPeers?: number | undefined;
  /**
   * Who says a peer is on this chain. `handshake` (default): the hybrid handshake, which binds the
   * genesis hash, is the whole check. `layer`: the layer runs its own (the beacon's `status`) and
   * calls `confirmPeer`; only confirmed peers enter the address book and are shared with others.
   */
  chainCheck?: 'handshake' | 'layer';
  /** A provisioned peer key used instead of the data directory's (`--p2p-key-file`); it must exist. */
  keyFile?: string | undefined;
  /** The chain's genesis hash (0x hex): bound into the handshake prologue, so another chain's peer cannot connect. */
  genesisHash: string;
  /** Registry the `service_p2p_*` metrics register on (the layer's own). */
  metrics: Registry;
  log: Logger;
}

/** A running libp2p host. */
export interface P2pHost {
  readonly peerId: string;
  /** Listen multiaddrs including `/p2p/<peer id>`. */
  multiaddrs(): string[];
  /** Subscribes with the layer's validator; only accepted messages are re-gossiped. */
  subscribe(topic: Topic, validate: GossipValidator, options: TopicOptions): void;
  /** Publishes a locally produced or locally accepted payload; resolves with the number of peers it went to. */
  publish(topic: Topic, data: Uint8Array): Promise<number>;
  /** Serves a request/response protocol. */
  handle(protocol: string, handler: RequestHandler, limits: ProtocolLimits): void;
  /** Sends one request and collects the response chunks (bounded by `limits`). */
  request(peer: string, protocol: string, request: Uint8Array, limits: ProtocolLimits): Promise<Uint8Array[]>;
  /** Lowers the peer's score (reason is a metric label); repeated offences disconnect it. */
  penalise(peer: string, reason: string): void;
  /** Closes every connection to the peer. */
  disconnect(peer: string, reason: string): Promise<void>;
  /** Called for every newly connected peer (the beacon sends it a status request). */
  onPeerConnected(listener: (peer: string) => void): void;
  /** The layer's chain check passed for a connected peer (`chainCheck: 'layer'`): it enters the address book. */
  confirmPeer(peer: string): void;
  peers(): PeerView[];
  peerCount(): number;
  stop(): Promise<void>;
}
