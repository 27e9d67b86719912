/**
 * Catching up over libp2p, real processes on loopback: two producing nodes (two validators each).
 *
 * 1. Late join: a follower started three epochs after the first blocks has none of them and can
 *    only get them by range sync (gossip carries new blocks only); it reaches the producers'
 *    head and holds their block hash and state root at every finalised height.
 * 2. Restart: producer 1's execution and beacon are SIGKILLed (its validators keep running and
 *    retry), stay down for two epochs while producer 0 goes on alone, and are restarted on their
 *    data directories and ports: the same peer ids come back (the keys are persisted), they catch
 *    up to the network head, finality resumes, and the chains agree block by block.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getJson, waitFor } from '../helpers/network.js';
import { startProducers, withP2pNet } from '../helpers/p2p-network.js';

test('late join: a follower started three epochs late catches up by range sync', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const epochMs = net.epochMs;
    const [p0, p1] = await startProducers(net);
    const first = await net.waitSameHead([p0, p1], 'the producers agree on a head with blocks', (h) => h.index >= 1, 10 * epochMs + 30_000);
    // Three whole epochs after the first common head, by the chain's clock.
    await net.waitSlot(first.slot + 3 * net.slotsPerEpoch);
    const before = await net.head(p0);
    assert.ok(before.index >= 3, `the producers made blocks while the follower was away (head ${JSON.stringify(before)})`);

    const f = await net.addNode('f', []);
    await net.startLayers(f, [p0, p1]);
    // Its own chain starts at genesis: everything up to `before` must come from range sync.
    const caught = await net.waitSameHead([p0, p1, f], 'the follower at the producers\' head', (h) => h.index >= before.index, 6 * epochMs + 60_000);
    assert.ok(caught.index >= before.index);
    // The sync loop ends after its last (empty) range answer, a moment after the head matches.
    await waitFor('the follower to report sync finished', async () => {
      const s = (await getJson(`${f.beaconUrl}/beacon/v1/node/syncing`)).data;
      return s.is_syncing === false ? true : undefined;
    }, 2 * epochMs + 30_000);
    const synced = await net.metric(f.beaconUrl, 'service_beacon_sync_blocks_imported_total');
    assert.ok(synced >= before.index, `the ${before.index} blocks made before the join came by range sync (${synced} imported by sync)`);

    // Same blocks and state roots up to a height every node has finalised past the join.
    const fin = await waitFor('a common finalised height past the late join', async () => {
      const h = await net.commonFinalizedHeight([p0, p1, f]);
      return h >= before.index ? h : undefined;
    }, 8 * epochMs + 60_000);
    await net.assertSameChain([p0, p1, f], fin);
    // And it keeps following gossip afterwards.
    await net.waitSameHead([p0, p1, f], 'the follower still following', (h) => h.index > caught.index, 4 * epochMs + 30_000);
    assert.equal(net.misbehaviour(), []);
  });
});

test('restart: a producer pair SIGKILLed and restarted keeps its peer ids and catches up', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const epochMs = net.epochMs;
    const [p0, p1] = await startProducers(net);
    const ids = { exec: p1.execPeerId, beacon: p1.beaconPeerId };
    assert.ok(ids.exec && ids.beacon, 'peer ids in the listen addresses');
    const start = await net.waitSameHead([p0, p1], 'a finalised epoch on both producers', (h) => h.finalized.epoch >= 1, 12 * epochMs + 60_000);

    await net.killLayers(p1);
    const killSlot = net.slotNow();
    // p0's two validators keep proposing their slots; p1 stays down for two whole epochs and
    // until p0 has made a block alone (half the slots are p1's: a short epoch may have none of p0's).
    await net.waitSlot(killSlot + 2 * net.slotsPerEpoch);
    const alone = await waitFor('p0 to make a block alone', async () => {
      const h = await net.head(p0);
      return h.index > start.index ? h : undefined;
    }, 8 * epochMs + 30_000);

    await net.startLayers(p1, [p0]);
    assert.is(p1.execPeerId, ids.exec, 'execution keeps its peer id across the restart');
    assert.is(p1.beaconPeerId, ids.beacon, 'the beacon keeps its peer id across the restart');
    const synced = await waitFor('p1 to import blocks by range sync', async () => {
      const n = await net.metric(p1.beaconUrl, 'service_beacon_sync_blocks_imported_total');
      return n > 0 ? n : undefined;
    }, 4 * epochMs + 30_000);
    assert.ok(synced > 0);
    const back = await net.waitSameHead([p0, p1], 'p1 back at p0\'s head, finality past the restart', (h) => h.index > alone.index && h.finalized.epoch > start.finalized.epoch, 12 * epochMs + 60_000);
    const fin = await waitFor('a common finalised height past the downtime', async () => {
      const h = await net.commonFinalizedHeight([p0, p1]);
      return h >= alone.index ? h : undefined;
    }, 8 * epochMs + 60_000);
    await net.assertSameChain([p0, p1], fin);
    assert.ok(back.finalized.epoch > start.finalized.epoch);
    assert.equal(net.conflictingSignatures(), []);
    await net.assertSlashingProtectionClean();
  });
});

test.run();
