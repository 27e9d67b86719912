import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sha3 } from '../../src/core/crypto/hash.js';
import { toHex } from '../../src/core/codec/bytes.js';

test('sha3-256 of the empty string matches FIPS 202', () => {
  assert.is(toHex(sha3(new Uint8Array(0))), '0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
});

test.run();
