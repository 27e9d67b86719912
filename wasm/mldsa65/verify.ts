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
 * Arithmetic is the usual signed Montgomery form (R = 2^32), with the same coefficient bounds
 * as FIPS 204's reference implementation. Compiled by scripts/build-wasm.mjs; src/core/crypto/mldsa-wasm.ts
 * loads it. Memory: fixed scratch regions below, then slots from the heap base, grown on demand.
 */

import { STATE, absorb, absorbByte, finish, keccakF, spongeReset, squeeze } from './keccak';

export { shake } from './keccak';

const Q: i32 = 8380417;
/** q^-1 mod 2^32. */
const QINV: i32 = 58728449;
const N: i32 = 256;
const K: i32 = 6;
const L: i32 = 5;
const D: i32 = 13;
const TAU: i32 = 49;
const GAMMA1: i32 = 1 << 19;
const GAMMA2: i32 = (Q - 1) / 32;
const BETA: i32 = 196;
const OMEGA: i32 = 55;
const CTILDE_BYTES: i32 = 48;
const TR_BYTES: i32 = 64;
const MU_BYTES: i32 = 64;
const PK_BYTES: i32 = 32 + K * 320;
const SIG_BYTES: i32 = CTILDE_BYTES + L * 640 + OMEGA + K;
const POLY_BYTES: i32 = N * 4;
const W1_PACKED_BYTES: i32 = K * 128;
const SHAKE128_RATE: i32 = 168;
const SHAKE256_RATE: i32 = 136;
/** Longest message `verify` takes (the chain signs 32-byte digests). */
const MAX_MESSAGE_BYTES: i32 = 1024;

// A slot: the public key (padded to 64 bytes), tr, Â (K×L polynomials), t̂1 (K polynomials).
const SLOT_PK: i32 = 0;
const SLOT_TR: i32 = 1984;
const SLOT_A: i32 = SLOT_TR + TR_BYTES;
const SLOT_T1: i32 = SLOT_A + K * L * POLY_BYTES;
const SLOT_BYTES: i32 = SLOT_T1 + K * POLY_BYTES;

const ZETAS = memory.data(N * 4, 16);
const IN_PK = memory.data(PK_BYTES, 16);
const IN_SIG = memory.data(SIG_BYTES, 16);
const IN_MSG = memory.data(MAX_MESSAGE_BYTES, 16);
const Z = memory.data(L * POLY_BYTES, 16);
const W = memory.data(K * POLY_BYTES, 16);
const CP = memory.data(POLY_BYTES, 16);
const HINTS = memory.data(K * N, 16);
const BLOCK = memory.data(SHAKE128_RATE, 16);
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
// Arithmetic mod q

@inline function montgomery(a: i64): i32 {
  const t: i32 = <i32>a * QINV;
  return <i32>((a - <i64>t * Q) >> 32);
}

/** A representative of a in (-6283009, 6283009), for |a| < 2^31 - 2^22. */
@inline function reduce32(a: i32): i32 {
  return a - ((a + (1 << 22)) >> 23) * Q;
}

@inline function caddq(a: i32): i32 {
  return a + ((a >> 31) & Q);
}

function powmod(b: i64, e: i32): i64 {
  let r: i64 = 1;
  let x: i64 = b % Q;
  while (e > 0) {
    if (e & 1) r = (r * x) % Q;
    x = (x * x) % Q;
    e >>= 1;
  }
  return r;
}

/** zetas[k] = 1753^brv8(k)·2^32 mod q, centred: the NTT's twiddles in Montgomery form. */
function initZetas(): void {
  for (let k: i32 = 0; k < N; k++) {
    let r: i32 = 0;
    for (let b: i32 = 0; b < 8; b++) if (k & (1 << b)) r |= 1 << (7 - b);
    let v: i64 = (powmod(1753, r) << 32) % Q;
    if (v > Q / 2) v -= Q;
    store<i32>(ZETAS + (<usize>k << 2), <i32>v);
  }
}
initZetas();

/** In-place forward NTT, output in bit-reversed order; coefficients grow by at most 8q. */
function ntt(p: usize): void {
  let k: i32 = 0;
  for (let len: i32 = 128; len > 0; len >>= 1) {
    for (let start: i32 = 0; start < N; start += len << 1) {
      k++;
      const zeta: i64 = <i64>load<i32>(ZETAS + (<usize>k << 2));
      for (let j: i32 = start; j < start + len; j++) {
        const lo = p + (<usize>j << 2);
        const hi = lo + (<usize>len << 2);
        const t = montgomery(zeta * <i64>load<i32>(hi));
        const a = load<i32>(lo);
        store<i32>(hi, a - t);
        store<i32>(lo, a + t);
      }
    }
  }
}

/** In-place inverse NTT times 2^32 (undoing a Montgomery product's factor); |input| < q gives |output| < q. */
function invnttToMont(p: usize): void {
  let k: i32 = N;
  for (let len: i32 = 1; len < N; len <<= 1) {
    for (let start: i32 = 0; start < N; start += len << 1) {
      k--;
      const zeta: i64 = -<i64>load<i32>(ZETAS + (<usize>k << 2));
      for (let j: i32 = start; j < start + len; j++) {
        const lo = p + (<usize>j << 2);
        const hi = lo + (<usize>len << 2);
        const a = load<i32>(lo);
        const b = load<i32>(hi);
        store<i32>(lo, a + b);
        store<i32>(hi, montgomery(zeta * <i64>(a - b)));
      }
    }
  }
  // mont^2 / 256
  const f: i64 = 41978;
  for (let j: i32 = 0; j < N; j++) {
    const at = p + (<usize>j << 2);
    store<i32>(at, montgomery(f * <i64>load<i32>(at)));
  }
}

// ---------------------------------------------------------------------------------------------
// Public-key expansion into a slot

/** Â[r][s] = RejNTTPoly(ρ ‖ s ‖ r): coefficients < q from 23-bit little-endian triples of SHAKE128. */
function expandA(rho: usize, slot: usize): void {
  for (let r: i32 = 0; r < K; r++) {
    for (let s: i32 = 0; s < L; s++) {
      const poly = slot + SLOT_A + <usize>((r * L + s) * POLY_BYTES);
      spongeReset();
      absorb(SHAKE128_RATE, rho, 32);
      absorbByte(SHAKE128_RATE, <u8>s);
      absorbByte(SHAKE128_RATE, <u8>r);
      finish(SHAKE128_RATE);
      // Triples straight from the state, a block at a time (168 = 56 × 3, so none spans two blocks).
      let count: i32 = 0;
      while (true) {
        for (let i: i32 = 0; i < SHAKE128_RATE && count < N; i += 3) {
          const v: i32 = <i32>load<u8>(STATE + i) | (<i32>load<u8>(STATE + i + 1) << 8) | ((<i32>load<u8>(STATE + i + 2) & 0x7f) << 16);
          if (v < Q) {
            store<i32>(poly + (<usize>count << 2), v);
            count++;
          }
        }
        if (count == N) break;
        keccakF();
      }
    }
  }
}

/** Five bytes at `at` as a little-endian 40-bit integer: t1 packs four 10-bit, z two 20-bit coefficients in them. */
@inline function load40(at: usize): u64 {
  return <u64>load<u32>(at) | (<u64>load<u8>(at + 4) << 32);
}

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
  expandA(IN_PK, slot);
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

/** c = SampleInBall(c̃) into CP: τ coefficients ±1 placed by SHAKE256(c̃). */
function sampleInBall(): void {
  memory.fill(CP, 0, POLY_BYTES);
  spongeReset();
  absorb(SHAKE256_RATE, IN_SIG, CTILDE_BYTES);
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, BLOCK, 8);
  let signs: u64 = load<u64>(BLOCK);
  for (let i: i32 = N - TAU; i < N; i++) {
    let j: i32;
    do {
      squeeze(SHAKE256_RATE, BLOCK, 1);
      j = <i32>load<u8>(BLOCK);
    } while (j > i);
    store<i32>(CP + (<usize>i << 2), load<i32>(CP + (<usize>j << 2)));
    store<i32>(CP + (<usize>j << 2), 1 - 2 * <i32>(signs & 1));
    signs >>= 1;
  }
}

/** w1 = UseHint(h, r) for r in [0, q), γ2 = (q − 1)/32: sixteen values. */
@inline function useHint(a: i32, hint: i32): i32 {
  let a1 = (a + 127) >> 7;
  a1 = ((a1 * 1025 + (1 << 21)) >> 22) & 15;
  let a0 = a - a1 * 2 * GAMMA2;
  a0 -= (((Q - 1) / 2 - a0) >> 31) & Q;
  if (hint == 0) return a1;
  return a0 > 0 ? (a1 + 1) & 15 : (a1 - 1) & 15;
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

  sampleInBall();
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
