/**
 * Partition and heal across hosts, with real processes in Linux network namespaces
 * (test/helpers/netns.ts): host A runs execution, beacon and validators 0-1; host B execution,
 * beacon and validators 2-3; host C a read-only follower. The hosts reach each other only through
 * a bridge; the test reaches each one on a separate management link.
 *
 * - Cut B off the bridge: A and C keep making and following blocks, but with 2 of 4 validators
 *   (below 2/3 of the stake) nothing is justified, so finality stays put for two whole epochs.
 * - Heal: the three converge on one chain and finality resumes past where it stalled.
 * - No validator signed conflicting messages (their logs and their slashing-protection exports),
 *   no beacon saw a slashable vote, and the follower holds the producers' state root at every
 *   finalised height.
 *
 * Skips with a message where namespaces cannot be made (not root, no iproute2).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type BeaconHead, waitFor } from '../helpers/network.js';
import { withNetnsLab } from '../helpers/netns.js';
import { withP2pNet } from '../helpers/p2p-network.js';

test('partition: B cut off stalls finality, A and C keep making blocks; healed, one chain and finality again', async () => {
  await withNetnsLab(['a', 'b', 'c'], async (lab) => {
    await withP2pNet({ validators: 4 }, async (net) => {
      const epochMs = net.epochMs;
      const a = await net.addNode('a', [0, 1], lab.placement('a'));
      const b = await net.addNode('b', [2, 3], lab.placement('b'));
      const c = await net.addNode('c', [], lab.placement('c'));
      await net.startLayers(a, []);
      await net.startLayers(b, [a]);
      await net.startLayers(c, [a, b]);
      await net.waitPeers([a, b, c], 2, 60_000);
      net.startValidators(a);
      net.startValidators(b);

      const before = await net.waitSameHead([a, b, c], 'one head and a finalised epoch on all three hosts', (h) => h.finalized.epoch >= 1, 12 * epochMs + 60_000);

      // --- Cut B off.
      await lab.cut('b');
      const cutEpoch = net.epochOf(net.slotNow());
      // Votes of the cut epoch sent before the cut may still justify it (and finalise the one
      // before): settle at the next epoch's start, then nothing may move for two whole epochs.
      await net.waitSlot((cutEpoch + 1) * net.slotsPerEpoch);
      const settled = await net.head(a);
      assert.ok(settled.finalized.epoch >= before.finalized.epoch, 'finality never goes back');
      const stallEnd = (cutEpoch + 3) * net.slotsPerEpoch;
      const samples: BeaconHead[] = [];
      const stalled = await waitFor('two epochs on A without finality, with new blocks', async () => {
        const h = await net.head(a);
        samples.push(h);
        return net.slotNow() > stallEnd && h.index > settled.index ? h : undefined;
      }, 3 * epochMs + 60_000);
      for (const h of samples) assert.is(h.finalized.epoch, settled.finalized.epoch, `finality moved on A with B cut off: ${JSON.stringify(h)}`);
      assert.ok(stalled.index > settled.index, 'blocks continue on A');
      // C follows A across the cut.
      await net.waitSameHead([a, c], 'C follows A while B is cut off', (h) => h.index >= stalled.index, 4 * epochMs + 30_000);
      const cHead = await net.head(c);
      assert.is(cHead.finalized.epoch, settled.finalized.epoch, 'finality stalled on C too');
      const bHead = await net.head(b);
      assert.is(bHead.finalized.epoch <= settled.finalized.epoch, true, `B alone cannot finalise: ${JSON.stringify(bHead)}`);
      process.stderr.write(`[partition] cut at epoch ${cutEpoch}: A ${settled.index}→${stalled.index}, finalised stayed at ${settled.finalized.epoch}; B alone at ${bHead.index}\n`);

      // --- Heal: one chain, and finality resumes.
      await lab.heal('b');
      const healed = await net.waitSameHead([a, b, c], 'one head and finality past the stall on all three hosts', (h) => h.finalized.epoch > settled.finalized.epoch, 12 * epochMs + 90_000);
      assert.ok(healed.justified.epoch > settled.justified.epoch);
      const fin = await waitFor('a common finalised height past the heal', async () => {
        const h = await net.commonFinalizedHeight([a, b, c]);
        return h >= stalled.index ? h : undefined;
      }, 8 * epochMs + 60_000);
      await net.assertSameChain([a, b, c], fin);

      // --- Nobody equivocated.
      assert.equal(net.conflictingSignatures(), []);
      assert.equal(net.misbehaviour().filter((l) => l.includes('slashable attestation')), []);
      await net.assertSlashingProtectionClean();
    });
  }, (reason) => process.stderr.write(`[partition] skipped: ${reason}\n`));
});

test.run();
