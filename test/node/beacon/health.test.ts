/**
 * The beacon's health says whether it can make progress: a fresh beacon is healthy; after
 * UNHEALTHY_AFTER_REJECTIONS proposals in a row refused by execution it answers 503
 * PROPOSALS_REJECTED until one is accepted; when its execution node is replaced by one of
 * another chain (same URL) it answers 503 WRONG_CHAIN, sends that node nothing, and recovers
 * once the right chain answers there again.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { TX_BASE_GAS } from '../../../src/core/constants.js';
import { PRESETS, genesisHash } from '../../../src/core/genesis/genesis.js';
import { signStandardTx } from '../../../src/core/types/transaction.js';
import { BeaconClient } from '../../../src/client/beacon.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { UNHEALTHY_AFTER_REJECTIONS } from '../../../src/node/beacon/chain.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import { silentLogger } from '../../../src/util/log.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { expectEnvelope, http } from '../execution/fixture.js';
import { type Harness, beaconHead, bget, buildProposal, currentSlot, okData, proposeBlock, startHarness, stopHarness } from './fixture.js';
import { waitFor } from '../../helpers/network.js';

/** GET /beacon/v1/node/health: HTTP status and body. */
async function health(h: Harness): Promise<{ status: number; body: any }> {
  const r = await bget(h, '/beacon/v1/node/health');
  return { status: r.status, body: r.body };
}

/** A transfer execution refuses in a block (its nonce is far ahead of the account's), so the whole block is refused. */
function badTx(h: Harness, nonce: bigint) {
  const to = parseHex('0x' + 'aa'.repeat(20), 'to', 20);
  return signStandardTx({ nonce, gasPrice: BigInt(h.genesis.config.min_gas_price), gasLimit: TX_BASE_GAS, to, value: 1n, data: new Uint8Array(0) }, h.accounts[0]!.mldsa, h.genesis.chain_id);
}

test('health: healthy when fresh, 503 after consecutive execution rejections, healthy again after an accepted block', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 12 });
  try {
    const fresh = await health(h);
    assert.is(fresh.status, 200, JSON.stringify(fresh.body));
    assert.is(fresh.body.status, 'healthy');
    const client = new BeaconClient(h.beacon.url);
    assert.is((await client.health()).status, 'healthy');
    const slot = currentSlot(h);
    for (let i = 0; i < UNHEALTHY_AFTER_REJECTIONS; i++) {
      // Same slot and parent each time: the beacon's own checks pass, execution refuses the transaction.
      const { block } = await buildProposal(h, { slot, transactions: [badTx(h, 1000n + BigInt(i))] });
      expectEnvelope(await proposeBlock(h, block), 400, 'EXECUTION_REJECTED');
      const now = await health(h);
      if (i < UNHEALTHY_AFTER_REJECTIONS - 1) assert.is(now.status, 200, `still healthy after ${i + 1} rejection(s): ${JSON.stringify(now.body)}`);
      else {
        assert.is(now.status, 503, JSON.stringify(now.body));
        assert.is(now.body.status, 'unhealthy');
        assert.is(now.body.reason, 'PROPOSALS_REJECTED');
        assert.match(now.body.message, `execution rejected the last ${UNHEALTHY_AFTER_REJECTIONS} proposals`);
        assert.is(now.body.layer, 'beacon');
        assert.type(now.body.head_slot, 'number');
        // The typed client returns the 503 view (svc devnet status lists it as a problem) rather than throwing.
        const view = await client.health();
        assert.equal([view.status, view.reason, view.message], ['unhealthy', 'PROPOSALS_REJECTED', now.body.message]);
      }
    }
    const { block } = await buildProposal(h, { slot });
    okData(await proposeBlock(h, block));
    const back = await health(h);
    assert.is(back.status, 200, JSON.stringify(back.body));
    assert.is(back.body.status, 'healthy');
  } finally {
    await stopHarness(h);
  }
});

test('execution replaced by another chain on the same URL: 503 WRONG_CHAIN, nothing sent to it, healthy once the right chain is back', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 12 });
  const slotMs = h.genesis.config.slot_seconds * 1000;
  const port = Number(new URL(h.exec.restUrl).port);
  const other = buildGenesis({
    validators: 2,
    accounts: 1,
    preset: 'devnet',
    chainId: 'svc-other',
    networkId: 40404,
    genesisTime: Math.floor(Date.now() / 1000) - 12 * PRESETS.devnet.slot_seconds,
    mnemonic: DEV_MNEMONIC,
  }).genesis;
  try {
    await h.exec.stop();
    h.exec = await ExecutionNode.start({ genesis: other, host: '127.0.0.1', restPort: port, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    // The beacon re-checks execution's chain every slot.
    const wrong = await waitFor('health to say WRONG_CHAIN', async () => {
      const r = await health(h);
      return r.status === 503 && r.body.reason === 'WRONG_CHAIN' ? r.body : undefined;
    }, 5 * slotMs + 10_000, 50);
    assert.ok(wrong.message.includes(toHex(genesisHash(other))) && wrong.message.includes(toHex(genesisHash(h.genesis))), `names both genesis hashes: ${wrong.message}`);
    // A valid proposal is refused with the same reason, and the other chain's node never sees it.
    const { block } = await buildProposal(h, { slot: currentSlot(h) });
    expectEnvelope(await proposeBlock(h, block), 409, 'WRONG_CHAIN');
    assert.is((await http(h.exec.restUrl, '/health')).body.latest_block, 0, 'the other chain received no block');
    assert.is((await beaconHead(h)).index, 0);

    await h.exec.stop();
    h.exec = await ExecutionNode.start({ genesis: h.genesis, host: '127.0.0.1', restPort: port, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    await waitFor('health to recover', async () => ((await health(h)).status === 200 ? true : undefined), 5 * slotMs + 10_000, 50);
    const retry = await buildProposal(h, { slot: currentSlot(h) });
    okData(await proposeBlock(h, retry.block));
  } finally {
    await stopHarness(h);
  }
});

test.run();
