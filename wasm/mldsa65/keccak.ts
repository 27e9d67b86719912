/**
 * Keccak-f[1600] and the SHAKE128/SHAKE256 sponges (FIPS 202) for the ML-DSA verifier: one
 * sponge at a time, its state in STATE. keccakF keeps the 25 lanes in locals for the 24 rounds
 * (theta, rho and pi into b, chi, iota), unrolled by lane.
 */

const ROUND_CONSTANTS = memory.data<u64>([
  0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
  0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
  0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
  0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
  0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
  0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]);
/** The sponge's 25 lanes; ExpandA reads its squeezed blocks straight from here. */
export const STATE = memory.data(200, 16);
/** Bytes of the sponge's current block already absorbed or squeezed. */
let spongeAt: i32 = 0;

/** Keccak-f[1600] on the sponge state at STATE: 24 rounds over 25 lanes held in locals. */
export function keccakF(): void {
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


/** Starts a new sponge: the state zeroed, nothing absorbed. */
export function spongeReset(): void {
  memory.fill(STATE, 0, 200);
  spongeAt = 0;
}

/** Absorbs `len` bytes at `data` (whole lanes at once when a full block remains). */
export function absorb(rate: i32, data: usize, len: i32): void {
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

/** Absorbs one byte. */
export function absorbByte(rate: i32, b: u8): void {
  store<u8>(STATE + spongeAt, load<u8>(STATE + spongeAt) ^ b);
  if (++spongeAt == rate) {
    keccakF();
    spongeAt = 0;
  }
}

/** Pads a SHAKE absorption and permutes; squeezing starts at the state's first byte. */
export function finish(rate: i32): void {
  store<u8>(STATE + spongeAt, load<u8>(STATE + spongeAt) ^ 0x1f);
  store<u8>(STATE + rate - 1, load<u8>(STATE + rate - 1) ^ 0x80);
  keccakF();
  spongeAt = 0;
}

/** Squeezes `len` bytes to `out`, permuting at each block's end. */
export function squeeze(rate: i32, out: usize, len: i32): void {
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
