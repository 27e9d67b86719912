/**
 * `svc devnet up` and `down` as library functions: prepare a directory (fresh genesis, or resume
 * the chain already there), choose ports, write the manifest, supervise the processes, and stop
 * them again. The CLI commands only parse flags and print.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadGenesisFile } from '../genesis/load.js';
import { DEVNET_PASSWORD, type GenesisPlan } from '../genesis/build.js';
import { type Genesis, parseGenesis } from '../core/genesis/genesis.js';
import type { GenesisJob } from './genesis-worker.js';
import { DEV_MNEMONIC } from '../wallet/derivation.js';
import { writeFileAtomic } from '../util/fs.js';
import { type DevnetLayout, devnetLayout, devnetOwnedPaths, nodeTokenPath } from './layout.js';
import { type DevnetManifest, type ManifestKey, type ManifestProcess, type ValidatorProcesses, DevnetError, MANIFEST_VERSION, currentPointerPath, isSvcProcess, pidAlive, readManifest, writeManifest } from './manifest.js';
import { type ShapeOptions, allocatePorts, describeNodes, devnetShape, metricsPortOfEachValidator, multiProcessPlan, preferredMetricsPorts, singleProcessPlan, validatorGroups } from './plan.js';
import { chooseValidatorProcesses, existingValidatorData } from './packing.js';
import { validatorsByNode } from './topology.js';
import { type ProcessSpec, Supervisor } from './supervisor.js';
import { writeMonitoring } from './monitoring.js';
import { DEFAULT_DEVNET_BRIDGE_RESERVE, DEFAULT_DEVNET_CHAIN_ID, DEFAULT_DEVNET_COUNTERPART_ALLOWANCE, devnetValidatorKeyOffset, readCounterpart } from './bridge.js';
import { BRIDGE_ADDRESS } from '../core/constants.js';

/** Network id of every devnet (like anvil's 31337); the chain id is svc-devnet unless --chain-id says otherwise. */
const DEVNET_NETWORK_ID = 1337;
/**
 * Argon2id memory (KiB) of the keystores a devnet writes, unless --kdf-memory says otherwise. Devnet
 * keys derive from the public dev mnemonic and are locked with a public password, so a memory-hard
 * KDF protects nothing there; at the production 64 MiB it only delays the start of every process.
 */
export const DEVNET_KDF_MEMORY_KIB = 256;
/** Prefunded accounts when `--accounts` is not given. */
export const DEFAULT_ACCOUNTS = 10;
/** Validators when `--validators` is not given and there is no chain to resume. */
export const DEFAULT_VALIDATORS = 4;

/** Inputs of `svc devnet up`. */
export interface UpOptions extends ShapeOptions {
  dir: string;
  validators?: number;
  accounts?: number;
  slotSeconds?: number;
  slotsPerEpoch?: number;
  /** `--validator-processes`: default per-node for a new chain, the existing layout for a resumed one (packing.ts). */
  validatorProcesses?: ValidatorProcesses;
  fresh: boolean;
  /** Argon2id memory for the keystores written with a fresh genesis. */
  kdfMemoryKib: number;
  /** Chain id of a new chain (default svc-devnet); its validator keys derive from their own index range. */
  chainId?: string;
  /** Directory of a running devnet this one is the bridge counterpart of (registered on both once up). */
  counterpart?: string;
  /** Wei allocated to the bridge at genesis (new chain; default DEFAULT_DEVNET_BRIDGE_RESERVE). */
  bridgeReserve?: bigint;
}

/** A prepared devnet: manifest written (state `starting`), processes planned, nothing running yet. */
export interface PreparedDevnet {
  layout: DevnetLayout;
  manifest: DevnetManifest;
  genesis: Genesis;
  /** True when an existing chain is resumed rather than created. */
  resumed: boolean;
  groups: ProcessSpec[][];
}

/** Every producing node runs at least one validator. */
export function checkNodesFit(producers: number, validators: number): void {
  if (producers > validators) {
    throw new DevnetError('USAGE', `--nodes ${producers} needs at least as many validators, and this chain has ${validators}: every producing node runs at least one`);
  }
}

/** Creates or resumes the devnet in `o.dir` and writes its manifest; starts nothing. */
export async function prepareDevnet(o: UpOptions): Promise<PreparedDevnet> {
  const layout = devnetLayout(o.dir);
  const previous = readManifestLenient(layout, o.fresh);
  if (previous && pidAlive(previous.supervisor?.pid)) {
    throw new DevnetError('DEVNET_RUNNING', `a devnet is already running in ${layout.dir} (supervisor pid ${previous.supervisor!.pid}); stop it with: svc devnet down --dir ${layout.dir}`);
  }
  // A fresh chain starts from the flags alone; a resumed one keeps its node counts unless told otherwise.
  const shape = devnetShape(o, o.fresh ? undefined : previous);
  // A new chain's validator count is known from the flags: refuse before anything is written.
  if (o.fresh || !existsSync(layout.genesis)) checkNodesFit(shape.producers, o.validators ?? DEFAULT_VALIDATORS);
  if (previous) await killOrphans(previous);
  if (o.fresh) await removeDevnetFiles(layout, { keepSupervisorLog: true });
  await mkdir(layout.dir, { recursive: true });

  const resumed = existsSync(layout.genesis);
  // The counterpart is read before a genesis is written, so a wrong directory costs nothing.
  const named = o.counterpart !== undefined ? readCounterpart(o.counterpart) : undefined;
  const counterpart = named ? named.record : o.fresh ? undefined : previous?.counterpart ?? undefined;
  if (counterpart && counterpart.chain_id === (resumed ? undefined : o.chainId ?? DEFAULT_DEVNET_CHAIN_ID)) {
    throw new DevnetError('USAGE', `--counterpart ${counterpart.dir} runs chain ${counterpart.chain_id}: give this devnet another --chain-id (its validator keys derive from it)`);
  }
  const genesis = resumed ? await checkResumable(layout, o) : await createGenesis(layout, o, named?.genesis);
  if (counterpart && counterpart.chain_id === genesis.chain_id) {
    throw new DevnetError('USAGE', `--counterpart ${counterpart.dir} runs chain ${genesis.chain_id}, as this devnet does: counterparts need distinct chain ids`);
  }
  checkNodesFit(shape.producers, genesis.validators.length);
  const count = shape.producers + shape.followers;
  for (let i = 0; i < count; i++) {
    const token = nodeTokenPath(layout, i);
    if (i < shape.producers && !existsSync(token)) await writeFileAtomic(token, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  }

  const packing = chooseValidatorProcesses({
    ...(o.validatorProcesses !== undefined ? { flag: o.validatorProcesses } : {}),
    singleProcess: o.singleProcess,
    producers: shape.producers,
    ...(resumed ? { existing: existingValidatorData(layout, genesis) } : {}),
    dir: layout.dir,
  });
  const n = genesis.validators.length;
  const held = validatorGroups(validatorsByNode(genesis.validators.map((v) => v.index), shape.producers), packing);
  const nodePorts = await allocatePorts(previous, count, preferredMetricsPorts(held, previous), shape.p2p);
  const keys = keystoreList(layout, genesis);
  const nodes = await describeNodes(layout, genesis, nodePorts.nodes, shape);
  const node0 = nodes[0]!;
  const ports = { ...node0.ports, validator_metrics: metricsPortOfEachValidator(held, nodePorts.validatorMetrics, n) };
  const groups = o.singleProcess ? singleProcessPlan(layout, node0, ports.validator_metrics[0]) : multiProcessPlan(layout, genesis, nodes, keys.validators, ports.validator_metrics, packing);
  const manifest: DevnetManifest = {
    version: MANIFEST_VERSION,
    dir: layout.dir,
    state: 'starting',
    mode: o.singleProcess ? 'single-process' : 'multi-process',
    validator_processes: packing,
    chain_id: genesis.chain_id,
    network_id: genesis.network_id,
    genesis: layout.genesis,
    genesis_time: genesis.genesis_time,
    slot_seconds: genesis.config.slot_seconds,
    slots_per_epoch: genesis.config.slots_per_epoch,
    endpoints: node0.endpoints,
    ports,
    validator_token_file: layout.token,
    p2p: shape.p2p,
    nodes,
    supervisor: { pid: process.pid, started_at: new Date().toISOString() },
    processes: groups.flat().map((s) => ({ name: s.name, pid: null, status: 'stopped', restarts: 0, log: s.log, data_dir: s.dataDir, port: s.port, ...(s.validators ? { validators: s.validators } : {}) })),
    validators: keys.validators,
    accounts: keys.accounts,
    faucet: keys.faucet,
    keystore_password: DEVNET_PASSWORD,
    mnemonic: DEV_MNEMONIC,
    ...(counterpart ? { counterpart } : {}),
    updated_at: '',
  };
  await writeManifest(manifest);
  await writeMonitoring(layout, manifest);
  await writeFileAtomic(currentPointerPath(), layout.dir + '\n', { force: true, mode: 0o644 });
  return { layout, manifest, genesis, resumed, groups };
}

/** Variables that would redirect the node processes away from the devnet's own files and keys. */
const NODE_ENV_DROPPED = ['SVC_EXECUTION_URL', 'SVC_BEACON_URL', 'SVC_GENESIS', 'SVC_VALIDATOR_PASSWORD', 'SVC_FAUCET_PASSWORD', 'SVC_DEVNET'];

/** The environment of the node processes: the caller's, minus what would point them elsewhere. */
export function nodeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const k of NODE_ENV_DROPPED) delete out[k];
  return out;
}

/** A started devnet. */
export interface RunningDevnet {
  manifest: DevnetManifest;
  supervisor: Supervisor;
  /** Stops every process and records the devnet as stopped. */
  stop(): Promise<void>;
}

/** Starts the prepared processes, keeps the manifest's process table current, and marks the devnet running. */
export async function startDevnet(prep: PreparedDevnet, env: NodeJS.ProcessEnv): Promise<RunningDevnet> {
  const { manifest } = prep;
  const supervisor = new Supervisor(prep.groups, { env: nodeEnv(env) });
  let writing = Promise.resolve();
  // Serialise manifest writes so a slow one never overwrites a newer table.
  const persist = () => {
    manifest.processes = syncProcesses(manifest.processes, supervisor);
    const snapshot = structuredClone(manifest);
    writing = writing.then(() => writeManifest(snapshot)).catch(() => undefined);
    return writing;
  };
  supervisor.on('change', () => void persist());
  try {
    await supervisor.start();
  } catch (err) {
    manifest.state = 'failed';
    manifest.supervisor = null;
    await persist();
    throw err;
  }
  manifest.state = 'running';
  await persist();
  return {
    manifest,
    supervisor,
    stop: async () => {
      manifest.state = 'stopping';
      await persist();
      await supervisor.stop();
      manifest.state = 'stopped';
      manifest.supervisor = null;
      await persist();
    },
  };
}

function syncProcesses(table: ManifestProcess[], supervisor: Supervisor): ManifestProcess[] {
  const live = new Map(supervisor.processes().map((p) => [p.name, p]));
  return table.map((row) => {
    const p = live.get(row.name);
    return p ? { ...row, pid: p.pid, status: p.status, restarts: p.restarts } : row;
  });
}

/** Result of `svc devnet down`. */
export interface DownResult {
  dir: string;
  /** Pids that were running and were stopped. */
  stopped: number[];
  cleaned: boolean;
}

/**
 * Stops a devnet: SIGTERM to its supervisor (which stops the nodes in order); if the supervisor
 * is gone, the nodes it left are stopped directly. `clean` then removes the devnet's files.
 */
export async function downDevnet(dir: string, opts: { clean: boolean; timeoutMs?: number }): Promise<DownResult> {
  const layout = devnetLayout(dir);
  const m = readManifestLenient(layout, opts.clean);
  if (!m) {
    if (!opts.clean) throw new DevnetError('DEVNET_NOT_FOUND', `no devnet in ${layout.dir} (no ${layout.manifest})`);
    await removeDevnetFiles(layout);
    return { dir: layout.dir, stopped: [], cleaned: true };
  }
  const pids = [m.supervisor?.pid, ...m.processes.map((p) => p.pid)].filter((p): p is number => !!p && pidAlive(p) && isSvcProcess(p));
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const sup = m.supervisor?.pid;
  if (sup && pids.includes(sup)) {
    process.kill(sup, 'SIGTERM');
    await waitGone([sup], deadline);
  }
  // Whatever is still alive (supervisor SIGKILLed earlier, or it did not finish in time).
  await terminate(pids.filter((p) => pidAlive(p)), deadline);
  const after = readManifestLenient(layout, true);
  if (after && after.state !== 'stopped') {
    after.state = 'stopped';
    after.supervisor = null;
    after.processes = after.processes.map((p) => ({ ...p, pid: null, status: 'stopped' }));
    await writeManifest(after);
  }
  if (opts.clean) await removeDevnetFiles(layout);
  return { dir: layout.dir, stopped: pids, cleaned: opts.clean };
}

/** The manifest, or undefined; a broken one counts as absent when `tolerant` (--fresh, --clean). */
function readManifestLenient(layout: DevnetLayout, tolerant: boolean): DevnetManifest | undefined {
  try {
    return readManifest(layout.dir);
  } catch (err) {
    if (tolerant) return undefined;
    throw err;
  }
}

/** Removes what a devnet created in its directory, and the directory itself if nothing else is left. */
async function removeDevnetFiles(layout: DevnetLayout, opts: { keepSupervisorLog?: boolean } = {}): Promise<void> {
  for (const p of devnetOwnedPaths(layout, opts)) await rm(p, { recursive: true, force: true });
  // Only when empty: the user may keep other files in the directory.
  await rmdir(layout.dir).catch(() => undefined);
  try {
    if (readFileSync(currentPointerPath(), 'utf8').trim() === layout.dir) await rm(currentPointerPath(), { force: true });
  } catch {
    // no pointer
  }
}

/** Node processes left by a supervisor that died without stopping them (they hold ports and database locks). */
async function killOrphans(m: DevnetManifest): Promise<void> {
  const pids = m.processes.map((p) => p.pid).filter((p): p is number => !!p && pidAlive(p) && isSvcProcess(p));
  await terminate(pids, Date.now() + 15_000);
}

async function terminate(pids: number[], deadline: number): Promise<void> {
  for (const pid of pids) signal(pid, 'SIGTERM');
  if (await waitGone(pids, deadline)) return;
  for (const pid of pids) signal(pid, 'SIGKILL');
  await waitGone(pids, Date.now() + 5_000);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function waitGone(pids: number[], deadline: number): Promise<boolean> {
  while (pids.some((p) => pidAlive(p))) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** The genesis plan of a devnet (`up`, and the genesis step of an exported network): the dev mnemonic, its chain id's validator key range, the bridge reserve. */
export function devnetGenesisPlan(o: Pick<UpOptions, 'validators' | 'accounts' | 'slotSeconds' | 'slotsPerEpoch' | 'chainId' | 'bridgeReserve'>, genesisTime: number): GenesisPlan {
  const chainId = o.chainId ?? DEFAULT_DEVNET_CHAIN_ID;
  return {
    validators: o.validators ?? DEFAULT_VALIDATORS,
    accounts: o.accounts ?? DEFAULT_ACCOUNTS,
    preset: 'devnet',
    chainId,
    networkId: DEVNET_NETWORK_ID,
    genesisTime,
    mnemonic: DEV_MNEMONIC,
    timing: { slotSeconds: o.slotSeconds, slotsPerEpoch: o.slotsPerEpoch },
    bridgeReserve: o.bridgeReserve ?? DEFAULT_DEVNET_BRIDGE_RESERVE,
    validatorKeyOffset: devnetValidatorKeyOffset(chainId),
  };
}

/**
 * Builds and writes a fresh devnet genesis in a worker thread (see genesis-worker.ts for why). A
 * counterpart (`up --counterpart`, already running, so its genesis is fixed) is listed in it with
 * the devnet allowance (at most the reserve): only the other direction needs a signed registration.
 */
async function createGenesis(layout: DevnetLayout, o: UpOptions, counterpart?: Genesis): Promise<Genesis> {
  const plan = devnetGenesisPlan(o, Math.floor(Date.now() / 1000));
  if (counterpart && counterpart.chain_id !== plan.chainId) {
    const reserve = plan.bridgeReserve ?? 0n;
    plan.bridgeCounterparts = [{ genesis: counterpart, allowance: reserve < DEFAULT_DEVNET_COUNTERPART_ALLOWANCE ? reserve : DEFAULT_DEVNET_COUNTERPART_ALLOWANCE }];
  }
  const job: GenesisJob = {
    plan,
    outDir: layout.genesisDir,
    password: DEVNET_PASSWORD,
    kdfMemoryKib: o.kdfMemoryKib,
  };
  const worker = new Worker(new URL('./genesis-worker.js', import.meta.url), { workerData: job });
  const [reply] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([err]) => Promise.reject(err as Error))])) as [{ genesis?: Genesis; error?: { code: string; message: string } }];
  await worker.terminate();
  if (reply.error) throw new DevnetError(reply.error.code, reply.error.message);
  return parseGenesis(reply.genesis);
}

/** Loads the existing genesis and refuses options that would need a different chain. */
async function checkResumable(layout: DevnetLayout, o: UpOptions): Promise<Genesis> {
  const g = await loadGenesisFile(layout.genesis);
  const differs = (what: string, have: number, want: number | undefined) => {
    if (want !== undefined && want !== have) {
      throw new DevnetError('DEVNET_MISMATCH', `${layout.dir} holds a devnet with ${what} ${have}, not ${want}: resume it without that flag, or start over with --fresh`);
    }
  };
  differs('--validators', g.validators.length, o.validators);
  differs('--slot-time', g.config.slot_seconds, o.slotSeconds);
  differs('--slots-per-epoch', g.config.slots_per_epoch, o.slotsPerEpoch);
  if (o.chainId !== undefined && o.chainId !== g.chain_id) {
    throw new DevnetError('DEVNET_MISMATCH', `${layout.dir} holds a devnet with --chain-id ${g.chain_id}, not ${o.chainId}: resume it without that flag, or start over with --fresh`);
  }
  return g;
}

function keystoreList(layout: DevnetLayout, g: Genesis): { validators: ManifestKey[]; accounts: ManifestKey[]; faucet: ManifestKey | null } {
  const validators = g.validators.map((v) => ({ index: v.index, address: v.address, wallet: join(layout.keystores, `validator-${v.index}.json`) }));
  const accounts: ManifestKey[] = [];
  const validatorSet = new Set(g.validators.map((v) => v.address));
  let i = 0;
  for (const a of g.alloc) {
    if (validatorSet.has(a.address) || a.address === g.config.faucet.address || a.address === BRIDGE_ADDRESS) continue;
    accounts.push({ index: i, address: a.address, wallet: join(layout.genesisDir, 'accounts', `account-${i}.json`) });
    i += 1;
  }
  const faucetWallet = join(layout.keystores, 'faucet.json');
  return { validators, accounts, faucet: { index: 0, address: g.config.faucet.address, wallet: faucetWallet } };
}
