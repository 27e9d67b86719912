/**
 * End to end, with real processes on a 4-validator devnet (2 s slots, 2-slot epochs): the chain
 * survives processes dying (SIGKILL, no clean shutdown).
 *
 * 1. Validators: with 3 of 4 alive (75 % ≥ 2/3 of the stake) epochs keep finalising; with 2 of 4
 *    blocks keep coming from the live ones but nothing is justified, so finality stalls; both
 *    killed validators restarted on their own data dirs (their slashing-protection databases)
 *    attest again and finality resumes.
 * 2. Beacon: restarted on its data dir it resumes at its head, the validators reconnect on their
 *    own, blocks and finality go on, and every reward is paid exactly once (balances checked
 *    against what the canonical blocks and their included votes earned).
 *
 * Synchronisation is by observable state only (beacon head, execution records, node logs) with
 * deadlines; the "finality stays put" check watches for two whole epochs by the chain's clock.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type BeaconHead, type Devnet, getJson, waitFor, withDevnet } from '../helpers/network.js';

const VALIDATORS = 4;

/** The registry index validator process `name` reported at start (from its log). */
async function indexOf(d: Devnet, name: string): Promise<number> {
  return waitFor(`${name} to find its registry index`, async () => {
    const l = d.log(name).find((x) => x.msg === 'validator registered on the beacon');
    return l ? (l.index as number) : undefined;
  }, 30_000);
}

/** The beacon's block at `slot` (accepted, on any branch), or undefined for an empty slot. */
async function blockAt(d: Devnet, slot: number): Promise<{ proposer: string; proposer_index: number } | undefined> {
  const r = await getJson(`${d.beaconUrl}/api/v1/beacon/blocks/${slot}`);
  if (r.success === false && r.error?.code === 'NOT_FOUND') return undefined;
  if (!r.data) throw new Error(`GET blocks/${slot}: ${JSON.stringify(r)}`);
  return r.data;
}

/** Every "the beacon refused ..." line (a block or an attestation) of every validator run. */
function refusals(d: Devnet): string[] {
  const out: string[] = [];
  for (let i = 0; i < VALIDATORS; i++) {
    for (const l of d.log(`validator-${i}`, { allRuns: true })) if (l.msg.startsWith('the beacon refused')) out.push(`validator-${i}: ${JSON.stringify(l)}`);
  }
  return out;
}

/** A validator log line at or after `sinceMs` whose msg is `msg`. */
function loggedSince(d: Devnet, name: string, msg: string, sinceMs: number): boolean {
  return d.log(name).some((l) => l.msg === msg && Date.parse(l.ts) >= sinceMs);
}

test('validators killed: 3 of 4 keep finalising, 2 of 4 make blocks but no finality, restarted ones resume it', async () => {
  await withDevnet({ validators: VALIDATORS }, async (d) => {
    const epochMs = d.slotMs * d.slotsPerEpoch;
    await d.startAll();
    const idx = await Promise.all([0, 1, 2, 3].map((i) => indexOf(d, `validator-${i}`)));
    await d.waitHead('the first blocks', (h) => h.index >= 2, 40_000);

    // --- One of four dies: 3/4 of the stake still justifies and finalises.
    await d.kill('validator-3');
    const f0 = (await d.head()).finalized.epoch;
    // Finalising f0 + 2 needs epochs f0 + 2 and f0 + 3 justified: about four epochs from here.
    const afterFirst = await d.waitHead(`finalized epoch ≥ ${f0 + 2} with 3 of 4 validators`, (h) => h.finalized.epoch >= f0 + 2, 6 * epochMs + 20_000);

    // --- A second one dies: 2/4 < 2/3, nothing can be justified any more.
    await d.kill('validator-2');
    const killSlot = d.slotNow();
    const killEpoch = d.epochOf(killSlot);
    const live = new Set([idx[0], idx[1]]);
    // Votes of the kill epoch cast before the kill may still justify it (and finalise the one
    // before): settle at the next epoch's start, then nothing may move for two whole epochs.
    await waitFor(`epoch ${killEpoch + 1}`, async () => (d.slotNow() >= (killEpoch + 1) * d.slotsPerEpoch ? true : undefined), 20_000);
    const settled = await d.head();
    assert.ok(settled.finalized.epoch >= afterFirst.finalized.epoch, 'finality never goes back');
    assert.ok(settled.justified.epoch <= killEpoch, `justified ${settled.justified.epoch} after the kill epoch ${killEpoch}`);
    const stallEnd = (killEpoch + 3) * d.slotsPerEpoch;
    const samples: BeaconHead[] = [];
    // Until two whole epochs (killEpoch + 1, killEpoch + 2) are over by the chain's clock, and
    // the head has grown (with 2 of 4 alive a slot is empty with probability 1/2, so a few slots
    // more may be needed: no flaky "some block in exactly 8 slots").
    const stalled = await waitFor('two epochs without finality, and new blocks', async () => {
      const h = await d.head();
      samples.push(h);
      return d.slotNow() > stallEnd && h.index > settled.index ? h : undefined;
    }, 2 * epochMs + 40_000);
    for (const h of samples) {
      assert.is(h.finalized.epoch, settled.finalized.epoch, `finality moved with 2 of 4 validators: ${JSON.stringify(h)}`);
      assert.is(h.justified.epoch, settled.justified.epoch, `justification moved with 2 of 4 validators: ${JSON.stringify(h)}`);
    }
    assert.ok(stalled.index > settled.index, 'blocks continue');
    // Every block after the kill comes from a live validator; the slots drawn for dead ones are empty.
    let empty = 0;
    for (let s = killSlot + 1; s <= stalled.slot; s++) {
      const b = await blockAt(d, s);
      if (!b) empty++;
      else assert.ok(live.has(b.proposer_index), `slot ${s} proposed by dead validator ${b.proposer_index}`);
    }
    process.stderr.write(`[resilience] 2 of 4: slots ${killSlot + 1}..${stalled.slot}, ${empty} empty; finalized stayed at ${settled.finalized.epoch}, justified at ${settled.justified.epoch}\n`);

    // --- Both come back on their own data dirs: slashing protection lets them sign again
    // (nothing they signed before conflicts with the new slots and epochs) and finality resumes.
    const restartMs = Date.now();
    d.startValidator(2);
    d.startValidator(3);
    const resumed = await d.waitHead(`finality beyond epoch ${settled.finalized.epoch} after the restart`, (h) => h.finalized.epoch > settled.finalized.epoch, 5 * epochMs + 30_000);
    assert.ok(resumed.justified.epoch > settled.justified.epoch);
    for (const name of ['validator-2', 'validator-3']) {
      await waitFor(`${name} to attest after its restart`, async () => (loggedSince(d, name, 'attestation sent', restartMs) ? true : undefined), 20_000);
      const spRefusals = d.log(name).filter((l) => /slashing protection refused/.test(l.msg));
      assert.equal(spRefusals, [], `${name}: slashing protection refused after the restart`);
      assert.ok(!d.log(name).some((l) => l.level === 'error'), `${name} logged an error after its restart`);
    }
    // Every block and vote the validators signed was accepted (before, during and after the kills).
    assert.equal(refusals(d), []);
  });
});

/**
 * Rewards paid once, checked against the canonical chain itself. Rewards are part of each block's
 * state transition: its proposer earns proposer_reward, and each attestation it includes earns its
 * attester attester_reward (the inclusion rules admit one vote per validator and target epoch per
 * branch). So, with one consistent snapshot (the head read before and after the balances agrees):
 *  - no (validator, target epoch) is included twice on the canonical chain;
 *  - each validator's balance = its genesis balance + proposer_reward × its canonical blocks +
 *    attester_reward × its included votes. Exact because nothing else touches validator accounts
 *    in this test: no transactions are sent (no fees, no gas), and stake is not balance.
 * Returns the canonical head height audited and the number of included votes.
 */
async function auditRewards(d: Devnet, validators: Array<{ index: number; address: string }>): Promise<{ height: number; votes: number }> {
  const cfg = d.genesis.config;
  const P = BigInt(cfg.proposer_reward);
  const A = BigInt(cfg.attester_reward);
  const genesisBalance = new Map<string, bigint>((d.genesis.alloc as Array<{ address: string; balance: string }>).map((a) => [a.address, BigInt(a.balance)]));
  const { height, balances } = await waitFor('a consistent snapshot of the head and balances', async () => {
    const before = await getJson(`${d.execUrl}/health`);
    const balances = new Map<string, bigint>();
    for (const v of validators) balances.set(v.address, BigInt((await getJson(`${d.execUrl}/api/v1/accounts/${v.address}`)).data.balance));
    const after = await getJson(`${d.execUrl}/health`);
    return before.head_hash === after.head_hash ? { height: after.latest_block as number, balances } : undefined;
  }, 20_000);
  const earned = new Map<string, bigint>();
  const seen = new Set<string>();
  let votes = 0;
  for (let n = 1; n <= height; n++) {
    const b = (await getJson(`${d.execUrl}/api/v1/blocks/${n}`)).data;
    earned.set(b.proposer, (earned.get(b.proposer) ?? 0n) + P);
    for (const a of b.block.attestations as Array<{ validator_index: number; data: { target: { epoch: number } } }>) {
      const key = `${a.validator_index}:${a.data.target.epoch}`;
      assert.not.ok(seen.has(key), `vote ${key} included twice on the canonical chain (again at height ${n})`);
      seen.add(key);
      const addr = validators.find((v) => v.index === a.validator_index)!.address;
      earned.set(addr, (earned.get(addr) ?? 0n) + A);
      votes++;
    }
  }
  for (const v of validators) {
    const expected = (genesisBalance.get(v.address) ?? 0n) + (earned.get(v.address) ?? 0n);
    assert.is(balances.get(v.address), expected, `validator ${v.index}: balance = genesis balance + the rewards its canonical blocks and included votes earned`);
  }
  return { height, votes };
}

test('beacon SIGKILLed and restarted: resumes at its head, validators reconnect, blocks and finality go on, rewards paid once', async () => {
  await withDevnet({ validators: VALIDATORS }, async (d) => {
    const epochMs = d.slotMs * d.slotsPerEpoch;
    await d.startAll();
    const validators = (await getJson(`${d.beaconUrl}/api/v1/validators`)).data.validators as Array<{ index: number; address: string }>;
    assert.is(validators.length, VALIDATORS);

    // Run until blocks have included votes, then kill the beacon mid-flight.
    await waitFor('a block that includes votes', async () => ((await auditRewards(d, validators)).votes > 0 ? true : undefined), 6 * epochMs + 20_000);
    const paidBefore = await auditRewards(d, validators);
    const before = await d.head();
    const killMs = Date.now();
    await d.kill('beacon');
    const killEpoch = d.epochOf(d.slotNow());
    // Stay down until a validator has found the beacon gone (a failed call), so that the
    // reconnection below is a real one; each slot's proposer calls the beacon.
    const noticed = await waitFor('a validator to notice that the beacon is down', async () => {
      for (let i = 0; i < VALIDATORS; i++) if (loggedSince(d, `validator-${i}`, 'beacon node unreachable: retrying at the next slot', killMs)) return `validator-${i}`;
      return undefined;
    }, 3 * d.slotMs + 10_000);

    // Restart on the same data dir and port: it comes back at (at least) its last head.
    await d.startBeacon();
    const restarted = await d.head();
    assert.ok(restarted.index >= before.index, `head index ${restarted.index} < ${before.index} before the kill`);
    assert.ok(restarted.finalized.epoch >= before.finalized.epoch, 'finality survives the restart');
    assert.is((await getJson(`${d.beaconUrl}/api/v1/beacon/blocks/${before.root}`)).data?.index, before.index, 'the head before the kill is still known');

    // The validators find the new process by themselves: each gets an attestation accepted.
    for (let i = 0; i < VALIDATORS; i++) {
      await waitFor(`validator-${i} to attest to the restarted beacon`, async () => (loggedSince(d, `validator-${i}`, 'attestation sent', killMs) ? true : undefined), 4 * epochMs);
    }
    await waitFor(`${noticed} to find the beacon again`, async () => (loggedSince(d, noticed, 'beacon node reachable again', killMs) ? true : undefined), 10_000);
    // Blocks and finality continue.
    const later = await d.waitHead('blocks and finality after the restart', (h) => h.index >= before.index + 3 && h.finalized.epoch >= Math.max(before.finalized.epoch + 1, killEpoch), 6 * epochMs + 20_000);
    assert.ok(later.slot > before.slot);

    // Everything paid before and after the restart adds up from the canonical chain, once.
    const paidAfter = await auditRewards(d, validators);
    assert.ok(paidAfter.height > paidBefore.height && paidAfter.votes > paidBefore.votes, 'blocks went on including votes after the restart');
    assert.equal(refusals(d), [], 'every block and vote the validators signed was accepted, across the restart too');
    process.stderr.write(`[resilience] beacon killed at head ${before.index} (epoch ${killEpoch}), ${noticed} saw it down, restarted at ${restarted.index}; audited ${paidAfter.height} blocks with ${paidAfter.votes} included votes\n`);
  });
});

test.run();
