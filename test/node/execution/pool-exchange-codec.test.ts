/** The pool exchange's wire layouts: round trips and every malformed shape refused with a PoolExchangeError. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_TX_BYTES } from '../../../src/core/constants.js';
import {
  decodeHashesPage,
  decodeHashesRequest,
  decodeTxsRequest,
  encodeHashesPage,
  encodeHashesRequest,
  encodeTxsRequest,
  HASHES_REQUEST_BYTES,
  MAX_ANNOUNCE_HASHES,
  MAX_FETCH_HASHES,
  PoolExchangeError,
} from '../../../src/node/execution/pool-exchange-codec.js';
import { httpStatusOf } from '../../../src/api/errors.js';

const hash = (i: number) => '0x' + i.toString(16).padStart(64, '0');

function refused(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, PoolExchangeError);
    assert.is((err as PoolExchangeError).code, 'POOL_EXCHANGE_MALFORMED');
    assert.is(httpStatusOf(err as PoolExchangeError), 400);
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable(`expected a refusal matching ${message}`);
}

test('hashes request: round trip; wrong length or a limit outside 1..4096 is refused', () => {
  const r = { cursor: 2n ** 63n + 5n, limit: MAX_ANNOUNCE_HASHES };
  assert.equal(decodeHashesRequest(encodeHashesRequest(r)), r);
  const ok = encodeHashesRequest({ cursor: 1n, limit: 1 });
  refused(() => decodeHashesRequest(ok.subarray(0, HASHES_REQUEST_BYTES - 1)), /must be 10 bytes, got 9/);
  refused(() => decodeHashesRequest(new Uint8Array(HASHES_REQUEST_BYTES + 1)), /must be 10 bytes, got 11/);
  refused(() => decodeHashesRequest(encodeHashesRequest({ cursor: 0n, limit: 0 })), /limit must be 1\.\.4096, got 0/);
  refused(() => decodeHashesRequest(encodeHashesRequest({ cursor: 0n, limit: MAX_ANNOUNCE_HASHES + 1 })), /got 4097/);
});

test('hashes page: round trip; more entries than asked, bad sizes, repeats, a bad flag or a torn entry are refused', () => {
  const page = { next: 42n, more: true, entries: [{ hash: hash(1), size: 5300 }, { hash: hash(2), size: MAX_TX_BYTES }] };
  const bytes = encodeHashesPage(page);
  assert.equal(decodeHashesPage(bytes, 2), page);
  assert.equal(decodeHashesPage(encodeHashesPage({ next: 0n, more: false, entries: [] }), 1), { next: 0n, more: false, entries: [] });
  refused(() => decodeHashesPage(bytes, 1), /holds 2 entries, more than the 1 asked for/);
  refused(() => decodeHashesPage(bytes.subarray(0, bytes.length - 1), 2), /not a header plus whole entries/);
  refused(() => decodeHashesPage(bytes.subarray(0, 8), 2), /not a header plus whole entries/);
  refused(() => decodeHashesPage(encodeHashesPage({ ...page, entries: [{ hash: hash(1), size: 0 }] }), 2), /size 0, outside/);
  refused(() => decodeHashesPage(encodeHashesPage({ ...page, entries: [{ hash: hash(1), size: MAX_TX_BYTES + 1 }] }), 2), /outside 1\.\./);
  refused(() => decodeHashesPage(encodeHashesPage({ ...page, entries: [page.entries[0]!, page.entries[0]!] }), 2), /repeats/);
  const flag = bytes.slice();
  flag[8] = 2;
  refused(() => decodeHashesPage(flag, 2), /"more" flag must be 0 or 1/);
});

test('transactions request: round trip; empty, torn, more than 256 or repeated hashes are refused', () => {
  const hashes = [hash(7), hash(8)];
  assert.equal(decodeTxsRequest(encodeTxsRequest(hashes)), hashes);
  const max = Array.from({ length: MAX_FETCH_HASHES }, (_, i) => hash(i));
  assert.is(decodeTxsRequest(encodeTxsRequest(max)).length, MAX_FETCH_HASHES);
  refused(() => decodeTxsRequest(new Uint8Array(0)), /whole 32-byte hashes, got 0 bytes/);
  refused(() => decodeTxsRequest(new Uint8Array(33)), /got 33 bytes/);
  refused(() => decodeTxsRequest(encodeTxsRequest([...max, hash(999)])), /asks for 257 hashes/);
  refused(() => decodeTxsRequest(encodeTxsRequest([hash(7), hash(7)])), /repeats/);
});

test.run();
