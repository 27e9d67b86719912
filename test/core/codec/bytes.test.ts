/**
 * bytesToBigintBE against the byte-at-a-time definition: every length a decoder meets (the 32-byte
 * transaction value, hashes, short fields), leading zeros, and the Number/64-bit-word boundaries.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { bigintToBytesBE, bytesToBigintBE } from '../../../src/core/codec/bytes.js';

/** The definition: one shift per byte. */
function reference(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

test('bytesToBigintBE equals the byte-wise definition for every length and leading-zero count up to 40 bytes', () => {
  for (let len = 0; len <= 40; len++) {
    for (let zeros = 0; zeros <= len; zeros++) {
      const b = new Uint8Array(randomBytes(len));
      b.fill(0, 0, zeros);
      if (zeros < len) b[zeros] ||= 1;
      assert.is(bytesToBigintBE(b), reference(b), `${len} bytes, ${zeros} leading zeros: ${Buffer.from(b).toString('hex')}`);
    }
  }
});

test('bytesToBigintBE reads a view at any offset, all-ones values and the 6/7-byte Number boundary', () => {
  const backing = new Uint8Array(randomBytes(64));
  for (let off = 0; off < 9; off++) assert.is(bytesToBigintBE(backing.subarray(off, off + 32)), reference(backing.subarray(off, off + 32)));
  for (let len = 1; len <= 33; len++) assert.is(bytesToBigintBE(new Uint8Array(len).fill(0xff)), (1n << BigInt(8 * len)) - 1n);
  for (const v of [2n ** 48n - 1n, 2n ** 48n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 56n + 3n, 2n ** 64n - 1n, 2n ** 64n, 10n ** 18n, 10n ** 21n + 7n]) {
    assert.is(bytesToBigintBE(bigintToBytesBE(v, 32)), v, `${v}`);
  }
});

test.run();
