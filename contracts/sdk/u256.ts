// An unsigned 256-bit integer (token amounts, call values), as four 64-bit limbs. Arithmetic is
// checked: overflow or underflow reverts the call rather than wrapping, so a balance can never
// silently wrap around. Encoded as 32 bytes big-endian everywhere (calldata, storage, host).
import { revert } from "./env";

export class U256 {
  /** Limbs, least significant first. */
  constructor(public a0: u64 = 0, public a1: u64 = 0, public a2: u64 = 0, public a3: u64 = 0) {}

  /** 0. */
  static zero(): U256 {
    return new U256();
  }

  /** A 64-bit value widened. */
  static fromU64(v: u64): U256 {
    return new U256(v);
  }

  /** Decodes 32 bytes big-endian; reverts on any other length. */
  static fromBytes(bytes: Uint8Array): U256 {
    if (bytes.length != 32) revert("U256: expected 32 bytes, got " + bytes.length.toString());
    return new U256(readU64BE(bytes, 24), readU64BE(bytes, 16), readU64BE(bytes, 8), readU64BE(bytes, 0));
  }

  /** 32 bytes big-endian. */
  toBytes(): Uint8Array {
    const out = new Uint8Array(32);
    writeU64BE(out, 0, this.a3);
    writeU64BE(out, 8, this.a2);
    writeU64BE(out, 16, this.a1);
    writeU64BE(out, 24, this.a0);
    return out;
  }

  /** Whether the value fits in 64 bits. */
  fitsU64(): bool {
    return (this.a1 | this.a2 | this.a3) == 0;
  }

  /** The value as u64; reverts if it does not fit. */
  toU64(): u64 {
    if (!this.fitsU64()) revert("U256: value does not fit in u64");
    return this.a0;
  }

  /** Whether the value is 0. */
  isZero(): bool {
    return (this.a0 | this.a1 | this.a2 | this.a3) == 0;
  }

  /** -1, 0 or 1 as this is below, equal to or above `other`. */
  cmp(other: U256): i32 {
    if (this.a3 != other.a3) return this.a3 < other.a3 ? -1 : 1;
    if (this.a2 != other.a2) return this.a2 < other.a2 ? -1 : 1;
    if (this.a1 != other.a1) return this.a1 < other.a1 ? -1 : 1;
    if (this.a0 != other.a0) return this.a0 < other.a0 ? -1 : 1;
    return 0;
  }

  /** Equality by value. */
  eq(other: U256): bool {
    return this.cmp(other) == 0;
  }

  /** this < other. */
  lt(other: U256): bool {
    return this.cmp(other) < 0;
  }

  /** this <= other. */
  lte(other: U256): bool {
    return this.cmp(other) <= 0;
  }

  /** this > other. */
  gt(other: U256): bool {
    return this.cmp(other) > 0;
  }

  /** this >= other. */
  gte(other: U256): bool {
    return this.cmp(other) >= 0;
  }

  /** this + other; reverts on overflow past 2^256 - 1. */
  add(other: U256): U256 {
    let carry: u64 = 0;
    const r0 = addCarry(this.a0, other.a0, carry);
    carry = lastCarry;
    const r1 = addCarry(this.a1, other.a1, carry);
    carry = lastCarry;
    const r2 = addCarry(this.a2, other.a2, carry);
    carry = lastCarry;
    const r3 = addCarry(this.a3, other.a3, carry);
    if (lastCarry != 0) revert("U256: addition overflow");
    return new U256(r0, r1, r2, r3);
  }

  /** this - other; reverts if other is larger. */
  sub(other: U256): U256 {
    let borrow: u64 = 0;
    const r0 = subBorrow(this.a0, other.a0, borrow);
    borrow = lastCarry;
    const r1 = subBorrow(this.a1, other.a1, borrow);
    borrow = lastCarry;
    const r2 = subBorrow(this.a2, other.a2, borrow);
    borrow = lastCarry;
    const r3 = subBorrow(this.a3, other.a3, borrow);
    if (lastCarry != 0) revert("U256: subtraction underflow");
    return new U256(r0, r1, r2, r3);
  }

  /** this × other; reverts on overflow. Schoolbook on 32-bit halves so no partial product exceeds 64 bits. */
  mul(other: U256): U256 {
    const x = this.halves();
    const y = other.halves();
    const r = new StaticArray<u64>(8);
    for (let i = 0; i < 8; i++) {
      const xi = x[i];
      if (xi == 0) continue;
      let carry: u64 = 0;
      for (let j = 0; j < 8; j++) {
        const k = i + j;
        const t = xi * y[j] + (k < 8 ? r[k] : 0) + carry;
        if (k < 8) {
          r[k] = t & 0xffffffff;
          carry = t >> 32;
        } else if (t != 0) {
          revert("U256: multiplication overflow");
        } else {
          carry = 0;
        }
      }
      if (carry != 0) revert("U256: multiplication overflow");
    }
    return new U256(r[0] | (r[1] << 32), r[2] | (r[3] << 32), r[4] | (r[5] << 32), r[6] | (r[7] << 32));
  }

  /** Decimal digits, for revert reasons and logs. */
  toString(): string {
    if (this.isZero()) return "0";
    // Repeated division by 10^9 over 32-bit halves keeps every step within u64.
    const h = this.halves();
    let out = "";
    let nonZero = true;
    while (nonZero) {
      let rem: u64 = 0;
      nonZero = false;
      for (let i = 7; i >= 0; i--) {
        const cur = (rem << 32) | h[i];
        h[i] = cur / 1000000000;
        rem = cur % 1000000000;
        if (h[i] != 0) nonZero = true;
      }
      let chunk = rem.toString();
      if (nonZero) while (chunk.length < 9) chunk = "0" + chunk;
      out = chunk + out;
    }
    return out;
  }

  private halves(): StaticArray<u64> {
    const h = new StaticArray<u64>(8);
    h[0] = this.a0 & 0xffffffff;
    h[1] = this.a0 >> 32;
    h[2] = this.a1 & 0xffffffff;
    h[3] = this.a1 >> 32;
    h[4] = this.a2 & 0xffffffff;
    h[5] = this.a2 >> 32;
    h[6] = this.a3 & 0xffffffff;
    h[7] = this.a3 >> 32;
    return h;
  }

  // Operators for AssemblyScript code (a + b, a < b, …). Editors type-check as TypeScript, which
  // knows nothing of operator overloading, so the examples call the methods instead.
  // @ts-ignore: decorator
  @operator("+") static __add(a: U256, b: U256): U256 {
    return a.add(b);
  }
  // @ts-ignore: decorator
  @operator("-") static __sub(a: U256, b: U256): U256 {
    return a.sub(b);
  }
  // @ts-ignore: decorator
  @operator("*") static __mul(a: U256, b: U256): U256 {
    return a.mul(b);
  }
  // @ts-ignore: decorator
  @operator("<") static __lt(a: U256, b: U256): bool {
    return a.cmp(b) < 0;
  }
  // @ts-ignore: decorator
  @operator("<=") static __le(a: U256, b: U256): bool {
    return a.cmp(b) <= 0;
  }
  // @ts-ignore: decorator
  @operator(">") static __gt(a: U256, b: U256): bool {
    return a.cmp(b) > 0;
  }
  // @ts-ignore: decorator
  @operator(">=") static __ge(a: U256, b: U256): bool {
    return a.cmp(b) >= 0;
  }
}

// The carry (or borrow) out of the last addCarry/subBorrow: AssemblyScript has no multi-value
// returns without allocation, and this is the cheapest way to hand back a second result.
let lastCarry: u64 = 0;

function addCarry(a: u64, b: u64, carryIn: u64): u64 {
  const s = a + b;
  const s2 = s + carryIn;
  lastCarry = (s < a ? 1 : 0) | (s2 < s ? 1 : 0);
  return s2;
}

function subBorrow(a: u64, b: u64, borrowIn: u64): u64 {
  const d = a - b;
  const d2 = d - borrowIn;
  lastCarry = (a < b ? 1 : 0) | (d < borrowIn ? 1 : 0);
  return d2;
}

/** Reads 8 bytes big-endian at `offset`. */
export function readU64BE(bytes: Uint8Array, offset: i32): u64 {
  let v: u64 = 0;
  for (let i = 0; i < 8; i++) v = (v << 8) | <u64>bytes[offset + i];
  return v;
}

/** Writes `v` as 8 bytes big-endian at `offset`. */
export function writeU64BE(bytes: Uint8Array, offset: i32, v: u64): void {
  for (let i = 7; i >= 0; i--) {
    bytes[offset + i] = <u8>(v & 0xff);
    v >>= 8;
  }
}
