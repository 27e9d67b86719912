/**
 * What a devnet runs, before anything runs: the node counts `up` accepts, each node's ports, P2P
 * identities and bootnodes (its manifest entry), and the processes with their flags in start
 * order. lifecycle.ts writes the result into the manifest and hands the processes to the
 * supervisor.
 */
import type { Genesis } from '../core/genesis/genesis.js';
import { genesisHash } from '../core/genesis/genesis.js';
import { beaconRoutes } from '../api/routes/beacon.js';
import { eventRoutes } from '../api/routes/events.js';
import { validatorClientRoutes } from '../api/routes/validator.js';
import { writePeerKeyFromSeed } from '../node/p2p/identity.js';
import { type DevnetLayout, logPath, nodeDataDirs, nodeProcessNames, nodeTokenPath, nodeValidatorsDataDir, validatorDataDir } from './layout.js';
import { type DevnetManifest, type ManifestKey, type ManifestNode, type ManifestPeer, type ValidatorProcesses, DevnetError } from './manifest.js';
import { choosePorts } from './ports.js';
import { LIGHT_PROCESS_FLAGS, type ProcessSpec } from './supervisor.js';
import { type NodePorts, P2P_LISTEN_HOST, bootnodesOf, loopbackMultiaddr, peerKeySeed, preferredNodePorts, validatorsByNode } from './topology.js';
import * as executionRoutes from '../api/routes/execution.js';

/**
 * First validator metrics port tried: validator K's process tries this + K (one process per
 * validator), node I's validator process this + I (packed); an exported validator's metrics port.
 */
export const PREFERRED_VALIDATOR_METRICS = 8547;

/** The values of `--validator-processes`, the default first. */
export const VALIDATOR_PROCESS_MODES: readonly ValidatorProcesses[] = ['per-node', 'per-validator'];

/** The flags of `up` that shape the network. */
export interface ShapeOptions {
  /** Producing nodes; default 1, or the resumed devnet's. */
  nodes?: number;
  /** Read-only nodes; default 0, or the resumed devnet's. */
  followers?: number;
  /** Run libp2p hosts (default true). */
  p2p?: boolean;
  singleProcess: boolean;
}

/** How many nodes of each kind, and whether they talk P2P. */
export interface DevnetShape {
  producers: number;
  followers: number;
  p2p: boolean;
}

/**
 * The node counts of this `up`: the flags, else the resumed devnet's, else one producer and no
 * follower. Refuses combinations that cannot run: several nodes without P2P (they could not find
 * each other), or several in single-process mode (`svc node all` runs every validator of the chain).
 */
export function devnetShape(o: ShapeOptions, previous?: Pick<DevnetManifest, 'nodes' | 'p2p'>): DevnetShape {
  const producers = o.nodes ?? previous?.nodes.filter((n) => n.role === 'producer').length ?? 1;
  const followers = o.followers ?? previous?.nodes.filter((n) => n.role === 'follower').length ?? 0;
  const p2p = o.p2p ?? true;
  if (producers < 1) throw new DevnetError('USAGE', `--nodes must be at least 1, got ${producers}`);
  if (followers < 0) throw new DevnetError('USAGE', `--followers must be at least 0, got ${followers}`);
  const many = producers + followers > 1;
  if (many && !p2p) throw new DevnetError('USAGE', `--no-p2p runs one node alone; ${producers} node(s) and ${followers} follower(s) need P2P to find each other`);
  if (many && o.singleProcess) throw new DevnetError('USAGE', '--single-process runs one node (svc node all); use one process per layer for --nodes above 1 or --followers');
  return { producers, followers, p2p };
}

/**
 * Ports of every node (previous run's first, else the preferred ones; each replaced by a free
 * port when taken), then one metrics port per entry of `metrics` (its preferred port).
 */
export async function allocatePorts(previous: DevnetManifest | undefined, count: number, metrics: readonly number[], p2p: boolean): Promise<{ nodes: NodePorts[]; validatorMetrics: number[] }> {
  const wanted: number[] = [];
  const perNode = p2p ? 5 : 3;
  for (let i = 0; i < count; i++) {
    const pref = preferredNodePorts(i);
    const was = previous?.nodes[i];
    wanted.push(was?.ports.rest ?? pref.rest, was?.ports.rpc ?? pref.rpc, was?.ports.beacon ?? pref.beacon);
    if (p2p) wanted.push(was?.p2p?.beacon.port ?? pref.beaconP2p, was?.p2p?.execution.port ?? pref.executionP2p);
  }
  wanted.push(...metrics);
  const chosen = await choosePorts(wanted);
  const nodes = Array.from({ length: count }, (_, i): NodePorts => {
    const [rest, rpc, beacon, beaconP2p, executionP2p] = chosen.slice(i * perNode, i * perNode + perNode);
    // Without P2P the P2P ports are never used; 0 marks them so.
    return { rest: rest!, rpc: rpc!, beacon: beacon!, beaconP2p: beaconP2p ?? 0, executionP2p: executionP2p ?? 0 };
  });
  return { nodes, validatorMetrics: chosen.slice(count * perNode) };
}

/**
 * Which validators share a process (and with it a metrics port and a data directory): every
 * producing node's validators together (`per-node`, and `svc node all` in single-process mode),
 * or each validator alone (`per-validator`).
 */
export function validatorGroups(byNode: readonly (readonly number[])[], mode: ValidatorProcesses): number[][] {
  return mode === 'per-node' ? byNode.filter((vs) => vs.length > 0).map((vs) => [...vs]) : byNode.flat().sort((a, b) => a - b).map((v) => [v]);
}

/**
 * Preferred metrics port of each validator group: the port its first validator had in the
 * previous run, else PREFERRED_VALIDATOR_METRICS plus the group's position.
 */
export function preferredMetricsPorts(groups: readonly (readonly number[])[], previous: Pick<DevnetManifest, 'ports'> | undefined): number[] {
  return groups.map((g, k) => previous?.ports.validator_metrics[g[0]!] ?? PREFERRED_VALIDATOR_METRICS + k);
}

/** The metrics port of every validator (index order) from each group's port: validators of one process share it. */
export function metricsPortOfEachValidator(groups: readonly (readonly number[])[], ports: readonly number[], validators: number): number[] {
  const out = new Array<number>(validators).fill(0);
  groups.forEach((g, k) => g.forEach((v) => (out[v] = ports[k]!)));
  return out;
}

/**
 * The manifest entry of every node. With P2P, each host's key is written into its data
 * directory from a seed of the genesis hash, node and layer before anything starts, so the
 * peer ids (and with them every node's bootnode list) are known in advance and stable across
 * resumes.
 */
export async function describeNodes(layout: DevnetLayout, g: Genesis, ports: NodePorts[], shape: DevnetShape): Promise<ManifestNode[]> {
  const byNode = validatorsByNode(g.validators.map((v) => v.index), shape.producers);
  const hash = genesisHash(g);
  const ids: Array<{ execution: string; beacon: string } | null> = [];
  for (let i = 0; i < ports.length; i++) {
    if (!shape.p2p) {
      ids.push(null);
      continue;
    }
    const dirs = nodeDataDirs(layout, i);
    ids.push({
      execution: await writePeerKeyFromSeed(dirs.execution, peerKeySeed(hash, i, 'execution')),
      beacon: await writePeerKeyFromSeed(dirs.beacon, peerKeySeed(hash, i, 'beacon')),
    });
  }
  const addrs = (layer: 'execution' | 'beacon') => ports.map((p, i) => loopbackMultiaddr(layer === 'beacon' ? p.beaconP2p : p.executionP2p, ids[i]?.[layer] ?? ''));
  const execAddrs = addrs('execution');
  const beaconAddrs = addrs('beacon');
  return ports.map((p, i): ManifestNode => {
    const producer = i < shape.producers;
    const id = ids[i];
    return {
      index: i,
      role: producer ? 'producer' : 'follower',
      processes: nodeProcessNames(i),
      endpoints: { execution: `http://127.0.0.1:${p.rest}`, rpc: `http://127.0.0.1:${p.rpc}`, beacon: `http://127.0.0.1:${p.beacon}`, ws: `ws://127.0.0.1:${p.beacon}${eventRoutes.stream.path}` },
      ports: { rest: p.rest, rpc: p.rpc, beacon: p.beacon },
      p2p: id
        ? {
            execution: { port: p.executionP2p, peer_id: id.execution, multiaddr: execAddrs[i]!, bootnodes: bootnodesOf(i, execAddrs) },
            beacon: { port: p.beaconP2p, peer_id: id.beacon, multiaddr: beaconAddrs[i]!, bootnodes: bootnodesOf(i, beaconAddrs) },
          }
        : null,
      validators: producer ? byNode[i]! : [],
      validator_token_file: producer ? nodeTokenPath(layout, i) : null,
      data_dirs: nodeDataDirs(layout, i),
    };
  });
}

/** The P2P flags of one layer's process: listen on `host`, dial `bootnodes` (`--no-p2p` when `peer` is null). */
export function p2pArgs(peer: Pick<ManifestPeer, 'port' | 'bootnodes'> | null | undefined, host: string = P2P_LISTEN_HOST): string[] {
  if (!peer) return ['--no-p2p'];
  const args = ['--p2p-host', host, '--p2p-port', String(peer.port)];
  if (peer.bootnodes.length > 0) args.push('--bootnodes', peer.bootnodes.join(','));
  return args;
}

/**
 * `svc node execution`'s arguments on a devnet. One verifier thread: a devnet's load is a few
 * transactions per slot, and each thread is a V8 isolate with its own WebAssembly instance
 * (~10 MB resident). Shared with `svc devnet export`, so an exported network runs the same flags.
 */
export function executionArgs(o: { genesis: string; dataDir: string; rest: number; rpc: number; p2p: string[] }): string[] {
  return ['node', 'execution', '--genesis', o.genesis, '--data-dir', o.dataDir, '--rest-port', String(o.rest), '--rpc-port', String(o.rpc), '--verifier-threads', '1', ...o.p2p];
}

/** `svc node beacon`'s arguments on a devnet (a follower has no `tokenFile`); shared with `svc devnet export`. */
export function beaconArgs(o: { genesis: string; dataDir: string; port: number; executionUrl: string; tokenFile: string | null; p2p: string[] }): string[] {
  const token = o.tokenFile ? ['--validator-token-file', o.tokenFile] : [];
  return ['node', 'beacon', '--genesis', o.genesis, '--data-dir', o.dataDir, '--port', String(o.port), '--execution-url', o.executionUrl, ...token, ...o.p2p];
}

/** Where a validator process finds its keys: keystore files (`--keystore`, repeated), or every `*.json` in a directory (`--keystores-dir`). */
export type ValidatorKeySource = { keystores: readonly string[] } | { keystoresDir: string };

/** `svc node validator`'s arguments on a devnet (every key of the process, one data dir and one metrics port); shared with `svc devnet export`. */
export function validatorArgs(o: { keys: ValidatorKeySource; genesis: string; beaconUrl: string; tokenFile: string; dataDir: string; metricsPort: number }): string[] {
  const keys = 'keystoresDir' in o.keys ? ['--keystores-dir', o.keys.keystoresDir] : o.keys.keystores.flatMap((k) => ['--keystore', k]);
  return ['node', 'validator', ...keys, '--genesis', o.genesis, '--beacon-url', o.beaconUrl, '--token-file', o.tokenFile, '--data-dir', o.dataDir, '--metrics-port', String(o.metricsPort)];
}

/** Supervised name of the validator process holding `validators` of node `node`: `validator-K` alone, else `validators` (node 0) or `validators-I`. */
export function validatorProcessName(node: number, validators: readonly number[], mode: ValidatorProcesses): string {
  if (mode === 'per-validator') return `validator-${validators[0]}`;
  return node === 0 ? 'validators' : `validators-${node}`;
}

/**
 * One process per layer, and per node (`per-node`: all of a node's validators in one `svc node
 * validator`) or per validator, in start groups. `metricsPorts` is each validator's metrics port
 * (index order; validators of one process share theirs).
 */
export function multiProcessPlan(layout: DevnetLayout, g: Genesis, nodes: ManifestNode[], validators: ManifestKey[], metricsPorts: number[], mode: ValidatorProcesses): ProcessSpec[][] {
  const executions: ProcessSpec[] = [];
  const beacons: ProcessSpec[][] = [];
  for (const node of nodes) {
    const execUrl = node.endpoints.execution;
    const names = node.processes;
    executions.push({
      name: names.execution,
      args: executionArgs({ genesis: layout.genesis, dataDir: node.data_dirs.execution, rest: node.ports.rest, rpc: node.ports.rpc, p2p: p2pArgs(node.p2p?.execution) }),
      log: logPath(layout, names.execution),
      dataDir: node.data_dirs.execution,
      port: node.ports.rest,
      healthUrls: [`${execUrl}${executionRoutes.health.path}`],
    });
    const beacon: ProcessSpec = {
      name: names.beacon,
      stopRank: 1,
      nodeFlags: LIGHT_PROCESS_FLAGS,
      args: beaconArgs({ genesis: layout.genesis, dataDir: node.data_dirs.beacon, port: node.ports.beacon, executionUrl: execUrl, tokenFile: node.validator_token_file, p2p: p2pArgs(node.p2p?.beacon) }),
      log: logPath(layout, names.beacon),
      dataDir: node.data_dirs.beacon,
      port: node.ports.beacon,
      healthUrls: [`${node.endpoints.beacon}${beaconRoutes.health.path}`],
    };
    const vals = validatorGroups([node.validators], mode).map((held): ProcessSpec => {
      const metrics = metricsPorts[held[0]!]!;
      const name = validatorProcessName(node.index, held, mode);
      const dataDir = mode === 'per-node' ? nodeValidatorsDataDir(layout, node.index) : validatorDataDir(layout, g.validators[held[0]!]!.address);
      return {
        name,
        stopRank: 2,
        nodeFlags: LIGHT_PROCESS_FLAGS,
        args: validatorArgs({ keys: { keystores: held.map((v) => validators[v]!.wallet) }, genesis: layout.genesis, beaconUrl: node.endpoints.beacon, tokenFile: node.validator_token_file!, dataDir, metricsPort: metrics }),
        log: logPath(layout, name),
        dataDir,
        port: metrics,
        healthUrls: [`http://127.0.0.1:${metrics}${validatorClientRoutes.metrics.path}`],
        validators: held,
      };
    });
    beacons.push([beacon, ...vals]);
  }
  return startGroups(nodes, executions, beacons);
}

/**
 * Start order. Execution goes first, alone: on two cores, starting all at once made every
 * process (and the first block) later. Each beacon starts once its execution is healthy, with
 * its validators rather than after them: their start-up (oclif, key, RANDAO chain) is the
 * slowest, and they retry the beacon until it answers. Node 0 first (everyone's bootnode), the
 * other producers' executions alongside node 0's beacon, followers last.
 */
export function startGroups<T>(nodes: ReadonlyArray<Pick<ManifestNode, 'role'>>, executions: T[], beacons: T[][]): T[][] {
  const producers = nodes.map((n, i) => (n.role === 'producer' ? i : -1)).filter((i) => i > 0);
  const followers = nodes.map((n, i) => (n.role === 'follower' ? i : -1)).filter((i) => i > 0);
  const groups: T[][] = [
    [executions[0]!],
    [...beacons[0]!, ...producers.map((i) => executions[i]!)],
    [...producers.flatMap((i) => beacons[i]!), ...followers.map((i) => executions[i]!)],
    followers.flatMap((i) => beacons[i]!),
  ];
  return groups.filter((g) => g.length > 0);
}

/** One `svc node all` for the single node: one validator client holding every key, its metrics on `metricsPort` (undefined: none). */
export function singleProcessPlan(layout: DevnetLayout, node: ManifestNode, metricsPort: number | undefined): ProcessSpec[][] {
  const p2p = node.p2p ? ['--p2p-port', String(node.p2p.beacon.port), '--execution-p2p-port', String(node.p2p.execution.port)] : ['--no-p2p'];
  const metrics = metricsPort !== undefined ? ['--validator-metrics-port', String(metricsPort)] : [];
  return [
    [
      {
        name: 'node',
        args: ['node', 'all', '--genesis', layout.genesis, '--data-dir', layout.data, '--rest-port', String(node.ports.rest), '--rpc-port', String(node.ports.rpc), '--beacon-port', String(node.ports.beacon), ...p2p, ...metrics],
        log: logPath(layout, 'node'),
        dataDir: layout.data,
        port: node.ports.beacon,
        healthUrls: [`${node.endpoints.execution}${executionRoutes.health.path}`, `${node.endpoints.beacon}${beaconRoutes.health.path}`],
        validators: [...node.validators],
      },
    ],
  ];
}
