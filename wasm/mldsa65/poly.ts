/**
 * ML-DSA-65 (FIPS 204) parameters and the polynomial arithmetic that verification (verify.ts)
 * and signing (sign.ts) share: arithmetic mod q in signed Montgomery form (R = 2^32) with the
 * coefficient bounds of FIPS 204's reference implementation, the NTT and its inverse, ExpandA,
 * SampleInBall and the 20-bit packing of z and y.
 */

import { STATE, absorb, absorbByte, finish, keccakF, spongeReset, squeeze } from './keccak';

export const Q: i32 = 8380417;
/** q^-1 mod 2^32. */
const QINV: i32 = 58728449;
export const N: i32 = 256;
export const K: i32 = 6;
export const L: i32 = 5;
export const D: i32 = 13;
export const TAU: i32 = 49;
export const GAMMA1: i32 = 1 << 19;
export const GAMMA2: i32 = (Q - 1) / 32;
export const BETA: i32 = 196;
export const OMEGA: i32 = 55;
export const CTILDE_BYTES: i32 = 48;
export const TR_BYTES: i32 = 64;
export const MU_BYTES: i32 = 64;
export const PK_BYTES: i32 = 32 + K * 320;
/** Bytes of one packed z (or y) polynomial: twenty bits a coefficient. */
export const Z_PACKED_BYTES: i32 = 640;
export const SIG_BYTES: i32 = CTILDE_BYTES + L * Z_PACKED_BYTES + OMEGA + K;
export const POLY_BYTES: i32 = N * 4;
export const W1_PACKED_BYTES: i32 = K * 128;
export const SHAKE128_RATE: i32 = 168;
export const SHAKE256_RATE: i32 = 136;

const ZETAS = memory.data(N * 4, 16);
const BALL_BLOCK = memory.data(8, 16);

// ---------------------------------------------------------------------------------------------
// Arithmetic mod q

/** a·2^-32 mod q, in (-q, q) for |a| < 2^31·q. */
@inline export function montgomery(a: i64): i32 {
  const t: i32 = <i32>a * QINV;
  return <i32>((a - <i64>t * Q) >> 32);
}

/** A representative of a in (-6283009, 6283009), for |a| < 2^31 - 2^22. */
@inline export function reduce32(a: i32): i32 {
  return a - ((a + (1 << 22)) >> 23) * Q;
}

/** a + q when a is negative. */
@inline export function caddq(a: i32): i32 {
  return a + ((a >> 31) & Q);
}

/** HighBits(a) for a in [0, q) with γ2 = (q − 1)/32: a1 in [0, 16). */
@inline export function highBits(a: i32): i32 {
  const t = (a + 127) >> 7;
  return ((t * 1025 + (1 << 21)) >> 22) & 15;
}

/** LowBits(a) given a1 = highBits(a): a − a1·2γ2, centred mod q. */
@inline export function lowBits(a: i32, a1: i32): i32 {
  const a0 = a - a1 * 2 * GAMMA2;
  return a0 - ((((Q - 1) / 2 - a0) >> 31) & Q);
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
export function ntt(p: usize): void {
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
export function invnttToMont(p: usize): void {
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

/** out = NTT^-1(â ∘ b̂) for one pair of polynomials in the NTT domain: |output| < q. */
export function pointwiseInvntt(a: usize, b: usize, out: usize): void {
  for (let j: i32 = 0; j < N; j++) {
    const o = <usize>j << 2;
    store<i32>(out + o, montgomery(<i64>load<i32>(a + o) * <i64>load<i32>(b + o)));
  }
  invnttToMont(out);
}

// ---------------------------------------------------------------------------------------------
// Sampling and packing

/** Â[r][s] = RejNTTPoly(ρ ‖ s ‖ r) into the K×L polynomials at `out` (row-major): coefficients < q from 23-bit triples of SHAKE128. */
export function expandA(rho: usize, out: usize): void {
  for (let r: i32 = 0; r < K; r++) {
    for (let s: i32 = 0; s < L; s++) {
      const poly = out + <usize>((r * L + s) * POLY_BYTES);
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

/** c = SampleInBall(c̃) into `out`: τ coefficients ±1 placed by SHAKE256 of the λ/4 bytes at `ctilde`. */
export function sampleInBall(ctilde: usize, out: usize): void {
  memory.fill(out, 0, POLY_BYTES);
  spongeReset();
  absorb(SHAKE256_RATE, ctilde, CTILDE_BYTES);
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, BALL_BLOCK, 8);
  let signs: u64 = load<u64>(BALL_BLOCK);
  for (let i: i32 = N - TAU; i < N; i++) {
    let j: i32;
    do {
      squeeze(SHAKE256_RATE, BALL_BLOCK, 1);
      j = <i32>load<u8>(BALL_BLOCK);
    } while (j > i);
    store<i32>(out + (<usize>i << 2), load<i32>(out + (<usize>j << 2)));
    store<i32>(out + (<usize>j << 2), 1 - 2 * <i32>(signs & 1));
    signs >>= 1;
  }
}

/** Five bytes at `at` as a little-endian 40-bit integer: t1 packs four 10-bit, z two 20-bit coefficients in them. */
@inline export function load40(at: usize): u64 {
  return <u64>load<u32>(at) | (<u64>load<u8>(at + 4) << 32);
}

/** The 640 bytes at `src` as a polynomial of γ1 − (20-bit value) coefficients at `out` (FIPS 204 BitUnpack of z and y). */
export function unpackZ(src: usize, out: usize): void {
  for (let i: i32 = 0; i < N / 2; i++) {
    const v = load40(src + <usize>(5 * i));
    store<i32>(out + (<usize>(2 * i) << 2), GAMMA1 - (<i32>v & 0xfffff));
    store<i32>(out + (<usize>(2 * i + 1) << 2), GAMMA1 - (<i32>(v >> 20) & 0xfffff));
  }
}

/** Packs the polynomial at `p` (coefficients in (−γ1, γ1]) as 640 bytes at `out`, the inverse of unpackZ. */
export function packZ(p: usize, out: usize): void {
  for (let i: i32 = 0; i < N / 2; i++) {
    const t0 = <u64>(GAMMA1 - load<i32>(p + (<usize>(2 * i) << 2)));
    const t1 = <u64>(GAMMA1 - load<i32>(p + (<usize>(2 * i + 1) << 2)));
    const v = t0 | (t1 << 20);
    const at = out + <usize>(5 * i);
    store<u32>(at, <u32>v);
    store<u8>(at + 4, <u8>(v >> 32));
  }
}
