/** Strict parsers for JSON fields: no coercion, canonical forms only. */
import { MalformedError } from '../errors.js';
import { parseHex } from './bytes.js';

const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;

/**
 * Parses a base-10 string (no sign, no leading zeros, no exponent) into a bigint below 2^bits.
 * Anything else, a JSON number included, is `malformed <field>`.
 */
export function parseDecimal(value: unknown, field: string, bits: number): bigint {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) throw new MalformedError(field);
  const v = BigInt(value);
  if (v >= 1n << BigInt(bits)) throw new MalformedError(field, `exceeds ${bits}-bit range`);
  return v;
}

/** Parses a JSON integer in [0, max]; strings, floats and negatives are `malformed <field>`. */
export function parseUint(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || Object.is(value, -0)) {
    throw new MalformedError(field, 'expected a non-negative integer');
  }
  if (value > max) throw new MalformedError(field, `exceeds ${max}`);
  return value;
}

/** Parses a 0x address (20 bytes, any case). */
export function parseAddress(value: unknown, field: string): Uint8Array {
  return parseHex(value, field, 20);
}

/** Asserts a plain JSON object. */
export function requireObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedError(field, 'expected an object');
  }
  // An application/octet-stream body arrives as a Buffer: on a route that takes only JSON it is
  // a malformed request, not an object whose keys are byte indices.
  if (ArrayBuffer.isView(value)) throw new MalformedError(field, 'expected a JSON object (this route takes no SSZ body)');
  return value as Record<string, unknown>;
}

/** Rejects keys outside `allowed`, so a typo never silently drops a field. */
export function rejectUnknownKeys(obj: Record<string, unknown>, allowed: readonly string[], field: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw new MalformedError(`${field}.${key}`, 'unknown field');
  }
}

/** Parses a JSON string field that must be present and non-empty. */
export function parseString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new MalformedError(field, 'expected a non-empty string');
  return value;
}
