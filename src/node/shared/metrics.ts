/**
 * The metrics every node layer shares: a private prom-client registry (prom-client's default
 * process metrics are not registered: their nodejs_active_*_total gauges fail promtool) and the
 * spec's canonical-encoding metrics for signature and VRF verification.
 * `quantum_canonical_bytes_len` has no sample until a layer sets it from an encoding it made.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What a process signs, the `kind` label of `quantum_canonical_sig_generated_total`. */
export type SignatureKind = 'block' | 'vrf' | 'attestation' | 'transaction' | 'bridge_bid' | 'bridge_registration';

/**
 * `quantum_canonical_bytes_len` on `registry`, without a sample until set. prom-client starts an
 * unlabelled gauge at 0, which would read as a wrong encoding length (and fire
 * CanonicalBytesLengthIncorrect) before any header was encoded.
 */
export function canonicalBytesGauge(registry: Registry): Gauge {
  const g = new Gauge({ name: 'quantum_canonical_bytes_len', help: 'Length of the last canonical SignedHeader encoding produced or checked (expected 3409)', registers: [registry] });
  g.remove();
  return g;
}

/**
 * `name{result="hit|miss"}`: lookups in a cache of expanded public keys (svc-wasm), brought up to
 * date at each scrape from `source`'s cumulative counts (undefined: no such cache); a count that
 * went down started again (a new backend), as Prometheus treats a counter reset. Both series
 * start at 0.
 */
export function keyCacheLookupsCounter(registry: Registry, name: string, help: string, source: () => { hits: number; misses: number } | undefined): Counter<'result'> {
  const counted = { hit: 0, miss: 0 };
  const c = new Counter({
    name,
    help,
    labelNames: ['result'],
    registers: [registry],
    collect() {
      const s = source();
      if (!s) return;
      for (const [result, now] of [['hit', s.hits], ['miss', s.misses]] as const) {
        const delta = now >= counted[result] ? now - counted[result] : now;
        if (delta > 0) this.inc({ result }, delta);
        counted[result] = now;
      }
    },
  });
  for (const result of ['hit', 'miss']) c.inc({ result }, 0);
  return c;
}

/**
 * `quantum_canonical_sig_generated_total{kind}` on `registry`, with each of `kinds` at 0 from the
 * start, so rate() and alerts see a series before the first signature rather than none.
 */
export function sigGeneratedCounter(registry: Registry, kinds: readonly SignatureKind[]): Counter<'kind'> {
  const c = new Counter({ name: 'quantum_canonical_sig_generated_total', help: 'ML-DSA-65 signatures this process produced, by what it signed (block, vrf, attestation, transaction, bridge_bid)', labelNames: ['kind'], registers: [registry] });
  for (const kind of kinds) c.inc({ kind }, 0);
  return c;
}

/** Base of each layer's metrics. */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly sigVerifyMs = new Histogram({
    name: 'quantum_canonical_sig_verify_ms',
    help: 'Dilithium (ML-DSA-65) signature verification latency in milliseconds',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 200],
    registers: [this.registry],
  });
  readonly sigVerified = new Counter({ name: 'quantum_canonical_sig_verified_total', help: 'Signatures that verified', registers: [this.registry] });
  readonly sigFail = new Counter({ name: 'quantum_canonical_sig_fail_total', help: 'Signatures that failed verification', registers: [this.registry] });
  readonly vrfVerifyMs = new Histogram({
    name: 'quantum_canonical_vrf_verify_ms',
    help: 'VRF proof verification latency in milliseconds',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 150],
    registers: [this.registry],
  });
  readonly vrfFail = new Counter({ name: 'quantum_canonical_vrf_fail_total', help: 'VRF proofs that failed verification', registers: [this.registry] });
  /** Where the layer's peer-count gauge reads from at scrape time (its P2P host; 0 without one). */
  private peerSource: () => number = () => 0;
  readonly canonicalBytes = canonicalBytesGauge(this.registry);

  /** Where the peer-count gauge is read from (the P2P host). */
  countPeersWith(source: () => number): void {
    this.peerSource = source;
  }

  /** A gauge of connected P2P peers, read from the host when scraped rather than kept in step. */
  protected peerGauge(name: string, help: string): Gauge {
    const source = () => this.peerSource();
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(source());
      },
    });
  }

  /** Records one signature verification. */
  signature(ms: number, ok: boolean): void {
    this.sigVerifyMs.observe(ms);
    (ok ? this.sigVerified : this.sigFail).inc();
  }

  /** Records one VRF proof verification. */
  vrf(ms: number, ok: boolean): void {
    this.vrfVerifyMs.observe(ms);
    if (!ok) this.vrfFail.inc();
  }

  /** Text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type header of `text()`. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
