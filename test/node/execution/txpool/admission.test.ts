/**
 * The admission pipeline over REST against a real node: each step's rejection with the spec
 * message, the step order, the error envelope and status codes; then the pool as clients see it:
 * queued → ready, the mempool view and the proposer's build order.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { GWEI } from '../../../../src/core/constants.js';
import { txFromJson, txToJson } from '../../../../src/core/types/transaction-json.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { flipByte } from '../../../helpers/assert.js';
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
  mempoolHashes,
  post,
  rpcResult,
  startNode,
  submit,
  submitOk,
  transfer,
} from '../fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const val1 = keys.validators[1]!;
const broke = keys.unfunded[0]!;


// ---------------------------------------------------------------------------------------------
const rules = suite<{ node: ExecutionNode }>('admission: rejections', { node: undefined as unknown as ExecutionNode });

rules.before(async (ctx) => {
  ctx.node = await startNode();
  // acc0's nonce becomes 1, so nonce 0 is "too low" from here on.
  const tx = transfer(acc0, { nonce: 0 });
  await submitOk(ctx.node, tx);
  await importOk(ctx.node, makeBlock(await genesisRef(ctx.node), { txs: [tx] }));
  assert.is((await account(ctx.node, acc0.address)).nonce, 1);
});
rules.after(async (ctx) => ctx.node?.stop());

rules('step 2: a bad signature is "invalid transaction signature", even when the nonce is also too low', async ({ node }) => {
  const tx = transfer(acc0, { nonce: 0 });
  const bad = { ...tx, signature: flipByte(tx.signature, 100) };
  expectEnvelope(await submit(node, bad), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');
  // Also when every later rule would fail too.
  const worst = transfer(broke, { nonce: 0, gasLimit: 30_000_001n, gasPrice: 1n });
  expectEnvelope(await submit(node, { ...worst, signature: flipByte(worst.signature, 7) }), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');
});

rules('step 2: a transaction signed for another chain id is "invalid transaction signature"', async ({ node }) => {
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 1, chainId: 'other-chain' })), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');
});

rules('step 3: "nonce too low", checked before the gas limit', async ({ node }) => {
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 0 })), 400, 'NONCE_TOO_LOW', 'nonce too low');
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 0, gasLimit: 30_000_001n })), 400, 'NONCE_TOO_LOW', 'nonce too low');
});

rules('step 4: gas limit above 30,000,000, checked before the balance', async ({ node }) => {
  const msg = 'gas limit 30000001 exceeds protocol max 30000000';
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 1, gasLimit: 30_000_001n })), 400, 'GAS_TOO_HIGH', msg);
  expectEnvelope(await submit(node, transfer(broke, { nonce: 0, gasLimit: 30_000_001n })), 400, 'GAS_TOO_HIGH', msg);
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 1, gasLimit: 20_999n })), 400, 'GAS_TOO_LOW', 'intrinsic gas too low: gas limit 20999 < 21000');
});

rules('step 5: "insufficient balance for value + gas", checked before the gas price; the boundary is exact', async ({ node }) => {
  const msg = 'insufficient balance for value + gas';
  expectEnvelope(await submit(node, transfer(broke, { nonce: 0 })), 400, 'INSUFFICIENT_FUNDS', msg);
  expectEnvelope(await submit(node, transfer(broke, { nonce: 0, gasPrice: 1n })), 400, 'INSUFFICIENT_FUNDS', msg);
  const { balance } = await account(node, acc1.address);
  const gasCost = 21_000n * 2n * GWEI;
  expectEnvelope(await submit(node, transfer(acc1, { nonce: 0, gasPrice: 2n * GWEI, value: balance - gasCost + 1n })), 400, 'INSUFFICIENT_FUNDS', msg);
  const exact = transfer(acc1, { nonce: 0, gasPrice: 2n * GWEI, value: balance - gasCost });
  await submitOk(node, exact);
  // The cost is value + gasLimit × gasPrice, not value + 21,000 × gasPrice.
  expectEnvelope(
    await submit(node, transfer(acc1, { nonce: 1, gasLimit: 100_000n, value: balance - 21_000n * GWEI })),
    400,
    'INSUFFICIENT_FUNDS',
    msg,
  );
});

rules('step 6: "gas price below minimum" (1 gwei); exactly 1 gwei is admitted', async ({ node }) => {
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 1, gasPrice: GWEI - 1n })), 400, 'GAS_PRICE_TOO_LOW', 'gas price below minimum');
  expectEnvelope(await submit(node, transfer(acc0, { nonce: 1, gasPrice: 0n })), 400, 'GAS_PRICE_TOO_LOW', 'gas price below minimum');
  await submitOk(node, transfer(acc0, { nonce: 1, gasPrice: GWEI }));
});

rules('step 7: a deployment the VM would refuse is refused before it is pooled; calls are pooled', async ({ node }) => {
  const code = new Uint8Array(10).fill(0x60);
  const framed = new Uint8Array([10, 0, 0, 0, ...code]);
  const deploy = transfer(acc0, { nonce: 2, to: null, data: framed, gasLimit: 32_000n + 200n * 10n, value: 0n });
  expectEnvelope(await submit(node, deploy), 400, 'CONTRACT_MODULE_MALFORMED');
  const unframed = transfer(acc0, { nonce: 2, to: null, data: code, gasLimit: 32_000n + 200n * 10n, value: 0n });
  expectEnvelope(await submit(node, unframed), 400, 'CONTRACT_DEPLOY_DATA_MALFORMED');
  // A deployment below its intrinsic gas (32,000 + 200 per code byte) fails step 4 first.
  const cheap = transfer(acc0, { nonce: 2, to: null, data: framed, gasLimit: 21_000n, value: 0n });
  expectEnvelope(await submit(node, cheap), 400, 'GAS_TOO_LOW', 'intrinsic gas too low: gas limit 21000 < 34000');
  // A call is pooled (a future nonce here, so the next rules keep nonce 2 free).
  const call = transfer(acc0, { nonce: 5, data: Uint8Array.of(1, 2, 3) });
  assert.is(expectOk(await submit(node, call), 202).status, 'queued');
});

rules('malformed numbers in the JSON form: "malformed tx.Value" / "malformed tx.GasPrice"', async ({ node }) => {
  const json = txToJson(transfer(acc0, { nonce: 2 })) as unknown as Record<string, unknown>;
  for (const value of ['0x01', '01', '-1', '1.5', '', '+1', '1e3', ' 1', 1, null]) {
    expectEnvelope(await post(node, '/api/v1/transactions', { ...json, value }), 400, 'MALFORMED_INPUT', 'malformed tx.Value');
  }
  for (const gasPrice of ['0x3b9aca00', '1e9', 1_000_000_000, '-1']) {
    expectEnvelope(await post(node, '/api/v1/transactions', { ...json, gasPrice }), 400, 'MALFORMED_INPUT', 'malformed tx.GasPrice');
  }
  expectEnvelope(await post(node, '/api/v1/transactions', { tx: { ...json, value: '0x01' } }), 400, 'MALFORMED_INPUT', 'malformed tx.Value');
  // The well-formed JSON form, bare and wrapped, is admitted.
  assert.equal(expectOk(await post(node, '/api/v1/transactions', json), 202), { hash: json.hash, status: 'ready' });
  const next = txToJson(transfer(acc0, { nonce: 3 }));
  assert.equal(expectOk(await post(node, '/api/v1/transactions', { tx: next }), 202), { hash: next.hash, status: 'ready' });
});

rules('a claimed from that is not the signer is ErrInvalidSender', async ({ node }) => {
  const json = txToJson(transfer(acc0, { nonce: 4 }));
  expectEnvelope(
    await post(node, '/api/v1/transactions', { ...json, from: acc1.address }),
    400,
    'INVALID_SENDER',
    'invalid sender: address derived from the public key does not match from',
  );
});

rules('duplicates are 409 ALREADY_KNOWN; a same-nonce replacement needs +10% (409 otherwise)', async ({ node }) => {
  const first = transfer(val1, { nonce: 0, gasPrice: GWEI });
  await submitOk(node, first);
  expectEnvelope(await submit(node, first), 409, 'ALREADY_KNOWN', 'already known');
  const under = transfer(val1, { nonce: 0, gasPrice: GWEI + GWEI / 10n - 1n, value: 2n });
  expectEnvelope(
    await submit(node, under),
    409,
    'REPLACEMENT_UNDERPRICED',
    'replacement transaction underpriced: needs a gas price of at least 1100000000 wei (+10%)',
  );
  const bumped = transfer(val1, { nonce: 0, gasPrice: GWEI + GWEI / 10n, value: 3n });
  assert.equal(expectOk(await submit(node, bumped), 202), { hash: hashOf(bumped), status: 'ready', replaced: hashOf(first) });
  const pooled = await mempoolHashes(node);
  assert.ok(pooled.includes(hashOf(bumped)));
  assert.not.ok(pooled.includes(hashOf(first)), 'the replaced transaction left the pool');
  assert.not.ok(pooled.includes(hashOf(under)));
});

rules('rejected transactions are not stored', async ({ node }) => {
  const rejected = transfer(broke, { nonce: 0 });
  expectEnvelope(await submit(node, rejected), 400, 'INSUFFICIENT_FUNDS');
  assert.not.ok((await mempoolHashes(node)).includes(hashOf(rejected)));
  assert.equal(expectOk(await get(node, `/api/v1/transactions/${hashOf(rejected)}`)), { hash: hashOf(rejected), state: 'unknown' });
});

rules.run();

// ---------------------------------------------------------------------------------------------
const pool = suite<{ node: ExecutionNode }>('admission: pool view and build order', { node: undefined as unknown as ExecutionNode });

pool.before(async (ctx) => {
  ctx.node = await startNode();
});
pool.after(async (ctx) => ctx.node?.stop());

pool('a future nonce is queued, then ready once the gap fills', async ({ node }) => {
  const n2 = transfer(acc0, { nonce: 2 });
  const n1 = transfer(acc0, { nonce: 1 });
  const n0 = transfer(acc0, { nonce: 0 });
  await submitOk(node, n2, 'queued');
  const s = expectOk(await get(node, `/api/v1/transactions/${hashOf(n2)}`));
  assert.is(s.state, 'Pending');
  assert.is(s.pool_status, 'queued');
  await submitOk(node, n1, 'queued');
  assert.is(await rpcResult(node, 'eth_getTransactionCount', [acc0.address, 'pending']), '0x0');
  assert.equal(await rpcResult(node, 'txpool_status'), { pending: '0x0', queued: '0x2' });
  await submitOk(node, n0, 'ready');
  for (const tx of [n0, n1, n2]) assert.is(expectOk(await get(node, `/api/v1/transactions/${hashOf(tx)}`)).pool_status, 'ready');
  assert.is(await rpcResult(node, 'eth_getTransactionCount', [acc0.address, 'pending']), '0x3');
  assert.is(await rpcResult(node, 'eth_getTransactionCount', [acc0.address, 'latest']), '0x0');
  assert.equal(await rpcResult(node, 'txpool_status'), { pending: '0x3', queued: '0x0' });
  const a = await account(node, acc0.address);
  assert.is(a.nonce, 0);
  assert.is(a.pending_nonce, 3);
});

pool('the mempool view has the spec fields and types', async ({ node }) => {
  const tx = transfer(acc1, { nonce: 0, value: 12_345_678_901_234_567_890n, gasPrice: 7n * GWEI, gasLimit: 30_000n });
  await submitOk(node, tx);
  const r = await get(node, '/api/v1/execution/mempool');
  assert.is(r.status, 200);
  assert.is(r.body.success, true);
  assert.is(r.body.count, r.body.transactions.length);
  const e = r.body.transactions.find((t: { hash: string }) => t.hash === hashOf(tx));
  assert.ok(e, 'the entry is listed');
  assert.equal(Object.keys(e).sort(), ['from', 'gas', 'gas_price', 'hash', 'nonce', 'public_key', 'signature', 'status', 'to', 'type', 'value']);
  assert.is(e.type, 0);
  assert.match(e.hash, /^0x[0-9a-f]{64}$/);
  assert.is(e.from, acc1.address);
  assert.is(e.to, '0x00000000000000000000000000000000000000aa');
  assert.is(e.value, '12345678901234567890');
  assert.is(e.gas, 30_000);
  assert.is(e.gas_price, '7000000000');
  assert.is(e.nonce, 0);
  assert.is(e.status, 'ready');
  assert.is(e.signature, Buffer.from(tx.signature).toString('base64'));
  assert.is(e.public_key, Buffer.from(tx.publicKey).toString('base64'));
  assert.is(Buffer.from(e.signature, 'base64').length, 3309);
  assert.is(Buffer.from(e.public_key, 'base64').length, 1952);
});

pool('getPendingTransactions: build order, max_gas packing, queued left out', async ({ node }) => {
  // State from the tests above: acc0 nonces 0..2 at 1 gwei (seq 0..2), acc1 nonce 0 at 7 gwei.
  const v1n0 = transfer(val1, { nonce: 0, gasPrice: 2n * GWEI });
  const a1n1 = transfer(acc1, { nonce: 1, gasPrice: 2n * GWEI });
  const a0n4 = transfer(acc0, { nonce: 4, gasPrice: 100n * GWEI }); // gap at 3: queued
  await submitOk(node, v1n0);
  await submitOk(node, a1n1);
  await submitOk(node, a0n4, 'queued');
  const a0 = [0, 1, 2].map((n) => hashOf(transfer(acc0, { nonce: n })));
  const byHash = new Map((await get(node, '/api/v1/execution/mempool')).body.transactions.map((t: any) => [`${t.from}:${t.nonce}`, t.hash]));
  const expected = [byHash.get(`${acc1.address}:0`), hashOf(v1n0), hashOf(a1n1), byHash.get(`${acc0.address}:0`), byHash.get(`${acc0.address}:1`), byHash.get(`${acc0.address}:2`)];
  assert.is(a0.length, 3);
  const all = expectOk(await get(node, '/api/v1/engine/getPendingTransactions'));
  assert.equal(all.transactions.map((t: { hash: string }) => t.hash), expected);
  assert.is(all.count, 6);
  assert.is(all.gas, 30_000 + 5 * 21_000);
  assert.not.ok(all.transactions.some((t: { hash: string }) => t.hash === hashOf(a0n4)));
  // Every entry is the full transaction JSON.
  assert.is(all.transactions[1].signature, toHex(v1n0.signature));
  const two = expectOk(await get(node, '/api/v1/engine/getPendingTransactions?max_gas=51000'));
  assert.equal(two.transactions.map((t: { hash: string }) => t.hash), expected.slice(0, 2));
  assert.is(two.gas, 51_000);
  expectEnvelope(await get(node, '/api/v1/engine/getPendingTransactions?max_gas=30000001'), 400, 'GAS_TOO_HIGH', 'max_gas exceeds the protocol max 30000000');
  expectEnvelope(await get(node, '/api/v1/engine/getPendingTransactions?max_gas=abc'), 400, 'MALFORMED_INPUT', 'malformed max_gas');
  assert.equal(await rpcResult(node, 'txpool_status'), { pending: '0x6', queued: '0x1' });
});

pool('build order never overdraws a sender: a run stops at the first transaction its balance cannot cover', async () => {
  const node = await startNode();
  try {
    const { balance } = await account(node, acc1.address);
    const fee = 21_000n * GWEI;
    // Each one is affordable on its own, so admission takes all three; together they are not.
    const spend = [0, 1, 2].map((n) => transfer(acc1, { nonce: n, value: n === 0 ? balance / 2n : balance - fee }));
    for (const tx of spend) await submitOk(node, tx);
    const honest = transfer(acc0, { nonce: 0, gasPrice: GWEI / 2n + GWEI });
    await submitOk(node, honest);
    const pending = expectOk(await get(node, '/api/v1/engine/getPendingTransactions'));
    assert.equal(pending.transactions.map((t: { hash: string }) => t.hash), [hashOf(honest), hashOf(spend[0]!)]);
    assert.is(pending.gas, 42_000, 'refused transactions take no block gas');
    // The block a validator builds from it is valid.
    const txs = pending.transactions.map((t: unknown) => txFromJson(t));
    const { result } = await importOk(node, makeBlock(await genesisRef(node), { txs }));
    assert.equal(result.receipts.map((r: { status: number }) => r.status), [1, 1]);
  } finally {
    await node.stop();
  }
});

pool.run();
