/**
 * The three-host deployment, with real processes in Linux network namespaces
 * (test/helpers/netns.ts), each host with its own files, and default ports (each namespace has its
 * own port space, as separate machines do):
 *
 * - X runs `svc node execution` with `--engine-jwt-secret`, listening on all its addresses;
 * - Y runs `svc node beacon` with `--execution-url http://<X>:8546 --engine-jwt-secret` (a copy of
 *   X's secret) and `--tls-cert/--tls-key` (a certificate naming Y's addresses);
 * - Z runs the 4 validators of a 4-validator genesis with `--beacon-url https://<Y>:8080`,
 *   `--token-file` (a copy of Y's validator token) and NODE_EXTRA_CA_CERTS naming Y's
 *   certificate, and no engine secret: the beacon builds the blocks (Z holds no copy of it).
 *
 * What it shows: the chain makes blocks and finalises; a transfer sent to X is included by a
 * validator on Z and becomes Finalized on X; X holds the beacon's head and finalised block; from
 * Z, an engine call to X without a (valid) JWT is 403 ENGINE_FORBIDDEN, a validator call to Y
 * without the (right) token is 401, plain HTTP to Y gets no answer and TLS without the CA is
 * refused. Skips with a message where namespaces cannot be made (not root, no iproute2) or where
 * openssl is missing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { join } from 'node:path';
import { signEngineJwt } from '../../src/node/shared/jwt.js';
import { expectJsonOk, runCli } from '../helpers/cli.js';
import { type BeaconHead, getJson, waitFor } from '../helpers/network.js';
import { type LabHost, withNetnsLab } from '../helpers/netns.js';
import { DEVNET_KEYSTORE_PASSWORD, type ExecBlock, withP2pNet } from '../helpers/p2p-network.js';

// Each host is its own machine: every layer keeps the CLI's default ports.
const REST_PORT = 8546;
const BEACON_PORT = 8080;
const TO = '0x00000000000000000000000000000000000000bb';

/** What a probe from inside a host saw: an HTTP answer, or the error code of a connection that got none. */
type Probe = { status: number; body: string } | { error: string };

/**
 * One HTTP(S) request made by a fresh node process inside a host, so the server sees that host's
 * address and TLS trust comes only from the NODE_EXTRA_CA_CERTS it is given, as for the validators.
 */
const PROBE_JS = `
const spec = JSON.parse(process.argv[1]);
const u = new URL(spec.url);
const mod = require(u.protocol === 'https:' ? 'node:https' : 'node:http');
const say = (v) => { process.stdout.write(JSON.stringify(v) + '\\n'); };
const req = mod.request(u, { method: spec.method, headers: spec.headers, agent: false, timeout: 10000 }, (res) => {
  let body = '';
  res.setEncoding('utf8').on('data', (d) => { body += d; });
  res.on('end', () => say({ status: res.statusCode, body }));
});
req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
req.on('error', (e) => say({ error: e.code || e.message }));
if (spec.body !== undefined) req.write(spec.body);
req.end();
`;

/** Runs PROBE_JS in `host` with `env` (PATH plus what the caller adds). */
function probe(host: LabHost, spec: { url: string; method?: string; headers?: Record<string, string>; body?: string }, env: Record<string, string> = {}): Promise<Probe> {
  const argv = [...host.prefix, process.execPath, '-e', PROBE_JS, JSON.stringify({ method: 'GET', headers: {}, ...spec })];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => {
      const line = out.trim().split('\n').pop();
      if (!line) return reject(new Error(`probe of ${spec.url} in ${host.name} printed nothing (exit ${code}): ${err.trim()}`));
      resolve(JSON.parse(line) as Probe);
    });
  });
}

/** The error code of a JSON error envelope, or what the probe got instead. */
function answer(p: Probe): { status: number; code: string | undefined } | { error: string } {
  if ('error' in p) return p;
  let code: string | undefined;
  try {
    code = (JSON.parse(p.body) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: p.status, code };
}

/** GET JSON over HTTPS trusting only `ca` (the test process cannot add NODE_EXTRA_CA_CERTS to itself after start). */
function getTlsJson(url: string, ca: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { ca, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (err) {
          reject(new Error(`${url}: HTTP ${res.statusCode}, not JSON: ${(err as Error).message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** A self-signed P-256 certificate naming `ips` (subjectAltName), or why openssl could not make one. */
function makeCert(dir: string, ips: readonly string[]): { certFile: string; keyFile: string } | string {
  const certFile = join(dir, 'beacon.crt');
  const keyFile = join(dir, 'beacon.key');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${ips[0]}`, '-addext', `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}`, '-days', '1', '-keyout', keyFile, '-out', certFile],
    { encoding: 'utf8' },
  );
  if (r.error) return `openssl not available (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0) return `openssl req failed (exit ${r.status}): ${r.stderr.trim()}`;
  return { certFile, keyFile };
}

test('three hosts: execution on X (engine JWT), beacon on Y (TLS, bearer token), 4 validators on Z: blocks, finality, and each link refuses the unauthenticated', async () => {
  await withNetnsLab(['x', 'y', 'z'], async (lab) => {
    await withP2pNet({ validators: 4 }, async (net) => {
      const [x, y, z] = (['x', 'y', 'z'] as const).map((n) => lab.hosts.get(n)!) as [LabHost, LabHost, LabHost];
      const epochMs = net.epochMs;
      // Each host's own directory: the genesis and the secrets are copied to it, as to a machine.
      const dirs = { x: join(net.dir, 'host-x'), y: join(net.dir, 'host-y'), z: join(net.dir, 'host-z') };
      for (const d of Object.values(dirs)) {
        await mkdir(d, { recursive: true });
        await copyFile(net.genesisPath, join(d, 'genesis.json'));
      }
      const cert = makeCert(dirs.y, [y.dataIp, y.mgmtIp]);
      if (typeof cert === 'string') {
        process.stderr.write(`[three-host] skipped: ${cert}\n`);
        return;
      }
      const secretHex = randomBytes(32).toString('hex');
      for (const d of [dirs.x, dirs.y]) await writeFile(join(d, 'engine.jwt'), `${secretHex}\n`, { mode: 0o600 });
      const secret = Buffer.from(secretHex, 'hex');
      const caPem = await readFile(cert.certFile, 'utf8');
      await copyFile(cert.certFile, join(dirs.z, 'beacon.crt'));

      const execDataUrl = `http://${x.dataIp}:${REST_PORT}`;
      const execMgmtUrl = `http://${x.mgmtIp}:${REST_PORT}`;
      const beaconDataUrl = `https://${y.dataIp}:${BEACON_PORT}`;
      const beaconMgmtUrl = `https://${y.mgmtIp}:${BEACON_PORT}`;

      // --- X: execution. 0.0.0.0 so Y reaches it on the data network and the test on management.
      net.start('x-execution', [
        'node', 'execution', '--genesis', join(dirs.x, 'genesis.json'), '--data-dir', join(dirs.x, 'execution'),
        '--host', '0.0.0.0', '--engine-jwt-secret', join(dirs.x, 'engine.jwt'), '--p2p-host', x.dataIp,
      ], { prefix: x.prefix });
      await waitFor('x-execution /health', async () => ((await getJson(`${execMgmtUrl}/health`)).status === 'healthy' ? true : undefined), 60_000);

      // --- Y: beacon over TLS, engine calls to X with the JWT. Healthy means it reached X.
      net.start('y-beacon', [
        'node', 'beacon', '--genesis', join(dirs.y, 'genesis.json'), '--data-dir', join(dirs.y, 'beacon'),
        '--host', '0.0.0.0', '--execution-url', execDataUrl, '--engine-jwt-secret', join(dirs.y, 'engine.jwt'),
        '--tls-cert', cert.certFile, '--tls-key', cert.keyFile, '--p2p-host', y.dataIp,
      ], { prefix: y.prefix });
      await waitFor('y-beacon health over TLS', async () => ((await getTlsJson(`${beaconMgmtUrl}/beacon/v1/node/health`, caPem)).status === 'healthy' ? true : undefined), 60_000);
      const started = await net.waitLog('y-beacon', 'beacon node started', 10_000);
      assert.match(String(started.url), /^https:\/\//, 'the beacon serves HTTPS');
      assert.equal(net.log('y-beacon').filter((l) => l.level === 'warn' && /certificate/.test(l.msg)), [], 'the certificate names the listen address: no warning');
      await copyFile(join(dirs.y, 'beacon', 'validator-token'), join(dirs.z, 'validator-token'));
      const token = (await readFile(join(dirs.z, 'validator-token'), 'utf8')).trim();

      // --- Each link refuses what is not authenticated, probed from Z.
      const trustY = { NODE_EXTRA_CA_CERTS: join(dirs.z, 'beacon.crt') };
      const pending = `${execDataUrl}/api/v1/engine/getPendingTransactions`;
      assert.equal(answer(await probe(z, { url: pending })), { status: 403, code: 'ENGINE_FORBIDDEN' }, 'engine call from Z without a JWT');
      assert.equal(answer(await probe(z, { url: pending, headers: { authorization: `Bearer ${signEngineJwt(randomBytes(32))}` } })), { status: 403, code: 'ENGINE_FORBIDDEN' }, 'engine call from Z with a JWT of another secret');
      assert.equal(answer(await probe(z, { url: pending, headers: { authorization: `Bearer ${signEngineJwt(secret)}` } })), { status: 200, code: undefined }, 'engine call from Z with the JWT');
      const attest = { url: `${beaconDataUrl}/api/v1/attestation`, method: 'POST', body: '{}' };
      const json = { 'content-type': 'application/json' };
      assert.equal(answer(await probe(z, { ...attest, headers: json }, trustY)), { status: 401, code: 'UNAUTHORIZED' }, 'validator call to Y without the token');
      assert.equal(answer(await probe(z, { ...attest, headers: { ...json, authorization: `Bearer ${randomBytes(32).toString('hex')}` } }, trustY)), { status: 401, code: 'UNAUTHORIZED' }, 'validator call to Y with another token');
      const withToken = answer(await probe(z, { url: `${beaconDataUrl}/api/v1/validator/block_attestations?slot=${net.slotNow() + 1}`, headers: { authorization: `Bearer ${token}` } }, trustY));
      assert.equal(withToken, { status: 200, code: undefined }, 'validator call to Y with the token');
      assert.equal(await probe(z, { url: `http://${y.dataIp}:${BEACON_PORT}/beacon/v1/node/health` }, trustY), { error: 'ECONNRESET' }, 'plain HTTP to Y gets no answer');
      assert.equal(await probe(z, { url: `${beaconDataUrl}/beacon/v1/node/health` }), { error: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'TLS to Y without the CA is refused by the client');

      // --- Z: the four validators, trusting Y's certificate; no engine secret on Z.
      for (let i = 0; i < 4; i++) {
        net.start(`z-validator-${i}`, [
          'node', 'validator',
          '--keystore', join(net.net, 'keystores', `validator-${i}.json`),
          '--genesis', join(dirs.z, 'genesis.json'),
          '--beacon-url', beaconDataUrl,
          '--token-file', join(dirs.z, 'validator-token'),
          '--data-dir', join(dirs.z, `validator-${i}`),
          '--metrics-port', '0',
        ], { prefix: z.prefix, env: trustY });
      }

      // A transfer sent to X's REST reaches a block: Y built it from X's payload, a validator on Z signed it.
      const sent = expectJsonOk(await runCli([
        'tx', 'send', '--from', join(net.net, 'accounts', 'account-0.json'), '--to', TO, '--value', '4321', '--execution-url', execMgmtUrl, '--json',
      ], { ...net.env, SVC_PASSWORD: DEVNET_KEYSTORE_PASSWORD }));
      const hash = sent.hash as string;
      const included = await waitFor('the transfer in a block on X', async () => {
        const s = (await getJson(`${execMgmtUrl}/api/v1/transactions/${hash}`)).data;
        return s.state === 'Confirmed' || s.state === 'Finalized' ? s : undefined;
      }, 8 * epochMs + 60_000);
      const onBeacon = await getTlsJson(`${beaconMgmtUrl}/api/v1/beacon/blocks/${included.block.hash}`, caPem);
      assert.is(onBeacon.data?.index, included.block.number, `the beacon on Y knows the transfer's block: ${JSON.stringify(onBeacon).slice(0, 300)}`);

      // --- The chain finalises (3 of 4 validators attesting at least: Z's votes reach Y over TLS).
      const head = (): Promise<BeaconHead> => getTlsJson(`${beaconMgmtUrl}/api/v1/beacon/head`, caPem).then((r) => r.data as BeaconHead);
      const fin = await waitFor('a finalised epoch on Y', async () => {
        const h = await head();
        return h.finalized.epoch >= 1 && h.index >= 4 ? h : undefined;
      }, 12 * epochMs + 60_000);
      process.stderr.write(`[three-host] head ${fin.index}@${fin.slot}, justified ${fin.justified.epoch}, finalized ${fin.finalized.epoch}\n`);

      // --- X holds the beacon's chain: its head is the beacon's head, its finalised block the
      // beacon's finalised checkpoint (forkchoiceUpdated carried both across hosts with the JWT).
      await waitFor('X latest = Y head', async () => {
        const h = await head();
        const latest = (await getJson(`${execMgmtUrl}/api/v1/blocks/latest`)).data as ExecBlock;
        return latest.hash === h.root && latest.number === h.index ? true : undefined;
      }, 4 * epochMs + 30_000, 200);
      await waitFor('X finalized = Y finalised checkpoint', async () => {
        const h = await head();
        const f = (await getJson(`${execMgmtUrl}/api/v1/blocks/finalized`)).data as ExecBlock;
        return h.finalized.epoch >= 1 && f.hash === h.finalized.root && f.finalized ? true : undefined;
      }, 4 * epochMs + 30_000, 200);
      const final = await waitFor('the transfer Finalized on X', async () => {
        const s = (await getJson(`${execMgmtUrl}/api/v1/transactions/${hash}`)).data;
        return s.state === 'Finalized' ? s : undefined;
      }, 12 * epochMs + 60_000);
      // Validators that start late on a loaded machine can make competing blocks at one height, both
      // carrying the transfer: the one it is finalised in is the beacon's, whichever branch won.
      const finalOnBeacon = await getTlsJson(`${beaconMgmtUrl}/api/v1/beacon/blocks/${final.block.hash}`, caPem);
      assert.is(finalOnBeacon.data?.index, final.block.number, `the beacon on Y knows the block the transfer is finalised in: ${JSON.stringify(finalOnBeacon).slice(0, 300)}`);

      // --- Every validator on Z worked through Y, and none was refused by X or by its own protection.
      for (let i = 0; i < 4; i++) {
        const lines = net.log(`z-validator-${i}`);
        assert.ok(lines.some((l) => l.msg === 'beacon event stream connected: reacting to new blocks as they arrive' && String(l.url).startsWith('wss://')), `z-validator-${i} on Y's /ws over wss`);
        assert.ok(lines.some((l) => l.msg === 'attestation sent'), `z-validator-${i} attested through Y`);
        // A busy machine may time a call out; a refusal would be Y's JWT not crossing hosts.
        assert.equal(lines.filter((l) => l.msg.startsWith('not proposing: the beacon cannot build the block') && l.code === 'ENGINE_FORBIDDEN'), [], `z-validator-${i}: X never refused Y's JWT`);
        assert.equal(lines.filter((l) => /slashing protection refused/.test(l.msg)), [], `z-validator-${i}`);
      }
      assert.ok(
        [0, 1, 2, 3].some((i) => net.log(`z-validator-${i}`).some((l) => l.msg === 'block proposed' && l.block_hash === final.block.hash)),
        'a validator on Z proposed the block the transfer is finalised in',
      );
    });
  }, (reason) => process.stderr.write(`[three-host] skipped: ${reason}\n`));
});

test.run();
