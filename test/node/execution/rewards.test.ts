/**
 * Consensus rewards inside the block state transition: the proposer's reward in its own block,
 * an attester's reward in the block that first includes its vote on the branch, every
 * inclusion rule refused with INVALID_ATTESTATION, and the last-included state following reorgs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { signAttestation, type Attestation } from '../../../src/core/types/attestation.js';
import { verifyAccountProof } from '../../../src/core/state/trie.js';
import { lastIncludedKey } from '../../../src/node/execution/rewards.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { TX_BASE_GAS } from '../../../src/core/constants.js';
import { type ParentRef, CHAIN_ID, MIN_GAS_PRICE, RECIPIENT, account, devnet, drawnSlot, expectEnvelope, expectOk, genesisRef, get, importOk, makeBlock, newPayload, post, transfer, withNode } from './fixture.js';

const { genesis, keys } = devnet();
const SPE = genesis.config.slots_per_epoch;
const PROPOSER_REWARD = BigInt(genesis.config.proposer_reward);
const ATTESTER_REWARD = BigInt(genesis.config.attester_reward);
const [v0, v1] = keys.validators as [(typeof keys.validators)[0], (typeof keys.validators)[0]];

/** A vote by validator `index` (signed with `key`, default its own) at `slot`, target the slot's epoch unless given. */
function vote(index: number, slot: number, o: { target?: number; key?: typeof v0; root?: string } = {}): Attestation {
  const root = parseHex(o.root ?? toHex(new Uint8Array(32).fill(7)), 'root', 32);
  const target = o.target ?? Math.floor(slot / SPE);
  return signAttestation(index, { slot, beaconBlockRoot: root, source: { epoch: 0, root }, target: { epoch: target, root } }, (o.key ?? [v0, v1][index]!).mldsa, CHAIN_ID);
}

/** The slot validator 0's next block after `parent` takes (makeBlock's default). */
const nextSlot = (parent: ParentRef, salt = 0) => drawnSlot(genesis, parent.branch, 0, salt).slot;

async function headStateRootMatches(node: ExecutionNode): Promise<void> {
  const p = expectOk(await get(node, `/api/v1/accounts/${v1.address}/proof`));
  const head = expectOk(await get(node, '/api/v1/blocks/latest'));
  assert.is(p.stateRoot, head.state_root, 'the live state is the head block\'s state root');
  assert.ok(verifyAccountProof(parseHex(p.stateRoot, 'root', 32), p), 'and its proof verifies');
}

test('the proposer earns proposer_reward in its own block; an included vote earns its attester attester_reward there', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const before = { p: (await account(node, v0.address)).balance, a: (await account(node, v1.address)).balance };
    const b1 = await importOk(node, makeBlock(g));
    assert.is((await account(node, v0.address)).balance, before.p + PROPOSER_REWARD);
    assert.is((await account(node, v1.address)).balance, before.a);
    const slot = b1.ref.branch.slot;
    const b2 = await importOk(node, makeBlock(b1.ref, { attestations: [vote(1, slot), vote(0, slot)] }));
    assert.is((await account(node, v0.address)).balance, before.p + 2n * PROPOSER_REWARD + ATTESTER_REWARD);
    assert.is((await account(node, v1.address)).balance, before.a + ATTESTER_REWARD);
    assert.is(await node.chain.store.get<number>(lastIncludedKey(1)), Math.floor(slot / SPE));
    assert.ok(b2.result.state_root !== b1.result.state_root);
    await headStateRootMatches(node);
  });
});

test('the fees of a block are the proposer\'s before its own transaction in that block: it may spend them there', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const [a] = keys.accounts as [(typeof keys.accounts)[0]];
    const fee = TX_BASE_GAS * MIN_GAS_PRICE;
    const before = { p: (await account(node, v0.address)).balance, a: (await account(node, a.address)).balance };
    // Validator 0 sends everything it holds once the two fees before its transaction are credited:
    // it can pay only if they are (maxCost = value + its own fee).
    const spend = before.p + 2n * fee - fee;
    const txs = [transfer(a, { nonce: 0, value: 5n }), transfer(a, { nonce: 1, to: v0.address, value: 7n }), transfer(v0, { nonce: 0, value: spend }), transfer(a, { nonce: 2, value: 1n })];
    const b1 = await importOk(node, makeBlock(g, { txs }));
    assert.is(b1.result.receipts.length, 4);
    assert.ok(b1.result.receipts.every((r: { status: number }) => r.status === 1));
    // Its own fee and the last transaction's come back to it as the proposer, then its reward.
    assert.is((await account(node, v0.address)).balance, 7n + 2n * fee + PROPOSER_REWARD);
    assert.is((await account(node, a.address)).balance, before.a - 13n - 3n * fee);
    assert.is((await account(node, RECIPIENT)).balance, 5n + spend + 1n);
    await headStateRootMatches(node);
  });
});

test('every inclusion rule is enforced by execution: 400 INVALID_ATTESTATION naming the rule, nothing imported', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const b1 = await importOk(node, makeBlock(g, { attestations: [vote(1, 0)] }));
    const s = nextSlot(b1.ref);
    // A later slot of validator 0, at least two epochs after slot 0, for the window rule.
    let salt = 0;
    while (nextSlot(b1.ref, salt) < 2 * SPE) salt++;
    const cases: Array<[string, Attestation[], number?]> = [
      ['UNKNOWN_VALIDATOR', [vote(0, 1, { key: v0 })].map((a) => ({ ...a, validatorIndex: 9 }))],
      ['NOT_BEFORE_BLOCK', [vote(1, s)]],
      ['TARGET_EPOCH_MISMATCH', [vote(1, 1, { target: Math.floor(1 / SPE) + 1 })]],
      ['TARGET_EPOCH_OUT_OF_WINDOW', [vote(0, 0)], salt],
      ['DUPLICATE_VOTE', [vote(0, 1), vote(0, 1)]],
      ['ALREADY_INCLUDED', [vote(1, 1)]],
      ['INVALID_SIGNATURE', [vote(0, 1, { key: v1 })]],
    ];
    for (const [reason, atts, useSalt] of cases) {
      const msg = expectEnvelope(await newPayload(node, makeBlock(b1.ref, { attestations: atts, salt: useSalt ?? 0 })), 400, 'INVALID_ATTESTATION');
      assert.ok(msg.includes(reason), `${reason}: ${msg}`);
    }
    // A forged copy without the votes: its root no longer matches the signed merkle_root.
    const good = makeBlock(b1.ref, { attestations: [vote(0, 1)] });
    expectEnvelope(await newPayload(node, { ...good, attestations: [] }), 400, 'MERKLE_ROOT_MISMATCH');
    assert.is((await get(node, '/health')).body.latest_block, 1, 'nothing was imported');
    await importOk(node, good);
  });
});

test('first inclusion is per branch, and its reward and state revert and re-apply with reorgs', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const base = (await account(node, v1.address)).balance;
    const a = await importOk(node, makeBlock(g, { attestations: [vote(1, 0)] }));
    // A sibling without the vote, then a child of it that includes the vote: on that branch it is the first inclusion.
    const b = await importOk(node, makeBlock(g, { salt: 1 }));
    assert.is(b.result.canonical, false);
    const b2 = await importOk(node, makeBlock(b.ref, { attestations: [vote(1, 0)] }));
    // On A's branch (canonical) the same vote is already included; on B2's (a side branch) too.
    expectEnvelope(await newPayload(node, makeBlock(a.ref, { attestations: [vote(1, 1)] })), 400, 'INVALID_ATTESTATION');
    expectEnvelope(await newPayload(node, makeBlock(b2.ref, { attestations: [vote(1, 1)] })), 400, 'INVALID_ATTESTATION');
    assert.is((await account(node, v1.address)).balance, base + ATTESTER_REWARD);

    // Reorg to B (no vote): the reward and the last-included record go.
    expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b.result.block_hash }));
    assert.is((await account(node, v1.address)).balance, base);
    assert.is(await node.chain.store.get<number>(lastIncludedKey(1)), undefined);
    await headStateRootMatches(node);
    // To B2: paid once more, by B2.
    expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b2.result.block_hash }));
    assert.is((await account(node, v1.address)).balance, base + ATTESTER_REWARD);
    assert.is(await node.chain.store.get<number>(lastIncludedKey(1)), 0);
    await headStateRootMatches(node);
    // Back to A: reverted through B2 and B, re-applied by A; still included once.
    expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: a.result.block_hash }));
    assert.is((await account(node, v1.address)).balance, base + ATTESTER_REWARD);
    assert.is(await node.chain.store.get<number>(lastIncludedKey(1)), 0);
    await headStateRootMatches(node);
    // A vote for a later epoch is a new first inclusion (in a block after that vote's slot).
    let salt = 0;
    while (nextSlot(a.ref, salt) <= SPE) salt++;
    await importOk(node, makeBlock(a.ref, { attestations: [vote(1, SPE)], salt }));
    assert.is((await account(node, v1.address)).balance, base + 2n * ATTESTER_REWARD);
    assert.is(await node.chain.store.get<number>(lastIncludedKey(1)), 1);
  });
});

test.run();
