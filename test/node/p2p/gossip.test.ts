/** Gossip between real hosts: relay after accept, reject penalises, ignore is not relayed, duplicates, oversize. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Topics, type GossipVerdict } from '../../../src/node/p2p/types.js';
import { multiaddr } from '@multiformats/multiaddr';
import { encodeFrame } from '../../../src/node/p2p/framing.js';
import { FairQueue, PenaltyBook, SeenIds } from '../../../src/node/p2p/gossip.js';
import { addrOf, metricValue, rawNode, until, withHosts, type TestHost } from './fixture.js';

const MAX = 64 * 1024;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Starts A and C, then B dialling both: the line A - B - C. */
async function line(start: Parameters<Parameters<typeof withHosts>[0]>[0]): Promise<[TestHost, TestHost, TestHost]> {
  // A peer target of one keeps the ends from finding each other through B's peer exchange.
  const a = await start({ maxPeers: 1 });
  const c = await start({ maxPeers: 1 });
  const b = await start({ bootnodes: [addrOf(a), addrOf(c)] });
  await until('B connected to A and C', () => b.host.peerCount() === 2 && a.host.peerCount() === 1 && c.host.peerCount() === 1);
  return [a, b, c];
}

/** Publishes fresh payloads from `from` until `arrived` holds (the mesh forms on gossipsub's heartbeat). */
async function publishUntil(from: TestHost, topic: (typeof Topics)[keyof typeof Topics], prefix: string, arrived: () => boolean): Promise<void> {
  let n = 0;
  await until(`${prefix} delivered`, async () => {
    if (arrived()) return true;
    await from.host.publish(topic, enc(`${prefix}-${n++}`));
    return false;
  }, 20_000, 250);
}

test('a message published on A reaches C through B, relayed only after each validator accepts', async () => {
  await withHosts(async (start) => {
    const [a, b, c] = await line(start);
    const seen: Record<string, string[]> = { a: [], b: [], c: [] };
    const accept = (name: string) => async (data: Uint8Array, from: string): Promise<GossipVerdict> => {
      seen[name]!.push(`${dec(data)}<${from}`);
      return 'accept';
    };
    a.host.subscribe(Topics.txs, accept('a'), { maxBytes: MAX });
    b.host.subscribe(Topics.txs, accept('b'), { maxBytes: MAX });
    c.host.subscribe(Topics.txs, accept('c'), { maxBytes: MAX });
    await publishUntil(a, Topics.txs, 'hello', () => seen.c!.length > 0);
    const [first] = seen.c!;
    const payload = first!.split('<')[0]!;
    assert.ok(first!.endsWith(`<${b.host.peerId}`), 'C got it from B, the only path');
    assert.ok(seen.b!.includes(`${payload}<${a.host.peerId}`), 'B validated it (from A) before C saw it');
    assert.equal(seen.a, [], "a publisher's own message is not validated back to it");
    assert.ok((await metricValue(c.registry, 'service_p2p_messages_accepted_total', { topic: Topics.txs })) >= 1);
    assert.ok((await metricValue(a.registry, 'service_p2p_messages_sent_total', { topic: Topics.txs, layer: 'beacon' })) >= 1);
    assert.ok((await metricValue(b.registry, 'service_p2p_messages_received_total', { topic: Topics.txs })) >= 1);
  });
});


test('an ignored message is not relayed; an accepted one after it is', async () => {
  await withHosts(async (start) => {
    const [a, b, c] = await line(start);
    const atC: string[] = [];
    const bDone: string[] = [];
    a.host.subscribe(Topics.attestations, async () => 'accept', { maxBytes: MAX });
    b.host.subscribe(Topics.attestations, async (data) => {
      const text = dec(data);
      bDone.push(text);
      return text.startsWith('skip') ? 'ignore' : 'accept';
    }, { maxBytes: MAX });
    c.host.subscribe(Topics.attestations, async (data) => {
      atC.push(dec(data));
      return 'accept';
    }, { maxBytes: MAX });
    await publishUntil(a, Topics.attestations, 'warm', () => atC.length > 0);
    await a.host.publish(Topics.attestations, enc('skip-me'));
    await until('B validated skip-me', () => bDone.includes('skip-me'));
    await a.host.publish(Topics.attestations, enc('after-skip'));
    // B relays to C over one stream in validation order: once after-skip is at C, skip-me would be too.
    await until('after-skip at C', () => atC.includes('after-skip'));
    assert.not.ok(atC.includes('skip-me'), 'B did not relay what it ignored');
    assert.ok((await metricValue(b.registry, 'service_p2p_messages_ignored_total', { topic: Topics.attestations, reason: 'layer' })) >= 1);
    assert.is(await metricValue(b.registry, 'service_p2p_peer_penalties_total'), 0, 'ignore costs the sender nothing');
  });
});

test('the same payload from two peers is validated once and counted as a duplicate', async () => {
  await withHosts(async (start) => {
    const [a, b, c] = await line(start);
    const atB: string[] = [];
    // Only B subscribes: A and C publish to it directly and never relay to each other.
    b.host.subscribe(Topics.txs, async (data) => {
      atB.push(dec(data));
      return 'accept';
    }, { maxBytes: MAX });
    await publishUntil(a, Topics.txs, 'warm-a', () => atB.some((m) => m.startsWith('warm-a')));
    await publishUntil(c, Topics.txs, 'warm-c', () => atB.some((m) => m.startsWith('warm-c')));
    const before = await metricValue(b.registry, 'service_p2p_messages_ignored_total', { topic: Topics.txs, reason: 'duplicate' });
    assert.is(await a.host.publish(Topics.txs, enc('same-bytes')), 1);
    await until('A copy validated', () => atB.includes('same-bytes'));
    assert.is(await c.host.publish(Topics.txs, enc('same-bytes')), 1, 'C sends its copy');
    await c.host.publish(Topics.txs, enc('marker'));
    await until('marker validated (C copy arrived before it)', () => atB.includes('marker'));
    assert.is(atB.filter((m) => m === 'same-bytes').length, 1, 'validated once');
    assert.is((await metricValue(b.registry, 'service_p2p_messages_ignored_total', { topic: Topics.txs, reason: 'duplicate' })) - before, 1);
  });
});

test('an oversized message is rejected before validation, counted and penalised', async () => {
  await withHosts(async (start) => {
    const a = await start();
    const b = await start({ bootnodes: [addrOf(a)] });
    const atB: number[] = [];
    b.host.subscribe(Topics.blocks, async (data) => {
      atB.push(data.length);
      return 'accept';
    }, { maxBytes: 1000 });
    await publishUntil(a, Topics.blocks, 'small', () => atB.length > 0);
    await a.host.publish(Topics.blocks, new Uint8Array(1001).fill(7));
    await until('oversize counted', async () => (await metricValue(b.registry, 'service_p2p_messages_rejected_total', { topic: Topics.blocks, reason: 'oversize' })) === 1);
    assert.ok(atB.every((n) => n <= 1000), 'the validator never saw it');
    assert.is(await metricValue(b.registry, 'service_p2p_peer_penalties_total', { reason: 'gossip_oversize' }), 1);
  });
});

test('repeated rejects penalise the sender until it is disconnected and refused', async () => {
  await withHosts(async (start) => {
    const a = await start();
    const b = await start({ bootnodes: [addrOf(a)] });
    let validated = 0;
    b.host.subscribe(Topics.blocks, async () => {
      validated++;
      return 'reject';
    }, { maxBytes: MAX });
    let n = 0;
    await until('A disconnected by B', async () => {
      if (b.host.peerCount() === 0 && validated > 0) return true;
      await a.host.publish(Topics.blocks, enc(`bad-${n++}`));
      return false;
    }, 30_000, 100);
    assert.ok((await metricValue(b.registry, 'service_p2p_messages_rejected_total', { topic: Topics.blocks, reason: 'invalid' })) >= 1);
    assert.ok((await metricValue(b.registry, 'service_p2p_peer_penalties_total', { reason: 'gossip_invalid' })) >= 1);
    assert.ok((await metricValue(b.registry, 'service_p2p_peer_disconnects_total')) >= 1);
    // A comes back under the same identity and dials B: refused while the ban lasts.
    await a.host.stop();
    const a2 = await start({ dataDir: a.dataDir, bootnodes: [addrOf(b)] });
    assert.is(a2.host.peerId, a.host.peerId);
    // The handshake completes on A2's side; B's connection gater then refuses the connection.
    await until('A2 dialled B', async () => (await metricValue(a2.registry, 'service_p2p_bootnode_dials_total')) >= 1);
    await until('A2 left without a connection', () => a2.host.peerCount() === 0);
    assert.is(b.host.peerCount(), 0, 'the banned peer does not come back');
  });
});

test('RPCs that do not decode, or break the stream framing, are counted and penalised; a stream that merely breaks off is not; the host goes on', async () => {
  await withHosts(async (start) => {
    const b = await start();
    const raw = await rawNode({ encrypter: 'hybrid' });
    try {
      const target = multiaddr(addrOf(b));
      const rejected = (reason: string) => metricValue(b.registry, 'service_p2p_messages_rejected_total', { topic: 'rpc', reason });
      // A length-prefixed frame whose protobuf has an invalid wire type.
      const s1 = await raw.dialProtocol(target, '/meshsub/1.1.0');
      s1.send(encodeFrame(new Uint8Array([0x0f, 0x00, 0x0f])));
      await until('malformed RPC counted', async () => (await rejected('malformed_rpc')) === 1);
      // A length prefix that is not a varint at all ends the stream.
      const s2 = await raw.dialProtocol(target, '/meshsub/1.1.0');
      s2.send(new Uint8Array(12).fill(0xff));
      await until('broken RPC stream counted', async () => (await rejected('rpc_stream')) === 1);
      assert.is(await metricValue(b.registry, 'service_p2p_peer_penalties_total', { reason: 'malformed_rpc' }), 1);
      assert.is(await metricValue(b.registry, 'service_p2p_peer_penalties_total', { reason: 'rpc_stream' }), 1);
      // A stream that breaks off mid-frame (reset, as a network cut or a crash ends it) proves
      // nothing against its sender: counted as broken, not penalised.
      const s3 = await raw.dialProtocol(target, '/meshsub/1.1.0');
      s3.send(new Uint8Array([0x40, 1, 2, 3]));
      s3.abort(new Error('link lost'));
      await until('broken-off stream counted', async () => (await metricValue(b.registry, 'service_p2p_messages_ignored_total', { topic: 'rpc', reason: 'stream_broken' })) >= 1);
      assert.is(await metricValue(b.registry, 'service_p2p_peer_penalties_total', { reason: 'rpc_stream' }), 1, 'the broken stream cost nothing');
      // B still gossips with a well-behaved peer.
      const got: string[] = [];
      b.host.subscribe(Topics.txs, async (data) => {
        got.push(dec(data));
        return 'accept';
      }, { maxBytes: MAX });
      const a = await start({ bootnodes: [addrOf(b)] });
      await publishUntil(a, Topics.txs, 'after-garbage', () => got.length > 0);
    } finally {
      await raw.stop();
    }
  });
});

test('publishing with no peers resolves 0', async () => {
  await withHosts(async (start) => {
    const a = await start();
    assert.is(await a.host.publish(Topics.txs, enc('alone')), 0);
  });
});

test('the validation queue takes peers in turn: a flood from one does not delay another', async () => {
  const q = new FairQueue(1, 1000, 1 << 30);
  const order: string[] = [];
  const gates: Array<() => void> = [];
  const job = (name: string) => () =>
    new Promise<string>((resolve) => {
      order.push(name);
      gates.push(() => resolve(name));
    });
  const flood = Array.from({ length: 50 }, (_, i) => q.run('flooder', 10, job(`f${i}`)));
  const honest = q.run('honest', 10, job('h0'));
  assert.is(q.queued('flooder'), 49, 'one running, the rest waiting');
  // Finish jobs one at a time; each completion hands the slot to the next peer in turn.
  for (let spins = 0; gates.length > 0 || order.length < 51; spins++) {
    if (spins > 10_000) assert.unreachable(`queue stalled after ${order.length} jobs`);
    gates.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all([...flood, honest]);
  // The flooder's running job and at most one more of its own before the honest peer's turn.
  assert.ok(order.indexOf('h0') <= 2, `the honest peer went at ${order.indexOf('h0')}, not near the end`);
});

test('a peer beyond its queue bound (count or bytes) is turned away at once', async () => {
  const q = new FairQueue(1, 2, 100);
  const never = () => new Promise<string>(() => undefined);
  void q.run('p', 10, never);
  void q.run('p', 10, never);
  void q.run('p', 10, never);
  assert.is(await q.run('p', 10, never), 'queue_full', 'count bound');
  assert.is(await q.run('other', 101, never), 'queue_full', 'bytes bound');
  assert.is(q.queued('other'), 0);
});

test('seen ids expire and stay bounded; penalty points halve over their half-life', () => {
  const seen = new SeenIds(1000, 3);
  assert.is(seen.observe('a', 0), false);
  assert.is(seen.observe('a', 10), true);
  assert.is(seen.observe('a', 1001), false, 'expired');
  for (const id of ['b', 'c', 'd', 'e']) seen.observe(id, 1002);
  assert.ok(seen.size <= 4);
  assert.is(seen.observe('a', 1003), false, 'oldest dropped first');
  const book = new PenaltyBook(1000);
  assert.is(book.add('p', 10, 0), 10);
  assert.is(Math.round(book.get('p', 1000)), 5);
  assert.is(Math.round(book.add('p', 10, 1000)), 15);
  assert.is(book.get('p', 100_000), 0, 'forgotten');
});

test.run();
