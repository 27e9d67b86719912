/** The key-schedule hook of the hybrid handshake and its prologue, checked against the noise package's own HKDF. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import '../../../src/node/p2p/polyfill.js';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { hybridPrologue, kemMixingCrypto } from '../../../src/node/p2p/hybrid-noise.js';
import { kemDecapsulate, kemEncapsulate, kemKeygen } from '../../../src/core/crypto/mlkem.js';

const ck = new Uint8Array(32).fill(1);
const dh = new Uint8Array(32).fill(2);

test('the first HKDF (the ee MixKey) is followed by MixKey(kem secret); later ones are untouched', () => {
  const kem = kemKeygen(new Uint8Array(64).fill(3));
  const { ciphertext, sharedSecret } = kemEncapsulate(kem.publicKey);
  assert.equal(kemDecapsulate(ciphertext, kem.secretKey), sharedSecret);
  const mixing = kemMixingCrypto(sharedSecret, undefined);
  const [ck1] = defaultCrypto.getHKDF(ck, dh);
  const expected = defaultCrypto.getHKDF(ck1, sharedSecret);
  const got = mixing.getHKDF(ck, dh);
  assert.equal([...got[0]], [...expected[0]], 'chaining key');
  assert.equal([...got[1]], [...expected[1]], 'cipher key');
  assert.not.equal([...got[0]], [...defaultCrypto.getHKDF(ck, dh)[0]], 'differs from classical Noise');
  assert.equal([...mixing.getHKDF(ck, dh)[0]], [...defaultCrypto.getHKDF(ck, dh)[0]], 'es, se and split pass through');
});

test('another KEM secret (a tampered ciphertext decapsulates to one) gives other keys', () => {
  const kem = kemKeygen(new Uint8Array(64).fill(4));
  const { ciphertext, sharedSecret } = kemEncapsulate(kem.publicKey);
  const tampered = ciphertext.slice();
  tampered[100]! ^= 1;
  const implicit = kemDecapsulate(tampered, kem.secretKey);
  assert.not.equal([...implicit], [...sharedSecret], 'implicit rejection: an unrelated secret');
  const a = kemMixingCrypto(sharedSecret, undefined).getHKDF(ck, dh);
  const b = kemMixingCrypto(implicit, undefined).getHKDF(ck, dh);
  assert.not.equal([...a[1]], [...b[1]]);
});

test('the prologue binds the construction, the genesis hash and both KEM messages', () => {
  const g = new Uint8Array(32).fill(9);
  const pk = new Uint8Array(1568).fill(1);
  const ct = new Uint8Array(1568).fill(2);
  const p = hybridPrologue(g, pk, ct);
  assert.is(new TextDecoder().decode(p.subarray(0, 25)), 'svc/noise-xx-mlkem1024/v1');
  assert.is(p.length, 25 + 32 + 1568 + 1568);
  assert.equal([...p.subarray(25, 57)], [...g]);
  assert.equal([...p.subarray(57, 57 + 1568)], [...pk]);
  assert.equal([...p.subarray(57 + 1568)], [...ct]);
});

test('AEAD bytes are reported to the observer', () => {
  const seen: Array<[string, number]> = [];
  const c = kemMixingCrypto(new Uint8Array(32), { handshake() {}, bytes: (d, n) => seen.push([d, n]) });
  const k = new Uint8Array(32).fill(7);
  const nonce = new Uint8Array(12);
  const sealed = c.chaCha20Poly1305Encrypt(new Uint8Array(100), nonce, new Uint8Array(0), k);
  c.chaCha20Poly1305Decrypt(sealed, nonce, new Uint8Array(0), k);
  assert.equal(seen, [['out', 116], ['in', 116]]);
});

test.run();
