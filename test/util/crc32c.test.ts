/**
 * CRC32C: the published check values (RFC 3720 appendix B.4 and the "123456789" check), and the
 * eight-byte path agrees with a byte-at-a-time reference over every length and offset mix.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32c } from '../../src/util/crc32c.js';

/** Bit-at-a-time CRC32C: slow and obviously the definition. */
function reference(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

test('check values', () => {
  assert.is(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.is(crc32c(new Uint8Array(32)), 0x8a9136aa);
  assert.is(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  assert.is(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e);
  assert.is(crc32c(new Uint8Array(0)), 0);
});

test('matches the bitwise definition for every length up to 70 and any sub-range', () => {
  const data = Uint8Array.from({ length: 200 }, (_, i) => (i * 167 + 13) & 0xff);
  for (let n = 0; n <= 70; n++) assert.is(crc32c(data.subarray(0, n)), reference(data.subarray(0, n)), `length ${n}`);
  for (const [s, e] of [[3, 3], [1, 9], [5, 200], [7, 120]] as const) assert.is(crc32c(data, s, e), reference(data.subarray(s, e)), `[${s}, ${e})`);
});

test.run();
