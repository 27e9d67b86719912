/**
 * Network end to end over libp2p, real processes on loopback: two producing nodes (execution +
 * beacon, two validators each) and one read-only follower (execution + beacon, no validators),
 * each layer on its own P2P port, bootstrapped from node 0 (the follower from both producers).
 *
 * - A transfer sent to the follower's REST is relayed over gossip and included by a producer.
 * - All three reach the same head and the same finalised checkpoint, with the same block hash
 *   and state root at every height up to the finalised one.
 * - `svc tx status --json` on the follower says Finalized.
 * - `/api/v1/p2p/peers` on every beacon lists its peers, all over the hybrid handshake.
 *
 * Deadlines come from the genesis slot and epoch lengths with wide margins (2-core machine).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { expectJsonOk, runCli } from '../helpers/cli.js';
import { getJson, waitFor } from '../helpers/network.js';
import { withP2pNet } from '../helpers/p2p-network.js';
import { HYBRID_NOISE_PROTOCOL } from '../../src/node/p2p/protocol-id.js';

const TO = '0x00000000000000000000000000000000000000aa';

test('2 producers × 2 validators + 1 follower: relay, inclusion, one head, one finality, Finalized on the follower, hybrid handshake', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const epochMs = net.epochMs;
    const p0 = await net.addNode('p0', [0, 1]);
    const p1 = await net.addNode('p1', [2, 3]);
    const f = await net.addNode('f', []);
    await net.startLayers(p0, []);
    await net.startLayers(p1, [p0]);
    await net.startLayers(f, [p0, p1]);
    // Everyone meshed before anyone proposes, so the first blocks already travel.
    await net.waitPeers([p0, p1, f], 2, 60_000);
    net.startValidators(p0);
    net.startValidators(p1);

    const first = await net.waitSameHead([p0, p1, f], 'a common head with blocks', (h) => h.index >= 2, 10 * epochMs + 30_000);
    assert.ok(first.slot >= 2);

    // --- A transfer submitted to the follower (which proposes nothing) reaches a producer's pool
    // over gossip and is included; the follower learns the block over gossip too.
    const hash = await net.sendTransfer(f, TO, 12_345n);
    const onFollower = await waitFor('the transfer in a block, seen by the follower', async () => {
      const s = (await getJson(`${f.execUrl}/api/v1/transactions/${hash}`)).data;
      return s.state === 'Confirmed' || s.state === 'Finalized' ? s : undefined;
    }, 6 * epochMs + 30_000);
    const block = await net.execBlock(p0, onFollower.block.number);
    assert.ok(block, `p0 has no block ${onFollower.block.number}`);
    const producerAddrs = new Set(((await getJson(`${p0.beaconUrl}/api/v1/validators`)).data.validators as Array<{ address: string }>).map((v) => v.address.toLowerCase()));
    assert.ok(producerAddrs.has(block.proposer.toLowerCase()), `proposer ${block.proposer} is a validator`);
    for (const n of [p0, p1]) {
      const s = await waitFor(`${n.execProc} to know the transfer's block`, async () => {
        const x = (await getJson(`${n.execUrl}/api/v1/transactions/${hash}`)).data;
        return x.state === 'Confirmed' || x.state === 'Finalized' ? x : undefined;
      }, 4 * epochMs);
      assert.is(s.block.hash, onFollower.block.hash, `${n.execProc} has the transfer in the same block`);
    }

    // --- One head and one finalised checkpoint everywhere, past the transfer's block.
    const common = await net.waitSameHead([p0, p1, f], 'the same head and finalised checkpoint (epoch ≥ 2) on all three', (h) => h.finalized.epoch >= 2, 12 * epochMs + 60_000);
    assert.ok(common.finalized.epoch >= 2);
    const finHeight = await waitFor('the transfer finalised on every execution', async () => {
      const h = await net.commonFinalizedHeight([p0, p1, f]);
      return h >= onFollower.block.number ? h : undefined;
    }, 8 * epochMs + 30_000);
    await net.assertSameChain([p0, p1, f], finHeight);

    // --- The CLI on the follower says Finalized.
    const status = expectJsonOk(await runCli(['tx', 'status', hash, '--execution-url', f.execUrl, '--json'], net.env));
    assert.is(status.state, 'Finalized', JSON.stringify(status));
    assert.is(status.block.hash, onFollower.block.hash);
    assert.is(status.receipt.status, 1);

    // --- Peers: each beacon lists the other two, every connection over the hybrid handshake.
    for (const n of [p0, p1, f]) {
      const peers = await net.beaconPeers(n);
      const others = [p0, p1, f].filter((x) => x !== n).map((x) => x.beaconPeerId);
      for (const id of others) assert.ok(peers.some((p) => p.peer_id === id), `${n.beaconProc} lists ${id}: ${JSON.stringify(peers)}`);
      for (const p of peers) {
        assert.is(p.handshake, HYBRID_NOISE_PROTOCOL, `${n.beaconProc}: peer ${p.peer_id} handshake`);
        assert.ok(p.direction === 'inbound' || p.direction === 'outbound');
        assert.ok(!Number.isNaN(Date.parse(p.connected_since)), `connected_since ${p.connected_since}`);
        assert.match(p.address, /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
      }
      assert.ok((await net.execPeerCount(n)) >= 2, `${n.execProc} /health peers`);
    }
    // Every validator's messages were accepted, and nothing was signed twice.
    assert.equal(net.misbehaviour(), []);
    assert.equal(net.conflictingSignatures(), []);
  });
});

test.run();
