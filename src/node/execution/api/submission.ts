/** Parsing transaction submissions, shared by REST and JSON-RPC. */
import { parseHex } from '../../../core/codec/bytes.js';
import { requireObject } from '../../../core/codec/json.js';
import { MAX_TX_BATCH } from '../../../core/constants.js';
import { MalformedError, SvcError } from '../../../core/errors.js';
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

/** A batch entry: its bytes when it has any (a JSON entry that is not hex has none), and how to parse it. */
export interface BatchEntry {
  bytes: Uint8Array | undefined;
  parse: () => { tx: Transaction; envelope: Uint8Array };
}

/**
 * Splits a batch submission (an SSZ envelope list, or JSON `{raw: ["0x…", …]}`) into entries that
 * are parsed one by one, so a bad entry refuses only itself. A body that is not a list at all is
 * MALFORMED_INPUT; more than MAX_TX_BATCH entries is BATCH_TOO_LARGE (413).
 */
export function parseBatch(body: unknown, bytes: Uint8Array | undefined): BatchEntry[] {
  let entries: BatchEntry[];
  if (bytes) {
    entries = decodeEnvelopeList(bytes, 'request').map((e) => ({ bytes: e, parse: () => parseEnvelope(e) }));
  } else {
    const o = requireObject(body, 'request');
    const keys = Object.keys(o);
    if (keys.length !== 1 || keys[0] !== 'raw' || !Array.isArray(o.raw)) throw new MalformedError('request', 'expected {"raw": ["0x…", …]}');
    tooLarge(o.raw.length);
    entries = (o.raw as unknown[]).map((v, i) => {
      const field = `raw[${i}]`;
      let b: Uint8Array | undefined;
      try {
        b = parseHex(v, field);
      } catch {
        b = undefined;
      }
      return { bytes: b, parse: () => parseEnvelope(b ?? parseHex(v, field)) };
    });
  }
  tooLarge(entries.length);
  return entries;
}

function tooLarge(count: number): void {
  if (count > MAX_TX_BATCH) throw new SvcError('BATCH_TOO_LARGE', `a batch carries at most ${MAX_TX_BATCH} transactions, got ${count}`, 413);
}
