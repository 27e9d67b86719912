/**
 * svc's ML-DSA-65 signer (wasm/mldsa65/sign.ts) against @noble/post-quantum, called directly:
 * for the same key, message and rnd FIPS 204 defines one signature, so the two must agree byte for
 * byte, deterministic (rnd = 0) and hedged (rnd given). Messages cross the module's 1,024-byte
 * message buffer; liboqs checks the random hedged signatures; malformed keys and sizes are refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMLDSA65, type MLDSA65 } from '@oqs/liboqs-js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { MlDsaWasm, SIGN_RANDOM_BYTES } from '../../../src/core/crypto/mldsa-wasm.js';
import { initSignatureBackend, nobleBackend, sign, signatureBackend } from '../../../src/core/crypto/mldsa.js';
import { CryptoError } from '../../../src/core/errors.js';
import { expectError } from '../../helpers/assert.js';
import { Rng } from '../../helpers/fuzz.js';

const rng = new Rng(20261203);
const w = new MlDsaWasm(2);
const ZERO = new Uint8Array(SIGN_RANDOM_BYTES);
/** Around the module's 1,024-byte message buffer and the SHAKE256 rate (136). */
const LENGTHS = [0, 1, 31, 32, 33, 135, 136, 137, 1023, 1024, 1025, 2048, 2049, 5000];
let oqs: MLDSA65;

test.before(async () => {
  oqs = await createMLDSA65();
});

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('deterministic signatures are noble\'s, byte for byte, over 42 keys and messages of every length around the buffers', () => {
  for (let i = 0; i < LENGTHS.length * 3; i++) {
    const kp = ml_dsa65.keygen(rng.bytes(32));
    const msg = rng.bytes(LENGTHS[i % LENGTHS.length]!);
    const want = ml_dsa65.sign(msg, kp.secretKey, { extraEntropy: false });
    assert.is(hex(w.sign(kp.secretKey, msg, ZERO)), hex(want), `key ${i}, ${msg.length}-byte message`);
  }
});

test('hedged signatures with a given rnd are noble\'s with that rnd; fresh ones verify under liboqs and noble and differ each time', () => {
  for (let i = 0; i < 12; i++) {
    const kp = ml_dsa65.keygen(rng.bytes(32));
    const msg = rng.bytes(LENGTHS[(i * 5) % LENGTHS.length]!);
    const rnd = rng.bytes(SIGN_RANDOM_BYTES);
    assert.is(hex(w.sign(kp.secretKey, msg, rnd)), hex(ml_dsa65.sign(msg, kp.secretKey, { extraEntropy: rnd })), `key ${i}`);
  }
  const kp = ml_dsa65.keygen(rng.bytes(32));
  const msg = rng.bytes(32);
  const backend = signatureBackend();
  assert.is(backend.name, 'svc-wasm', 'a process that chose no backend signs with svc-wasm');
  const a = backend.sign(kp.secretKey, msg);
  const b = backend.sign(kp.secretKey, msg);
  assert.is.not(hex(a), hex(b), 'two hedged signatures of one message differ');
  for (const sig of [a, b]) {
    assert.ok(oqs.verify(new Uint8Array(msg), new Uint8Array(sig), new Uint8Array(kp.publicKey)), 'liboqs verifies');
    assert.ok(ml_dsa65.verify(sig, msg, kp.publicKey), 'noble verifies');
  }
});

test('sign(…, deterministic) gives the same signature under every backend', async () => {
  const kp = ml_dsa65.keygen(rng.bytes(32));
  const msg = rng.bytes(32);
  try {
    const bySvc = (await initSignatureBackend('svc-wasm')).name;
    assert.is(bySvc, 'svc-wasm');
    const svc = sign(kp.secretKey, msg, { deterministic: true });
    await initSignatureBackend('liboqs');
    const viaLiboqs = sign(kp.secretKey, msg, { deterministic: true });
    assert.is(hex(svc), hex(nobleBackend.signDeterministic(kp.secretKey, msg)));
    assert.is(hex(viaLiboqs), hex(svc));
  } finally {
    await initSignatureBackend('auto');
  }
});

test('the kept expansion of the last key: keys in turn, repeated, and after a refused key, every signature noble\'s', () => {
  const a = ml_dsa65.keygen(rng.bytes(32));
  const b = ml_dsa65.keygen(rng.bytes(32));
  // A key differing from a only in its last byte (t0): the whole key decides reuse, not a prefix.
  const a2 = a.secretKey.slice();
  a2[a2.length - 1] ^= 1;
  const broken = a.secretKey.slice();
  broken[200] = 0xff;
  const order: Array<Uint8Array | 'broken'> = [a.secretKey, a.secretKey, b.secretKey, a.secretKey, a2, a.secretKey, 'broken', a.secretKey, 'broken', b.secretKey];
  for (const [i, sk] of order.entries()) {
    const msg = rng.bytes(32);
    if (sk === 'broken') {
      expectError(() => w.sign(broken, msg, ZERO), CryptoError, { message: 'malformed secret key: a coefficient of s1 or s2 is outside [-4, 4]' });
      continue;
    }
    assert.is(hex(w.sign(sk, msg, ZERO)), hex(ml_dsa65.sign(msg, sk, { extraEntropy: false })), `signature ${i}`);
  }
});

test('malformed input is a CryptoError: key and rnd sizes, s1 or s2 coefficients outside [-η, η]', () => {
  const kp = ml_dsa65.keygen(rng.bytes(32));
  const msg = rng.bytes(32);
  expectError(() => w.sign(kp.secretKey.subarray(1), msg, ZERO), CryptoError, { message: 'secret key must be 4032 bytes, got 4031' });
  expectError(() => w.sign(kp.secretKey, msg, new Uint8Array(31)), CryptoError, { message: 'signing randomness must be 32 bytes, got 31' });
  // s1 starts at byte 128, s2 at 768 (ρ, K, tr, then five 128-byte s1 polynomials): a nibble of 9 is η − 9 = −5.
  for (const at of [128, 128 + 5 * 128 - 1, 768, 768 + 6 * 128 - 1]) {
    for (const byte of [0x09, 0x90, 0xff]) {
      const bad = kp.secretKey.slice();
      bad[at] = byte;
      expectError(() => w.sign(bad, msg, ZERO), CryptoError, { message: 'malformed secret key: a coefficient of s1 or s2 is outside [-4, 4]' });
    }
  }
  // The instance is still good after refusals.
  assert.is(hex(w.sign(kp.secretKey, msg, ZERO)), hex(ml_dsa65.sign(msg, kp.secretKey, { extraEntropy: false })));
});

test('a key that decodes but is no real key (t0 and tr arbitrary) still gives noble\'s signature', () => {
  for (const fill of [0x00, 0x44, 0x88]) {
    const sk = new Uint8Array(4032).fill(fill);
    const msg = rng.bytes(32);
    assert.is(hex(w.sign(sk, msg, ZERO)), hex(ml_dsa65.sign(msg, sk, { extraEntropy: false })), `every byte 0x${fill.toString(16)}`);
  }
});

test.run();
