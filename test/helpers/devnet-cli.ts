/** `svc devnet` driven as a user would, for the devnet e2e tests: JSON commands, status, the manifest's pids. */
import { readManifest } from '../../src/devnet/manifest.js';
import { expectJsonOk, runCli } from './cli.js';

/**
 * Ceiling of one `svc devnet …` command: `up --detach` waits by design for every process to come up
 * (up to 240 s of its own), far longer than a plain command's ceiling on a loaded machine.
 */
export const DEVNET_COMMAND_CEILING_MS = 300_000;

/** Runs `svc …args --json` and returns the parsed document (asserting success). */
export async function svcJson(env: Record<string, string>, ...args: string[]): Promise<any> {
  return expectJsonOk(await runCli([...args, '--json'], env, { timeoutMs: DEVNET_COMMAND_CEILING_MS }));
}

/** `devnet status --json` (exit 1 when unhealthy still prints the report). */
export async function devnetStatus<T = any>(env: Record<string, string>, dir: string): Promise<T> {
  const r = await runCli(['devnet', 'status', '--dir', dir, '--json'], env);
  return JSON.parse(r.stdout) as T;
}

/** Every pid the manifest in `dir` records (supervisor and processes). */
export function manifestPids(dir: string): number[] {
  const m = readManifest(dir);
  if (!m) return [];
  return [m.supervisor?.pid, ...m.processes.map((p) => p.pid)].filter((p): p is number => typeof p === 'number' && p > 0);
}
