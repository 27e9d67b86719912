/**
 * The execution node: opens the chain, starts the verifier workers, the pool, the faucet, the
 * REST (8546) and JSON-RPC (8545) servers and the P2P host (transaction gossip), and wires
 * canonical-chain changes into the pool and the metrics.
 */
import type { FastifyInstance } from 'fastify';
import { join, resolve } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { backendFromEnv, initSignatureBackend, type MlDsaKeyPair } from '../../core/crypto/mldsa.js';
import { ExecutionError } from './errors.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import type { Transaction } from '../../core/types/transaction.js';
import type { Logger } from '../../util/log.js';
import { PriorityGate } from '../../util/priority-gate.js';
import { Admission, type SubmitOptions, type TxSource } from './txpool/admission.js';
import { maintainPool } from './txpool/maintain.js';
import { type CanonicalChange, type ChainCacheOptions, DEFAULT_CHAIN_CACHE, ExecutionChain } from './chain.js';
import { Faucet } from './faucet.js';
import { POOL_JOURNAL_FILE, PoolJournal } from './txpool/journal.js';
import { BLOCK_BODIES_FILE } from './body-file.js';
import { ExecutionMetrics } from './metrics.js';
import { moduleCacheStats } from '../../vm/index.js';
import { ChainStore, type Db } from '../shared/store.js';
import { CHAIN_DB_DIR, EXECUTION_DB_OPTIONS, STATE_DB_DIR } from './store.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions, TxPool } from './txpool/pool.js';
import { SignatureVerifier } from './verifier.js';
import { type ExecutionP2pOptions, TxGossip } from './p2p.js';
import { CallPool } from './reads/call-pool.js';
import { registerRestRoutes } from './api/rest.js';
import { registerEngineRoutes } from './api/engine.js';
import { registerRpcMethods } from './api/rpc.js';
import { createServer, ENGINE_BODY_LIMIT } from '../shared/http.js';
import { chainBackend, ContractReader } from './api/contracts.js';
import type { ExecutionModules } from './api/modules.js';
import type { P2pHost } from '../p2p/types.js';
import { defaultHistory, type HistoryMode } from './pruning.js';

/** How to run an execution node. */
export interface ExecutionNodeOptions {
  genesis: Genesis;
  /** LevelDB directory; omitted: in memory (tests only). */
  dataDir?: string;
  host: string;
  restPort: number;
  rpcPort: number;
  /** HS256 secret for non-loopback engine callers. */
  engineJwtSecret?: Uint8Array;
  /** Unlocked genesis faucet key; without it the faucet answers 503. */
  faucet?: { key: MlDsaKeyPair; address: string };
  log: Logger;
  verifierThreads?: number;
  poolCapacity?: number;
  /** Queue bounds (txpool/pool.ts PoolOptions); defaults DEFAULT_POOL_OPTIONS. */
  poolQueue?: Partial<Pick<PoolOptions, 'accountQueue' | 'globalQueue'>>;
  /** Transaction submissions per second per client IP (0 = unlimited). */
  submitRatePerIp?: number;
  /** Faucet claims per minute per client IP (0 = unlimited). */
  faucetRatePerIpPerMinute?: number;
  /** Byte bounds of the block-record and state-change caches (default DEFAULT_CHAIN_CACHE). */
  cacheBytes?: Partial<ChainCacheOptions>;
  /** Past states kept (`--history`, pruning.ts); default: defaultHistory of the genesis preset. */
  history?: HistoryMode;
  /** The P2P host (transaction gossip); omitted: the node runs alone (`--no-p2p`). Needs `dataDir` (the peer key lives there). */
  p2p?: ExecutionP2pOptions;
}

export class ExecutionNode {
  /**
   * Engine calls go first: lookups that read storage wait while one is in flight (at most one
   * slot), so public read load cannot delay block import or forkchoiceUpdated.
   */
  readonly enginePriority: PriorityGate;
  /** eth_call and eth_estimateGas run here, off the main thread (reads/call-pool.ts). */
  readonly calls: CallPool;
  /** What the REST, engine and JSON-RPC APIs serve from (api/modules.ts). */
  readonly modules: ExecutionModules;
  private gossip: TxGossip | undefined;

  private constructor(
    readonly chain: ExecutionChain,
    readonly admission: Admission,
    readonly faucet: Faucet,
    readonly metrics: ExecutionMetrics,
    private readonly verifier: SignatureVerifier,
    /** The chain's database, then the state's. */
    private readonly dbs: readonly Db[],
    private readonly journal: PoolJournal,
    readonly rest: FastifyInstance,
    readonly rpc: FastifyInstance,
    private readonly log: Logger,
  ) {
    this.enginePriority = new PriorityGate(chain.genesis.config.slot_seconds * 1000);
    this.calls = new CallPool(chain, BigInt(chain.genesis.config.max_gas_per_block));
    this.modules = {
      chain,
      admission,
      faucet,
      metrics,
      enginePriority: this.enginePriority,
      calls: this.calls,
      logs: chain.logs,
      contracts: new ContractReader(chainBackend(chain), BigInt(chain.genesis.config.max_gas_per_block), this.calls),
      peerCount: () => this.peerCount(),
      onCanonical: (listener) => this.canonicalListeners.push(listener),
    };
  }

  /** Opens storage, replays the pool journal through admission (state itself is on disk), and starts serving. */
  static async start(opts: ExecutionNodeOptions): Promise<ExecutionNode> {
    const log = opts.log;
    const p2p = opts.p2p ? { ...opts.p2p, dataDir: p2pDataDir(opts.dataDir) } : undefined;
    // The operator's choice, so a node can be pinned to either backend (the determinism e2e runs both).
    const backend = await initSignatureBackend(backendFromEnv(), (msg) => log.warn(msg));
    log.info('signature backend', { backend: backend.name });
    const metrics = new ExecutionMetrics();
    // The chain's database and the state's (store.ts): apart, so that the state's writes, one key
    // range per block, are not merged by LevelDB with the chain's keys (docs/execution.md).
    let db: Db;
    let stateDb: Db;
    if (opts.dataDir) {
      await mkdir(opts.dataDir, { recursive: true });
      // multithreading shares one LevelDB handle per directory within this process, so LevelDB's
      // own lock no longer stops a second node here; this does, as the lock does across processes.
      const location = resolve(join(opts.dataDir, CHAIN_DB_DIR));
      if (openDirs.has(location)) throw new ExecutionError('DB_OPEN_FAILED', `cannot open the database in ${opts.dataDir}: IO error: lock ${opts.dataDir}/chain/LOCK: already held by process (is another node using this data directory?)`);
      // The options bound LevelDB's memory-mapped tables and share the handle with the state's reader thread (store.ts).
      db = new ClassicLevel<string, string>(join(opts.dataDir, CHAIN_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
      stateDb = new ClassicLevel<string, string>(join(opts.dataDir, STATE_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
      openDirs.set(location, db);
    } else {
      // memory-level is a development dependency (tests): loaded only when asked for, so a
      // production install (`npm ci --omit=dev`, the container image) can start a node.
      const { MemoryLevel } = await import('memory-level');
      db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
      stateDb = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
    }
    const dbs = [db, stateDb] as const;
    try {
      await db.open();
      await stateDb.open();
    } catch (err) {
      unlockDir(db);
      for (const d of dbs) if (d.status === 'open') await d.close();
      const cause = (err as { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new ExecutionError('DB_OPEN_FAILED', `cannot open the database in ${opts.dataDir}: ${cause} (is another node using this data directory?)`);
    }
    // Until the node exists, a failure (GENESIS_MISMATCH, FAUCET_KEY_MISMATCH, ...) must release the
    // databases and the worker threads, or they keep the process alive after the error.
    const release: Array<() => Promise<unknown>> = [async () => unlockDir(db), () => db.close(), () => stateDb.close()];
    const failed = async (err: unknown): Promise<never> => {
      for (const r of release.reverse()) await r().catch(() => undefined);
      throw err;
    };
    const verifier = await SignatureVerifier.start(opts.genesis.chain_id, {
      threads: opts.verifierThreads,
      observer: { verified: (ms, okv) => metrics.signature(ms, okv), cacheHit: () => metrics.cacheHits.inc() },
    }).catch(failed);
    release.push(() => verifier.close());
    let admission: Admission | undefined;
    let started: ExecutionNode | undefined;
    const chain = await ExecutionChain.open(opts.genesis, new ChainStore(db), new ChainStore(stateDb), verifier, log, {
      canonicalChanged: (change) => {
        if (admission) {
          maintainPool(change, admission, log);
          ExecutionNode.recordCanonicalChange(change, chain, admission, metrics);
        }
        started?.canonicalChanged(change);
      },
      blockRejected: (code, message) => {
        metrics.blocksRejected.inc({ reason: code });
        log.warn('block rejected', { code, error: message });
      },
      signatureChecked: (kind, ms, okv, bytes) => {
        if (kind === 'vrf') {
          metrics.vrf(ms, okv);
        } else {
          metrics.signature(ms, okv);
          if (bytes !== undefined) metrics.canonicalBytes.set(bytes);
        }
      },
    }, { ...DEFAULT_CHAIN_CACHE, ...opts.cacheBytes }, opts.dataDir ? join(opts.dataDir, BLOCK_BODIES_FILE) : undefined, opts.history ?? defaultHistory(opts.genesis.preset)).catch(failed);
    // Before the database: the state reader thread holds a handle on it.
    release.push(() => chain.close());
    chain.bridge.onOperation = (op, okv) => metrics.bridgeOperations.inc({ op, result: okv ? 'ok' : 'failed' });
    const pool = new TxPool({ ...DEFAULT_POOL_OPTIONS, ...opts.poolQueue, capacity: opts.poolCapacity ?? DEFAULT_POOL_OPTIONS.capacity });
    const journal = await PoolJournal.open({
      ...(opts.dataDir ? { path: join(opts.dataDir, POOL_JOURNAL_FILE) } : {}),
      store: chain.store,
      log,
      synced: (writes) => {
        metrics.journalSyncs.inc();
        metrics.journalWrites.inc(writes);
      },
    }).catch(failed);
    release.push(() => journal.close());
    admission = new Admission(chain, pool, verifier, metrics, log, journal);
    // Before serving, so a client sees the acknowledged transactions back and the faucet its claims.
    await admission.replay().catch(failed);
    let faucet: Faucet;
    try {
      faucet = new Faucet(chain, admission, opts.faucet?.key, opts.faucet?.address, () => metrics.sigGenerated.inc({ kind: 'transaction' }));
    } catch (err) {
      return failed(err);
    }
    const rest = createServer(log, ENGINE_BODY_LIMIT);
    const rpc = createServer(log);
    const node = new ExecutionNode(chain, admission, faucet, metrics, verifier, dbs, journal, rest, rpc, log);
    started = node;
    const submitRatePerIp = opts.submitRatePerIp ?? 200;
    registerRestRoutes(rest, node.modules, { submitRatePerIp, faucetRatePerIpPerMinute: opts.faucetRatePerIpPerMinute ?? 10 });
    registerEngineRoutes(rest, node.modules, opts.engineJwtSecret);
    registerRpcMethods(rpc, node.modules, submitRatePerIp, log);
    metrics.watchCaches(() => ({ ...chain.blocks.cacheStats(), state_nodes: chain.state.nodes.stats(), verified_signers: verifier.cacheStats(), signature_keys: verifier.keyCacheStats(), contract_modules: moduleCacheStats() }), () => verifier.keyCacheStats());
    node.refreshGauges();
    try {
      await rest.listen({ host: opts.host, port: opts.restPort });
      await rpc.listen({ host: opts.host, port: opts.rpcPort });
    } catch (err) {
      await node.stop();
      throw new ExecutionError('LISTEN_FAILED', `cannot listen on ${opts.host}: ${(err as Error).message}`);
    }
    if (p2p) {
      try {
        node.gossip = await TxGossip.start(
          { ...p2p, genesisHash: chain.genesisHash, metrics: metrics.registry, slotMs: opts.genesis.config.slot_seconds * 1000 },
          { admission, metrics, enginePriority: node.enginePriority, log, slotMs: opts.genesis.config.slot_seconds * 1000 },
        );
      } catch (err) {
        await node.stop();
        throw err;
      }
    }
    metrics.countPeersWith(() => node.peerCount());
    log.info('execution node started', {
      chain_id: opts.genesis.chain_id,
      head: chain.head().index,
      rest: node.restUrl,
      rpc: node.rpcUrl,
      faucet: faucet.enabled,
      peers: node.peerCount(),
      ...(node.gossip ? { peer_id: node.gossip.host.peerId, p2p: node.gossip.host.multiaddrs() } : { p2p: 'disabled' }),
    });
    return node;
  }

  /** The chain and pool metrics a canonical change moves (the pool itself: txpool/maintain.ts). */
  private static recordCanonicalChange(change: CanonicalChange, chain: ExecutionChain, admission: Admission, metrics: ExecutionMetrics): void {
    for (const { record: r, txHashes, slashed } of change.applied) {
      metrics.txProcessed.inc(txHashes.length);
      metrics.gasUsed.inc(r.gas_used);
      metrics.gasFees.inc(Number(BigInt(r.fees)));
      metrics.validatorsSlashed.inc(slashed);
    }
    metrics.chainHeight.set(chain.head().index);
    metrics.accounts.set(chain.accountCount());
    metrics.mempoolSize.set(admission.pool.size);
  }

  /** After each committed canonical change, after the pool has followed it: the RPC's filters and subscriptions (modules.onCanonical). */
  private readonly canonicalListeners: Array<(change: CanonicalChange) => void> = [];

  private canonicalChanged(change: CanonicalChange): void {
    for (const l of this.canonicalListeners) {
      // The change is committed: a listener's failure is logged, never turned into an import error.
      try {
        l(change);
      } catch (err) {
        this.log.warn('canonical-change listener failed', { error: (err as Error).message });
      }
    }
  }

  /** Sets gauges that do not change with events (start-up). */
  refreshGauges(): void {
    this.metrics.chainHeight.set(this.chain.head().index);
    this.metrics.accounts.set(this.chain.accountCount());
    this.metrics.mempoolSize.set(this.admission.pool.size);
  }

  /** The P2P host, when the node runs one. */
  get p2p(): P2pHost | undefined {
    return this.gossip?.host;
  }

  /** Connected P2P peers (0 without P2P). */
  peerCount(): number {
    return this.gossip?.peerCount() ?? 0;
  }

  /** Base URL of the REST server. */
  get restUrl(): string {
    return urlOf(this.rest);
  }

  /** Base URL of the JSON-RPC server. */
  get rpcUrl(): string {
    return urlOf(this.rpc);
  }

  /** Runs the admission pipeline. */
  submit(tx: Transaction, source: TxSource, opts?: SubmitOptions) {
    return this.admission.submit(tx, source, opts);
  }

  /** Stops serving and closes storage; safe to call twice. */
  async stop(): Promise<void> {
    // The host first: no gossiped transaction starts admission while storage closes.
    await this.gossip?.stop().catch((err: Error) => this.log.warn('p2p stop failed', { error: err.message }));
    await Promise.allSettled([this.rest.close(), this.rpc.close()]);
    await this.calls.close();
    await this.verifier.close();
    await this.journal.close();
    await this.chain.close();
    for (const db of this.dbs) if (db.status === 'open') await db.close();
    unlockDir(this.dbs[0]!);
    this.log.info('execution node stopped');
  }
}

/** Execution databases open in this process, by resolved location (see start()). */
const openDirs = new Map<string, Db>();

function unlockDir(db: Db): void {
  for (const [location, open] of openDirs) if (open === db) openDirs.delete(location);
}

/** The data directory P2P keeps its peer key in: an in-memory node has none to keep its identity. */
function p2pDataDir(dir: string | undefined): string {
  if (!dir) throw new ExecutionError('P2P_NEEDS_DATA_DIR', 'P2P needs a data directory: the peer key is kept there');
  return dir;
}

function urlOf(app: FastifyInstance): string {
  const a = app.server.address() as AddressInfo | null;
  if (!a) return '';
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}`;
}
