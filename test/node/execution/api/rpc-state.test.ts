/**
 * JSON-RPC methods added for contracts and Ethereum tooling, on a real in-process node: bad input
 * to each is -32602 naming the parameter, a block the node lacks is -32000, a known block is read
 * from its state; transaction objects carry r/s/v; receipts carry logs, bloom and
 * contractAddress; eth_getLogs filters the log index; eth_feeHistory and eth_syncing.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Receipt } from '../../../../src/api/execution.js';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { addressTopic, eventTopic } from '../../../../src/core/codec/calldata.js';
import { GWEI } from '../../../../src/core/constants.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { encodeTx } from '../../../../src/core/types/transaction.js';
import { LogIndex, logsBloom } from '../../../../src/node/execution/logs.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { WriteBatch } from '../../../../src/node/shared/store.js';
import { devnet, genesisRef, hashOf, importOk, makeBlock, rpc, rpcResult, startNode, transfer } from '../fixture.js';
import { txStatus } from '../../../../src/node/execution/api/queries.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const ADDR = '0x' + 'c0'.repeat(20);
const hex = (n: bigint | number) => '0x' + BigInt(n).toString(16);

interface Ctx {
  node: ExecutionNode;
  block: { hash: string; number: number };
  txHashes: string[];
}
const test = suite<Ctx>('json-rpc: state, contracts, logs, fees', {} as Ctx);

test.before(async (ctx) => {
  ctx.node = await startNode();
  const t0 = transfer(acc0, { nonce: 0, gasPrice: 2n * GWEI });
  const t1 = transfer(acc0, { nonce: 1, gasPrice: 5n * GWEI });
  await rpcResult(ctx.node, 'eth_sendRawTransaction', [toHex(encodeTx(t0))]);
  await rpcResult(ctx.node, 'eth_sendRawTransaction', [toHex(encodeTx(t1))]);
  const { result } = await importOk(ctx.node, makeBlock(await genesisRef(ctx.node), { txs: [t0, t1] }));
  ctx.block = { hash: result.block_hash, number: 1 };
  ctx.txHashes = [hashOf(t0), hashOf(t1)];
});
test.after(async (ctx) => ctx.node?.stop());

const error = async (node: ExecutionNode, method: string, params: unknown[]) => {
  const r = await rpc(node, method, params);
  assert.ok(r.error, `${method}(${JSON.stringify(params)}) should fail, got ${JSON.stringify(r.result)}`);
  return r.error as { code: number; message: string; data?: { code: string } };
};
const invalid = async (node: ExecutionNode, method: string, params: unknown[], startsWith: string) => {
  const e = await error(node, method, params);
  assert.is(e.code, -32602, `${method} ${JSON.stringify(params)}: ${e.message}`);
  assert.ok(e.message.startsWith(startsWith), `${method}: ${JSON.stringify(e.message)} should start with ${JSON.stringify(startsWith)}`);
};

test('transaction objects carry r, s, v and yParity: r zero and s a digest of the ML-DSA signature', async ({ node, txHashes }) => {
  const tx = await rpcResult(node, 'eth_getTransactionByHash', [txHashes[0]]);
  const full = await rpcResult(node, 'eth_getBlockByNumber', ['0x1', true]);
  assert.equal(full.transactions[0], tx);
  assert.is(tx.r, '0x' + '00'.repeat(32));
  const sig = (await txStatus(node.modules, txHashes[0]!)).tx as { signature: string };
  const digest = sha3(parseHex(sig.signature, 'signature'));
  digest[0]! &= 0x7f;
  assert.is(tx.s, toHex(digest));
  assert.is(tx.v, '0x1b');
  assert.is(tx.yParity, '0x0');
  assert.is(tx.type, '0x0');
  assert.is(tx.svcType, '0x0');
  assert.is(tx.chainId, hex(31337));
  assert.is(tx.gasPrice, hex(2n * GWEI));
});

test('receipts carry contractAddress, logs and their bloom', async ({ node, txHashes }) => {
  const r = await rpcResult(node, 'eth_getTransactionReceipt', [txHashes[0]]);
  assert.is(r.contractAddress, null);
  assert.equal(r.logs, []);
  assert.is(r.logsBloom, '0x' + '00'.repeat(256));
  assert.is(r.revertReason, undefined);
});

test('bad input to every new method is -32602 naming the parameter', async ({ node }) => {
  for (const m of ['eth_getCode', 'eth_getBalance', 'eth_getTransactionCount']) {
    await invalid(node, m, ['0x12', 'latest'], 'invalid address');
    await invalid(node, m, [ADDR, 'newest'], 'invalid block: expected a block number');
    await invalid(node, m, [ADDR, '0x01'], 'invalid block: expected a 0x hex quantity without leading zeros');
    await invalid(node, m, [ADDR, 7.5], 'invalid block');
    await invalid(node, m, [ADDR, { blockHash: '0x12' }], 'invalid block');
    await invalid(node, m, [ADDR, { blockHash: '0x' + '00'.repeat(32), blockNumber: '0x0' }], 'invalid block: give blockHash or blockNumber, not both');
    await invalid(node, m, [ADDR, '0x10000000000000000'], 'invalid block: quantity 0x10000000000000000 does not fit in 64 bits');
  }
  await invalid(node, 'eth_getStorageAt', [ADDR, 'zz', 'latest'], 'invalid storage key: expected 0x and 1..64 hex digits');
  await invalid(node, 'eth_getStorageAt', [ADDR, '0x' + '1'.repeat(65), 'latest'], 'invalid storage key');
  await invalid(node, 'eth_getStorageAt', [ADDR], 'invalid storage key');
  await invalid(node, 'eth_getProof', [ADDR, '0x0', 'latest'], 'invalid storage keys: expected an array');
  await invalid(node, 'eth_getProof', [ADDR, ['0xg'], 'latest'], 'invalid storage keys');
  await invalid(node, 'eth_getProof', [ADDR, Array(257).fill('0x0'), 'latest'], 'invalid storage keys: at most 256 storage keys');
  for (const m of ['eth_call', 'eth_estimateGas']) {
    await invalid(node, m, [], 'invalid call object: expected a transaction object');
    await invalid(node, m, ['0x'], 'invalid call object: expected a transaction object');
    await invalid(node, m, [{ to: '0x12' }], 'invalid call object: to: malformed address');
    await invalid(node, m, [{ to: ADDR, data: '0x1' }], 'invalid call object: data: malformed data');
    await invalid(node, m, [{ to: ADDR, data: '0x01', input: '0x02' }], 'invalid call object: data and input differ');
    await invalid(node, m, [{ to: ADDR, value: -1 }], 'invalid call object: value: expected a 0x hex quantity');
    await invalid(node, m, [{ to: ADDR, gas: '0x10000000000000000' }], 'invalid call object: gas: quantity');
    await invalid(node, m, [{ data: '0x' }], 'invalid call object: a call without "to" is a deployment and needs data');
    await invalid(node, m, [{ to: ADDR }, 'nope'], 'invalid block');
  }
  await invalid(node, 'eth_getLogs', [], 'invalid filter: expected a filter object');
  await invalid(node, 'eth_getLogs', [{ fromBlock: 'soon' }], 'invalid filter: expected a block number');
  await invalid(node, 'eth_getLogs', [{ blockHash: '0x' + '00'.repeat(32), fromBlock: '0x0' }], 'invalid filter: blockHash cannot be combined with fromBlock or toBlock');
  await invalid(node, 'eth_getLogs', [{ address: ['0x12'] }], 'invalid filter: malformed address[0]');
  await invalid(node, 'eth_getLogs', [{ topics: '0x00' }], 'invalid filter: topics must be an array');
  await invalid(node, 'eth_getLogs', [{ topics: [null, null, null, null, null] }], 'invalid filter: at most 4 topic positions');
  await invalid(node, 'eth_getLogs', [{ topics: [['0x12']] }], 'invalid filter: malformed hash');
  await invalid(node, 'eth_getLogs', [{ fromBlocks: '0x0' }], 'invalid filter: unknown filter field fromBlocks');
  await invalid(node, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x0' }], 'invalid filter: fromBlock 0x1 is after toBlock 0x0');
  await invalid(node, 'eth_feeHistory', ['ten', 'latest'], 'invalid block count');
  await invalid(node, 'eth_feeHistory', ['0x1', '0x' + '00'.repeat(32)], 'invalid newest block');
  await invalid(node, 'eth_feeHistory', ['0x1', 'latest', [50, 10]], 'invalid reward percentiles: percentiles must be in increasing order');
  await invalid(node, 'eth_feeHistory', ['0x1', 'latest', [101]], 'invalid reward percentiles: each percentile must be a number in 0..100');
  await invalid(node, 'eth_feeHistory', ['0x1', 'latest', '50'], 'invalid reward percentiles: expected an array');
});

test('a block the node lacks is -32000; a known block is read from its state', async ({ node, block }) => {
  const unknownHash = '0x' + 'ab'.repeat(32);
  for (const [m, params] of [
    ['eth_getCode', [ADDR, '0x99']],
    ['eth_getStorageAt', [ADDR, '0x0', '0x99']],
    ['eth_getProof', [ADDR, [], unknownHash]],
    ['eth_call', [{ to: ADDR, data: '0x00' }, { blockHash: unknownHash }]],
    ['eth_getBalance', [ADDR, '0x99']],
    ['eth_getLogs', [{ blockHash: unknownHash }]],
    ['eth_feeHistory', ['0x1', '0x99']],
  ] as const) {
    const e = await error(node, m, [...params]);
    assert.is(e.code, -32000, `${m}: ${e.message}`);
    assert.match(e.message, /^unknown block /, m);
  }
  assert.is(await rpcResult(node, 'eth_getBalance', [ADDR, { blockHash: block.hash, requireCanonical: true, extra: 1 }]), '0x0', 'a known block is read from its state');
  // An account without code: empty code, a zero slot, a call that runs nothing, a proof of absence.
  assert.is(await rpcResult(node, 'eth_getCode', [ADDR, 'latest']), '0x');
  assert.is(await rpcResult(node, 'eth_getStorageAt', [ADDR, '0x0', 'latest']), '0x' + '00'.repeat(32));
  assert.is(await rpcResult(node, 'eth_call', [{ to: ADDR, data: '0x00' }, 'latest']), '0x');
  assert.is(await rpcResult(node, 'eth_estimateGas', [{ to: ADDR }]), '0x5208');
  assert.is(await rpcResult(node, 'eth_getTransactionCount', [ADDR, 'earliest']), '0x0');
  assert.is(await rpcResult(node, 'eth_getBalance', [ADDR, 'latest']), '0x0');
  assert.is(await rpcResult(node, 'eth_getTransactionCount', [acc0.address, 'pending']), '0x2');
});

test('eth_getLogs filters the log index by range, block hash, address and topics', async ({ node, block, txHashes }) => {
  // What chain.ts does when the block becomes canonical, here with logs the VM would have emitted.
  const transferTopic = eventTopic('Transfer');
  const logs = [ADDR, '0x' + 'd0'.repeat(20)].map((address, i) => ({
    address,
    topics: i === 0 ? [transferTopic, addressTopic(acc0.address)] : [eventTopic('Approval')],
    data: '0x0300',
    blockNumber: 1,
    blockHash: block.hash,
    transactionHash: txHashes[i]!,
    transactionIndex: i,
    logIndex: i,
  }));
  const receipts = logs.map((l) => ({ logs: [l] }) as unknown as Receipt);
  const batch = new WriteBatch();
  new LogIndex(node.chain.store).put(batch, { hash: block.hash, index: 1 }, receipts);
  await node.chain.store.write(batch);

  const all = await rpcResult(node, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
  assert.equal(all[0], { ...logs[0], blockNumber: '0x1', transactionIndex: '0x0', logIndex: '0x0', removed: false });
  assert.is(all.length, 2);
  assert.is((await rpcResult(node, 'eth_getLogs', [{ address: ADDR }])).length, 1, 'default range is latest..latest');
  assert.is((await rpcResult(node, 'eth_getLogs', [{ address: [ADDR.toUpperCase().replace('0X', '0x'), '0x' + 'd0'.repeat(20)] }])).length, 2);
  assert.is((await rpcResult(node, 'eth_getLogs', [{ topics: [[transferTopic]] }])).length, 1);
  assert.is((await rpcResult(node, 'eth_getLogs', [{ topics: [null, addressTopic(acc0.address)] }])).length, 1);
  assert.is((await rpcResult(node, 'eth_getLogs', [{ blockHash: block.hash, topics: [eventTopic('Approval')] }])).length, 1);
  assert.equal(await rpcResult(node, 'eth_getLogs', [{ fromBlock: '0x5', toBlock: '0x9' }]), [], 'a range past the head is empty');
  const wide = await error(node, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x2710' }]);
  assert.is(wide.data?.code, 'LOG_RANGE_TOO_LARGE');
  assert.is(wide.code, -32000);
  assert.is(wide.message, 'log queries may span at most 10000 blocks; this one spans 10001 (narrow fromBlock..toBlock)', 'the cap applies to the range asked for, not the part that exists');
  const block1 = await rpcResult(node, 'eth_getBlockByNumber', ['0x1', false]);
  assert.is(block1.logsBloom, toHex(logsBloom(logs)), 'the block bloom covers its logs');
});

test('eth_feeHistory: gas used ratios, the minimum gas price as base fee, tips by percentile; eth_syncing is false', async ({ node }) => {
  const max = node.chain.genesis.config.max_gas_per_block;
  const h = await rpcResult(node, 'eth_feeHistory', ['0x4', 'latest', [0, 50, 100]]);
  assert.equal(h, {
    oldestBlock: '0x0',
    baseFeePerGas: [hex(GWEI), hex(GWEI), hex(GWEI)],
    gasUsedRatio: [0, 42_000 / max],
    reward: [['0x0', '0x0', '0x0'], [hex(GWEI), hex(GWEI), hex(4n * GWEI)]],
  });
  assert.equal(await rpcResult(node, 'eth_feeHistory', ['0x1', '0x1']), { oldestBlock: '0x1', baseFeePerGas: [hex(GWEI), hex(GWEI)], gasUsedRatio: [42_000 / max] });
  assert.is(await rpcResult(node, 'eth_syncing'), false);
});

test.run();
