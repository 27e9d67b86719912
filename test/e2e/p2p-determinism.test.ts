/**
 * Consensus state is a function of the chain, checked over P2P with real processes: two
 * producing nodes (two validators each) run five epochs, paying proposer and attester rewards;
 * then a fresh node (execution + beacon, no validators) syncs from genesis over libp2p. Its
 * execution must hold the producers' block hash and state root at every height up to the common
 * finalised one, and the same validator balances (every reward credit included) at a common head.
 *
 * (test/e2e/determinism.test.ts of the consensus work feeds blocks over the engine API; this one goes through
 * range sync and gossip, as a node joining a week later would.)
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getJson, waitFor } from '../helpers/network.js';
import { type NetNode, type P2pNet, startProducers, withP2pNet } from '../helpers/p2p-network.js';

/** Validator balances read at one head hash of `node` (retried until the head holds still across the reads). */
async function balancesAtHead(net: P2pNet, node: NetNode, addresses: readonly string[]): Promise<{ head: string; balances: string[] }> {
  return waitFor(`${node.execProc} balances at a steady head`, async () => {
    const h1 = (await net.execBlock(node, 'latest'))!.hash;
    const balances = await Promise.all(addresses.map(async (a) => String((await getJson(`${node.execUrl}/api/v1/accounts/${a}`)).data.balance)));
    const h2 = (await net.execBlock(node, 'latest'))!.hash;
    return h1 === h2 ? { head: h1, balances } : undefined;
  }, 30_000, 50);
}

test('a node syncing from genesis after 5 epochs has the producers\' state root at every height, rewards included', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const epochMs = net.epochMs;
    const [p0, p1] = await startProducers(net);

    // Five whole epochs of chain, with rewards paid for the first ones.
    const first = await net.waitSameHead([p0, p1], 'the producers agree on a head with blocks', (h) => h.index >= 1, 10 * epochMs + 30_000);
    const fiveEpochsOn = first.slot + 5 * net.slotsPerEpoch;
    await net.waitSlot(fiveEpochsOn);
    const producersAt = await net.waitSameHead([p0, p1], 'a finalised epoch after five epochs of blocks', (h) => h.finalized.epoch >= 1 && h.slot >= fiveEpochsOn - net.slotsPerEpoch, 6 * epochMs + 60_000);

    const validators = ((await getJson(`${p0.beaconUrl}/api/v1/validators`)).data.validators as Array<{ address: string }>).map((v) => v.address);
    const genesisBalance = BigInt(net.genesis.alloc.find((a: { address: string }) => a.address.toLowerCase() === validators[0]!.toLowerCase())?.balance ?? '0');
    const paid = await balancesAtHead(net, p0, validators);
    assert.ok(paid.balances.some((b) => BigInt(b) > genesisBalance), `rewards were credited before the late node joins: ${paid.balances.join(', ')}`);

    const late = await net.addNode('late', []);
    await net.startLayers(late, [p0, p1]);
    await net.waitSameHead([p0, p1, late], 'the late node at the producers\' head', (h) => h.index >= producersAt.index, 8 * epochMs + 60_000);
    const fin = await waitFor('a common finalised height covering the five epochs', async () => {
      const h = await net.commonFinalizedHeight([p0, p1, late]);
      return h >= producersAt.index ? h : undefined;
    }, 8 * epochMs + 60_000);
    const compared = await net.assertSameChain([p0, p1, late], fin);
    process.stderr.write(`[determinism] ${compared} heights compared, finalised height ${fin}\n`);

    // Same balances at one head hash: every reward credit reached the late node's state too.
    const same = await waitFor('the producers and the late node at one head with the same balances', async () => {
      const [a, b] = await Promise.all([balancesAtHead(net, p0, validators), balancesAtHead(net, late, validators)]);
      return a.head === b.head ? { a, b } : undefined;
    }, 4 * epochMs + 30_000, 100);
    assert.equal(same.b.balances, same.a.balances);
    assert.ok(same.a.balances.every((b) => BigInt(b) > genesisBalance), `every validator was rewarded: ${same.a.balances.join(', ')}`);
  });
});

test.run();
