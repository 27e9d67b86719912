/** Parsing transaction submissions, shared by REST and JSON-RPC. */
import { parseHex } from '../../../core/codec/bytes.js';
import { requireObject } from '../../../core/codec/json.js';
import { decodeTx, type Transaction } from '../../../core/types/transaction.js';
import { txFromJson } from '../../../core/types/transaction-json.js';

/**
 * `{raw: "0x…"}` (the signed envelope), `{tx: {…}}`, or a bare transaction JSON object. A raw
 * envelope is returned too: decodeTx proved it canonical, so it need not be encoded again.
 */
export function parseSubmission(body: unknown): { tx: Transaction; envelope?: Uint8Array } {
  const o = requireObject(body, 'request');
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === 'raw') return parseRaw(o.raw, 'raw');
  if (keys.length === 1 && keys[0] === 'tx') return { tx: txFromJson(o.tx) };
  return { tx: txFromJson(o) };
}

/** Decodes a 0x envelope string. */
export function parseRaw(value: unknown, field: string): { tx: Transaction; envelope: Uint8Array } {
  const envelope = parseHex(value, field);
  return { tx: decodeTx(envelope), envelope };
}
