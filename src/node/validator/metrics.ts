/** The validator client's Prometheus metrics and the small HTTP server that exposes them. */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { SvcError } from '../../core/errors.js';
import { canonicalBytesGauge, type SignatureKind, sigGeneratedCounter } from '../shared/metrics.js';

/** The validator's Prometheus metrics, on a private registry (no default process metrics). */
export class ValidatorMetrics {
  readonly registry = new Registry();
  readonly blocksProposed = new Counter({ name: 'service_validator_blocks_proposed_total', help: 'Blocks this validator proposed and the beacon accepted', registers: [this.registry] });
  readonly attestations = new Counter({ name: 'service_validator_attestations_total', help: 'Attestations this validator signed and the beacon accepted', registers: [this.registry] });
  readonly slashingRefusals = new Counter({ name: 'service_validator_slashing_refusals_total', help: 'Blocks and attestations slashing protection refused to sign', registers: [this.registry] });
  readonly wsConnected = new Gauge({ name: 'service_validator_beacon_ws_connected', help: '1 while the beacon event stream (/ws) is connected, 0 while the client falls back to polling', registers: [this.registry] });
  readonly wsReconnects = new Counter({ name: 'service_validator_beacon_ws_reconnects_total', help: 'Times the beacon event stream was re-established after a drop', registers: [this.registry] });
  readonly wsMalformed = new Counter({ name: 'service_validator_beacon_ws_malformed_messages_total', help: 'Messages on the beacon event stream ignored as malformed', registers: [this.registry] });
  readonly wsEvents = new Counter({ name: 'service_validator_beacon_ws_events_total', help: 'Well-formed beacon events received, by type', labelNames: ['type'], registers: [this.registry] });
  // The validator is the process that signs blocks, VRF proofs and votes: the canonical-encoding
  // metrics of what it produces live here (execution and the beacon count what they verify).
  readonly sigGenerated = sigGeneratedCounter(this.registry, ['block', 'vrf', 'attestation', 'transaction', 'bridge_bid']);
  readonly canonicalBytes = canonicalBytesGauge(this.registry);
  readonly randaoRemaining = new Gauge({ name: 'service_validator_randao_reveals_remaining', help: 'Reveals left on the RANDAO hash chain holding the value the beacon last accepted', registers: [this.registry] });
  readonly bridgeSignatures = new Counter({
    name: 'service_validator_bridge_signatures_total',
    help: 'BID signatures this validator posted, by result (added, known: the beacon had it; failed: not accepted, retried; refused: the BID\'s id or source did not check out, not signed)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly randaoRecommits = new Counter({ name: 'service_validator_randao_recommitments_submitted_total', help: 'RANDAO re-commitment transactions this validator submitted to execution', registers: [this.registry] });

  /** Counts one signature this validator made. */
  signed(kind: SignatureKind): void {
    this.sigGenerated.inc({ kind });
  }

  /** Text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Serves GET /metrics of `metrics` on host:port (404 envelope for anything else); resolves once listening. */
export async function serveMetrics(metrics: ValidatorMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'only GET /metrics is served here' } }));
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
    );
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(new SvcError('METRICS_LISTEN_FAILED', `cannot serve metrics on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'the port is in use (choose another with --metrics-port, or 0 to turn metrics off)' : err.message}`, 500)),
    );
    server.listen(port, host, () => ok());
  });
  return server;
}
