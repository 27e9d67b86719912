/** What `svc devnet up` prints once the network is up: one `started` event, as JSON or as text. */
import { WEI_PER_TOKEN } from '../core/constants.js';
import type { Genesis } from '../core/genesis/genesis.js';
import { devnetLayout } from './layout.js';
import type { DevnetManifest, ManifestKey, ManifestNode } from './manifest.js';
import { monitoringPaths } from './monitoring.js';

/** The `started` event (NDJSON line, and the document `--detach --json` prints). */
export interface StartedEvent {
  event: 'started';
  time: string;
  dir: string;
  resumed: boolean;
  mode: DevnetManifest['mode'];
  validator_processes: DevnetManifest['validator_processes'];
  chain_id: string;
  network_id: number;
  slot_seconds: number;
  slots_per_epoch: number;
  endpoints: DevnetManifest['endpoints'];
  supervisor_pid: number | null;
  /** `validators`: the validator indices a validator process holds. */
  processes: Array<{ name: string; pid: number | null; log: string; validators?: number[] }>;
  /** Every node: its role, endpoints, validators and (with P2P) the multiaddrs other nodes dial. */
  nodes: Array<{ index: number; role: ManifestNode['role']; endpoints: ManifestNode['endpoints']; validators: number[]; p2p: { execution: string; beacon: string } | null }>;
  validators: ManifestKey[];
  accounts: Array<ManifestKey & { balance: string }>;
  faucet: ManifestKey | null;
  keystore_password: string;
  mnemonic: string;
  /** Prometheus scrape configuration for this devnet's ports (alert rules beside it). */
  prometheus_config: string;
}

/** Builds the `started` event from the manifest (and the genesis balances of the accounts). */
export function startedEvent(m: DevnetManifest, genesis: Pick<Genesis, 'alloc'>, resumed: boolean): StartedEvent {
  const balance = (a: string) => genesis.alloc.find((x) => x.address === a)?.balance ?? '0';
  return {
    event: 'started',
    time: new Date().toISOString(),
    dir: m.dir,
    resumed,
    mode: m.mode,
    validator_processes: m.validator_processes,
    chain_id: m.chain_id,
    network_id: m.network_id,
    slot_seconds: m.slot_seconds,
    slots_per_epoch: m.slots_per_epoch,
    endpoints: m.endpoints,
    supervisor_pid: m.supervisor?.pid ?? null,
    processes: m.processes.map((p) => ({ name: p.name, pid: p.pid, log: p.log, ...(p.validators ? { validators: p.validators } : {}) })),
    nodes: m.nodes.map((n) => ({ index: n.index, role: n.role, endpoints: n.endpoints, validators: n.validators, p2p: n.p2p ? { execution: n.p2p.execution.multiaddr, beacon: n.p2p.beacon.multiaddr } : null })),
    validators: m.validators,
    accounts: m.accounts.map((a) => ({ ...a, balance: balance(a.address) })),
    faucet: m.faucet,
    keystore_password: m.keystore_password,
    mnemonic: m.mnemonic,
    prometheus_config: monitoringPaths(devnetLayout(m.dir)).config,
  };
}

/** Whole tokens of a wei amount, for display. */
function tokens(wei: string): string {
  return (BigInt(wei) / WEI_PER_TOKEN).toLocaleString('en-US');
}

/** The human-readable form of the `started` event. */
export function startedLines(e: StartedEvent): string[] {
  const lines = [
    `svc devnet ${e.resumed ? 'resumed' : 'started'}: ${e.validators.length} validators, chain ${e.chain_id} (network id ${e.network_id}), ${e.slot_seconds} s slots, ${e.slots_per_epoch}-slot epochs, ${e.mode}${e.mode === 'multi-process' ? `, validator processes ${e.validator_processes}` : ''}`,
    '',
    `Directory       ${e.dir}`,
    `Execution REST  ${e.endpoints.execution}`,
    `JSON-RPC        ${e.endpoints.rpc}`,
    `Beacon REST     ${e.endpoints.beacon}`,
    `Events          ${e.endpoints.ws}`,
    '',
    'Processes',
    ...e.processes.map((p) => `  ${p.name.padEnd(13)} pid ${String(p.pid ?? '-').padEnd(8)} ${p.log}${p.validators && p.validators.length > 1 ? `  (validators ${p.validators.join(', ')})` : ''}`),
  ];
  if (e.nodes.length > 1) {
    lines.push('', 'Nodes (node 0 is the default target of other commands)');
    for (const n of e.nodes) {
      const role = n.role === 'follower' ? 'read-only' : `validators ${n.validators.join(', ')}`;
      lines.push(`  node ${n.index}  execution ${n.endpoints.execution}  beacon ${n.endpoints.beacon}  ${role}`);
    }
  }
  const node0 = e.nodes[0]?.p2p;
  if (node0) lines.push('', `P2P bootnodes   beacon ${node0.beacon}`, `                execution ${node0.execution}`);
  if (e.accounts.length > 0) {
    lines.push('', `Prefunded accounts (wallet files, password "${e.keystore_password}")`);
    for (const a of e.accounts) lines.push(`  (${a.index}) ${a.address}  ${tokens(a.balance)} tokens  ${a.wallet}`);
  }
  if (e.faucet) lines.push('', `Faucet          ${e.faucet.address}  (svc faucet claim <address or wallet name>)`);
  lines.push('', `Prometheus      ${e.prometheus_config}`, '                (alert rules and the Grafana dashboard svc-dashboard.json beside it; see docs/monitoring.md)');
  lines.push('', `Mnemonic        ${e.mnemonic}`, '                (the public dev mnemonic: never use these keys on a real network)');
  return lines;
}
