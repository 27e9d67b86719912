/**
 * The validator client against a real beacon (and execution) whose head moves to another branch
 * after the client cached an epoch's proposer duties: the reorg of a fresh-clone resilience run,
 * made deterministic. Competing blocks at height 1, A at slot 3 (epoch 0) and B at slot 4
 * (epoch 1), give epoch 2 two seeds: on A's branch the mix after A, on B's the genesis mix (no
 * block before slot 4). The client fetches epoch 2's duties while B is the head, then votes move
 * the head to A; every block it then signs must be one the beacon accepts, at exactly the slots A's
 * branch gives it.
 *
 * Deterministic: the genesis time is fixed (long past, so the beacon takes every slot used here),
 * so the chain, both draws and the roles below are the same on every run. The client runs on a
 * fake clock at slots 8 to 11 (its phases fire when the test says); the beacon on the wall clock.
 * Also checked: the duties route's `dependent_root`, the head's `proposer_dependent_roots`, and
 * the beacon's `head` events (one per head change, with the dependent roots).
 * Waits are for observable conditions (a log line, the client going idle), never sleeps.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import type { HeadView } from '../../../src/api/beacon.js';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { signAttestation, attestationToJson } from '../../../src/core/types/attestation.js';
import { slotStartMs } from '../../../src/core/genesis/genesis.js';
import type { HeadEvent } from '../../../src/api/events.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { ValidatorClient } from '../../../src/node/validator/client.js';
import { SlashingProtectionDb } from '../../../src/node/validator/slashing/protection.js';
import { captureLog } from '../../helpers/log.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { waitFor } from '../../helpers/network.js';
import { BEACON_CHAIN_ID, BEACON_NETWORK_ID, type Duty, type Harness, bget, bpost, buildProposal, okData, proposeBlock, randaoChain, sample, startHarness, stopHarness } from '../beacon/fixture.js';
import { FakeTime } from './fake-time.js';

/** 2023-11-14T22:13:20Z: any fixed past time works; this one gives the roles asserted below. */
const GENESIS_TIME = 1_700_000_000;
const VALIDATORS = 4;

/** The beacon's head. */
async function head(h: Harness): Promise<HeadView> {
  return okData(await bget(h, '/api/v1/beacon/head'));
}

/** GET duties/proposer/:epoch on the beacon's head of the moment. */
async function duties(h: Harness, epoch: number): Promise<{ dependent_root: string; duties: Duty[] }> {
  return okData(await bget(h, `/api/v1/validator/duties/proposer/${epoch}`));
}

/** Validator `v` votes for `root` at `slot` with target (`epoch`, `root`), source the genesis checkpoint. */
async function vote(h: Harness, v: number, slot: number, root: string, epoch: number): Promise<void> {
  const genesisRoot = parseHex(h.beacon.chain.genesisRoot, 'genesis', 32);
  const rootBytes = parseHex(root, 'root', 32);
  const att = signAttestation(v, { slot, beaconBlockRoot: rootBytes, source: { epoch: 0, root: genesisRoot }, target: { epoch, root: rootBytes } }, h.validators[v]!.mldsa, h.genesis.chain_id);
  const r = okData(await bpost(h, '/api/v1/attestation', attestationToJson(att)));
  assert.is(r.status, 'applied', `vote of validator ${v}`);
}

test('duties cached on a branch the head then leaves: no block signed with them, the head branch\'s slots proposed', async () => {
  // 4-slot epochs, pinned: the scenario below is scripted slot by slot for that length.
  const genesis = buildGenesis({ validators: VALIDATORS, accounts: 1, preset: 'devnet', chainId: BEACON_CHAIN_ID, networkId: BEACON_NETWORK_ID, genesisTime: GENESIS_TIME, mnemonic: DEV_MNEMONIC, timing: { slotsPerEpoch: 4 } }).genesis;
  const spe = genesis.config.slots_per_epoch;
  assert.is(spe, 4, 'epoch 2 is slots 8 to 11');
  const h = await startHarness({ genesis });
  const sp = await SlashingProtectionDb.open({ memory: true });
  let client: ValidatorClient | undefined;
  // The beacon's `head` events, as any subscriber sees them.
  const heads: HeadEvent[] = [];
  const ws = new WebSocket(h.beacon.url.replace('http:', 'ws:') + '/ws');
  ws.on('message', (raw) => {
    const e = JSON.parse(String(raw)) as { type: string; data: HeadEvent };
    if (e.type === 'head') heads.push(e.data);
  });
  try {
    await new Promise<void>((ok, fail) => ws.once('open', () => ok()).once('error', fail));
    const G = h.beacon.chain.genesisRoot;
    // Epoch 2 on a chain with no block before slot 4 is drawn from the genesis mix: B's draw.
    const onB = await duties(h, 2);
    assert.is(onB.dependent_root, G);

    // Block A at slot 3 on genesis: epoch 2 now depends on A.
    const a = await buildProposal(h, { slot: 3 });
    const rootA = okData(await proposeBlock(h, a.block)).block_hash as string;
    const onA = await duties(h, 2);
    assert.is(onA.dependent_root, rootA, 'the last block before epoch 1 starts');
    assert.equal((await head(h)).proposer_dependent_roots, [{ epoch: 0, root: G }, { epoch: 1, root: G }], 'epochs 0 and 1 depend on genesis');
    assert.not.equal(onA.duties.map((d) => d.vrf_seed), onB.duties.map((d) => d.vrf_seed), 'another mix, other seeds');

    // The client under test: not B's proposer at slot 8 (it would build on B there), but B's at
    // some later slot of epoch 2, so the stale duties would have it sign a block A's branch refuses.
    const proposerOn = (ds: Duty[], slot: number) => ds.find((d) => d.slot === slot)!.validator_index;
    const x = [...Array(VALIDATORS).keys()].find((v) => proposerOn(onB.duties, 8) !== v && [9, 10, 11].some((s) => proposerOn(onB.duties, s) === v));
    assert.ok(x !== undefined, `no validator fits the scenario with this genesis: B ${JSON.stringify(onB.duties)}, A ${JSON.stringify(onA.duties)}`);
    const others = [...Array(VALIDATORS).keys()].filter((v) => v !== x);
    const staleSlots = [9, 10, 11].filter((s) => proposerOn(onB.duties, s) === x);
    const mySlots = [9, 10, 11].filter((s) => proposerOn(onA.duties, s) === x);

    // Block B at slot 4, also on genesis (height 1): its proposer's RANDAO value there is its commitment.
    const vB = proposerOn((await duties(h, 1)).duties, 4);
    const chainB = randaoChain(h, vB);
    const b = await buildProposal(h, { slot: 4, validator: vB, parentHash: parseHex(G, 'genesis', 32), index: 1, randaoReveal: chainB.next(chainB.commitment()) });
    const rootB = okData(await proposeBlock(h, b.block)).block_hash as string;
    // One vote moves the head to B.
    await vote(h, others[0]!, 4, rootB, 1);
    const headB = await head(h);
    assert.is(headB.root, rootB, 'head on B');
    assert.equal(headB.proposer_dependent_roots, [{ epoch: 1, root: G }, { epoch: 2, root: G }]);
    assert.equal(await duties(h, 2), onB, 'on B, epoch 2 is drawn as on the genesis-only chain');

    // The client starts at slot 8 and fetches epoch 2's duties: B's.
    const time = new FakeTime(slotStartMs(genesis, 8));
    const { log, lines } = captureLog();
    client = new ValidatorClient({ genesis, keys: h.validators[x]!, beaconUrl: h.beacon.url, token: h.token, slashingDb: sp, log, clock: time.clock, timers: time.timers, randaoChain: randaoChain(h, x) });
    const fetched: Array<{ epoch: number; dependent_root: string }> = [];
    const beaconApi = client.beacon;
    const proposerDuties = beaconApi.proposerDuties.bind(beaconApi);
    // Observes what the client is told, unchanged.
    beaconApi.proposerDuties = async (epoch, opts) => {
      const d = await proposerDuties(epoch, opts);
      fetched.push({ epoch, dependent_root: d.dependent_root });
      return d;
    };
    await client.start();
    await time.advanceTo(slotStartMs(genesis, 8), client);
    assert.equal(fetched.filter((f) => f.epoch === 2), [{ epoch: 2, dependent_root: G }], 'epoch 2 cached from B');
    await waitFor('the client to subscribe to the beacon events', async () => (client!.eventsConnected ? true : undefined), 10_000, 20);

    // Two votes for A with target epoch 2 outweigh B's one: the head goes back to A.
    await vote(h, others[1]!, 8, rootA, 2);
    await vote(h, others[2]!, 8, rootA, 2);
    assert.is((await head(h)).root, rootA, 'head back on A');
    await waitFor('the head event of A', async () => (heads.at(-1)?.block_hash === rootA ? true : undefined), 10_000, 20);
    assert.equal(heads.at(-1), { slot: 3, block_hash: rootA, proposer_dependent_roots: [{ epoch: 0, root: G }, { epoch: 1, root: G }] });
    assert.ok(heads.some((e) => e.block_hash === rootB && e.slot === 4 && JSON.stringify(e.proposer_dependent_roots) === JSON.stringify([{ epoch: 1, root: G }, { epoch: 2, root: G }])), 'B was announced');
    assert.ok(heads.every((e, i) => i === 0 || e.block_hash !== heads[i - 1]!.block_hash), 'one event per head change');
    // The beacon's head event tells the client before its slot comes.
    await waitFor('the client to drop the duties drawn on B', async () => (lines.some((l) => l.msg === 'the head moved to a branch with other proposer duties: fetching them again' && l.fields.epoch === 2 && l.fields.dependent_root === rootA) ? true : undefined), 10_000, 20);
    await client.idle();
    assert.equal(fetched.filter((f) => f.epoch === 2).at(-1), { epoch: 2, dependent_root: rootA }, 'epoch 2 fetched again, from A');

    await time.advanceTo(slotStartMs(genesis, 12) - 1, client);
    const refused = lines.filter((l) => l.msg.startsWith('the beacon refused'));
    assert.equal(refused, [], 'no block or vote refused');
    const proposed = lines.filter((l) => l.msg === 'block proposed').map((l) => l.fields.slot);
    assert.equal(proposed, mySlots, `proposed at A's slots ${JSON.stringify(mySlots)} (B's were ${JSON.stringify(staleSlots)})`);
    for (const s of mySlots) {
      const blk = okData(await bget(h, `/api/v1/beacon/blocks/${s}`));
      assert.is(blk.proposer_index, x, `slot ${s} is the client's block`);
    }
    assert.is(sample(await client.metrics.text(), 'service_validator_blocks_proposed_total'), mySlots.length);
    assert.equal(fetched.filter((f) => f.epoch === 2).length, 2, 'epoch 2 fetched twice: before and after the reorg');
  } finally {
    ws.terminate();
    await client?.stop();
    await sp.close();
    await stopHarness(h);
  }
});

test.run();
