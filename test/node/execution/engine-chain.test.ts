/**
 * The engine API's chain anchor: GET /api/v1/engine/config says which chain execution runs
 * (the beacon checks it before driving execution). Rewards have no endpoint of their own: they
 * are credited inside each block's state transition.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { account, devnet, expectOk, get, post, withNode } from './fixture.js';

const X = '0x00000000000000000000000000000000000000c7';

test('GET /api/v1/engine/config: chain id, network id and genesis hash of the running chain', async () => {
  await withNode(async (node) => {
    const { genesis } = devnet();
    const cfg = expectOk(await get(node, '/api/v1/engine/config'));
    assert.equal(cfg, { chain_id: genesis.chain_id, network_id: genesis.network_id, genesis_hash: toHex(genesisHash(genesis)) });
    assert.is(cfg.genesis_hash, node.chain.genesisHash);
  });
});

test('there is no reward-credit endpoint: rewards are part of each block, so nothing outside blocks changes balances', async () => {
  await withNode(async (node) => {
    const before = (await account(node, X)).balance;
    for (const path of ['/api/v1/engine/creditRewards']) {
      assert.is((await post(node, path, { epoch: 5, credits: [{ address: X, amount: '1000' }], genesis_hash: node.chain.genesisHash })).status, 404);
    }
    assert.is((await get(node, '/api/v1/engine/rewards/5')).status, 404);
    assert.is((await account(node, X)).balance, before, 'nothing credited');
  });
});

test.run();
