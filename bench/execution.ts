/**
 * Execution-layer throughput, each figure next to its limit:
 *  1. raw ML-DSA-65 verifications per second on all cores (one liboqs worker thread per core): the ceiling;
 *     then a verifier thread's whole job per transfer on all cores (the floor of the rows' verifier
 *     CPU per transaction) and the raw verify beside a busy main thread (what sharing costs);
 *  2. admission of signed transfers through REST (the client a separate process) and through
 *     in-process `node.submit`, as a share of (1);
 *  3. import of a full 30M-gas block of transfers, through the engine API and in process, cold
 *     (every signature verified during import) and warm (the transactions were admitted first,
 *     so the verified-transaction cache answers), as a multiple of (1); every row first imports
 *     LEAD_BLOCKS untimed blocks on its node the way it imports its timed ones, then imports
 *     TIMED_BLOCKS consecutive blocks (a warm row's transactions admitted first) and counts the
 *     median block, printing every block's time beside it;
 *  4. transaction pool memory at 10,000 and 50,000 pending, and the event-loop cost of the
 *     pool's whole-pool operations on the full pool.
 * Every node is a fresh in-process ExecutionNode with no submission rate limit. REST admission and
 * every block import run on LevelDB in a temp directory, as a deployed node does (each import's
 * body is appended to the temp directory's body file and synced, then its batch, before
 * newPayload answers); in-process admission runs on the memory DB. One
 * extra warm import row runs on the memory DB (memory-level, a store nobody ships) for comparison
 * with runs before the import rows moved to disk. The engine REST client of the import rows is a
 * child process (import-client.ts), as a beacon node is (an SSZ block asks for the compact SSZ
 * answer, reads every receipt's status and kind and parses the bridge's receipts, as the beacon
 * does), and each import starts after a minor
 * collection (the pre-admission's young objects are admission's to promote). Each phase
 * also reports CPU per transaction by thread role and what other processes used meanwhile. With
 * `profileDir`, the main thread is CPU-profiled during admission and the block imports.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseHex, toHex } from '../src/core/codec/bytes.js';
import { genesisStateRoot } from '../src/core/state/genesis-root.js';
import { initSignatureBackend, loadLiboqsBackend, signatureBackend } from '../src/core/crypto/mldsa.js';
import { genesisMix } from '../src/core/consensus/randao.js';
import { randaoReveal } from '../src/core/crypto/randao.js';
import { vrfSeed } from '../src/core/crypto/vrf.js';
import { type Genesis, genesisHash } from '../src/core/genesis/genesis.js';
import { type Block, blockHash, blockToJson, buildSignedBlock, decodeBlockWithEnvelopes, encodeBlock } from '../src/core/types/block.js';
import { decodeTxViews, encodeEnvelopeList, encodeTx, signStandardTx, type StandardTx } from '../src/core/types/transaction.js';
import { buildGenesis } from '../src/genesis/build.js';
import { ExecutionNode } from '../src/node/execution/node.js';
import { BUILD_SLICE_MS, DEFAULT_POOL_OPTIONS, TxPool } from '../src/node/execution/txpool/pool.js';
import { silentLogger } from '../src/util/log.js';
import { Branch, DEV_MNEMONIC, walletPath, type WalletKeys } from '../src/wallet/derivation.js';
import { type BenchResult, EVENT_LOOP_BLOCK_GOAL_MS, eventLoopBlockNote, formatTable } from './harness.js';
import { journalRows, type JournalFigures } from './journal.js';
import type { ImportClientInit, ImportReply, ImportRequest } from './import-client.js';
import type { LoadBodyKind, LoadMessage } from './load-client.js';
import { profiled, summarizeProfile } from './profile.js';
import { pump, type PumpResult } from './pump.js';
import { type CpuSplit, formatCpu, startCpu, sumCpu, threadIds, quietLoop, watchLoop } from './threads.js';
import { type Signed, verifyOnAllCores, type VerifyWorkerReport } from './verify-cores.js';

const CHAIN_ID = 'svc-bench';
/** Fixed, so runs are reproducible; import does not compare block times with the wall clock. */
const GENESIS_TIME = 1_767_225_600;
/** Prefunded senders × consecutive nonces = transfers signed for the admission rows. */
const SENDERS = 64;
const NONCES = 160;
/**
 * Leading nonce rounds submitted untimed on each node, so its HTTP path, V8 and WebAssembly are
 * warm: 40 rounds (2,560 transfers, 20 batches of the batch row). With 6 (3 batches) V8 was still
 * optimising the admission path in the timed second: `--trace-opt` counted 98 optimising compiles
 * in it (749 ms of background compile on a 2-core machine whose cores the verifier threads keep
 * busy), among them `admitBatch`, `verifyMany`, `insert` and the workers' `signer`. The timed
 * rounds stay 120 (7,680 transfers, against 7,616 with 6 of 125).
 */
const WARM_NONCES = 40;
const CONCURRENCY = 64;
/** In-process admission is short (well under a second), so it runs on this many fresh nodes; the median counts. */
const IN_PROCESS_RUNS = 3;
const TRANSFER_GAS = 21_000n;
const GWEI = 1_000_000_000n;
const POOL_SIZES = [10_000, 50_000] as const;
/**
 * Consecutive full blocks each import row times on its node (a warm row's transactions admitted
 * first, a cold row's never seen); the row is their median. One block's time moves by ±15%
 * between quiet runs, and a cold block more, when a background compaction of the chain database
 * lands in it (one timed cold block read 0.74x and 0.97x in two runs of the same build).
 */
const TIMED_BLOCKS = 5;
/**
 * Untimed blocks each import row imports first, on its node, the way its timed ones are (warm rows
 * admit their transactions first): a node that imports every slot has its import path compiled,
 * and the first import in a process paid V8's optimising compiles of that path (10–90 ms on a
 * background thread, while the block ran unoptimised code), whichever row ran first. One was not
 * enough for the engine route: in the five runs with one on an otherwise idle machine, the warm
 * REST row's first two timed blocks were its two slowest in four (e.g. 71, 67, 67, 49, 45 ms and
 * 96, 74, 66, 70, 53 ms), while the in-process row's blocks showed no such order.
 */
const LEAD_BLOCKS = 3;
/** Nonces per sender signed: the admission rows take the first NONCES, the import rows' blocks all of them (on fresh nodes). */
const IMPORT_NONCES = 180;
/** Epoch 0 holds the import rows' blocks (see buildBenchBlock: LEAD_BLOCKS + TIMED_BLOCKS of them); the devnet preset's epoch has 2 slots. */
const SLOTS_PER_EPOCH = 16;
/** Pool rows: transactions per synthetic sender. */
const POOL_NONCES_PER_SENDER = 50;
const MB = 1e6;

/** REST load generator: node:http with a keep-alive agent, or Node's global fetch (undici, about 4x the client CPU). */
export type RestClient = 'http' | 'fetch';

interface Timed {
  seconds: number;
  txPerSecond: number;
  cpu: CpuSplit;
}

/** An import row: `seconds` is the median block's, `blockSeconds` each block's in import order, `cpu` all blocks' together. */
interface ImportTimed extends Timed {
  blockSeconds: number[];
  /** Verified-transaction cache hits over all its blocks. */
  cacheHits: number;
}

/** Detailed figures behind the table (the JSON output). */
export interface ExecutionDetails {
  cores: number;
  rawVerify: { threads: number; perThread: number[]; total: number; otherProcessesCores?: number; cpuUsPerVerify?: number };
  /**
   * A node verifier thread's whole job per unknown transfer (EnvelopeVerifier and the tx hash) on
   * every core, and the raw verify again beside a busy main thread: the floor of the rows'
   * `verifiers` µs/tx and what sharing the cores adds to each verification's CPU time.
   */
  verifierFloor: { perThread: number[]; total: number; cpuUsPerTx?: number };
  /** The same with svc-wasm and every sender's key expansion cached, as the nodes verify. */
  verifierFloorKeysCached: { perThread: number[]; total: number; cpuUsPerTx?: number };
  rawVerifyBusyMain: { perThread: number[]; total: number; cpuUsPerVerify?: number };
  /** The batch endpoint with SSZ lists. */
  admissionRest: PumpResult & { warmup: number; txPerSecond: number; cpu: CpuSplit; journal: { syncs: number; writes: number }; batchSize: number };
  /** Single-transaction POSTs, SSZ and JSON bodies. */
  admissionRestSingle: Record<'ssz' | 'json', PumpResult & { txPerSecond: number; cpu: CpuSplit }>;
  admissionInProcess: { runs: Array<PumpResult & { txPerSecond: number; cpu: CpuSplit }>; median: number; warmup: number };
  blockImport: {
    transactions: number;
    gasUsed: number;
    bodyBytes: number;
    coldRest: ImportTimed;
    coldInProcess: ImportTimed;
    /** In process, with the verifier threads' key cache at one entry: every sender's key expanded, as for first-time senders. */
    coldNewSenders: ImportTimed;
    /** TIMED_BLOCKS consecutive blocks on one node, the median block's time. */
    warmRest: ImportTimed;
    /** The same warm import with the JSON block (the before/after comparison). */
    warmRestJson: ImportTimed;
    sszBytes: number;
    warmInProcess: ImportTimed;
    /** The warm REST SSZ import on the memory DB (the rows above run on LevelDB on disk). */
    warmRestMemory: ImportTimed;
  };
  pool: Array<{ pending: number; heapUsedBytes: number; arrayBufferBytes: number; heapBytesPerTx: number; totalBytesPerTx: number; gcExposed: boolean }>;
  poolOperations?: PoolOperations;
  /** The pool journal file alone (bench/journal.ts). */
  journalFile: JournalFigures;
  profiles?: Record<string, string>;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`execution bench self-check failed: ${what}`);
}

/** global.gc when node runs with --expose-gc, else the same function obtained through V8 flags. */
function getGc(): { gc: () => void; exposed: boolean } {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return { gc: g, exposed: true };
  v8.setFlagsFromString('--expose-gc');
  return { gc: vm.runInNewContext('gc') as () => void, exposed: false };
}

/** A fresh node, and the ids of the threads its start created (its verifier workers). */
export async function startNode(genesis: Genesis, dataDir?: string): Promise<{ node: ExecutionNode; threads: Set<number> }> {
  const before = threadIds();
  const node = await ExecutionNode.start({ genesis, ...(dataDir ? { dataDir } : {}), host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, submitRatePerIp: 0, faucetRatePerIpPerMinute: 0 });
  return { node, threads: new Set([...threadIds()].filter((t) => !before.has(t))) };
}

/**
 * The bench chain's genesis: one validator and `accounts` prefunded accounts, all from the public
 * dev mnemonic. `slotsPerEpoch` widens epoch 0 for runs of more than a few blocks (see buildBenchBlock).
 */
export function benchGenesis(accounts: number, slotsPerEpoch?: number): { genesis: Genesis; accounts: WalletKeys[]; validator: WalletKeys } {
  const { genesis, keys } = buildGenesis({
    validators: 1,
    accounts,
    preset: 'devnet',
    chainId: CHAIN_ID,
    networkId: 31337,
    genesisTime: GENESIS_TIME,
    mnemonic: DEV_MNEMONIC,
    ...(slotsPerEpoch === undefined ? {} : { timing: { slotsPerEpoch } }),
  });
  const validator = keys.find((k) => k.role === 'validator' && k.index === 0)!.keys;
  check(validator.path === walletPath(Branch.Validators, 0), 'validator 0 key path');
  return { genesis, accounts: keys.filter((k) => k.role === 'account').map((k) => k.keys), validator };
}

/**
 * Validator 0's block at slot `index` (one block per slot) on `parentHash`. Only slots of epoch 0
 * are valid: their seed is drawn from the genesis mix, which is all this needs to know.
 */
export function buildBenchBlock(genesis: Genesis, validator: WalletKeys, index: number, parentHash: Uint8Array, transactions: StandardTx[], stateRoot: Uint8Array): Block {
  check(index < genesis.config.slots_per_epoch, `slot ${index} is past epoch 0 (${genesis.config.slots_per_epoch} slots)`);
  return buildSignedBlock({
    chainId: genesis.chain_id,
    index,
    timestampMs: genesis.genesis_time * 1000 + index * 1000 * genesis.config.slot_seconds,
    parentHash,
    transactions,
    key: validator.mldsa,
    validatorIndex: 0,
    validatorId: parseHex(validator.address, 'validator address', 20),
    // Execution checks these unsigned fields: the slot's seed (epoch 0 draws from the genesis mix;
    // the only validator is always drawn) and the validator's next RANDAO reveal.
    vrfSeed: vrfSeed(genesisMix(genesisHash(genesis)), index),
    randaoReveal: randaoReveal(validator.mldsaSeed, genesis.config.randao_chain_length, index),
    stateRoot,
  });
}

/** (1) `threads` liboqs workers verifying pre-made signatures at the same time; returns each worker's rate. */
export async function rawVerifyAllCores(signed: Signed[], threads: number, seconds: number): Promise<number[]> {
  return (await verifyOnAllCores({ kind: 'raw', signed }, threads, seconds)).map((r) => r.rate);
}

/** Mean of the workers' own CPU µs per operation, or undefined without /proc. */
function meanCpuUs(reports: VerifyWorkerReport[]): number | undefined {
  const us = reports.map((r) => r.cpuUsPerOp);
  return us.every((u) => u !== undefined) ? us.reduce((a, b) => a + b!, 0) / us.length : undefined;
}

/** Runs `fn` with the environment variable `name` set to `value` (worker threads copy the environment when they start). */
async function withEnv<T>(name: string, value: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env[name];
  process.env[name] = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
}

/** Runs `fn`, profiled into `<profileDir>/<name>.cpuprofile` when a directory is given. */
async function maybeProfiled<T>(profileDir: string | undefined, name: string, fn: () => Promise<T>, profiles: Record<string, string>, summaries: string[], label = 'main thread'): Promise<T> {
  if (!profileDir) return fn();
  const p = await profiled(profileDir, name, fn);
  profiles[name] = p.path;
  summaries.push(`profile ${name} (${label}) -> ${p.path}\n${summarizeProfile(p.profile)}`);
  return p.value;
}

/** Bodies of one REST admission run: what they are, and how many transactions each carries. */
interface RestBodies {
  kind: LoadBodyKind;
  warm: Array<string | Uint8Array>;
  timed: Array<string | Uint8Array>;
  perBody: number[];
  /** Transactions in the timed bodies. */
  timedTxs: number;
}

/** One REST admission run with its rates. */
interface RestRun {
  kind: LoadBodyKind;
  result: PumpResult;
  warm: PumpResult;
  cpu: CpuSplit;
  inFlight: string;
  timedTxs: number;
  txPerSecond: number;
  /** Cores over the node's CPU per transaction: what the node alone could admit. */
  capacity: number;
  journal: { syncs: number; writes: number };
}

/** Transactions per batch body in the batch admission row. */
const BATCH_SIZE = 128;
/** Batch requests in flight: BATCH_SIZE × this transactions in flight, more than the single rows' CONCURRENCY. */
const BATCH_CONCURRENCY = 4;

/** The admission bodies of `kind` for the warm-up and the timed envelopes. */
function restBodies(kind: LoadBodyKind, warm: Uint8Array[], timed: Uint8Array[]): RestBodies {
  if (kind === 'batch') {
    const chunk = (list: Uint8Array[]): Uint8Array[][] => Array.from({ length: Math.ceil(list.length / BATCH_SIZE) }, (_, i) => list.slice(i * BATCH_SIZE, (i + 1) * BATCH_SIZE));
    const w = chunk(warm);
    const t = chunk(timed);
    return { kind, warm: w.map(encodeEnvelopeList), timed: t.map(encodeEnvelopeList), perBody: [...w, ...t].map((c) => c.length), timedTxs: timed.length };
  }
  const body = (e: Uint8Array): string | Uint8Array => (kind === 'json' ? JSON.stringify({ raw: toHex(e) }) : e);
  return { kind, warm: warm.map(body), timed: timed.map(body), perBody: [], timedTxs: timed.length };
}

/** (2) REST admission; the client is a child process, so the node's process does only server work. */
async function restAdmission(
  node: ExecutionNode,
  verifierThreads: Set<number>,
  bodies: RestBodies,
  profile: <T>(fn: () => Promise<T>) => Promise<T>,
  client: RestClient,
): Promise<{ result: PumpResult; warm: PumpResult; cpu: CpuSplit }> {
  // Advanced serialisation moves the ~40 MB of bodies as a structured clone instead of JSON.
  const child = fork(fileURLToPath(new URL('./load-client.js', import.meta.url)), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = (): Promise<LoadMessage> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`load client exited early (code ${code})`));
      child.once('exit', onExit);
      child.once('message', (m: LoadMessage) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  try {
    const ready = next();
    const path = bodies.kind === 'batch' ? '/api/v1/transactions/batch' : '/api/v1/transactions';
    const concurrency = bodies.kind === 'batch' ? BATCH_CONCURRENCY : CONCURRENCY;
    child.send({ url: `${node.restUrl}${path}`, client, kind: bodies.kind, warm: bodies.warm, timed: bodies.timed, perBody: bodies.perBody, concurrency });
    const warmResult = ((await ready) as { warm: PumpResult }).warm;
    const cpu = startCpu();
    const done = await profile(async () => {
      const m = next();
      child.send('go');
      return (await m) as { result: PumpResult; cpuSeconds: number };
    });
    return { result: done.result, warm: warmResult, cpu: cpu.finish(done.result.seconds, { verifiers: verifierThreads }, done.cpuSeconds) };
  } finally {
    if (child.connected) child.disconnect();
  }
}

/** A transaction with the envelope it was decoded from, as the REST routes hand them to admission. */
export interface Received {
  tx: StandardTx;
  envelope: Uint8Array;
}

/** Submits through the node's admission in process, as the REST route would (with the received envelope when there is one). */
export const submitter = (node: ExecutionNode) => async (item: StandardTx | Received): Promise<undefined> => {
  if ('envelope' in item) await node.submit(item.tx, 'rest', { envelope: item.envelope });
  else await node.submit(item, 'rest');
  return undefined;
};

/** The engine client of the REST import rows: a child process (bench/import-client.ts) holding the blocks' bodies. */
interface ImportClient {
  /** Hands the child block `b`'s bodies (once per block, before any timing). */
  load(b: ChainBlock): Promise<void>;
  /** POSTs block `height` to `node`'s newPayload as SSZ or JSON; the answer's gas, the client's wall time and its CPU. */
  post(node: ExecutionNode, kind: ImportRequest['kind'], height: number): Promise<ImportRun>;
  close(): void;
}

/** A block of the import rows' chain, with its bodies and transactions. */
interface ChainBlock {
  height: number;
  block: Block;
  /** The block's hash, 0x hex. */
  hash: string;
  ssz: Uint8Array;
  json: string;
  txs: StandardTx[];
}

/** What one import run hands its row: the gas and post-state root the answer reports and, through REST, the client's time and CPU. */
interface ImportRun {
  gas: number;
  stateRoot: string;
  /** Request start to parsed answer, as the client saw it (REST rows). */
  seconds?: number;
  clientCpuSeconds?: number;
}

/**
 * Starts the import client and hands it the bodies once, untimed. It runs in a process of its own,
 * as a beacon node does: the node's main thread does only server work, and the client's CPU
 * (writing 7.6 MB, reading the answer) is counted as the load generator's.
 */
async function startImportClient(): Promise<ImportClient> {
  // Advanced serialisation moves the bodies as a structured clone instead of JSON.
  const child = fork(fileURLToPath(new URL('./import-client.js', import.meta.url)), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`import client exited early (code ${code})`));
      child.once('exit', onExit);
      child.once('message', (m: T) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  const loaded = new Set<number>();
  return {
    async load(b) {
      if (loaded.has(b.height)) return;
      const ready = next<string>();
      child.send({ block: b.height, ssz: b.ssz, json: b.json } satisfies ImportClientInit);
      check((await ready) === 'ready', 'import client ready');
      loaded.add(b.height);
    },
    async post(node, kind, height) {
      const answer = next<ImportReply>();
      child.send({ url: `${node.restUrl}/api/v1/engine/newPayload`, kind, block: height } satisfies ImportRequest);
      const r = await answer;
      check(r.ok && r.canonical, `newPayload (${kind}): ${r.ok ? 'not canonical' : r.error}`);
      return r.ok ? { gas: r.gasUsed, stateRoot: r.stateRoot, seconds: r.seconds, clientCpuSeconds: r.cpuSeconds } : { gas: 0, stateRoot: '' };
    },
    close() {
      if (child.connected) child.disconnect();
    },
  };
}

async function importInProcess(node: ExecutionNode, block: Block, envelopes: Uint8Array[]): Promise<ImportRun> {
  const r = await node.chain.importBlock(block, envelopes);
  check(r.canonical && !r.already_known, 'in-process import extends the head');
  return { gas: r.gas_used, stateRoot: r.state_root };
}

/** Verified-transaction cache hits counted by the node's metrics. */
async function cacheHits(node: ExecutionNode): Promise<number> {
  return (await node.metrics.cacheHits.get()).values[0]?.value ?? 0;
}

/** (4) heapUsed and ArrayBuffer deltas of a pool holding `n` entries, each with its own decoded transaction. */
function poolMemory(n: number, envelopes: readonly Uint8Array[], gc: () => void): { heapUsedBytes: number; arrayBufferBytes: number; pool: TxPool } {
  gc();
  gc();
  const before = process.memoryUsage();
  const pool = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: Math.max(n, DEFAULT_POOL_OPTIONS.capacity) });
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    // A copy per entry, decoded as REST admission decodes it (fields are views into the envelope
    // the entry keeps): entries share no bytes, as real ones do not.
    const env = new Uint8Array(envelopes[i % envelopes.length]!);
    const tx = decodeTxViews(env) as StandardTx;
    pool.add({ tx, envelope: env, hash: syntheticHash(i), sender: syntheticSender(Math.floor(i / POOL_NONCES_PER_SENDER)), nonce: BigInt(i % POOL_NONCES_PER_SENDER), gasPrice: tx.gasPrice, gasLimit: tx.gasLimit, size: env.length, receivedAt: now });
  }
  gc();
  gc();
  const after = process.memoryUsage();
  check(pool.size === n, `pool holds ${pool.size} of ${n} entries`);
  return { heapUsedBytes: after.heapUsed - before.heapUsed, arrayBufferBytes: after.arrayBuffers - before.arrayBuffers, pool };
}

const syntheticHash = (i: number): string => '0x' + i.toString(16).padStart(64, '0');
const syntheticSender = (i: number): string => '0x' + i.toString(16).padStart(40, '0');

/** This process's CPU ms (all threads) while `fn` runs: unlike wall time, it holds on a busy machine. */
function cpuMs(fn: () => unknown): number {
  const c = process.cpuUsage();
  fn();
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1000;
}


/**
 * Goals against the verifier floor (issue 30): admission through each REST body kind, and the
 * warm engine import of a full block in ms (it verifies nothing: its transactions were admitted).
 */
const REST_GOALS: Record<LoadBodyKind, string> = { batch: '>= 0.8', ssz: '>= 0.6', json: '>= 0.5' };
const WARM_IMPORT_GOAL_MS = 100;

/** Pool add at capacity goal (issue 14): admissions per second a full pool sustains while evicting. */
const POOL_ADD_GOAL_PER_SECOND = 10_000;

/** Pool rows' figures. */
export interface PoolOperations {
  /** Synchronous build order (CPU of the whole build, as if it ran in one go). */
  buildOrderMs: number;
  /** The sliced build getPendingTransactions runs: wall time, its longest slice, and the event loop's widest gap meanwhile. */
  buildSlicedMs: number;
  buildLongestSliceMs: number;
  buildSlices: number;
  buildLoop: LoopFigures;
  buildTxs: number;
  statusAllMs: number;
  evictingAddMs: number;
  buildOrderOnePerSenderMs: number;
  oneSenderLongestSliceMs: number;
  oneSenderLoop: LoopFigures;
  oneSenderCount: number;
}

/** The event loop's widest gap during a sliced build (watchLoop): wall, CPU less GC pauses, and the longest GC pause. */
type LoopFigures = ReturnType<ReturnType<typeof watchLoop>['stop']>;

/**
 * Runs the sliced build once the loop is quiet. The build's own longest slice is the row's
 * figure; the loop's widest gap is printed beside it: on a 300 MB heap V8 runs incremental
 * marking as main-thread tasks between the build's slices, which no `gc` entry reports.
 */
async function slicedBuild(pool: TxPool, maxGas: bigint): Promise<{ ms: number; longestSliceMs: number; slices: number; loop: LoopFigures; txs: number }> {
  await quietLoop();
  const stats = { slices: 0, longestMs: 0 };
  const t0 = performance.now();
  const loop = watchLoop();
  const out = await pool.buildOrderSliced(() => 0n, maxGas, undefined, BUILD_SLICE_MS, stats);
  const ms = performance.now() - t0;
  return { ms, longestSliceMs: stats.longestMs, slices: stats.slices, loop: loop.stop(), txs: out.length };
}

/**
 * (4b) Event-loop cost of the pool's whole-pool operations on a full pool: the proposer's build
 * order (getPendingTransactions: synchronous CPU, and the longest event-loop block of the
 * sliced build the route runs), the status of every entry (GET /api/v1/execution/mempool),
 * adds that must evict (the cheapest tail), and the build with one transaction per sender (every
 * sender a head).
 */
/** The pool never reads an entry's envelope: the operation rows share one empty one. */
const EMPTY = new Uint8Array(0);

export async function poolOperations(full: TxPool, tx: StandardTx, maxGas: bigint): Promise<PoolOperations> {
  const nonceOf = (): bigint => 0n;
  // Warm once (JIT), as a node that has built blocks before is.
  full.buildOrder(nonceOf, maxGas);
  const buildOrderMs = cpuMs(() => full.buildOrder(nonceOf, maxGas));
  const sliced = await slicedBuild(full, maxGas);
  const statusAllMs = cpuMs(() => full.entries().map((e) => full.status(e, 0n)));
  check(full.size === full.options.capacity, 'the pool is at capacity');
  const adds = 2_000;
  const evictingAddMs =
    cpuMs(() => {
      for (let i = 0; i < adds; i++) full.add({ tx, envelope: EMPTY, hash: syntheticHash(1e9 + i), sender: syntheticSender(1e9 + i), nonce: 0n, gasPrice: tx.gasPrice * 2n, gasLimit: tx.gasLimit, size: 0, receivedAt: 0 });
    }) / adds;
  const oneSenderCount = full.options.capacity;
  const wide = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: oneSenderCount });
  for (let i = 0; i < oneSenderCount; i++) wide.add({ tx, envelope: EMPTY, hash: syntheticHash(i), sender: syntheticSender(i), nonce: 0n, gasPrice: tx.gasPrice + BigInt(i % 97), gasLimit: tx.gasLimit, size: 0, receivedAt: 0 });
  wide.buildOrder(nonceOf, maxGas);
  const buildOrderOnePerSenderMs = cpuMs(() => wide.buildOrder(nonceOf, maxGas));
  const wideSliced = await slicedBuild(wide, maxGas);
  return { buildOrderMs, buildSlicedMs: sliced.ms, buildLongestSliceMs: sliced.longestSliceMs, buildSlices: sliced.slices, buildLoop: sliced.loop, buildTxs: sliced.txs, statusAllMs, evictingAddMs, buildOrderOnePerSenderMs, oneSenderLongestSliceMs: wideSliced.longestSliceMs, oneSenderLoop: wideSliced.loop, oneSenderCount };
}

/** The loop's widest gap during a build, as a note. */
const loopNote = (l: LoopFigures): string => `widest loop gap meanwhile ${l.wallMs.toFixed(1)} ms wall, ${l.cpuMs.toFixed(1)} ms CPU less GC (longest GC pause ${l.gcMs.toFixed(1)} ms)`;

/** The pool rows of the table. */
export function poolRows(poolOps: PoolOperations, poolSize: number, noncesPerSender: number, slotMs: number): BenchResult[] {
  const full = `${(poolSize / noncesPerSender).toLocaleString('en-US')} senders x ${noncesPerSender}`;
  const wide = `${poolOps.oneSenderCount.toLocaleString('en-US')} senders x 1`;
  const addRate = 1000 / poolOps.evictingAddMs;
  return [
    { name: 'pool build order, synchronous, CPU', backend: full, unit: 'ms', value: poolOps.buildOrderMs, note: `${poolOps.buildTxs} txs taken; devnet slot ${slotMs} ms` },
    { name: 'pool build order (getPendingTransactions), longest event-loop block', backend: full, unit: 'ms', value: poolOps.buildLongestSliceMs, ratio: poolOps.buildLongestSliceMs / EVENT_LOOP_BLOCK_GOAL_MS, note: `${eventLoopBlockNote(poolOps.buildLongestSliceMs)}; the build's longest of ${poolOps.buildSlices} slices, ${poolOps.buildSlicedMs.toFixed(1)} ms in all; ${loopNote(poolOps.buildLoop)}` },
    { name: 'pool build order, synchronous, CPU', backend: wide, unit: 'ms', value: poolOps.buildOrderOnePerSenderMs, note: 'every sender a head' },
    { name: 'pool build order (getPendingTransactions), longest event-loop block', backend: wide, unit: 'ms', value: poolOps.oneSenderLongestSliceMs, ratio: poolOps.oneSenderLongestSliceMs / EVENT_LOOP_BLOCK_GOAL_MS, note: `${eventLoopBlockNote(poolOps.oneSenderLongestSliceMs)}; the build's longest slice; ${loopNote(poolOps.oneSenderLoop)}` },
    { name: 'pool status of every entry (GET mempool), CPU', backend: full, unit: 'ms', value: poolOps.statusAllMs, note: `${((poolOps.statusAllMs * 1000) / poolSize).toFixed(2)} us per entry; the route pages it` },
    { name: 'pool add at capacity (evicts)', backend: full, unit: 'tx/s', value: addRate, ratio: addRate / POOL_ADD_GOAL_PER_SECOND, note: `${(addRate / POOL_ADD_GOAL_PER_SECOND).toFixed(2)}x goal >= ${POOL_ADD_GOAL_PER_SECOND.toLocaleString('en-US')}/s (${(poolOps.evictingAddMs * 1000).toFixed(1)} us CPU per add)` },
  ];
}

/** Runs the execution benchmarks and prints a table (and profile summaries) unless `print` is false. */
export async function runExecutionBench(opts: { seconds: number; print?: boolean; profileDir?: string; restClient?: RestClient }): Promise<{ results: BenchResult[]; details: ExecutionDetails }> {
  const say = (msg: string): void => {
    if (opts.print !== false) process.stderr.write(`  ${msg}\n`);
  };
  const t0 = performance.now();
  const cores = os.availableParallelism();
  const results: BenchResult[] = [];
  const profiles: Record<string, string> = {};
  const summaries: string[] = [];
  const profile =
    (name: string, label?: string) =>
    <T>(fn: () => Promise<T>): Promise<T> =>
      maybeProfiled(opts.profileDir, name, fn, profiles, summaries, label);

  const { genesis, accounts, validator } = benchGenesis(SENDERS, SLOTS_PER_EPOCH);

  // (1) Raw verification on every core.
  const liboqs = await loadLiboqsBackend();
  const signed = accounts.slice(0, 32).map((k) => {
    const msg = new Uint8Array(randomBytes(32));
    return { pk: k.mldsa.publicKey, msg, sig: liboqs.sign(k.mldsa.secretKey, msg) };
  });
  const rawSeconds = Math.max(2, opts.seconds);
  say(`raw verify: ${cores} liboqs worker threads, ~${rawSeconds} s`);
  const rawCpu = startCpu();
  const tRaw = performance.now();
  const rawReports = await verifyOnAllCores({ kind: 'raw', signed }, cores, rawSeconds);
  const rawSplit = rawCpu.finish((performance.now() - tRaw) / 1000, {});
  const perThread = rawReports.map((r) => r.rate);
  const raw = perThread.reduce((a, b) => a + b, 0);
  const rawCpuUs = meanCpuUs(rawReports);
  const cpuNote = (us: number | undefined, what: string): string => (us === undefined ? '' : `; CPU ${us.toFixed(0)} µs per ${what}`);
  results.push({ name: 'ML-DSA-65 verify, all cores', backend: `liboqs, ${cores} threads`, unit: 'ops/s', value: raw, note: `reference (${perThread.map((r) => r.toFixed(0)).join(' + ')})${cpuNote(rawCpuUs, 'verify')}` });
  const vsRaw = (value: number, goal?: string): { ratio: number; note: string } => {
    const ratio = value / raw;
    return { ratio, note: `${ratio.toFixed(2)}x raw all-core verify${goal ? ` (goal ${goal})` : ''}` };
  };

  // Pre-signed transfers, nonce-major: consecutive submissions come from different senders.
  const previous = signatureBackend().name;
  await initSignatureBackend('liboqs');
  const recipients = Array.from({ length: 256 }, (_, i) => {
    const to = new Uint8Array(20);
    to[0] = 0xbe;
    to[19] = i;
    return to;
  });
  const tSign = performance.now();
  // Nonce-major. The admission rows take the first NONCES rounds; the import rows' later blocks go on beyond them.
  const importTxs: StandardTx[] = [];
  for (let nonce = 0; nonce < IMPORT_NONCES; nonce++) {
    for (let s = 0; s < SENDERS; s++) {
      const fields = { nonce: BigInt(nonce), gasPrice: GWEI, gasLimit: TRANSFER_GAS, to: recipients[(nonce * SENDERS + s) % recipients.length]!, value: 10n ** 15n, data: new Uint8Array(0) };
      importTxs.push(signStandardTx(fields, accounts[s]!.mldsa, CHAIN_ID));
    }
  }
  const txs = importTxs.slice(0, NONCES * SENDERS);
  await initSignatureBackend(previous);
  say(`signed ${importTxs.length} transfers in ${((performance.now() - tSign) / 1000).toFixed(1)} s`);
  const envelopes = txs.map(encodeTx);
  // (1b) The floor of the rows' `verifiers` µs/tx (a verifier thread's whole job per unknown
  // transfer, alone on the cores), and the raw verify's CPU beside a busy main thread.
  say(`verifier floor: ${cores} threads of EnvelopeVerifier + tx hash (liboqs, then svc-wasm with the keys cached), then raw verify beside a busy main thread, ~${rawSeconds} s each`);
  const floorReports = await verifyOnAllCores({ kind: 'envelope', envelopes: envelopes.slice(0, SENDERS), chainId: CHAIN_ID, backend: 'liboqs' }, cores, rawSeconds);
  // The same job as the nodes below do it: svc-wasm, with every sender's key expansion cached.
  const cachedFloorReports = await verifyOnAllCores({ kind: 'envelope', envelopes: envelopes.slice(0, SENDERS), chainId: CHAIN_ID, backend: 'svc-wasm' }, cores, rawSeconds);
  const busyReports = await verifyOnAllCores({ kind: 'raw', signed }, cores, rawSeconds, { busyMain: true });
  const floorCpuUs = meanCpuUs(floorReports);
  const cachedFloorCpuUs = meanCpuUs(cachedFloorReports);
  const cachedFloorRate = cachedFloorReports.reduce((n, r) => n + r.rate, 0);
  const busyCpuUs = meanCpuUs(busyReports);
  const floorRate = floorReports.reduce((n, r) => n + r.rate, 0);
  const busyRate = busyReports.reduce((n, r) => n + r.rate, 0);
  const vsRawCpu = (us: number | undefined): string => (us === undefined || rawCpuUs === undefined ? '' : ` (${(us / rawCpuUs).toFixed(2)}x the raw verify's)`);
  results.push({ name: 'verifier thread work per transfer (EnvelopeVerifier + tx hash), all cores', backend: `liboqs, ${cores} threads`, unit: 'ops/s', value: floorRate, ratio: vsRaw(floorRate).ratio, note: `${vsRaw(floorRate).note}; every key unseen${cpuNote(floorCpuUs, 'tx')}${vsRawCpu(floorCpuUs)}` });
  results.push({ name: "verifier thread work per transfer, senders' keys cached, all cores", backend: `svc-wasm, ${cores} threads`, unit: 'ops/s', value: cachedFloorRate, ratio: vsRaw(cachedFloorRate).ratio, note: `${vsRaw(cachedFloorRate).note}; the verifier floor: limit for the rows below${cpuNote(cachedFloorCpuUs, 'tx')}${vsRawCpu(cachedFloorCpuUs)}` });
  // The rows' limit: what the verifier threads alone do per transfer, as the nodes run them (issue 30).
  const vsFloor = (value: number, goal?: string): { ratio: number; note: string } => {
    const ratio = value / cachedFloorRate;
    return { ratio, note: `${ratio.toFixed(2)}x the verifier floor${goal ? ` (goal ${goal})` : ''}; ${(value / raw).toFixed(2)}x raw verify` };
  };
  results.push({ name: 'ML-DSA-65 verify, all cores, main thread busy', backend: `liboqs, ${cores} threads + main`, unit: 'ops/s', value: busyRate, ratio: vsRaw(busyRate).ratio, note: `${vsRaw(busyRate).note}; sharing the cores${cpuNote(busyCpuUs, 'verify')}${vsRawCpu(busyCpuUs)}` });
  // As the REST routes decode a received envelope: the fields are views into it, and admission gets both.
  const decoded: Received[] = envelopes.map((e) => ({ tx: decodeTxViews(e) as StandardTx, envelope: e }));
  const warmCount = WARM_NONCES * SENDERS;

  // (2a) REST admission: the batch endpoint with SSZ lists (the main row), single SSZ envelopes,
  // and single JSON {raw} bodies (the before/after comparison), each on a fresh node.
  const restClient = opts.restClient ?? 'http';
  const restRun = async (kind: LoadBodyKind): Promise<RestRun> => {
    const bodies = restBodies(kind, envelopes.slice(0, warmCount), envelopes.slice(warmCount));
    const inFlight = kind === 'batch' ? `${BATCH_CONCURRENCY} batches of ${BATCH_SIZE} in flight` : `${CONCURRENCY} in flight`;
    say(`REST admission (${kind}): ${warmCount} warm-up + ${bodies.timedTxs} timed transactions in ${bodies.timed.length} POSTs, ${inFlight} (${restClient} client, separate process)`);
    // On disk, as deployed: an admitted transaction is durable (synced) before it is answered.
    const restDir = await mkdtemp(join(os.tmpdir(), 'svc-bench-exec-'));
    const { node, threads } = await startNode(genesis, restDir);
    try {
      const r = await restAdmission(node, threads, bodies, profile(`admission-rest-${kind}`, 'main thread; the client is a separate process'), restClient);
      check(r.warm.failed === 0 && r.result.failed === 0, `REST ${kind} submissions failed: ${r.warm.firstError ?? r.result.firstError}`);
      check(node.admission.pool.size === txs.length, `pool holds ${node.admission.pool.size} of ${txs.length}`);
      // Warm-up included: the group-commit factor of the whole run.
      const journal = { syncs: (await node.metrics.journalSyncs.get()).values[0]?.value ?? 0, writes: (await node.metrics.journalWrites.get()).values[0]?.value ?? 0 };
      const txPerSecond = bodies.timedTxs / r.result.seconds;
      // The client shares the cores; what the node alone could do is the cores over its CPU per transaction.
      const serverCpu = Object.entries(r.cpu.seconds).reduce((n, [role, sec]) => (role === 'load generator' ? n : n + sec), 0);
      return { ...r, kind, inFlight, timedTxs: bodies.timedTxs, txPerSecond, capacity: serverCpu > 0 ? (cores * bodies.timedTxs) / serverCpu : 0, journal };
    } finally {
      await node.stop();
      await rm(restDir, { recursive: true, force: true });
    }
  };
  const restBatch = await restRun('batch');
  const restSsz = await restRun('ssz');
  const restJson = await restRun('json');
  const rest = restBatch;
  const journal = restBatch.journal;
  const restTps = restBatch.txPerSecond;
  const restRows: Array<[RestRun, string]> = [
    [restBatch, `admission, REST POST /transactions/batch (SSZ, ${BATCH_SIZE} per batch)`],
    [restSsz, 'admission, REST POST /transactions (SSZ body)'],
    [restJson, 'admission, REST POST /transactions (JSON {raw})'],
  ];
  for (const [r, name] of restRows) {
    const goal = REST_GOALS[r.kind];
    results.push({ name, backend: `${restClient} client, ${r.inFlight}, LevelDB on disk`, unit: 'tx/s', value: r.txPerSecond, ...vsFloor(r.txPerSecond, goal) });
    if (r.capacity > 0) results.push({ name: `${name}, node CPU-bound est.`, backend: `${cores} cores / node CPU per tx`, unit: 'tx/s', value: r.capacity, ...vsFloor(r.capacity) });
  }

  // (2b) The same pipeline called in process: no HTTP, JSON or hex.
  say(`in-process admission: ${IN_PROCESS_RUNS} fresh nodes, ${warmCount} warm-up + ${txs.length - warmCount} timed each`);
  const directRuns: ExecutionDetails['admissionInProcess']['runs'] = [];
  for (let r = 0; r < IN_PROCESS_RUNS; r++) {
    const { node, threads } = await startNode(genesis);
    try {
      const warm = await pump(decoded.slice(0, warmCount), CONCURRENCY, submitter(node));
      const cpu = startCpu();
      const timed = (): Promise<PumpResult> => pump(decoded.slice(warmCount), CONCURRENCY, submitter(node));
      const run = r === 0 ? await profile('admission-inprocess')(timed) : await timed();
      check(warm.failed === 0 && run.failed === 0, `in-process submissions failed: ${warm.firstError ?? run.firstError}`);
      directRuns.push({ ...run, txPerSecond: run.ok / run.seconds, cpu: cpu.finish(run.seconds, { verifiers: threads }) });
    } finally {
      await node.stop();
    }
  }
  const byRate = [...directRuns].sort((a, b) => a.txPerSecond - b.txPerSecond);
  const direct = byRate[Math.floor(byRate.length / 2)]!;
  results.push({ name: 'admission, in-process node.submit', backend: `${CONCURRENCY} in flight, median of ${IN_PROCESS_RUNS}`, unit: 'tx/s', value: direct.txPerSecond, ...vsFloor(direct.txPerSecond, '>= 0.8') });

  // (3) A full block: 1,428 transfers (30M gas / 21,000 each), nonce-major from every sender.
  const perBlock = Number(BigInt(genesis.config.max_gas_per_block) / TRANSFER_GAS);
  check((LEAD_BLOCKS + TIMED_BLOCKS) * perBlock <= importTxs.length, `${LEAD_BLOCKS + TIMED_BLOCKS} blocks of ${perBlock} need more than the ${importTxs.length} signed transfers`);
  const blockTxs = txs.slice(0, perBlock);
  const block = buildBenchBlock(genesis, validator, 1, genesisHash(genesis), blockTxs, genesisStateRoot(genesis));
  const blockBody = JSON.stringify(blockToJson(block));
  const blockSsz = encodeBlock(block);
  const expectedGas = blockTxs.length * Number(TRANSFER_GAS);
  // The warm rows' chain: block h carries the next 1,428 pre-signed transfers (nonces continue
  // from block h - 1) on block h - 1's post-state. Built once, on the first node that reaches it
  // (every node computes the same post-states), and shared by every row.
  const chain: ChainBlock[] = [{ height: 1, block, hash: toHex(blockHash(block.header)), ssz: blockSsz, json: blockBody, txs: blockTxs }];
  const chainBlock = (height: number, parentStateRoot: string): ChainBlock => {
    const known = chain[height - 1];
    if (known) {
      check(toHex(known.block.header.stateRoot) === parentStateRoot, `block ${height} was built on another post-state`);
      return known;
    }
    const parent = chain[height - 2]!;
    const t = importTxs.slice((height - 1) * perBlock, height * perBlock);
    const b = buildBenchBlock(genesis, validator, height, parseHex(parent.hash, 'block hash', 32), t, parseHex(parentStateRoot, 'state root', 32));
    const made = { height, block: b, hash: toHex(blockHash(b.header)), ssz: encodeBlock(b), json: JSON.stringify(blockToJson(b)), txs: t };
    chain.push(made);
    return made;
  };
  say(`block import: ${blockTxs.length} transfers, ${(blockSsz.length / MB).toFixed(1)} MB of SSZ (${(blockBody.length / MB).toFixed(1)} MB as JSON); cold and warm, engine REST and in-process, each on a fresh node with LevelDB in a temp directory (and warm REST once on the memory DB); every row first imports ${LEAD_BLOCKS} untimed blocks on its node as it imports its timed ones; each row then imports ${TIMED_BLOCKS} consecutive blocks and counts the median`);

  const client = await startImportClient();
  const collect = getGc().gc as (options?: { type: 'minor' | 'major' }) => void;
  // On disk unless `memory`: the production store, whose synced batch is part of every import.
  // `prepare` does a block's untimed work (the in-process rows parse the SSZ body, as the engine
  // route does before importBlock) and returns the timed import.
  const importRun = async (
    name: string,
    warm: boolean,
    prepare: (b: ChainBlock) => (node: ExecutionNode) => Promise<ImportRun>,
    memory = false,
  ): Promise<ImportTimed> => {
    const dir = memory ? undefined : await mkdtemp(join(os.tmpdir(), 'svc-bench-import-'));
    const { node, threads } = await startNode(genesis, dir);
    try {
      check(node.chain.head().hash === toHex(block.header.parentHash) && node.chain.head().index === block.header.index - 1, 'the block extends the genesis head');
      const blockSeconds: number[] = [];
      const splits: CpuSplit[] = [];
      let hits = 0;
      let parentStateRoot = toHex(genesisStateRoot(genesis));
      for (let height = 1; height <= LEAD_BLOCKS + TIMED_BLOCKS; height++) {
        const timed = height > LEAD_BLOCKS;
        const b = chainBlock(height, parentStateRoot);
        await client.load(b);
        const run = prepare(b);
        if (warm) {
          const admitted = await pump(b.txs, CONCURRENCY, submitter(node));
          check(admitted.failed === 0 && node.admission.pool.size === b.txs.length, `warm pre-admission of block ${height} failed: ${admitted.firstError}`);
        }
        const hits0 = await cacheHits(node);
        // The pre-admission's young objects (pool entries) are promoted by admission's own collection,
        // not by the import's: a node admits over the slot and collects meanwhile. A minor collection
        // only: a full one sets the old generation's limit to the heap just collected, and the
        // import's own allocations then start marking within it.
        collect({ type: 'minor' });
        const cpu = startCpu();
        const t = performance.now();
        const r = await profile(timed ? `${name}-${height}` : `${name}-lead-${height}`)(() => run(node));
        const seconds = r.seconds ?? (performance.now() - t) / 1000;
        const split = cpu.finish(seconds, { verifiers: threads }, r.clientCpuSeconds);
        check(r.gas === expectedGas, `${name} block ${height} used ${r.gas} gas, expected ${expectedGas}`);
        check(node.chain.head().hash === b.hash && node.chain.head().index === height, `${name}: block ${height} is the head`);
        const blockHits = (await cacheHits(node)) - hits0;
        // Every signature of a warm block was checked at admission: the import must find each in the cache.
        if (warm) check(blockHits === b.txs.length && node.admission.pool.size === 0, `${name} block ${height}: ${blockHits} of ${b.txs.length} cache hits, ${node.admission.pool.size} left in the pool`);
        parentStateRoot = r.stateRoot;
        if (!timed) continue;
        splits.push(split);
        hits += blockHits;
        blockSeconds.push(seconds);
      }
      const sorted = [...blockSeconds].sort((a, c) => a - c);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      return { seconds: median, txPerSecond: blockTxs.length / median, blockSeconds, cpu: sumCpu(splits), cacheHits: hits };
    } finally {
      await node.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  };
  const engine = (kind: ImportRequest['kind']) => (b: ChainBlock) => (n: ExecutionNode) => client.post(n, kind, b.height);
  // What the engine route hands to importBlock for an SSZ body: the in-process rows start from here.
  const inProcess = (b: ChainBlock) => {
    const parsed = decodeBlockWithEnvelopes(b.ssz);
    return (n: ExecutionNode) => importInProcess(n, parsed.block, parsed.envelopes);
  };
  let coldRest, coldInProcess, coldNewSenders, warmRest, warmRestJson, warmInProcess, warmRestMemory;
  try {
    coldRest = await importRun('import-cold-rest', false, engine('ssz'));
    coldInProcess = await importRun('import-cold-inprocess', false, inProcess);
    // First-time senders: a one-entry key cache in the node's verifier threads, so every key is expanded.
    coldNewSenders = await withEnv('SVC_KEY_CACHE_ENTRIES', '1', () => importRun('import-cold-inprocess-new-senders', false, inProcess));
    warmRest = await importRun('import-warm-rest', true, engine('ssz'));
    warmRestJson = await importRun('import-warm-rest-json', true, engine('json'));
    warmInProcess = await importRun('import-warm-inprocess', true, inProcess);
    warmRestMemory = await importRun('import-warm-rest-memory', true, engine('ssz'), true);
  } finally {
    client.close();
  }
  check([warmRest, warmRestJson, warmInProcess, warmRestMemory].every((r) => r.cacheHits === TIMED_BLOCKS * blockTxs.length), 'warm imports are answered by the verified-transaction cache');
  const blockLabel = `${blockTxs.length} transfers, 30M gas`;
  const ms = (s: number): string => `${(s * 1000).toFixed(0)} ms`;
  // An import row's note names its blocks, so a median is never read as one block's time.
  const blocksNote = (r: ImportTimed, goal?: string): { ratio: number; note: string } => {
    const v = vsFloor(r.txPerSecond, goal);
    return { ratio: v.ratio, note: `${v.note}; median of ${r.blockSeconds.length} blocks (${ms(r.seconds)}; ${ms(Math.min(...r.blockSeconds))}-${ms(Math.max(...r.blockSeconds))})` };
  };
  results.push({ name: `block import, cold (${blockLabel})`, backend: 'engine REST newPayload, SSZ, LevelDB on disk', unit: 'tx/s', value: coldRest.txPerSecond, ...blocksNote(coldRest, '>= 0.5') });
  results.push({ name: 'block import, cold', backend: 'in-process importBlock, LevelDB on disk', unit: 'tx/s', value: coldInProcess.txPerSecond, ...blocksNote(coldInProcess, '>= 0.5') });
  results.push({ name: "block import, cold, every sender's key new", backend: 'in-process importBlock, key cache of 1', unit: 'tx/s', value: coldNewSenders!.txPerSecond, ...blocksNote(coldNewSenders!) });
  // Warm blocks verify nothing (their transactions were admitted first): the goal is the block's time.
  const warmMs = warmRest.seconds * 1000;
  results.push({ name: 'block import, warm (txs admitted first)', backend: 'engine REST newPayload, SSZ, LevelDB on disk', unit: 'tx/s', value: warmRest.txPerSecond, ratio: warmMs / WARM_IMPORT_GOAL_MS, note: `median ${warmMs.toFixed(0)} ms: ${(warmMs / WARM_IMPORT_GOAL_MS).toFixed(2)}x the ${WARM_IMPORT_GOAL_MS} ms goal (lower is better); ${blocksNote(warmRest).note}` });
  results.push({ name: 'block import, warm (txs admitted first)', backend: 'engine REST newPayload, JSON, LevelDB on disk', unit: 'tx/s', value: warmRestJson.txPerSecond, ...blocksNote(warmRestJson) });
  results.push({ name: 'block import, warm (txs admitted first)', backend: 'in-process importBlock, LevelDB on disk', unit: 'tx/s', value: warmInProcess.txPerSecond, ...blocksNote(warmInProcess) });
  results.push({ name: 'block import, warm (txs admitted first), memory DB', backend: 'engine REST newPayload, SSZ, memory-level', unit: 'tx/s', value: warmRestMemory.txPerSecond, ...blocksNote(warmRestMemory) });

  // (4) Pool memory, then whole-pool operations on the full pool.
  const { gc, exposed } = getGc();
  const pool: ExecutionDetails['pool'] = [];
  let poolOps: ExecutionDetails['poolOperations'] | undefined;
  for (const n of POOL_SIZES) {
    const m = poolMemory(n, envelopes, gc);
    const row = { pending: n, heapUsedBytes: m.heapUsedBytes, arrayBufferBytes: m.arrayBufferBytes, heapBytesPerTx: m.heapUsedBytes / n, totalBytesPerTx: (m.heapUsedBytes + m.arrayBufferBytes) / n, gcExposed: exposed };
    pool.push(row);
    const label = n.toLocaleString('en-US');
    results.push({ name: `pool memory, ${label} pending`, backend: 'heapUsed', unit: 'MB', value: m.heapUsedBytes / MB, note: `${row.heapBytesPerTx.toFixed(0)} B/tx` });
    results.push({ name: `pool memory, ${label} pending`, backend: 'heapUsed + arrayBuffers', unit: 'MB', value: (m.heapUsedBytes + m.arrayBufferBytes) / MB, note: `${row.totalBytesPerTx.toFixed(0)} B/tx (signed envelope: ${envelopes[0]!.length} B)` });
    if (n === m.pool.options.capacity) poolOps = await poolOperations(m.pool, decoded[0]!.tx, BigInt(genesis.config.max_gas_per_block));
  }
  if (poolOps) results.push(...poolRows(poolOps, POOL_SIZES[POOL_SIZES.length - 1], POOL_NONCES_PER_SENDER, genesis.config.slot_seconds * 1000));
  // (5) The pool journal file alone: appends and a compaction.
  const journalBench = await journalRows(envelopes[0]!, cachedFloorRate);
  results.push(...journalBench.results);

  const details: ExecutionDetails = {
    cores,
    rawVerify: { threads: cores, perThread, total: raw, ...(rawSplit.otherProcessesCores === undefined ? {} : { otherProcessesCores: rawSplit.otherProcessesCores }), ...(rawCpuUs === undefined ? {} : { cpuUsPerVerify: rawCpuUs }) },
    verifierFloor: { perThread: floorReports.map((r) => r.rate), total: floorRate, ...(floorCpuUs === undefined ? {} : { cpuUsPerTx: floorCpuUs }) },
    verifierFloorKeysCached: { perThread: cachedFloorReports.map((r) => r.rate), total: cachedFloorRate, ...(cachedFloorCpuUs === undefined ? {} : { cpuUsPerTx: cachedFloorCpuUs }) },
    rawVerifyBusyMain: { perThread: busyReports.map((r) => r.rate), total: busyRate, ...(busyCpuUs === undefined ? {} : { cpuUsPerVerify: busyCpuUs }) },
    admissionRest: { ...rest.result, warmup: warmCount, txPerSecond: restTps, cpu: rest.cpu, journal, batchSize: BATCH_SIZE },
    admissionRestSingle: { ssz: { ...restSsz.result, txPerSecond: restSsz.txPerSecond, cpu: restSsz.cpu }, json: { ...restJson.result, txPerSecond: restJson.txPerSecond, cpu: restJson.cpu } },
    admissionInProcess: { runs: directRuns, median: direct.txPerSecond, warmup: warmCount },
    blockImport: { transactions: blockTxs.length, gasUsed: expectedGas, bodyBytes: blockBody.length, sszBytes: blockSsz.length, coldRest, coldInProcess, coldNewSenders: coldNewSenders!, warmRest, warmRestJson, warmInProcess, warmRestMemory },
    pool,
    ...(poolOps ? { poolOperations: poolOps } : {}),
    journalFile: journalBench.figures,
    ...(opts.profileDir ? { profiles } : {}),
  };
  if (opts.print !== false) {
    const blocksLine = (r: ImportTimed): string => `${ms(r.seconds)} [${r.blockSeconds.map((x) => (x * 1000).toFixed(0)).join(', ')}] (${formatCpu(r.cpu, r.blockSeconds.length * blockTxs.length)})`;
    const elapsed = (performance.now() - t0) / 1000;
    console.log(formatTable(`execution (${cores} cores shared by the node's main thread, its ${cores} verifier workers and the load generator; ${elapsed.toFixed(0)} s)`, results));
    const others = [rawSplit, restBatch.cpu, restSsz.cpu, restJson.cpu, direct.cpu, coldRest.cpu, coldInProcess.cpu, coldNewSenders!.cpu, warmRest.cpu, warmRestJson.cpu, warmInProcess.cpu, warmRestMemory.cpu].map((c) => c.otherProcessesCores ?? 0);
    if (Math.max(...others) > 0.1) {
      console.log(`  WARNING: other processes kept up to ${Math.max(...others).toFixed(2)} cores busy during this run: rates and ratios are not comparable (CPU per transaction still is)`);
    }
    console.log(
      [
        ...(rawSplit.otherProcessesCores === undefined ? [] : [`  raw verify: other processes ${rawSplit.otherProcessesCores.toFixed(2)} cores`]),
        ...restRows.map(([r]) => `  REST admission (${r.kind}): ${r.timedTxs} timed after ${warmCount} warm-up in ${r.result.seconds.toFixed(2)} s, ${r.result.ok} requests, latency p50 ${r.result.p50Ms.toFixed(1)} ms p99 ${r.result.p99Ms.toFixed(1)} ms; ${formatCpu(r.cpu, r.timedTxs)}; pool journal ${r.journal.writes} writes in ${r.journal.syncs} synced batches`),
        `  in-process admission: ${directRuns.map((r) => r.txPerSecond.toFixed(0)).join(', ')} tx/s; median run ${direct.ok} in ${direct.seconds.toFixed(2)} s, p50 ${direct.p50Ms.toFixed(1)} ms; ${formatCpu(direct.cpu, direct.ok)}`,
        `  block: ${blockTxs.length} txs, ${expectedGas.toLocaleString('en-US')} gas, ${(blockSsz.length / MB).toFixed(1)} MB SSZ, ${(blockBody.length / MB).toFixed(1)} MB JSON`,
        `    every row: ${LEAD_BLOCKS} untimed blocks first on its node, imported as its timed ones are (its import path compiled, as on a node that imports every slot); then each times the next ${TIMED_BLOCKS} (heights ${LEAD_BLOCKS + 1}-${LEAD_BLOCKS + TIMED_BLOCKS}), cold ones never seen before\n` +
        `    warm rows: each block's ${blockTxs.length} txs admitted first, ${blockTxs.length} cache hits and an empty pool checked per block; every row: median, then each block in order; CPU over all blocks`,
        `    cold REST SSZ ${blocksLine(coldRest)}`,
        `    cold in-process ${blocksLine(coldInProcess)}`,
        `    cold in-process, every sender's key new ${blocksLine(coldNewSenders!)}`,
        `    warm REST SSZ ${blocksLine(warmRest)}`,
        `    warm REST JSON ${blocksLine(warmRestJson)}`,
        `    warm in-process ${blocksLine(warmInProcess)}`,
        `    warm REST SSZ on the memory DB ${blocksLine(warmRestMemory)}; the rows above run on LevelDB on disk`,
        `  pool memory: ${exposed ? 'global.gc (--expose-gc)' : 'gc through v8.setFlagsFromString (node was started without --expose-gc)'} before each reading; ${POOL_NONCES_PER_SENDER} entries per sender`,
      ].join('\n'),
    );
    for (const s of summaries) console.log(`\n${s}`);
  }
  return { results, details };
}
