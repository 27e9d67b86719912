// Arguments and return data in the chain's one calldata format (the same bytes the CLI,
// eth_call and the TypeScript codec produce): concatenated tagged values, each a tag byte and a
// payload. Lengths are u32 little-endian, u64 is little-endian, U256 is big-endian.
import { Address, ADDRESS_SIZE } from "./address";
import { revert } from "./env";
import { svc_input_copy, svc_input_size, svc_set_return } from "./host";
import { U256 } from "./u256";

/** Value tags, one byte before each value. */
export const TAG_BOOL: u8 = 0x01;
export const TAG_U64: u8 = 0x02;
export const TAG_U256: u8 = 0x03;
export const TAG_ADDRESS: u8 = 0x04;
export const TAG_BYTES: u8 = 0x05;
export const TAG_STRING: u8 = 0x06;
export const TAG_BYTES32: u8 = 0x07;

/** The name of a tag, for error reasons. */
export function tagName(tag: u8): string {
  switch (tag) {
    case TAG_BOOL: return "bool";
    case TAG_U64: return "u64";
    case TAG_U256: return "u256";
    case TAG_ADDRESS: return "address";
    case TAG_BYTES: return "bytes";
    case TAG_STRING: return "string";
    case TAG_BYTES32: return "bytes32";
    default: return "unknown tag " + tag.toString();
  }
}

/** Builds a sequence of tagged values (call arguments, return data, event data). */
export class Encoder {
  private buf: Uint8Array = new Uint8Array(64);
  private len: i32 = 0;

  /** Appends a bool. */
  bool(v: bool): Encoder {
    this.tag(TAG_BOOL, 1);
    this.buf[this.len++] = v ? 1 : 0;
    return this;
  }

  /** Appends a u64 (8 bytes little-endian). */
  u64(v: u64): Encoder {
    this.tag(TAG_U64, 8);
    for (let i = 0; i < 8; i++) {
      this.buf[this.len++] = <u8>(v & 0xff);
      v >>= 8;
    }
    return this;
  }

  /** Appends a U256 (32 bytes big-endian). */
  u256(v: U256): Encoder {
    this.tag(TAG_U256, 32);
    this.raw(v.toBytes());
    return this;
  }

  /** Appends an address (20 bytes). */
  address(a: Address): Encoder {
    this.tag(TAG_ADDRESS, ADDRESS_SIZE);
    this.raw(a.bytes);
    return this;
  }

  /** Appends bytes (u32 LE length, then the bytes). */
  bytes(b: Uint8Array): Encoder {
    this.tag(TAG_BYTES, 4 + b.length);
    this.lengthPrefix(b.length);
    this.raw(b);
    return this;
  }

  /** Appends a string (u32 LE length, then UTF-8). */
  string(s: string): Encoder {
    const b = Uint8Array.wrap(String.UTF8.encode(s));
    this.tag(TAG_STRING, 4 + b.length);
    this.lengthPrefix(b.length);
    this.raw(b);
    return this;
  }

  /** Appends exactly 32 bytes; reverts on any other length. */
  bytes32(b: Uint8Array): Encoder {
    if (b.length != 32) revert("bytes32: expected 32 bytes, got " + b.length.toString());
    this.tag(TAG_BYTES32, 32);
    this.raw(b);
    return this;
  }

  /** The encoded bytes so far. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  private tag(tag: u8, payload: i32): void {
    this.reserve(1 + payload);
    this.buf[this.len++] = tag;
  }

  private lengthPrefix(n: i32): void {
    for (let i = 0; i < 4; i++) this.buf[this.len++] = <u8>((n >>> (8 * i)) & 0xff);
  }

  private raw(b: Uint8Array): void {
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  private reserve(n: i32): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length << 1;
    while (size < this.len + n) size <<= 1;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}

/** Reads tagged values in order; a wrong tag or truncated value reverts with the argument's position. */
export class Args {
  private pos: i32 = 0;
  private index: i32 = 0;

  constructor(public readonly data: Uint8Array) {}

  /** The current call's arguments (a deployment's constructor arguments in `init`). */
  static input(): Args {
    const data = new Uint8Array(svc_input_size());
    if (data.length > 0) svc_input_copy(data.dataStart);
    return new Args(data);
  }

  /** Reads a bool. */
  bool(): bool {
    const at = this.expect(TAG_BOOL, 1);
    const b = this.data[at];
    if (b > 1) this.fail("bool must be 0 or 1");
    return b == 1;
  }

  /** Reads a u64. */
  u64(): u64 {
    const at = this.expect(TAG_U64, 8);
    let v: u64 = 0;
    for (let i = 7; i >= 0; i--) v = (v << 8) | <u64>this.data[at + i];
    return v;
  }

  /** Reads a U256. */
  u256(): U256 {
    const at = this.expect(TAG_U256, 32);
    return U256.fromBytes(this.data.slice(at, at + 32));
  }

  /** Reads an address. */
  address(): Address {
    const at = this.expect(TAG_ADDRESS, ADDRESS_SIZE);
    return new Address(this.data.slice(at, at + ADDRESS_SIZE));
  }

  /** Reads bytes. */
  bytes(): Uint8Array {
    const at = this.expect(TAG_BYTES, 4);
    return this.data.slice(at + 4, at + 4 + this.payload(at));
  }

  /** Reads a UTF-8 string. */
  string(): string {
    const at = this.expect(TAG_STRING, 4);
    const bytes = this.data.slice(at + 4, at + 4 + this.payload(at));
    return String.UTF8.decode(bytes.buffer);
  }

  /** Reads exactly 32 bytes. */
  bytes32(): Uint8Array {
    const at = this.expect(TAG_BYTES32, 32);
    return this.data.slice(at, at + 32);
  }

  /** Whether any value is left. */
  hasMore(): bool {
    return this.pos < this.data.length;
  }

  /** Reverts if values are left over (a caller passing more arguments than the method takes). */
  end(): void {
    if (this.hasMore()) revert("too many arguments: expected " + this.index.toString());
  }

  // Checks the next tag and that `fixed` payload bytes follow; returns the payload's offset.
  private expect(tag: u8, fixed: i32): i32 {
    this.index++;
    if (this.pos >= this.data.length) this.fail("missing, expected " + tagName(tag));
    const found = this.data[this.pos];
    if (found != tag) this.fail("expected " + tagName(tag) + ", got " + tagName(found));
    const at = this.pos + 1;
    if (at + fixed > this.data.length) this.fail("truncated " + tagName(tag));
    this.pos = at + fixed;
    return at;
  }

  // A length-prefixed payload: reads its u32 LE length at `at` and moves past the bytes.
  private payload(at: i32): i32 {
    let n: u32 = 0;
    for (let i = 3; i >= 0; i--) n = (n << 8) | <u32>this.data[at + i];
    if (<u64>this.pos + <u64>n > <u64>this.data.length) this.fail("truncated value");
    this.pos += <i32>n;
    return <i32>n;
  }

  private fail(detail: string): void {
    revert("argument " + this.index.toString() + ": " + detail);
  }
}

/** Sets the call's return data: one value (`Result.u64(n)`) or several (`Result.set(encoder)`). */
export class Result {
  /** Returns the values in `values`. */
  static set(values: Encoder): void {
    const bytes = values.toBytes();
    svc_set_return(bytes.dataStart, bytes.length);
  }

  /** Returns a bool. */
  static bool(v: bool): void {
    Result.set(new Encoder().bool(v));
  }

  /** Returns a u64. */
  static u64(v: u64): void {
    Result.set(new Encoder().u64(v));
  }

  /** Returns a U256. */
  static u256(v: U256): void {
    Result.set(new Encoder().u256(v));
  }

  /** Returns an address. */
  static address(a: Address): void {
    Result.set(new Encoder().address(a));
  }

  /** Returns bytes. */
  static bytes(b: Uint8Array): void {
    Result.set(new Encoder().bytes(b));
  }

  /** Returns a string. */
  static string(s: string): void {
    Result.set(new Encoder().string(s));
  }
}
