import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { multiaddr } from '@multiformats/multiaddr';
import { decodePexRequest, decodePexResponse, dialableAddr, encodePexRequest, encodePexResponse, MAX_PEER_RECORDS, MAX_PEX_RESPONSE_BYTES, PeerExchangeError } from '../../../src/node/p2p/peer-exchange.js';
import { peerIdFromSeed } from '../../../src/node/p2p/identity.js';
import { GENESIS } from './fixture.js';
import { httpStatusOf } from '../../../src/api/errors.js';

const A = await peerIdFromSeed(new Uint8Array(32).fill(1));
const B = await peerIdFromSeed(new Uint8Array(32).fill(2));

function fault(bytes: Uint8Array, genesis = GENESIS): string {
  try {
    decodePexResponse(bytes, genesis);
  } catch (err) {
    assert.instance(err, PeerExchangeError, `not a PeerExchangeError: ${(err as Error).message}`);
    return (err as PeerExchangeError).fault;
  }
  return 'ok';
}

test('a response round-trips; records past the bounds are left out when encoding', () => {
  const wire = encodePexResponse(GENESIS, [
    { peerId: A, addrs: ['/ip4/10.0.0.1/tcp/9000', '/ip6/::1/tcp/9001', '/dns4/node-b.example/tcp/9000'] },
    { peerId: B, addrs: ['/ip4/10.0.0.2/tcp/9000'] },
  ]);
  const { records } = decodePexResponse(wire, GENESIS);
  assert.equal(records.map((r) => [r.peerId, r.addrs.map((a) => a.toString())]), [
    [A, ['/ip4/10.0.0.1/tcp/9000', '/ip6/::1/tcp/9001', '/dns4/node-b.example/tcp/9000']],
    [B, ['/ip4/10.0.0.2/tcp/9000']],
  ]);
  const many = Array.from({ length: 50 }, () => ({ peerId: A, addrs: Array.from({ length: 9 }, (_, i) => `/ip4/10.0.0.${i + 1}/tcp/9000`) }));
  const big = encodePexResponse(GENESIS, many);
  assert.ok(big.length <= MAX_PEX_RESPONSE_BYTES);
  // 32 copies of one peer: the decoder refuses the repeat, but the encoder bounded the count and the addresses.
  assert.is(big[32], MAX_PEER_RECORDS);
  assert.is(fault(big), 'malformed');
});

test('requests: exactly one byte asking for 1 to 32 records', () => {
  assert.is(decodePexRequest(encodePexRequest(32)), 32);
  assert.is(decodePexRequest(encodePexRequest(500)), MAX_PEER_RECORDS);
  for (const bad of [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(33), Uint8Array.of(1, 1)]) {
    assert.throws(() => decodePexRequest(bad), (e: unknown) => e instanceof PeerExchangeError && httpStatusOf(e) === 400);
  }
});

test('malformed responses and another chain are refused whole, with a reason', () => {
  const good = encodePexResponse(GENESIS, [{ peerId: A, addrs: ['/ip4/10.0.0.1/tcp/9000'] }]);
  assert.is(fault(good), 'ok');
  // Every truncation and any trailing byte.
  for (let n = 0; n < good.length; n++) assert.is(fault(good.subarray(0, n)), 'malformed', `truncated at ${n}`);
  assert.is(fault(new Uint8Array([...good, 0])), 'malformed');
  assert.is(fault(good, '0x' + '22'.repeat(32)), 'other_chain');
  const head = good.subarray(0, 32);
  const body = (...b: number[]) => new Uint8Array([...head, ...b]);
  assert.is(fault(body(33)), 'malformed', 'too many records');
  assert.is(fault(body(1, 0)), 'malformed', 'empty peer id');
  assert.is(fault(body(1, 2, 0xff, 0xfe, 1, 1, 0)), 'malformed', 'peer id not UTF-8');
  assert.is(fault(body(1, 3, 0x61, 0x62, 0x63, 1, 1, 0)), 'malformed', 'not a peer id');
  const id = [...new TextEncoder().encode(A)];
  assert.is(fault(body(1, id.length, ...id, 0)), 'malformed', 'no addresses');
  assert.is(fault(body(1, id.length, ...id, 5, 1, 4)), 'malformed', 'too many addresses');
  assert.is(fault(body(1, id.length, ...id, 1, 3, 0xff, 0xff, 0xff)), 'malformed', 'address not a multiaddr');
  assert.is(fault(body(1, id.length, ...id, 1, 65, ...new Array(65).fill(4))), 'malformed', 'address too long');
  assert.is(fault(new Uint8Array(MAX_PEX_RESPONSE_BYTES + 1)), 'malformed', 'oversized');
  const addr = [...multiaddr('/ip4/10.0.0.1/tcp/1').bytes];
  const rec = [id.length, ...id, 1, addr.length, ...addr];
  assert.is(fault(body(2, ...rec, ...rec)), 'malformed', 'a peer listed twice');
  // Random bytes after a valid header never throw anything else.
  for (let i = 0; i < 2_000; i++) {
    const junk = new Uint8Array(1 + Math.floor(Math.random() * 200)).map(() => Math.floor(Math.random() * 256));
    const f = fault(new Uint8Array([...head, ...junk]));
    assert.ok(f === 'malformed' || f === 'ok');
  }
});

test('only addresses we could dial are kept', () => {
  const d = (a: string, loopback = false, peer = A) => dialableAddr(multiaddr(a), peer, loopback);
  assert.is(d('/ip4/10.0.0.1/tcp/9000'), '/ip4/10.0.0.1/tcp/9000');
  assert.is(d(`/ip4/10.0.0.1/tcp/9000/p2p/${A}`), '/ip4/10.0.0.1/tcp/9000');
  assert.is(d('/dns4/node.example/tcp/9000'), '/dns4/node.example/tcp/9000');
  assert.is(d(`/ip4/10.0.0.1/tcp/9000/p2p/${B}`), undefined, 'another peer id');
  assert.is(d('/ip4/0.0.0.0/tcp/9000'), undefined, 'unspecified');
  assert.is(d('/ip6/::/tcp/9000'), undefined, 'unspecified v6');
  assert.is(d('/ip4/224.0.0.1/tcp/9000'), undefined, 'multicast');
  assert.is(d('/ip4/255.255.255.255/tcp/9000'), undefined, 'broadcast');
  assert.is(d('/ip4/10.0.0.1/tcp/0'), undefined, 'port 0');
  assert.is(d('/ip4/10.0.0.1/udp/9000'), undefined, 'not TCP');
  assert.is(d('/ip4/10.0.0.1/tcp/9000/ws'), undefined, 'another transport');
  assert.is(d('/ip4/127.0.0.1/tcp/9000'), undefined, 'loopback heard over a non-loopback link');
  assert.is(d('/ip4/127.0.0.1/tcp/9000', true), '/ip4/127.0.0.1/tcp/9000');
  assert.is(d('/dns/localhost/tcp/9000'), undefined);
});

test.run();
