/**
 * Helpers for tests that run the real `svc` binary (not a test file itself).
 *
 * This file compiles to dist/test/helpers/cli.js, so the repository root is three levels up.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const RUN_JS = join(REPO_ROOT, 'bin', 'run.js');
if (!existsSync(RUN_JS)) throw new Error(`test helper: ${RUN_JS} not found (repository root resolved to ${REPO_ROOT})`);

export interface CliResult {
  /** Exit code; null only if the process was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A hard ceiling so a hung child (e.g. waiting on a prompt) fails the test instead of the whole run. */
const CHILD_TIMEOUT_MS = 30_000;

/**
 * Runs `node bin/run.js ...args` with exactly `env` (nothing inherited) and stdin closed, so the CLI
 * sees no TTY and must never prompt. `timeoutMs` raises the ceiling for a command that waits by
 * design (`devnet up --detach` waits for a whole network to come up).
 */
export function runCli(args: readonly string[], env: Record<string, string>, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN_JS, ...args], {
      env,
      cwd: opts.cwd ?? REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? CHILD_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * The whole environment of a child: PATH only for the node binary's sake, HOME pointed into the
 * temp dir so oclif's cache/config never touch the real home, SVC_HOME inside it, a cheap KDF.
 */
export function cliEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    SVC_HOME: join(dir, 'svc'),
    SVC_KDF_MEMORY_KIB: '256',
    ...extra,
  };
}

/** Runs `fn` with a fresh directory under os.tmpdir(), removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` over `items` with at most `limit` in flight (the CI box has 2 cores). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

function describe(r: CliResult): string {
  return `exit ${r.code}${r.signal ? ` (signal ${r.signal})` : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/**
 * A successful `--json` run: exit 0, stdout is exactly one JSON document (nothing before or after
 * it), stderr empty. Returns the parsed document.
 */
export function expectJsonOk<T = any>(r: CliResult): T {
  assert.is(r.code, 0, `expected success, got ${describe(r)}`);
  assert.is(r.stderr, '', `expected an empty stderr, got ${describe(r)}`);
  let doc: unknown;
  try {
    doc = JSON.parse(r.stdout);
  } catch (err) {
    assert.unreachable(`stdout is not one JSON document (${(err as Error).message}): ${describe(r)}`);
  }
  assert.type(doc, 'object');
  assert.ok(doc !== null && !Array.isArray(doc), 'the JSON document is an object');
  assert.not.ok((doc as Record<string, unknown>).success === false, `unexpected error envelope: ${r.stdout}`);
  return doc as T;
}

export interface ExpectedCliError {
  exit: number;
  /** Machine code in the --json envelope. */
  code?: string;
  /** Exact message (without the "Error: " prefix). */
  message?: string;
  messageStartsWith?: string;
  messageIncludes?: string[];
  /** Whether the run used --json (then stdout must be the error envelope, else empty). */
  json: boolean;
}

/**
 * A failed run: exit code as expected, exactly one line on stderr starting with "Error: ", and
 * with --json an envelope `{success:false,error:{code,message}}` (same message) as the only stdout.
 * Returns the message.
 */
export function expectCliError(r: CliResult, e: ExpectedCliError): string {
  assert.is(r.code, e.exit, `expected exit ${e.exit}, got ${describe(r)}`);
  assert.ok(r.stderr.startsWith('Error: '), `stderr should start with "Error: ": ${describe(r)}`);
  assert.ok(r.stderr.endsWith('\n'), `stderr should end with a newline: ${describe(r)}`);
  assert.is(r.stderr.split('\n').length, 2, `stderr should be exactly one line: ${describe(r)}`);
  const message = r.stderr.slice('Error: '.length, -1);
  if (e.message !== undefined) assert.is(message, e.message);
  if (e.messageStartsWith !== undefined) assert.ok(message.startsWith(e.messageStartsWith), `message ${JSON.stringify(message)} should start with ${JSON.stringify(e.messageStartsWith)}`);
  for (const part of e.messageIncludes ?? []) assert.ok(message.includes(part), `message ${JSON.stringify(message)} should include ${JSON.stringify(part)}`);
  if (e.json) {
    let doc: any;
    try {
      doc = JSON.parse(r.stdout);
    } catch (err) {
      assert.unreachable(`stdout is not one JSON document (${(err as Error).message}): ${describe(r)}`);
    }
    assert.equal(Object.keys(doc).sort(), ['error', 'success']);
    assert.is(doc.success, false);
    assert.equal(Object.keys(doc.error).sort(), ['code', 'message']);
    assert.type(doc.error.code, 'string');
    if (e.code !== undefined) assert.is(doc.error.code, e.code);
    assert.is(doc.error.message, message, 'the envelope carries the same message as stderr');
  } else {
    assert.is(r.stdout, '', `stdout should be empty on a non-JSON error: ${describe(r)}`);
  }
  return message;
}
