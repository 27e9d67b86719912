/**
 * The real `svc node execution` process for crash tests (not a test file itself): spawned on
 * free loopback ports, ready once it logs "execution node started".
 */
import * as assert from 'uvu/assert';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { cliEnv, RUN_JS } from '../../helpers/cli.js';
import { freePort } from '../../helpers/network.js';
import { http } from './fixture.js';

export { freePort };


/** A running node process. */
export interface Proc {
  child: ChildProcess;
  rest: string;
  rpc: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** What else a crash test asks of the process. */
export interface ProcOptions {
  /** Extra command-line flags. */
  args?: readonly string[];
  /** How long start-up may take (a large journal's replay verifies every signature again); default 20 s. */
  startMs?: number;
}

/** Spawns `svc node execution` and waits (with a deadline) for its "started" log line. */
export async function startProc(dir: string, env: Record<string, string> = {}, opts: ProcOptions = {}): Promise<Proc> {
  const startMs = opts.startMs ?? 20_000;
  const [restPort, rpcPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [RUN_JS, 'node', 'execution', '--genesis', join(dir, 'genesis.json'), '--data-dir', join(dir, 'data'), '--rest-port', String(restPort), '--rpc-port', String(rpcPort), '--verifier-threads', '1', '--p2p-host', '127.0.0.1', '--p2p-port', '0', ...(opts.args ?? [])],
    { env: cliEnv(dir, env), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const started = new Promise<void>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      for (const line of err.split('\n')) {
        try {
          if ((JSON.parse(line) as { msg?: string }).msg === 'execution node started') resolve();
        } catch {
          // partial or non-JSON line
        }
      }
    });
    void exited.then((e) => reject(new Error(`node exited before starting (${JSON.stringify(e)}):\n${err}`)));
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`node did not start within ${startMs / 1000} s:\n${err}`)), startMs);
  });
  try {
    await Promise.race([started, deadline]);
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return { child, rest: `http://127.0.0.1:${restPort}`, rpc: `http://127.0.0.1:${rpcPort}`, exited, stderr: () => err };
}


/** Runs `fn` over `items` with at most `limit` running at once. */
export async function limited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

/** The hashes in the node's pool, sorted (one page of up to 10,000). */
export async function mempool(base: string): Promise<string[]> {
  const r = await http(base, '/api/v1/execution/mempool?limit=10000');
  assert.is(r.status, 200, r.text);
  return (r.body.transactions as Array<{ hash: string }>).map((t) => t.hash).sort();
}

/** SIGTERM, and asserts a clean exit. */
export async function stopClean(p: Proc): Promise<void> {
  p.child.kill('SIGTERM');
  const exit = await p.exited;
  assert.is(exit.code, 0, `clean shutdown on SIGTERM:\n${p.stderr()}`);
}
