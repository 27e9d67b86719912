/** Parsing transaction submissions, shared by REST and JSON-RPC. */
import { parseHex } from '../../../core/codec/bytes.js';
import { requireObject } from '../../../core/codec/json.js';
import { MAX_TX_BATCH } from '../../../core/constants.js';
import { MalformedError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import { decodeEnvelopeList, decodeTxViews, type Transaction } from '../../../core/types/transaction.js';
import { txFromJson } from '../../../core/types/transaction-json.js';

/** A parsed submission: the transaction and, when it arrived as bytes, its canonical envelope. */
export interface ParsedSubmission {
  tx: Transaction;
  envelope?: Uint8Array;
}

/**
 * `{raw: "0x…"}` (the signed envelope), `{tx: {…}}`, or a bare transaction JSON object. A raw
 * envelope is returned too: decodeTx proved it canonical, so it need not be encoded again.
 */
export function parseSubmission(body: unknown): ParsedSubmission {
  const o = requireObject(body, 'request');
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === 'raw') return parseRaw(o.raw, 'raw');
  if (keys.length === 1 && keys[0] === 'tx') return { tx: txFromJson(o.tx) };
  return { tx: txFromJson(o) };
}

/** Decodes a 0x envelope string. */
export function parseRaw(value: unknown, field: string): { tx: Transaction; envelope: Uint8Array } {
  return parseEnvelope(parseHex(value, field));
}

/**
 * Decodes envelope bytes (a binary body, a batch entry): the same checks and errors as `{raw}`.
 * The transaction's byte fields are views into `envelope`, which the pool keeps anyway, so a
 * pooled transaction holds its bytes once.
 */
export function parseEnvelope(envelope: Uint8Array): { tx: Transaction; envelope: Uint8Array } {
  return { tx: decodeTxViews(envelope), envelope };
}

/** A batch entry: its bytes when it has any (a JSON entry that is not hex has none), and what it was sent as. */
export interface BatchEntry {
  bytes: Uint8Array | undefined;
  /** The JSON value (undefined for an SSZ entry) and its field name, for the error a non-hex one gets. */
  value?: unknown;
  field?: string;
}

/**
 * Splits a batch submission (an SSZ envelope list, or JSON `{raw: ["0x…", …]}`) into entries that
 * are parsed one by one (parseBatchEntry), so a bad entry refuses only itself. A body that is not
 * a list at all is MALFORMED_INPUT; more than MAX_TX_BATCH entries is BATCH_TOO_LARGE (413).
 * Loops, not per-request callbacks: a closure made per request was compiled again by the
 * optimiser for each request once hot.
 */
export function parseBatch(body: unknown, bytes: Uint8Array | undefined): BatchEntry[] {
  if (bytes) {
    const list = decodeEnvelopeList(bytes, 'request');
    tooLarge(list.length);
    const entries = new Array<BatchEntry>(list.length);
    for (let i = 0; i < list.length; i++) entries[i] = { bytes: list[i] };
    return entries;
  }
  const o = requireObject(body, 'request');
  const keys = Object.keys(o);
  if (keys.length !== 1 || keys[0] !== 'raw' || !Array.isArray(o.raw)) throw new MalformedError('request', 'expected {"raw": ["0x…", …]}');
  const raw = o.raw as unknown[];
  tooLarge(raw.length);
  const entries = new Array<BatchEntry>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const field = `raw[${i}]`;
    let b: Uint8Array | undefined;
    try {
      b = parseHex(raw[i], field);
    } catch {
      b = undefined;
    }
    entries[i] = { bytes: b, value: raw[i], field };
  }
  return entries;
}

/** Decodes one batch entry with the checks and errors of a single submission (a non-hex JSON entry gets parseHex's). */
export function parseBatchEntry(entry: BatchEntry): { tx: Transaction; envelope: Uint8Array } {
  return parseEnvelope(entry.bytes ?? parseHex(entry.value, entry.field ?? 'raw'));
}

function tooLarge(count: number): void {
  if (count > MAX_TX_BATCH) throw new ExecutionError('BATCH_TOO_LARGE', `a batch carries at most ${MAX_TX_BATCH} transactions, got ${count}`);
}
