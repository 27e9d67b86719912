/** The validator client's Prometheus metrics and the small HTTP server that exposes them. */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { ValidatorError } from './errors.js';
import { validatorClientRoutes } from '../../api/routes/validator.js';
import { canonicalBytesGauge, type SignatureKind, sigGeneratedCounter } from '../shared/metrics.js';

/** What `service_validator_bridge_signatures_total` counts by (see its help). */
export type BridgeResult = 'added' | 'known' | 'failed' | 'refused';

/**
 * The validator process's Prometheus metrics, on a private registry (no default process metrics).
 * The names without a `validator` label are process totals over every key (so dashboards and
 * alerts written for one key per process read the same); `service_validator_key_*` are the same
 * figures per key, labelled `validator` = the key's registry index (known once the beacon named it).
 */
export class ValidatorMetrics {
  readonly registry = new Registry();
  readonly blocksProposed = new Counter({ name: 'service_validator_blocks_proposed_total', help: 'Blocks this validator proposed and the beacon accepted', registers: [this.registry] });
  readonly attestations = new Counter({ name: 'service_validator_attestations_total', help: 'Attestations this validator signed and the beacon accepted', registers: [this.registry] });
  readonly slashingRefusals = new Counter({ name: 'service_validator_slashing_refusals_total', help: 'Blocks and attestations slashing protection refused to sign', registers: [this.registry] });
  readonly alreadySigned = new Counter({
    name: 'service_validator_duties_already_signed_total',
    help: 'Duties skipped because the slashing-protection database holds another message this key signed for the same slot (block) or target epoch (attestation), e.g. before a restart',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly wsConnected = new Gauge({ name: 'service_validator_beacon_ws_connected', help: '1 while the beacon event stream (/ws) is connected, 0 while the client falls back to polling', registers: [this.registry] });
  readonly wsReconnects = new Counter({ name: 'service_validator_beacon_ws_reconnects_total', help: 'Times the beacon event stream was re-established after a drop', registers: [this.registry] });
  readonly wsMalformed = new Counter({ name: 'service_validator_beacon_ws_malformed_messages_total', help: 'Messages on the beacon event stream ignored as malformed', registers: [this.registry] });
  readonly wsEvents = new Counter({ name: 'service_validator_beacon_ws_events_total', help: 'Well-formed beacon events received, by type', labelNames: ['type'], registers: [this.registry] });
  // The validator is the process that signs blocks, VRF proofs and votes: the canonical-encoding
  // metrics of what it produces live here (execution and the beacon count what they verify).
  readonly sigGenerated = sigGeneratedCounter(this.registry, ['block', 'vrf', 'attestation', 'transaction', 'bridge_bid', 'bridge_registration']);
  readonly canonicalBytes = canonicalBytesGauge(this.registry);
  readonly randaoRemaining = new Gauge({ name: 'service_validator_randao_reveals_remaining', help: 'Fewest reveals left on any key\'s RANDAO hash chain holding the value the beacon last accepted', registers: [this.registry] });
  readonly bridgeSignatures = new Counter({
    name: 'service_validator_bridge_signatures_total',
    help: 'BID signatures this validator posted, by result (added, known: the beacon had it; failed: not accepted, retried; refused: the BID\'s id or source did not check out, not signed)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly randaoRecommits = new Counter({ name: 'service_validator_randao_recommitments_submitted_total', help: 'RANDAO re-commitment transactions this validator submitted to execution', registers: [this.registry] });

  readonly keys = new Gauge({ name: 'service_validator_keys', help: 'Validator keys this process holds, by state (loaded: unlocked; registered: the beacon named its index)', labelNames: ['state'], registers: [this.registry] });
  readonly keyBlocksProposed = new Counter({ name: 'service_validator_key_blocks_proposed_total', help: 'Blocks proposed and accepted, per key', labelNames: ['validator'], registers: [this.registry] });
  readonly keyAttestations = new Counter({ name: 'service_validator_key_attestations_total', help: 'Attestations signed and accepted, per key', labelNames: ['validator'], registers: [this.registry] });
  readonly keySlashingRefusals = new Counter({ name: 'service_validator_key_slashing_refusals_total', help: 'Messages slashing protection refused to sign, per key', labelNames: ['validator'], registers: [this.registry] });
  readonly keyBridgeSignatures = new Counter({ name: 'service_validator_key_bridge_signatures_total', help: 'BID signatures posted, per key and result (as service_validator_bridge_signatures_total)', labelNames: ['validator', 'result'], registers: [this.registry] });
  readonly keyRandaoRemaining = new Gauge({ name: 'service_validator_key_randao_reveals_remaining', help: 'Reveals left on the key\'s RANDAO hash chain holding the value the beacon last accepted', labelNames: ['validator'], registers: [this.registry] });
  private readonly remainingByKey = new Map<number, number>();

  /** Counts one signature this validator made. */
  signed(kind: SignatureKind): void {
    this.sigGenerated.inc({ kind });
  }

  /** Starts a key's series at 0 once its index is known (a scrape then lists every key). */
  registerKey(index: number): void {
    const validator = String(index);
    this.keyBlocksProposed.inc({ validator }, 0);
    this.keyAttestations.inc({ validator }, 0);
    this.keySlashingRefusals.inc({ validator }, 0);
  }

  /** One block accepted for key `index`. */
  blockProposed(index: number): void {
    this.blocksProposed.inc();
    this.keyBlocksProposed.inc({ validator: String(index) });
  }

  /** One attestation accepted for key `index`. */
  attested(index: number): void {
    this.attestations.inc();
    this.keyAttestations.inc({ validator: String(index) });
  }

  /** One message slashing protection refused for key `index`. */
  slashingRefused(index: number): void {
    this.slashingRefusals.inc();
    this.keySlashingRefusals.inc({ validator: String(index) });
  }

  /** One duty skipped: the key already signed another message of this `kind` for its slot or target. */
  skippedAlreadySigned(kind: 'block' | 'attestation'): void {
    this.alreadySigned.inc({ kind });
  }

  /** One BID signature outcome for key `index`. */
  bridgeSigned(index: number, result: BridgeResult): void {
    this.bridgeSignatures.inc({ result });
    this.keyBridgeSignatures.inc({ validator: String(index), result });
  }

  /** Reveals left for key `index`; the process gauge shows the fewest of any key (the one to watch). */
  randaoLeft(index: number, left: number): void {
    this.remainingByKey.set(index, left);
    this.keyRandaoRemaining.set({ validator: String(index) }, left);
    this.randaoRemaining.set(Math.min(...this.remainingByKey.values()));
  }

  /** Text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Serves the metrics route of `metrics` on host:port (404 envelope for anything else); resolves once listening. */
export async function serveMetrics(metrics: ValidatorMetrics, host: string, port: number): Promise<Server> {
  const r = validatorClientRoutes.metrics;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== r.method || path !== r.path) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: `only ${r.method} ${r.path} is served here` } }));
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
    );
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(new ValidatorError('METRICS_LISTEN_FAILED', `cannot serve metrics on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'the port is in use (choose another with --metrics-port, or 0 to turn metrics off)' : err.message}`)),
    );
    server.listen(port, host, () => ok());
  });
  return server;
}
