/**
 * Competing blocks and forkchoiceUpdated: side blocks are stored non-canonical, a reorganisation
 * moves balances to the new branch and returns still-valid reverted transactions to the pool,
 * finality makes transactions Finalized and is never reverted.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { GWEI } from '../../../src/core/constants.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { verifyAccountProof } from '../../../src/core/state/trie.js';
import {
  account,
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  get,
  hashOf,
  height,
  importOk,
  makeBlock,
  mempoolHashes,
  metricValue,
  newPayload,
  type ParentRef,
  post,
  startNode,
  submitOk,
  TOKEN,
  transfer,
  waitFor,
} from './fixture.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const val0 = keys.validators[0]!;
const val1 = keys.validators[1]!;
const X = '0x00000000000000000000000000000000000000d1';
const Y = '0x00000000000000000000000000000000000000d2';
const genesisBalance = (a: string) => BigInt(genesis.alloc.find((e) => e.address === a)!.balance);

const fcu = (node: ExecutionNode, body: unknown) => post(node, '/api/v1/engine/forkchoiceUpdated', body);
const txState = async (node: ExecutionNode, hash: string) => expectOk(await get(node, `/api/v1/transactions/${hash}`)).state;
const rejectedCount = async (node: ExecutionNode, reason: string) => metricValue(await (await fetch(`${node.restUrl}/metrics`)).text(), 'service_execution_transactions_rejected_total', `reason="${reason}"`) ?? 0;

interface Ctx {
  node: ExecutionNode;
  g: ParentRef;
  a1: ParentRef;
  b1: ParentRef;
  b2: ParentRef;
}

const fc = suite<Ctx>('forkchoice', {} as Ctx);

fc.before(async (ctx) => {
  // Pruning at finality is what this suite checks (history.test.ts covers --history full).
  ctx.node = await startNode({ history: 'finalized' });
  ctx.g = await genesisRef(ctx.node);
});
fc.after(async (ctx) => ctx.node?.stop());

// A1 = [t1: acc0#0 → X, t2: acc1#0 → X] by validator 0; B1 = [u1: acc1#0 → Y] by validator 1.
const t1 = transfer(acc0, { nonce: 0, to: X, value: 1n * TOKEN, gasPrice: 2n * GWEI });
const t2 = transfer(acc1, { nonce: 0, to: X, value: 2n * TOKEN, gasPrice: 2n * GWEI });
const u1 = transfer(acc1, { nonce: 0, to: Y, value: 3n * TOKEN, gasPrice: 5n * GWEI });
const fee = (price: bigint) => 21_000n * price;

fc('the second child of the same parent is stored non-canonical', async (ctx) => {
  const { node } = ctx;
  await submitOk(node, t1);
  await submitOk(node, t2);
  const a1 = makeBlock(ctx.g, { txs: [t1, t2] });
  const ra = await importOk(node, a1);
  assert.is(ra.result.canonical, true);
  ctx.a1 = ra.ref;
  const b1 = makeBlock(ctx.g, { txs: [u1], proposer: val1, salt: 1 });
  const rb = await importOk(node, b1);
  assert.is(rb.result.canonical, false);
  assert.is(rb.result.block_number, 1);
  assert.is(rb.result.receipts[0].status, 1, 'validated against its own parent state');
  ctx.b1 = rb.ref;
  assert.is.not(ctx.a1.hash, ctx.b1.hash);
  assert.is(node.chain.head().hash, ctx.a1.hash);
  assert.is(expectOk(await get(node, `/api/v1/blocks/${ctx.b1.hash}`)).canonical, false);
  assert.is(expectOk(await get(node, '/api/v1/blocks/1')).hash, ctx.a1.hash);
  // State follows A only.
  assert.is((await account(node, X)).balance, 3n * TOKEN);
  assert.is((await account(node, Y)).balance, 0n);
  assert.is(await txState(node, hashOf(u1)), 'unknown', 'a transaction only in a side block is not confirmed');
  assert.is(await txState(node, hashOf(t1)), 'Confirmed');
});

fc('forkchoiceUpdated to the side block reorganises: balances follow, still-valid reverted txs return to the pool', async (ctx) => {
  const { node } = ctx;
  const nonceRejects = await rejectedCount(node, 'NONCE_TOO_LOW');
  const res = expectOk(await fcu(node, { head_block_hash: ctx.b1.hash }));
  assert.equal(res, { head: { hash: ctx.b1.hash, index: 1 }, finalized: { hash: ctx.g.hash, index: 0 }, reverted: 1, applied: 1 });
  assert.is(node.chain.head().hash, ctx.b1.hash);
  assert.is(await height(node), 1);
  assert.is(expectOk(await get(node, '/api/v1/blocks/1')).hash, ctx.b1.hash);
  assert.is(expectOk(await get(node, `/api/v1/blocks/${ctx.a1.hash}`)).canonical, false);
  // Balances are B's.
  assert.is((await account(node, X)).balance, 0n);
  assert.is((await account(node, Y)).balance, 3n * TOKEN);
  assert.equal(await account(node, acc0.address), { balance: genesisBalance(acc0.address), nonce: 0, pending_nonce: (await account(node, acc0.address)).pending_nonce });
  assert.is((await account(node, acc1.address)).balance, genesisBalance(acc1.address) - 3n * TOKEN - fee(5n * GWEI));
  assert.is((await account(node, val0.address)).balance, genesisBalance(val0.address), 'A’s fees and proposer reward were reverted');
  assert.is((await account(node, val1.address)).balance, genesisBalance(val1.address) + fee(5n * GWEI) + BigInt(genesis.config.proposer_reward), 'B’s fee and proposer reward');
  // The world state is exactly B1's post-state (computed when B1 was imported as a side block).
  const p = expectOk(await get(node, `/api/v1/accounts/${Y}/proof`));
  assert.is(p.stateRoot, expectOk(await get(node, `/api/v1/blocks/${ctx.b1.hash}`)).state_root);
  assert.is(p.block_hash, ctx.b1.hash);
  assert.is(p.address, Y);
  assert.ok(verifyAccountProof(parseHex(p.stateRoot, 'root', 32), p));
  // t1 (acc0 nonce 0) is still valid and returns; t2 (acc1 nonce 0, now used by u1) is refused.
  await waitFor('t1 back in the pool', async () => (await mempoolHashes(node)).includes(hashOf(t1)));
  await waitFor('t2 refused as nonce too low', async () => (await rejectedCount(node, 'NONCE_TOO_LOW')) === nonceRejects + 1);
  assert.not.ok((await mempoolHashes(node)).includes(hashOf(t2)));
  assert.is(await txState(node, hashOf(t1)), 'Pending');
  assert.is(await txState(node, hashOf(t2)), 'unknown');
  assert.is(await txState(node, hashOf(u1)), 'Confirmed');
  assert.is((await account(node, acc0.address)).pending_nonce, 1);
});

fc('a block on the new head includes the returned tx; finalisation makes transactions Finalized', async (ctx) => {
  const { node } = ctx;
  const pending = expectOk(await get(node, '/api/v1/engine/getPendingTransactions'));
  assert.equal(pending.transactions.map((t: { hash: string }) => t.hash), [hashOf(t1)]);
  const b2 = makeBlock(ctx.b1, { txs: [t1] });
  const r = await importOk(node, b2);
  assert.is(r.result.canonical, true);
  ctx.b2 = r.ref;
  assert.is(await txState(node, hashOf(t1)), 'Confirmed');
  assert.is(await txState(node, hashOf(u1)), 'Confirmed');
  const res = expectOk(await fcu(node, { head_block_hash: ctx.b2.hash, finalized_block_hash: ctx.b1.hash }));
  assert.equal(res, { head: { hash: ctx.b2.hash, index: 2 }, finalized: { hash: ctx.b1.hash, index: 1 }, reverted: 0, applied: 0 });
  assert.is(await txState(node, hashOf(u1)), 'Finalized');
  assert.is(await txState(node, hashOf(t1)), 'Confirmed', 'its block is above the finalized block');
  assert.is((await get(node, '/health')).body.finalized_block, 1);
  assert.is(expectOk(await get(node, '/api/v1/blocks/finalized')).hash, ctx.b1.hash);
  assert.is(expectOk(await get(node, `/api/v1/blocks/${ctx.b1.hash}`)).finalized, true);
  assert.is(expectOk(await get(node, `/api/v1/blocks/${ctx.a1.hash}`)).finalized, false);
});

fc('finalized blocks are never reverted: 409 REORG_PAST_FINALIZED, head unchanged', async (ctx) => {
  const { node } = ctx;
  const before = { x: await account(node, X), y: await account(node, Y) };
  const msg = 'cannot reorganise below the finalized block 1';
  expectEnvelope(await fcu(node, { head_block_hash: ctx.a1.hash }), 409, 'REORG_PAST_FINALIZED', msg);
  expectEnvelope(await fcu(node, { head_block_hash: ctx.a1.hash, finalized_block_hash: ctx.a1.hash }), 409, 'REORG_PAST_FINALIZED', msg);
  expectEnvelope(await fcu(node, { head_block_hash: ctx.g.hash }), 409, 'REORG_PAST_FINALIZED', msg);
  // The abandoned branch's state was pruned at finality: a child of it cannot even be validated.
  const a2 = makeBlock(ctx.a1, {});
  expectEnvelope(await newPayload(node, a2), 400, 'PARENT_STATE_PRUNED', /^Block parent is not a descendant of the finalized block/);
  // Finality pruned A1's state; the finalized block's is kept, and so is its parent's (genesis):
  // the finalized header's state_root names it, for light-client proofs.
  expectEnvelope(await get(node, `/api/v1/accounts/${Y}/proof?block=${ctx.a1.hash}`), 410, 'STATE_PRUNED', /^the state of block \d+ \(0x[0-9a-f]{64}\) is pruned/);
  const parentProof = expectOk(await get(node, `/api/v1/accounts/${Y}/proof?block=${ctx.g.hash}`));
  const finalizedBlock = expectOk(await get(node, `/api/v1/blocks/${ctx.b1.hash}`));
  assert.is(parentProof.stateRoot, finalizedBlock.block.header.state_root);
  assert.ok(verifyAccountProof(parseHex(parentProof.stateRoot, 'root', 32), parentProof));
  const kept = expectOk(await get(node, `/api/v1/accounts/${Y}/proof?block=finalized`));
  assert.is(kept.block_hash, ctx.b1.hash);
  assert.ok(verifyAccountProof(parseHex(kept.stateRoot, 'root', 32), kept));
  assert.is(node.chain.head().hash, ctx.b2.hash);
  assert.is(await height(node), 2);
  assert.equal(await account(node, X), before.x);
  assert.equal(await account(node, Y), before.y);
  assert.is(await txState(node, hashOf(u1)), 'Finalized');
});

fc('forkchoiceUpdated input errors: finality regression, unknown blocks, malformed hashes', async (ctx) => {
  const { node } = ctx;
  expectEnvelope(
    await fcu(node, { head_block_hash: ctx.b2.hash, finalized_block_hash: ctx.g.hash }),
    409,
    'FINALITY_REGRESSION',
    'finalized block 0 is below the current finalized block 1',
  );
  const unknown = '0x' + '34'.repeat(32);
  expectEnvelope(await fcu(node, { head_block_hash: unknown }), 404, 'UNKNOWN_BLOCK', `unknown head block ${unknown}`);
  expectEnvelope(await fcu(node, { head_block_hash: ctx.b2.hash, finalized_block_hash: unknown }), 404, 'UNKNOWN_BLOCK', `unknown finalized block ${unknown}`);
  expectEnvelope(await fcu(node, { head_block_hash: '0x12' }), 400, 'MALFORMED_INPUT', 'malformed head_block_hash: expected 0x and 64 hex digits');
  expectEnvelope(await fcu(node, {}), 400, 'MALFORMED_INPUT', 'malformed request.head_block_hash: required');
  expectEnvelope(await fcu(node, { head_block_hash: ctx.b2.hash, safe: 1 }), 400, 'MALFORMED_INPUT', 'malformed request.safe: unknown field');
  assert.is(node.chain.head().hash, ctx.b2.hash);
  // Moving the head back to the finalized block itself is allowed, and t1 returns to the pool.
  const res = expectOk(await fcu(node, { head_block_hash: ctx.b1.hash }));
  assert.is(res.reverted, 1);
  await waitFor('t1 back in the pool', async () => (await mempoolHashes(node)).includes(hashOf(t1)));
  assert.is((await account(node, acc0.address)).nonce, 0);
});

fc.run();
