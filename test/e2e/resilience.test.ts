/**
 * End to end, with real processes on a 4-validator devnet (2 s slots, 4-slot epochs): the chain
 * survives processes dying (SIGKILL, no clean shutdown).
 *
 * 1. Validators: with 3 of 4 alive (75 % ≥ 2/3 of the stake) epochs keep finalising; with 2 of 4
 *    blocks keep coming from the live ones but nothing is justified, so finality stalls; both
 *    killed validators restarted on their own data dirs (their slashing-protection databases)
 *    attest again and finality resumes.
 * 2. Beacon: restarted on its data dir it resumes at its head, the validators reconnect on their
 *    own, blocks and finality go on, and every epoch's rewards are credited exactly once (read
 *    back from execution's GET /api/v1/engine/rewards/:epoch and checked against balances).
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

/** What execution stored for an epoch's creditRewards (GET /api/v1/engine/rewards/:epoch). */
interface CreditRecord {
  epoch: number;
  total: string;
  credits: Array<{ address: string; amount: string }>;
}

async function creditRecord(d: Devnet, epoch: number): Promise<CreditRecord | undefined> {
  const r = await getJson(`${d.execUrl}/api/v1/engine/rewards/${epoch}`);
  if (r.success === false && r.error?.code === 'NOT_FOUND') return undefined;
  if (!r.data) throw new Error(`GET engine/rewards/${epoch}: ${JSON.stringify(r)}`);
  return r.data as CreditRecord;
}

async function creditRecords(d: Devnet, upTo: number): Promise<Map<number, CreditRecord>> {
  const out = new Map<number, CreditRecord>();
  for (let e = 0; e <= upTo; e++) {
    const r = await creditRecord(d, e);
    if (r) out.set(e, r);
  }
  return out;
}

/**
 * Rewards paid once, checked against execution's own books. Execution applies creditRewards at
 * most once per epoch (the record under Keys.rewardEpoch is written in the same batch as the
 * balances), so a double payment would show as either
 *  - a record whose credits do not match the ledger's rule for that epoch, or
 *  - a balance above what the records add up to.
 * So, with one consistent snapshot (records read before and after the balances must agree):
 *  - each record's total is the sum of its credits, one credit per address, validators only;
 *  - a validator's credit for epoch e is exactly proposer_reward × (blocks it proposed in e, as the
 *    beacon accepted them) + attester_reward × (0 or 1: one attestation counts once per epoch);
 *    every proposer of the epoch is credited;
 *  - each validator's balance = its genesis balance + the sum of its credits over all records.
 *    Exact because nothing else touches validator accounts in this test: no transactions are
 *    sent (no fees, no gas), and stake is not balance.
 * Returns the records.
 */
async function auditRewards(d: Devnet, validators: Array<{ index: number; address: string }>): Promise<Map<number, CreditRecord>> {
  const cfg = d.genesis.config;
  const P = BigInt(cfg.proposer_reward);
  const A = BigInt(cfg.attester_reward);
  const genesisBalance = new Map<string, bigint>((d.genesis.alloc as Array<{ address: string; balance: string }>).map((a) => [a.address, BigInt(a.balance)]));
  const addresses = new Set(validators.map((v) => v.address));
  const { records, balances } = await waitFor('a consistent snapshot of credits and balances', async () => {
    const upTo = d.epochOf(d.slotNow());
    const before = await creditRecords(d, upTo);
    const balances = new Map<string, bigint>();
    for (const v of validators) balances.set(v.address, BigInt((await getJson(`${d.execUrl}/api/v1/accounts/${v.address}`)).data.balance));
    const after = await creditRecords(d, upTo);
    return JSON.stringify([...before]) === JSON.stringify([...after]) ? { records: after, balances } : undefined;
  }, 20_000);
  const sums = new Map<string, bigint>();
  for (const [epoch, r] of records) {
    assert.is(r.epoch, epoch);
    const seen = new Set<string>();
    let total = 0n;
    const proposals = new Map<string, number>();
    for (let s = epoch * d.slotsPerEpoch; s < (epoch + 1) * d.slotsPerEpoch; s++) {
      const b = await blockAt(d, s);
      if (b) proposals.set(b.proposer, (proposals.get(b.proposer) ?? 0) + 1);
    }
    for (const c of r.credits) {
      assert.ok(addresses.has(c.address), `epoch ${epoch}: credit to ${c.address}, not a validator`);
      assert.not.ok(seen.has(c.address), `epoch ${epoch}: ${c.address} credited twice in one record`);
      seen.add(c.address);
      const amount = BigInt(c.amount);
      total += amount;
      const attesterPart = amount - BigInt(proposals.get(c.address) ?? 0) * P;
      assert.ok(attesterPart === 0n || attesterPart === A, `epoch ${epoch}: ${c.address} got ${amount} for ${proposals.get(c.address) ?? 0} blocks (proposer ${P}, attester ${A})`);
      sums.set(c.address, (sums.get(c.address) ?? 0n) + amount);
    }
    for (const proposer of proposals.keys()) assert.ok(seen.has(proposer), `epoch ${epoch}: proposer ${proposer} not credited`);
    assert.is(r.total, total.toString(), `epoch ${epoch}: total is the sum of the credits`);
  }
  for (const v of validators) {
    const expected = (genesisBalance.get(v.address) ?? 0n) + (sums.get(v.address) ?? 0n);
    assert.is(balances.get(v.address), expected, `validator ${v.index}: balance = genesis balance + credited rewards`);
  }
  return records;
}

test('beacon SIGKILLed and restarted: resumes at its head, validators reconnect, blocks and finality go on, rewards paid once', async () => {
  await withDevnet({ validators: VALIDATORS }, async (d) => {
    const epochMs = d.slotMs * d.slotsPerEpoch;
    await d.startAll();
    const validators = (await getJson(`${d.beaconUrl}/api/v1/validators`)).data.validators as Array<{ index: number; address: string }>;
    assert.is(validators.length, VALIDATORS);

    // Run until an epoch has been paid, then kill the beacon mid-flight. On a busy machine the
    // validators may start after epoch 0 is over, leaving nothing to pay for it: the first epoch
    // with a credit record counts, whichever it is.
    const firstPaid = await waitFor('the rewards of a first epoch', async () => {
      for (let e = 0; e <= d.epochOf(d.slotNow()); e++) if (await creditRecord(d, e)) return e;
      return undefined;
    }, 60_000);
    const paidBefore = await auditRewards(d, validators);
    assert.ok(paidBefore.has(firstPaid));
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

    // The epoch running at the kill (recorded partly before, partly after) is paid at the start of
    // epoch killEpoch + 2; then audit everything paid before and after the restart.
    await waitFor(`the rewards of epoch ${killEpoch}`, () => creditRecord(d, killEpoch), 3 * epochMs + 20_000);
    const paidAfter = await auditRewards(d, validators);
    for (let e = 0; e <= killEpoch; e++) {
      const slots = Array.from({ length: d.slotsPerEpoch }, (_, k) => e * d.slotsPerEpoch + k);
      const hasBlocks = (await Promise.all(slots.map((s) => blockAt(d, s)))).some((b) => b !== undefined);
      if (hasBlocks) assert.ok(paidAfter.has(e), `epoch ${e} had blocks but was never credited`);
    }
    // What was credited before the restart is untouched: the restarted beacon's retries (if any)
    // were acknowledged as already applied, not paid again.
    for (const [e, r] of paidBefore) assert.equal(paidAfter.get(e), r, `epoch ${e}'s credit record changed across the restart`);
    assert.equal(refusals(d), [], 'every block and vote the validators signed was accepted, across the restart too');
    const retried = d.log('beacon').filter((l) => l.msg === 'rewards paid' && paidBefore.has(l.epoch as number));
    process.stderr.write(`[resilience] beacon killed at head ${before.index} (epoch ${killEpoch}), ${noticed} saw it down, restarted at ${restarted.index}; epochs credited: ${[...paidAfter.keys()].join(',')}; re-sent after restart: ${retried.map((l) => l.epoch).join(',') || 'none'}\n`);
  });
});

test.run();
