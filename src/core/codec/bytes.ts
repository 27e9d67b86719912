/** Byte helpers: strict hex and base64, concatenation, fixed-width integers. */
import { MalformedError } from '../errors.js';

/** Lowercase 0x-prefixed hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Parses 0x-prefixed hex; mixed case accepted. `length` (bytes) is enforced when given.
 * Errors name `field` so the caller's message points at the bad input.
 */
export function parseHex(value: unknown, field: string, length?: number): Uint8Array {
  if (typeof value !== 'string') throw new MalformedError(field, 'expected a 0x-prefixed hex string');
  // Buffer's decoder stops at the first non-hex pair, so a full-length result proves the input
  // clean; this avoids a regex pass over multi-kilobyte signatures on the hot path.
  const buf = value.startsWith('0x') ? Buffer.from(value.slice(2), 'hex') : undefined;
  if (!buf || buf.length * 2 !== value.length - 2) throw new MalformedError(field, 'expected 0x-prefixed hex with an even number of digits');
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  if (length !== undefined && bytes.length !== length) {
    throw new MalformedError(field, `expected ${length} bytes, got ${bytes.length}`);
  }
  return bytes;
}

/** Standard base64 of `bytes`. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Parses canonical standard base64; `length` (bytes) is enforced when given.
 *
 * No regex: a pattern like `^(?:[A-Za-z0-9+/]{4})*…$` backtracks once per quantum and overflows
 * V8's regexp stack (RangeError "Maximum call stack size exceeded") above about 5 MB of input,
 * and a stored 30M-gas block is about 10 MB of base64. Buffer's decoder is linear but lenient (it
 * skips foreign characters and whitespace, accepts the URL-safe alphabet, missing padding and
 * non-zero padding bits such as "QR=="), so the decoded bytes must re-encode to exactly the
 * input: only canonical standard base64 does.
 */
export function parseBase64(value: unknown, field: string, length?: number): Uint8Array {
  if (typeof value !== 'string') throw new MalformedError(field, 'expected base64');
  const bytes = new Uint8Array(Buffer.from(value, 'base64'));
  if (toBase64(bytes) !== value) throw new MalformedError(field, 'expected base64');
  if (length !== undefined && bytes.length !== length) {
    throw new MalformedError(field, `expected ${length} bytes, got ${bytes.length}`);
  }
  return bytes;
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `value` as a `width`-byte big-endian unsigned integer; throws if it does not fit. */
export function bigintToBytesBE(value: bigint, width: number): Uint8Array {
  if (value < 0n || value >= 1n << BigInt(8 * width)) throw new RangeError(`${value} does not fit in ${width} bytes`);
  const out = new Uint8Array(width);
  let v = value;
  for (let i = width - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Big-endian unsigned integer from bytes. */
export function bytesToBigintBE(bytes: Uint8Array): bigint {
  // One BigInt operation per byte cost ~1.5 µs for a 32-byte value, on every decoded transaction:
  // leading zeros are skipped, a value of up to 6 bytes is built as a Number, a longer one 8 bytes
  // at a time.
  const n = bytes.length;
  let i = 0;
  while (i < n && bytes[i] === 0) i++;
  if (n - i <= 6) {
    let x = 0;
    for (; i < n; i++) x = x * 256 + bytes[i]!;
    return BigInt(x);
  }
  let v = 0n;
  for (const head = i + ((n - i) % 8); i < head; i++) v = (v << 8n) | BigInt(bytes[i]!);
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  for (; i < n; i += 8) v = (v << 64n) | view.getBigUint64(i);
  return v;
}

/** 8-byte little-endian encoding of an unsigned 64-bit integer (SSZ uint64). */
export function u64LE(value: bigint | number): Uint8Array {
  const v = BigInt(value);
  // DataView.setBigUint64 silently wraps modulo 2^64 (-1 would encode as 2^64-1).
  if (v < 0n || v >= 1n << 64n) throw new RangeError(`${value} does not fit in uint64`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, true);
  return out;
}

/** UTF-8 bytes of a string. */
export function utf8(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'utf8'));
}

/** 32-byte zero-padded ASCII tag: keeps ids, slots and words of different kinds apart under one hash. */
export function tag32(name: string): Uint8Array {
  const out = new Uint8Array(32);
  out.set(utf8(name));
  return out;
}
