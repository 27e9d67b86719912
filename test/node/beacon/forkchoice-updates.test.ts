/**
 * What the beacon tells execution when fork choice moves, and what it does when execution says
 * no. Real execution and beacon nodes over HTTP (test/node/beacon/fixture.ts).
 *
 * Regression (seen in bench/beacon.ts): attestations voting for the genesis block arrived on a
 * chain that already had proposals, including a full 30M-gas block. Once 2/3 of the stake
 * justified a genesis checkpoint, fork choice moved the head back to genesis and the beacon sent
 * forkchoiceUpdated(genesis, genesis); execution committed the reorganisation, then failed with
 * HTTP 500 INTERNAL while decoding the reverted ~10 MB block (parseBase64's regex overflowed), and
 * the beacon passed the failure on to the attester as an error although the vote was counted.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { EXIT_ADDRESS, MAX_TX_DATA_BYTES, TX_BASE_GAS } from '../../../src/core/constants.js';
import { attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { signStandardTx, type StandardTx } from '../../../src/core/types/transaction.js';
import { expectOk, http } from '../execution/fixture.js';
import {
  beaconHead,
  beaconMetrics,
  bget,
  bpost,
  buildProposal,
  execHeight,
  type Harness,
  okData,
  proposeBlock,
  sample,
  startHarness,
  stopHarness,
} from './fixture.js';

const ATTEST = '/api/v1/attestation';
const FAILED = 'service_beacon_forkchoice_updates_failed_total';

/** Runs `fn` on a fresh 2-validator harness whose slot 0 lies 20 slots in the past. */
async function withHarness(fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness({ validators: 2, slotsAgo: 20 });
  try {
    await fn(h);
  } finally {
    await stopHarness(h);
  }
}

/** Proposes an honest block at `slot` on the beacon's head; returns its root. */
async function propose(h: Harness, slot: number, transactions: StandardTx[] = []): Promise<string> {
  const { block } = await buildProposal(h, { slot, transactions });
  return okData(await proposeBlock(h, block)).block_hash;
}

/** Both validators vote for genesis in `epoch` (source: the genesis checkpoint); asserts 200 applied. */
async function voteForGenesis(h: Harness, epoch: number): Promise<void> {
  const root = parseHex(h.beacon.chain.genesisRoot, 'genesis', 32);
  const slot = epoch * h.genesis.config.slots_per_epoch;
  for (let v = 0; v < 2; v++) {
    const att = signAttestation(v, { slot, beaconBlockRoot: root, source: { epoch: 0, root }, target: { epoch, root } }, h.validators[v]!.mldsa, h.genesis.chain_id);
    assert.equal(okData(await bpost(h, ATTEST, attestationToJson(att))), { status: 'applied' }, `validator ${v}'s vote is accepted`);
  }
}

const failures = async (h: Harness, reason: string): Promise<number> => sample(await beaconMetrics(h), FAILED, `reason="${reason}"`) ?? 0;
const execHead = (h: Harness): string => h.exec.chain.head().hash;

test('genesis votes after a full-size block: the head returns to genesis on both layers, no error anywhere', async () => {
  await withHarness(async (h) => {
    // 40 maximum-size transactions (each a failed exit, status 0): ~10.5 MB of SSZ, ~14 MB of
    // base64 in execution's block record, like a full 30M-gas block of transfers.
    const data = new Uint8Array(MAX_TX_DATA_BYTES).fill(0x5c);
    const to = parseHex(EXIT_ADDRESS, 'to', 20);
    const gasPrice = BigInt(h.genesis.config.min_gas_price);
    const txs = Array.from({ length: 40 }, (_, i) => signStandardTx({ nonce: BigInt(i), gasPrice, gasLimit: TX_BASE_GAS, to, value: 0n, data }, h.accounts[0]!.mldsa, h.genesis.chain_id));
    const big = await propose(h, 1, txs);
    const b2 = await propose(h, 2);
    assert.is(await execHeight(h), 2);
    assert.is(execHead(h), b2);

    // Justifying {1, genesis} filters blocks at slots ≤ 4 out of the head's branch.
    await voteForGenesis(h, 1);
    const g = h.beacon.chain.genesisRoot;
    assert.is((await beaconHead(h)).root, g);
    assert.is(execHead(h), g, 'execution followed the head back to genesis');
    assert.is(await execHeight(h), 0);
    assert.is(await failures(h, 'INTERNAL'), 0);
    assert.is(await failures(h, 'EXECUTION_ERROR'), 0);
    // The reverted block is still served (its decode was the failing step).
    assert.is(expectOk(await http(h.exec.restUrl, `/api/v1/blocks/${big}`)).canonical, false);
    // By slot, the beacon answers the head's branch: the abandoned blocks are not canonical.
    assert.is((await bget(h, '/api/v1/beacon/blocks/1')).status, 404);
    assert.is(okData(await bget(h, `/api/v1/beacon/blocks/${big}`)).root, big, 'still served by root');

    // The chain goes on from genesis after the justified epoch.
    const next = await propose(h, 5);
    assert.is((await beaconHead(h)).root, next);
    assert.is(okData(await bget(h, '/api/v1/beacon/blocks/5')).root, next);
    assert.is(execHead(h), next);
    assert.is(await execHeight(h), 1);
  });
});

test('execution refusing forkchoiceUpdated: the attestation still succeeds, the refusal is counted and retried', async () => {
  await withHarness(async (h) => {
    await propose(h, 1);
    const b2 = await propose(h, 2);
    // Execution is ahead of this beacon (as after a beacon restart from an older store): it has
    // already finalised b2, so a head back at genesis would revert a finalised block.
    expectOk(await http(h.exec.restUrl, '/api/v1/engine/forkchoiceUpdated', { json: { head_block_hash: b2, finalized_block_hash: b2 } }));

    await voteForGenesis(h, 1);
    assert.is((await beaconHead(h)).root, h.beacon.chain.genesisRoot, 'fork choice moved regardless');
    assert.is(execHead(h), b2, 'execution kept its finalised head');
    const refused = await failures(h, 'REORG_PAST_FINALIZED');
    assert.ok(refused >= 1, `refusal counted (${refused})`);
    // Retried at the next slot (the node's slot timer may have retried already).
    await h.beacon.chain.onSlot();
    assert.ok((await failures(h, 'REORG_PAST_FINALIZED')) > refused, 'retried on the slot');
    // The beacon keeps serving and accepting votes.
    await voteForGenesis(h, 2);
    assert.is(execHead(h), b2);
  });
});

test('an update whose head does not descend from the finalized block is never sent; it is sent once consistent', async () => {
  await withHarness(async (h) => {
    await propose(h, 1);
    const b2 = await propose(h, 2);
    const fc = h.beacon.chain.forkChoice;
    const isDescendant = fc.isDescendant.bind(fc);
    // Simulates a fork-choice fault: the pair (head, finalized) looks inconsistent.
    fc.isDescendant = () => false;
    try {
      await voteForGenesis(h, 1);
      assert.is((await beaconHead(h)).root, h.beacon.chain.genesisRoot);
      assert.is(execHead(h), b2, 'execution was not told');
      assert.ok((await failures(h, 'INCONSISTENT_FORK_CHOICE')) >= 1);
    } finally {
      fc.isDescendant = isDescendant;
    }
    await h.beacon.chain.onSlot();
    assert.is(execHead(h), h.beacon.chain.genesisRoot, 'sent on the next slot');
  });
});

test.run();
