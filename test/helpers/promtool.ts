/**
 * Running Prometheus's promtool from tests (not a test file itself). promtool comes with Debian's
 * `prometheus` package; where it is absent the caller skips with the message `promtoolMissing`
 * gives, so the suite still runs on a machine without it.
 */
import { spawnSync } from 'node:child_process';

/** What one promtool run printed. */
export interface PromtoolResult {
  status: number | null;
  output: string;
}

/** Runs `promtool …args` (stdin `input`); undefined when promtool is not installed. */
export function promtool(args: readonly string[], opts: { input?: string; cwd?: string } = {}): PromtoolResult | undefined {
  const r = spawnSync('promtool', args, { encoding: 'utf8', input: opts.input, cwd: opts.cwd, timeout: 60_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The line a test prints when it skips a promtool check. */
export function promtoolMissing(what: string): string {
  return `  note: promtool is not installed; skipping ${what} (apt-get install prometheus provides it)`;
}
