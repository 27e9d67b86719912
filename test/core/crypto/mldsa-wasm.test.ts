/**
 * svc's ML-DSA-65 verifier (wasm/mldsa65/verify.ts) against two independent implementations:
 * liboqs (called directly, not through the project's wrapper) decides every case, noble signs
 * half the keys. Valid signatures, seeded random mutations of signatures, keys and messages,
 * hand-made malformed hint encodings and out-of-bound z, long messages, and the key cache
 * (hits, evictions, keys sharing a prefix never share a slot). A failing mutation prints its
 * seed and position.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { createMLDSA65, type MLDSA65 } from '@oqs/liboqs-js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { MlDsaWasm } from '../../../src/core/crypto/mldsa-wasm.js';
import { backendFromEnv, initSignatureBackend, keyCacheEntriesFromEnv, nobleBackend, signatureBackend } from '../../../src/core/crypto/mldsa.js';
import { CryptoError } from '../../../src/core/errors.js';
import { expectError } from '../../helpers/assert.js';
import { Rng } from '../../helpers/fuzz.js';

/** Signature layout (FIPS 204, ML-DSA-65): c̃ | z (5 × 640) | hint (ω = 55 positions, then 6 counts). */
const CTILDE = 48;
const HINT_AT = CTILDE + 5 * 640;
const OMEGA = 55;
const GAMMA1 = 1 << 19;
const BETA = 196;
/** One cached key: the key padded to 1,984 bytes, tr (64), Â (30 × 1 KiB) and t̂1 (6 × 1 KiB). */
const SLOT_BYTES = 1984 + 64 + 30 * 1024 + 6 * 1024;

interface Case {
  pk: Uint8Array;
  msg: Uint8Array;
  sig: Uint8Array;
}

let oqs: MLDSA65;
const cases: Case[] = [];
const rng = new Rng(20261125);

test.before(async () => {
  oqs = await createMLDSA65();
  for (let i = 0; i < 16; i++) {
    const kp = ml_dsa65.keygen(rng.bytes(32));
    const msg = rng.bytes(32);
    // Half signed by noble, half by liboqs: the verifier must accept both.
    const sig = i % 2 === 0 ? ml_dsa65.sign(msg, kp.secretKey) : oqs.sign(msg, kp.secretKey);
    cases.push({ pk: kp.publicKey, msg, sig });
  }
});

const oqsSays = (c: Case): boolean => oqs.verify(new Uint8Array(c.msg), new Uint8Array(c.sig), new Uint8Array(c.pk));

test('its Keccak: SHAKE128 and SHAKE256 match node:crypto for lengths around the rates', () => {
  const v = new MlDsaWasm(1);
  for (const [rate, name] of [[168, 'shake128'], [136, 'shake256']] as const) {
    for (const len of [0, 1, 7, 8, 135, 136, 137, 167, 168, 169, 335, 336, 337, 600]) {
      const data = rng.bytes(len);
      const want = createHash(name, { outputLength: 300 }).update(data).digest('hex');
      assert.is(Buffer.from(v.shake(rate, data, 300)).toString('hex'), want, `${name} of ${len} bytes`);
    }
  }
});

test('valid signatures (noble- and liboqs-made) verify, cold and from the cache', () => {
  const v = new MlDsaWasm(64);
  for (const c of cases) assert.ok(v.verify(c.pk, c.msg, c.sig));
  for (const c of cases) assert.ok(v.verify(c.pk, c.msg, c.sig));
  assert.equal(v.stats(), { hits: cases.length, misses: cases.length, entries: cases.length, bytes: cases.length * SLOT_BYTES, maxBytes: 64 * SLOT_BYTES });
});

test('random bit flips in signatures, keys and messages: the same answer as liboqs, every time', () => {
  const v = new MlDsaWasm(64);
  let accepted = 0;
  for (let n = 0; n < 1500; n++) {
    const c = cases[n % cases.length]!;
    const where = rng.int(0, 9);
    const m: Case = { pk: c.pk.slice(), msg: c.msg.slice(), sig: c.sig.slice() };
    // Mostly the signature, in each of its parts; sometimes the key or the message.
    const [target, from, to] = where < 2 ? [m.sig, 0, CTILDE] : where < 5 ? [m.sig, CTILDE, HINT_AT] : where < 7 ? [m.sig, HINT_AT, m.sig.length] : where < 9 ? [m.pk, 0, m.pk.length] : [m.msg, 0, m.msg.length];
    const at = rng.int(from, to - 1);
    target[at]! ^= 1 << rng.int(0, 7);
    const ours = v.verify(m.pk, m.msg, m.sig);
    assert.is(ours, oqsSays(m), `mutation ${n} (seed ${rng.seed}): part ${where}, byte ${at}`);
    if (ours) accepted++;
  }
  assert.is(accepted, 0);
});

test('malformed hint encodings are rejected, as liboqs rejects them', () => {
  const v = new MlDsaWasm(64);
  for (const c of cases) {
    const counts = c.sig.subarray(HINT_AT + OMEGA);
    const used = counts[5]!;
    const variants: Uint8Array[] = [];
    if (used < OMEGA) {
      // A non-zero byte past the last hint position: a second encoding of the same hint.
      const s = c.sig.slice();
      s[HINT_AT + OMEGA - 1] = 1;
      variants.push(s);
    }
    {
      // A count past ω.
      const s = c.sig.slice();
      s[HINT_AT + OMEGA + 5] = OMEGA + 1;
      variants.push(s);
    }
    // Counts that decrease.
    const firstNonEmpty = Array.from(counts.subarray(0, 5)).findIndex((k) => k > 0);
    if (firstNonEmpty >= 0) {
      const s = c.sig.slice();
      s[HINT_AT + OMEGA + firstNonEmpty + 1] = 0;
      variants.push(s);
    }
    // Positions within a polynomial that do not increase.
    const end0 = counts[0]!;
    if (end0 >= 2) {
      const s = c.sig.slice();
      s[HINT_AT + 1] = s[HINT_AT]!;
      variants.push(s);
    }
    for (const s of variants) {
      assert.is(v.verify(c.pk, c.msg, s), false);
      assert.is(oqsSays({ ...c, sig: s }), false);
    }
  }
});

test('a z coefficient at or past γ1 − β is rejected', () => {
  const v = new MlDsaWasm(4);
  const c = cases[0]!;
  for (const z of [GAMMA1 - BETA, -(GAMMA1 - BETA), GAMMA1, GAMMA1 - 1]) {
    const s = c.sig.slice();
    // The first coefficient of z's first polynomial: twenty bits, little-endian, holding γ1 − z.
    const enc = GAMMA1 - z;
    s[CTILDE] = enc & 0xff;
    s[CTILDE + 1] = (enc >> 8) & 0xff;
    s[CTILDE + 2] = (s[CTILDE + 2]! & 0xf0) | ((enc >> 16) & 0x0f);
    assert.is(v.verify(c.pk, c.msg, s), false, `z = ${z}`);
    assert.is(oqsSays({ ...c, sig: s }), false);
  }
});

test('messages of any length, including longer than the verifier buffer (1,024 bytes)', () => {
  const v = new MlDsaWasm(4);
  const kp = ml_dsa65.keygen(rng.bytes(32));
  for (const len of [0, 1, 1023, 1024, 1025, 2048, 5000]) {
    const msg = rng.bytes(len);
    const sig = oqs.sign(msg, kp.secretKey);
    assert.ok(v.verify(kp.publicKey, msg, sig), `${len} bytes`);
    const other = msg.slice();
    if (len > 0) other[len - 1]! ^= 0x80;
    assert.is(v.verify(kp.publicKey, len > 0 ? other : new Uint8Array([0]), sig), false, `${len} bytes, altered`);
  }
});

test('the key cache: least recently used out, and two keys sharing their first bytes never mix', () => {
  const v = new MlDsaWasm(2);
  const [a, b, c] = cases as [Case, Case, Case];
  assert.ok(v.verify(a.pk, a.msg, a.sig));
  assert.ok(v.verify(b.pk, b.msg, b.sig));
  assert.ok(v.verify(a.pk, a.msg, a.sig)); // a is now the most recent: c evicts b
  assert.ok(v.verify(c.pk, c.msg, c.sig));
  assert.ok(v.verify(a.pk, a.msg, a.sig));
  assert.ok(v.verify(b.pk, b.msg, b.sig));
  assert.equal(v.stats(), { hits: 2, misses: 4, entries: 2, bytes: 2 * SLOT_BYTES, maxBytes: 2 * SLOT_BYTES });
  // A key with a's first bytes (ρ) and b's t1: it names a's slot, and is not a's key.
  const forged = a.pk.slice();
  forged.set(b.pk.subarray(32), 32);
  assert.is(v.verify(forged, a.msg, a.sig), false);
  assert.is(oqsSays({ ...a, pk: forged }), false);
  assert.ok(v.verify(a.pk, a.msg, a.sig));
  assert.is(v.verify(forged, a.msg, a.sig), false);
});

test('the key cache names slots by the whole key: junk keys sharing a key\'s first 16 bytes do not evict its expansion', () => {
  const v = new MlDsaWasm(64);
  const target = cases[0]!;
  assert.ok(v.verify(target.pk, target.msg, target.sig));
  const junk = (i: number) => {
    const pk = rng.bytes(1952);
    pk.set(target.pk.subarray(0, 16));
    pk[16 + (i % 32)]! ^= 1 + (i >> 5);
    return pk;
  };
  for (let i = 0; i < 20; i++) {
    assert.is(v.verify(junk(i), target.msg, target.sig), false);
    assert.ok(v.verify(target.pk, target.msg, target.sig), `target after junk key ${i}`);
  }
  // One miss for the target (its first verification) and one per junk key; every later target check hits.
  assert.equal({ hits: v.stats().hits, misses: v.stats().misses, entries: v.stats().entries }, { hits: 20, misses: 21, entries: 21 });
});

test('a cache larger than the verifier memory (128 MiB) keeps the slots that fit and goes on verifying', () => {
  const v = new MlDsaWasm(4000);
  const sig = rng.bytes(3309);
  const msg = rng.bytes(32);
  // Any 1,952 bytes expand (ρ and t1 are whatever they hold): 3,500 distinct keys, each a miss.
  for (let i = 0; i < 3500; i++) {
    const pk = rng.bytes(1952);
    assert.is(v.verify(pk, msg, sig), false);
  }
  const { entries, misses } = v.stats();
  assert.is(misses, 3500);
  assert.ok(entries > 3000 && entries < 3500, `${entries} entries`);
  const c = cases[0]!;
  assert.ok(v.verify(c.pk, c.msg, c.sig));
  assert.ok(v.verify(c.pk, c.msg, c.sig));
  assert.is(v.stats().entries, entries);
});

test('malformed sizes are false, never a throw', () => {
  const v = new MlDsaWasm(2);
  const c = cases[0]!;
  assert.is(v.verify(c.pk.subarray(1), c.msg, c.sig), false);
  assert.is(v.verify(c.pk, c.msg, c.sig.subarray(0, 3293)), false);
  assert.is(v.verify(new Uint8Array(1952), c.msg, new Uint8Array(3309)), false);
});

test('initSignatureBackend: svc-wasm by default, signing with its own signer, and it interoperates', async () => {
  const b = await initSignatureBackend('auto', () => assert.unreachable('no warning expected'));
  assert.is(b.name, 'svc-wasm');
  assert.is(signatureBackend(), b);
  const kp = ml_dsa65.keygen(rng.bytes(32));
  const msg = rng.bytes(32);
  const sig = b.sign(kp.secretKey, msg);
  assert.ok(ml_dsa65.verify(sig, msg, kp.publicKey));
  assert.ok(b.verify(kp.publicKey, msg, sig));
  assert.ok(b.verify(Buffer.from(kp.publicKey), Buffer.from(msg), Buffer.from(sig)));
  assert.ok(b.verify(kp.publicKey, msg, nobleBackend.sign(kp.secretKey, msg)));
  await initSignatureBackend('noble');
});

test('SVC_CRYPTO_BACKEND=svc-wasm is accepted; a bad SVC_KEY_CACHE_ENTRIES stops start-up instead of falling back', async () => {
  const saved = { backend: process.env.SVC_CRYPTO_BACKEND, entries: process.env.SVC_KEY_CACHE_ENTRIES };
  try {
    process.env.SVC_CRYPTO_BACKEND = 'svc-wasm';
    assert.is(backendFromEnv(), 'svc-wasm');
    process.env.SVC_KEY_CACHE_ENTRIES = '16';
    assert.is(keyCacheEntriesFromEnv(), 16);
    assert.is((await initSignatureBackend()).name, 'svc-wasm');
    for (const bad of ['0', '-1', '1.5', 'lots', '99999999']) {
      process.env.SVC_KEY_CACHE_ENTRIES = bad;
      const failure = await initSignatureBackend('auto', () => assert.unreachable('no fallback expected')).then(
        () => undefined,
        (err: unknown) => err,
      );
      expectError(
        () => {
          throw failure;
        },
        CryptoError,
        { message: `SVC_KEY_CACHE_ENTRIES must be a positive integer, got ${JSON.stringify(bad)}` },
      );
    }
  } finally {
    for (const [k, v] of [['SVC_CRYPTO_BACKEND', saved.backend], ['SVC_KEY_CACHE_ENTRIES', saved.entries]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await initSignatureBackend('noble');
  }
});

test.run();
