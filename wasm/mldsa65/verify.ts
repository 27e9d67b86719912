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

const ROUND_CONSTANTS = memory.data<u64>([
  0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
  0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
  0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
  0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
  0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
  0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]);
const STATE = memory.data(200, 16);
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
/** Bytes of the sponge's current block already absorbed or squeezed. */
let spongeAt: i32 = 0;

let slotBase: usize = 0;
let slotsMapped: i32 = 0;

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
// Keccak and the SHAKE sponges (FIPS 202)

/** Keccak-f[1600] on the sponge state at STATE: 24 rounds over 25 lanes held in locals. */
function keccakF(): void {
  let a0 = load<u64>(STATE, 0);
  let a1 = load<u64>(STATE, 8);
  let a2 = load<u64>(STATE, 16);
  let a3 = load<u64>(STATE, 24);
  let a4 = load<u64>(STATE, 32);
  let a5 = load<u64>(STATE, 40);
  let a6 = load<u64>(STATE, 48);
  let a7 = load<u64>(STATE, 56);
  let a8 = load<u64>(STATE, 64);
  let a9 = load<u64>(STATE, 72);
  let a10 = load<u64>(STATE, 80);
  let a11 = load<u64>(STATE, 88);
  let a12 = load<u64>(STATE, 96);
  let a13 = load<u64>(STATE, 104);
  let a14 = load<u64>(STATE, 112);
  let a15 = load<u64>(STATE, 120);
  let a16 = load<u64>(STATE, 128);
  let a17 = load<u64>(STATE, 136);
  let a18 = load<u64>(STATE, 144);
  let a19 = load<u64>(STATE, 152);
  let a20 = load<u64>(STATE, 160);
  let a21 = load<u64>(STATE, 168);
  let a22 = load<u64>(STATE, 176);
  let a23 = load<u64>(STATE, 184);
  let a24 = load<u64>(STATE, 192);
  for (let round = 0; round < 24; round++) {
    const c0 = a0 ^ a5 ^ a10 ^ a15 ^ a20;
    const c1 = a1 ^ a6 ^ a11 ^ a16 ^ a21;
    const c2 = a2 ^ a7 ^ a12 ^ a17 ^ a22;
    const c3 = a3 ^ a8 ^ a13 ^ a18 ^ a23;
    const c4 = a4 ^ a9 ^ a14 ^ a19 ^ a24;
    const d0 = c4 ^ rotl<u64>(c1, 1);
    const d1 = c0 ^ rotl<u64>(c2, 1);
    const d2 = c1 ^ rotl<u64>(c3, 1);
    const d3 = c2 ^ rotl<u64>(c4, 1);
    const d4 = c3 ^ rotl<u64>(c0, 1);
    const b0 = a0 ^ d0;
    const b10 = rotl<u64>(a1 ^ d1, 1);
    const b20 = rotl<u64>(a2 ^ d2, 62);
    const b5 = rotl<u64>(a3 ^ d3, 28);
    const b15 = rotl<u64>(a4 ^ d4, 27);
    const b16 = rotl<u64>(a5 ^ d0, 36);
    const b1 = rotl<u64>(a6 ^ d1, 44);
    const b11 = rotl<u64>(a7 ^ d2, 6);
    const b21 = rotl<u64>(a8 ^ d3, 55);
    const b6 = rotl<u64>(a9 ^ d4, 20);
    const b7 = rotl<u64>(a10 ^ d0, 3);
    const b17 = rotl<u64>(a11 ^ d1, 10);
    const b2 = rotl<u64>(a12 ^ d2, 43);
    const b12 = rotl<u64>(a13 ^ d3, 25);
    const b22 = rotl<u64>(a14 ^ d4, 39);
    const b23 = rotl<u64>(a15 ^ d0, 41);
    const b8 = rotl<u64>(a16 ^ d1, 45);
    const b18 = rotl<u64>(a17 ^ d2, 15);
    const b3 = rotl<u64>(a18 ^ d3, 21);
    const b13 = rotl<u64>(a19 ^ d4, 8);
    const b14 = rotl<u64>(a20 ^ d0, 18);
    const b24 = rotl<u64>(a21 ^ d1, 2);
    const b9 = rotl<u64>(a22 ^ d2, 61);
    const b19 = rotl<u64>(a23 ^ d3, 56);
    const b4 = rotl<u64>(a24 ^ d4, 14);
    a0 = b0 ^ (~b1 & b2);
    a1 = b1 ^ (~b2 & b3);
    a2 = b2 ^ (~b3 & b4);
    a3 = b3 ^ (~b4 & b0);
    a4 = b4 ^ (~b0 & b1);
    a5 = b5 ^ (~b6 & b7);
    a6 = b6 ^ (~b7 & b8);
    a7 = b7 ^ (~b8 & b9);
    a8 = b8 ^ (~b9 & b5);
    a9 = b9 ^ (~b5 & b6);
    a10 = b10 ^ (~b11 & b12);
    a11 = b11 ^ (~b12 & b13);
    a12 = b12 ^ (~b13 & b14);
    a13 = b13 ^ (~b14 & b10);
    a14 = b14 ^ (~b10 & b11);
    a15 = b15 ^ (~b16 & b17);
    a16 = b16 ^ (~b17 & b18);
    a17 = b17 ^ (~b18 & b19);
    a18 = b18 ^ (~b19 & b15);
    a19 = b19 ^ (~b15 & b16);
    a20 = b20 ^ (~b21 & b22);
    a21 = b21 ^ (~b22 & b23);
    a22 = b22 ^ (~b23 & b24);
    a23 = b23 ^ (~b24 & b20);
    a24 = b24 ^ (~b20 & b21);
    a0 ^= load<u64>(ROUND_CONSTANTS + (<usize>round << 3));
  }
  store<u64>(STATE, a0, 0);
  store<u64>(STATE, a1, 8);
  store<u64>(STATE, a2, 16);
  store<u64>(STATE, a3, 24);
  store<u64>(STATE, a4, 32);
  store<u64>(STATE, a5, 40);
  store<u64>(STATE, a6, 48);
  store<u64>(STATE, a7, 56);
  store<u64>(STATE, a8, 64);
  store<u64>(STATE, a9, 72);
  store<u64>(STATE, a10, 80);
  store<u64>(STATE, a11, 88);
  store<u64>(STATE, a12, 96);
  store<u64>(STATE, a13, 104);
  store<u64>(STATE, a14, 112);
  store<u64>(STATE, a15, 120);
  store<u64>(STATE, a16, 128);
  store<u64>(STATE, a17, 136);
  store<u64>(STATE, a18, 144);
  store<u64>(STATE, a19, 152);
  store<u64>(STATE, a20, 160);
  store<u64>(STATE, a21, 168);
  store<u64>(STATE, a22, 176);
  store<u64>(STATE, a23, 184);
  store<u64>(STATE, a24, 192);
}


function spongeReset(): void {
  memory.fill(STATE, 0, 200);
  spongeAt = 0;
}

function absorb(rate: i32, data: usize, len: i32): void {
  let i: i32 = 0;
  while (i < len) {
    if (spongeAt == 0 && len - i >= rate) {
      for (let j: i32 = 0; j < rate; j += 8) store<u64>(STATE + j, load<u64>(STATE + j) ^ load<u64>(data + i + j));
      keccakF();
      i += rate;
      continue;
    }
    store<u8>(STATE + spongeAt, load<u8>(STATE + spongeAt) ^ load<u8>(data + i));
    i++;
    if (++spongeAt == rate) {
      keccakF();
      spongeAt = 0;
    }
  }
}

function absorbByte(rate: i32, b: u8): void {
  store<u8>(STATE + spongeAt, load<u8>(STATE + spongeAt) ^ b);
  if (++spongeAt == rate) {
    keccakF();
    spongeAt = 0;
  }
}

/** Pads a SHAKE absorption and permutes; squeezing starts at the state's first byte. */
function finish(rate: i32): void {
  store<u8>(STATE + spongeAt, load<u8>(STATE + spongeAt) ^ 0x1f);
  store<u8>(STATE + rate - 1, load<u8>(STATE + rate - 1) ^ 0x80);
  keccakF();
  spongeAt = 0;
}

function squeeze(rate: i32, out: usize, len: i32): void {
  for (let i: i32 = 0; i < len; i++) {
    if (spongeAt == rate) {
      keccakF();
      spongeAt = 0;
    }
    store<u8>(out + i, load<u8>(STATE + spongeAt));
    spongeAt++;
  }
}

/** SHAKE128 (rate 168) or SHAKE256 (rate 136) of `len` bytes at `data` into `outLen` bytes at `out`; exported for the tests. */
export function shake(rate: i32, data: usize, len: i32, out: usize, outLen: i32): void {
  spongeReset();
  absorb(rate, data, len);
  finish(rate);
  squeeze(rate, out, outLen);
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
