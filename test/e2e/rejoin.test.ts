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
 * - c's execution holds the majority's blocks and state up to the head it joined at (it rebuilt
 *   what dropping its branch back to the common finalised ancestor needed; no PARENT_STATE_PRUNED
 *   refusal stayed in the way).
 * - From the slot after c is in contact again, c's validators vote and propose only on the
 *   majority's chain: every vote they sent names a canonical head and target, every block a
 *   canonical parent (the beacon refuses them attestation data with BEACON_SYNCING while a peer's
 *   finalised checkpoint is not on its head chain). Their slashing-protection databases still hold
 *   what they signed on the abandoned branch and refuse a double or surround vote against it.
 * - Nobody was disconnected or banned for the blocks it served (c's branch forks below the
 *   majority's finalised checkpoint: a reason to ignore, not to penalise), and no validator signed
 *   conflicting messages across the switch.
 *
 * Skips with a message where namespaces cannot be made (not root, no iproute2).
 */
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { slashingDbDir } from '../../src/node/validator/data-dir.js';
import { SlashingProtectionDb, SlashingProtectionError } from '../../src/node/validator/slashing/protection.js';
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
      const rootAt = async (n: NetNode, slot: number): Promise<string | null> => ((await getJson(`${n.beaconUrl}/api/v1/beacon/blocks/${slot}`)).data?.root as string | undefined) ?? null;
      // The cut also lasts until c has a block of its own: c's 2 of 6 validators may draw no
      // proposal for several slots, and a branch c never built would leave nothing to abandon.
      const majority = await waitFor('a and b to finalise 4 epochs past the fork, and c to build its own block', async () => {
        const [ha, hb, hc] = await Promise.all([net.head(a), net.head(b), net.head(c)]);
        if (ha.finalized.epoch < forkEpoch + 4 || hb.finalized.epoch < forkEpoch + 4) return undefined;
        return hc.slot > forkEpoch * slotsPerEpoch && (await rootAt(a, hc.slot)) !== hc.root ? ha : undefined;
      }, 14 * epochMs + 60_000);
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
      for (let slot = forkEpoch * slotsPerEpoch; slot <= minority.slot; slot++) {
        const [ra, rc] = await Promise.all([rootAt(a, slot), rootAt(c, slot)]);
        assert.is(rc, ra, `slot ${slot}: c's beacon serves ${rc}, a's ${ra}`);
      }
      await net.assertSameChain(all, await net.commonFinalizedHeight(all));
      // Execution too took the majority's chain, up to the head c joined at (its branch's blocks
      // dropped, the state the majority's blocks needed rebuilt from the common finalised ancestor).
      const [ea, ec] = await Promise.all([net.execBlock(a, joined.index), net.execBlock(c, joined.index)]);
      assert.ok(ea && ec, `block ${joined.index} on a and c`);
      assert.is(ec.hash, ea.hash, `c's execution at ${joined.index}`);
      assert.is(ec.state_root, ea.state_root, `c's execution state root at ${joined.index}`);
      const pruned = net.log(c.beaconProc, { allRuns: true }).filter((l) => JSON.stringify(l).includes('PARENT_STATE_PRUNED')).length;
      process.stderr.write(`[rejoin] c's beacon logged PARENT_STATE_PRUNED ${pruned} times on the way\n`);

      // --- c's validators voted and proposed only on the majority's chain once in contact again.
      // Contact is the new connection (or the heal); its status exchange tells c of the majority's
      // finality within a round trip. The next slot is left out as that round trip's margin.
      const firstChecked = slotOf(reconnectedAt ?? healedAt) + 2;
      // One vote of each of c's validators past that point (one per epoch each) to check.
      await waitFor('a vote of each of c\'s validators after the rejoin', async () => (c.validators.every((i) => net.log(c.validatorProc(i)).some((l) => l.msg === 'attestation sent' && (l.slot as number) >= firstChecked)) ? true : undefined), 3 * epochMs);
      const finalHead = await net.head(a);
      const canonical = new Set<string>();
      for (let slot = (forkEpoch - 1) * slotsPerEpoch; slot <= finalHead.slot; slot++) {
        const r = await rootAt(a, slot);
        if (r) canonical.add(r);
      }
      const sideVotes: Array<{ proc: string; source: number; target: number }> = [];
      let checked = 0;
      for (const i of c.validators) {
        for (const l of net.log(c.validatorProc(i), { allRuns: true })) {
          const slot = l.slot as number;
          if (l.msg === 'attestation sent') {
            const onMajority = canonical.has(l.head as string) && canonical.has(l.target_root as string);
            if (slot >= firstChecked) {
              checked++;
              assert.ok(onMajority, `${c.validatorProc(i)} voted off the majority's chain at slot ${slot} (contact at slot ${firstChecked - 2}): ${JSON.stringify(l)}`);
            } else if (!onMajority && slot > forkEpoch * slotsPerEpoch) sideVotes.push({ proc: c.validatorProc(i), source: l.source as number, target: l.target as number });
          } else if (l.msg === 'block proposed' && slot >= firstChecked) {
            assert.ok(canonical.has(l.parent as string), `${c.validatorProc(i)} built on an abandoned block at slot ${slot}: ${JSON.stringify(l)}`);
          }
        }
      }
      const paused = c.validators.flatMap((i) => net.log(c.validatorProc(i), { allRuns: true }).filter((l) => l.code === 'BEACON_SYNCING')).length;
      process.stderr.write(`[rejoin] c's validators: ${sideVotes.length} votes on their own branch before contact, ${checked} after it all on the majority's chain; ${paused} duties skipped while c's beacon synced\n`);
      assert.ok(checked >= c.validators.length, 'each of c\'s validators voted after the rejoin');
      assert.ok(sideVotes.length > 0, 'c\'s validators voted on their own branch during the cut');

      // --- Nobody was penalised for its blocks; nobody equivocated.
      assert.equal(peerFaults(net, all), []);
      assert.equal(net.conflictingSignatures(), []);
      assert.equal(net.misbehaviour(), []);
      await net.assertSlashingProtectionClean();
      // What c's validators signed on the abandoned branch is still on record after the switch:
      // a second vote for its target, or one surrounding it, is refused.
      const last = new Map<string, { source: number; target: number }>();
      for (const v of sideVotes) last.set(v.proc, v);
      for (const i of c.validators) {
        const vote = last.get(c.validatorProc(i));
        if (!vote) continue;
        const sp = await SlashingProtectionDb.open({ dir: slashingDbDir(join(c.dataDir, `validator-${i}`)) });
        try {
          // Only the key is read from the export: its metadata root does not matter here.
          const [rec] = (await sp.exportInterchange('0x' + '00'.repeat(32))).data;
          assert.ok(rec, `${c.validatorProc(i)}: a record in its slashing protection`);
          for (const [s, t, what] of [[vote.source, vote.target, 'double'], [Math.max(0, vote.source - 1), vote.target + 1, 'surround']] as const) {
            try {
              await sp.checkAndRecordAttestation(rec.pubkey, s, t, '0x' + 'ee'.repeat(32));
              assert.unreachable(`${c.validatorProc(i)}: a ${what} vote (${s} → ${t}) against its abandoned-branch vote ${vote.source} → ${vote.target} was accepted`);
            } catch (err) {
              if (!(err instanceof SlashingProtectionError)) throw err;
            }
          }
        } finally {
          await sp.close();
        }
      }
    });
  }, (reason) => process.stderr.write(`[rejoin] skipped: ${reason}\n`));
});

test.run();
