/**
 * Interoperability with an independent implementation (DECISIONS: "signatures must verify under any
 * conforming FIPS 204 implementation"): @noble/post-quantum ↔ liboqs (WebAssembly), both directions,
 * for ML-DSA-65 and ML-KEM-1024. liboqs and noble are called directly here, not through the
 * project's backend wrappers, so a wrapper bug (argument order, context, pre-hashing) cannot hide.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMLDSA65, createMLKEM1024, type MLDSA65, type MLKEM1024 } from '@oqs/liboqs-js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { PUBLIC_KEY_BYTES, SECRET_KEY_BYTES, SIGNATURE_BYTES } from '../../src/core/constants.js';
import { utf8 } from '../../src/core/codec/bytes.js';
import { Domain, signingHash } from '../../src/core/crypto/domain.js';
import {
  initSignatureBackend,
  keygenFromSeed,
  nobleBackend,
  sign,
  signatureBackend,
  verify,
} from '../../src/core/crypto/mldsa.js';
import {
  KEM_CIPHERTEXT_BYTES,
  KEM_PUBLIC_KEY_BYTES,
  KEM_SECRET_KEY_BYTES,
  kemDecapsulate,
  kemEncapsulate,
  kemKeygen,
} from '../../src/core/crypto/mlkem.js';
import { CryptoError } from '../../src/core/errors.js';
import { encodeUnsignedTx, signStandardTx, txSigningHash, verifyTxSignature } from '../../src/core/types/transaction.js';
import { signBlock, headerSigningHash, signedHeaderOf } from '../../src/core/types/block.js';
import { bytesIs, bytesNot, expectError, filled, flipByte } from '../helpers/assert.js';

let oqsSig: MLDSA65;
let oqsKem: MLKEM1024;

test.before(async () => {
  oqsSig = await createMLDSA65();
  oqsKem = await createMLKEM1024();
});

test.after(async () => {
  oqsSig.destroy();
  oqsKem.destroy();
  // Leave the process-wide backend as other test files expect it.
  await initSignatureBackend('noble');
});

const key = keygenFromSeed(filled(32, 1));
const msg = signingHash(Domain.Tx, 'svc-test', utf8('interop message'));

// ---------------------------------------------------------------------------------------------
// ML-DSA-65: project/noble → liboqs

test('ML-DSA-65: hedged noble signature (nobleBackend.sign) verifies under liboqs', () => {
  const sig = nobleBackend.sign(key.secretKey, msg);
  assert.is(sig.length, SIGNATURE_BYTES);
  assert.ok(oqsSig.verify(msg, sig, key.publicKey));
  assert.is(oqsSig.verify(utf8('other message'), sig, key.publicKey), false);
  assert.is(oqsSig.verify(msg, flipByte(sig, 10), key.publicKey), false);
});

test('ML-DSA-65: deterministic project signature (sign, deterministic) verifies under liboqs', () => {
  const sig = sign(key.secretKey, msg, { deterministic: true });
  assert.ok(oqsSig.verify(msg, sig, key.publicKey));
  assert.is(oqsSig.verify(msg, sig, keygenFromSeed(filled(32, 2)).publicKey), false);
});

test('ML-DSA-65: a project-signed transaction and block verify under liboqs', () => {
  const tx = signStandardTx({ nonce: 0n, gasPrice: 1n, gasLimit: 21_000n, to: filled(20, 1), value: 1n, data: new Uint8Array(0) }, key, 'svc-test');
  const hash = signingHash(Domain.Tx, 'svc-test', encodeUnsignedTx(tx));
  bytesIs(hash, txSigningHash(tx, 'svc-test'));
  assert.ok(oqsSig.verify(hash, tx.signature, key.publicKey));
  const header = {
    index: 1, timestampMs: 2000, parentHash: filled(32, 1), merkleRoot: filled(32, 2), validatorId: filled(20, 3),
    vrfProof: new Uint8Array(SIGNATURE_BYTES), vrfSeed: filled(32, 4), randaoReveal: filled(32, 5), stateRoot: filled(32, 6),
  };
  const block = signBlock(header, [], key, 'svc-test', 0);
  assert.ok(oqsSig.verify(headerSigningHash(signedHeaderOf(header, 'svc-test', 0)), block.signature, key.publicKey));
});

// ---------------------------------------------------------------------------------------------
// ML-DSA-65: liboqs → noble / project

test('ML-DSA-65: liboqs keys and signatures verify under noble (sig, msg, pk) and the project verify', () => {
  const kp = oqsSig.generateKeyPair();
  assert.is(kp.publicKey.length, PUBLIC_KEY_BYTES);
  assert.is(kp.secretKey.length, SECRET_KEY_BYTES);
  const sig = oqsSig.sign(msg, kp.secretKey);
  assert.is(sig.length, SIGNATURE_BYTES);
  assert.ok(ml_dsa65.verify(sig, msg, kp.publicKey));
  assert.ok(nobleBackend.verify(kp.publicKey, msg, sig));
  assert.ok(verify(kp.publicKey, msg, sig));
  assert.is(ml_dsa65.verify(sig, utf8('other'), kp.publicKey), false);
  assert.is(ml_dsa65.verify(flipByte(sig, 3308), msg, kp.publicKey), false);
});

test('ML-DSA-65: liboqs signs with a project (seed-derived) secret key; noble verifies', () => {
  const sig = oqsSig.sign(msg, key.secretKey);
  assert.ok(ml_dsa65.verify(sig, msg, key.publicKey));
  assert.ok(verify(key.publicKey, msg, sig));
});

test('ML-DSA-65: noble signs with a liboqs secret key; liboqs verifies', () => {
  const kp = oqsSig.generateKeyPair();
  const sig = nobleBackend.sign(kp.secretKey, msg);
  assert.ok(oqsSig.verify(msg, sig, kp.publicKey));
});

// ---------------------------------------------------------------------------------------------
// backend selection

test('initSignatureBackend("noble") returns the working noble backend', async () => {
  const b = await initSignatureBackend('noble', () => assert.unreachable('no warning expected'));
  assert.is(b.name, 'noble');
  assert.is(b, nobleBackend);
  assert.is(signatureBackend(), b);
  const sig = b.sign(key.secretKey, msg);
  assert.ok(b.verify(key.publicKey, msg, sig));
  assert.ok(oqsSig.verify(msg, sig, key.publicKey));
  assert.is(b.verify(key.publicKey, msg, sig.slice(0, 3293)), false);
});

test('initSignatureBackend("liboqs") returns a working liboqs backend that interoperates', async () => {
  const b = await initSignatureBackend('liboqs', () => assert.unreachable('no warning expected'));
  assert.is(b.name, 'liboqs');
  assert.is(signatureBackend(), b);
  const sig = b.sign(key.secretKey, msg);
  assert.is(sig.length, SIGNATURE_BYTES);
  assert.ok(b.verify(key.publicKey, msg, sig));
  assert.ok(ml_dsa65.verify(sig, msg, key.publicKey));
  assert.ok(nobleBackend.verify(key.publicKey, msg, sig));
  assert.ok(b.verify(key.publicKey, msg, nobleBackend.sign(key.secretKey, msg)));
  // Same wrapper contract as noble: malformed input is false, wrong secret key size throws.
  assert.is(b.verify(key.publicKey, msg, sig.slice(0, 3293)), false);
  assert.is(b.verify(key.publicKey.slice(1), msg, sig), false);
  assert.is(b.verify(key.publicKey, msg, flipByte(sig, 0)), false);
  expectError(() => b.sign(new Uint8Array(5), msg), CryptoError, { message: 'secret key must be 4032 bytes, got 5' });
  // The module-level sign/verify now route through liboqs; transactions still verify.
  const tx = signStandardTx({ nonce: 0n, gasPrice: 1n, gasLimit: 21_000n, to: filled(20, 1), value: 1n, data: new Uint8Array(0) }, key, 'svc-test');
  verifyTxSignature(tx, 'svc-test');
  // Deterministic signing never depends on the backend.
  bytesIs(sign(key.secretKey, msg, { deterministic: true }), nobleDeterministic(msg));
  await initSignatureBackend('noble');
  assert.is(signatureBackend().name, 'noble');
});

// ---------------------------------------------------------------------------------------------
// ML-KEM-1024

test('ML-KEM-1024: project keygen is deterministic from a 64-byte seed, FIPS 203 sizes', () => {
  const a = kemKeygen(filled(64, 9));
  const b = kemKeygen(filled(64, 9));
  bytesIs(a.publicKey, b.publicKey);
  bytesIs(a.secretKey, b.secretKey);
  assert.is(a.publicKey.length, KEM_PUBLIC_KEY_BYTES);
  assert.is(a.secretKey.length, KEM_SECRET_KEY_BYTES);
  bytesNot(kemKeygen().publicKey, kemKeygen().publicKey);
  expectError(() => kemKeygen(new Uint8Array(32)), CryptoError, { code: 'CRYPTO_ERROR', message: 'KEM seed must be 64 bytes, got 32' });
});

test('ML-KEM-1024: project encapsulate → liboqs decapsulate gives the same secret', () => {
  const kp = kemKeygen(filled(64, 9));
  const { ciphertext, sharedSecret } = kemEncapsulate(kp.publicKey);
  assert.is(ciphertext.length, KEM_CIPHERTEXT_BYTES);
  assert.is(sharedSecret.length, 32);
  bytesIs(oqsKem.decapsulate(ciphertext, kp.secretKey), sharedSecret);
  bytesIs(kemDecapsulate(ciphertext, kp.secretKey), sharedSecret);
});

test('ML-KEM-1024: liboqs encapsulate → project decapsulate gives the same secret', () => {
  const kp = oqsKem.generateKeyPair();
  const { ciphertext, sharedSecret } = oqsKem.encapsulate(kp.publicKey);
  bytesIs(kemDecapsulate(ciphertext, kp.secretKey), sharedSecret);
  // And to a project key.
  const mine = kemKeygen(filled(64, 10));
  const enc = oqsKem.encapsulate(mine.publicKey);
  bytesIs(kemDecapsulate(enc.ciphertext, mine.secretKey), enc.sharedSecret);
});

test('ML-KEM-1024: tampered ciphertext yields an unrelated secret in both implementations (implicit rejection)', () => {
  const kp = kemKeygen(filled(64, 9));
  const { ciphertext, sharedSecret } = kemEncapsulate(kp.publicKey);
  const bad = flipByte(ciphertext, 100);
  const ours = kemDecapsulate(bad, kp.secretKey);
  bytesNot(ours, sharedSecret);
  bytesIs(oqsKem.decapsulate(bad, kp.secretKey), ours);
});

test('ML-KEM-1024: wrong sizes are CryptoErrors', () => {
  const kp = kemKeygen(filled(64, 9));
  const { ciphertext } = kemEncapsulate(kp.publicKey);
  expectError(() => kemEncapsulate(kp.publicKey.slice(1)), CryptoError, { message: 'KEM public key must be 1568 bytes' });
  expectError(() => kemDecapsulate(ciphertext.slice(1), kp.secretKey), CryptoError, { message: 'KEM ciphertext must be 1568 bytes' });
  expectError(() => kemDecapsulate(ciphertext, kp.secretKey.slice(1)), CryptoError, { message: 'KEM secret key must be 3168 bytes' });
});

// ---------------------------------------------------------------------------------------------

function nobleDeterministic(m: Uint8Array): Uint8Array {
  return ml_dsa65.sign(m, key.secretKey, { extraEntropy: false });
}

test.run();
