/**
 * End to end: `svc devnet up --validators 64` with its default layout, one validator process
 * holding every key of the node (real processes, a temporary directory). The chain finalises; the
 * manifest, `status` and `logs` name the packed process and the validators it holds; the packed
 * process SIGKILLed is restarted once on the same slashing-protection database and finality goes
 * on; `down --clean` leaves nothing. Deadlines derive from the genesis time and epoch length, with
 * margins for a loaded two-core machine.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, withTempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/network.js';
import { pidAlive, readManifest } from '../../src/devnet/manifest.js';
import { devnetStatus, manifestPids, svcJson as svc, waitForFinality } from '../helpers/devnet-cli.js';

const VALIDATORS = 64;

test(`devnet up --validators ${VALIDATORS}: one validator process holds every key, the chain finalises, the process restarts on its own protection`, async () => {
  await withTempDir(async (tmp) => {
    const env = cliEnv(tmp, { SVC_PASSWORD: 'e2e-password' });
    const dir = join(tmp, 'net');
    const seen = new Set<number>();
    try {
      const up = await svc(env, 'devnet', 'up', '--validators', String(VALIDATORS), '--dir', dir, '--detach');
      manifestPids(dir).forEach((p) => seen.add(p));
      assert.is(up.validator_processes, 'per-node');
      assert.equal(up.processes.map((p: { name: string }) => p.name), ['execution', 'beacon', 'validators']);
      const all = Array.from({ length: VALIDATORS }, (_, i) => i);
      assert.equal(up.processes[2].validators, all);
      const m = readManifest(dir)!;
      const epochMs = m.slot_seconds * m.slots_per_epoch * 1000;
      const genesisMs = m.genesis_time * 1000;
      // Epoch 1 finalises once epoch 2 is justified; a start-up slowed by load can cost a few
      // epochs (votes of an epoch before the clients ran are missing), hence 20 epochs and 2 min.
      const s = await waitForFinality(env, dir, 'the first finalised epoch', 0, genesisMs + 21 * epochMs + 120_000 - Date.now());
      assert.is(s.healthy, true, JSON.stringify(s.problems));
      assert.equal(s.processes.find((p: { name: string }) => p.name === 'validators').validators, all);
      assert.ok(s.validators.every((v: { process: string | null }) => v.process === 'validators'), 'status names the process holding each validator');
      const logs = await svc(env, 'devnet', 'logs', 'validators', '--lines', '400');
      assert.ok(logs.lines.some((l: string) => l.includes('"msg":"attestation sent"')), 'the packed process attests');

      // SIGKILL: the supervisor restarts it once, on the same data directory (its slashing
      // protection refuses nothing it signed before) and finality goes on.
      const victim = s.processes.find((p: { name: string }) => p.name === 'validators');
      const killedAt = s.finalized_epoch;
      process.kill(victim.pid, 'SIGKILL');
      const healed = await waitFor('the validator process restarted', async () => {
        const st = await devnetStatus(env, dir);
        const v = st.processes.find((p: { name: string }) => p.name === 'validators');
        return v.restarts === 1 && v.alive && v.pid !== victim.pid && st.healthy ? v : undefined;
      }, 60_000, 1_000);
      seen.add(healed.pid);
      const epochAt = (ms: number) => Math.floor((ms - genesisMs) / epochMs);
      // Votes and blocks of the epoch the process was killed in (and the one it came back in) may
      // have been signed before the kill: the restarted process, which does not remember them,
      // finds them in its slashing-protection database and skips them quietly (debug lines, not
      // refusals); nothing it signs after the restart may be refused either.
      const restartedEpoch = epochAt(Date.now());
      // Two more epochs justified after the restart finalise the next one; the same margins.
      await waitForFinality(env, dir, `finality beyond epoch ${killedAt} after the restart`, killedAt, 20 * epochMs + 120_000);
      const after = await svc(env, 'devnet', 'logs', 'validators', '--lines', '4000');
      const refusals = (after.lines as string[]).filter((l) => /slashing protection refused/.test(l)).map((l) => JSON.parse(l) as { slot: number; target?: number });
      process.stderr.write(`[devnet-packed] restarted in epoch ${restartedEpoch}; slashing-protection refusals: ${JSON.stringify(refusals.map((r) => ({ slot: r.slot, target: r.target ?? null })))}\n`);
      const late = refusals.filter((r) => (r.target ?? Math.floor(r.slot / m.slots_per_epoch)) > restartedEpoch);
      assert.equal(late, [], `slashing protection refuses nothing signed after the restart (epoch ${restartedEpoch})`);
      assert.equal(refusals, [], 'duties signed before the kill are skipped, not refused (each was a warning)');

      const clean = await svc(env, 'devnet', 'down', '--dir', dir, '--clean');
      assert.is(clean.cleaned, true);
      await waitFor('every process to exit', async () => ([...seen].some((p) => pidAlive(p)) ? undefined : true), 20_000, 50);
      assert.not.ok(existsSync(dir), 'down --clean removed the directory');
    } finally {
      for (const pid of [...seen, ...manifestPids(dir)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });
});

test.run();
