/**
 * Prometheus metrics of the beacon node (spec "Metrics"), served on the beacon port's `/metrics`,
 * on a private registry: prom-client's default process metrics are not registered (their
 * nodejs_active_*_total gauges fail promtool).
 *
 * Spec alerts these feed: LowValidatorParticipation (`service_beacon_active_validators` < 3),
 * BlockProductionStalled (rate of `service_beacon_blocks_proposed_total` over 5m == 0),
 * HighVRFFailureRate (rate of `quantum_canonical_vrf_fail_total` over 5m > 0.1) and
 * CanonicalBytesLengthIncorrect (`quantum_canonical_bytes_len` != 3409). The gauge has no sample
 * until an encoding exists (NodeMetrics), so the alert cannot fire on a placeholder 0: the chain
 * sets it at start-up from the head's stored SignedHeader, and on every proposal it checks. At
 * genesis (unsigned, nothing to encode) the series is absent until the first proposal.
 *
 * Beyond the spec: `service_beacon_ws_clients`, `service_beacon_ws_events_published_total{type}`,
 * `service_beacon_ws_clients_dropped_total{reason}` (slow, unresponsive, inbound),
 * `service_beacon_proposals_rejected_total{reason}`,
 * `service_beacon_forkchoice_updates_failed_total{reason}`,
 * `service_beacon_attestation_journal_entries`, `service_beacon_randao_recommitments_total`, and for P2P (the host's own `service_p2p_*`
 * series sit beside these) `service_beacon_gossip_messages_total{topic,verdict}`,
 * `service_beacon_gossip_dropped_total{topic,verdict,reason}`,
 * `service_beacon_sync_requests_served_total{protocol,result}`,
 * `service_beacon_sync_blocks_imported_total`, `service_beacon_sync_failures_total{reason}` and
 * `service_beacon_peers_refused_total{reason}`; for the bridge (docs/bridge.md)
 * `service_beacon_bridge_bids{status,direction}` and
 * `service_beacon_bridge_relay_latency_seconds` (outgoing BIDs, FINALIZED → COMPLETED); and
 * `service_beacon_signature_key_cache_lookups_total{result}` (svc-wasm's cache of expanded keys).
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { signatureBackend } from '../../core/crypto/mldsa.js';
import { keyCacheLookupsCounter, NodeMetrics } from '../shared/metrics.js';

/** Every metric the beacon node exports. */
export class BeaconMetrics extends NodeMetrics {
  readonly currentSlot = new Gauge({ name: 'service_beacon_current_slot', help: 'Current slot by the wall clock', registers: [this.registry] });
  readonly currentEpoch = new Gauge({ name: 'service_beacon_current_epoch', help: 'Current epoch by the wall clock', registers: [this.registry] });
  readonly finalizedEpoch = new Gauge({ name: 'service_beacon_finalized_epoch', help: 'Epoch of the latest finalised checkpoint', registers: [this.registry] });
  readonly activeValidators = new Gauge({ name: 'service_beacon_active_validators', help: 'Active, staked validators', registers: [this.registry] });
  readonly totalValidators = new Gauge({ name: 'service_beacon_total_validators', help: 'Validators in the registry', registers: [this.registry] });
  readonly blocksProposed = new Counter({ name: 'service_beacon_blocks_proposed_total', help: 'Block proposals accepted by the beacon', registers: [this.registry] });
  readonly randaoRecommits = new Counter({ name: 'service_beacon_randao_recommitments_total', help: 'RANDAO re-commitments applied by accepted blocks (any branch)', registers: [this.registry] });
  readonly blocksFinalized = new Counter({ name: 'service_beacon_blocks_finalized_total', help: 'Blocks that became final (each finality advance adds the blocks it finalised, not 1 per checkpoint)', registers: [this.registry] });
  readonly lightUpdateBytes = new Gauge({ name: 'service_beacon_light_update_bytes', help: 'SSZ bytes of the latest light-client finality update (header plus one signed attestation per signer)', registers: [this.registry] });
  readonly attestationsReceived = new Counter({ name: 'service_beacon_attestations_received_total', help: 'Attestations accepted by the beacon', registers: [this.registry] });
  readonly attestationPool = new Gauge({ name: 'service_beacon_attestation_pool_size', help: 'Attestations waiting for inclusion', registers: [this.registry] });
  readonly attestationJournal = new Gauge({
    name: 'service_beacon_attestation_journal_entries',
    help: 'Acknowledged attestations stored since the last fork-choice snapshot (retired with the next one, once per slot)',
    registers: [this.registry],
  });
  // Read from the P2P host at scrape time, so the figure is never stale.
  readonly peers = this.peerGauge('service_beacon_peer_count', "Connected P2P peers of the beacon's host (0 with --no-p2p)");
  readonly gossipMessages = new Counter({
    name: 'service_beacon_gossip_messages_total',
    help: 'Gossiped blocks and attestations validated by the beacon, by topic and verdict (accept, ignore, reject)',
    labelNames: ['topic', 'verdict'],
    registers: [this.registry],
  });
  readonly gossipDropped = new Counter({
    name: 'service_beacon_gossip_dropped_total',
    help: 'Gossiped messages not accepted, by topic, verdict and reason (the rule or MALFORMED, DUPLICATE, UNKNOWN_PARENT …)',
    labelNames: ['topic', 'verdict', 'reason'],
    registers: [this.registry],
  });
  readonly syncRequests = new Counter({
    name: 'service_beacon_sync_requests_served_total',
    help: 'Sync requests from peers (status, blocks_by_range), by result (ok, bad_request, rate_limited)',
    labelNames: ['protocol', 'result'],
    registers: [this.registry],
  });
  readonly syncBlocks = new Counter({ name: 'service_beacon_sync_blocks_imported_total', help: 'Blocks imported by range sync', registers: [this.registry] });
  readonly syncFailures = new Counter({
    name: 'service_beacon_sync_failures_total',
    help: 'Range-sync batches that failed, by reason (request_failed, malformed_block, out_of_range, other_branch (a branch forking below our finalised checkpoint: the peer is left out for a while, not penalised), or the rule a block broke)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly peersRefused = new Counter({
    name: 'service_beacon_peers_refused_total',
    help: 'Peers disconnected by the beacon, by reason (other_chain, bad_status)',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly slashingsDetected = new Counter({ name: 'service_beacon_slashings_detected_total', help: 'Slashing evidence this beacon learnt of (detected, submitted, gossiped or included), by kind', labelNames: ['kind'], registers: [this.registry] });
  readonly slashedValidators = new Gauge({ name: 'service_beacon_slashed_validators', help: 'Validators slashed in the registry of the head', registers: [this.registry] });
  readonly proposalsRejected = new Counter({ name: 'service_beacon_proposals_rejected_total', help: 'Block proposals refused by the beacon', labelNames: ['reason'], registers: [this.registry] });
  readonly forkchoiceUpdatesFailed = new Counter({
    name: 'service_beacon_forkchoice_updates_failed_total',
    help: 'Head/finality updates not delivered to execution (its error code, or INCONSISTENT_FORK_CHOICE when not sent); retried',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly bridgeBids = new Gauge({ name: 'service_beacon_bridge_bids', help: 'BIDs this beacon holds, by status and direction (outgoing: locked here; incoming: released here)', labelNames: ['status', 'direction'], registers: [this.registry] });
  readonly bridgeRelayLatency = new Histogram({
    name: 'service_beacon_bridge_relay_latency_seconds',
    help: 'Outgoing BIDs: time from FINALIZED (relayable) to COMPLETED (the completion imported here)',
    buckets: [5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  readonly keyCacheLookups = keyCacheLookupsCounter(
    this.registry,
    'service_beacon_signature_key_cache_lookups_total',
    "Signature checks on the beacon's thread (blocks, VRF proofs, attestations) by whether the signer's expanded public key was cached (hit) or had to be expanded (miss)",
    () => signatureBackend().keyCacheStats?.(),
  );
  readonly wsClients = new Gauge({ name: 'service_beacon_ws_clients', help: 'Open /ws event-stream connections', registers: [this.registry] });
  readonly wsEvents = new Counter({ name: 'service_beacon_ws_events_published_total', help: 'Events published on the /ws stream', labelNames: ['type'], registers: [this.registry] });
  readonly wsDropped = new Counter({
    name: 'service_beacon_ws_clients_dropped_total',
    help: 'Event-stream clients terminated by the beacon (slow: backlog over the cap; unresponsive: no pong; inbound: sent data)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
}
