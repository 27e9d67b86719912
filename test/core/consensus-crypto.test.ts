/** Consensus-side cryptography: domain separation, ML-DSA wrappers, attestations, VRF, RANDAO. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PUBLIC_KEY_BYTES, SECRET_KEY_BYTES, SIGNATURE_BYTES } from '../../src/core/constants.js';
import { concatBytes, toHex, u64LE, utf8 } from '../../src/core/codec/bytes.js';
import { chainIdBytes, Domain, type DomainTag, domainTagBytes, signingHash } from '../../src/core/crypto/domain.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { keygenFromSeed, nobleBackend, sign, verify } from '../../src/core/crypto/mldsa.js';
import { hashChain, mixRandao, randaoCommitment, randaoReveal, randaoSecret, verifyRandaoReveal } from '../../src/core/crypto/randao.js';
import { vrfProve, vrfSeed, vrfVerify } from '../../src/core/crypto/vrf.js';
import { CryptoError, MalformedError } from '../../src/core/errors.js';
import {
  type AttestationData,
  attestationFromJson,
  attestationSigningHash,
  attestationToJson,
  attestationHash,
  decodeAttestation,
  encodeAttestation,
  signAttestation,
  verifyAttestation,
} from '../../src/core/types/attestation.js';
import { AttestationMessageSsz } from '../../src/core/types/ssz.js';
import { bytesIs, bytesNot, expectError, filled, flipByte } from '../helpers/assert.js';

const CHAIN = 'svc-test';
const key = keygenFromSeed(filled(32, 1));
const otherKey = keygenFromSeed(filled(32, 2));

// ---------------------------------------------------------------------------------------------
// domain separation

const CHAIN_ID_MESSAGE = (id: string) => `chain id must be 1 to 12 bytes of UTF-8 without NUL, got ${JSON.stringify(id)}`;

test('chainIdBytes: 1..12 bytes of UTF-8, zero-padded to 12', () => {
  bytesIs(chainIdBytes('a'), concatBytes(utf8('a'), new Uint8Array(11)));
  bytesIs(chainIdBytes('svc-test'), concatBytes(utf8('svc-test'), new Uint8Array(4)));
  bytesIs(chainIdBytes('abcdefghijkl'), utf8('abcdefghijkl'));
  bytesIs(chainIdBytes('éééééé'), utf8('éééééé')); // 6 characters, 12 bytes
});

test('chainIdBytes: rejects "", 13-byte ids (counted in UTF-8 bytes) and NUL', () => {
  for (const bad of ['', 'abcdefghijklm', 'ééééééé', 'ab\u0000c', '\u0000']) {
    expectError(() => chainIdBytes(bad), CryptoError, { code: 'CRYPTO_ERROR', message: CHAIN_ID_MESSAGE(bad) });
  }
  assert.is(CHAIN_ID_MESSAGE(''), 'chain id must be 1 to 12 bytes of UTF-8 without NUL, got ""');
});

test('domain tags: exact ASCII strings, 32-byte zero-padded', () => {
  assert.equal({ ...Domain }, {
    Tx: 'svc/tx/v1',
    Authorization: 'svc/authorization/v1',
    Block: 'svc/block/v1',
    Vrf: 'svc/vrf/v1',
    Attestation: 'svc/attestation/v1',
    Randao: 'svc/randao/v1',
    BridgeBid: 'svc/bridge-bid/v1',
    BridgeRegistration: 'svc/bridge-registration/v1',
  });
  for (const tag of Object.values(Domain)) {
    const b = domainTagBytes(tag);
    assert.is(b.length, 32);
    bytesIs(b.subarray(0, tag.length), utf8(tag));
    assert.ok(b.subarray(tag.length).every((x) => x === 0));
  }
});

test('signingHash = SHA3-256(tag32 ‖ chainId12 ‖ payload) and differs per Domain tag', () => {
  const payload = utf8('payload');
  bytesIs(signingHash(Domain.Tx, CHAIN, payload), sha3(domainTagBytes(Domain.Tx), chainIdBytes(CHAIN), payload));
  const hashes = (Object.values(Domain) as DomainTag[]).map((t) => toHex(signingHash(t, CHAIN, payload)));
  assert.is(new Set(hashes).size, Object.values(Domain).length);
});

test('signingHash differs per chain id and payload; invalid chain id throws', () => {
  const p = utf8('x');
  bytesNot(signingHash(Domain.Block, 'svc-a', p), signingHash(Domain.Block, 'svc-b', p));
  bytesNot(signingHash(Domain.Block, CHAIN, p), signingHash(Domain.Block, CHAIN, utf8('y')));
  // Zero padding means "svc" and "svc\0" could collide; NUL is therefore refused.
  expectError(() => signingHash(Domain.Block, 'svc\u0000', p), CryptoError, { message: CHAIN_ID_MESSAGE('svc\u0000') });
  expectError(() => signingHash(Domain.Block, '', p), CryptoError, { code: 'CRYPTO_ERROR' });
});

// ---------------------------------------------------------------------------------------------
// ML-DSA wrappers

test('keygenFromSeed: deterministic, FIPS 204 sizes, seed must be 32 bytes', () => {
  const again = keygenFromSeed(filled(32, 1));
  bytesIs(again.publicKey, key.publicKey);
  bytesIs(again.secretKey, key.secretKey);
  assert.is(key.publicKey.length, PUBLIC_KEY_BYTES);
  assert.is(key.secretKey.length, SECRET_KEY_BYTES);
  bytesNot(otherKey.publicKey, key.publicKey);
  for (const n of [0, 31, 33, 64]) {
    expectError(() => keygenFromSeed(new Uint8Array(n)), CryptoError, { code: 'CRYPTO_ERROR', message: `key seed must be 32 bytes, got ${n}` });
  }
});

test('sign/verify: hedged by default, deterministic on request', () => {
  const msg = utf8('message');
  const h1 = sign(key.secretKey, msg);
  const h2 = sign(key.secretKey, msg);
  assert.is(h1.length, SIGNATURE_BYTES);
  bytesNot(h1, h2);
  assert.ok(verify(key.publicKey, msg, h1));
  assert.ok(verify(key.publicKey, msg, h2));
  const d1 = sign(key.secretKey, msg, { deterministic: true });
  const d2 = sign(key.secretKey, msg, { deterministic: true });
  bytesIs(d1, d2);
  assert.ok(verify(key.publicKey, msg, d1));
  assert.not.ok(verify(key.publicKey, utf8('other'), d1));
  assert.not.ok(verify(otherKey.publicKey, msg, d1));
});

test('sign: wrong-size secret key is a CryptoError in both modes', () => {
  for (const opts of [{}, { deterministic: true }]) {
    expectError(() => sign(new Uint8Array(10), utf8('m'), opts), CryptoError, { message: 'secret key must be 4032 bytes, got 10' });
  }
  expectError(() => nobleBackend.sign(key.secretKey.slice(1), utf8('m')), CryptoError, { message: 'secret key must be 4032 bytes, got 4031' });
});

test('verify: malformed inputs are false, never a throw', () => {
  const msg = utf8('m');
  const sig = sign(key.secretKey, msg, { deterministic: true });
  assert.is(verify(key.publicKey, msg, sig.slice(0, 3293)), false);
  assert.is(verify(key.publicKey, msg, concatBytes(sig, Uint8Array.of(0))), false);
  assert.is(verify(key.publicKey.slice(1), msg, sig), false);
  assert.is(verify(new Uint8Array(PUBLIC_KEY_BYTES), msg, sig), false);
  assert.is(verify(key.publicKey, msg, new Uint8Array(SIGNATURE_BYTES)), false);
  assert.is(verify(key.publicKey, msg, new Uint8Array(SIGNATURE_BYTES).fill(0xff)), false);
  assert.is(nobleBackend.verify(key.publicKey, msg, flipByte(sig, 3000)), false);
});

// ---------------------------------------------------------------------------------------------
// attestations

const data: AttestationData = {
  slot: 10,
  beaconBlockRoot: filled(32, 0xbb),
  source: { epoch: 1, root: filled(32, 0x01) },
  target: { epoch: 2, root: filled(32, 0x02) },
};
const att = signAttestation(5, data, key, CHAIN);

test('attestation: signing hash covers validator index and vote (128-byte SSZ message)', () => {
  const msg = AttestationMessageSsz.serialize({ validatorIndex: 5, data });
  assert.is(msg.length, 128);
  bytesIs(msg.subarray(0, 8), u64LE(5));
  bytesIs(msg.subarray(8, 16), u64LE(10));
  bytesIs(attestationSigningHash(5, data, CHAIN), sha3(domainTagBytes(Domain.Attestation), chainIdBytes(CHAIN), msg));
});

test('attestation: sign/verify; deterministic signature', () => {
  assert.is(att.validatorIndex, 5);
  assert.ok(verifyAttestation(att, key.publicKey, CHAIN));
  bytesIs(signAttestation(5, data, key, CHAIN).signature, att.signature);
});

test('attestation: wrong key, chain, index or vote fails', () => {
  assert.is(verifyAttestation(att, otherKey.publicKey, CHAIN), false);
  assert.is(verifyAttestation(att, key.publicKey, 'svc-other'), false);
  assert.is(verifyAttestation({ ...att, validatorIndex: 6 }, key.publicKey, CHAIN), false);
  assert.is(verifyAttestation({ ...att, data: { ...data, slot: 11 } }, key.publicKey, CHAIN), false);
  assert.is(verifyAttestation({ ...att, data: { ...data, target: { ...data.target, epoch: 3 } } }, key.publicKey, CHAIN), false);
  assert.is(verifyAttestation({ ...att, data: { ...data, source: { ...data.source, root: filled(32, 0x03) } } }, key.publicKey, CHAIN), false);
  assert.is(verifyAttestation({ ...att, signature: flipByte(att.signature, 7) }, key.publicKey, CHAIN), false);
  // A different vote is a different signature (double vote evidence).
  bytesNot(signAttestation(5, { ...data, beaconBlockRoot: filled(32, 0xbc) }, key, CHAIN).signature, att.signature);
});

test('attestation: JSON round trip is byte-identical and still verifies', () => {
  const j = attestationToJson(att);
  assert.equal(j.data, {
    slot: 10,
    beacon_block_root: '0x' + 'bb'.repeat(32),
    source: { epoch: 1, root: '0x' + '01'.repeat(32) },
    target: { epoch: 2, root: '0x' + '02'.repeat(32) },
  });
  assert.is(j.validator_index, 5);
  const text = JSON.stringify(j);
  const back = attestationFromJson(JSON.parse(text));
  assert.is(JSON.stringify(attestationToJson(back)), text);
  assert.ok(verifyAttestation(back, key.publicKey, CHAIN));
});

test('attestation: SSZ round trip (128 + 3,309 bytes), hash of the encoding; truncated or padded bytes are malformed', () => {
  const bytes = encodeAttestation(att);
  assert.is(bytes.length, 128 + SIGNATURE_BYTES);
  const back = decodeAttestation(bytes);
  assert.equal(attestationToJson(back), attestationToJson(att));
  assert.ok(verifyAttestation(back, key.publicKey, CHAIN));
  assert.is(toHex(attestationHash(att)), toHex(sha3(bytes)));
  assert.throws(() => decodeAttestation(bytes.subarray(1)), (e: unknown) => e instanceof MalformedError);
  assert.throws(() => decodeAttestation(concatBytes(bytes, new Uint8Array(1))), (e: unknown) => e instanceof MalformedError);
});

test('attestation: strict JSON', () => {
  const base = () => JSON.parse(JSON.stringify(attestationToJson(att))) as Record<string, any>;
  const cases: Array<[(j: Record<string, any>) => void, string]> = [
    [(j) => (j.extra = 1), 'malformed attestation.extra: unknown field'],
    [(j) => (j.data.extra = 1), 'malformed attestation.data.extra: unknown field'],
    [(j) => (j.data.source.extra = 1), 'malformed attestation.data.source.extra: unknown field'],
    [(j) => (j.validator_index = '5'), 'malformed attestation.validator_index: expected a non-negative integer'],
    [(j) => (j.data.slot = -1), 'malformed attestation.data.slot: expected a non-negative integer'],
    [(j) => (j.data.target.epoch = '2'), 'malformed attestation.data.target.epoch: expected a non-negative integer'],
    [(j) => (j.data.beacon_block_root = '0x00'), 'malformed attestation.data.beacon_block_root: expected 32 bytes, got 1'],
    [(j) => (j.data.source.root = '0x'), 'malformed attestation.data.source.root: expected 32 bytes, got 0'],
    [(j) => (j.signature = toHex(att.signature.slice(0, 3293))), 'malformed attestation.signature: expected 3309 bytes, got 3293'],
    [(j) => delete j.data, 'malformed attestation.data: expected an object'],
  ];
  for (const [mutate, message] of cases) {
    const j = base();
    mutate(j);
    expectError(() => attestationFromJson(j), MalformedError, { code: 'MALFORMED_INPUT', message });
  }
});

// ---------------------------------------------------------------------------------------------
// VRF

const MIX = filled(32, 0x5a);

test('vrfSeed = SHA3-256("vrf" ‖ mix ‖ uint64_le(slot)), distinct per slot and mix', () => {
  bytesIs(vrfSeed(MIX, 42), sha3(utf8('vrf'), MIX, u64LE(42)));
  bytesNot(vrfSeed(MIX, 42), vrfSeed(MIX, 43));
  bytesNot(vrfSeed(MIX, 42), vrfSeed(filled(32, 0x5b), 42));
  assert.throws(() => vrfSeed(MIX, -1), (e: unknown) => e instanceof RangeError);
});

test('vrfProve: deterministic ML-DSA signature over the domain-separated seed', () => {
  const seed = vrfSeed(MIX, 42);
  const p1 = vrfProve(key, seed, CHAIN);
  const p2 = vrfProve(key, seed, CHAIN);
  bytesIs(p1, p2);
  assert.is(p1.length, SIGNATURE_BYTES);
  bytesIs(p1, sign(key.secretKey, signingHash(Domain.Vrf, CHAIN, seed), { deterministic: true }));
  // Not interchangeable with a block or attestation signature over the same bytes.
  bytesNot(p1, sign(key.secretKey, signingHash(Domain.Block, CHAIN, seed), { deterministic: true }));
});

test('vrfVerify: valid proof verifies; wrong seed, chain, key or tampered proof fails', () => {
  const seed = vrfSeed(MIX, 42);
  const proof = vrfProve(key, seed, CHAIN);
  assert.ok(vrfVerify(key.publicKey, seed, proof, CHAIN));
  assert.is(vrfVerify(key.publicKey, vrfSeed(MIX, 43), proof, CHAIN), false);
  assert.is(vrfVerify(key.publicKey, seed, proof, 'svc-other'), false);
  assert.is(vrfVerify(otherKey.publicKey, seed, proof, CHAIN), false);
  assert.is(vrfVerify(key.publicKey, seed, flipByte(proof, 0), CHAIN), false);
  assert.is(vrfVerify(key.publicKey, seed, new Uint8Array(0), CHAIN), false);
  // Another validator's proof for the same seed is different and only valid under its own key.
  const otherProof = vrfProve(otherKey, seed, CHAIN);
  bytesNot(otherProof, proof);
  assert.ok(vrfVerify(otherKey.publicKey, seed, otherProof, CHAIN));
});

// ---------------------------------------------------------------------------------------------
// RANDAO

const KEY_SEED = filled(32, 1);
const LENGTH = 8;

test('randaoSecret = SHA3-256("svc/randao-secret/v1" ‖ key seed); needs 32 bytes', () => {
  bytesIs(randaoSecret(KEY_SEED), sha3(utf8('svc/randao-secret/v1'), KEY_SEED));
  bytesNot(randaoSecret(KEY_SEED), randaoSecret(filled(32, 2)));
  expectError(() => randaoSecret(new Uint8Array(31)), CryptoError, { code: 'CRYPTO_ERROR', message: 'RANDAO secret needs the 32-byte key seed' });
});

test('hashChain: H^n with H = SHA3-256; H^0 is the identity', () => {
  const v = utf8('v');
  bytesIs(hashChain(v, 0), v);
  bytesIs(hashChain(v, 1), sha3(v));
  bytesIs(hashChain(v, 3), sha3(sha3(sha3(v))));
  for (const n of [-1, 1.5, NaN]) {
    expectError(() => hashChain(v, n), CryptoError, { message: `hash chain length must be a non-negative integer, got ${n}` });
  }
});

test('randao: commitment = H^n(secret)', () => {
  let v = randaoSecret(KEY_SEED);
  for (let i = 0; i < LENGTH; i++) v = sha3(v);
  bytesIs(randaoCommitment(KEY_SEED, LENGTH), v);
  bytesIs(randaoCommitment(KEY_SEED, 0), randaoSecret(KEY_SEED));
});

test('randao: reveal k verifies against reveal k-1 (the commitment for k = 1), down to the secret', () => {
  let last = randaoCommitment(KEY_SEED, LENGTH);
  for (let k = 1; k <= LENGTH; k++) {
    const reveal = randaoReveal(KEY_SEED, LENGTH, k);
    assert.ok(verifyRandaoReveal(reveal, last), `reveal ${k}`);
    last = reveal;
  }
  bytesIs(last, randaoSecret(KEY_SEED));
});

test('randao: replayed, skipped, foreign or future reveals fail', () => {
  const commitment = randaoCommitment(KEY_SEED, LENGTH);
  const r1 = randaoReveal(KEY_SEED, LENGTH, 1);
  const r2 = randaoReveal(KEY_SEED, LENGTH, 2);
  assert.is(verifyRandaoReveal(r1, r1), false, 'replay of the stored value');
  assert.is(verifyRandaoReveal(commitment, commitment), false);
  assert.is(verifyRandaoReveal(r2, commitment), false, 'skipping a link');
  assert.is(verifyRandaoReveal(r1, r2), false, 'going forward');
  assert.is(verifyRandaoReveal(randaoReveal(filled(32, 2), LENGTH, 1), commitment), false, 'another validator');
  assert.is(verifyRandaoReveal(r1, commitment.slice(0, 31)), false, 'short stored value');
  assert.is(verifyRandaoReveal(new Uint8Array(0), commitment), false);
});

test('randaoReveal: k outside 1..length is refused', () => {
  for (const k of [0, -1, LENGTH + 1]) {
    expectError(() => randaoReveal(KEY_SEED, LENGTH, k), CryptoError, {
      message: `RANDAO chain exhausted or k out of range (k=${k}, length=${LENGTH})`,
    });
  }
});

test('mixRandao = SHA3-256(mix ‖ reveal); order-sensitive', () => {
  const r1 = randaoReveal(KEY_SEED, LENGTH, 1);
  bytesIs(mixRandao(MIX, r1), sha3(MIX, r1));
  bytesNot(mixRandao(MIX, r1), mixRandao(r1, MIX));
});

test.run();
