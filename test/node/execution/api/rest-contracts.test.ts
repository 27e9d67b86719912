/**
 * REST contract and log routes on a real in-process node: bad input is a 400 envelope naming the
 * field, an unknown block 404, an account without code, and logs
 * filtered from the log index.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Receipt } from '../../../../src/api/execution.js';
import { eventTopic } from '../../../../src/core/codec/calldata.js';
import { LogIndex } from '../../../../src/node/execution/logs.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { WriteBatch } from '../../../../src/node/shared/store.js';
import { devnet, expectEnvelope, expectOk, genesisRef, get, importOk, makeBlock, post, startNode, transfer } from '../fixture.js';

const { keys } = devnet();
const A = '0x' + 'c0'.repeat(20);
const B = '0x' + 'd0'.repeat(20);

const test = suite<{ node: ExecutionNode; hash: string }>('rest: contracts and logs', {} as { node: ExecutionNode; hash: string });
test.before(async (ctx) => {
  ctx.node = await startNode();
  const t = transfer(keys.accounts[0]!, { nonce: 0 });
  const { result } = await importOk(ctx.node, makeBlock(await genesisRef(ctx.node), { txs: [t] }));
  ctx.hash = result.block_hash;
});
test.after(async (ctx) => ctx.node?.stop());

test('bad input is a 400 envelope naming the field; an unknown block is 404', async ({ node }) => {
  expectEnvelope(await get(node, '/api/v1/execution/contracts/0x12/code'), 400, 'MALFORMED_INPUT', 'malformed address: expected a 0x-prefixed 20-byte hex address');
  expectEnvelope(await get(node, `/api/v1/execution/contracts/${A}/code?block=soon`), 400, 'INVALID_BLOCK_ID');
  expectEnvelope(await get(node, `/api/v1/execution/contracts/${A}/code?block=99`), 404, 'NOT_FOUND', 'no block 99');
  expectEnvelope(await get(node, `/api/v1/execution/contracts/${A}/storage/zz`), 400, 'MALFORMED_INPUT', 'malformed storage key: expected 0x and 1..64 hex digits');
  expectEnvelope(await get(node, `/api/v1/execution/contracts/${A}/storage/0x${'1'.repeat(65)}`), 400, 'MALFORMED_INPUT');
  for (const path of ['/api/v1/execution/call', '/api/v1/execution/estimate-gas']) {
    expectEnvelope(await post(node, path, []), 400, 'MALFORMED_INPUT', 'malformed request: expected an object');
    expectEnvelope(await post(node, path, { to: '0x12' }), 400, 'MALFORMED_INPUT', 'malformed request.to: expected a 0x-prefixed 20-byte hex address');
    expectEnvelope(await post(node, path, { to: A, data: '0x1' }), 400, 'MALFORMED_INPUT', 'malformed request.data: expected 0x-prefixed hex with an even number of digits');
    expectEnvelope(await post(node, path, { to: A, value: 5 }), 400, 'MALFORMED_INPUT', 'malformed request.value');
    expectEnvelope(await post(node, path, { to: A, gas: '5' }), 400, 'MALFORMED_INPUT', 'malformed request.gas: expected a non-negative integer');
    expectEnvelope(await post(node, path, { to: A, gass: 5 }), 400, 'MALFORMED_INPUT', 'malformed request.gass: unknown field');
    expectEnvelope(await post(node, path, { to: null }), 400, 'MALFORMED_INPUT', 'malformed request.to: a call without "to" is a deployment and needs data');
    expectEnvelope(await post(node, path, { to: A, block: 99 }), 404, 'NOT_FOUND', 'no block 99');
    expectEnvelope(await post(node, path, { to: A, block: true }), 400, 'MALFORMED_INPUT');
  }
  expectEnvelope(await get(node, '/api/v1/execution/logs?address=0x12'), 400, 'MALFORMED_INPUT', 'malformed address: expected a 0x-prefixed 20-byte hex address');
  expectEnvelope(await get(node, '/api/v1/execution/logs?from=soon'), 400, 'MALFORMED_INPUT', 'malformed from: expected a block number, latest, finalized or earliest');
  expectEnvelope(await get(node, '/api/v1/execution/logs?topic0=0x12'), 400, 'MALFORMED_INPUT', 'malformed topic0: expected comma-separated 0x and 64 hex digits');
  expectEnvelope(await get(node, '/api/v1/execution/logs?from=0&to=20000'), 400, 'LOG_RANGE_TOO_LARGE', 'log queries may span at most 10000 blocks; this one spans 20001 (narrow fromBlock..toBlock)');
  expectEnvelope(await get(node, '/api/v1/execution/logs?from=3&to=2'), 400, 'INVALID_LOG_RANGE', 'fromBlock 3 is after toBlock 2');
  expectEnvelope(await get(node, '/api/v1/execution/logs?fromBlock=1'), 400, 'MALFORMED_INPUT', 'malformed query.fromBlock: unknown field');
  expectEnvelope(await get(node, `/api/v1/execution/logs?block_hash=0x${'ab'.repeat(32)}`), 404, 'NOT_FOUND');
  expectEnvelope(await get(node, `/api/v1/execution/logs?block_hash=0x${'ab'.repeat(32)}&from=1`), 400, 'MALFORMED_INPUT', 'malformed block_hash: cannot be combined with from or to');
});

test('contract state of an account without code: empty code, zero slots, a call runs nothing, a transfer estimates 21,000', async ({ node }) => {
  assert.equal(expectOk(await get(node, `/api/v1/execution/contracts/${A}/code`)).code, '0x');
  assert.is(expectOk(await get(node, `/api/v1/execution/contracts/${A}/storage/0x0`)).value, '0x' + '00'.repeat(32));
  assert.is(expectOk(await post(node, '/api/v1/execution/call', { to: A, data: '0x00' })).return_data, '0x');
  assert.is(expectOk(await post(node, '/api/v1/execution/estimate-gas', { to: A })).gas, 21_000);
});

test('logs from the index by range, address, topics and block hash', async ({ node, hash }) => {
  const T = eventTopic('Transfer');
  const logs = [A, B].map((address, i) => ({ address, topics: [i === 0 ? T : eventTopic('Approval')], data: '0x', blockNumber: 1, blockHash: hash, transactionHash: '0x' + '11'.repeat(32), transactionIndex: 0, logIndex: i }));
  const batch = new WriteBatch();
  new LogIndex(node.chain.store).put(batch, { hash, index: 1 }, [{ logs } as unknown as Receipt]);
  await node.chain.store.write(batch);
  assert.equal(expectOk(await get(node, '/api/v1/execution/logs')), { from_block: 1, to_block: 1, logs });
  assert.equal(expectOk(await get(node, `/api/v1/execution/logs?from=0&to=latest&address=${B}`)).logs, [logs[1]]);
  assert.equal(expectOk(await get(node, `/api/v1/execution/logs?from=0&address=${A},${B}&topic0=${T}`)).logs, [logs[0]]);
  assert.equal(expectOk(await get(node, `/api/v1/execution/logs?block_hash=${hash}&topic0=${eventTopic('Approval')},${T}`)).logs, logs);
  assert.equal(expectOk(await get(node, '/api/v1/execution/logs?from=5&to=9')), { from_block: 5, to_block: 1, logs: [] }, 'a range past the head is empty');
});

test.run();
