/**
 * ML-DSA-65 signing (FIPS 204, Algorithm 7 ML-DSA.Sign_internal, pure mode with an empty
 * context: M' = 0 || 0 || M), in AssemblyScript compiled to WebAssembly with the verifier.
 *
 * Deterministic when the 32-byte rnd is zero (the chain's blocks, votes and VRF proofs), hedged
 * when the caller writes fresh randomness there; either way the signature is the one FIPS 204
 * defines for that rnd, so it is byte for byte what any conforming implementation gives (the tests
 * compare it with @noble/post-quantum's). The expansion of the last key used (Â, which is about a
 * third of a signature's work, and the NTTs of s1, s2 and t0) is kept and reused when the next
 * key is the same, byte for byte: a validator client signing a block, its VRF proof and its vote
 * uses one key in a row.
 *
 * Rejection sampling: each attempt κ draws y, computes w = Â·y, the challenge, z = y + c·s1, and
 * restarts when z, the low bits of w − c·s2, c·t0 or the hint count is out of bounds (about 5
 * attempts on average for these parameters). signBegin refuses s1 and s2 coefficients outside
 * [−η, η], as noble does; MAX_ATTEMPTS bounds the loop against any other malformed key.
 */

import { absorb, absorbByte, finish, spongeReset, squeeze } from './keccak';
import { BETA, CTILDE_BYTES, caddq, D, expandA, GAMMA1, GAMMA2, highBits, invnttToMont, K, L, lowBits, MU_BYTES, montgomery, N, ntt, OMEGA, packZ, pointwiseInvntt, POLY_BYTES, reduce32, sampleInBall, SHAKE256_RATE, TR_BYTES, unpackZ, W1_PACKED_BYTES, Z_PACKED_BYTES } from './poly';

const ETA: i32 = 4;
const SEED_BYTES: i32 = 32;
const ETA_PACKED_BYTES: i32 = 128;
const T0_PACKED_BYTES: i32 = 416;
const SK_BYTES: i32 = 2 * SEED_BYTES + TR_BYTES + (L + K) * ETA_PACKED_BYTES + K * T0_PACKED_BYTES;
const SK_S1: i32 = 2 * SEED_BYTES + TR_BYTES;
const SK_S2: i32 = SK_S1 + L * ETA_PACKED_BYTES;
const SK_T0: i32 = SK_S2 + K * ETA_PACKED_BYTES;
const RHOPRIME_BYTES: i32 = 64;
/** FIPS 204 lets an implementation bound the loop: an attempt fails with probability about 0.8, so 1,000 failing in a row (about 2^-315) means a malformed key. */
const MAX_ATTEMPTS: i32 = 1000;

const IN_SK = memory.data(SK_BYTES + 4, 16);
/** The key whose expansion A, S1, S2 and T0 hold, when `expanded`. */
const EXPANDED_SK = memory.data(SK_BYTES, 16);
let expanded = false;
const IN_RND = memory.data(SEED_BYTES, 16);
const A = memory.data(K * L * POLY_BYTES, 16);
const S1 = memory.data(L * POLY_BYTES, 16);
const S2 = memory.data(K * POLY_BYTES, 16);
const T0 = memory.data(K * POLY_BYTES, 16);
const Y = memory.data(L * POLY_BYTES, 16);
const YHAT = memory.data(L * POLY_BYTES, 16);
const Z = memory.data(L * POLY_BYTES, 16);
const W1 = memory.data(K * POLY_BYTES, 16);
const W0 = memory.data(K * POLY_BYTES, 16);
const TMP = memory.data(POLY_BYTES, 16);
const CP = memory.data(POLY_BYTES, 16);
const HINT = memory.data(K * N, 16);
const MU = memory.data(MU_BYTES, 16);
const RHOPRIME = memory.data(RHOPRIME_BYTES, 16);
const CTILDE = memory.data(CTILDE_BYTES, 16);
const W1_PACKED = memory.data(W1_PACKED_BYTES, 16);
const Y_PACKED = memory.data(Z_PACKED_BYTES, 16);

/** Where the caller writes the 4,032-byte secret key. */
export function signKeyAt(): usize {
  return IN_SK;
}
/** Where the caller writes rnd: 32 zero bytes for a deterministic signature, fresh randomness for a hedged one. */
export function signRandomAt(): usize {
  return IN_RND;
}

/** s = η − (4-bit value), two coefficients a byte (FIPS 204 BitUnpack with η = 4); false when a value exceeds 2η (no valid key has it). */
function unpackEta(src: usize, out: usize): bool {
  for (let i: i32 = 0; i < N / 2; i++) {
    const b = <i32>load<u8>(src + i);
    if ((b & 15) > 2 * ETA || (b >> 4) > 2 * ETA) return false;
    store<i32>(out + (<usize>(2 * i) << 2), ETA - (b & 15));
    store<i32>(out + (<usize>(2 * i + 1) << 2), ETA - (b >> 4));
  }
  return true;
}

/** t0 = 2^(d−1) − (13-bit value), little-endian bit stream (FIPS 204 BitUnpack of t0). */
function unpackT0(src: usize, out: usize): void {
  for (let i: i32 = 0; i < N; i++) {
    const bit = i * D;
    // Three bytes cover 13 bits at any of the 8 offsets; IN_SK has 4 spare bytes for the last load.
    const v = <i32>(load<u32>(src + <usize>(bit >> 3)) >> <u32>(bit & 7)) & 0x1fff;
    store<i32>(out + (<usize>i << 2), (1 << (D - 1)) - v);
  }
}

/** |a|, branch-free. */
@inline function magnitude(a: i32): i32 {
  return a - ((a >> 31) & (2 * a));
}

/** True when some coefficient of the `count` polynomials at `p` has |a| ≥ bound (centred representatives from reduce32). */
function exceeds(p: usize, count: i32, bound: i32): bool {
  for (let i: i32 = 0; i < count * N; i++) {
    if (magnitude(load<i32>(p + (<usize>i << 2))) >= bound) return true;
  }
  return false;
}

/**
 * Expands the secret key at signKeyAt() (unless it is the key expanded last) and starts μ = H(tr ‖ 0 ‖ 0 ‖ M, 64):
 * the message follows through absorbMessage, then signEnd. Returns 1, or 0 for a key whose s1 or s2
 * has a coefficient outside [−η, η].
 */
export function signBegin(): i32 {
  if (!expanded || memory.compare(IN_SK, EXPANDED_SK, SK_BYTES) != 0) {
    if (!expandKey()) return 0;
  }
  spongeReset();
  absorb(SHAKE256_RATE, IN_SK + 2 * SEED_BYTES, TR_BYTES);
  absorbByte(SHAKE256_RATE, 0);
  absorbByte(SHAKE256_RATE, 0);
  return 1;
}

/** Â, NTT(s1), NTT(s2) and NTT(t0) of the key at IN_SK, remembered as EXPANDED_SK; false for a malformed s1 or s2. */
function expandKey(): bool {
  expanded = false;
  for (let s: i32 = 0; s < L; s++) {
    const p = S1 + <usize>(s * POLY_BYTES);
    if (!unpackEta(IN_SK + SK_S1 + <usize>(s * ETA_PACKED_BYTES), p)) return false;
    ntt(p);
  }
  for (let r: i32 = 0; r < K; r++) {
    const s2 = S2 + <usize>(r * POLY_BYTES);
    if (!unpackEta(IN_SK + SK_S2 + <usize>(r * ETA_PACKED_BYTES), s2)) return false;
    ntt(s2);
    const t0 = T0 + <usize>(r * POLY_BYTES);
    unpackT0(IN_SK + SK_T0 + <usize>(r * T0_PACKED_BYTES), t0);
    ntt(t0);
  }
  expandA(IN_SK, A);
  memory.copy(EXPANDED_SK, IN_SK, SK_BYTES);
  expanded = true;
  return true;
}

/** y = ExpandMask(ρ'', κ): L polynomials from SHAKE256(ρ'' ‖ κ + s as two little-endian bytes). */
function expandMask(kappa: i32): void {
  for (let s: i32 = 0; s < L; s++) {
    const nonce = kappa + s;
    spongeReset();
    absorb(SHAKE256_RATE, RHOPRIME, RHOPRIME_BYTES);
    absorbByte(SHAKE256_RATE, <u8>(nonce & 0xff));
    absorbByte(SHAKE256_RATE, <u8>(nonce >> 8));
    finish(SHAKE256_RATE);
    squeeze(SHAKE256_RATE, Y_PACKED, Z_PACKED_BYTES);
    unpackZ(Y_PACKED, Y + <usize>(s * POLY_BYTES));
  }
}

/** w = NTT^-1(Â ∘ NTT(y)), split into its high bits (W1, packed into W1_PACKED) and low bits (W0). */
function commitment(): void {
  memory.copy(YHAT, Y, L * POLY_BYTES);
  for (let s: i32 = 0; s < L; s++) ntt(YHAT + <usize>(s * POLY_BYTES));
  for (let r: i32 = 0; r < K; r++) {
    const w1 = W1 + <usize>(r * POLY_BYTES);
    const w0 = W0 + <usize>(r * POLY_BYTES);
    const row = A + <usize>(r * L * POLY_BYTES);
    for (let j: i32 = 0; j < N; j++) {
      const o = <usize>j << 2;
      let acc: i32 = 0;
      for (let s: i32 = 0; s < L; s++) acc += montgomery(<i64>load<i32>(row + <usize>(s * POLY_BYTES) + o) * <i64>load<i32>(YHAT + <usize>(s * POLY_BYTES) + o));
      store<i32>(w1 + o, reduce32(acc));
    }
    invnttToMont(w1);
    // Decompose: a = a1·2γ2 + a0.
    for (let j: i32 = 0; j < N; j++) {
      const o = <usize>j << 2;
      const a = caddq(load<i32>(w1 + o));
      const a1 = highBits(a);
      store<i32>(w1 + o, a1);
      store<i32>(w0 + o, lowBits(a, a1));
    }
    const packed = W1_PACKED + <usize>(r * 128);
    for (let j: i32 = 0; j < N; j += 2) {
      store<u8>(packed + (j >> 1), <u8>(load<i32>(w1 + (<usize>j << 2)) | (load<i32>(w1 + (<usize>(j + 1) << 2)) << 4)));
    }
  }
}

/**
 * Finishes a signature begun by signBegin once the whole message is absorbed, writing the 3,309
 * bytes at `out`: returns 1, or 0 when MAX_ATTEMPTS attempts all failed (only a malformed key does that).
 */
export function signEnd(out: usize): i32 {
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, MU, MU_BYTES);
  // ρ'' = H(K ‖ rnd ‖ μ, 64).
  spongeReset();
  absorb(SHAKE256_RATE, IN_SK + SEED_BYTES, SEED_BYTES);
  absorb(SHAKE256_RATE, IN_RND, SEED_BYTES);
  absorb(SHAKE256_RATE, MU, MU_BYTES);
  finish(SHAKE256_RATE);
  squeeze(SHAKE256_RATE, RHOPRIME, RHOPRIME_BYTES);

  for (let attempt: i32 = 0, kappa: i32 = 0; attempt < MAX_ATTEMPTS; attempt++, kappa += L) {
    expandMask(kappa);
    commitment();
    // c̃ = H(μ ‖ w1Encode(w1), λ/4); c = SampleInBall(c̃).
    spongeReset();
    absorb(SHAKE256_RATE, MU, MU_BYTES);
    absorb(SHAKE256_RATE, W1_PACKED, W1_PACKED_BYTES);
    finish(SHAKE256_RATE);
    squeeze(SHAKE256_RATE, CTILDE, CTILDE_BYTES);
    sampleInBall(CTILDE, CP);
    ntt(CP);

    // z = y + c·s1, rejected when ‖z‖∞ ≥ γ1 − β.
    for (let s: i32 = 0; s < L; s++) {
      const z = Z + <usize>(s * POLY_BYTES);
      const y = Y + <usize>(s * POLY_BYTES);
      pointwiseInvntt(CP, S1 + <usize>(s * POLY_BYTES), z);
      for (let j: i32 = 0; j < N; j++) {
        const o = <usize>j << 2;
        store<i32>(z + o, reduce32(load<i32>(z + o) + load<i32>(y + o)));
      }
    }
    if (exceeds(Z, L, GAMMA1 - BETA)) continue;

    // r0 = w0 − c·s2, rejected when ‖r0‖∞ ≥ γ2 − β.
    for (let r: i32 = 0; r < K; r++) {
      const w0 = W0 + <usize>(r * POLY_BYTES);
      pointwiseInvntt(CP, S2 + <usize>(r * POLY_BYTES), TMP);
      for (let j: i32 = 0; j < N; j++) {
        const o = <usize>j << 2;
        store<i32>(w0 + o, reduce32(load<i32>(w0 + o) - load<i32>(TMP + o)));
      }
    }
    if (exceeds(W0, K, GAMMA2 - BETA)) continue;

    // c·t0, rejected when ‖c·t0‖∞ ≥ γ2; then h = MakeHint(−c·t0, w − c·s2 + c·t0), at most ω ones.
    let ones: i32 = 0;
    let tooLarge = false;
    for (let r: i32 = 0; r < K && !tooLarge; r++) {
      const w0 = W0 + <usize>(r * POLY_BYTES);
      const w1 = W1 + <usize>(r * POLY_BYTES);
      pointwiseInvntt(CP, T0 + <usize>(r * POLY_BYTES), TMP);
      for (let j: i32 = 0; j < N; j++) {
        const o = <usize>j << 2;
        const ct0 = reduce32(load<i32>(TMP + o));
        if (magnitude(ct0) >= GAMMA2) {
          tooLarge = true;
          break;
        }
        const a0 = load<i32>(w0 + o) + ct0;
        const hint: i32 = a0 > GAMMA2 || a0 < -GAMMA2 || (a0 == -GAMMA2 && load<i32>(w1 + o) != 0) ? 1 : 0;
        store<u8>(HINT + <usize>(r * N + j), <u8>hint);
        ones += hint;
      }
    }
    if (tooLarge || ones > OMEGA) continue;

    // σ = c̃ ‖ BitPack(z) ‖ HintBitPack(h).
    memory.copy(out, CTILDE, CTILDE_BYTES);
    for (let s: i32 = 0; s < L; s++) packZ(Z + <usize>(s * POLY_BYTES), out + CTILDE_BYTES + <usize>(s * Z_PACKED_BYTES));
    const h = out + CTILDE_BYTES + L * Z_PACKED_BYTES;
    memory.fill(h, 0, OMEGA + K);
    let k: i32 = 0;
    for (let r: i32 = 0; r < K; r++) {
      for (let j: i32 = 0; j < N; j++) {
        if (load<u8>(HINT + <usize>(r * N + j)) != 0) {
          store<u8>(h + k, <u8>j);
          k++;
        }
      }
      store<u8>(h + OMEGA + r, <u8>k);
    }
    return 1;
  }
  return 0;
}
