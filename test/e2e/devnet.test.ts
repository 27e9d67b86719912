/**
 * End to end: `svc devnet up` as users run it (real processes, temporary directories), then the
 * everyday commands with no URL flags, crash-restart, down/up resume, and `down --clean` leaving
 * no process behind (checked by pid). Once multi-process with a process per validator
 * (`--validator-processes per-validator`; the packed default is devnet-packed.test.ts), once
 * `--single-process`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliEnv, expectCliError, runCli, withTempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/network.js';
import { pidAlive, readManifest } from '../../src/devnet/manifest.js';
import { devnetStatus, manifestPids, svcJson as svc } from '../helpers/devnet-cli.js';

const SINK = '0x00000000000000000000000000000000000000aa';

/** Waits until none of `pids` is alive. */
async function allGone(pids: number[]): Promise<void> {
  await waitFor(`pids ${pids.join(', ')} to exit`, async () => (pids.some((p) => pidAlive(p)) ? undefined : true), 20_000, 50);
}

/** Last resort after a failed test: nothing may outlive it. */
function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Wallet → faucet → transfer → Finalized, all through the devnet manifest (no URL flags). */
async function walletFaucetTransfer(env: Record<string, string>): Promise<string> {
  await svc(env, 'wallet', 'new', '--name', 'alice');
  const claim = await svc(env, 'faucet', 'claim', 'alice', '--wait', '--timeout', '60');
  assert.ok(claim.state === 'Confirmed' || claim.state === 'Finalized', JSON.stringify(claim));
  const sent = await svc(env, 'tx', 'send', '--from', 'alice', '--to', SINK, '--value', '12345', '--wait', '--timeout', '60');
  assert.is(sent.receipt.status, 1);
  await waitFor(
    'the transfer to be Finalized',
    async () => {
      const s = await svc(env, 'tx', 'status', sent.hash);
      return s.state === 'Finalized' ? s : undefined;
    },
    120_000,
    1_000,
  );
  const acct = await svc(env, 'account', SINK);
  assert.is(acct.balance, '12345');
  const pool = await svc(env, 'mempool');
  assert.type(pool.count, 'number');
  const forks = await svc(env, 'forks', 'list');
  assert.is(forks.chain_id, 'svc-devnet');
  return sent.hash;
}

/** Sum of a metric's samples in an exposition (all label sets). */
function metricSum(text: string, name: string): number {
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
}

async function metricsText(target: string): Promise<string> {
  const r = await fetch(`http://${target}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.is(r.status, 200, target);
  return r.text();
}

/**
 * The scrape configuration `up` wrote names every metrics endpoint (execution, beacon, each
 * validator), each answering;
 * the beacon counts finalised blocks (execution's finalised height), not checkpoints; the
 * validators count the blocks, VRF proofs and votes they sign.
 */
async function checkMonitoring(up: { prometheus_config: string; endpoints: { execution: string; beacon: string } }, dir: string): Promise<void> {
  assert.is(up.prometheus_config, join(dir, 'monitoring', 'prometheus.yml'));
  const config = await readFile(up.prometheus_config, 'utf8');
  const targets = [...config.matchAll(/- targets: \["([^"]+)"\]/g)].map((m) => m[1]!);
  const m = readManifest(dir)!;
  // One target per validator process (validators of one process share its port).
  assert.equal(targets, [`127.0.0.1:${m.ports.rest}`, `127.0.0.1:${m.ports.beacon}`, ...[...new Set(m.ports.validator_metrics)].map((p) => `127.0.0.1:${p}`)]);
  const validators = await Promise.all(targets.slice(2).map(metricsText));
  assert.ok(validators.reduce((n, t) => n + metricSum(t, 'quantum_canonical_sig_generated_total'), 0) > 0, 'the validators count their signatures');
  const beacon = targets[1]!;
  await waitFor(
    'the beacon\'s finalised block count to equal execution\'s finalised height',
    async () => {
      const before = metricSum(await metricsText(beacon), 'service_beacon_blocks_finalized_total');
      const finalized = ((await (await fetch(`${up.endpoints.execution}/health`)).json()) as { finalized_block: number }).finalized_block;
      const after = metricSum(await metricsText(beacon), 'service_beacon_blocks_finalized_total');
      return finalized > 0 && before === after && after === finalized ? finalized : undefined;
    },
    30_000,
  );
}

test('devnet up --detach --validator-processes per-validator: transfer finalised with no URL flags, crash restarted once, down/up resumes, down --clean leaves nothing', async () => {
  await withTempDir(async (tmp) => {
    const env = cliEnv(tmp, { SVC_PASSWORD: 'e2e-password' });
    const dir = join(tmp, 'net');
    const seen = new Set<number>();
    try {
      const up = await svc(env, 'devnet', 'up', '--validators', '4', '--dir', dir, '--detach', '--validator-processes', 'per-validator');
      assert.is(up.event, 'started');
      assert.is(up.validator_processes, 'per-validator');
      assert.is(up.resumed, false);
      assert.equal(up.processes.map((p: { name: string }) => p.name), ['execution', 'beacon', 'validator-0', 'validator-1', 'validator-2', 'validator-3']);
      assert.is(up.accounts.length, 10);
      assert.ok(existsSync(up.accounts[0].wallet));
      manifestPids(dir).forEach((p) => seen.add(p));
      if (seen.size !== 7) {
        // Say which process is missing and why, from the manifest and its log.
        const m = readManifest(dir);
        for (const p of m?.processes ?? []) {
          if (p.pid) continue;
          const tail = await readFile(p.log, 'utf8').then((t) => t.slice(-3_000), () => '(no log)');
          console.error(`[devnet e2e] ${p.name}: status ${p.status}, restarts ${p.restarts}\n${tail}`);
        }
      }
      assert.is(seen.size, 7);
      for (const p of seen) assert.ok(pidAlive(p), `pid ${p} alive`);

      // Already running: a second up is refused and changes nothing.
      expectCliError(await runCli(['devnet', 'up', '--dir', dir, '--detach', '--json'], env), { exit: 1, code: 'DEVNET_RUNNING', json: true });
      expectCliError(await runCli(['devnet', 'logs', 'validator-9', '--json'], env), { exit: 1, code: 'UNKNOWN_PROCESS', json: true });
      const logs = await svc(env, 'devnet', 'logs', 'beacon', '--lines', '2');
      assert.is(logs.lines.length, 2);

      await walletFaucetTransfer(env);
      const s1 = await devnetStatus(env, dir);
      assert.is(s1.healthy, true, JSON.stringify(s1.problems));
      assert.ok(s1.finalized_epoch >= 1, `finalised epoch ${s1.finalized_epoch}`);
      assert.is(s1.validators.length, 4);
      await checkMonitoring(up, dir);

      // A crashed validator is restarted once, and the devnet is healthy again.
      const victim = s1.processes.find((p: { name: string }) => p.name === 'validator-2');
      process.kill(victim.pid, 'SIGKILL');
      const healed = await waitFor('validator-2 restarted', async () => {
        const s = await devnetStatus(env, dir);
        const v = s.processes.find((p: { name: string }) => p.name === 'validator-2');
        return v.restarts === 1 && v.alive && v.pid !== victim.pid && s.healthy ? v : undefined;
      }, 30_000, 1_000);
      seen.add(healed.pid);

      // down, then up on the same directory continues from the previous head.
      const before = (await devnetStatus(env, dir)).head.index;
      const down = await svc(env, 'devnet', 'down', '--dir', dir);
      assert.is(down.cleaned, false);
      await allGone([...seen]);
      // Stopped in order: every validator, then the beacon, then execution.
      const stoppedAt = async (name: string, msg: string) => {
        const lines = (await readFile(join(dir, 'logs', `${name}.log`), 'utf8')).split('\n').filter((l) => l.includes(`"msg":"${msg}"`));
        assert.ok(lines.length > 0, `${name} logged ${msg}`);
        return Date.parse(JSON.parse(lines[lines.length - 1]!).ts);
      };
      const validatorsDone = Math.max(...(await Promise.all([0, 1, 2, 3].map((i) => stoppedAt(`validator-${i}`, 'validator client stopped')))));
      const beaconDone = await stoppedAt('beacon', 'beacon node stopped');
      assert.ok(validatorsDone <= beaconDone, 'validators stop before the beacon');
      assert.ok(beaconDone <= (await stoppedAt('execution', 'execution node stopped')), 'the beacon stops before execution');
      expectCliError(await runCli(['devnet', 'up', '--dir', dir, '--validators', '5', '--detach', '--json'], env), { exit: 1, code: 'DEVNET_MISMATCH', json: true });
      const again = await svc(env, 'devnet', 'up', '--dir', dir, '--detach');
      assert.is(again.resumed, true);
      manifestPids(dir).forEach((p) => seen.add(p));
      await waitFor('the resumed chain to extend the old head', async () => {
        const s = await devnetStatus(env, dir);
        return s.head && s.head.index > before ? s : undefined;
      }, 30_000, 1_000);
      const resumed = await devnetStatus(env, dir);
      assert.ok(resumed.finalized_epoch >= s1.finalized_epoch, 'finality kept across the restart');

      const clean = await svc(env, 'devnet', 'down', '--dir', dir, '--clean');
      assert.is(clean.cleaned, true);
      await allGone([...seen]);
      assert.not.ok(existsSync(dir), 'down --clean removed the directory');
    } finally {
      killAll([...seen, ...manifestPids(dir)]);
    }
  });
});

test('devnet up --single-process: transfer finalised; a SIGKILLed supervisor leaves nothing after down --clean', async () => {
  await withTempDir(async (tmp) => {
    const env = cliEnv(tmp, { SVC_PASSWORD: 'e2e-password' });
    const dir = join(tmp, 'net');
    const seen = new Set<number>();
    try {
      const up = await svc(env, 'devnet', 'up', '--validators', '4', '--dir', dir, '--single-process', '--detach');
      assert.equal(up.processes.map((p: { name: string }) => p.name), ['node']);
      manifestPids(dir).forEach((p) => seen.add(p));
      assert.is(seen.size, 2);

      await walletFaucetTransfer(env);
      const s = await devnetStatus(env, dir);
      assert.is(s.healthy, true, JSON.stringify(s.problems));
      assert.is(s.mode, 'single-process');
      // svc node all serves each validator's metrics on the port the scrape config lists.
      await checkMonitoring(up, dir);

      // The supervisor dies without stopping its node: status says so, down still cleans up.
      process.kill(up.supervisor_pid, 'SIGKILL');
      await allGone([up.supervisor_pid]);
      const orphaned = await devnetStatus(env, dir);
      assert.is(orphaned.healthy, false);
      assert.ok(orphaned.problems.some((p: string) => p.includes('supervisor')), JSON.stringify(orphaned.problems));
      await svc(env, 'devnet', 'down', '--dir', dir, '--clean');
      await allGone([...seen]);
      assert.not.ok(existsSync(dir));
    } finally {
      killAll([...seen, ...manifestPids(dir)]);
    }
  });
});

test('devnet commands: bad flags, no devnet, a corrupt manifest', async () => {
  await withTempDir(async (tmp) => {
    const env = cliEnv(tmp);
    const dir = join(tmp, 'net');
    expectCliError(await runCli(['devnet', 'up', '--validators', '0', '--dir', dir], env), { exit: 2, json: false });
    expectCliError(await runCli(['devnet', 'up', '--slot-time', 'fast', '--dir', dir], env), { exit: 2, json: false });
    expectCliError(await runCli(['devnet', 'status', '--dir', dir, '--json'], env), { exit: 1, code: 'DEVNET_NOT_FOUND', json: true });
    expectCliError(await runCli(['devnet', 'down', '--dir', dir, '--json'], env), { exit: 1, code: 'DEVNET_NOT_FOUND', json: true });
    expectCliError(await runCli(['devnet', 'logs', '--dir', dir, '--json'], env), { exit: 1, code: 'DEVNET_NOT_FOUND', json: true });

    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'devnet.json'), '{"version": 1, "dir": ');
    for (const args of [['devnet', 'status'], ['devnet', 'up', '--detach'], ['devnet', 'logs']]) {
      expectCliError(await runCli([...args, '--dir', dir, '--json'], env), { exit: 1, code: 'DEVNET_MANIFEST_INVALID', json: true });
    }
    // Other commands ignore a broken manifest rather than failing (SVC_DEVNET points at it).
    const r = await runCli(['forks', 'list', '--json'], { ...env, SVC_DEVNET: dir });
    expectCliError(r, { exit: 1, code: 'INVALID_GENESIS', json: true, messageIncludes: ['cannot read genesis file'] });
    // down --clean removes even a broken devnet, and nothing else.
    await writeFile(join(dir, 'keep.txt'), 'mine');
    await svc(env, 'devnet', 'down', '--dir', dir, '--clean');
    assert.not.ok(existsSync(join(dir, 'devnet.json')));
    assert.ok(existsSync(join(dir, 'keep.txt')));
  });
});

test.run();
