/** Gossip between real hosts: relay after accept, reject penalises, ignore is not relayed, duplicates, oversize. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Topics, type GossipVerdict } from '../../../src/node/p2p/types.js';
import { addrOf, metricValue, until, withHosts, type TestHost } from './fixture.js';

const MAX = 64 * 1024;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Starts A and C, then B dialling both: the line A - B - C. */
async function line(start: Parameters<Parameters<typeof withHosts>[0]>[0]): Promise<[TestHost, TestHost, TestHost]> {
  const a = await start();
  const c = await start();
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

test.run();
