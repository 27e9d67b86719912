/**
 * The real `svc node execution` process for crash tests (not a test file itself): spawned on
 * free loopback ports, ready once it logs "execution node started".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { cliEnv, RUN_JS } from '../../helpers/cli.js';
import { freePort } from '../../helpers/network.js';

export { freePort };


/** A running node process. */
export interface Proc {
  child: ChildProcess;
  rest: string;
  rpc: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** Spawns `svc node execution` and waits (with a deadline) for its "started" log line. */
export async function startProc(dir: string, env: Record<string, string> = {}): Promise<Proc> {
  const [restPort, rpcPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [RUN_JS, 'node', 'execution', '--genesis', join(dir, 'genesis.json'), '--data-dir', join(dir, 'data'), '--rest-port', String(restPort), '--rpc-port', String(rpcPort), '--verifier-threads', '1', '--p2p-host', '127.0.0.1', '--p2p-port', '0'],
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
    timer = setTimeout(() => reject(new Error(`node did not start within 20 s:\n${err}`)), 20_000);
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
