/**
 * The README's first command, exactly: `npx svc devnet up --validators 4` in the checkout `npm ci`
 * set up, with an empty npm cache. npx must run the checkout's own bin/run.js (the link `prepare`
 * makes in node_modules/.bin) and install nothing into its cache: when the root package declared the
 * bin itself, npx installed the checkout into ~/.npm/_npx first, a minute of silent spinner.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, runCli } from '../helpers/cli.js';

/**
 * Generous for a loaded 2-core machine: the command's own start (genesis, keystores, processes up)
 * takes a few seconds; npx installing the checkout took 31–54 s on top on an idle one.
 */
const FIRST_OUTPUT_MS = 25_000;

test('prepare links node_modules/.bin/svc to the checkout\'s bin/run.js', () => {
  assert.is(readlinkSync(join(REPO_ROOT, 'node_modules', '.bin', 'svc')), join('..', '..', 'bin', 'run.js'));
});

test('npx svc devnet up --validators 4 runs the checkout at once and installs nothing into the npx cache', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'svc-npx-'));
  const cache = join(tmp, 'npm-cache');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, SVC_HOME: join(tmp, 'home'), npm_config_cache: cache };
  const t0 = Date.now();
  const child = spawn('npx', ['svc', 'devnet', 'up', '--validators', '4'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  try {
    // Without a terminal the first frame is the `started` event line.
    const first = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no output within ${FIRST_OUTPUT_MS} ms; stderr: ${stderr.slice(-2000)}`)), FIRST_OUTPUT_MS);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) {
          clearTimeout(timer);
          resolve(out.slice(0, nl));
        }
      });
      void exited.then((code) => reject(new Error(`npx exited (${code}) before printing anything; stderr: ${stderr.slice(-2000)}`)));
    });
    const ms = Date.now() - t0;
    const event = JSON.parse(first) as { event: string; dir: string };
    assert.is(event.event, 'started', first);
    assert.is(event.dir, join(tmp, 'home', 'devnet'), 'the default devnet directory under SVC_HOME');
    assert.not.ok(existsSync(join(cache, '_npx')), `npx installed into its cache: ${existsSync(cache) ? readdirSync(cache).join(', ') : ''}`);
    console.log(`  first output ${ms} ms after the command (bound ${FIRST_OUTPUT_MS} ms)`);
  } finally {
    // As a terminal's Ctrl-C does, signal the whole group: npx exits on SIGTERM without passing it
    // on, and svc stops every devnet process on its own. `devnet down` is the fallback.
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await exited;
    await runCli(['devnet', 'down'], env);
    await rm(tmp, { recursive: true, force: true });
  }
});

test.run();
