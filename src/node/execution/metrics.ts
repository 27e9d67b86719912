/**
 * Prometheus metrics of the execution layer (spec names), on a private registry: prom-client's
 * default process metrics are not registered (their nodejs_active_*_total gauges fail promtool).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Every metric the execution layer exports. */
export class ExecutionMetrics {
  readonly registry = new Registry();
  readonly chainHeight = new Gauge({ name: 'service_execution_chain_height', help: 'Height of the canonical head block', registers: [this.registry] });
  readonly accounts = new Gauge({ name: 'service_execution_accounts_total', help: 'Accounts with a non-zero balance or nonce', registers: [this.registry] });
  readonly txProcessed = new Counter({ name: 'service_execution_transactions_processed_total', help: 'Transactions applied in canonical blocks', registers: [this.registry] });
  readonly mempoolSize = new Gauge({ name: 'service_execution_mempool_size', help: 'Transactions in the pool (ready and queued)', registers: [this.registry] });
  readonly txRejected = new Counter({ name: 'service_execution_transactions_rejected_total', help: 'Transactions refused by the admission pipeline', labelNames: ['reason'], registers: [this.registry] });
  readonly gasFees = new Counter({ name: 'service_execution_gas_fees_collected_wei', help: 'Fees paid to proposers in canonical blocks, in wei', registers: [this.registry] });
  readonly gasUsed = new Counter({ name: 'service_execution_gas_used_total', help: 'Gas used by canonical blocks', registers: [this.registry] });
  readonly peers = new Gauge({ name: 'service_execution_peer_count', help: 'Connected P2P peers (P2P is not built yet: always 0)', registers: [this.registry] });
  readonly blocksRejected = new Counter({ name: 'service_execution_blocks_rejected_total', help: 'Blocks refused by validation', labelNames: ['reason'], registers: [this.registry] });
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
  readonly canonicalBytes = new Gauge({ name: 'quantum_canonical_bytes_len', help: 'Length of the last canonical SignedHeader encoding produced (expected 3409)', registers: [this.registry] });
  readonly sigGenerated = new Counter({ name: 'quantum_canonical_sig_generated_total', help: 'Signatures this process produced (faucet transfers)', registers: [this.registry] });
  readonly cacheHits = new Counter({ name: 'quantum_domain_hash_cache_hits', help: 'Signature checks answered by the verified-transaction cache', registers: [this.registry] });

  /** Records one signature verification. */
  signature(ms: number, ok: boolean): void {
    this.sigVerifyMs.observe(ms);
    (ok ? this.sigVerified : this.sigFail).inc();
  }

  /** Text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
