/**
 * The engine API's chain anchor: GET /api/v1/engine/config says which chain execution runs
 * (the beacon checks it before driving execution), and creditRewards names the chain it pays
 * for: another chain's credits are refused with 409 WRONG_CHAIN and nothing is credited.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { account, devnet, expectEnvelope, expectOk, get, post, withNode } from './fixture.js';

const X = '0x00000000000000000000000000000000000000c7';
const CREDIT = '/api/v1/engine/creditRewards';

test('GET /api/v1/engine/config: chain id, network id and genesis hash of the running chain', async () => {
  await withNode(async (node) => {
    const { genesis } = devnet();
    const cfg = expectOk(await get(node, '/api/v1/engine/config'));
    assert.equal(cfg, { chain_id: genesis.chain_id, network_id: genesis.network_id, genesis_hash: toHex(genesisHash(genesis)) });
    assert.is(cfg.genesis_hash, node.chain.genesisHash);
  });
});

test("creditRewards for another chain's genesis is 409 WRONG_CHAIN and credits nothing; without a genesis hash it is malformed", async () => {
  await withNode(async (node) => {
    const before = (await account(node, X)).balance;
    const other = '0x' + 'ab'.repeat(32);
    const msg = expectEnvelope(await post(node, CREDIT, { epoch: 5, credits: [{ address: X, amount: '1000' }], genesis_hash: other }), 409, 'WRONG_CHAIN');
    assert.ok(msg.includes(other) && msg.includes(node.chain.genesisHash), `names both genesis hashes: ${msg}`);
    expectEnvelope(await post(node, CREDIT, { epoch: 5, credits: [{ address: X, amount: '1000' }] }), 400, 'MALFORMED_INPUT', 'malformed request.genesis_hash: required');
    expectEnvelope(await post(node, CREDIT, { epoch: 5, credits: [], genesis_hash: 7 }), 400, 'MALFORMED_INPUT', 'malformed request.genesis_hash: expected a 0x-prefixed 32-byte hash');
    expectEnvelope(await post(node, CREDIT, { epoch: 5, credits: [], genesis_hash: '0x12' }), 400, 'MALFORMED_INPUT', 'malformed genesis_hash: expected 0x and 64 hex digits');
    assert.is((await account(node, X)).balance, before, 'nothing credited');
    expectEnvelope(await get(node, '/api/v1/engine/rewards/5'), 404, 'NOT_FOUND');
    // The epoch was not consumed by the refusals: this chain's own beacon still pays it (any case of hex).
    const paid = expectOk(await post(node, CREDIT, { epoch: 5, credits: [{ address: X, amount: '1000' }], genesis_hash: node.chain.genesisHash.toUpperCase().replace('0X', '0x') }));
    assert.equal(paid, { epoch: 5, acknowledged: true, already_applied: false, total: '1000' });
    assert.is((await account(node, X)).balance, before + 1000n);
  });
});

test.run();
