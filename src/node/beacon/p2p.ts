/**
 * The beacon on the P2P network: validates gossiped blocks and attestations with the same checks
 * as the REST API (a block runs the proposal checks and execution's newPayload), publishes what
 * its own validators send, serves `status` and `blocks_by_range`, exchanges status with every
 * peer on connect and once per slot, refuses peers on another chain, and runs range sync when a
 * peer holds a head it lacks.
 */
import { chainIdBytes } from '../../core/crypto/domain.js';
import { SvcError } from '../../core/errors.js';
import { BeaconError } from './errors.js';
import { type Attestation, decodeAttestation, encodeAttestation } from '../../core/types/attestation.js';
import { type Block, blockHash, decodeBlock, encodeBlock } from '../../core/types/block.js';
import { AttestationSsz, MAX_EVIDENCE_BYTES } from '../../core/types/ssz.js';
import { type SlashingEvidence, SlashingError, decodeEvidence, encodeEvidence, evidenceHash } from '../../core/consensus/slashing.js';
import type { Logger } from '../../util/log.js';
import { MAX_BLOCK_BYTES } from '../../core/constants.js';
import { type GossipVerdict, type P2pHost, type PeerView, type ProtocolLimits, SyncProtocols, type Topic, Topics } from '../p2p/types.js';
import { singleAnswer } from '../p2p/reqresp.js';
import type { BeaconChain } from './chain.js';
import type { BeaconMetrics } from './metrics.js';
import { MAX_BLOCKS_PER_REQUEST, RANGE_REQUEST_BYTES, SyncProtocolError, serveBlocksByRange } from './sync/blocks-by-range.js';
import { type FinalityAhead, RangeSync } from './sync/range-sync.js';
import { decodeStatus, encodeStatus, otherChainReason, STATUS_BYTES, type StatusMessage } from './sync/status.js';
import { classifyImportError } from './sync/verdict.js';
import { BID_SIGNATURE_GOSSIP_BYTES, decodeBidSignatureGossip, encodeBidSignatureGossip } from './bridge/gossip.js';
import { type BidSignature, BridgeError } from '../../core/bridge/types.js';
import { parseHex, toHex } from '../../core/codec/bytes.js';

// In core/constants.ts, so the validator client reads it without importing the P2P layer.
export { MAX_BLOCK_BYTES } from '../../core/constants.js';
/** An attestation's SSZ has a fixed size. */
export const MAX_ATTESTATION_BYTES = AttestationSsz.maxSize;
/** Sync requests one peer may make per slot; beyond that they are refused (and the peer penalised by the host). */
export const SYNC_REQUESTS_PER_SLOT = 16;
/** Exchanges (status, blocks_by_range) must finish within this many slots. */
const SYNC_TIMEOUT_SLOTS = 5;
/** A peer that could not help a sync is passed over for this many epochs. */
const SYNC_REST_EPOCHS = 1;

/** Limits of the two sync protocols, from the genesis slot time. */
export function syncLimits(slotMs: number): { status: ProtocolLimits; blocksByRange: ProtocolLimits } {
  const timeoutMs = slotMs * SYNC_TIMEOUT_SLOTS;
  return {
    status: { maxRequestBytes: STATUS_BYTES, maxResponseChunks: 1, maxChunkBytes: STATUS_BYTES, timeoutMs },
    blocksByRange: { maxRequestBytes: RANGE_REQUEST_BYTES, maxResponseChunks: MAX_BLOCKS_PER_REQUEST, maxChunkBytes: MAX_BLOCK_BYTES, timeoutMs },
  };
}

/** Per-peer budget of sync requests in the current slot window. */
class RequestBudget {
  private readonly used = new Map<string, { window: number; count: number }>();

  constructor(private readonly perWindow: number) {}

  /** Takes one request from the peer's budget for `window`; false when it is spent. */
  take(peer: string, window: number): boolean {
    const u = this.used.get(peer);
    if (!u || u.window !== window) {
      // Entries of past windows are dead weight: drop them before the map can grow with peer churn.
      if (this.used.size > 1024) for (const [p, e] of this.used) if (e.window !== window) this.used.delete(p);
      this.used.set(peer, { window, count: 1 });
      return true;
    }
    u.count++;
    return u.count <= this.perWindow;
  }
}

export class BeaconNetwork {
  private readonly sync: RangeSync;
  private readonly budget = new RequestBudget(SYNC_REQUESTS_PER_SLOT);
  /** Slot of the last status request prompted by a peer's message with an unknown ancestor. */
  private readonly askedAt = new Map<string, number>();
  private readonly limits: ReturnType<typeof syncLimits>;
  private timer: NodeJS.Timeout | undefined;
  private readonly genesisHash: string;

  private constructor(
    readonly host: P2pHost,
    private readonly chain: BeaconChain,
    private readonly metrics: BeaconMetrics,
    private readonly log: Logger,
  ) {
    const g = chain.genesis;
    const slotMs = g.config.slot_seconds * 1000;
    this.genesisHash = chain.genesisRoot;
    this.limits = syncLimits(slotMs);
    this.sync = new RangeSync({
      chain: {
        genesis: g,
        head: () => chain.head(),
        record: (r) => chain.record(r),
        finalized: () => chain.forkChoice.finalized(),
        currentSlot: () => chain.currentSlot(),
        onHeadChain: (root) => {
          if (chain.record(root) === undefined) return false;
          try {
            return chain.forkChoice.isDescendant(root, chain.head().root);
          } catch {
            return false; // not in the fork-choice tree: not on the head's chain
          }
        },
        importBlock: (b, ssz) => chain.processBlock(b, ssz),
      },
      host,
      limits: this.limits.blocksByRange,
      metrics,
      log,
      restMs: slotMs * g.config.slots_per_epoch * SYNC_REST_EPOCHS,
    });
  }

  /** Subscribes the beacon's topics, serves its protocols and starts the per-slot status exchange. */
  static attach(o: { host: P2pHost; chain: BeaconChain; metrics: BeaconMetrics; log: Logger }): BeaconNetwork {
    const net = new BeaconNetwork(o.host, o.chain, o.metrics, o.log);
    const { host } = o;
    o.metrics.countPeersWith(() => host.peerCount());
    host.subscribe(Topics.blocks, (data, from) => net.onGossipBlock(data, from), { maxBytes: MAX_BLOCK_BYTES });
    host.subscribe(Topics.attestations, (data, from) => net.onGossipAttestation(data, from), { maxBytes: MAX_ATTESTATION_BYTES });
    host.subscribe(Topics.slashings, (data) => net.onGossipSlashing(data), { maxBytes: MAX_EVIDENCE_BYTES });
    // Evidence this node found, or was handed by its API or a block, goes to the network once.
    o.chain.slashing.onNew = (ev) => net.publishEvidence(ev);
    host.subscribe(Topics.bidSignatures, (data) => net.onGossipBidSignature(data), { maxBytes: BID_SIGNATURE_GOSSIP_BYTES });
    // BID signatures this beacon's validators posted go to the other beacons once.
    o.chain.bridge.onNew = (bid, s) => net.publishBidSignature(bid, s);
    host.handle(SyncProtocols.status, (req, peer) => net.serveStatus(req, peer), net.limits.status);
    host.handle(SyncProtocols.blocksByRange, (req, peer) => net.serveRange(req, peer), net.limits.blocksByRange);
    host.onPeerConnected((peer) => void net.exchangeStatus(peer));
    net.scheduleStatusRounds();
    return net;
  }

  /** True while range sync runs. */
  get syncing(): boolean {
    return this.sync.active;
  }

  /** A peer's finalised checkpoint our head's chain lacks (see RangeSync.finalityAhead): validator duties wait for the sync. */
  finalityAhead(): FinalityAhead | undefined {
    return this.sync.finalityAhead();
  }

  /** Connected peers. */
  peers(): PeerView[] {
    return this.host.peers();
  }

  /** Number of connected peers. */
  peerCount(): number {
    return this.host.peerCount();
  }

  /** Gossips a block the beacon accepted from its validators' API (`ssz`: the bytes it arrived as, sent unchanged). Never throws. */
  publishBlock(block: Block, ssz: Uint8Array = encodeBlock(block)): void {
    this.publish(Topics.blocks, ssz, toHex(blockHash(block.header)));
  }

  /** Gossips an attestation the beacon accepted from its validators' API. Never throws. */
  publishAttestation(att: Attestation): void {
    this.publish(Topics.attestations, encodeAttestation(att), `attestation of validator ${att.validatorIndex} at slot ${att.data.slot}`);
  }

  /** Gossips slashing evidence this node learnt of other than by gossip. Never throws. */
  publishEvidence(ev: SlashingEvidence): void {
    this.publish(Topics.slashings, encodeEvidence(ev), `slashing evidence ${toHex(evidenceHash(ev))}`);
  }

  /** Gossips a BID signature posted to this beacon. Never throws. */
  publishBidSignature(bid: string, s: BidSignature): void {
    this.publish(Topics.bidSignatures, encodeBidSignatureGossip(parseHex(bid, 'bid', 32), s), `BID signature of validator ${s.validatorIndex} over ${bid}`);
  }

  /** Starts a range sync now if a peer is ahead (tests and start-up use it; the status rounds do too). */
  syncNow(): Promise<void> | undefined {
    return this.sync.trigger();
  }

  /** Stops the status rounds and sync, then the host. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sync.stop();
    await this.host.stop();
  }

  private publish(topic: Topic, data: Uint8Array, what: string): void {
    this.host.publish(topic, data).then(
      (peers) => this.log.debug('gossip published', { topic, what, peers }),
      // No peer subscribed yet is normal on a lone node; the message is in our chain regardless.
      (err: Error) => this.log.debug('gossip not published', { topic, what, error: err.message }),
    );
  }

  private verdict(topic: Topic, verdict: GossipVerdict, reason?: string): GossipVerdict {
    this.metrics.gossipMessages.inc({ topic, verdict });
    if (reason) this.metrics.gossipDropped.inc({ topic, verdict, reason });
    return verdict;
  }

  private async onGossipBlock(data: Uint8Array, from: string): Promise<GossipVerdict> {
    let block: Block;
    try {
      block = decodeBlock(data);
    } catch {
      return this.verdict(Topics.blocks, 'reject', 'MALFORMED');
    }
    const root = toHex(blockHash(block.header));
    if (this.chain.record(root) || this.chain.isImporting(root)) return this.verdict(Topics.blocks, 'ignore', 'DUPLICATE');
    // Relayed once the beacon's checks pass (proposer draw, VRF, signature, RANDAO, parent), not
    // after execution's import: a block that takes seconds to import would otherwise reach each
    // further node only after every node before it had imported it, and their proposers would
    // build beside it meanwhile (issue 33). Execution's verdict still decides whether it is kept.
    let checked!: () => void;
    const passed = new Promise<'checked'>((resolve) => (checked = () => resolve('checked')));
    const imported = this.chain.processBlock(block, data, checked);
    try {
      const first = await Promise.race([passed, imported]);
      if (first === 'checked') {
        imported.catch((err: Error) => this.log.warn('gossiped block relayed after the beacon checks, then refused by execution', { block_hash: root, error: err.message }));
        return this.verdict(Topics.blocks, 'accept');
      }
      return first.already_known ? this.verdict(Topics.blocks, 'ignore', 'DUPLICATE') : this.verdict(Topics.blocks, 'accept');
    } catch (err) {
      const f = classifyImportError(err);
      // The sender holds a chain we lack: ask it where its head is, which starts a range sync.
      if (f.kind === 'unknown_parent') this.askStatus(from);
      return this.verdict(Topics.blocks, f.kind === 'invalid' ? 'reject' : 'ignore', f.reason);
    }
  }

  private async onGossipAttestation(data: Uint8Array, from: string): Promise<GossipVerdict> {
    let att: Attestation;
    try {
      att = decodeAttestation(data);
    } catch {
      return this.verdict(Topics.attestations, 'reject', 'MALFORMED');
    }
    try {
      const r = await this.chain.attest(att);
      return r.status === 'applied' ? this.verdict(Topics.attestations, 'accept') : this.verdict(Topics.attestations, 'ignore', r.status.toUpperCase());
    } catch (err) {
      const f = classifyImportError(err);
      // A vote for a block we lack means the sender is ahead of us.
      if (f.kind === 'unknown_block') this.askStatus(from);
      return this.verdict(Topics.attestations, f.kind === 'invalid' ? 'reject' : 'ignore', f.reason);
    }
  }

  // Verified in full (conflict and both signatures) before the verdict, so only real evidence is
  // re-gossiped. Evidence against a validator our registry lacks or has already slashed may be
  // news elsewhere (branches differ): ignored, not penalised; anything forged is rejected.
  private async onGossipSlashing(data: Uint8Array): Promise<GossipVerdict> {
    let ev: SlashingEvidence;
    try {
      ev = decodeEvidence(data);
    } catch {
      return this.verdict(Topics.slashings, 'reject', 'MALFORMED');
    }
    try {
      const r = await this.chain.submitEvidence(ev, 'gossip');
      return r.status === 'added' ? this.verdict(Topics.slashings, 'accept') : this.verdict(Topics.slashings, 'ignore', r.status === 'known' ? 'DUPLICATE' : 'REDUNDANT');
    } catch (err) {
      if (err instanceof SlashingError && (err.slashingCode === 'UNKNOWN_VALIDATOR' || err.slashingCode === 'ALREADY_SLASHED')) return this.verdict(Topics.slashings, 'ignore', err.code);
      if (err instanceof SlashingError) return this.verdict(Topics.slashings, 'reject', err.code);
      return this.verdict(Topics.slashings, 'ignore', err instanceof SvcError ? err.code : 'INTERNAL');
    }
  }

  // Verified before the verdict, so only real signatures of this chain's validators are relayed. A
  // signature whose BID is not registered here yet (its lock block not imported) is held, not
  // relayed: the beacons that registered it have it from the sender already.
  private async onGossipBidSignature(data: Uint8Array): Promise<GossipVerdict> {
    const topic = Topics.bidSignatures;
    let m;
    try {
      m = decodeBidSignatureGossip(data);
    } catch {
      return this.verdict(topic, 'reject', 'MALFORMED');
    }
    try {
      const r = await this.chain.bridge.gossipSignature(m.bid, m.signature);
      return r === 'added' ? this.verdict(topic, 'accept') : this.verdict(topic, 'ignore', r === 'known' ? 'DUPLICATE' : 'UNKNOWN_BID');
    } catch (err) {
      // An unknown signer may be news of a registry we have not caught up with: not the sender's fault.
      if (err instanceof BridgeError && err.code === 'BRIDGE_UNKNOWN_SIGNER') return this.verdict(topic, 'ignore', err.code);
      if (err instanceof BridgeError) return this.verdict(topic, 'reject', err.code);
      return this.verdict(topic, 'ignore', err instanceof SvcError ? err.code : 'INTERNAL');
    }
  }

  private ourStatus(): StatusMessage {
    const head = this.chain.head();
    const fin = this.chain.forkChoice.finalized();
    return { chainId: chainIdBytes(this.chain.genesis.chain_id), genesisHash: this.genesisHash, headRoot: head.root, headSlot: head.slot, finalizedRoot: fin.root, finalizedEpoch: fin.epoch };
  }

  // Budget per slot window: a peer flooding requests gets refused, the others are still served.
  private admit(protocol: string, peer: string): void {
    const window = Math.floor(Date.now() / (this.chain.genesis.config.slot_seconds * 1000));
    if (!this.budget.take(peer, window)) {
      this.metrics.syncRequests.inc({ protocol, result: 'rate_limited' });
      throw new BeaconError('P2P_RATE_LIMITED', `more than ${SYNC_REQUESTS_PER_SLOT} sync requests in one slot`);
    }
  }

  private async *serveStatus(request: Uint8Array, peer: string): AsyncIterable<Uint8Array> {
    this.admit('status', peer);
    let theirs: StatusMessage;
    try {
      theirs = decodeStatus(request);
    } catch (err) {
      this.metrics.syncRequests.inc({ protocol: 'status', result: 'bad_request' });
      throw new SyncProtocolError('BAD_STATUS', (err as Error).message);
    }
    this.metrics.syncRequests.inc({ protocol: 'status', result: 'ok' });
    try {
      yield encodeStatus(this.ourStatus());
    } finally {
      // After our answer, so a peer on another chain learns why it is dropped; in `finally`, so it
      // runs whether the host pulls past the last chunk or closes the iterator there.
      this.onPeerStatus(peer, theirs);
    }
  }

  private async *serveRange(request: Uint8Array, peer: string): AsyncIterable<Uint8Array> {
    this.admit('blocks_by_range', peer);
    let served = 0;
    try {
      for await (const chunk of serveBlocksByRange(this.chain, request)) {
        served++;
        yield chunk;
      }
    } catch (err) {
      if (err instanceof SyncProtocolError) this.metrics.syncRequests.inc({ protocol: 'blocks_by_range', result: 'bad_request' });
      throw err;
    }
    this.metrics.syncRequests.inc({ protocol: 'blocks_by_range', result: 'ok' });
    this.log.debug('blocks_by_range served', { peer, blocks: served });
  }

  // The unknown-parent check comes before any signature is verified, so such messages cost the
  // sender nothing: one status request per peer per slot, however many arrive.
  private askStatus(peer: string): void {
    const slot = this.chain.currentSlot();
    if (this.askedAt.get(peer) === slot) return;
    if (this.askedAt.size > 1024) this.askedAt.clear();
    this.askedAt.set(peer, slot);
    void this.exchangeStatus(peer);
  }

  /** Sends our status to a peer and handles its answer; failures are logged, never thrown. */
  private async exchangeStatus(peer: string): Promise<void> {
    let chunks: Uint8Array[];
    try {
      chunks = await this.host.request(peer, SyncProtocols.status, encodeStatus(this.ourStatus()), this.limits.status);
    } catch (err) {
      this.log.debug('status request failed', { peer, error: (err as Error).message });
      return;
    }
    let theirs: StatusMessage;
    try {
      const answer = singleAnswer(chunks);
      if (answer === null) {
        this.log.debug('status request ended without an answer', { peer });
        return;
      }
      theirs = decodeStatus(answer);
    } catch (err) {
      this.metrics.peersRefused.inc({ reason: 'bad_status' });
      this.host.penalise(peer, 'bad_status');
      this.log.warn('peer answered status with garbage', { peer, error: (err as Error).message });
      return;
    }
    this.onPeerStatus(peer, theirs);
  }

  private onPeerStatus(peer: string, theirs: StatusMessage): void {
    const other = otherChainReason({ chainId: this.chain.genesis.chain_id, genesisHash: this.genesisHash }, theirs);
    if (other) {
      this.metrics.peersRefused.inc({ reason: 'other_chain' });
      this.log.warn('peer is on another chain; disconnected', { peer, reason: other });
      this.sync.forget(peer);
      void this.host.disconnect(peer, 'other_chain').catch(() => undefined);
      return;
    }
    // Same chain: the host may keep the peer in its address book and tell others of it.
    this.host.confirmPeer(peer);
    this.sync.setStatus(peer, theirs);
    this.sync.trigger();
  }

  // Once per slot: every peer's status, so a node that fell behind (downtime, partition) notices.
  private scheduleStatusRounds(): void {
    const slotMs = this.chain.genesis.config.slot_seconds * 1000;
    this.timer = setTimeout(() => {
      const connected = new Set(this.host.peers().map((p) => p.peer_id));
      this.sync.retain(connected);
      for (const p of connected) void this.exchangeStatus(p);
      this.scheduleStatusRounds();
    }, slotMs);
    this.timer.unref();
  }
}
