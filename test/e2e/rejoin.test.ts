/**
 * An honest minority rejoins after a long partition, with real processes in Linux network
 * namespaces (test/helpers/netns.ts): hosts a, b and c run execution, beacon and 2 of 6
 * validators each.
 *
 * - Cut c off the bridge until a and b (4 of 6, above 2/3 of the stake) have finalised at least
 *   4 epochs past the fork; c alone keeps making blocks on its own branch, which never finalises.
 * - Heal: within 2 epochs of being in contact again (the heal, or c's redial of its bootnodes
 *   when the cut dropped its connections: that wait is the redial backoff's, and reported) c
 *   holds the majority's head and finalised checkpoint; its branch is abandoned (its beacon
 *   serves the majority's blocks by slot, its execution the same blocks and state roots), the
 *   majority's chain range-synced and followed.
 * - Nobody was disconnected or banned for the blocks it served (c's branch forks below the
 *   majority's finalised checkpoint: a reason to ignore, not to penalise), and no validator signed
 *   conflicting messages across the switch.
 *
 * Skips with a message where namespaces cannot be made (not root, no iproute2).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type BeaconHead, getJson, waitFor } from '../helpers/network.js';
import { withNetnsLab } from '../helpers/netns.js';
import { type NetNode, type P2pNet, withP2pNet } from '../helpers/p2p-network.js';

/** Log lines of a beacon that say it dropped or penalised a peer for what it served. */
function peerFaults(net: P2pNet, nodes: readonly NetNode[]): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    for (const l of net.log(n.beaconProc, { allRuns: true })) {
      const reason = typeof l.reason === 'string' ? l.reason : '';
      if (l.msg === 'peer served invalid blocks; disconnected' || l.msg === 'p2p peer banned' || (l.msg === 'p2p peer disconnected' && reason.startsWith('sync_'))) {
        out.push(`${n.beaconProc}: ${JSON.stringify(l)}`);
      }
    }
  }
  return out;
}

test('rejoin: a minority cut off past 4 finalised epochs takes the majority chain within 2 epochs of the heal, nobody penalised', async () => {
  await withNetnsLab(['a', 'b', 'c'], async (lab) => {
    await withP2pNet({ validators: 6 }, async (net) => {
      const { epochMs, slotsPerEpoch } = net;
      const a = await net.addNode('a', [0, 1], lab.placement('a'));
      const b = await net.addNode('b', [2, 3], lab.placement('b'));
      const c = await net.addNode('c', [4, 5], lab.placement('c'));
      const all = [a, b, c];
      await net.startLayers(a, []);
      await net.startLayers(b, [a]);
      await net.startLayers(c, [a, b]);
      await net.waitPeers(all, 2, 60_000);
      for (const n of all) net.startValidators(n);
      await net.waitSameHead(all, 'one head and a finalised epoch on all three hosts', (h) => h.finalized.epoch >= 1, 12 * epochMs + 60_000);

      // --- Cut c off until the majority has finalised 4 epochs past the fork.
      await lab.cut('c');
      const cutAt = Date.now();
      const forkEpoch = net.epochOf(net.slotNow());
      const majority = await waitFor('a and b to finalise 4 epochs past the fork', async () => {
        const [ha, hb] = await Promise.all([net.head(a), net.head(b)]);
        return ha.finalized.epoch >= forkEpoch + 4 && hb.finalized.epoch >= forkEpoch + 4 ? ha : undefined;
      }, 10 * epochMs + 60_000);
      const minority = await net.head(c);
      assert.ok(minority.finalized.epoch < forkEpoch + 1, `c alone cannot finalise: ${JSON.stringify(minority)}`);
      assert.ok(minority.slot > forkEpoch * slotsPerEpoch, `c kept making blocks on its branch: ${JSON.stringify(minority)}`);

      // --- Heal: c takes the majority's head and finalised checkpoint within 2 epochs of the heal.
      // Libp2p drops connections whose pings fail during the cut; the address book redials them
      // with a backoff capped at one slot for recently seen peers (p2p/address-book.ts), so the
      // new connection is part of the 2 epochs. Its time is reported separately.
      await lab.heal('c');
      const healedAt = Date.now();
      let reconnectedAt: number | undefined;
      let watching = true;
      const watcher = (async () => {
        while (watching && reconnectedAt === undefined) {
          const peers = await net.beaconPeers(c).catch(() => []);
          if (peers.some((p) => Date.parse(p.connected_since) > cutAt)) reconnectedAt = Date.now();
          else await new Promise((r) => setTimeout(r, 200));
        }
      })();
      let joined: BeaconHead;
      try {
        joined = await net.waitSameHead(all, 'c on the majority head and finalised checkpoint', (h) => h.finalized.epoch >= majority.finalized.epoch, 6 * epochMs + 30_000);
      } finally {
        watching = false;
        await watcher;
        process.stderr.write(`[rejoin] fork at epoch ${forkEpoch}; majority finalised ${majority.finalized.epoch} at the heal; c was at ${minority.index}@${minority.slot}, finalised ${minority.finalized.epoch}\n`);
      }
      const joinedAt = Date.now();
      const slotOf = (ms: number) => Math.floor((ms - net.genesis.genesis_time * 1000) / net.slotMs);
      const slots = slotOf(joinedAt) - slotOf(healedAt);
      process.stderr.write(`[rejoin] c joined at ${joined.index}@${joined.slot}, finalised ${joined.finalized.epoch}: ${joinedAt - healedAt} ms after the heal, ${reconnectedAt === undefined ? 'on a connection that survived the cut' : `${reconnectedAt - healedAt} ms to a new connection, then`} ${slots} slots from the heal\n`);
      assert.ok(slots <= 2 * slotsPerEpoch, `c took ${slots} slots to rejoin after the heal, more than 2 epochs`);

      // The three keep one chain afterwards (c follows gossip again).
      await net.waitSameHead(all, 'one head past the rejoin', (h) => h.slot > joined.slot, 4 * epochMs + 30_000);
      // c dropped its branch: by slot, its beacon serves the majority's blocks over the partition,
      // and its execution holds the same blocks and state roots up to the common finalised height.
      const rootAt = async (n: NetNode, slot: number): Promise<string | null> => ((await getJson(`${n.beaconUrl}/api/v1/beacon/blocks/${slot}`)).data?.root as string | undefined) ?? null;
      for (let slot = forkEpoch * slotsPerEpoch; slot <= minority.slot; slot++) {
        const [ra, rc] = await Promise.all([rootAt(a, slot), rootAt(c, slot)]);
        assert.is(rc, ra, `slot ${slot}: c's beacon serves ${rc}, a's ${ra}`);
      }
      await net.assertSameChain(all, await net.commonFinalizedHeight(all));

      // --- Nobody was penalised for its blocks; nobody equivocated.
      assert.equal(peerFaults(net, all), []);
      assert.equal(net.conflictingSignatures(), []);
      assert.equal(net.misbehaviour(), []);
      await net.assertSlashingProtectionClean();
    });
  }, (reason) => process.stderr.write(`[rejoin] skipped: ${reason}\n`));
});

test.run();
