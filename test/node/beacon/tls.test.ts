/**
 * Beacon TLS (`--tls-cert/--tls-key`): REST and `/ws` over HTTPS/WSS, clients trusting a
 * self-signed certificate through NODE_EXTRA_CA_CERTS (fetch/undici and the `ws` client, in a
 * child process since Node reads that variable once at start-up), plain HTTP refused, and the
 * CLI's errors for bad flag combinations and bad PEM files.
 *
 * The certificate is generated at test time with `openssl` (Node has no X.509 generator); where
 * openssl is not on PATH the tests that need it print a note and pass without running.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { WebSocket } from 'ws';
import { loadGenesisFile } from '../../../src/genesis/load.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import { loadTlsPair, tlsWarnings } from '../../../src/node/shared/tls.js';
import { silentLogger } from '../../../src/util/log.js';
import { REPO_ROOT, RUN_JS, cliEnv, expectCliError, expectJsonOk, mapLimit, runCli } from '../../helpers/cli.js';
import { type Harness, sample, startHarness, stopHarness } from './fixture.js';

interface Pem {
  dir: string;
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

interface Ctx {
  pem?: Pem;
  /** Why there is no certificate (openssl missing), printed by each test that needs one. */
  skip?: string;
  dir?: string;
}

/** A self-signed P-256 certificate for 127.0.0.1 (SAN IP:127.0.0.1), valid one day, or why not. */
function makeCert(dir: string): { certFile: string; keyFile: string } | string {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyFile, '-out', certFile],
    { encoding: 'utf8' },
  );
  if (r.error) return `openssl not available (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0) return `openssl req failed (exit ${r.status}): ${r.stderr.trim()}`;
  return { certFile, keyFile };
}

/** GET over HTTPS trusting only `ca`; a fresh connection each time so nothing outlives the server. */
function getTls(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { ca, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** GET over plain HTTP: what a client that forgot the scheme sees. */
function getPlain(url: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/**
 * A client in its own process, as the validator client and the CLI are: their BeaconClient's
 * health call (node:https through src/util/http-client.ts), then a `ws` connection to /ws
 * (the URL's http → ws). It prints one JSON line per step ({health}, {open}, {message}) or
 * {error, message} (the innermost cause's) and exits 3 on a failure. With "event" as the second
 * argument it waits for one event before closing.
 */
const CLIENT_JS = `
const { WebSocket } = require('ws');
const [base, mode, clientModule] = process.argv.slice(1);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
(async () => {
  const { BeaconClient } = await import(clientModule);
  const health = await new BeaconClient(base, { timeoutMs: 5000 }).health();
  say({ health, status: health.status === 'healthy' ? 200 : 503 });
  const ws = new WebSocket(base.replace(/^http/, 'ws') + '/ws');
  await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
  say({ open: true });
  if (mode !== 'event') return ws.close();
  // The beacon publishes its own events too (head, on its slot timer): wait for the test's new_block.
  ws.on('message', (m) => { const j = JSON.parse(m.toString()); if (j.type !== 'new_block') return; say({ message: j }); ws.close(); });
})().catch((e) => { let r = e; while (r.cause) r = r.cause; say({ error: r.code || 'ERROR', message: r.message }); process.exit(3); });
`;

/** The compiled BeaconClient module the child imports (the validator's and the CLI's client). */
const BEACON_CLIENT_MODULE = new URL('../../../src/client/beacon.js', import.meta.url).href;

/** Runs CLIENT_JS against `base` with exactly `env`; `onLine` sees each JSON line as it arrives. */
function runClient(base: string, env: Record<string, string>, mode: 'open' | 'event', onLine: (line: Record<string, unknown>) => void = () => undefined): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CLIENT_JS, base, mode, BEACON_CLIENT_MODULE], { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'], timeout: 20_000 });
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const v = JSON.parse(l) as Record<string, unknown>;
      lines.push(v);
      onLine(v);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, lines }));
  });
}

/** The environment of a client child: PATH for the node binary, and the CA to trust when given. */
const clientEnv = (ca?: string): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) });

/** Polls `check` until it returns a value or `ms` pass. */
async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve(check()).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function need(ctx: Ctx): Pem | undefined {
  if (!ctx.pem) console.log(`  note: ${ctx.skip ?? 'no certificate'}; skipping this TLS test (install openssl to run it)`);
  return ctx.pem;
}

const tls = suite<Ctx>('beacon TLS', {});

tls.before(async (ctx) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-tls-'));
  ctx.dir = dir;
  const made = makeCert(dir);
  if (typeof made === 'string') {
    ctx.skip = made;
    return;
  }
  ctx.pem = { dir, ...made, cert: await readFile(made.certFile, 'utf8'), key: await readFile(made.keyFile, 'utf8') };
});

tls.after(async (ctx) => {
  if (ctx.dir) await rm(ctx.dir, { recursive: true, force: true });
});

tls('beacon over TLS: https:// url, REST with the CA, plain HTTP refused, /ws over wss delivers events, genesis has no canonical length', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const h: Harness = await startHarness({ validators: 2, slotsAgo: 4, tls: { cert: pem.cert, key: pem.key } });
  try {
    const url = h.beacon.url;
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await getTls(`${url}/beacon/v1/node/health`, pem.cert);
    assert.is(health.status, 200, health.body);
    assert.is(JSON.parse(health.body).status, 'healthy');

    // A client that speaks plain HTTP to the TLS port gets no answer at all.
    const plain = await getPlain(url.replace(/^https:/, 'http:') + '/beacon/v1/node/health').then(
      (r) => `HTTP ${r.status}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    assert.is(plain, 'ECONNRESET', 'the TLS listener hangs up on plain HTTP');
    // Without the CA the in-process fetch refuses the self-signed certificate.
    const untrusted = await fetch(`${url}/beacon/v1/node/health`).then(
      () => 'answered',
      (err: { cause?: { code?: string } }) => err.cause?.code ?? 'error',
    );
    assert.is(untrusted, 'DEPTH_ZERO_SELF_SIGNED_CERT');

    // /ws over wss with the CA: an event published by the beacon arrives.
    const ws = new WebSocket(`${url.replace(/^https:/, 'wss:')}/ws`, { ca: pem.cert });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      // The beacon publishes its own events too (head, on its slot timer): wait for this one.
      const got = new Promise<string>((resolve) => ws.on('message', (m) => { if (JSON.parse(m.toString()).type === 'new_block') resolve(m.toString()); }));
      await waitFor('the client to be registered', () => (h.beacon.events.clients === 1 ? true : undefined), 5_000);
      h.beacon.events.publish('new_block', { slot: 7, block_hash: '0x' + '11'.repeat(32), proposer: '0x' + '22'.repeat(20), transactions: 0 });
      const msg = JSON.parse(await got) as { type: string; data: { slot: number } };
      assert.is(msg.type, 'new_block');
      assert.is(msg.data.slot, 7);
    } finally {
      ws.terminate();
    }

    // Task 2: the head is genesis (unsigned), so the canonical length has no sample, not a 0.
    const metrics = await getTls(`${url}/metrics`, pem.cert);
    assert.is(metrics.status, 200);
    assert.match(metrics.body, /^# TYPE quantum_canonical_bytes_len gauge$/m);
    assert.is(sample(metrics.body, 'quantum_canonical_bytes_len'), undefined);
    assert.ok((sample(metrics.body, 'service_beacon_ws_clients') ?? -1) >= 0, 'the hub reports into the beacon metrics');
  } finally {
    await stopHarness(h);
  }
});

tls('NODE_EXTRA_CA_CERTS makes a self-signed beacon certificate trusted for fetch (undici) and the ws client; without it both refuse', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const h: Harness = await startHarness({ validators: 2, slotsAgo: 4, tls: { cert: pem.cert, key: pem.key } });
  try {
    const url = h.beacon.url;
    const published: number[] = [];
    const trusted = await runClient(url, clientEnv(pem.certFile), 'event', (line) => {
      // Once the child is connected, publish until it has received one event.
      if (line.open !== true) return;
      void waitFor('the child on /ws', () => (h.beacon.events.clients === 1 ? true : undefined), 5_000).then(() => {
        published.push(h.beacon.events.publish('new_block', { slot: 9, block_hash: '0x' + '33'.repeat(32), proposer: '0x' + '44'.repeat(20), transactions: 1 }));
      });
    });
    assert.is(trusted.code, 0, JSON.stringify(trusted.lines));
    assert.is(trusted.lines[0]!.status, 200);
    assert.is((trusted.lines[0]!.health as { status: string }).status, 'healthy');
    assert.equal(trusted.lines[1], { open: true });
    assert.equal((trusted.lines[2]!.message as { type: string; data: unknown }).data, { slot: 9, block_hash: '0x' + '33'.repeat(32), proposer: '0x' + '44'.repeat(20), transactions: 1 });
    assert.equal(published, [1]);

    const refused = await runClient(url, clientEnv(), 'open');
    assert.is(refused.code, 3, JSON.stringify(refused.lines));
    assert.equal(refused.lines, [{ error: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' }]);
  } finally {
    await stopHarness(h);
  }
});

tls('svc node beacon --tls-cert/--tls-key: the real CLI serves https and wss (client trusts it through NODE_EXTRA_CA_CERTS)', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const dir = join(pem.dir, 'cli-beacon');
  const env = cliEnv(dir);
  expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '1', '--out', join(dir, 'net'), '--json'], env));
  const genesisFile = join(dir, 'net', 'genesis.json');
  const exec = await ExecutionNode.start({ genesis: await loadGenesisFile(genesisFile), host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
  const args = ['node', 'beacon', '--genesis', genesisFile, '--data-dir', join(dir, 'beacon'), '--port', '0', '--execution-url', exec.restUrl, '--tls-cert', pem.certFile, '--tls-key', pem.keyFile, '--p2p-host', '127.0.0.1', '--p2p-port', '0'];
  const child = spawn(process.execPath, [RUN_JS, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  try {
    const started = await waitFor(
      'beacon node started',
      () => log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; url?: string; level: string }).find((l) => l.msg === 'beacon node started'),
      30_000,
    );
    assert.match(started.url ?? '', /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.not.match(log, /"level":"warn".*certificate/, 'the certificate names 127.0.0.1 and is valid: no warning');
    const r = await runClient(started.url!, clientEnv(pem.certFile), 'open');
    assert.is(r.code, 0, JSON.stringify(r.lines));
    assert.is(r.lines[0]!.status, 200);
    assert.equal(r.lines[1], { open: true });
  } catch (err) {
    process.stderr.write(`--- svc node beacon (stderr) ---\n${log.slice(-3000)}\n`);
    throw err;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('close', r)));
    await exec.stop();
  }
});

tls('svc node beacon / node all: one TLS flag alone is a usage error (exit 2); unreadable, non-PEM or mismatched files are one clear line (exit 1) before anything starts', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const d = pem.dir;
  await writeFile(join(d, 'garbage.pem'), '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
  await writeFile(join(d, 'garbage-key.pem'), '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n');
  await writeFile(join(d, 'other-key.pem'), generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  const dataDir = join(d, 'never-created');
  const cases: { args: string[]; exit: number; includes: string[] }[] = [];
  for (const cmd of ['beacon', 'all']) {
    const base = ['node', cmd, '--data-dir', dataDir];
    cases.push(
      { args: [...base, '--tls-cert', pem.certFile], exit: 2, includes: ['--tls-key'] },
      { args: [...base, '--tls-key', pem.keyFile], exit: 2, includes: ['--tls-cert'] },
      { args: [...base, '--tls-cert', join(d, 'missing.pem'), '--tls-key', pem.keyFile], exit: 1, includes: ['cannot read --tls-cert file', 'missing.pem', 'ENOENT'] },
      { args: [...base, '--tls-cert', pem.keyFile, '--tls-key', pem.keyFile], exit: 1, includes: ['--tls-cert file', 'is not a PEM certificate'] },
      { args: [...base, '--tls-cert', join(d, 'garbage.pem'), '--tls-key', pem.keyFile], exit: 1, includes: ['--tls-cert file', 'garbage.pem', 'is not a valid PEM certificate'] },
      { args: [...base, '--tls-cert', pem.certFile, '--tls-key', pem.certFile], exit: 1, includes: ['--tls-key file', 'is not a PEM private key'] },
      { args: [...base, '--tls-cert', pem.certFile, '--tls-key', join(d, 'garbage-key.pem')], exit: 1, includes: ['--tls-key file', 'is not a usable PEM private key'] },
      { args: [...base, '--tls-cert', pem.certFile, '--tls-key', join(d, 'other-key.pem')], exit: 1, includes: ['other-key.pem', 'is not the private key of the certificate in --tls-cert file'] },
    );
  }
  const env = cliEnv(join(d, 'home'));
  const results = await mapLimit(cases, 3, (c) => runCli(c.args, env));
  results.forEach((r, i) => {
    const c = cases[i]!;
    try {
      expectCliError(r, { exit: c.exit, messageIncludes: c.includes, json: false });
      assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
    } catch (err) {
      (err as Error).message = `case ${JSON.stringify(c.args.slice(1))}: ${(err as Error).message}`;
      throw err;
    }
  });
  assert.not.ok(existsSync(dataDir), 'nothing was started or created');
});

tls('svc node all --tls-cert/--tls-key: validators propose over TLS when NODE_EXTRA_CA_CERTS trusts the certificate; without it, one clear start-up error', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const dir = join(pem.dir, 'cli-all');
  const env = cliEnv(dir);
  expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '1', '--out', join(dir, 'net'), '--json'], env));
  const genesisFile = join(dir, 'net', 'genesis.json');
  const args = (data: string) => ['node', 'all', '--genesis', genesisFile, '--data-dir', join(dir, data), '--rest-port', '0', '--rpc-port', '0', '--beacon-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--tls-cert', pem.certFile, '--tls-key', pem.keyFile];

  // --log-level error: the start-up info lines would otherwise share stderr with the error.
  const untrusted = await runCli([...args('untrusted'), '--log-level', 'error'], env);
  expectCliError(untrusted, {
    exit: 1,
    messageIncludes: ['the validators cannot reach the beacon at https://127.0.0.1:', 'self-signed certificate', 'NODE_EXTRA_CA_CERTS'],
    json: false,
  });

  const child = spawn(process.execPath, [RUN_JS, ...args('trusted')], { env: { ...env, NODE_EXTRA_CA_CERTS: pem.certFile }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  try {
    const started = await waitFor(
      'all layers started',
      () => log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; beacon?: string }).find((l) => l.msg === 'all layers started'),
      30_000,
    );
    assert.match(started.beacon ?? '', /^https:\/\//);
    // The in-process validator fetches duties and posts its proposal over TLS: the head moves.
    const head = await waitFor(
      'a block proposed over TLS',
      async () => {
        const r = await getTls(`${started.beacon!}/api/v1/beacon/head`, pem.cert);
        const data = (JSON.parse(r.body) as { data: { index: number } }).data;
        return data.index >= 1 ? data : undefined;
      },
      30_000,
    );
    assert.ok(head.index >= 1);
    const metrics = await getTls(`${started.beacon!}/metrics`, pem.cert);
    assert.is(sample(metrics.body, 'quantum_canonical_bytes_len'), 3409, 'a real encoding once a block is proposed');
  } catch (err) {
    process.stderr.write(`--- svc node all (stderr) ---\n${log.slice(-3000)}\n`);
    throw err;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('close', r)));
  }
});

tls('tlsWarnings: expired, not yet valid, and a listen address the certificate does not name; none for a wildcard listen', async (ctx) => {
  const pem = need(ctx);
  if (!pem) return;
  const { certificate } = await loadTlsPair(pem.certFile, pem.keyFile);
  assert.equal(tlsWarnings(certificate, '127.0.0.1'), []);
  assert.equal(tlsWarnings(certificate, '0.0.0.0'), []);
  assert.equal(tlsWarnings(certificate, '::'), []);
  const [misnamed] = tlsWarnings(certificate, '127.0.0.2');
  assert.match(misnamed ?? '', /does not name 127\.0\.0\.2/);
  assert.equal(tlsWarnings(certificate, 'localhost').length, 1, 'a DNS name the certificate lacks');
  const later = new Date(Date.parse(certificate.validTo) + 60_000);
  assert.match(tlsWarnings(certificate, '127.0.0.1', later)[0] ?? '', /^the certificate expired on /);
  const earlier = new Date(Date.parse(certificate.validFrom) - 60_000);
  assert.match(tlsWarnings(certificate, '127.0.0.1', earlier)[0] ?? '', /^the certificate is not valid before /);
});

tls.run();
