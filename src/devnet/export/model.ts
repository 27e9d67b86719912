/**
 * The network `svc devnet export` describes, before any format: the genesis (built here exactly
 * as the genesis step will build it inside the cluster, so its hash, and with it every peer id,
 * is known now), the nodes with their roles and validators, and the `svc` command of every
 * container. compose.ts and k8s.ts only place these commands into their engine's objects; the
 * flags themselves come from plan.ts, the builders `svc devnet up` runs its processes with.
 */
import { toHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { beaconRoutes } from '../../api/routes/beacon.js';
import { validatorClientRoutes } from '../../api/routes/validator.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { MAX_GENESIS_VALIDATORS, buildGenesis } from '../../genesis/build.js';
import { peerIdFromSeed } from '../../node/p2p/identity.js';
import { DEFAULT_P2P_HOST } from '../../node/p2p/types.js';
import { DEFAULT_ACCOUNTS, checkNodesFit, devnetGenesisPlan } from '../lifecycle.js';
import { PREFERRED_VALIDATOR_METRICS, type ValidatorKeySource, beaconArgs, devnetShape, executionArgs, p2pArgs, validatorArgs } from '../plan.js';
import type { ValidatorProcesses } from '../manifest.js';
import { LIGHT_PROCESS_FLAGS } from '../supervisor.js';
import { MAX_DEVNET_NODES, type P2pLayer, bootnodesOf, peerKeySeed, preferredNodePorts, validatorsByNode } from '../topology.js';
import * as executionRoutes from '../../api/routes/execution.js';

/** Failures of `svc devnet export` and `svc devnet genesis`; the message names the field. */
export class ExportError extends SvcError {}

/** Output formats of `svc devnet export`. */
export type ExportFormat = 'compose' | 'k8s';
/** Every format, for the flag's options. */
export const EXPORT_FORMATS: readonly ExportFormat[] = ['compose', 'k8s'];

/** Default image of the exported containers (built from the repository's Dockerfile). */
export const DEFAULT_IMAGE = 'svc:0.1.0';

/** Where things live inside every container; the image creates these directories for its non-root user. */
export const CONTAINER_PATHS = {
  /** Shared volume the genesis step writes (genesis.json, keystores, P2P keys). */
  genesisDir: '/svc/genesis',
  /** A process's own persistent volume. */
  dataDir: '/data',
  /** Where Compose secrets and the Kubernetes Secret are mounted (one file per secret). */
  secretsDir: '/run/secrets',
  /** The image's installation (healthcheck script). */
  app: '/app',
} as const;

/** The image's `node` user (Dockerfile `USER node`): every svc container runs as it. */
export const IMAGE_USER = { uid: 1000, gid: 1000 } as const;

/**
 * Host modes of the exported secret files and their directory. Compose mounts a file secret as a
 * bind mount, which keeps the host file's owner and mode (a secret's uid/gid/mode attributes are
 * not applied to file sources), and the exporter may be root or anyone else: so the files are
 * readable by every user (the image's among them), and the directory, which no container sees, is
 * the exporter's alone, so no other user of the host reaches them.
 */
export const SECRET_FILE_MODE = 0o444;
/** See SECRET_FILE_MODE. */
export const SECRETS_DIR_MODE = 0o700;

/** The secrets of an exported network: files under `secrets/`, never inline in a command or environment value. */
export const SECRET_NAMES = ['keystore-password', 'validator-token', 'engine-jwt'] as const;
/** One of SECRET_NAMES. */
export type SecretName = (typeof SECRET_NAMES)[number];

/**
 * Ports inside every container: each service has its own address, so all of them use node 0's
 * devnet defaults (spec ports 8546/8545/8080, P2P 9000 beacon and 9001 execution) and validator
 * 0's metrics port.
 */
export const CONTAINER_PORTS = { ...preferredNodePorts(0), validatorMetrics: PREFERRED_VALIDATOR_METRICS } as const;

/**
 * Highest resident memory measured per kind of process of a running 4-validator devnet (2 nodes,
 * 1 follower: `svc devnet up --validators 4 --nodes 2 --followers 1 --detach`, then VmRSS from
 * /proc/<pid>/status of each pid in `svc devnet status --json`, after 8 minutes / 62 finalised
 * epochs; docs/deploy.md has every figure). Kubernetes requests are these plus headroom; limits
 * twice the request.
 */
export const MEASURED_RSS_MIB = { execution: 134, beacon: 137, validator: 106 } as const;

/**
 * Resident memory each key beyond the first adds to a packed validator process, rounded up from
 * (RSS with 64 keys − RSS with 1 key) / 63 ≈ (131 − 95) / 63 ≈ 0.6 MiB, both about a minute into
 * `svc devnet up` (docs/deploy.md).
 */
export const MEASURED_VALIDATOR_KEY_MIB = 1;

/** Memory request of a container running `kind` (a validator holding `keys` keys): the measured RSS plus a quarter, rounded up to 16 MiB. */
export function memoryRequestMib(kind: keyof typeof MEASURED_RSS_MIB, keys = 1): number {
  const rss = MEASURED_RSS_MIB[kind] + (kind === 'validator' ? MEASURED_VALIDATOR_KEY_MIB * (keys - 1) : 0);
  return Math.ceil((rss * 1.25) / 16) * 16;
}

/** Inputs of an export. */
export interface ExportOptions {
  validators: number;
  /** Producing nodes (`--nodes`). */
  producers: number;
  followers: number;
  accounts?: number;
  slotSeconds?: number;
  slotsPerEpoch?: number;
  /** Unix seconds of slot 0: fixed at export time, since the peer ids derive from the genesis hash. */
  genesisTime: number;
  image: string;
  /** Argon2id memory of the keystores the genesis step writes. */
  kdfMemoryKib: number;
  /** `--validator-processes`: one validator container per producing node (default `per-node`), or one per validator. */
  validatorProcesses?: ValidatorProcesses;
}

/** The validator containers of an export (`per-node` unless the options say otherwise). */
export function exportPacking(o: Pick<ExportOptions, 'validatorProcesses'>): ValidatorProcesses {
  return o.validatorProcesses ?? 'per-node';
}

/** One node of the exported network. */
export interface ExportNode {
  /** Devnet node index (producers first): the peer key seed's index, as on `svc devnet up`. */
  index: number;
  role: 'producer' | 'follower';
  /** Index among nodes of its role: the Kubernetes StatefulSet ordinal. */
  ordinal: number;
  validators: number[];
  peerIds: Record<P2pLayer, string>;
}

/** The planned network. */
export interface ExportNetwork {
  options: ExportOptions;
  genesis: Genesis;
  genesisHash: string;
  nodes: ExportNode[];
}

/** Refuses counts that cannot form a network, naming the flag (every replica count is checked here). */
export function checkNetworkShape(o: Pick<ExportOptions, 'validators' | 'producers' | 'followers' | 'genesisTime'>): void {
  const int = (flag: string, v: number | undefined, min: number, max: number) => {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > max)) throw new ExportError('USAGE', `${flag} must be an integer from ${min} to ${max}, got ${v}`);
  };
  int('--validators', o.validators, 1, MAX_GENESIS_VALIDATORS);
  int('--nodes', o.producers, 1, MAX_DEVNET_NODES);
  int('--followers', o.followers, 0, MAX_DEVNET_NODES);
  int('--genesis-time', o.genesisTime, 0, 2 ** 40);
  devnetShape({ nodes: o.producers, followers: o.followers, p2p: true, singleProcess: false });
  checkNodesFit(o.producers, o.validators);
}

/** Refuses export options that cannot make a network or a manifest, naming the flag. */
export function checkExportOptions(o: ExportOptions): void {
  checkNetworkShape(o);
  if (!/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/.test(o.image)) throw new ExportError('USAGE', `--image ${JSON.stringify(o.image)} is not an image reference like svc:0.1.0`);
}

/** Builds the genesis the genesis step will write and derives every node's peer ids from its hash. */
export async function planExport(o: ExportOptions): Promise<ExportNetwork> {
  checkExportOptions(o);
  const { genesis } = buildGenesis(devnetGenesisPlan(o, o.genesisTime));
  const hash = genesisHash(genesis);
  const byNode = validatorsByNode(genesis.validators.map((v) => v.index), o.producers);
  const nodes: ExportNode[] = [];
  for (let i = 0; i < o.producers + o.followers; i++) {
    const producer = i < o.producers;
    nodes.push({
      index: i,
      role: producer ? 'producer' : 'follower',
      ordinal: producer ? i : i - o.producers,
      validators: producer ? byNode[i]! : [],
      peerIds: { execution: await peerIdFromSeed(peerKeySeed(hash, i, 'execution')), beacon: await peerIdFromSeed(peerKeySeed(hash, i, 'beacon')) },
    });
  }
  return { options: o, genesis, genesisHash: toHex(hash), nodes };
}

/** Path of a secret inside a container. */
export function secretPath(name: SecretName): string {
  return `${CONTAINER_PATHS.secretsDir}/${name}`;
}

/** The genesis file inside a container. */
export const CONTAINER_GENESIS = `${CONTAINER_PATHS.genesisDir}/genesis.json`;

/**
 * The provisioned peer key of a node's layer on the genesis volume, by role and ordinal (a
 * StatefulSet pod knows those two, not the devnet index). `ordinal` may be a `$(VAR)` reference.
 */
export function peerKeyFile(genesisDir: string, role: ExportNode['role'], ordinal: number | string, layer: P2pLayer): string {
  return `${genesisDir}/p2p/${role}-${ordinal}-${layer}.key`;
}

/**
 * The directory of producer `node`'s validator keystores on the genesis volume: copies the genesis
 * step makes, so a packed validator container loads exactly its node's keys (`--keystores-dir`).
 */
export function nodeKeystoreDir(genesisDir: string, node: number): string {
  return `${genesisDir}/keystores/node-${node}`;
}

/**
 * The keystore of producer `node`'s `ordinal`-th validator on the genesis volume (in
 * nodeKeystoreDir), so a StatefulSet of one node's validators, one pod each, finds its key from its ordinal.
 */
export function nodeKeystoreFile(genesisDir: string, node: number, ordinal: number | string): string {
  return `${nodeKeystoreDir(genesisDir, node)}/validator-${ordinal}.json`;
}

/** `svc devnet genesis`'s arguments for this network, writing into `out` with the password file `passwordFile`. */
export function genesisStepArgs(net: ExportNetwork, out: string, passwordFile: string): string[] {
  const o = net.options;
  const args = ['devnet', 'genesis', '--validators', String(o.validators), '--nodes', String(o.producers), '--followers', String(o.followers), '--accounts', String(o.accounts ?? DEFAULT_ACCOUNTS), '--genesis-time', String(o.genesisTime)];
  if (o.slotSeconds !== undefined) args.push('--slot-time', String(o.slotSeconds));
  if (o.slotsPerEpoch !== undefined) args.push('--slots-per-epoch', String(o.slotsPerEpoch));
  args.push('--kdf-memory', String(o.kdfMemoryKib), '--password-file', passwordFile, '--out', out);
  return args;
}

/** How one format addresses a node's services, and which of its files a container sees. */
export interface Addressing {
  /** Host name of node `i`'s execution as other containers reach it. */
  executionHost(i: number): string;
  /** Host name of node `i`'s beacon as other containers reach it. */
  beaconHost(i: number): string;
  /** Host name a node's beacon reaches its own execution by (its service, or loopback inside one pod). */
  ownExecutionHost(i: number): string;
}

/** A node's libp2p multiaddr by DNS name (`/dns4/HOST/tcp/PORT/p2p/ID`). */
export function dnsMultiaddr(host: string, port: number, peerId: string): string {
  return `/dns4/${host}/tcp/${port}/p2p/${peerId}`;
}

/** Every node's multiaddr of one layer, in node order. */
export function layerMultiaddrs(net: ExportNetwork, at: Addressing, layer: P2pLayer): string[] {
  return net.nodes.map((n) => (layer === 'beacon' ? dnsMultiaddr(at.beaconHost(n.index), CONTAINER_PORTS.beaconP2p, n.peerIds.beacon) : dnsMultiaddr(at.executionHost(n.index), CONTAINER_PORTS.executionP2p, n.peerIds.execution)));
}

/** Whom a node dials: `svc devnet up`'s rule (bootnodesOf), or every node when one command serves a whole StatefulSet (a host ignores its own entry). */
export type BootnodeRule = 'devnet' | 'all';

/** The container commands of one node: plan.ts's flags plus what a container needs (listen on every interface, secrets by file, provisioned P2P keys). */
export function nodeCommands(net: ExportNetwork, node: ExportNode, at: Addressing, rule: BootnodeRule, ordinal: number | string = node.ordinal): { execution: string[]; beacon: string[] } {
  const g = CONTAINER_PATHS.genesisDir;
  const boot = (layer: P2pLayer) => {
    const addrs = layerMultiaddrs(net, at, layer);
    return rule === 'all' ? addrs : bootnodesOf(node.index, addrs);
  };
  const execution = [
    ...executionArgs({ genesis: CONTAINER_GENESIS, dataDir: `${CONTAINER_PATHS.dataDir}/execution`, rest: CONTAINER_PORTS.rest, rpc: CONTAINER_PORTS.rpc, p2p: p2pArgs({ port: CONTAINER_PORTS.executionP2p, bootnodes: boot('execution') }, DEFAULT_P2P_HOST) }),
    '--host', '0.0.0.0',
    '--engine-jwt-secret', secretPath('engine-jwt'),
    '--faucet-password-file', secretPath('keystore-password'),
    '--p2p-key-file', peerKeyFile(g, node.role, ordinal, 'execution'),
  ];
  const beacon = [
    ...beaconArgs({
      genesis: CONTAINER_GENESIS,
      dataDir: `${CONTAINER_PATHS.dataDir}/beacon`,
      port: CONTAINER_PORTS.beacon,
      executionUrl: `http://${at.ownExecutionHost(node.index)}:${CONTAINER_PORTS.rest}`,
      tokenFile: node.role === 'producer' ? secretPath('validator-token') : null,
      p2p: p2pArgs({ port: CONTAINER_PORTS.beaconP2p, bootnodes: boot('beacon') }, DEFAULT_P2P_HOST),
    }),
    '--host', '0.0.0.0',
    '--engine-jwt-secret', secretPath('engine-jwt'),
    '--p2p-key-file', peerKeyFile(g, node.role, ordinal, 'beacon'),
  ];
  return { execution, beacon };
}

/** The container command of a validator client attached to producer `node`, holding the keys `keys` names. */
export function validatorCommand(node: ExportNode, at: Addressing, keys: ValidatorKeySource): string[] {
  return [
    ...validatorArgs({
      keys,
      genesis: CONTAINER_GENESIS,
      beaconUrl: `http://${at.beaconHost(node.index)}:${CONTAINER_PORTS.beacon}`,
      tokenFile: secretPath('validator-token'),
      // A subdirectory: a fresh volume's root may hold lost+found.
      dataDir: `${CONTAINER_PATHS.dataDir}/validator`,
      metricsPort: CONTAINER_PORTS.validatorMetrics,
    }),
    '--metrics-host', '0.0.0.0',
    '--password-file', secretPath('keystore-password'),
  ];
}

/**
 * Environment of beacon and validator containers: the light V8 flags the supervisor passes on
 * their command line (plan.ts), through NODE_OPTIONS since the image's entry point is `svc`.
 */
export const LIGHT_ENV: Readonly<Record<string, string>> = { NODE_OPTIONS: LIGHT_PROCESS_FLAGS.join(' ') };

/** The health URL of each kind of container, on its own loopback. */
export const HEALTH_PATHS = { execution: executionRoutes.health.path, beacon: beaconRoutes.health.path, validator: validatorClientRoutes.metrics.path } as const;

/** `node <app>/bin/healthcheck.js URL`: the probe command of a container (Compose healthcheck, image HEALTHCHECK). */
export function healthcheckCommand(url: string): string[] {
  return ['node', `${CONTAINER_PATHS.app}/bin/healthcheck.js`, url];
}
