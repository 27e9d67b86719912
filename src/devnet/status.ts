/** `svc devnet status`: the manifest checked against reality (pids, health endpoints, head). */
import { ExecutionClient } from '../client/execution.js';
import { type DevnetManifest, type DevnetState, type ManifestNode, DevnetError, isSvcProcess, pidAlive, readManifest } from './manifest.js';
import { devnetLayout } from './layout.js';
import { type NodeProbe, probeNode } from './probe.js';

/** One process as `status` reports it. */
export interface ProcessStatusView {
  name: string;
  pid: number | null;
  /** Whether the recorded pid is a live svc process. */
  alive: boolean;
  /** The supervisor's last recorded status. */
  status: string;
  restarts: number;
  log: string;
  /** Indices of the validators it holds (validator processes, and `node` in single-process mode). */
  validators?: number[];
}

/** One node as `status` reports it: its role, head, finality and peers. */
export interface NodeStatusView {
  index: number;
  role: ManifestNode['role'];
  /** True when both its layers answer. */
  up: boolean;
  endpoints: ManifestNode['endpoints'];
  validators: number[];
  head: { slot: number; index: number; root: string } | null;
  justified_epoch: number | null;
  finalized_epoch: number | null;
  /** Connected peers of its beacon's and execution's libp2p hosts; null when unknown. */
  peers: { beacon: number | null; execution: number | null };
  /** Peer ids, null without P2P. */
  peer_ids: { beacon: string; execution: string } | null;
}

/** The whole status report. Top-level head, finality and mempool are node 0's. */
export interface DevnetStatus {
  dir: string;
  state: DevnetState;
  /** True when the supervisor and every process are alive and both APIs answer. */
  healthy: boolean;
  mode: DevnetManifest['mode'];
  validator_processes: DevnetManifest['validator_processes'];
  chain_id: string;
  endpoints: DevnetManifest['endpoints'];
  supervisor: { pid: number; alive: boolean } | null;
  processes: ProcessStatusView[];
  head: { slot: number; index: number; root: string } | null;
  justified_epoch: number | null;
  finalized_epoch: number | null;
  finalized_block: number | null;
  mempool: { size: number; pending: number; queued: number } | null;
  /** `process`: the supervised process holding the validator (null when none does). */
  validators: Array<{ index: number; address: string; balance: string | null; process: string | null }>;
  p2p: boolean;
  /** Every node, producers then followers. */
  nodes: NodeStatusView[];
  /** Why `healthy` is false, one reason per problem. */
  problems: string[];
}

/** Reads the devnet in `dir` and probes its processes and APIs (2 s per call). */
export async function devnetStatus(dir: string): Promise<DevnetStatus> {
  const layout = devnetLayout(dir);
  const m = readManifest(layout.dir);
  if (!m) throw new DevnetError('DEVNET_NOT_FOUND', `no devnet in ${layout.dir} (start one with: svc devnet up --dir ${layout.dir})`);
  const problems: string[] = [];
  const supAlive = !!m.supervisor && pidAlive(m.supervisor.pid) && isSvcProcess(m.supervisor.pid);
  const processes = m.processes.map((p) => {
    const alive = !!p.pid && pidAlive(p.pid) && isSvcProcess(p.pid);
    return { name: p.name, pid: p.pid, alive, status: p.status, restarts: p.restarts, log: p.log, ...(p.validators ? { validators: p.validators } : {}) };
  });
  const running = m.state === 'running' || m.state === 'starting';
  if (running && !supAlive) problems.push(`supervisor (pid ${m.supervisor?.pid ?? '?'}) is not running; run: svc devnet down --dir ${layout.dir} && svc devnet up --dir ${layout.dir}`);
  for (const p of processes) if (running && !p.alive) problems.push(`${p.name} is not running (status ${p.status}); see ${p.log}`);
  if (!running) problems.push(`devnet is ${m.state}`);

  const execution = new ExecutionClient(m.endpoints.execution, { timeoutMs: PROBE_TIMEOUT_MS });
  const [probes, balances] = await Promise.all([
    Promise.all(m.nodes.map((n) => probeNode(n, PROBE_TIMEOUT_MS))),
    Promise.all(m.validators.map((v) => execution.account(v.address).then((a) => a.balance, () => null))),
  ]);
  if (running) problems.push(...nodeProblems(m, probes));
  const holder = new Map(m.processes.flatMap((p) => (p.validators ?? []).map((v): [number, string] => [v, p.name])));
  const nodes = m.nodes.map((n, i) => nodeView(n, probes[i]!));
  const node0 = probes[0]!;
  const head = node0.head;
  const health = node0.execution;
  return {
    dir: layout.dir,
    state: m.state,
    healthy: problems.length === 0,
    mode: m.mode,
    validator_processes: m.validator_processes,
    chain_id: m.chain_id,
    endpoints: m.endpoints,
    supervisor: m.supervisor ? { pid: m.supervisor.pid, alive: supAlive } : null,
    processes,
    head: head ? { slot: head.slot, index: head.index, root: head.root } : null,
    justified_epoch: head?.justified.epoch ?? null,
    finalized_epoch: head?.finalized.epoch ?? null,
    finalized_block: health?.finalized_block ?? null,
    mempool: health ? { size: health.mempool, pending: health.mempool_pending, queued: health.mempool_queued } : null,
    validators: m.validators.map((v, i) => ({ index: v.index, address: v.address, balance: balances[i] ?? null, process: holder.get(v.index) ?? null })),
    p2p: m.p2p,
    nodes,
    problems,
  };
}

/** Deadline of each status call. */
const PROBE_TIMEOUT_MS = 2_000;

/** Node N's label in problems: node 0 keeps the plain layer names it always had. */
function label(m: Pick<DevnetManifest, 'nodes'>, i: number): string {
  return m.nodes.length === 1 ? '' : `node ${i} `;
}

/**
 * Why the nodes are not a healthy network: a layer that does not answer, a beacon that cannot
 * make progress, and (with several nodes) a host with no peer at all, which cannot be following
 * the others.
 */
export function nodeProblems(m: Pick<DevnetManifest, 'nodes' | 'p2p'>, probes: NodeProbe[]): string[] {
  const out: string[] = [];
  probes.forEach((p, i) => {
    const who = label(m, i);
    for (const e of p.errors) out.push(`${who}${e}`);
    if (p.beaconHealth && p.beaconHealth.status !== 'healthy') out.push(`${who}beacon unhealthy (${p.beaconHealth.reason}): ${p.beaconHealth.message}`);
    if (!m.p2p || m.nodes.length < 2) return;
    if (p.beaconPeers === 0) out.push(`${who}beacon has no P2P peers`);
    if (p.execution && p.execution.peers === 0) out.push(`${who}execution has no P2P peers`);
  });
  return out;
}

function nodeView(n: ManifestNode, p: NodeProbe): NodeStatusView {
  return {
    index: n.index,
    role: n.role,
    up: p.head !== null && p.execution !== null,
    endpoints: n.endpoints,
    validators: n.validators,
    head: p.head ? { slot: p.head.slot, index: p.head.index, root: p.head.root } : null,
    justified_epoch: p.head?.justified.epoch ?? null,
    finalized_epoch: p.head?.finalized.epoch ?? null,
    peers: { beacon: p.beaconPeers, execution: p.execution?.peers ?? null },
    peer_ids: n.p2p ? { beacon: n.p2p.beacon.peer_id, execution: n.p2p.execution.peer_id } : null,
  };
}
