/** `svc devnet` driven as a user would, for the devnet e2e tests: JSON commands, status, the manifest's pids. */
import { readManifest } from '../../src/devnet/manifest.js';
import { expectJsonOk, runCli } from './cli.js';
import { getJson, waitFor } from './network.js';

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

/**
 * Waits until `devnet status` reports a finalised epoch above `above`. A status command costs about
 * half a second of CPU, which polling it would take from the devnet it waits for; so the beacon's
 * head (one HTTP request) is polled every half slot, and status runs once the head shows it.
 */
export async function waitForFinality<T extends { finalized_epoch: number } = any>(env: Record<string, string>, dir: string, what: string, above: number, ms: number): Promise<T> {
  const m = readManifest(dir);
  if (!m) throw new Error(`no devnet manifest in ${dir}`);
  return waitFor(what, async () => {
    const head = (await getJson(`${m.endpoints.beacon}/api/v1/beacon/head`)).data as { finalized: { epoch: number } };
    if (head.finalized.epoch <= above) return undefined;
    const st = await devnetStatus<T>(env, dir);
    return st.finalized_epoch > above ? st : undefined;
  }, ms, m.slot_seconds * 500);
}

/** Every pid the manifest in `dir` records (supervisor and processes). */
export function manifestPids(dir: string): number[] {
  const m = readManifest(dir);
  if (!m) return [];
  return [m.supervisor?.pid, ...m.processes.map((p) => p.pid)].filter((p): p is number => typeof p === 'number' && p > 0);
}
