/**
 * The one calldata format of svc contracts (DECISIONS: issue 11, item 4), shared by transactions,
 * eth_call, the CLI and the AssemblyScript SDK's twin in contracts/sdk/. Lengths are little-endian.
 *
 * - call data   = u8 method_len ‖ method name (ASCII, 1..64 chars) ‖ args
 * - deploy data = u32 code_length ‖ wasm code ‖ constructor args
 * - args and return data = concatenated tagged values (tag u8, then the payload, see `Tag`)
 */
import { ADDRESS_BYTES, HASH_BYTES } from '../constants.js';
import { SvcError } from '../errors.js';
import { sha3 } from '../crypto/hash.js';
import { bigintToBytesBE, bytesToBigintBE, concatBytes, parseHex, toHex, utf8 } from './bytes.js';

/** Value tags: one byte before each value's payload. */
export const Tag = { bool: 0x01, u64: 0x02, u256: 0x03, address: 0x04, bytes: 0x05, string: 0x06, bytes32: 0x07 } as const;

export type ValueType = keyof typeof Tag;

/** A typed value as the codec carries it (address and bytes32 as lowercase 0x hex). */
export type CallValue =
  | { type: 'bool'; value: boolean }
  | { type: 'u64'; value: bigint }
  | { type: 'u256'; value: bigint }
  | { type: 'address'; value: string }
  | { type: 'bytes'; value: Uint8Array }
  | { type: 'string'; value: string }
  | { type: 'bytes32'; value: string };

/** Longest method name, in ASCII characters. */
export const MAX_METHOD_LENGTH = 64;
const U64_MAX = (1n << 64n) - 1n;
const U256_MAX = (1n << 256n) - 1n;
const METHOD_RE = /^[\x21-\x7e]{1,64}$/;

/** Calldata that does not follow the format; `code` is CALLDATA_MALFORMED. */
export class CalldataError extends SvcError {
  constructor(message: string) {
    super('CALLDATA_MALFORMED', message);
  }
}

/** Checks a method name: 1..64 printable ASCII characters without spaces. */
export function assertMethodName(method: string): void {
  if (!METHOD_RE.test(method)) throw new CalldataError(`method name must be 1..${MAX_METHOD_LENGTH} printable ASCII characters without spaces; got ${JSON.stringify(method)}`);
}

function u32LE(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, true);
  return out;
}

/** Encodes one tagged value; throws CalldataError when it is out of its type's range. */
export function encodeValue(v: CallValue): Uint8Array {
  switch (v.type) {
    case 'bool':
      return Uint8Array.of(Tag.bool, v.value ? 1 : 0);
    case 'u64': {
      if (v.value < 0n || v.value > U64_MAX) throw new CalldataError(`u64 out of range: ${v.value}`);
      const out = new Uint8Array(9);
      out[0] = Tag.u64;
      new DataView(out.buffer).setBigUint64(1, v.value, true);
      return out;
    }
    case 'u256':
      if (v.value < 0n || v.value > U256_MAX) throw new CalldataError(`u256 out of range: ${v.value}`);
      return concatBytes(Uint8Array.of(Tag.u256), bigintToBytesBE(v.value, 32));
    case 'address':
      return concatBytes(Uint8Array.of(Tag.address), fixedHex(v.value, ADDRESS_BYTES, 'address'));
    case 'bytes32':
      return concatBytes(Uint8Array.of(Tag.bytes32), fixedHex(v.value, HASH_BYTES, 'bytes32'));
    case 'bytes':
      return concatBytes(Uint8Array.of(Tag.bytes), u32LE(v.value.length), v.value);
    case 'string': {
      const b = utf8(v.value);
      return concatBytes(Uint8Array.of(Tag.string), u32LE(b.length), b);
    }
  }
}

function fixedHex(value: string, length: number, type: string): Uint8Array {
  try {
    return parseHex(value, type, length);
  } catch (err) {
    throw new CalldataError(`${type} must be 0x and ${length * 2} hex digits: ${(err as Error).message}`);
  }
}

/** Concatenated tagged values. */
export function encodeValues(values: readonly CallValue[]): Uint8Array {
  return concatBytes(...values.map(encodeValue));
}

/** Call data: the method name, then the tagged arguments. */
export function encodeCall(method: string, args: readonly CallValue[] = []): Uint8Array {
  assertMethodName(method);
  return concatBytes(Uint8Array.of(method.length), new TextEncoder().encode(method), encodeValues(args));
}

/** Deploy data: the code with its length, then the constructor arguments. */
export function encodeDeploy(code: Uint8Array, args: readonly CallValue[] = []): Uint8Array {
  if (code.length === 0 || code.length > 0xffffffff) throw new CalldataError('deploy code must be 1 to 2^32-1 bytes');
  return concatBytes(u32LE(code.length), code, encodeValues(args));
}

/** Splits call data into its method name and argument bytes. */
export function decodeCall(data: Uint8Array): { method: string; args: Uint8Array } {
  const len = data[0];
  if (len === undefined) throw new CalldataError('call data is empty: expected a method name');
  if (len < 1 || len > MAX_METHOD_LENGTH) throw new CalldataError(`method name length ${len} is outside 1..${MAX_METHOD_LENGTH}`);
  if (data.length < 1 + len) throw new CalldataError(`call data ends inside the method name (${data.length - 1} of ${len} bytes)`);
  const method = String.fromCharCode(...data.subarray(1, 1 + len));
  assertMethodName(method);
  return { method, args: data.subarray(1 + len) };
}

/** Splits deploy data into the code and the constructor argument bytes. */
export function decodeDeploy(data: Uint8Array): { code: Uint8Array; args: Uint8Array } {
  if (data.length < 4) throw new CalldataError(`deploy data is ${data.length} bytes: expected a u32 code length first`);
  const len = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0, true);
  if (len === 0) throw new CalldataError('deploy data carries no code');
  if (data.length < 4 + len) throw new CalldataError(`deploy data ends inside the code (${data.length - 4} of ${len} bytes)`);
  return { code: data.subarray(4, 4 + len), args: data.subarray(4 + len) };
}

/** Decodes concatenated tagged values; malformed input (unknown tag, truncation, bad UTF-8, bool not 0/1) is a CalldataError. */
export function decodeValues(bytes: Uint8Array): CallValue[] {
  const out: CallValue[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const take = (n: number, what: string): Uint8Array => {
    if (at + n > bytes.length) throw new CalldataError(`value ${out.length} (${what}) is truncated: needs ${n} bytes at offset ${at}, ${bytes.length - at} left`);
    const b = bytes.subarray(at, at + n);
    at += n;
    return b;
  };
  const length = (what: string): number => {
    take(4, `${what} length`);
    return view.getUint32(at - 4, true);
  };
  while (at < bytes.length) {
    const tag = bytes[at++]!;
    switch (tag) {
      case Tag.bool: {
        const b = take(1, 'bool')[0]!;
        if (b > 1) throw new CalldataError(`value ${out.length} (bool) must be 0 or 1, got ${b}`);
        out.push({ type: 'bool', value: b === 1 });
        break;
      }
      case Tag.u64:
        take(8, 'u64');
        out.push({ type: 'u64', value: view.getBigUint64(at - 8, true) });
        break;
      case Tag.u256:
        out.push({ type: 'u256', value: bytesToBigintBE(take(32, 'u256')) });
        break;
      case Tag.address:
        out.push({ type: 'address', value: toHex(take(ADDRESS_BYTES, 'address')) });
        break;
      case Tag.bytes32:
        out.push({ type: 'bytes32', value: toHex(take(HASH_BYTES, 'bytes32')) });
        break;
      case Tag.bytes:
        out.push({ type: 'bytes', value: take(length('bytes'), 'bytes').slice() });
        break;
      case Tag.string: {
        const raw = take(length('string'), 'string');
        let value: string;
        try {
          value = new TextDecoder('utf-8', { fatal: true }).decode(raw);
        } catch {
          throw new CalldataError(`value ${out.length} (string) is not valid UTF-8`);
        }
        out.push({ type: 'string', value });
        break;
      }
      default:
        throw new CalldataError(`unknown value tag 0x${tag.toString(16).padStart(2, '0')} at offset ${at - 1}`);
    }
  }
  return out;
}

const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function parseUnsigned(raw: string, max: bigint, type: string): bigint {
  if (!DECIMAL_RE.test(raw) && !/^0x[0-9a-fA-F]+$/.test(raw)) throw new CalldataError(`${type} must be a decimal or 0x hex number; got ${JSON.stringify(raw)}`);
  const n = BigInt(raw);
  if (n > max) throw new CalldataError(`${type} out of range: ${raw}`);
  return n;
}

function parseBytes(raw: string): Uint8Array {
  try {
    return parseHex(raw, 'bytes');
  } catch {
    throw new CalldataError(`bytes must be 0x and an even number of hex digits; got ${JSON.stringify(raw)}`);
  }
}

/**
 * One command-line argument as a typed value. Without a type: `0x` + 40 hex digits is an address,
 * decimal digits a u256, `true`/`false` a bool, other `0x…` bytes, anything else a string. With
 * `type:value` (u64, u256, address, bytes32, bytes, string, bool) the type is explicit.
 */
export function parseCliArg(arg: string): CallValue {
  const colon = arg.indexOf(':');
  const prefix = colon > 0 ? arg.slice(0, colon) : '';
  if (Object.hasOwn(Tag, prefix)) {
    const raw = arg.slice(colon + 1);
    switch (prefix as ValueType) {
      case 'u64':
        return { type: 'u64', value: parseUnsigned(raw, U64_MAX, 'u64') };
      case 'u256':
        return { type: 'u256', value: parseUnsigned(raw, U256_MAX, 'u256') };
      case 'address':
        if (!ADDRESS_RE.test(raw)) throw new CalldataError(`address must be 0x and 40 hex digits; got ${JSON.stringify(raw)}`);
        return { type: 'address', value: raw.toLowerCase() };
      case 'bytes32':
        return { type: 'bytes32', value: toHex(fixedHex(raw, HASH_BYTES, 'bytes32')) };
      case 'bytes':
        return { type: 'bytes', value: parseBytes(raw) };
      case 'string':
        return { type: 'string', value: raw };
      case 'bool':
        if (raw !== 'true' && raw !== 'false') throw new CalldataError(`bool must be true or false; got ${JSON.stringify(raw)}`);
        return { type: 'bool', value: raw === 'true' };
    }
  }
  if (ADDRESS_RE.test(arg)) return { type: 'address', value: arg.toLowerCase() };
  if (DECIMAL_RE.test(arg)) return { type: 'u256', value: parseUnsigned(arg, U256_MAX, 'u256') };
  if (arg === 'true' || arg === 'false') return { type: 'bool', value: arg === 'true' };
  if (arg.startsWith('0x')) return { type: 'bytes', value: parseBytes(arg) };
  return { type: 'string', value: arg };
}

/** A value as JSON and the CLI print it: numbers as decimal strings, bytes as 0x hex. */
export function valueToJson(v: CallValue): { type: ValueType; value: string | boolean } {
  switch (v.type) {
    case 'bool':
      return { type: v.type, value: v.value };
    case 'u64':
    case 'u256':
      return { type: v.type, value: v.value.toString(10) };
    case 'bytes':
      return { type: v.type, value: toHex(v.value) };
    default:
      return { type: v.type, value: v.value };
  }
}

/** topic0 of an event: SHA3-256 of its UTF-8 name. */
export function eventTopic(name: string): string {
  return toHex(sha3(utf8(name)));
}

/** An address as an event topic: 12 zero bytes, then the address. */
export function addressTopic(address: string): string {
  return '0x' + '00'.repeat(12) + toHex(fixedHex(address, ADDRESS_BYTES, 'address')).slice(2);
}

/** The address in an address topic, or undefined when the topic is not one (non-zero first 12 bytes). */
export function topicAddress(topic: string): string | undefined {
  return /^0x0{24}[0-9a-f]{40}$/.test(topic) ? '0x' + topic.slice(26) : undefined;
}
