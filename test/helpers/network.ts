/**
 * Helpers for end-to-end tests that run a real devnet: `svc node execution`, `svc node beacon`
 * and `svc node validator` processes on free loopback ports in a temp dir (not a test file itself).
 *
 * Every process started through a `Devnet` is SIGKILLed when `withDevnet` returns or throws; on
 * failure the tail of each process's stderr (JSON log lines) is printed (on success too when the
 * environment has SVC_E2E_LOGS=<chars>, which also sets how much of each tail a failure prints).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { anyFreePort } from '../../src/devnet/ports.js';
import { RUN_JS, cliEnv, expectJsonOk, runCli, withTempDir } from './cli.js';

/**
 * A port free on 127.0.0.1 now, below the ephemeral range and reserved against every other svc
 * process choosing ports at the same time (parallel test files, devnets): see src/devnet/ports.ts.
 */
export function freePort(): Promise<number> {
  return anyFreePort();
}

/** GET and parse JSON (5 s deadline). */
export async function getJson(url: string): Promise<any> {
  const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return r.json();
}

/** Polls `check` until it returns a value (errors count as "not yet"), failing after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `GET /api/v1/beacon/head`'s data. */
export interface BeaconHead {
  root: string;
  slot: number;
  index: number;
  justified: { epoch: number; root: string };
  finalized: { epoch: number; root: string };
}

/** One JSON log line of a node process. */
export type LogLine = { ts: string; level: string; component: string; msg: string } & Record<string, unknown>;

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
}

const LOG_LINES_KEPT = 5_000;

/** How to launch one process: in the test's own network namespace, or through a prefix (e.g. `ip netns exec NAME`). */
export interface StartOptions {
  /** Argv prefix that execs the node binary (it must exec, not fork, so SIGKILL reaches node). */
  prefix?: string[];
  /** Variables added to the group's environment for this process only (e.g. NODE_EXTRA_CA_CERTS of a client host). */
  env?: Record<string, string>;
}

/**
 * Named `svc` child processes with their parsed JSON log lines and raw stderr tails: start,
 * SIGKILL, restart under the same name, read logs, dump tails on failure.
 */
export class ProcessGroup {
  private readonly procs = new Map<string, Proc>();
  /** Parsed log lines of each run of each process (the last run last). */
  private readonly runs = new Map<string, LogLine[][]>();
  /** Raw stderr tail of every run of each process (the last 200,000 chars), for failure reports. */
  private readonly tails = new Map<string, string>();

  constructor(readonly env: Record<string, string>) {}

  /** Spawns `svc ...args` as the process `name` (which must not be running). */
  start(name: string, args: string[], opts: StartOptions = {}): ChildProcess {
    if (this.procs.has(name)) throw new Error(`${name} is already running`);
    const argv = [...(opts.prefix ?? []), process.execPath, RUN_JS, ...args];
    const child = spawn(argv[0]!, argv.slice(1), { env: { ...this.env, ...opts.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    const lines: LogLine[] = [];
    this.runs.set(name, [...(this.runs.get(name) ?? []), lines]);
    this.tails.set(name, (this.tails.get(name) ?? '') + (this.tails.has(name) ? `\n=== ${name} restarted ===\n` : ''));
    let partial = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.tails.set(name, (this.tails.get(name)! + d).slice(-200_000));
      partial += d;
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const l of parts) {
        try {
          lines.push(JSON.parse(l) as LogLine);
          if (lines.length > LOG_LINES_KEPT) lines.shift();
        } catch {
          // not a log line (e.g. a stack trace): kept in the raw tail only
        }
      }
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.procs.set(name, { child, exited });
    // A process that dies on its own stays listed until killed; `running` says whether it lives.
    return child;
  }

  /** Whether `name` was started and has not exited. */
  running(name: string): boolean {
    const p = this.procs.get(name);
    return p !== undefined && p.child.exitCode === null && p.child.signalCode === null;
  }

  /** SIGKILLs `name` and waits until it is gone (its ports and database locks are released). */
  async kill(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) throw new Error(`${name} was not started`);
    p.child.kill('SIGKILL');
    await p.exited;
    this.procs.delete(name);
  }

  /** SIGKILLs every process started here and waits for them. */
  async killAll(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((n) => this.kill(n)));
  }

  /** Log lines of `name`'s current run (since its last start), or of all its runs. */
  log(name: string, opts: { allRuns?: boolean } = {}): readonly LogLine[] {
    const runs = this.runs.get(name) ?? [];
    return opts.allRuns ? runs.flat() : (runs[runs.length - 1] ?? []);
  }

  /** Waits for the first line of `name`'s current run whose msg is `msg`. */
  waitLog(name: string, msg: string, ms: number): Promise<LogLine> {
    return waitFor(`${name} to log "${msg}"`, async () => {
      if (!this.running(name)) throw new Error(`${name} is not running`);
      return this.log(name).find((l) => l.msg === msg);
    }, ms, 100);
  }

  /** Prints the stderr tail of every process (all runs) to our stderr. */
  dumpLogs(chars = 3_000): void {
    for (const [name, tail] of this.tails) process.stderr.write(`--- ${name} (tail) ---\n${tail.slice(-chars)}\n`);
  }
}

/** A devnet made by `svc genesis new`, and the node processes running on it. */
export class Devnet extends ProcessGroup {
  readonly net: string;
  readonly genesisPath: string;
  readonly execUrl: string;
  /** The execution node's JSON-RPC URL. */
  readonly rpcUrl: string;
  readonly beaconUrl: string;
  /** The parsed genesis.json. */
  genesis: any;

  constructor(
    readonly dir: string,
    readonly validators: number,
    private readonly ports: { rest: number; rpc: number; beacon: number },
    env: Record<string, string> = {},
  ) {
    super(cliEnv(dir, { SVC_PASSWORD: 'e2e-password', ...env }));
    this.net = join(dir, 'net');
    this.genesisPath = join(this.net, 'genesis.json');
    this.execUrl = `http://127.0.0.1:${ports.rest}`;
    this.rpcUrl = `http://127.0.0.1:${ports.rpc}`;
    this.beaconUrl = `http://127.0.0.1:${ports.beacon}`;
  }

  /** Slot and epoch lengths from genesis. */
  get slotMs(): number {
    return this.genesis.config.slot_seconds * 1000;
  }
  get slotsPerEpoch(): number {
    return this.genesis.config.slots_per_epoch;
  }
  epochOf(slot: number): number {
    return Math.floor(slot / this.slotsPerEpoch);
  }
  /** The current slot by our clock (the nodes share it: same machine). */
  slotNow(): number {
    return Math.max(0, Math.floor((Date.now() - this.genesis.genesis_time * 1000) / this.slotMs));
  }

  /** Starts execution (alone: one node has no peers, and P2P's default port would be shared) and waits until it is healthy. */
  async startExecution(): Promise<void> {
    this.start('execution', ['node', 'execution', '--genesis', this.genesisPath, '--data-dir', join(this.net, 'execution'), '--rest-port', String(this.ports.rest), '--rpc-port', String(this.ports.rpc), '--verifier-threads', '1', '--no-p2p']);
    await waitFor('execution /health', async () => ((await getJson(`${this.execUrl}/health`)).status === 'healthy' ? true : undefined), 30_000);
  }

  /** Starts (or restarts, on the same data dir and port) the beacon and waits until it is healthy. */
  async startBeacon(): Promise<void> {
    this.start('beacon', ['node', 'beacon', '--genesis', this.genesisPath, '--data-dir', join(this.net, 'beacon'), '--port', String(this.ports.beacon), '--execution-url', this.execUrl, '--no-p2p']);
    await waitFor('beacon health', async () => ((await getJson(`${this.beaconUrl}/beacon/v1/node/health`)).status === 'healthy' ? true : undefined), 30_000);
  }

  /** Starts (or restarts, on the same data dir) validator `i`: the process `validator-<i>`. */
  startValidator(i: number): ChildProcess {
    return this.start(`validator-${i}`, [
      'node', 'validator',
      '--keystore', join(this.net, 'keystores', `validator-${i}.json`),
      '--genesis', this.genesisPath,
      '--beacon-url', this.beaconUrl,
      '--token-file', join(this.net, 'beacon', 'validator-token'),
      '--data-dir', join(this.net, `validator-${i}`),
      '--metrics-port', '0',
    ]);
  }

  /** Execution, beacon, then every validator. */
  async startAll(): Promise<void> {
    await this.startExecution();
    await this.startBeacon();
    for (let i = 0; i < this.validators; i++) this.startValidator(i);
  }

  /** The beacon's head with its justified and finalised checkpoints. */
  async head(): Promise<BeaconHead> {
    return (await getJson(`${this.beaconUrl}/api/v1/beacon/head`)).data as BeaconHead;
  }

  /** The beacon's wall-clock slot. */
  async currentSlot(): Promise<number> {
    return (await getJson(`${this.beaconUrl}/beacon/v1/node/health`)).current_slot as number;
  }

  /** Waits until the beacon's head satisfies `ok`; returns that head. */
  waitHead(what: string, ok: (h: BeaconHead) => boolean, ms: number): Promise<BeaconHead> {
    return waitFor(what, async () => {
      const h = await this.head();
      return ok(h) ? h : undefined;
    }, ms);
  }
}

/** A process group on a genesis made by `svc genesis new` (Devnet, P2pNet). */
export interface GenesisNetwork extends ProcessGroup {
  readonly net: string;
  readonly genesisPath: string;
  genesis: any;
}

/**
 * Makes a genesis (`validators` validators, one prefunded account) for the network `make`
 * builds in a fresh temp dir, runs `fn`, then SIGKILLs every process it started (always) and
 * removes the dir. On failure the processes' log tails are printed before the error propagates.
 */
export async function withGenesisNetwork<N extends GenesisNetwork, T>(validators: number, make: (dir: string) => Promise<N>, fn: (net: N) => Promise<T>, genesisArgs: string[] = []): Promise<T> {
  return withTempDir(async (dir) => {
    const net = await make(dir);
    try {
      expectJsonOk(await runCli(['genesis', 'new', '--validators', String(validators), '--out', net.net, '--accounts', '1', '--json', ...genesisArgs], { ...net.env, SVC_PASSWORD: '' }));
      net.genesis = JSON.parse(await readFile(net.genesisPath, 'utf8'));
      const result = await fn(net);
      if (process.env.SVC_E2E_LOGS) net.dumpLogs(Number(process.env.SVC_E2E_LOGS) || 3_000);
      return result;
    } catch (err) {
      net.dumpLogs(Number(process.env.SVC_E2E_LOGS) || 3_000);
      throw err;
    } finally {
      await net.killAll();
    }
  });
}

/** A single-node devnet (execution, beacon, `validators` validator processes) on free loopback ports, `env` added to every process's environment, `genesisArgs` to `svc genesis new`: see withGenesisNetwork. */
export async function withDevnet<T>(opts: { validators: number; env?: Record<string, string>; genesisArgs?: string[] }, fn: (net: Devnet) => Promise<T>): Promise<T> {
  return withGenesisNetwork(opts.validators, async (dir) => new Devnet(dir, opts.validators, { rest: await freePort(), rpc: await freePort(), beacon: await freePort() }, opts.env), fn, opts.genesisArgs);
}
