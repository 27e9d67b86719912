/**
 * Prometheus metrics of the execution layer (spec names), on a private registry: prom-client's
 * default process metrics are not registered (their nodejs_active_*_total gauges fail promtool).
 */
import { Counter, Gauge } from 'prom-client';
import { RECOMMIT_ERROR_CODE } from '../../core/consensus/recommit.js';
import { TX_ERRORS } from '../../core/errors.js';
import type { CacheStats } from '../../util/byte-cache.js';
import type { KeyCacheStats } from '../../core/crypto/mldsa-wasm.js';
import { keyCacheLookupsCounter, NodeMetrics, sigGeneratedCounter } from '../shared/metrics.js';
import { POOL_ERROR_CODES } from './txpool/pool.js';
import { CONTRACT_ERROR_CODES } from '../../vm/index.js';
import { BRIDGE_ERROR_CODES } from '../../core/bridge/types.js';
import { BRIDGE_OP_NAMES } from './bridge.js';

/** Where the cache gauges read their figures at scrape time. */
export type CacheSource = () => Record<string, CacheStats>;

/** The `reason` of a submission whose request or envelope did not parse (HTTP 400 before admission). */
export const MALFORMED_SUBMISSION = 'MALFORMED';

/**
 * Every reason a submission is known to be refused with: the spec's transaction errors, the
 * pool's refusals, a contract module the VM would refuse, a malformed RANDAO re-commitment, a rate limit, a journal that cannot be
 * written, and a request that does not parse. Each has a series at 0 from the start, so a
 * rate() or an alert on a reason reads 0 rather than an absent series until its first rejection.
 */
export const TX_REJECTION_REASONS: readonly string[] = [
  ...Object.values(TX_ERRORS).map((e) => e.code),
  ...POOL_ERROR_CODES,
  ...CONTRACT_ERROR_CODES,
  RECOMMIT_ERROR_CODE,
  ...BRIDGE_ERROR_CODES,
  'RATE_LIMITED',
  'POOL_JOURNAL_FAILED',
  MALFORMED_SUBMISSION,
];

/** Every metric the execution layer exports. */
export class ExecutionMetrics extends NodeMetrics {
  readonly chainHeight = new Gauge({ name: 'service_execution_chain_height', help: 'Height of the canonical head block', registers: [this.registry] });
  readonly accounts = new Gauge({ name: 'service_execution_accounts_total', help: 'Accounts with a non-zero balance or nonce', registers: [this.registry] });
  readonly txProcessed = new Counter({ name: 'service_execution_transactions_processed_total', help: 'Transactions applied in canonical blocks', registers: [this.registry] });
  readonly mempoolSize = new Gauge({ name: 'service_execution_mempool_size', help: 'Transactions in the pool (ready and queued)', registers: [this.registry] });
  readonly journalSyncs = new Counter({ name: 'service_execution_pool_journal_syncs_total', help: 'Synced pool journal batches (group commit: one per batch, not per transaction)', registers: [this.registry] });
  readonly journalWrites = new Counter({ name: 'service_execution_pool_journal_writes_total', help: 'Pool journal writes (an admission with what it displaced, or a removal) carried by the synced batches', registers: [this.registry] });
  readonly journalDropped = new Counter({ name: 'service_execution_pool_journal_dropped_total', help: 'Journaled transactions dropped on start-up replay because they were no longer valid', labelNames: ['reason'], registers: [this.registry] });
  readonly txRejected = new Counter({
    name: 'service_execution_transactions_rejected_total',
    help: 'Transaction submissions refused (REST, JSON-RPC, faucet, gossip), by reason: the error code, or MALFORMED for a request or envelope that does not parse',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly gasFees = new Counter({ name: 'service_execution_gas_fees_collected_wei', help: 'Fees paid to proposers in canonical blocks, in wei', registers: [this.registry] });
  readonly gasUsed = new Counter({ name: 'service_execution_gas_used_total', help: 'Gas used by canonical blocks', registers: [this.registry] });
  readonly peers = this.peerGauge('service_execution_peer_count', 'Connected P2P peers of the execution host (0 when run with --no-p2p)');
  readonly gossipTxs = new Counter({
    name: 'service_execution_gossip_transactions_total',
    help: 'Transactions received on /service/txs/v1, by verdict (accept, ignore, reject) and reason (ADMITTED or the refusal code)',
    labelNames: ['verdict', 'reason'],
    registers: [this.registry],
  });
  readonly gossipPublished = new Counter({
    name: 'service_execution_gossip_published_total',
    help: 'Publications of locally admitted transactions on /service/txs/v1, by result: sent, no_peers (kept for a retry), refused (the host had seen it), dropped (left the retry queue unsent), peer_has (left the retry queue: a peer sent it back, having fetched it through the pool exchange)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly poolExchangeHashes = new Counter({
    name: 'service_execution_pool_exchange_hashes_total',
    help: 'Transaction hashes peers announced through the pool exchange (/service/pool/hashes/1), by result: wanted (to fetch), known (pooled, wanted already or refused lately), dropped (the wanted set was full)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly poolExchangeTxs = new Counter({
    name: 'service_execution_pool_exchange_transactions_total',
    help: 'Transactions fetched through the pool exchange (/service/pool/txs/1), by verdict (accept, ignore, reject) and reason (ADMITTED, the refusal code, UNREQUESTED for one not asked for, NOT_SERVED for one asked for and not sent)',
    labelNames: ['verdict', 'reason'],
    registers: [this.registry],
  });
  readonly poolExchangeServed = new Counter({
    name: 'service_execution_pool_exchange_served_bytes_total',
    help: 'Bytes of pool-exchange answers this node served, by protocol',
    labelNames: ['protocol'],
    registers: [this.registry],
  });
  readonly validatorsSlashed = new Counter({ name: 'service_execution_validators_slashed_total', help: 'Validators slashed by evidence in blocks that joined the canonical chain (a reorg that re-applies a slashing counts it again)', registers: [this.registry] });
  readonly bridgeOperations = new Counter({
    name: 'service_execution_bridge_operations_total',
    help: 'Bridge operations (transactions to the bridge address) executed in imported blocks, by op (register, lock, release, refund, complete, malformed) and result (ok: applied, failed: a status-0 receipt)',
    labelNames: ['op', 'result'],
    registers: [this.registry],
  });
  readonly blocksRejected = new Counter({ name: 'service_execution_blocks_rejected_total', help: 'Blocks refused by validation', labelNames: ['reason'], registers: [this.registry] });
  // Execution signs only the faucet's transfers.
  readonly sigGenerated = sigGeneratedCounter(this.registry, ['transaction']);
  readonly cacheHits = new Counter({ name: 'quantum_domain_hash_cache_hits', help: 'Signature checks answered by the verified-transaction cache', registers: [this.registry] });
  private cacheSource: CacheSource = () => ({});
  private keySource: () => KeyCacheStats | undefined = () => undefined;
  readonly keyCacheLookups = keyCacheLookupsCounter(
    this.registry,
    'service_execution_signature_key_cache_lookups_total',
    "Signature checks on the verifier threads by whether the signer's expanded public key was cached (hit) or had to be expanded (miss)",
    () => this.keySource(),
  );
  readonly cacheBytes = this.cacheGauge('service_execution_cache_bytes', 'Estimated resident bytes of each in-memory cache', (s) => s.bytes);
  readonly cacheMaxBytes = this.cacheGauge('service_execution_cache_max_bytes', 'Byte bound of each in-memory cache', (s) => s.maxBytes);
  readonly cacheEntries = this.cacheGauge('service_execution_cache_entries', 'Entries in each in-memory cache', (s) => s.entries);

  constructor() {
    super();
    for (const reason of TX_REJECTION_REASONS) this.txRejected.inc({ reason }, 0);
    for (const op of BRIDGE_OP_NAMES) for (const result of ['ok', 'failed']) this.bridgeOperations.inc({ op, result }, 0);
  }

  /** Reads cache sizes from `source` at each scrape (caches change on every lookup; no event to count). */
  watchCaches(source: CacheSource, keys?: () => KeyCacheStats): void {
    this.cacheSource = source;
    if (keys) this.keySource = keys;
  }

  private cacheGauge(name: string, help: string, pick: (s: CacheStats) => number): Gauge<'cache'> {
    const source = () => this.cacheSource();
    return new Gauge({
      name,
      help,
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        for (const [cache, stats] of Object.entries(source())) this.set({ cache }, pick(stats));
      },
    });
  }
}
