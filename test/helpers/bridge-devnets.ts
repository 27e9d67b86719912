/**
 * Two devnets bridged to each other on one machine, as a user starts them (`svc devnet up
 * --detach`, the second with `--chain-id … --counterpart DIR_A`), for the bridge e2e test and
 * bench; and a relayer (`svc bridge relay --json`) as a child process whose action lines are
 * collected. Everything is removed afterwards, whatever happens. Not a test file; no assertion
 * library, so bench/ can use it too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readManifest, pidAlive, type DevnetManifest } from '../../src/devnet/manifest.js';
import { DEVNET_PASSWORD } from '../../src/genesis/build.js';
import type { RelayAction } from '../../src/client/bridge-relayer.js';

const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/** Output of one finished `svc` run. */
export interface SvcRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc …args` to completion (a hard ceiling of `timeoutMs`, default 5 minutes). */
export function svcRun(args: readonly string[], env: Record<string, string>, timeoutMs = 300_000): Promise<SvcRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN_JS, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `svc …args --json` that must succeed: its JSON document. */
export async function svcJson<T = any>(args: readonly string[], env: Record<string, string>, timeoutMs?: number): Promise<T> {
  const r = await svcRun([...args, '--json'], env, timeoutMs);
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** One devnet of the pair. */
export interface BridgeDevnet {
  dir: string;
  chainId: string;
  manifest: DevnetManifest;
  beaconUrl: string;
  executionUrl: string;
  wsUrl: string;
  /** Prefunded account i's wallet file (password DEVNET_PASSWORD). */
  account(i: number): { address: string; wallet: string };
  /** Validator i's keystore file. */
  validatorWallet(i: number): string;
}

export interface BridgePair {
  root: string;
  env: Record<string, string>;
  a: BridgeDevnet;
  b: BridgeDevnet;
  slotMs: number;
  slotsPerEpoch: number;
  /** Re-reads both manifests (after a restart the endpoints may differ). */
  refresh(): void;
}

function devnetOf(dir: string): BridgeDevnet {
  const m = readManifest(dir);
  if (!m) throw new Error(`no devnet manifest in ${dir}`);
  const d: BridgeDevnet = {
    dir,
    chainId: m.chain_id,
    manifest: m,
    beaconUrl: m.endpoints.beacon,
    executionUrl: m.endpoints.execution,
    wsUrl: m.endpoints.ws,
    account: (i) => {
      const k = m.accounts[i];
      if (!k) throw new Error(`${dir} has no account ${i}`);
      return { address: k.address, wallet: k.wallet };
    },
    validatorWallet: (i) => m.validators[i]!.wallet,
  };
  return d;
}

/** Every pid a manifest records, for the last-resort kill. */
function pids(dir: string): number[] {
  try {
    const m = readManifest(dir);
    if (!m) return [];
    return [m.supervisor?.pid, ...m.processes.map((p) => p.pid)].filter((p): p is number => typeof p === 'number' && p > 0);
  } catch {
    return [];
  }
}

/**
 * Starts devnet A (chain `svc-a`) and B (`svc-b`, `--counterpart A`), each `validators` validators
 * on one node, runs `fn`, then stops and removes both (down --clean, then SIGKILL for anything
 * left). `before(pair-in-progress)` hooks run while B starts (e.g. building a third genesis).
 */
export async function withBridgeDevnets<T>(o: { validators: number; slotSeconds?: number; extraEnv?: Record<string, string> }, fn: (p: BridgePair) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'svc-bridge-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    SVC_HOME: join(root, 'svc'),
    SVC_KDF_MEMORY_KIB: '256',
    SVC_PASSWORD: DEVNET_PASSWORD,
    ...o.extraEnv,
  };
  const dirA = join(root, 'a');
  const dirB = join(root, 'b');
  const timing = o.slotSeconds === undefined ? [] : ['--slot-time', String(o.slotSeconds)];
  try {
    await svcJson(['devnet', 'up', '--dir', dirA, '--validators', String(o.validators), '--chain-id', 'svc-a', ...timing, '--detach'], env);
    await svcJson(['devnet', 'up', '--dir', dirB, '--validators', String(o.validators), '--chain-id', 'svc-b', ...timing, '--counterpart', dirA, '--detach'], env);
    const pair: BridgePair = {
      root,
      env,
      a: devnetOf(dirA),
      b: devnetOf(dirB),
      slotMs: 0,
      slotsPerEpoch: 0,
      refresh() {
        pair.a = devnetOf(dirA);
        pair.b = devnetOf(dirB);
      },
    };
    pair.slotMs = pair.a.manifest.slot_seconds * 1000;
    pair.slotsPerEpoch = pair.a.manifest.slots_per_epoch;
    return await fn(pair);
  } finally {
    const left = [...pids(dirB), ...pids(dirA)];
    await Promise.all([svcRun(['devnet', 'down', '--dir', dirB, '--clean'], env, 60_000), svcRun(['devnet', 'down', '--dir', dirA, '--clean'], env, 60_000)]).catch(() => undefined);
    for (const pid of left) {
      if (!pidAlive(pid)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await rm(root, { recursive: true, force: true });
  }
}

/** A running `svc bridge relay --json`: its action lines as they arrive. */
export interface RelayerProcess {
  child: ChildProcess;
  actions: RelayAction[];
  stderr(): string;
  /** SIGTERM, then its exit code (SIGKILL after `ms`). */
  stop(ms?: number): Promise<number | null>;
}

/** Starts `svc bridge relay …args --json`. */
export function startRelayer(args: readonly string[], env: Record<string, string>): RelayerProcess {
  const child = spawn(process.execPath, [RUN_JS, 'bridge', 'relay', ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const actions: RelayAction[] = [];
  let buf = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim()) actions.push(JSON.parse(line) as RelayAction);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    actions,
    stderr: () => err,
    async stop(ms = 20_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
