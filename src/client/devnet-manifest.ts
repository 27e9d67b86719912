/**
 * The devnet manifest, `DIR/devnet.json`, as its readers see it: what `svc devnet up` created and
 * is running (endpoints, ports, pids, chain id, data paths, accounts). Every other `svc` command,
 * and the clients' default URLs, read it to find their default target, so it is parsed strictly
 * (a hand-edited or truncated file is a clear DEVNET_MANIFEST_INVALID, never a crash). It lives
 * with the clients because they read it and the devnet may import them, not the other way round;
 * src/devnet/manifest.ts writes it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SvcError } from '../core/errors.js';
import { svcHome } from '../wallet/store.js';

/**
 * Manifest format version this build writes (2: several nodes, P2P identities and bootnodes; 3:
 * validator processes holding several validators). Version 2 is still read: every such devnet
 * ran one process per validator, which is how it is resumed. An older build refuses version 3,
 * so it never resumes a packed devnet with per-validator data directories that lack the
 * slashing-protection history the packed process recorded.
 */
export const MANIFEST_VERSION = 3;
/** The manifest version before packed validator processes; read as `validator_processes: per-validator`. */
export const MANIFEST_VERSION_PER_VALIDATOR = 2;
/** The manifest's file name inside a devnet directory. */
export const MANIFEST_FILE = 'devnet.json';

/** Failures of `svc devnet` (bad manifest, already running, not running, unhealthy start). */
export class DevnetError extends SvcError {}

/**
 * How validators map to processes: all of a producing node's validators in one validator client
 * (`per-node`, one data directory per node; single-process devnets record this too, since `svc
 * node all` runs one client for every key in node 0's directory), or one process and data
 * directory per validator (`per-validator`).
 */
export type ValidatorProcesses = 'per-node' | 'per-validator';

/** Lifecycle of one supervised process. */
export type ProcessStatus = 'starting' | 'healthy' | 'crashed' | 'restarting' | 'failed' | 'stopped';

/** Where the supervisor is in its life. */
export type DevnetState = 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** One supervised process as recorded in the manifest. */
export interface ManifestProcess {
  name: string;
  pid: number | null;
  status: ProcessStatus;
  restarts: number;
  log: string;
  data_dir: string;
  /** Metrics (validators) or service port, when it has one. */
  port: number | null;
  /** Indices of the validators a validator process holds; absent for other processes. */
  validators?: number[];
}

/** A prefunded key as printed by `up`. */
export interface ManifestKey {
  index: number;
  address: string;
  /** Wallet file (keystore v2.0, password `keystore_password`). */
  wallet: string;
}

/** Public endpoints of one node. */
export interface ManifestEndpoints {
  execution: string;
  rpc: string;
  beacon: string;
  ws: string;
}

/** One layer's libp2p host: its identity (known before it starts) and whom it dials. */
export interface ManifestPeer {
  /** TCP port of the libp2p host. */
  port: number;
  peer_id: string;
  /** `/ip4/127.0.0.1/tcp/PORT/p2p/PEER_ID`: what other nodes list as a bootnode. */
  multiaddr: string;
  /** Multiaddrs this host dials at start and redials while disconnected. */
  bootnodes: string[];
}

/**
 * One node of the devnet: an execution and a beacon process. A producer's beacon serves
 * validators; a follower runs none and follows the chain from its peers.
 */
export interface ManifestNode {
  index: number;
  role: 'producer' | 'follower';
  /** Supervised process names of its execution and beacon. */
  processes: { execution: string; beacon: string };
  endpoints: ManifestEndpoints;
  ports: { rest: number; rpc: number; beacon: number };
  /** Null when the devnet runs without P2P. */
  p2p: { execution: ManifestPeer; beacon: ManifestPeer } | null;
  /** Indices of the validators attached to its beacon (empty for a follower). */
  validators: number[];
  /** Bearer token file its beacon accepts from validators; null for a follower. */
  validator_token_file: string | null;
  data_dirs: { execution: string; beacon: string };
}

/** The whole `devnet.json`. Top-level endpoints, ports and token are node 0's: the default target of other commands. */
export interface DevnetManifest {
  version: number;
  dir: string;
  state: DevnetState;
  mode: 'multi-process' | 'single-process';
  /** How validators map to processes and data directories (a resumed devnet keeps its own). */
  validator_processes: ValidatorProcesses;
  chain_id: string;
  network_id: number;
  genesis: string;
  genesis_time: number;
  slot_seconds: number;
  slots_per_epoch: number;
  endpoints: ManifestEndpoints;
  /** `validator_metrics`: each validator's metrics port, by index (validators of one process share theirs). */
  ports: { rest: number; rpc: number; beacon: number; validator_metrics: number[] };
  validator_token_file: string;
  /** Whether the nodes run libp2p hosts (`--no-p2p` turns them off). */
  p2p: boolean;
  /** Node 0 first; producers, then followers. */
  nodes: ManifestNode[];
  supervisor: { pid: number; started_at: string } | null;
  processes: ManifestProcess[];
  validators: ManifestKey[];
  accounts: ManifestKey[];
  faucet: ManifestKey | null;
  keystore_password: string;
  mnemonic: string;
  /** The devnet this one was started as the counterpart of (`up --counterpart DIR`), registered on both chains; absent otherwise. */
  counterpart?: ManifestCounterpart | null;
  updated_at: string;
}

/** A counterpart devnet as a manifest records it. */
export interface ManifestCounterpart {
  dir: string;
  chain_id: string;
  /** 0x genesis hash: the counterpart's name in BIDs. */
  genesis_hash: string;
}

/** `DIR/devnet.json`. */
export function manifestPath(dir: string): string {
  return join(resolve(dir), MANIFEST_FILE);
}

/** Default devnet directory: $SVC_HOME/devnet. */
export function defaultDevnetDir(): string {
  return join(svcHome(), 'devnet');
}

/** File in $SVC_HOME naming the directory of the devnet `up` last started (for `--dir` devnets). */
export function currentPointerPath(): string {
  return join(svcHome(), 'current-devnet');
}

/**
 * The devnet directory other commands target: $SVC_DEVNET, else the one `up` last started, else
 * $SVC_HOME/devnet.
 */
export function currentDevnetDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_DEVNET) return resolve(env.SVC_DEVNET);
  try {
    const pointed = readFileSync(currentPointerPath(), 'utf8').trim();
    if (pointed) return resolve(pointed);
  } catch {
    // no pointer: the default directory
  }
  return defaultDevnetDir();
}

/** Reads `DIR/devnet.json`; undefined when absent, DEVNET_MANIFEST_INVALID when unreadable or malformed. */
export function readManifest(dir: string): DevnetManifest | undefined {
  const path = manifestPath(dir);
  if (!existsSync(path)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw invalid(path, (err as Error).message);
  }
  return parseManifest(json, path);
}

function invalid(path: string, why: string): DevnetError {
  return new DevnetError('DEVNET_MANIFEST_INVALID', `${path} is not a devnet manifest (${why}); remove the directory or run: svc devnet up --fresh --dir ${resolve(path, '..')}`);
}

/** Checks the fields commands rely on (types only: values are this tool's own output). */
export function parseManifest(json: unknown, path: string): DevnetManifest {
  const fail = (why: string) => invalid(path, why);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw fail('not a JSON object');
  const m = json as Record<string, unknown>;
  if (m.version === MANIFEST_VERSION_PER_VALIDATOR) upgradePerValidator(m);
  if (m.version !== MANIFEST_VERSION) throw fail(`version ${JSON.stringify(m.version)}, expected ${MANIFEST_VERSION}`);
  if (m.validator_processes !== 'per-node' && m.validator_processes !== 'per-validator') throw fail('validator_processes must be per-node or per-validator');
  for (const k of ['dir', 'state', 'mode', 'chain_id', 'genesis', 'validator_token_file', 'keystore_password', 'mnemonic'] as const) {
    if (typeof m[k] !== 'string') throw fail(`${k} must be a string`);
  }
  for (const k of ['network_id', 'genesis_time', 'slot_seconds', 'slots_per_epoch'] as const) {
    if (!Number.isSafeInteger(m[k])) throw fail(`${k} must be an integer`);
  }
  const endpoints = m.endpoints as Record<string, unknown> | undefined;
  for (const k of ['execution', 'rpc', 'beacon', 'ws']) {
    if (typeof endpoints?.[k] !== 'string') throw fail(`endpoints.${k} must be a string`);
  }
  const ports = m.ports as Record<string, unknown> | undefined;
  for (const k of ['rest', 'rpc', 'beacon']) if (!Number.isSafeInteger(ports?.[k])) throw fail(`ports.${k} must be an integer`);
  if (!Array.isArray(ports?.validator_metrics)) throw fail('ports.validator_metrics must be an array');
  if (!['starting', 'running', 'stopping', 'stopped', 'failed'].includes(m.state as string)) throw fail(`unknown state ${JSON.stringify(m.state)}`);
  if (!Array.isArray(m.processes) || !m.processes.every((p) => typeof p === 'object' && p !== null && typeof (p as ManifestProcess).name === 'string' && typeof (p as ManifestProcess).log === 'string')) {
    throw fail('processes must be a list of {name, log, ...}');
  }
  (m.processes as ManifestProcess[]).forEach((p, i) => {
    if (p.validators !== undefined && (!Array.isArray(p.validators) || !p.validators.every((v) => Number.isSafeInteger(v) && v >= 0))) throw fail(`processes[${i}].validators must be a list of validator indices`);
  });
  const isKey = (k: unknown) => typeof k === 'object' && k !== null && Number.isSafeInteger((k as ManifestKey).index) && typeof (k as ManifestKey).address === 'string' && typeof (k as ManifestKey).wallet === 'string';
  for (const k of ['validators', 'accounts'] as const) {
    if (!Array.isArray(m[k]) || !(m[k] as unknown[]).every(isKey)) throw fail(`${k} must be a list of {index, address, wallet}`);
  }
  if (m.faucet !== null && !isKey(m.faucet)) throw fail('faucet must be null or {index, address, wallet}');
  const sup = m.supervisor as Record<string, unknown> | null | undefined;
  if (sup !== null && (typeof sup !== 'object' || !Number.isSafeInteger(sup.pid))) throw fail('supervisor must be null or {pid, started_at}');
  if (typeof m.p2p !== 'boolean') throw fail('p2p must be a boolean');
  if (!Array.isArray(m.nodes) || m.nodes.length === 0) throw fail('nodes must be a non-empty list');
  m.nodes.forEach((n, i) => checkNode(n, i, m.p2p as boolean, fail));
  const cp = m.counterpart;
  if (cp !== undefined && cp !== null && (!isObject(cp) || typeof cp.dir !== 'string' || typeof cp.chain_id !== 'string' || typeof cp.genesis_hash !== 'string')) {
    throw fail('counterpart must be null or {dir, chain_id, genesis_hash}');
  }
  return json as DevnetManifest;
}

/**
 * A version-2 manifest as this version reads it: every validator ran in its own process
 * `validator-K` with its own data directory, so it resumes as `per-validator`.
 */
function upgradePerValidator(m: Record<string, unknown>): void {
  m.version = MANIFEST_VERSION;
  m.validator_processes = 'per-validator';
  if (!Array.isArray(m.processes)) return;
  for (const p of m.processes as unknown[]) {
    if (!isObject(p) || typeof p.name !== 'string') continue;
    const k = /^validator-(\d+)$/.exec(p.name);
    if (k) p.validators = [Number(k[1])];
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPort = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0 && (v as number) < 65536;

/** Checks `nodes[i]`: index in order, a known role, endpoints, ports, P2P identities as `p2p` says. */
function checkNode(raw: unknown, i: number, p2p: boolean, fail: (why: string) => DevnetError): void {
  const at = `nodes[${i}]`;
  if (!isObject(raw)) throw fail(`${at} must be an object`);
  if (raw.index !== i) throw fail(`${at}.index must be ${i}`);
  if (raw.role !== 'producer' && raw.role !== 'follower') throw fail(`${at}.role must be producer or follower`);
  for (const group of ['processes', 'data_dirs'] as const) {
    const g = raw[group];
    if (!isObject(g) || typeof g.execution !== 'string' || typeof g.beacon !== 'string') throw fail(`${at}.${group} must be {execution, beacon} strings`);
  }
  const e = raw.endpoints;
  for (const k of ['execution', 'rpc', 'beacon', 'ws']) if (!isObject(e) || typeof e[k] !== 'string') throw fail(`${at}.endpoints.${k} must be a string`);
  const ports = raw.ports;
  for (const k of ['rest', 'rpc', 'beacon']) if (!isObject(ports) || !isPort(ports[k])) throw fail(`${at}.ports.${k} must be a port number`);
  if (!Array.isArray(raw.validators) || !raw.validators.every((v) => Number.isSafeInteger(v) && v >= 0)) throw fail(`${at}.validators must be a list of validator indices`);
  if (raw.role === 'follower' && raw.validators.length > 0) throw fail(`${at} is a follower but lists validators`);
  if (raw.validator_token_file !== null && typeof raw.validator_token_file !== 'string') throw fail(`${at}.validator_token_file must be null or a string`);
  if (!p2p) {
    if (raw.p2p !== null) throw fail(`${at}.p2p must be null when p2p is off`);
    return;
  }
  if (!isObject(raw.p2p)) throw fail(`${at}.p2p must be {execution, beacon}`);
  for (const layer of ['execution', 'beacon'] as const) {
    const peer = raw.p2p[layer];
    const where = `${at}.p2p.${layer}`;
    if (!isObject(peer)) throw fail(`${where} must be {port, peer_id, multiaddr, bootnodes}`);
    if (!isPort(peer.port)) throw fail(`${where}.port must be a port number`);
    if (typeof peer.peer_id !== 'string' || peer.peer_id === '') throw fail(`${where}.peer_id must be a non-empty string`);
    if (typeof peer.multiaddr !== 'string' || !peer.multiaddr.endsWith(`/p2p/${peer.peer_id}`)) throw fail(`${where}.multiaddr must end with /p2p/<peer_id>`);
    if (!Array.isArray(peer.bootnodes) || !peer.bootnodes.every((b) => typeof b === 'string')) throw fail(`${where}.bootnodes must be a list of multiaddrs`);
  }
}

/** Whether a process with this pid exists (signal 0 probes without delivering anything). */
export function pidAlive(pid: number | null | undefined): boolean {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The manifest of the devnet other commands target, if one is up (its supervisor alive). */
export function runningDevnet(env: NodeJS.ProcessEnv = process.env): DevnetManifest | undefined {
  let m: DevnetManifest | undefined;
  try {
    m = readManifest(currentDevnetDir(env));
  } catch {
    // A broken manifest must not break unrelated commands; `svc devnet status` reports it.
    return undefined;
  }
  if (!m || (m.state !== 'running' && m.state !== 'starting') || !pidAlive(m.supervisor?.pid)) return undefined;
  return m;
}
