/**
 * Runs the devnet's processes (`svc node …` children), waits until each is
 * healthy, restarts a crashed one once, and stops them in reverse start order.
 *
 * Children run in their own process group (detached), so a terminal Ctrl-C reaches only the
 * supervisor, which then stops validators before the beacon and the beacon before execution.
 * Their stdout and stderr go straight to a log file descriptor (not through a pipe), so they keep
 * logging if the supervisor dies, and log volume costs the supervisor nothing. That is why this
 * uses node:child_process rather than execa: execa's async API refuses file descriptors other
 * than 0-2 and would pipe every log line through this process.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventEmitter } from 'node:events';
import { type ChildProcess, spawn } from 'node:child_process';
import { DevnetError } from './manifest.js';
import type { ProcessStatus, ProcessView } from './view.js';

/** `bin/run.js` of this installation (this file is dist/src/devnet/supervisor.js). */
export const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/**
 * V8 flags for processes that allocate little per second (validators, the supervisor): a 1 MiB
 * young generation instead of the default 16 MiB semi-spaces cuts their resident memory by about
 * 50 MB each (measured: 145 → 93 MB per validator) at no visible cost; execution keeps the default
 * because admission throughput depends on it.
 */
export const LIGHT_PROCESS_FLAGS = ['--max-semi-space-size=1'];

/** How to run and probe one process. */
export interface ProcessSpec {
  name: string;
  /** Arguments of `svc` (e.g. `['node', 'execution', …]`). */
  args: string[];
  /** Node.js (V8) flags placed before the script, e.g. a smaller young generation for light processes. */
  nodeFlags?: string[];
  log: string;
  dataDir: string;
  port: number | null;
  /** URLs that must all answer 200 before the process counts as healthy. */
  healthUrls: string[];
  /** Stop order: higher ranks stop first (validators before the beacon before execution); default 0. */
  stopRank?: number;
  /** Indices of the validators a validator process holds (absent for other processes). */
  validators?: number[];
}

/** Events a Supervisor emits. */
export interface SupervisorEvents {
  /** Any status or pid changed. */
  change: [];
  crash: [{ name: string; code: number | null; signal: string | null; log: string }];
  restart: [{ name: string; pid: number }];
  failed: [{ name: string; log: string; reason: string }];
}

interface Running {
  spec: ProcessSpec;
  status: ProcessStatus;
  restarts: number;
  child: ChildProcess | null;
  /** Resolves when the current child is gone (exit, or spawn failure). */
  exited: Promise<void> | null;
  alive: boolean;
}

/** Tunables (tests shorten them). */
export interface SupervisorOptions {
  env: NodeJS.ProcessEnv;
  /** Deadline for a process to become healthy after it is spawned. */
  healthTimeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL when stopping. */
  stopGraceMs?: number;
  /** Restarts allowed per process after a crash. */
  maxRestarts?: number;
}

const HEALTH_POLL_MS = 100;

/** Spawns `svc …args` with stdout and stderr on `fd`, in its own process group. */
function spawnSvc(spec: ProcessSpec, fd: number, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...(spec.nodeFlags ?? []), RUN_JS, ...spec.args], { stdio: ['ignore', fd, fd], env, detached: true });
}

/** Supervises groups of processes: each group starts (in parallel) once the previous one is healthy. */
export class Supervisor extends EventEmitter<SupervisorEvents> {
  private readonly procs: Running[][];
  private stopping = false;
  private readonly healthTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly maxRestarts: number;

  constructor(
    groups: ProcessSpec[][],
    private readonly opts: SupervisorOptions,
  ) {
    super();
    this.procs = groups.map((g) => g.map((spec) => ({ spec, status: 'stopped' as ProcessStatus, restarts: 0, child: null, exited: null, alive: false })));
    this.healthTimeoutMs = opts.healthTimeoutMs ?? 60_000;
    this.stopGraceMs = opts.stopGraceMs ?? 10_000;
    this.maxRestarts = opts.maxRestarts ?? 1;
  }

  /** Current state of every process, in start order. */
  processes(): ProcessView[] {
    return this.procs.flat().map((p) => ({ name: p.spec.name, pid: p.alive ? (p.child?.pid ?? null) : null, status: p.status, restarts: p.restarts, log: p.spec.log, ...(p.spec.validators ? { validators: p.spec.validators } : {}) }));
  }

  /** Starts every group in order; on any failure stops what started and throws DEVNET_START_FAILED. */
  async start(): Promise<void> {
    try {
      for (const group of this.procs) await Promise.all(group.map((p) => this.launch(p)));
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Stops every process, highest stop rank first (equal ranks together): SIGTERM, then SIGKILL after the grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    const all = this.procs.flat();
    const ranks = [...new Set(all.map((p) => p.spec.stopRank ?? 0))].sort((a, b) => b - a);
    for (const rank of ranks) await Promise.all(all.filter((p) => (p.spec.stopRank ?? 0) === rank).map((p) => this.terminate(p)));
  }

  private set(p: Running, status: ProcessStatus): void {
    p.status = status;
    this.emit('change');
  }

  private spawn(p: Running): void {
    mkdirSync(dirname(p.spec.log), { recursive: true });
    const fd = openSync(p.spec.log, 'a');
    try {
      p.child = spawnSvc(p.spec, fd, this.opts.env);
    } finally {
      // The child holds its own copy of the descriptor.
      closeSync(fd);
    }
    const child = p.child;
    p.alive = true;
    p.exited = new Promise<void>((resolve) => {
      const gone = (code: number | null, signal: string | null) => {
        if (!p.alive || p.child !== child) return;
        p.alive = false;
        this.onExit(p, code, signal);
        resolve();
      };
      child.once('exit', gone);
      // spawn() itself failing (e.g. EMFILE) arrives as 'error' without 'exit'.
      child.once('error', () => gone(null, null));
    });
  }

  private async launch(p: Running): Promise<void> {
    this.set(p, 'starting');
    this.spawn(p);
    await this.waitHealthy(p);
    this.set(p, 'healthy');
  }

  private async waitHealthy(p: Running): Promise<void> {
    const child = p.child!;
    const deadline = Date.now() + this.healthTimeoutMs;
    for (;;) {
      if (!p.alive || p.child !== child) {
        throw new DevnetError('DEVNET_START_FAILED', `${p.spec.name} exited while starting (${child.signalCode ?? `exit ${child.exitCode}`}); see ${p.spec.log}`);
      }
      if (await allHealthy(p.spec.healthUrls)) return;
      if (Date.now() > deadline) {
        throw new DevnetError('DEVNET_START_FAILED', `${p.spec.name} did not become healthy within ${this.healthTimeoutMs / 1000} s; see ${p.spec.log}`);
      }
      await new Promise((r) => setTimeout(r, HEALTH_POLL_MS));
    }
  }

  private onExit(p: Running, code: number | null, signal: string | null): void {
    if (this.stopping || p.status === 'stopped') {
      this.set(p, 'stopped');
      return;
    }
    const wasStarting = p.status === 'starting' || p.status === 'restarting';
    this.set(p, 'crashed');
    this.emit('crash', { name: p.spec.name, code, signal, log: p.spec.log });
    // A process that dies during start-up is start()'s failure (or a failed restart), not a new crash to retry.
    if (wasStarting && p.restarts === 0) return;
    if (p.restarts >= this.maxRestarts) {
      this.set(p, 'failed');
      this.emit('failed', { name: p.spec.name, log: p.spec.log, reason: `exited again (${signal ?? `exit ${code}`}) after ${p.restarts} restart(s)` });
      return;
    }
    p.restarts += 1;
    this.set(p, 'restarting');
    this.spawn(p);
    this.waitHealthy(p).then(
      () => {
        if (this.stopping) return;
        this.set(p, 'healthy');
        this.emit('restart', { name: p.spec.name, pid: p.child?.pid ?? 0 });
      },
      (err: Error) => {
        if (this.stopping || p.status === 'failed') return;
        this.set(p, 'failed');
        this.emit('failed', { name: p.spec.name, log: p.spec.log, reason: err.message });
      },
    );
  }

  private async terminate(p: Running): Promise<void> {
    const child = p.child;
    if (!child || !p.alive) {
      if (p.status !== 'stopped') this.set(p, 'stopped');
      return;
    }
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.stopGraceMs);
    await p.exited;
    clearTimeout(timer);
    this.set(p, 'stopped');
  }
}

async function allHealthy(urls: readonly string[]): Promise<boolean> {
  for (const url of urls) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await r.arrayBuffer();
      if (r.status !== 200) return false;
    } catch {
      return false;
    }
  }
  return true;
}
