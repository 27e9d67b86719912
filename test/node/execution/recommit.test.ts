/**
 * RANDAO re-commitment in execution: admission refuses malformed ones with the rule they break,
 * a block applies a valid one (registry and last value) and fails the others with status 0, the
 * old chain's reveal is refused after it, and reorganisations undo and redo it (registry and the
 * per-branch last values).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { RANDAO_COMMIT_ADDRESS } from '../../../src/core/constants.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { DEFAULT_CHECKPOINT_BITS, RandaoChain } from '../../../src/node/validator/randao/chain.js';
import {
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  get,
  importOk,
  makeBlock,
  newPayload,
  type ParentRef,
  post,
  randaoChainOf,
  rpc,
  startNode,
  submit,
  submitOk,
  transfer,
} from './fixture.js';

const { genesis, keys } = devnet();
const val1 = keys.validators[1]!;
const acc0 = keys.accounts[0]!;
const LENGTH = genesis.config.randao_chain_length;
const gen0 = randaoChainOf(val1);
const gen1 = new RandaoChain(val1.mldsaSeed, LENGTH, DEFAULT_CHECKPOINT_BITS, 1);
const recommitTx = (from = val1, o: { nonce?: number; value?: bigint; data?: Uint8Array } = {}) =>
  transfer(from, { nonce: o.nonce ?? 0, to: RANDAO_COMMIT_ADDRESS, value: o.value ?? 0n, data: o.data ?? gen1.commitment() });

/** The ref with validator `index`'s last value replaced (what the block's re-commitment did to the branch). */
function recommitted(ref: ParentRef, index: number, value: Uint8Array): ParentRef {
  return { ...ref, branch: { ...ref.branch, last: new Map(ref.branch.last).set(index, value) } };
}

async function registryCommitment(node: ExecutionNode, index: number): Promise<string> {
  return expectOk(await get(node, '/api/v1/engine/registry')).validators[index].randao_commitment;
}

type Ctx = { node: ExecutionNode };
const test = suite<Ctx>('execution: RANDAO re-commitment', { node: undefined as unknown as ExecutionNode });
test.before.each(async (ctx) => {
  ctx.node = await startNode();
});
test.after.each(async (ctx) => {
  await ctx.node.stop();
});

test('admission refuses malformed re-commitments with the rule they break (HTTP 400), and pools a valid one', async ({ node }) => {
  const bad: Array<[ReturnType<typeof recommitTx>, RegExp]> = [
    [recommitTx(acc0), /not a registered, active validator/],
    [recommitTx(val1, { value: 1n }), /carries no value/],
    [recommitTx(val1, { data: gen1.commitment().subarray(0, 31) }), /32-byte new commitment as its data, got 31 bytes/],
    [recommitTx(val1, { data: new Uint8Array(0) }), /got 0 bytes/],
    [recommitTx(val1, { data: new Uint8Array(32) }), /must not be all zeros/],
  ];
  for (const [tx, message] of bad) expectEnvelope(await submit(node, tx), 400, 'INVALID_RANDAO_RECOMMIT', message);
  // JSON-RPC refuses it too, as an admission failure.
  const body = await rpc(node, 'eth_sendRawTransaction', [toHex(encodeTx(recommitTx(acc0)))]);
  assert.ok(body.error, 'JSON-RPC answers an error');
  assert.match(body.error.message, /not a registered, active validator/);
  assert.is((await get(node, '/api/v1/execution/mempool')).body.count, 0, 'nothing refused was pooled');
  await submitOk(node, recommitTx());
});

test('a block applies a re-commitment: registry and last value move, the old chain is refused, the new one accepted; the proposer\'s own fails', async ({ node }) => {
  const g = await genesisRef(node);
  const tx = recommitTx();
  await submitOk(node, tx);
  const a = await importOk(node, makeBlock(g, { txs: [tx] }));
  const receipt = a.result.receipts[0];
  assert.equal([receipt.status, receipt.kind, receipt.to], [1, 'randao_commit', RANDAO_COMMIT_ADDRESS], JSON.stringify(receipt));
  assert.is(await registryCommitment(node, 1), toHex(gen1.commitment()));
  assert.is(a.result.registry_changed, true, 'the answer says the registry changed: the beacon re-reads it');
  const afterA = recommitted(a.ref, 1, gen1.commitment());
  // The old chain's next link is no preimage of the new commitment.
  const stale = makeBlock(afterA, { proposer: val1, randaoReveal: gen0.reveal(1) });
  expectEnvelope(await newPayload(node, stale), 400, 'INVALID_RANDAO_REVEAL');
  const b = await importOk(node, makeBlock(afterA, { proposer: val1, randaoReveal: gen1.reveal(1) }));
  assert.ok(b.result.canonical);
  assert.is(b.result.registry_changed, false, 'a block without registry changes');
  // A validator cannot include its own re-commitment: status 0, nothing changes.
  const gen2 = new RandaoChain(val1.mldsaSeed, LENGTH, DEFAULT_CHECKPOINT_BITS, 2);
  const own = recommitTx(val1, { nonce: 1, data: gen2.commitment() });
  await submitOk(node, own);
  const c = await importOk(node, makeBlock(b.ref, { proposer: val1, txs: [own], randaoReveal: gen1.reveal(2) }));
  assert.equal([c.result.receipts[0].status, c.result.receipts[0].error], [0, 'a RANDAO re-commitment cannot be included in a block its own validator proposes']);
  assert.is(await registryCommitment(node, 1), toHex(gen1.commitment()));
  assert.is(c.result.registry_changed, false, 'a failed re-commitment changes nothing');
  // The next reveal still continues the new chain.
  await importOk(node, makeBlock(c.ref, { proposer: val1, randaoReveal: gen1.reveal(3) }));
});

test('one re-commitment per validator per block: the second fails with status 0', async ({ node }) => {
  const g = await genesisRef(node);
  const gen2 = new RandaoChain(val1.mldsaSeed, LENGTH, DEFAULT_CHECKPOINT_BITS, 2);
  const first = recommitTx();
  const second = recommitTx(val1, { nonce: 1, data: gen2.commitment() });
  await submitOk(node, first);
  await submitOk(node, second);
  const a = await importOk(node, makeBlock(g, { txs: [first, second] }));
  assert.equal(a.result.receipts.map((r: { status: number; error?: string }) => [r.status, r.error ?? null]), [[1, null], [0, 'validator 1 already re-commits in this block']]);
  assert.is(await registryCommitment(node, 1), toHex(gen1.commitment()), 'the first one counts');
});

test('reorganisations undo and redo a re-commitment: registry, canonical last value, side-branch reveals', async ({ node }) => {
  const g = await genesisRef(node);
  const tx = recommitTx();
  await submitOk(node, tx);
  const a = await importOk(node, makeBlock(g, { txs: [tx] }));
  const b = await importOk(node, makeBlock(recommitted(a.ref, 1, gen1.commitment()), { proposer: val1, randaoReveal: gen1.reveal(1) }));
  // A side branch from genesis without the re-commitment: val1 reveals from its first chain there.
  const a2 = await importOk(node, makeBlock(g, { salt: 1 }));
  assert.not.ok(a2.result.canonical);
  assert.is(a2.result.registry_changed, false, 'a side-branch block does not change the current registry');
  expectEnvelope(await newPayload(node, makeBlock(a2.ref, { proposer: val1, randaoReveal: gen1.reveal(1) })), 400, 'INVALID_RANDAO_REVEAL');
  const b2 = await importOk(node, makeBlock(a2.ref, { proposer: val1, randaoReveal: gen0.reveal(1) }));
  assert.not.ok(b2.result.canonical);
  expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b2.result.block_hash }));
  assert.is(await registryCommitment(node, 1), genesis.validators[1]!.randao_commitment, 'the re-commitment is undone with its block');
  // Canonical now: val1 continues its first chain.
  const c2 = await importOk(node, makeBlock(b2.ref, { proposer: val1 }));
  assert.ok(c2.result.canonical);
  // Back to the branch with the re-commitment: its value is the new chain's again, and a child continues it.
  expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b.result.block_hash }));
  assert.is(await registryCommitment(node, 1), toHex(gen1.commitment()));
  const c = await importOk(node, makeBlock(b.ref, { proposer: val1, randaoReveal: gen1.reveal(2) }));
  assert.ok(c.result.canonical);
  assert.equal(c.ref.branch.last.get(1), gen1.reveal(2));
});

test('the re-commitment survives a restart (registry persisted with the block)', async (ctx) => {
  // In-memory nodes do not persist: this runs on a data directory.
  await ctx.node.stop();
  const dir = await mkdtemp(join(tmpdir(), 'svc-recommit-'));
  try {
    let node = await startNode({ dataDir: dir });
    const tx = recommitTx();
    await submitOk(node, tx);
    const a = await importOk(node, makeBlock(await genesisRef(node), { txs: [tx] }));
    await node.stop();
    node = await startNode({ dataDir: dir });
    ctx.node = node;
    assert.is(await registryCommitment(node, 1), toHex(gen1.commitment()));
    await importOk(node, makeBlock(recommitted(a.ref, 1, gen1.commitment()), { proposer: val1, randaoReveal: gen1.reveal(1) }));
  } finally {
    await ctx.node.stop();
    ctx.node = await startNode();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
