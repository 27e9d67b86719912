/** The shape of a multi-node devnet: validator placement, preferred ports, peer key seeds, who dials whom. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bootnodesOf, loopbackMultiaddr, peerKeySeed, preferredNodePorts, validatorNode, validatorsByNode } from '../../src/devnet/topology.js';
import { startGroups } from '../../src/devnet/plan.js';

test('validators are spread round-robin: validator i on node i mod K', () => {
  assert.equal(validatorsByNode([0, 1, 2, 3], 2), [[0, 2], [1, 3]]);
  assert.equal(validatorsByNode([0, 1, 2, 3, 4], 3), [[0, 3], [1, 4], [2]]);
  assert.equal(validatorsByNode([0, 1, 2, 3], 1), [[0, 1, 2, 3]]);
  assert.equal(validatorsByNode([0, 1], 4), [[0], [1], [], []]);
  assert.is(validatorNode(7, 3), 1);
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => validatorNode(0, bad), RangeError);
});

test('preferred ports: node 0 has the spec defaults; other nodes shift, and no two ports of 16 nodes coincide', () => {
  assert.equal(preferredNodePorts(0), { rest: 8546, rpc: 8545, beacon: 8080, beaconP2p: 9000, executionP2p: 9001 });
  assert.equal(preferredNodePorts(1), { rest: 8646, rpc: 8645, beacon: 8180, beaconP2p: 9002, executionP2p: 9003 });
  const all = Array.from({ length: 16 }, (_, i) => Object.values(preferredNodePorts(i))).flat();
  assert.is(new Set(all).size, all.length);
  for (const p of all) assert.ok(p > 1024 && p < 65536, String(p));
});

test('peer key seeds: 32 bytes, the same for the same inputs, different per node, layer and chain', () => {
  const g1 = new Uint8Array(32).fill(1);
  const g2 = new Uint8Array(32).fill(2);
  const s = peerKeySeed(g1, 0, 'beacon');
  assert.is(s.length, 32);
  assert.equal(peerKeySeed(g1, 0, 'beacon'), s);
  const seeds = [s, peerKeySeed(g1, 0, 'execution'), peerKeySeed(g1, 1, 'beacon'), peerKeySeed(g1, 1, 'execution'), peerKeySeed(g2, 0, 'beacon')];
  assert.is(new Set(seeds.map((x) => Buffer.from(x).toString('hex'))).size, seeds.length);
});

test('loopbackMultiaddr: /ip4/127.0.0.1/tcp/PORT/p2p/ID', () => {
  assert.is(loopbackMultiaddr(9000, '12D3KooWabc'), '/ip4/127.0.0.1/tcp/9000/p2p/12D3KooWabc');
});

test('bootnodes: node 0 dials everyone, node I every node before it; every pair is covered by one side', () => {
  const addrs = ['a0', 'a1', 'a2', 'a3'];
  assert.equal(bootnodesOf(0, addrs), ['a1', 'a2', 'a3']);
  assert.equal(bootnodesOf(1, addrs), ['a0']);
  assert.equal(bootnodesOf(3, addrs), ['a0', 'a1', 'a2']);
  assert.equal(bootnodesOf(0, ['a0']), [], 'a single node dials nobody');
  for (let i = 0; i < addrs.length; i++) {
    assert.ok(!bootnodesOf(i, addrs).includes(addrs[i]!), 'never itself');
    for (let j = 0; j < addrs.length; j++) {
      if (i === j) continue;
      assert.ok(bootnodesOf(i, addrs).includes(addrs[j]!) || bootnodesOf(j, addrs).includes(addrs[i]!), `${i}-${j} not covered`);
    }
    if (i > 0) assert.ok(bootnodesOf(i, addrs).includes('a0'), 'node 0 is everyone\'s bootnode');
  }
});

test('start order: execution 0 alone; beacon 0 with its validators and the other producers\' executions; followers last', () => {
  const nodes = [{ role: 'producer' as const }, { role: 'producer' as const }, { role: 'follower' as const }];
  const exec = ['e0', 'e1', 'e2'];
  const beacons = [['b0', 'v0', 'v2'], ['b1', 'v1', 'v3'], ['b2']];
  assert.equal(startGroups(nodes, exec, beacons), [['e0'], ['b0', 'v0', 'v2', 'e1'], ['b1', 'v1', 'v3', 'e2'], ['b2']]);
  // One node: as before several nodes existed.
  assert.equal(startGroups([{ role: 'producer' }], ['e0'], [['b0', 'v0']]), [['e0'], ['b0', 'v0']]);
  // A producer and a follower: no empty group.
  assert.equal(startGroups([{ role: 'producer' }, { role: 'follower' }], ['e0', 'e1'], [['b0', 'v0'], ['b1']]), [['e0'], ['b0', 'v0'], ['e1'], ['b1']]);
});

test.run();
