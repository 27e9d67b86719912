/** `svc devnet status`: the manifest checked against reality (pids, health endpoints, head). */
import { BeaconClient } from '../client/beacon.js';
import { ExecutionClient } from '../client/execution.js';
import { isSvcProcess } from './lifecycle.js';
import { type DevnetManifest, type DevnetState, DevnetError, pidAlive, readManifest } from './manifest.js';
import { devnetLayout } from './layout.js';

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
}

/** The whole status report. */
export interface DevnetStatus {
  dir: string;
  state: DevnetState;
  /** True when the supervisor and every process are alive and both APIs answer. */
  healthy: boolean;
  mode: DevnetManifest['mode'];
  chain_id: string;
  endpoints: DevnetManifest['endpoints'];
  supervisor: { pid: number; alive: boolean } | null;
  processes: ProcessStatusView[];
  head: { slot: number; index: number; root: string } | null;
  justified_epoch: number | null;
  finalized_epoch: number | null;
  finalized_block: number | null;
  mempool: { size: number; pending: number; queued: number } | null;
  validators: Array<{ index: number; address: string; balance: string | null }>;
  /** Why `healthy` is false, one reason per problem. */
  problems: string[];
}

/** Reads the devnet in `dir` and probes its processes and APIs (2 s per call). */
export async function devnetStatus(dir: string): Promise<DevnetStatus> {
  const layout = devnetLayout(dir);
  const m = readManifest(layout.dir);
  if (!m) throw new DevnetError('DEVNET_NOT_FOUND', `no devnet in ${layout.dir} (start one with: svc devnet up --dir ${layout.dir})`, 404);
  const problems: string[] = [];
  const supAlive = !!m.supervisor && pidAlive(m.supervisor.pid) && isSvcProcess(m.supervisor.pid);
  const processes = m.processes.map((p) => {
    const alive = !!p.pid && pidAlive(p.pid) && isSvcProcess(p.pid);
    return { name: p.name, pid: p.pid, alive, status: p.status, restarts: p.restarts, log: p.log };
  });
  const running = m.state === 'running' || m.state === 'starting';
  if (running && !supAlive) problems.push(`supervisor (pid ${m.supervisor?.pid ?? '?'}) is not running; run: svc devnet down --dir ${layout.dir} && svc devnet up --dir ${layout.dir}`);
  for (const p of processes) if (running && !p.alive) problems.push(`${p.name} is not running (status ${p.status}); see ${p.log}`);
  if (!running) problems.push(`devnet is ${m.state}`);

  const beacon = new BeaconClient(m.endpoints.beacon, { timeoutMs: 2_000 });
  const execution = new ExecutionClient(m.endpoints.execution, { timeoutMs: 2_000 });
  const [head, , health, balances] = await Promise.all([
    beacon.head().catch((err: Error) => (running && problems.push(`beacon: ${err.message}`), null)),
    // A beacon that answers but cannot make progress (execution on another chain, every proposal refused) is a problem too.
    beacon.health().then(
      (h) => void (running && h.status !== 'healthy' && problems.push(`beacon unhealthy (${h.reason}): ${h.message}`)),
      () => undefined,
    ),
    execution.health().catch((err: Error) => (running && problems.push(`execution: ${err.message}`), null)),
    Promise.all(m.validators.map((v) => execution.account(v.address).then((a) => a.balance, () => null))),
  ]);
  return {
    dir: layout.dir,
    state: m.state,
    healthy: problems.length === 0,
    mode: m.mode,
    chain_id: m.chain_id,
    endpoints: m.endpoints,
    supervisor: m.supervisor ? { pid: m.supervisor.pid, alive: supAlive } : null,
    processes,
    head: head ? { slot: head.slot, index: head.index, root: head.root } : null,
    justified_epoch: head?.justified.epoch ?? null,
    finalized_epoch: head?.finalized.epoch ?? null,
    finalized_block: health?.finalized_block ?? null,
    mempool: health ? { size: health.mempool, pending: health.mempool_pending, queued: health.mempool_queued } : null,
    validators: m.validators.map((v, i) => ({ index: v.index, address: v.address, balance: balances[i] ?? null })),
    problems,
  };
}
