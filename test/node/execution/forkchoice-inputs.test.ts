/**
 * forkchoiceUpdated over every head/finalized combination the beacon can send (and some it
 * never should): each is either applied, in one LevelDB batch, or refused with a typed 4xx that
 * changes nothing. Never an INTERNAL 500.
 *
 * Regression: reorganising a large block away (a 30M-gas block is ~10 MB of base64 SSZ in its
 * stored record) answered HTTP 500 INTERNAL after the reorganisation had been committed. The
 * node decodes each reverted block to return its transactions to the pool, and parseBase64's
 * backtracking regex overflowed V8's regexp stack (RangeError) above ~5 MB; the same decode
 * answered 500 on GET /api/v1/blocks/:id and on transaction look-ups of that block.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXIT_ADDRESS, MAX_TX_DATA_BYTES } from '../../../src/core/constants.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { Keys } from '../../../src/node/execution/store.js';
import {
  account,
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  get,
  hashOf,
  importOk,
  makeBlock,
  type ParentRef,
  post,
  transfer,
  withNode,
} from './fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const val1 = keys.validators[1]!;
const X = '0x00000000000000000000000000000000000000e1';

const fcu = (node: ExecutionNode, body: unknown) => post(node, '/api/v1/engine/forkchoiceUpdated', body);

/** Head, finalized, a balance and the stored pointers: what a refusal must leave alone. */
async function snapshot(node: ExecutionNode) {
  return {
    head: node.chain.head(),
    finalized: node.chain.finalized(),
    x: (await account(node, X)).balance,
    storedHead: await node.chain.store.get(Keys.meta('head')),
    storedFinalized: await node.chain.store.get(Keys.meta('finalized')),
  };
}

/** Counts store batches written while `fn` runs. */
async function countWrites<T>(node: ExecutionNode, fn: () => Promise<T>): Promise<{ result: T; writes: number }> {
  const store = node.chain.store;
  const original = store.write.bind(store);
  let writes = 0;
  store.write = async (batch) => {
    if (batch.ops.length > 0) writes++;
    return original(batch);
  };
  try {
    return { result: await fn(), writes };
  } finally {
    store.write = original;
  }
}

/** Main chain g ← m1 ← … ← m4 (each pays X 1 wei from acc0) and a side block s1 on g. */
async function buildChains(node: ExecutionNode): Promise<{ g: ParentRef; main: ParentRef[]; side: ParentRef }> {
  const g = await genesisRef(node);
  const main: ParentRef[] = [];
  let parent = g;
  for (let i = 0; i < 4; i++) {
    parent = (await importOk(node, makeBlock(parent, { txs: [transfer(acc0, { nonce: i, to: X, value: 1n })] }))).ref;
    main.push(parent);
  }
  const side = (await importOk(node, makeBlock(g, { proposer: val1, salt: 7, txs: [transfer(acc1, { nonce: 0, to: X, value: 100n })] }))).ref;
  return { g, main, side };
}

test('a reorganisation that reverts a ~10 MB block answers 200, not 500 INTERNAL; the block and its transactions stay readable', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    // 40 maximum-size transactions to the exit address: valid in a block (each fails with
    // receipt status 0 and pays its 21,000 gas), ~10.5 MB of SSZ, stored as binary.
    const data = new Uint8Array(MAX_TX_DATA_BYTES).fill(0xab);
    const txs = Array.from({ length: 40 }, (_, i) => transfer(acc0, { nonce: i, to: EXIT_ADDRESS, value: 0n, data }));
    const big = await importOk(node, makeBlock(g, { txs }));
    assert.is(big.result.receipts.length, 40);
    assert.ok(big.result.receipts.every((r: { status: number }) => r.status === 0));
    const record = await node.chain.record(big.ref.hash);
    assert.ok(record!.size > 9_000_000, `stored block is ${record!.size} bytes`);
    const b2 = await importOk(node, makeBlock(big.ref, { txs: [transfer(acc0, { nonce: 40, to: X, value: 5n })] }));

    // Reads that decode the stored block.
    assert.is(expectOk(await get(node, `/api/v1/blocks/${big.ref.hash}`)).hash, big.ref.hash);
    assert.is(expectOk(await get(node, `/api/v1/transactions/${hashOf(txs[39]!)}`)).state, 'Confirmed');

    // The beacon's view moved back to genesis (attestations justified a genesis checkpoint).
    const back = await countWrites(node, () => fcu(node, { head_block_hash: g.hash, finalized_block_hash: g.hash }));
    assert.equal(expectOk(back.result), { head: { hash: g.hash, index: 0 }, finalized: { hash: g.hash, index: 0 }, reverted: 2, applied: 0 });
    assert.is(back.writes, 1, 'the reorganisation is one batch');
    assert.is(node.chain.head().hash, g.hash);
    assert.is((await account(node, X)).balance, 0n);
    assert.is((await account(node, acc0.address)).nonce, 0);
    assert.is(expectOk(await get(node, `/api/v1/blocks/${big.ref.hash}`)).canonical, false);

    // And forward again, finalising the big block in the same call.
    const fwd = await countWrites(node, () => fcu(node, { head_block_hash: b2.ref.hash, finalized_block_hash: big.ref.hash }));
    assert.equal(expectOk(fwd.result), { head: { hash: b2.ref.hash, index: 2 }, finalized: { hash: big.ref.hash, index: 1 }, reverted: 0, applied: 2 });
    assert.is(fwd.writes, 1, 'head and finalized move in one batch');
    assert.equal(await node.chain.store.get(Keys.meta('finalized')), { hash: big.ref.hash, index: 1 });
    assert.is((await account(node, X)).balance, 5n);
    assert.is(expectOk(await get(node, `/api/v1/transactions/${hashOf(txs[0]!)}`)).state, 'Finalized');
  });
});

test('every head/finalized combination is applied or refused with a typed 4xx that changes nothing', async () => {
  await withNode(async (node) => {
    const { g, main, side } = await buildChains(node);
    const [m1, m2, m3, m4] = main as [ParentRef, ParentRef, ParentRef, ParentRef];
    const unknown = '0x' + '5a'.repeat(32);
    const refuse = async (body: unknown, status: number, code: string, message?: string | RegExp) => {
      const before = await snapshot(node);
      const { result, writes } = await countWrites(node, () => fcu(node, body));
      expectEnvelope(result, status, code, message);
      assert.is(writes, 0, `${code}: nothing written`);
      assert.equal(await snapshot(node), before, `${code}: nothing changed`);
    };
    const apply = async (body: unknown, head: ParentRef, finalized: ParentRef) => {
      const { result, writes } = await countWrites(node, () => fcu(node, body));
      const data = expectOk(result);
      assert.equal([data.head, data.finalized], [{ hash: head.hash, index: head.index }, { hash: finalized.hash, index: finalized.index }]);
      assert.ok(writes <= 1, `one batch at most, got ${writes}`);
      assert.equal(await node.chain.store.get(Keys.meta('head')), { hash: head.hash, index: head.index });
      assert.equal(await node.chain.store.get(Keys.meta('finalized')), { hash: finalized.hash, index: finalized.index });
      return data;
    };

    // Head back to genesis with genesis finalized, and forward again; a no-op repeat writes nothing.
    assert.is((await apply({ head_block_hash: g.hash, finalized_block_hash: g.hash }, g, g)).reverted, 4);
    assert.is((await account(node, X)).balance, 0n);
    assert.is((await apply({ head_block_hash: m4.hash, finalized_block_hash: g.hash }, m4, g)).applied, 4);
    assert.is((await countWrites(node, () => fcu(node, { head_block_hash: m4.hash, finalized_block_hash: g.hash }))).writes, 0);
    assert.is((await account(node, X)).balance, 4n);
    // finalized_block_hash may be absent or null.
    await apply({ head_block_hash: m3.hash }, m3, g);
    await apply({ head_block_hash: m4.hash, finalized_block_hash: null }, m4, g);

    // Finalized not on the head's branch, or ahead of the head.
    await refuse({ head_block_hash: g.hash, finalized_block_hash: m2.hash }, 409, 'FINALIZED_NOT_ANCESTOR', /^finalized block 0x[0-9a-f]{64} \(2\) is not an ancestor of head 0x[0-9a-f]{64} \(0\)$/);
    await refuse({ head_block_hash: m1.hash, finalized_block_hash: m3.hash }, 409, 'FINALIZED_NOT_ANCESTOR');
    await refuse({ head_block_hash: side.hash, finalized_block_hash: m1.hash }, 409, 'FINALIZED_NOT_ANCESTOR');
    await refuse({ head_block_hash: m4.hash, finalized_block_hash: side.hash }, 409, 'FINALIZED_NOT_ANCESTOR');
    // Unknown hashes.
    await refuse({ head_block_hash: unknown, finalized_block_hash: g.hash }, 404, 'UNKNOWN_BLOCK', `unknown head block ${unknown}`);
    await refuse({ head_block_hash: m4.hash, finalized_block_hash: unknown }, 404, 'UNKNOWN_BLOCK', `unknown finalized block ${unknown}`);
    await refuse({ head_block_hash: g.hash, finalized_block_hash: unknown }, 404, 'UNKNOWN_BLOCK');

    // Reorganise to the side branch and back with genesis finalized.
    assert.equal((await apply({ head_block_hash: side.hash, finalized_block_hash: g.hash }, side, g)).reverted, 4);
    assert.is((await account(node, X)).balance, 100n);
    await apply({ head_block_hash: m2.hash, finalized_block_hash: g.hash }, m2, g);
    assert.is((await account(node, X)).balance, 2n);

    // Head and finality move together (m4 head, m2 finalized); then finality only.
    const both = await apply({ head_block_hash: m4.hash, finalized_block_hash: m2.hash }, m4, m2);
    assert.equal([both.reverted, both.applied], [0, 2]);
    await apply({ head_block_hash: m4.hash, finalized_block_hash: m3.hash }, m4, m3);

    // Below finality: head at genesis, on the side branch or at m2; finality going back.
    await refuse({ head_block_hash: g.hash, finalized_block_hash: g.hash }, 409, 'REORG_PAST_FINALIZED', 'cannot reorganise below the finalized block 3');
    await refuse({ head_block_hash: g.hash }, 409, 'REORG_PAST_FINALIZED', 'cannot reorganise below the finalized block 3');
    await refuse({ head_block_hash: m4.hash, finalized_block_hash: g.hash }, 409, 'FINALITY_REGRESSION', 'finalized block 0 is below the current finalized block 3');
    await refuse({ head_block_hash: side.hash, finalized_block_hash: m3.hash }, 409, 'REORG_PAST_FINALIZED');
    await refuse({ head_block_hash: m2.hash, finalized_block_hash: m3.hash }, 409, 'REORG_PAST_FINALIZED');
    await refuse({ head_block_hash: m4.hash, finalized_block_hash: m2.hash }, 409, 'FINALITY_REGRESSION');
    // Head at the finalized block itself is allowed.
    await apply({ head_block_hash: m3.hash, finalized_block_hash: m3.hash }, m3, m3);
    assert.is((await account(node, X)).balance, 3n);
  });
});

test('a failing canonical-change observer does not turn a committed reorganisation into an error', async () => {
  await withNode(async (node) => {
    const { g, main } = await buildChains(node);
    // Returning reverted transactions to the pool is the observer's job; make it throw.
    const submit = node.admission.submit;
    node.admission.submit = () => {
      throw new Error('observer failure injected by the test');
    };
    try {
      const r = expectOk(await fcu(node, { head_block_hash: g.hash, finalized_block_hash: g.hash }));
      assert.equal([r.head.hash, r.reverted], [g.hash, 4]);
    } finally {
      node.admission.submit = submit;
    }
    assert.is(node.chain.head().hash, g.hash);
    assert.equal(await node.chain.store.get(Keys.meta('head')), { hash: g.hash, index: 0 });
    assert.is((await account(node, X)).balance, 0n);
    // The node keeps working: forward again, with the observer back.
    assert.is(expectOk(await fcu(node, { head_block_hash: main[3]!.hash })).applied, 4);
    assert.is((await account(node, X)).balance, 4n);
  });
});

test.run();
