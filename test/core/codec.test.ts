/** Byte and JSON codecs, hashing and address helpers. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bigintToBytesBE,
  bytesEqual,
  bytesToBigintBE,
  concatBytes,
  parseBase64,
  parseHex,
  toBase64,
  toHex,
  u64LE,
  utf8,
} from '../../src/core/codec/bytes.js';
import { parseAddress, parseDecimal, parseString, parseUint, rejectUnknownKeys, requireObject } from '../../src/core/codec/json.js';
import { keccak256, sha3 } from '../../src/core/crypto/hash.js';
import { addressFromPublicKey, addressToString, ecdsaAddressFromPublicKey, normalizeAddress } from '../../src/core/crypto/address.js';
import { CryptoError, MalformedError, SvcError } from '../../src/core/errors.js';
import { PUBLIC_KEY_BYTES } from '../../src/core/constants.js';
import { bytesIs, expectError } from '../helpers/assert.js';
import { httpStatusOf } from '../../src/api/errors.js';

// ---------------------------------------------------------------------------------------------
// errors

test('MalformedError carries code, field, status and the "malformed <field>[: detail]" message', () => {
  const bare = new MalformedError('tx.Value');
  assert.ok(bare instanceof SvcError);
  assert.is(bare.code, 'MALFORMED_INPUT');
  assert.is(httpStatusOf(bare), 400);
  assert.is(bare.field, 'tx.Value');
  assert.is(bare.message, 'malformed tx.Value');
  assert.is(bare.name, 'MalformedError');
  assert.is(new MalformedError('x', 'why').message, 'malformed x: why');
});

// ---------------------------------------------------------------------------------------------
// hex

test('toHex: lowercase, 0x-prefixed, respects subarray offsets', () => {
  assert.is(toHex(new Uint8Array(0)), '0x');
  assert.is(toHex(Uint8Array.of(0x00, 0xab, 0xcd, 0xef)), '0x00abcdef');
  const big = Uint8Array.of(1, 2, 3, 4, 5);
  assert.is(toHex(big.subarray(1, 3)), '0x0203');
});

test('parseHex: accepts lower, upper and mixed case', () => {
  bytesIs(parseHex('0xabcdef', 'X'), Uint8Array.of(0xab, 0xcd, 0xef));
  bytesIs(parseHex('0xABCDEF', 'X'), Uint8Array.of(0xab, 0xcd, 0xef));
  bytesIs(parseHex('0xAbCdEf', 'X'), Uint8Array.of(0xab, 0xcd, 0xef));
  bytesIs(parseHex('0x', 'X'), new Uint8Array(0));
  bytesIs(parseHex('0x', 'X', 0), new Uint8Array(0));
});

test('parseHex: round-trips toHex', () => {
  const b = Uint8Array.from({ length: 256 }, (_, i) => i);
  bytesIs(parseHex(toHex(b), 'X', 256), b);
});

test('parseHex: odd number of digits is malformed', () => {
  expectError(() => parseHex('0xabc', 'X'), MalformedError, {
    code: 'MALFORMED_INPUT',
    field: 'X',
    message: 'malformed X: expected 0x-prefixed hex with an even number of digits',
  });
  expectError(() => parseHex('0x0', 'X'), MalformedError, { message: 'malformed X: expected 0x-prefixed hex with an even number of digits' });
});

test('parseHex: missing or wrong prefix is malformed', () => {
  for (const bad of ['abcd', '', 'x0ab', '0Xabcd', '00ab', ' 0xab', '0xab ', '0xab\n', '0x0g', '0xzz', '0x-1']) {
    expectError(() => parseHex(bad, 'X'), MalformedError, {
      field: 'X',
      message: 'malformed X: expected 0x-prefixed hex with an even number of digits',
    });
  }
});

test('parseHex: non-strings are malformed', () => {
  for (const bad of [123, null, undefined, true, {}, [], Uint8Array.of(1), 10n]) {
    expectError(() => parseHex(bad, 'tx.Data'), MalformedError, {
      field: 'tx.Data',
      message: 'malformed tx.Data: expected a 0x-prefixed hex string',
    });
  }
});

test('parseHex: wrong length says "expected N bytes, got M"', () => {
  expectError(() => parseHex('0xaabb', 'X', 3), MalformedError, { field: 'X', message: 'malformed X: expected 3 bytes, got 2' });
  expectError(() => parseHex('0x', 'tx.To', 20), MalformedError, { message: 'malformed tx.To: expected 20 bytes, got 0' });
  expectError(() => parseHex('0x' + '11'.repeat(21), 'tx.To', 20), MalformedError, { message: 'malformed tx.To: expected 20 bytes, got 21' });
  bytesIs(parseHex('0x' + '11'.repeat(20), 'tx.To', 20), new Uint8Array(20).fill(0x11));
});

// ---------------------------------------------------------------------------------------------
// base64

test('parseBase64: canonical standard base64, padded', () => {
  bytesIs(parseBase64('', 'B'), new Uint8Array(0));
  bytesIs(parseBase64('QQ==', 'B'), Uint8Array.of(0x41));
  bytesIs(parseBase64('QUI=', 'B'), Uint8Array.of(0x41, 0x42));
  bytesIs(parseBase64('QUJD', 'B'), Uint8Array.of(0x41, 0x42, 0x43));
  bytesIs(parseBase64('+/8=', 'B'), Uint8Array.of(0xfb, 0xff));
  bytesIs(parseBase64('AQID', 'B', 3), Uint8Array.of(1, 2, 3));
});

test('parseBase64: round-trips toBase64 for every length 0..40', () => {
  for (let n = 0; n <= 40; n++) {
    const b = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
    bytesIs(parseBase64(toBase64(b), 'B', n), b);
  }
});

test('parseBase64: rejects unpadded, url-safe, whitespace, non-canonical padding bits, non-strings', () => {
  for (const bad of ['QQ', 'QUI', 'Q', 'QQ=', 'QQ===', '-_8=', 'QU JD', 'QUJD\n', ' QUJD', 'QR==', 'QUJ=', '====', 12, null, undefined, Uint8Array.of(1)]) {
    expectError(() => parseBase64(bad, 'wallet public_key'), MalformedError, {
      code: 'MALFORMED_INPUT',
      field: 'wallet public_key',
      message: 'malformed wallet public_key: expected base64',
    });
  }
});

test('parseBase64: multi-megabyte input (a stored 30M-gas block) parses, and a bad character deep inside is refused', () => {
  // The former regex check threw a RangeError (V8 regexp stack overflow) above about 5 MB, which
  // turned execution's forkchoiceUpdated, block and transaction look-ups into HTTP 500s.
  const big = Uint8Array.from({ length: 12 * 1024 * 1024 }, (_, i) => (i * 131) & 0xff);
  const text = toBase64(big);
  bytesIs(parseBase64(text, 'ssz', big.length), big);
  const mid = text.length >> 1;
  for (const c of ['-', ' ', '=']) {
    expectError(() => parseBase64(text.slice(0, mid) + c + text.slice(mid + 1), 'ssz'), MalformedError, { field: 'ssz', message: 'malformed ssz: expected base64' });
  }
  expectError(() => parseBase64(text + '\n', 'ssz'), MalformedError, { field: 'ssz', message: 'malformed ssz: expected base64' });
});

test('parseBase64: wrong length says "expected N bytes, got M"', () => {
  expectError(() => parseBase64('AQID', 'B', 4), MalformedError, { field: 'B', message: 'malformed B: expected 4 bytes, got 3' });
});

// ---------------------------------------------------------------------------------------------
// decimal strings

test('parseDecimal: accepts canonical base-10 strings', () => {
  assert.is(parseDecimal('0', 'tx.Value', 256), 0n);
  assert.is(parseDecimal('1', 'tx.Value', 256), 1n);
  assert.is(parseDecimal('123', 'tx.Value', 256), 123n);
  assert.is(parseDecimal('1000000000000000000', 'tx.Value', 256), 10n ** 18n);
  assert.is(parseDecimal('18446744073709551615', 'tx.GasPrice', 64), (1n << 64n) - 1n);
  assert.is(parseDecimal(((1n << 256n) - 1n).toString(), 'tx.Value', 256), (1n << 256n) - 1n);
  assert.is(parseDecimal('255', 'b', 8), 255n);
});

test('parseDecimal: every non-canonical form is exactly "malformed <field>"', () => {
  const bad: unknown[] = [
    '0x10', '0X10', '1.5', '1.0', '-1', '-0', '', '+1', '01', '00', '007', '1e3', '1E3', ' 1', '1 ', '1_000', '1,000',
    'Infinity', 'NaN', '\u0661', '１', '1\n',
    // JSON numbers and other non-strings
    0, 1, 123, 1.5, -1, 1e3, Number.MAX_SAFE_INTEGER, 10n, null, undefined, true, [], {}, ['1'],
  ];
  for (const v of bad) {
    expectError(() => parseDecimal(v, 'tx.Value', 256), MalformedError, { code: 'MALFORMED_INPUT', field: 'tx.Value', message: 'malformed tx.Value' });
    expectError(() => parseDecimal(v, 'tx.GasPrice', 64), MalformedError, { field: 'tx.GasPrice', message: 'malformed tx.GasPrice' });
  }
});

test('parseDecimal: values >= 2^bits are rejected with the range', () => {
  expectError(() => parseDecimal('18446744073709551616', 'tx.GasPrice', 64), MalformedError, {
    field: 'tx.GasPrice',
    message: 'malformed tx.GasPrice: exceeds 64-bit range',
  });
  expectError(() => parseDecimal((1n << 256n).toString(), 'tx.Value', 256), MalformedError, { message: 'malformed tx.Value: exceeds 256-bit range' });
  expectError(() => parseDecimal('256', 'b', 8), MalformedError, { message: 'malformed b: exceeds 8-bit range' });
  expectError(() => parseDecimal('9'.repeat(200), 'tx.Value', 256), MalformedError, { message: 'malformed tx.Value: exceeds 256-bit range' });
});

// ---------------------------------------------------------------------------------------------
// JSON integers and objects

test('parseUint: accepts non-negative safe integers up to max', () => {
  assert.is(parseUint(0, 'n'), 0);
  assert.is(parseUint(42, 'n'), 42);
  assert.is(parseUint(Number.MAX_SAFE_INTEGER, 'n'), Number.MAX_SAFE_INTEGER);
  assert.is(parseUint(3, 'n', 3), 3);
});

test('parseUint: strings, floats, negatives, unsafe integers are malformed', () => {
  for (const bad of ['1', '0', 1.5, -1, NaN, Infinity, -Infinity, 2 ** 53, 1e300, null, undefined, true, 1n, [1], {}]) {
    expectError(() => parseUint(bad, 'tx.Nonce'), MalformedError, {
      field: 'tx.Nonce',
      message: 'malformed tx.Nonce: expected a non-negative integer',
    });
  }
});

test('parseUint: above max is "exceeds <max>"', () => {
  expectError(() => parseUint(4, 'tx.Type', 3), MalformedError, { field: 'tx.Type', message: 'malformed tx.Type: exceeds 3' });
});

test('parseAddress: 20 bytes, any case', () => {
  bytesIs(parseAddress('0x' + 'aB'.repeat(20), 'to'), new Uint8Array(20).fill(0xab));
  expectError(() => parseAddress('0x' + 'ab'.repeat(19), 'to'), MalformedError, { message: 'malformed to: expected 20 bytes, got 19' });
});

test('requireObject: plain objects only', () => {
  const o = { a: 1 };
  assert.is(requireObject(o, 'x'), o);
  for (const bad of [null, undefined, [], 'x', 1, true]) {
    expectError(() => requireObject(bad, 'tx'), MalformedError, { field: 'tx', message: 'malformed tx: expected an object' });
  }
});

test('rejectUnknownKeys: names the unknown field', () => {
  rejectUnknownKeys({ a: 1, b: 2 }, ['a', 'b', 'c'], 'x');
  expectError(() => rejectUnknownKeys({ a: 1, Value: 2 }, ['a', 'value'], 'tx'), MalformedError, {
    field: 'tx.Value',
    message: 'malformed tx.Value: unknown field',
  });
});

test('parseString: non-empty strings only', () => {
  assert.is(parseString('svc', 'f'), 'svc');
  for (const bad of ['', 1, null, undefined, ['a']]) {
    expectError(() => parseString(bad, 'genesis.chain_id'), MalformedError, { message: 'malformed genesis.chain_id: expected a non-empty string' });
  }
});

// ---------------------------------------------------------------------------------------------
// byte helpers

test('concatBytes and bytesEqual', () => {
  bytesIs(concatBytes(), new Uint8Array(0));
  bytesIs(concatBytes(Uint8Array.of(1), new Uint8Array(0), Uint8Array.of(2, 3)), Uint8Array.of(1, 2, 3));
  assert.ok(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2)));
  assert.not.ok(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3)));
  assert.not.ok(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 0)));
  assert.ok(bytesEqual(new Uint8Array(0), new Uint8Array(0)));
});

test('bigintToBytesBE: big-endian, fixed width, range-checked', () => {
  bytesIs(bigintToBytesBE(0n, 1), Uint8Array.of(0));
  bytesIs(bigintToBytesBE(255n, 1), Uint8Array.of(0xff));
  bytesIs(bigintToBytesBE(0x0102n, 4), Uint8Array.of(0, 0, 1, 2));
  bytesIs(bigintToBytesBE(10n ** 18n, 32), parseHex('0x' + '0'.repeat(48) + '0de0b6b3a7640000', 'x'));
  bytesIs(bigintToBytesBE((1n << 256n) - 1n, 32), new Uint8Array(32).fill(0xff));
  assert.throws(() => bigintToBytesBE(256n, 1), (e: unknown) => e instanceof RangeError && e.message === '256 does not fit in 1 bytes');
  assert.throws(() => bigintToBytesBE(-1n, 4), (e: unknown) => e instanceof RangeError && e.message === '-1 does not fit in 4 bytes');
  assert.throws(() => bigintToBytesBE(1n << 256n, 32), (e: unknown) => e instanceof RangeError);
});

test('bytesToBigintBE: inverse of bigintToBytesBE, leading zeros ignored', () => {
  assert.is(bytesToBigintBE(new Uint8Array(0)), 0n);
  assert.is(bytesToBigintBE(Uint8Array.of(0, 0, 1, 2)), 0x0102n);
  assert.is(bytesToBigintBE(new Uint8Array(32).fill(0xff)), (1n << 256n) - 1n);
  for (const v of [0n, 1n, 255n, 256n, 10n ** 18n, (1n << 255n) + 12345n]) assert.is(bytesToBigintBE(bigintToBytesBE(v, 32)), v);
});

test('u64LE: 8-byte little-endian uint64', () => {
  bytesIs(u64LE(0), new Uint8Array(8));
  bytesIs(u64LE(1), Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0));
  bytesIs(u64LE(258), Uint8Array.of(2, 1, 0, 0, 0, 0, 0, 0));
  bytesIs(u64LE(0x0102030405060708n), Uint8Array.of(8, 7, 6, 5, 4, 3, 2, 1));
  bytesIs(u64LE((1n << 64n) - 1n), new Uint8Array(8).fill(0xff));
  bytesIs(u64LE(Number.MAX_SAFE_INTEGER), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0));
});

test('u64LE: out-of-range values throw instead of wrapping modulo 2^64', () => {
  assert.throws(() => u64LE(-1), (e: unknown) => e instanceof RangeError && e.message === '-1 does not fit in uint64');
  assert.throws(() => u64LE(1n << 64n), (e: unknown) => e instanceof RangeError && e.message === '18446744073709551616 does not fit in uint64');
  assert.throws(() => u64LE(1.5), (e: unknown) => e instanceof RangeError);
});

test('utf8: encodes multi-byte characters', () => {
  bytesIs(utf8(''), new Uint8Array(0));
  bytesIs(utf8('svc'), Uint8Array.of(0x73, 0x76, 0x63));
  bytesIs(utf8('é'), Uint8Array.of(0xc3, 0xa9));
});

// ---------------------------------------------------------------------------------------------
// hashing

test('sha3-256 of the empty string matches FIPS 202', () => {
  assert.is(toHex(sha3(new Uint8Array(0))), '0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
  assert.is(toHex(sha3()), '0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
});

test('sha3-256("abc") matches FIPS 202', () => {
  assert.is(toHex(sha3(utf8('abc'))), '0x3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532');
});

test('sha3 over several parts equals sha3 of their concatenation', () => {
  bytesIs(sha3(utf8('a'), utf8('bc')), sha3(utf8('abc')));
  bytesIs(sha3(utf8('ab'), new Uint8Array(0), utf8('c')), sha3(utf8('abc')));
});

test('keccak256 (pre-standard padding) differs from SHA3-256', () => {
  assert.is(toHex(keccak256(new Uint8Array(0))), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  assert.is(toHex(keccak256(utf8('abc'))), '0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
});

// ---------------------------------------------------------------------------------------------
// addresses

test('addressFromPublicKey: last 20 bytes of SHA3-256(public key)', () => {
  const pk = Uint8Array.from({ length: PUBLIC_KEY_BYTES }, (_, i) => i & 0xff);
  const addr = addressFromPublicKey(pk);
  assert.is(addr.length, 20);
  bytesIs(addr, sha3(pk).slice(12));
  assert.is(addressToString(addr), toHex(sha3(pk).slice(12)));
  expectError(() => addressFromPublicKey(new Uint8Array(1951)), CryptoError, {
    code: 'CRYPTO_ERROR',
    message: 'public key must be 1952 bytes, got 1951',
  });
});

test('ecdsaAddressFromPublicKey: Ethereum address of an uncompressed key', () => {
  // secp256k1 generator point G (private key 1) has the well-known address 0x7e5f…bdf.
  const g = parseHex(
    '0x0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8',
    'g',
    65,
  );
  assert.is(toHex(ecdsaAddressFromPublicKey(g)), '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf');
  expectError(() => ecdsaAddressFromPublicKey(g.slice(0, 33)), CryptoError, { message: 'expected a 65-byte uncompressed secp256k1 public key' });
  const wrongPrefix = g.slice();
  wrongPrefix[0] = 0x02;
  expectError(() => ecdsaAddressFromPublicKey(wrongPrefix), CryptoError, { message: 'expected a 65-byte uncompressed secp256k1 public key' });
});

test('normalizeAddress: mixed case in, lowercase out; anything else malformed', () => {
  assert.is(normalizeAddress('0x' + 'AbCd'.repeat(10)), '0x' + 'abcd'.repeat(10));
  for (const bad of ['0x' + 'ab'.repeat(19), 'ab'.repeat(20), '0X' + 'ab'.repeat(20), 42, null]) {
    expectError(() => normalizeAddress(bad, 'genesis.alloc[0].address'), MalformedError, {
      field: 'genesis.alloc[0].address',
      message: 'malformed genesis.alloc[0].address: expected a 0x-prefixed 20-byte hex address',
    });
  }
  expectError(() => normalizeAddress('nope'), MalformedError, { field: 'address' });
});

test.run();
