/**
 * ML-DSA-65 signature verification (FIPS 204, Algorithm 8 with the pure-mode message
 * M' = 0 || 0 || M of Algorithm 3), in AssemblyScript compiled to WebAssembly, with a
 * public key's expansion kept in a slot so that a sender's next verification skips it.
 *
 * What a slot holds is a pure function of the public key: the key itself (every verification
 * compares it byte for byte before using the slot), tr = H(pk, 64), the matrix Â = ExpandA(ρ)
 * and NTT(t1·2^d). Those are about two thirds of a verification's work; the rest (decoding the
 * signature, NTT(z), Â∘ẑ − ĉ∘t̂1, the inverse NTT, UseHint and the final hash) is done every
 * time, so a cached key changes the cost and never the answer.
 *
 * The arithmetic it shares with signing is in poly.ts; signing itself (sign.ts) is exported from
 * this module too, so one instance serves a thread. Compiled by scripts/build-wasm.mjs; src/core/crypto/mldsa-wasm.ts
 * loads it. Memory: fixed scratch regions below, then slots from the heap base, grown on demand.
 */

import { absorb, absorbByte, finish, spongeReset, squeeze } from './keccak';
import { BETA, CTILDE_BYTES, caddq, D, expandA, GAMMA1, highBits, invnttToMont, K, L, load40, lowBits, MU_BYTES, montgomery, N, ntt, OMEGA, PK_BYTES, POLY_BYTES, reduce32, sampleInBall, SHAKE256_RATE, SIG_BYTES, TR_BYTES, W1_PACKED_BYTES } from './poly';

export { shake } from './keccak';
export { signBegin, signEnd, signKeyAt, signRandomAt } from './sign';

/** Longest message `verify` takes (the chain signs 32-byte digests). */
const MAX_MESSAGE_BYTES: i32 = 1024;

// A slot: the public key (padded to 64 bytes), tr, Â (K×L polynomials), t̂1 (K polynomials).
const SLOT_PK: i32 = 0;
const SLOT_TR: i32 = 1984;
const SLOT_A: i32 = SLOT_TR + TR_BYTES;
const SLOT_T1: i32 = SLOT_A + K * L * POLY_BYTES;
const SLOT_BYTES: i32 = SLOT_T1 + K * POLY_BYTES;

const IN_PK = memory.data(PK_BYTES, 16);
const IN_SIG = memory.data(SIG_BYTES, 16);
const IN_MSG = memory.data(MAX_MESSAGE_BYTES, 16);
const Z = memory.data(L * POLY_BYTES, 16);
const W = memory.data(K * POLY_BYTES, 16);
const CP = memory.data(POLY_BYTES, 16);
const HINTS = memory.data(K * N, 16);
const W1_PACKED = memory.data(W1_PACKED_BYTES, 16);
const MU = memory.data(MU_BYTES, 16);
const CTILDE2 = memory.data(CTILDE_BYTES, 16);

let slotBase: usize = 0;
let slotsMapped: i32 = 0;

/** Bytes one slot (one key's expansion) takes. */
export function slotBytes(): i32 {
  return SLOT_BYTES;
}
/** Where the caller writes the public key. */
export function publicKeyAt(): usize {
  return IN_PK;
}
/** Where the caller writes the signature. */
export function signatureAt(): usize {
  return IN_SIG;
}
/** Where the caller writes the message. */
export function messageAt(): usize {
  return IN_MSG;
}

// ---------------------------------------------------------------------------------------------
// Public-key expansion into a slot

/** Makes room for `count` slots; false when memory cannot grow. */
function mapSlots(count: i32): bool {
  if (slotBase == 0) slotBase = (__heap_base + 63) & ~<usize>63;
  if (count <= slotsMapped) return true;
  const end = slotBase + <usize>count * <usize>SLOT_BYTES;
  const pages = <i32>((end + 0xffff) >> 16);
  const have = memory.size();
  if (pages > have && memory.grow(pages - have) < 0) return false;
  slotsMapped = count;
  return true;
}

/**
 * Expands the public key at publicKeyAt() into slot `index`: the key, tr, Â and t̂1 = NTT(t1·2^d).
 * Returns 1, or 0 when memory cannot grow to hold the slot.
 */
export function expand(index: i32): i32 {
  if (!mapSlots(index + 1)) return 0;
  const slot = slotBase + <usize>index * <usize>SLOT_BYTES;
  memory.copy(slot + SLOT_PK, IN_PK, PK_BYTES);
  spongeReset();
  absorb(SHAKE256_RATE, IN_PK, PK_BYTES);
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, slot + SLOT_TR, TR_BYTES);
  expandA(IN_PK, slot + SLOT_A);
  // t1: ten bits per coefficient, four coefficients in five bytes.
  for (let r: i32 = 0; r < K; r++) {
    const src = IN_PK + 32 + <usize>(r * 320);
    const poly = slot + SLOT_T1 + <usize>(r * POLY_BYTES);
    for (let i: i32 = 0; i < N / 4; i++) {
      const v = load40(src + <usize>(5 * i));
      const out = poly + (<usize>(4 * i) << 2);
      for (let k: i32 = 0; k < 4; k++) store<i32>(out + (<usize>k << 2), (<i32>(v >> (10 * k)) & 0x3ff) << D);
    }
    ntt(poly);
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Verification

/** Decodes the hint into HINTS (one byte per coefficient); false for a malformed encoding. */
function decodeHints(): bool {
  memory.fill(HINTS, 0, K * N);
  const y = IN_SIG + CTILDE_BYTES + L * 640;
  let index: i32 = 0;
  for (let i: i32 = 0; i < K; i++) {
    const end = <i32>load<u8>(y + OMEGA + i);
    if (end < index || end > OMEGA) return false;
    const first = index;
    while (index < end) {
      const at = <i32>load<u8>(y + index);
      // Positions strictly increase within a polynomial: one encoding per hint.
      if (index > first && <i32>load<u8>(y + index - 1) >= at) return false;
      store<u8>(HINTS + <usize>(i * N + at), 1);
      index++;
    }
  }
  for (let i: i32 = index; i < OMEGA; i++) if (load<u8>(y + i) != 0) return false;
  return true;
}

/** Decodes z (twenty bits per coefficient, γ1 − value) into Z; false when some |z| ≥ γ1 − β. */
function decodeZ(): bool {
  const bound = GAMMA1 - BETA;
  for (let s: i32 = 0; s < L; s++) {
    const src = IN_SIG + CTILDE_BYTES + <usize>(s * 640);
    const poly = Z + <usize>(s * POLY_BYTES);
    for (let i: i32 = 0; i < N / 2; i++) {
      const v = load40(src + <usize>(5 * i));
      const z0 = GAMMA1 - (<i32>v & 0xfffff);
      const z1 = GAMMA1 - (<i32>(v >> 20) & 0xfffff);
      if (z0 >= bound || z0 <= -bound || z1 >= bound || z1 <= -bound) return false;
      store<i32>(poly + (<usize>(2 * i) << 2), z0);
      store<i32>(poly + (<usize>(2 * i + 1) << 2), z1);
    }
  }
  return true;
}

/** w1 = UseHint(h, r) for r in [0, q), γ2 = (q − 1)/32: sixteen values. */
@inline function useHint(a: i32, hint: i32): i32 {
  const a1 = highBits(a);
  if (hint == 0) return a1;
  return lowBits(a, a1) > 0 ? (a1 + 1) & 15 : (a1 - 1) & 15;
}

/**
 * Starts verifying the signature at signatureAt() under the key at publicKeyAt() with slot
 * `index`: returns -1 when the slot does not hold this public key (expand it first), 0 when the
 * signature is malformed (its hint encoding, or some |z| ≥ γ1 − β), or 1 when the message can
 * be absorbed (absorbMessage) and the verification finished (verifyEnd).
 */
export function verifyBegin(index: i32): i32 {
  if (index < 0 || index >= slotsMapped) return -1;
  const slot = slotBase + <usize>index * <usize>SLOT_BYTES;
  if (memory.compare(slot + SLOT_PK, IN_PK, PK_BYTES) != 0) return -1;
  if (!decodeHints() || !decodeZ()) return 0;
  // μ = H(tr ‖ 0 ‖ 0 ‖ M, 64): pure ML-DSA with an empty context.
  spongeReset();
  absorb(SHAKE256_RATE, slot + SLOT_TR, TR_BYTES);
  absorbByte(SHAKE256_RATE, 0);
  absorbByte(SHAKE256_RATE, 0);
  return 1;
}

/** Absorbs the next `length` bytes of the message, written at messageAt(), into μ. */
export function absorbMessage(length: i32): void {
  absorb(SHAKE256_RATE, IN_MSG, length < 0 ? 0 : length > MAX_MESSAGE_BYTES ? MAX_MESSAGE_BYTES : length);
}

/** Bytes messageAt() holds. */
export function messageCapacity(): i32 {
  return MAX_MESSAGE_BYTES;
}

/** Finishes a verification begun by verifyBegin (same slot) once the whole message is absorbed: 1 valid, 0 invalid. */
export function verifyEnd(index: i32): i32 {
  const slot = slotBase + <usize>index * <usize>SLOT_BYTES;
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, MU, MU_BYTES);

  sampleInBall(IN_SIG, CP);
  ntt(CP);
  for (let s: i32 = 0; s < L; s++) ntt(Z + <usize>(s * POLY_BYTES));

  // w = NTT^-1(Â∘ẑ − ĉ∘t̂1), then w1 = UseHint(h, w), packed four bits a coefficient.
  for (let r: i32 = 0; r < K; r++) {
    const w = W + <usize>(r * POLY_BYTES);
    const row = slot + SLOT_A + <usize>(r * L * POLY_BYTES);
    const t1 = slot + SLOT_T1 + <usize>(r * POLY_BYTES);
    for (let j: i32 = 0; j < N; j++) {
      const o = <usize>j << 2;
      let acc: i32 = 0;
      for (let s: i32 = 0; s < L; s++) acc += montgomery(<i64>load<i32>(row + <usize>(s * POLY_BYTES) + o) * <i64>load<i32>(Z + <usize>(s * POLY_BYTES) + o));
      acc -= montgomery(<i64>load<i32>(CP + o) * <i64>load<i32>(t1 + o));
      store<i32>(w + o, reduce32(acc));
    }
    invnttToMont(w);
    const hints = HINTS + <usize>(r * N);
    const packed = W1_PACKED + <usize>(r * 128);
    for (let j: i32 = 0; j < N; j += 2) {
      const lo = useHint(caddq(load<i32>(w + (<usize>j << 2))), <i32>load<u8>(hints + j));
      const hi = useHint(caddq(load<i32>(w + (<usize>(j + 1) << 2))), <i32>load<u8>(hints + j + 1));
      store<u8>(packed + (j >> 1), <u8>(lo | (hi << 4)));
    }
  }

  // c̃' = H(μ ‖ w1Encode(w1), λ/4) must equal c̃.
  spongeReset();
  absorb(SHAKE256_RATE, MU, MU_BYTES);
  absorb(SHAKE256_RATE, W1_PACKED, W1_PACKED_BYTES);
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, CTILDE2, CTILDE_BYTES);
  return memory.compare(CTILDE2, IN_SIG, CTILDE_BYTES) == 0 ? 1 : 0;
}
