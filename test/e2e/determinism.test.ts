/**
 * End to end, with real processes: consensus state is a function of the chain. A devnet
 * (`svc node execution`, `svc node beacon`, four `svc node validator`, devnet preset) runs until
 * blocks carrying attestations have paid rewards and an epoch is finalised; the validators are
 * then stopped so the chain stands still. A fresh `svc node execution` on the same genesis is fed
 * every canonical block in order through POST /api/v1/engine/newPayload, and at every height it
 * must compute the producer's block hash and state root, and hold the balances the block's
 * contents imply: the previous balances plus the proposer's reward and one attester reward per
 * included vote. Nothing reaches it but the blocks, so nothing but the blocks can decide them.
 *
 * Deadlines come from the genesis slot time, with generous margins for a busy machine.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getJson, withDevnet } from '../helpers/network.js';
import { feedCanonicalBlocks, startReplayNode } from '../helpers/replay.js';

const VALIDATORS = 4;

test('a node fed the canonical blocks from genesis computes the same state root and balances at every height', async () => {
  await withDevnet({ validators: VALIDATORS }, async (d) => {
    await d.startAll();
    const epochMs = d.slotsPerEpoch * d.slotMs;
    // Three epochs of blocks with votes, and a finalised epoch.
    await d.waitHead('an epoch finalised after three epochs of blocks', (h) => h.finalized.epoch >= 1 && h.slot >= 3 * d.slotsPerEpoch, 12 * epochMs + 60_000);
    for (let i = 0; i < VALIDATORS; i++) await d.kill(`validator-${i}`);
    const head = (await getJson(`${d.execUrl}/health`)).latest_block as number;
    const PR = BigInt(d.genesis.config.proposer_reward);
    const AR = BigInt(d.genesis.config.attester_reward);
    const validators = (d.genesis.validators as Array<{ index: number; address: string }>).map((v) => v.address);

    // The replaying node hears of nothing but the blocks posted to it.
    const replay = await startReplayNode(d);
    const replayUrl = replay.restUrl;

    const balances = async (url: string) => Promise.all(validators.map(async (a) => BigInt((await getJson(`${url}/api/v1/accounts/${a}`)).data.balance)));
    let expected = await balances(replayUrl);
    let included = 0;
    await feedCanonicalBlocks(d, replay, head, async (n, b) => {
      const block = b.block;
      // The block's contents alone give its balances (these blocks carry no transactions).
      assert.is(block.transactions.length, 0);
      expected = expected.map((bal, i) => bal + (validators[i] === b.proposer ? PR : 0n) + AR * BigInt(block.attestations.filter((a) => a.validator_index === i).length));
      assert.equal(await balances(replayUrl), expected, `balances at height ${n}`);
      included += block.attestations.length;
    });
    assert.ok(included >= VALIDATORS, `the chain included votes (${included})`);
    assert.equal(await balances(d.execUrl), expected, "the producer's balances at the head");
    process.stderr.write(`[determinism] ${head} blocks replayed, ${included} included attestations\n`);
  });
});

test.run();
