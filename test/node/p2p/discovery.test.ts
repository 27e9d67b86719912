/**
 * Discovery between real hosts on loopback: peers found through peer exchange from one bootnode,
 * the network holding together without it, redials after it comes back, a restart from the
 * address book alone, and bad peer-exchange input from a raw peer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { multiaddr } from '@multiformats/multiaddr';
import { encodeFrame, FrameReader } from '../../../src/node/p2p/framing.js';
import { encodePexRequest, encodePexResponse, MAX_PEX_RESPONSE_BYTES, peerExchangeLimits } from '../../../src/node/p2p/peer-exchange.js';
import { PEER_EXCHANGE_PROTOCOL } from '../../../src/node/p2p/types.js';
import { addrOf, GENESIS, metricValue, portOf, rawNode, TEST_SLOT_MS, type TestHost, until, withHosts } from './fixture.js';

const peersOf = (t: TestHost) => new Set(t.host.peers().map((p) => p.peer_id));

test('four hosts bootstrapped from the first: full mesh, the rest hold without it, it is redialled, and a restart needs only the address book', async () => {
  await withHosts(async (start) => {
    const h1 = await start();
    const rest = [await start({ bootnodes: [addrOf(h1)] }), await start({ bootnodes: [addrOf(h1)] }), await start({ bootnodes: [addrOf(h1)] })];
    const all = [h1, ...rest];
    const t0 = Date.now();
    await until('every host connected to every other', () => all.every((t) => all.every((o) => o === t || peersOf(t).has(o.host.peerId))), 10 * TEST_SLOT_MS);
    process.stderr.write(`[discovery] full mesh of 4 in ${Date.now() - t0} ms\n`);
    const learned = await Promise.all(rest.map((t) => metricValue(t.registry, 'service_p2p_peer_discovery_total', { source: 'peer_exchange' })));
    assert.ok(learned.some((n) => n >= 1), `someone learned a peer by peer exchange: ${learned}`);

    // Lose the bootnode: the other three stay connected to each other.
    const h1Dir = h1.dataDir;
    const h1Port = portOf(h1);
    await h1.host.stop();
    await until('h1 gone from every peer list', () => rest.every((t) => !peersOf(t).has(h1.host.peerId)), 10 * TEST_SLOT_MS);
    await new Promise((r) => setTimeout(r, 3 * TEST_SLOT_MS));
    for (const t of rest) assert.is(t.host.peerCount(), 2, 'still meshed without the bootnode');

    // It comes back (no bootnodes of its own): the others redial it within a couple of slots.
    const back = Date.now();
    const h1b = await start({ dataDir: h1Dir, port: h1Port });
    await until('h1 reconnected to all three', () => h1b.host.peerCount() === 3, 10 * TEST_SLOT_MS);
    const rejoinMs = Date.now() - back;
    process.stderr.write(`[discovery] restarted bootnode reconnected to 3 peers in ${rejoinMs} ms\n`);

    // Every host's book lists the three others, and survives a restart without --bootnodes.
    const h4 = rest[2]!;
    const h4Port = portOf(h4);
    await h4.host.stop();
    const book = JSON.parse(await readFile(`${h4.dataDir}/p2p/address-book.json`, 'utf8')) as { peers: Array<{ peer_id: string }> };
    const others = [h1b, rest[0]!, rest[1]!].map((t) => t.host.peerId);
    for (const id of others) assert.ok(book.peers.some((p) => p.peer_id === id), `h4's book lists ${id}`);
    const h4b = await start({ dataDir: h4.dataDir, port: h4Port });
    await until('h4 rejoined from its address book alone', () => h4b.host.peerCount() === 3, 10 * TEST_SLOT_MS);
    assert.is(await metricValue(h4b.registry, 'service_p2p_peer_discovery_total'), 0, 'nothing new was discovered: the book already knew them');
  });
});

test('the peer target: discovery stops dialling at --max-peers', async () => {
  await withHosts(async (start) => {
    const h1 = await start();
    const hosts = [await start({ bootnodes: [addrOf(h1)] }), await start({ bootnodes: [addrOf(h1)] })];
    const capped = await start({ bootnodes: [addrOf(h1)], maxPeers: 2 });
    await until('the three others meshed', () => hosts.every((t) => t.host.peerCount() >= 2), 10 * TEST_SLOT_MS);
    await until('capped host at its target', () => capped.host.peerCount() === 2, 10 * TEST_SLOT_MS);
    await new Promise((r) => setTimeout(r, 3 * TEST_SLOT_MS));
    assert.ok(capped.host.peerCount() <= 2, `capped host has ${capped.host.peerCount()} peers`);
  });
});

test('bad peer-exchange input: requests and responses that break the format, other chains, undialable addresses and floods are refused; honest peers keep working', async () => {
  await withHosts(async (start) => {
    const h = await start();
    const honest = await start({ bootnodes: [addrOf(h)] });
    await until('honest peer connected', () => h.host.peerCount() === 1);
    const raw = await rawNode({ encrypter: 'hybrid' });
    const stranger = await start({ genesisHash: '0x' + '22'.repeat(32) });
    try {
      const limits = peerExchangeLimits(TEST_SLOT_MS);
      const rejected = (reason: string) => metricValue(h.registry, 'service_p2p_messages_rejected_total', { topic: PEER_EXCHANGE_PROTOCOL, reason });
      const served = (result: string) => metricValue(h.registry, 'service_p2p_requests_total', { protocol: PEER_EXCHANGE_PROTOCOL, direction: 'inbound', result });
      // --- Requests from a raw peer: wrong sizes and counts are bad requests.
      const target = multiaddr(addrOf(h));
      for (const body of [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(200), Uint8Array.of(1, 2)]) {
        const stream = await raw.dialProtocol(target, PEER_EXCHANGE_PROTOCOL);
        stream.send(encodeFrame(body));
        await stream.close();
        await new Promise<void>((resolve) => {
          if (stream.status !== 'open') return resolve();
          stream.addEventListener('close', () => resolve(), { once: true });
        });
      }
      await until('bad requests refused', async () => (await served('bad_request')) + (await rejected('oversize')) >= 4);

      // --- Responses from the raw peer, one crafted answer per request the host makes.
      const id = (s: string) => [...new TextEncoder().encode(s)];
      const rec = (peer: string, addr: string) => { const a = [...multiaddr(addr).bytes]; return [id(peer).length, ...id(peer), 1, a.length, ...a]; };
      const genesis = [...Buffer.from(GENESIS.slice(2), 'hex')];
      const strangerAddr = addrOf(stranger).replace(/\/p2p\/.*$/, '');
      const answers: Uint8Array[] = [
        new Uint8Array([...genesis, 3, 1]), // truncated
        new Uint8Array(MAX_PEX_RESPONSE_BYTES + 10), // oversized frame
        encodePexResponse('0x' + '33'.repeat(32), [{ peerId: honest.host.peerId, addrs: ['/ip4/10.0.0.1/tcp/1'] }]), // another chain
        new Uint8Array([...genesis, 1, ...rec(honest.host.peerId, '/ip4/0.0.0.0/tcp/9000')]), // undialable only
        new Uint8Array([...genesis, 1, ...rec(stranger.host.peerId, strangerAddr)]), // a peer of another chain
      ];
      let asked = 0;
      await raw.handle(PEER_EXCHANGE_PROTOCOL, (stream) => {
        void (async () => {
          await new FrameReader(stream).next(1);
          const answer = answers[Math.min(asked++, answers.length - 1)]!;
          stream.send(encodeFrame(answer));
          await stream.close();
        })().catch(() => stream.abort(new Error('raw responder failed')));
      });
      await until('every crafted answer was asked for', () => asked >= answers.length, 20 * TEST_SLOT_MS);
      await until('malformed and other-chain responses refused', async () => (await rejected('malformed')) >= 1 && (await rejected('other_chain')) >= 1 && (await rejected('oversize')) >= 2);
      assert.ok((await metricValue(h.registry, 'service_p2p_messages_ignored_total', { topic: PEER_EXCHANGE_PROTOCOL, reason: 'undialable_address' })) >= 1);
      assert.ok((await metricValue(h.registry, 'service_p2p_peer_penalties_total', { reason: 'pex_malformed' })) >= 1);
      assert.ok((await metricValue(h.registry, 'service_p2p_peer_penalties_total', { reason: 'pex_other_chain' })) >= 1);
      // The other chain's node was dialled as a candidate and refused by the handshake: never a peer.
      const failures = async () => (await metricValue(stranger.registry, 'service_p2p_kyber_handshakes_total', { result: 'failure' })) + (await metricValue(h.registry, 'service_p2p_kyber_handshakes_total', { result: 'failure' }));
      await until('the stranger was tried', async () => (await failures()) >= 1, 10 * TEST_SLOT_MS);
      assert.not.ok(peersOf(h).has(stranger.host.peerId));

      // --- A flood of valid requests from one peer: a burst is served, the rest refused.
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => honest.host.request(h.host.peerId, PEER_EXCHANGE_PROTOCOL, encodePexRequest(32), limits)));
      const ok = results.filter((r) => r.status === 'fulfilled').length;
      assert.ok(ok >= 1 && ok <= 5, `${ok} of 12 flooded requests served`);

      // --- Nothing crashed, and the honest peer was not penalised for any of it.
      assert.ok(peersOf(h).has(honest.host.peerId), 'the honest peer is still connected');
      const reply = await h.host.request(honest.host.peerId, PEER_EXCHANGE_PROTOCOL, encodePexRequest(32), limits);
      assert.is(reply.length, 1);
      assert.is(await metricValue(honest.registry, 'service_p2p_peer_penalties_total'), 0, 'the honest peer penalised nobody');
    } finally {
      await raw.stop();
    }
  });
});

test.run();
