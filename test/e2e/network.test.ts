/**
 * End to end: genesis with 4 validators (devnet preset), then real processes: `svc node
 * execution`, `svc node beacon` and four `svc node validator`. Blocks arrive from the drawn
 * proposers, attestations justify and finalise epochs, a transfer sent with `svc tx send` is
 * included and reported Finalized, rewards are paid and fees go to the proposer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { expectJsonOk, runCli } from '../helpers/cli.js';
import { getJson, waitFor, withDevnet } from '../helpers/network.js';

const VALIDATORS = 4;

test('4 validators produce blocks every slot, finalise epochs, include and finalise a transfer, pay rewards', async () => {
  await withDevnet({ validators: VALIDATORS }, async (devnet) => {
    const { net, env, execUrl, beaconUrl } = devnet;
    await devnet.startAll();
    // Blocks from the drawn proposers: the beacon only accepts the expected proposer.
    const firstHead = await waitFor('a proposed block', async () => {
      const h = (await getJson(`${beaconUrl}/api/v1/beacon/head`)).data;
      return h.index >= 2 ? h : undefined;
    }, 40_000);
    assert.ok(firstHead.slot >= 2);

    // A transfer sent with svc tx send is included.
    const account0 = join(net, 'accounts', 'account-0.json');
    const sent = await runCli(['tx', 'send', '--from', account0, '--to', '0x00000000000000000000000000000000000000aa', '--value', '12345', '--wait', '--timeout', '60', '--execution-url', execUrl, '--json'], { ...env, SVC_PASSWORD: 'svc-devnet' });
    const receipt = expectJsonOk(sent);
    assert.is(receipt.state === 'Confirmed' || receipt.state === 'Finalized', true, JSON.stringify(receipt));
    const hash: string = receipt.hash;

    // Finality advances, and the transfer becomes Finalized.
    const fin = await waitFor('a finalised epoch', async () => {
      const h = (await getJson(`${beaconUrl}/api/v1/beacon/head`)).data;
      return h.finalized.epoch >= 1 ? h.finalized : undefined;
    }, 90_000);
    assert.ok(fin.epoch >= 1);
    const finalTx = await waitFor('the transfer Finalized', async () => {
      const s = (await getJson(`${execUrl}/api/v1/transactions/${hash}`)).data;
      return s.state === 'Finalized' ? s : undefined;
    }, 60_000);
    assert.is(finalTx.receipt.status, 1);

    // Rewards: validator balances grow beyond their genesis balance (1,000 tokens) plus fees.
    const genesisBalance = 1_000n * 10n ** 18n;
    const rewarded = await waitFor('rewards paid to validators', async () => {
      const vs = (await getJson(`${beaconUrl}/api/v1/validators`)).data.validators as Array<{ address: string }>;
      const balances = await Promise.all(vs.map(async (v) => BigInt((await getJson(`${execUrl}/api/v1/accounts/${v.address}`)).data.balance)));
      return balances.every((b) => b > genesisBalance) ? balances : undefined;
    }, 60_000);
    assert.is(rewarded.length, VALIDATORS);
    // The fee of the transfer went to its block's proposer.
    const block = (await getJson(`${execUrl}/api/v1/blocks/${finalTx.block.hash}`)).data;
    assert.is(finalTx.receipt.fee, String(21_000n * 10n ** 9n));
    assert.match(block.proposer, /^0x[0-9a-f]{40}$/);
  });
});

test.run();
