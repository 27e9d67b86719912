/** sha3 (one part and several) against FIPS 202 test values, whose digests have bytes above 0x7f (the one-part path reads a latin1 digest). */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { toHex } from '../../../src/core/codec/bytes.js';
import { sha3, sha3Hex } from '../../../src/core/crypto/hash.js';

const h = suite('core/crypto/hash');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

h('SHA3-256 of "" and "abc" (FIPS 202 examples), one part and split', () => {
  assert.is(toHex(sha3(new Uint8Array(0))), '0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
  assert.is(toHex(sha3(utf8('abc'))), '0x3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532');
  assert.is(toHex(sha3(utf8('a'), utf8('bc'))), '0x3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532');
  assert.is(sha3Hex(utf8('abc')), '0x3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532');
});

h('every digest byte value comes out exact: 2,000 inputs against a Hash object', () => {
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const input = new Uint8Array(1 + (i % 600)).fill(i & 0xff);
    const got = sha3(input);
    assert.instance(got, Uint8Array);
    assert.is(got.length, 32);
    assert.is(toHex(got), '0x' + createHash('sha3-256').update(input).digest('hex'), `input ${i}`);
    for (const b of got) seen.add(b);
  }
  assert.is(seen.size, 256, 'the inputs covered every byte value in some digest');
});

h.run();
