/** Request/response between real hosts: streamed chunks, limits on both sides, bad frames, handler faults. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { multiaddr } from '@multiformats/multiaddr';
import { SvcError } from '../../../src/core/errors.js';
import { encodeFrame, FrameError } from '../../../src/node/p2p/framing.js';
import { RequestError, singleAnswer } from '../../../src/node/p2p/reqresp.js';
import type { ProtocolLimits } from '../../../src/node/p2p/types.js';
import { addrOf, metricValue, rawNode, until, withHosts, type TestHost } from './fixture.js';

const PROTO = '/service/req/test/1';
const LIMITS: ProtocolLimits = { maxRequestBytes: 64, maxResponseChunks: 8, maxChunkBytes: 1024, timeoutMs: 10_000 };
const bytes = (...b: number[]) => new Uint8Array(b);

/** Serves PROTO on `t`: the request's first byte says how many chunks of what size to answer with. */
function serveCounting(t: TestHost, limits: ProtocolLimits = LIMITS): void {
  t.host.handle(PROTO, async function* (request) {
    const count = request[0] ?? 0;
    const size = (request[1] ?? 1) * 16;
    if (count === 255) throw new SvcError('BAD_TEST_REQUEST', 'refused');
    if (count === 254) throw new Error('handler bug');
    if (count === 253) await new Promise(() => undefined);
    for (let i = 0; i < count; i++) yield new Uint8Array(size).fill(i);
  }, limits);
}

async function pair(start: Parameters<Parameters<typeof withHosts>[0]>[0]): Promise<[TestHost, TestHost]> {
  const server = await start();
  const client = await start({ bootnodes: [addrOf(server)] });
  await until('connected', () => client.host.peerCount() === 1 && server.host.peerCount() === 1);
  return [server, client];
}

async function expectFault(p: Promise<unknown>, fault: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, RequestError);
    assert.is((err as RequestError).fault, fault, (err as Error).message);
    return;
  }
  assert.unreachable(`expected a ${fault} failure`);
}

test('a single-answer protocol: no chunk is no answer, one is the answer, two are a fault', () => {
  assert.is(singleAnswer([]), null);
  const one = new Uint8Array([1, 2, 3]);
  assert.is(singleAnswer([one]), one);
  assert.throws(() => singleAnswer([one, one]), (err: unknown) => err instanceof FrameError && err.fault === 'too_many_chunks');
});

test('chunks are streamed back in order; an empty response is no chunks', async () => {
  await withHosts(async (start) => {
    const [server, client] = await pair(start);
    serveCounting(server);
    const chunks = await client.host.request(server.host.peerId, PROTO, bytes(3, 2), LIMITS);
    assert.equal(chunks.map((c) => [c.length, c[0]]), [[32, 0], [32, 1], [32, 2]]);
    assert.equal(await client.host.request(server.host.peerId, PROTO, bytes(0), LIMITS), []);
    assert.is(await metricValue(server.registry, 'service_p2p_requests_total', { protocol: PROTO, direction: 'inbound', result: 'ok' }), 2);
    assert.is(await metricValue(client.registry, 'service_p2p_requests_total', { protocol: PROTO, direction: 'outbound', result: 'ok' }), 2);
  });
});

test('the requester enforces its chunk count and size limits and penalises the responder', async () => {
  await withHosts(async (start) => {
    const [server, client] = await pair(start);
    serveCounting(server, { ...LIMITS, maxResponseChunks: 100, maxChunkBytes: 100_000 });
    await expectFault(client.host.request(server.host.peerId, PROTO, bytes(9, 1), LIMITS), 'too_many_chunks');
    await expectFault(client.host.request(server.host.peerId, PROTO, bytes(1, 100), LIMITS), 'oversize');
    assert.is(await metricValue(client.registry, 'service_p2p_messages_rejected_total', { topic: PROTO, reason: 'too_many_chunks' }), 1);
    assert.is(await metricValue(client.registry, 'service_p2p_messages_rejected_total', { topic: PROTO, reason: 'oversize' }), 1);
    assert.is(await metricValue(client.registry, 'service_p2p_peer_penalties_total'), 2);
    // Still connected and still serving.
    assert.is((await client.host.request(server.host.peerId, PROTO, bytes(2), LIMITS)).length, 2);
  });
});

test('the responder refuses an oversized request and never sends more than its own limits', async () => {
  await withHosts(async (start) => {
    const [server, client] = await pair(start);
    serveCounting(server, { ...LIMITS, maxRequestBytes: 4, maxResponseChunks: 3 });
    await expectFault(client.host.request(server.host.peerId, PROTO, new Uint8Array(5).fill(1), LIMITS), 'reset');
    await until('server counted the oversize request', async () => (await metricValue(server.registry, 'service_p2p_messages_rejected_total', { topic: PROTO, reason: 'oversize' })) === 1);
    assert.is(await metricValue(server.registry, 'service_p2p_peer_penalties_total', { reason: 'req_oversize' }), 1);
    // The handler would yield 6; the server stops at its limit of 3.
    assert.is((await client.host.request(server.host.peerId, PROTO, bytes(6), LIMITS)).length, 3);
    // A request above the requester's own limit never leaves.
    try {
      await client.host.request(server.host.peerId, PROTO, new Uint8Array(65), LIMITS);
      assert.unreachable('oversized request sent');
    } catch (err) {
      assert.is((err as SvcError).code, 'P2P_REQUEST_TOO_LARGE');
    }
  });
});

test('handler faults: a bad request penalises the requester, a handler bug or a timeout does not crash either side', async () => {
  await withHosts(async (start) => {
    const [server, client] = await pair(start);
    serveCounting(server, { ...LIMITS, timeoutMs: 500 });
    await expectFault(client.host.request(server.host.peerId, PROTO, bytes(255), LIMITS), 'reset');
    await until('bad request counted', async () => (await metricValue(server.registry, 'service_p2p_peer_penalties_total', { reason: 'req_bad_request' })) === 1);
    await expectFault(client.host.request(server.host.peerId, PROTO, bytes(254), LIMITS), 'reset');
    await until('handler error counted', async () => (await metricValue(server.registry, 'service_p2p_requests_total', { result: 'handler_error' })) === 1);
    await expectFault(client.host.request(server.host.peerId, PROTO, bytes(253), { ...LIMITS, timeoutMs: 300 }), 'timeout');
    assert.is((await client.host.request(server.host.peerId, PROTO, bytes(1), LIMITS)).length, 1, 'both still work');
    assert.is(client.host.peerCount(), 1);
  });
});

test('garbage frames from a raw peer are counted by reason, penalised, and the host keeps serving', async () => {
  await withHosts(async (start) => {
    const server = await start();
    serveCounting(server);
    const raw = await rawNode({ encrypter: 'hybrid' });
    try {
      const target = multiaddr(addrOf(server));
      const sendRaw = async (payload: Uint8Array, close: boolean): Promise<void> => {
        const stream = await raw.dialProtocol(target, PROTO);
        stream.send(payload);
        if (close) await stream.close();
        // The server resets the stream (or we give up on it): either way this exchange is over.
        await new Promise<void>((resolve) => {
          if (stream.status !== 'open') return resolve();
          stream.addEventListener('close', () => resolve(), { once: true });
        });
      };
      const reasons = async (reason: string) => metricValue(server.registry, 'service_p2p_messages_rejected_total', { topic: PROTO, reason });
      await sendRaw(bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff), true);
      await until('malformed length', async () => (await reasons('malformed_length')) === 1);
      await sendRaw(bytes(10, 1, 2, 3), true);
      await until('truncated', async () => (await reasons('truncated')) === 1);
      await sendRaw(encodeFrame(new Uint8Array(65)), true);
      await until('oversize', async () => (await reasons('oversize')) === 1);
      await sendRaw(new Uint8Array([...encodeFrame(bytes(1)), 9, 9]), true);
      await until('trailing bytes', async () => (await reasons('trailing_bytes')) === 1);
      assert.is(await metricValue(server.registry, 'service_p2p_peer_penalties_total'), 4);
      // The requester side: a raw responder answering garbage.
      await raw.handle(PROTO, (stream) => {
        stream.send(bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
        void stream.close();
      });
      const client = await start({ bootnodes: [`${raw.getMultiaddrs()[0]!.toString()}`] });
      await until('client connected to raw', () => client.host.peerCount() === 1);
      await expectFault(client.host.request(raw.peerId.toString(), PROTO, bytes(1), LIMITS), 'malformed_length');
      // The server host survived all of it.
      const again = await start({ bootnodes: [addrOf(server)] });
      serveCounting(again);
      await until('server still accepts peers', () => server.host.peerCount() >= 1 && again.host.peerCount() >= 1);
      assert.is((await again.host.request(server.host.peerId, PROTO, bytes(2), LIMITS)).length, 2);
    } finally {
      await raw.stop();
    }
  });
});

test('a request that never completes (a cut link, a stalled peer) times out on the server unpenalised', async () => {
  await withHosts(async (start) => {
    const server = await start();
    serveCounting(server, { ...LIMITS, timeoutMs: 300 });
    const raw = await rawNode({ encrypter: 'hybrid' });
    try {
      const stream = await raw.dialProtocol(multiaddr(addrOf(server)), PROTO);
      // Half a frame, then nothing: what arrives before a link goes dead.
      stream.send(bytes(10, 1, 2));
      await until('timed out', async () => (await metricValue(server.registry, 'service_p2p_messages_rejected_total', { topic: PROTO, reason: 'timeout' })) === 1);
      assert.is(await metricValue(server.registry, 'service_p2p_peer_penalties_total'), 0, 'not provably invalid: no penalty');
    } finally {
      await raw.stop();
    }
  });
});

test.run();
