/**
 * Slashing in execution: included evidence is verified against execution's own registry, the
 * penalty (stake cut of 1/32, forced exit, `slashed`) is applied in the block and undone by a
 * reorg, and every faulty evidence refuses the block with INVALID_SLASHING, importing nothing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { SLASHING_PENALTY_DIVISOR } from '../../../src/core/constants.js';
import { type SlashingEvidence, attesterSlashing, evidenceHash, proposerSlashing } from '../../../src/core/consensus/slashing.js';
import { signAttestation, type Attestation } from '../../../src/core/types/attestation.js';
import { type BlockJson, blockToJson, headerSigningHash, type SignedHeader } from '../../../src/core/types/block.js';
import { sign } from '../../../src/core/crypto/mldsa.js';
import type { RegistryEntry } from '../../../src/api/execution.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { CHAIN_ID, devnet, expectEnvelope, expectOk, genesisRef, get, height, importOk, makeBlock, metricValue, newPayload, post, withNode, withTempDir, startNode } from './fixture.js';

const { genesis, keys } = devnet();
const [v0, v1] = keys.validators as [(typeof keys.validators)[0], (typeof keys.validators)[0]];

function vote(index: number, target: number, root: number, key = [v0, v1][index]!): Attestation {
  const r = new Uint8Array(32).fill(root);
  return signAttestation(index, { slot: target * genesis.config.slots_per_epoch, beaconBlockRoot: r, source: { epoch: 0, root: r }, target: { epoch: target, root: r } }, key.mldsa, CHAIN_ID);
}

/** A double vote by validator `index` (signed by `key`, default its own). */
const doubleVote = (index: number, key = [v0, v1][index]!): SlashingEvidence => attesterSlashing(vote(index, 1, 7, key), vote(index, 1, 8, key));

function header(index: number, root: number, key = [v0, v1][index]!): { header: SignedHeader; signature: Uint8Array } {
  const h: SignedHeader = { chainId: CHAIN_ID, index: 1, timestamp: genesis.genesis_time + 6, parentHash: new Uint8Array(32), merkleRoot: new Uint8Array(32).fill(root), validatorIndex: index };
  return { header: h, signature: sign(key.mldsa.secretKey, headerSigningHash(h), { deterministic: true }) };
}

async function registry(node: ExecutionNode): Promise<RegistryEntry[]> {
  return expectOk(await get(node, '/api/v1/engine/registry')).validators;
}

test('included evidence slashes: stake cut by 1/32, forced exit, slashed; the reorg that drops the block restores it', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const stake = BigInt((await registry(node))[1]!.stake);
    const b1 = await importOk(node, makeBlock(g, { slashings: [doubleVote(1)] }));
    assert.is(b1.result.canonical, true);
    const side = await importOk(node, makeBlock(g, { salt: 1 }));
    assert.is(side.result.canonical, false);
    let v = (await registry(node))[1]!;
    assert.equal([v.slashed, v.active, BigInt(v.stake)], [true, false, stake - stake / SLASHING_PENALTY_DIVISOR]);
    assert.is(metricValue(await (await fetch(`${node.restUrl}/metrics`)).text(), 'service_execution_validators_slashed_total'), 1);
    // The block's stored body carries the evidence.
    const stored = await node.chain.blocks.block(b1.result.block_hash);
    assert.equal(stored!.slashings.map((e) => toHex(evidenceHash(e))), [toHex(evidenceHash(doubleVote(1)))]);
    // The next block cannot slash it again; and validator 1 is no longer drawn on this branch.
    expectEnvelope(await newPayload(node, makeBlock(b1.ref, { slashings: [proposerSlashing(header(1, 1), header(1, 2))] })), 400, 'INVALID_SLASHING', /ALREADY_SLASHED/);
    const b2 = await importOk(node, makeBlock(b1.ref));
    assert.ok(b2.ref.branch.validators.find((x) => x.index === 1)!.active === false);

    // Reorg to the side branch (no evidence): the penalty is undone exactly.
    expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: side.result.block_hash }));
    v = (await registry(node))[1]!;
    assert.equal([v.slashed, v.active, BigInt(v.stake)], [false, true, stake]);
    // And back: applied again from the stored changes.
    expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b2.result.block_hash }));
    v = (await registry(node))[1]!;
    assert.equal([v.slashed, v.active, BigInt(v.stake)], [true, false, stake - stake / SLASHING_PENALTY_DIVISOR]);
  });
});

test('faulty evidence refuses the block with INVALID_SLASHING naming the rule, and imports nothing', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const before = await height(node);
    const cases: Array<[string, SlashingEvidence[], RegExp]> = [
      ['signed by another key', [doubleVote(1, v0)], /INVALID_EVIDENCE_SIGNATURE/],
      ['not conflicting', [attesterSlashing(vote(1, 1, 7), vote(1, 2, 7))], /NOT_CONFLICTING/],
      ['two validators', [attesterSlashing(vote(1, 1, 7), vote(0, 1, 8))], /DIFFERENT_VALIDATORS/],
      ['unknown validator', [attesterSlashing({ ...vote(1, 1, 7), validatorIndex: 9 }, { ...vote(1, 1, 8), validatorIndex: 9 })], /UNKNOWN_VALIDATOR/],
      ['accused twice in one block', [doubleVote(1), proposerSlashing(header(1, 1), header(1, 2))], /DUPLICATE_EVIDENCE/],
      ['wrong chain', [proposerSlashing({ ...header(1, 1), header: { ...header(1, 1).header, chainId: 'other' } }, header(1, 2))], /NOT_CONFLICTING|WRONG_CHAIN/],
    ];
    for (const [what, slashings, detail] of cases) {
      expectEnvelope(await newPayload(node, makeBlock(g, { slashings })), 400, 'INVALID_SLASHING', detail);
      assert.is(await height(node), before, `${what}: nothing imported`);
    }
    assert.ok((await registry(node)).every((v) => !v.slashed));
    // Evidence not covered by merkle_root (added after signing) is a root mismatch.
    const honest = makeBlock(g);
    expectEnvelope(await newPayload(node, { ...blockToJson(honest), slashings: blockToJson(makeBlock(g, { slashings: [doubleVote(1)] })).slashings }), 400, 'MERKLE_ROOT_MISMATCH');
    // Malformed evidence JSON is a 400, not a 500.
    expectEnvelope(await newPayload(node, { ...blockToJson(honest), slashings: [{ type: 'attester' }] } as unknown as BlockJson), 400, 'MALFORMED_INPUT');
  });
});

test('the slashed registry survives a restart on the same data directory', async () => {
  await withTempDir(async (dir) => {
    let node = await startNode({ dataDir: dir });
    try {
      const g = await genesisRef(node);
      await importOk(node, makeBlock(g, { slashings: [doubleVote(1)] }));
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      const v = (await registry(node))[1]!;
      assert.equal([v.slashed, v.active], [true, false]);
      assert.is(parseHex(v.address, 'address', 20).length, 20);
    } finally {
      await node.stop();
    }
  });
});

test.run();
