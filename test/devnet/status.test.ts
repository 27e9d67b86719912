/** What `svc devnet status` counts as a problem of the nodes, from hand-built probes. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeProblems } from '../../src/devnet/status.js';
import type { NodeProbe } from '../../src/devnet/probe.js';
import type { HealthView } from '../../src/api/execution.js';
import { sampleManifest } from './fixture.js';

/** A node that answers everything, healthy, with `peers` on both hosts. */
function probe(peers: number): NodeProbe {
  const cp = { epoch: 1, root: '0x' + '11'.repeat(32) };
  const execution: HealthView = { status: 'healthy', layer: 'execution', latest_block: 5, peers, chain_id: 'svc-devnet', head_hash: '0x' + '22'.repeat(32), finalized_block: 2, mempool: 0, mempool_pending: 0, mempool_queued: 0 };
  return {
    head: { root: '0x' + '33'.repeat(32), slot: 6, index: 5, justified: cp, finalized: cp, proposer_dependent_roots: [{ epoch: 1, root: '0x' + '44'.repeat(32) }, { epoch: 2, root: '0x' + '55'.repeat(32) }] },
    beaconHealth: { status: 'healthy', head_slot: 6, current_slot: 6 },
    beaconPeers: peers,
    execution,
    errors: [],
  };
}

/** The sample manifest with `count` nodes. */
function manifest(count: number, p2p = true) {
  const m = sampleManifest('/nowhere');
  m.p2p = p2p;
  m.nodes = Array.from({ length: count }, (_, i) => ({ ...structuredClone(m.nodes[0]!), index: i, role: i === 0 ? ('producer' as const) : ('follower' as const) }));
  return m;
}

test('a healthy network has no problems', () => {
  assert.equal(nodeProblems(manifest(3), [probe(2), probe(2), probe(2)]), []);
});

test('one node alone: 0 peers is no problem, and its problems keep the plain layer names', () => {
  assert.equal(nodeProblems(manifest(1), [probe(0)]), []);
  const down = { ...probe(0), head: null, execution: null, errors: ['beacon: cannot reach the beacon node', 'execution: cannot reach'] };
  assert.equal(nodeProblems(manifest(1), [down]), ['beacon: cannot reach the beacon node', 'execution: cannot reach']);
});

test('several nodes: a host without peers, an unreachable layer, an unhealthy beacon, each named by node', () => {
  const lonely = { ...probe(0) };
  const unhealthy: NodeProbe = { ...probe(1), beaconHealth: { status: 'unhealthy', head_slot: 1, current_slot: 9, reason: 'EXECUTION_UNREACHABLE', message: 'no answer' } };
  const gone: NodeProbe = { ...probe(1), head: null, beaconPeers: null, errors: ['beacon: cannot reach'] };
  assert.equal(nodeProblems(manifest(3), [lonely, unhealthy, gone]), [
    'node 0 beacon has no P2P peers',
    'node 0 execution has no P2P peers',
    'node 1 beacon unhealthy (EXECUTION_UNREACHABLE): no answer',
    'node 2 beacon: cannot reach',
  ]);
});

test('without P2P, peers are not judged', () => {
  assert.equal(nodeProblems(manifest(2, false), [probe(0), probe(0)]), []);
});

test.run();
