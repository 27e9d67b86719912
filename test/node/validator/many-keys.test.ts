/**
 * One validator client process holding several keys, against a real BeaconNode + ExecutionNode
 * (in process, ephemeral ports, real time, devnet timing: 2 s slots, 4 slots per epoch), with one
 * slashing-protection database in a real data directory:
 * - every key proposes and attests (per-key metrics labelled validator=<index>, and the process
 *   totals they add up to);
 * - a vote already recorded for one key (another signing root, target epoch E) makes slashing
 *   protection refuse that key's vote for E (DOUBLE_VOTE), and only that key's;
 * - after a restart on the same data directory every key's history is there (watermarks, a
 *   different vote for its last target refused), the RANDAO checkpoints are reused, and every key
 *   attests again.
 * And `svc node validator --keystore A --keystore B` as a real process: both keys propose and
 * attest, per-key metrics on its one metrics port, SIGTERM exits 0.
 * Deadlines are derived from genesis slot times with generous margins; nothing sleeps.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from '../../../src/core/codec/bytes.js';
import { epochOfSlot, slotAt, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { ValidatorClient } from '../../../src/node/validator/client.js';
import { openValidatorDataDir } from '../../../src/node/validator/data-dir.js';
import { randaoChainPath } from '../../../src/node/validator/randao/recommit.js';
import { type SlashingProtectionDb, SlashingProtectionError } from '../../../src/node/validator/slashing/protection.js';
import { spawn } from 'node:child_process';
import { buildGenesis, writeGenesis } from '../../../src/genesis/build.js';
import { anyFreePort } from '../../../src/devnet/ports.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { cliEnv, RUN_JS } from '../../helpers/cli.js';
import { captureLog, type LogLine } from '../../helpers/log.js';
import { type Harness, startHarness, stopHarness } from '../beacon/fixture.js';

const KEYS = 3;

/** The value of `name{labels}` in a Prometheus text exposition (undefined when absent). */
function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

async function scrape(client: ValidatorClient): Promise<string> {
  const r = await fetch(`${client.metricsUrl!}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.is(r.status, 200);
  return r.text();
}

/** Polls `check` (on observable state) until it returns a value or the wall clock passes `deadlineMs`. */
async function until<T>(what: string, deadlineMs: number, check: () => Promise<T | undefined>, last: () => string): Promise<T> {
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadlineMs) assert.unreachable(`${what}: not by the deadline; last seen: ${last()}`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

function start(h: Harness, sp: SlashingProtectionDb, dataDir: string): { client: ValidatorClient; lines: LogLine[] } {
  const { log, lines } = captureLog();
  const client = new ValidatorClient({ genesis: h.genesis, keys: h.validators, beaconUrl: h.beacon.url, token: h.token, slashingDb: sp, log, dataDir, metricsPort: 0 });
  return { client, lines };
}

test('one process with three keys: each proposes and attests; a recorded vote skips one key\'s duty only; a restart keeps every key\'s protection', async () => {
  const h = await startHarness({ validators: KEYS });
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-many-keys-'));
  const g = h.genesis;
  const spe = g.config.slots_per_epoch;
  const pk = h.validators.map((k) => toHex(k.mldsa.publicKey));
  let sp: SlashingProtectionDb | undefined;
  let run: { client: ValidatorClient; lines: LogLine[] } | undefined;
  try {
    sp = await openValidatorDataDir(dataDir, g);
    // Key 0 "already signed" a vote for target E with source 0 (as before a restart): its own
    // vote for E is skipped quietly, and everything before E is under its watermark.
    const E = epochOfSlot(g, slotAt(g, Date.now())) + 2;
    await sp.checkAndRecordAttestation(pk[0]!, 0, E, new Uint8Array(32).fill(0xee));
    run = start(h, sp, dataDir);
    await run.client.start();
    const r = run;
    // Generous: every key proposes with probability 1/3 a slot, so 8 epochs (32 slots) leave
    // (2/3)^32 for a key to have no slot at all.
    const deadline = slotStartMs(g, (E + 8) * spe) + 30_000;
    let text = '';
    const skipped = 'attestation skipped: this key already signed one for the target epoch';
    await until('every key proposed and attested, key 0 skipped E', deadline, async () => {
      text = await scrape(r.client);
      for (let i = 0; i < KEYS; i++) {
        if (!(sample(text, 'service_validator_key_blocks_proposed_total', `validator="${i}"`)! >= 1)) return undefined;
        if (!(sample(text, 'service_validator_key_attestations_total', `validator="${i}"`)! >= 1)) return undefined;
      }
      return r.lines.some((l) => l.msg === skipped) ? true : undefined;
    }, () => text.split('\n').filter((l) => l.startsWith('service_validator_key_')).join('; '));

    const skips = r.lines.filter((l) => l.msg === skipped);
    assert.equal(skips.map((l) => [l.level, l.fields.validator, l.fields.target]), [['debug', h.validators[0]!.address, E]], 'key 0 skipped its vote for E, once, quietly');
    assert.is(sample(text, 'service_validator_duties_already_signed_total', 'kind="attestation"'), 1);
    // Key 0's votes before E are below its watermark or surrounded by the recorded vote: real
    // conflicts, still refused with a warning (never a double vote: that one was skipped).
    const refusals = r.lines.filter((l) => l.msg.startsWith('slashing protection refused'));
    for (const l of refusals) {
      assert.equal([l.level, l.fields.validator, (l.fields.target as number) < E], ['warn', h.validators[0]!.address, true]);
      assert.ok(['TARGET_BELOW_WATERMARK', 'SURROUNDED_VOTE'].includes(l.fields.rule as string), String(l.fields.rule));
    }
    assert.is(sample(text, 'service_validator_key_slashing_refusals_total', 'validator="0"'), refusals.length);
    assert.is(sample(text, 'service_validator_key_slashing_refusals_total', 'validator="1"'), 0);
    assert.is(sample(text, 'service_validator_key_slashing_refusals_total', 'validator="2"'), 0);
    const totals = ['blocks_proposed', 'attestations', 'slashing_refusals'].map((m) => [
      sample(text, `service_validator_${m}_total`),
      [0, 1, 2].reduce((n, i) => n + sample(text, `service_validator_key_${m}_total`, `validator="${i}"`)!, 0),
    ]);
    for (const [total, sum] of totals) assert.is(total, sum, 'process totals are the sum of the keys');
    assert.is(sample(text, 'service_validator_keys', 'state="loaded"'), KEYS);
    assert.is(sample(text, 'service_validator_keys', 'state="registered"'), KEYS);
    assert.ok(sample(text, 'service_validator_key_randao_reveals_remaining', 'validator="0"')! > 0);
    assert.equal(
      r.lines.filter((l) => l.level === 'error').map((l) => l.msg),
      [],
      'no duty failed',
    );

    // Restart on the same data directory.
    const before = pk.map((p) => sp!.watermarks(p));
    for (let i = 0; i < KEYS; i++) assert.ok(before[i]?.targetEpoch !== undefined, `key ${i} has a recorded vote`);
    const chainFiles = h.validators.map((k) => randaoChainPath(dataDir, k.address, 0));
    for (const f of chainFiles) assert.ok(existsSync(f), `RANDAO checkpoints saved: ${f}`);
    const mtimes = await Promise.all(chainFiles.map(async (f) => (await stat(f)).mtimeMs));
    await r.client.stop();
    await sp.close();
    sp = undefined;

    sp = await openValidatorDataDir(dataDir, g);
    for (let i = 0; i < KEYS; i++) {
      assert.equal(sp.watermarks(pk[i]!), before[i], `key ${i}'s watermarks survived the restart`);
      const t = before[i]!.targetEpoch!;
      const err = await sp.checkAndRecordAttestation(pk[i]!, 0, t, new Uint8Array(32).fill(0x5a)).then(() => undefined, (e: unknown) => e);
      assert.instance(err, SlashingProtectionError, `key ${i}: a different vote at its recorded target ${t}`);
    }
    const again = start(h, sp, dataDir);
    run = again;
    await again.client.start();
    const restartEpoch = epochOfSlot(g, slotAt(g, Date.now()));
    await until('every key attests again after the restart', slotStartMs(g, (restartEpoch + 4) * spe) + 30_000, async () => {
      text = await scrape(again.client);
      return [0, 1, 2].every((i) => sample(text, 'service_validator_key_attestations_total', `validator="${i}"`)! >= 1) ? true : undefined;
    }, () => text.split('\n').filter((l) => l.startsWith('service_validator_key_attestations')).join('; '));
    assert.equal((await Promise.all(chainFiles.map(async (f) => (await stat(f)).mtimeMs))), mtimes, 'the checkpoints were restored, not rebuilt');
    assert.equal(again.lines.filter((l) => l.msg.startsWith('the beacon refused')).map((l) => l.fields.code), [], 'nothing the beacon refused (no slashable message)');
  } finally {
    await run?.client.stop();
    await sp?.close();
    await rm(dataDir, { recursive: true, force: true });
    await stopHarness(h);
  }
});

test('svc node validator --keystore A --keystore B: one process proposes and attests for both keys', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-vcli-'));
  const built = buildGenesis({ validators: 2, accounts: 1, preset: 'devnet', chainId: 'svc-vcli', networkId: 7, genesisTime: Math.floor(Date.now() / 1000) - 4 * 2, mnemonic: DEV_MNEMONIC });
  await writeGenesis(join(dir, 'net'), built, DEV_MNEMONIC, 'svc-devnet', { kdfMemoryKib: 64 });
  const h = await startHarness({ genesis: built.genesis });
  const g = h.genesis;
  const port = await anyFreePort();
  const dataDir = join(dir, 'validators');
  const child = spawn(
    process.execPath,
    [RUN_JS, 'node', 'validator', '--keystore', join(dir, 'net', 'keystores', 'validator-0.json'), '--keystore', join(dir, 'net', 'keystores', 'validator-1.json'),
      '--genesis', join(dir, 'net', 'genesis.json'), '--beacon-url', h.beacon.url, '--execution-url', h.exec.restUrl, '--token-file', join(h.dir, 'validator-token'),
      '--data-dir', dataDir, '--metrics-port', String(port)],
    { env: cliEnv(dir), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  try {
    let text = '';
    const deadline = slotStartMs(g, (epochOfSlot(g, slotAt(g, Date.now())) + 8) * g.config.slots_per_epoch) + 30_000;
    await until('both keys proposed and attested', deadline, async () => {
      text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => '');
      return [0, 1].every((i) => sample(text, 'service_validator_key_blocks_proposed_total', `validator="${i}"`)! >= 1 && sample(text, 'service_validator_key_attestations_total', `validator="${i}"`)! >= 1) ? true : undefined;
    }, () => `${text.split('\n').filter((l) => l.startsWith('service_validator_key_')).join('; ')} | stderr tail: ${stderr.slice(-2_000)}`);
    assert.is(sample(text, 'service_validator_keys', 'state="registered"'), 2);
    for (const k of h.validators) assert.ok(existsSync(randaoChainPath(dataDir, k.address, 0)), 'checkpoints in the one data dir');
    child.kill('SIGTERM');
    assert.is(await exited, 0, stderr.slice(-2_000));
    assert.ok(stderr.includes('"msg":"validator client stopped"'));
  } finally {
    child.kill('SIGKILL');
    await stopHarness(h);
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
