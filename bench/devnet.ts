/**
 * `svc devnet up` from a user's point of view: seconds from the command to the first block and to
 * the first finalised epoch, and the resident memory of the whole devnet (supervisor + every node
 * process: private pages plus the shared ones counted once, and the plain RSS sum), at 4, 16 and
 * 64 validators (one validator process holding them all, the default), at 4 with a process per
 * validator (`--validator-processes per-validator`), at 4 in one process, and at 4 over two
 * producing nodes and a read-only follower talking libp2p (`--nodes 2 --followers 1`). Runs the real CLI in a temporary directory with the default
 * settings (no test shortcuts such as a cheap KDF), reads its NDJSON events, then stops it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchResult, formatTable, onNdjson } from './harness.js';

const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
/**
 * Goals (issue 14): first block within 5 s at any size; first finalised epoch within 15 s at 4
 * validators and 30 s at 64 (60 s otherwise); resident memory under 600 MB at 4 validators in one
 * node and under 1 GB at 64.
 */
const GOALS = { firstBlockS: 5, finalizedS: 60, finalizedS4: 15, finalizedS64: 30, memoryMb4: 600, memoryMb64: 1000 } as const;

/** The finality goal of a devnet size. */
function finalityGoal(validators: number, several: boolean): number {
  if (several) return GOALS.finalizedS;
  return validators === 4 ? GOALS.finalizedS4 : validators === 64 ? GOALS.finalizedS64 : GOALS.finalizedS;
}

/** The memory goal of a devnet size, if it has one. */
function memoryGoal(validators: number, several: boolean): number | undefined {
  if (several) return undefined;
  return validators === 4 ? GOALS.memoryMb4 : validators === 64 ? GOALS.memoryMb64 : undefined;
}
const DEADLINE_MS = 240_000;

/** Node counts of a measured devnet (`--nodes`, `--followers`). */
export interface DevnetNodes {
  nodes: number;
  followers: number;
}

/** Figures of one devnet size. */
export interface DevnetFigures {
  validators: number;
  mode: 'multi-process' | 'single-process';
  /** `--validator-processes` of a multi-process devnet. */
  packing: 'per-node' | 'per-validator';
  nodes: DevnetNodes;
  firstBlockS: number;
  finalizedS: number;
  /**
   * Physical memory of the devnet: every process's private pages plus the pages they share (the
   * node binary and libraries, mapped by all of them) counted once, approximated by the largest
   * shared set of any one process.
   */
  totalMb: number;
  /** Sum of each process's RSS: counts the shared pages once per process. */
  rssSumMb: number;
  /** RSS per process name, MB. */
  perProcessMb: Record<string, number>;
}

/** Memory of one process from /proc/PID/smaps_rollup, in kB (zeros when it is gone). */
async function memoryKb(pid: number): Promise<{ rss: number; shared: number; private: number }> {
  try {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rss: field('Rss'), shared: field('Shared_Clean') + field('Shared_Dirty'), private: field('Private_Clean') + field('Private_Dirty') };
  } catch {
    return { rss: 0, shared: 0, private: 0 };
  }
}

/** Starts a devnet of `validators`, waits for its first finalised epoch, measures, stops it. */
async function measureDevnet(validators: number, mode: DevnetFigures['mode'], nodes: DevnetNodes = { nodes: 1, followers: 0 }, packing: DevnetFigures['packing'] = 'per-node'): Promise<DevnetFigures> {
  const tmp = await mkdtemp(join(tmpdir(), 'svc-bench-devnet-'));
  const dir = join(tmp, 'net');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: tmp, SVC_HOME: join(tmp, 'home') };
  const t0 = Date.now();
  const child = spawn(process.execPath, [RUN_JS, 'devnet', 'up', '--validators', String(validators), '--dir', dir, '--json', '--nodes', String(nodes.nodes), '--followers', String(nodes.followers), ...(mode === 'single-process' ? ['--single-process'] : ['--validator-processes', packing])], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const times = await new Promise<{ firstBlockS: number; finalizedS: number }>((resolve, reject) => {
      let firstBlockS = 0;
      const timer = setTimeout(() => reject(new Error(`devnet of ${validators} did not finalise within ${DEADLINE_MS / 1000} s`)), DEADLINE_MS);
      child.once('exit', (code) => reject(new Error(`svc devnet up exited (${code}) before finalising`)));
      // The event's own time (the beacon's publish time for blocks), not when the line arrived.
      onNdjson<{ event: string; time: string }>(child.stdout!, (e) => {
        const s = (Date.parse(e.time) - t0) / 1000;
        if (e.event === 'block' && !firstBlockS) firstBlockS = s;
        if (e.event === 'finalized') {
          clearTimeout(timer);
          resolve({ firstBlockS, finalizedS: s });
        }
      });
    });
    const manifest = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as { supervisor: { pid: number }; processes: Array<{ name: string; pid: number }> };
    const pids: Array<[string, number]> = [['supervisor', manifest.supervisor.pid], ...manifest.processes.map((p): [string, number] => [p.name, p.pid])];
    const perProcessMb: Record<string, number> = {};
    let privateKb = 0;
    let sharedKb = 0;
    for (const [name, pid] of pids) {
      const m = await memoryKb(pid);
      perProcessMb[name] = m.rss / 1024;
      privateKb += m.private;
      sharedKb = Math.max(sharedKb, m.shared);
    }
    const rssSumMb = Object.values(perProcessMb).reduce((a, b) => a + b, 0);
    const totalMb = (privateKb + sharedKb) / 1024;
    return { validators, mode, packing, nodes, ...times, totalMb, rssSumMb, perProcessMb };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Runs the devnet benchmark at each size (one validator process per node), with a process per validator, in one process, and over three nodes; prints a table. */
export async function runDevnetBench(o: { sizes?: number[]; print: boolean }): Promise<{ results: BenchResult[]; details: DevnetFigures[] }> {
  const details: DevnetFigures[] = [];
  for (const n of o.sizes ?? [4, 16, 64]) details.push(await measureDevnet(n, 'multi-process'));
  details.push(await measureDevnet(4, 'multi-process', { nodes: 1, followers: 0 }, 'per-validator'));
  details.push(await measureDevnet(4, 'single-process'));
  details.push(await measureDevnet(4, 'multi-process', { nodes: 2, followers: 1 }));
  const results: BenchResult[] = details.flatMap((d) => {
    const several = d.nodes.nodes + d.nodes.followers > 1;
    const label = `${d.validators} validators${d.mode === 'single-process' ? ', --single-process' : d.packing === 'per-validator' ? ', a process per validator' : ''}${several ? `, --nodes ${d.nodes.nodes} --followers ${d.nodes.followers}` : ''}`;
    const mb = (name: string) => Math.round(d.perProcessMb[name] ?? 0);
    const breakdown =
      d.mode === 'single-process'
        ? `node ~${mb('node')} MB, supervisor ~${mb('supervisor')}`
        : d.packing === 'per-validator'
          ? `validator ~${mb('validator-0')} MB each, execution ~${mb('execution')}, beacon ~${mb('beacon')}, supervisor ~${mb('supervisor')}`
          : `validators (${d.validators} keys) ~${mb('validators')} MB, execution ~${mb('execution')}, beacon ~${mb('beacon')}, supervisor ~${mb('supervisor')}`;
    const finality = finalityGoal(d.validators, several);
    const memory = memoryGoal(d.validators, several);
    return [
      { name: `first block, ${label}`, backend: 'svc devnet up', unit: 's', value: d.firstBlockS, ratio: d.firstBlockS / GOALS.firstBlockS, note: `goal <= ${GOALS.firstBlockS} s (${(d.firstBlockS / GOALS.firstBlockS).toFixed(2)}x)` },
      { name: `first finalised epoch, ${label}`, backend: 'svc devnet up', unit: 's', value: d.finalizedS, ratio: d.finalizedS / finality, note: `goal <= ${finality} s (${(d.finalizedS / finality).toFixed(2)}x)` },
      {
        name: `resident memory, ${label}`,
        backend: `${Object.keys(d.perProcessMb).length} processes`,
        unit: 'MB',
        value: d.totalMb,
        ...(memory !== undefined ? { ratio: d.totalMb / memory } : {}),
        note: `${memory !== undefined ? `goal < ${memory} MB (${(d.totalMb / memory).toFixed(2)}x); ` : ''}private pages of every process + shared pages once`,
      },
      { name: `RSS summed over processes, ${label}`, backend: 'shared pages counted per process', unit: 'MB', value: d.rssSumMb, note: breakdown },
    ];
  });
  if (o.print) console.log(formatTable('svc devnet up (real processes, default settings; times from the command, by the events\' own timestamps)', results));
  return { results, details };
}
