/** Shared assertions for unit tests (not a test file itself). */
import * as assert from 'uvu/assert';
import { toHex } from '../../src/core/codec/bytes.js';
import { httpStatusOf } from '../../src/api/errors.js';
import type { SvcError } from '../../src/core/errors.js';

export interface ExpectedError {
  code?: string;
  /** Exact message. */
  message?: string;
  /** Message prefix, for messages whose tail comes from a third-party library. */
  messageStartsWith?: string;
  /** MalformedError.field */
  field?: string;
  /** TxError.specName */
  specName?: string;
  /** The HTTP status a server answers the error with (src/api/errors.ts). */
  status?: number;
}

/**
 * Asserts that `fn` throws an instance of exactly `cls` (not merely a subclass or superclass)
 * with the given properties, and returns the error for further checks.
 */
export function expectError<T extends Error>(fn: () => unknown, cls: abstract new (...args: any[]) => T, expected: ExpectedError = {}): T {
  let caught: unknown;
  let threw = false;
  try {
    fn();
  } catch (err) {
    threw = true;
    caught = err;
  }
  if (!threw) assert.unreachable(`expected ${cls.name} to be thrown, nothing was thrown`);
  if (!(caught instanceof cls)) {
    const got = caught instanceof Error ? `${caught.constructor.name}: ${caught.message}` : String(caught);
    assert.unreachable(`expected ${cls.name}, got ${got}`);
  }
  const err = caught as T & Record<string, unknown>;
  assert.is(err.constructor, cls, `expected exactly ${cls.name}, got ${err.constructor.name}`);
  if (expected.message !== undefined) assert.is(err.message, expected.message);
  if (expected.messageStartsWith !== undefined) {
    assert.ok(err.message.startsWith(expected.messageStartsWith), `message ${JSON.stringify(err.message)} should start with ${JSON.stringify(expected.messageStartsWith)}`);
  }
  if (expected.code !== undefined) assert.is(err.code, expected.code);
  if (expected.field !== undefined) assert.is(err.field, expected.field);
  if (expected.specName !== undefined) assert.is(err.specName, expected.specName);
  if (expected.status !== undefined) assert.is(httpStatusOf(err as unknown as SvcError), expected.status);
  return err;
}

/** Byte equality with a readable diff (hex). */
export function bytesIs(actual: Uint8Array, expected: Uint8Array, msg?: string): void {
  assert.ok(actual instanceof Uint8Array, msg ?? 'expected a Uint8Array');
  assert.is(toHex(actual), toHex(expected), msg);
}

/** Byte inequality. */
export function bytesNot(actual: Uint8Array, other: Uint8Array, msg?: string): void {
  assert.is.not(toHex(actual), toHex(other), msg);
}

/** A copy of `bytes` with bit 0 of byte `index` flipped. */
export function flipByte(bytes: Uint8Array, index: number): Uint8Array {
  const out = bytes.slice();
  out[index] = out[index]! ^ 0x01;
  return out;
}

/** `n` bytes all equal to `fill`. */
export function filled(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}
