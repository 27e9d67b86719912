/** Parsing transaction submissions, shared by REST and JSON-RPC. */
import { parseHex } from '../../../core/codec/bytes.js';
import { requireObject } from '../../../core/codec/json.js';
import { decodeTx, type Transaction } from '../../../core/types/transaction.js';
import { txFromJson } from '../../../core/types/transaction-json.js';

/** `{raw: "0x…"}` (the signed envelope), `{tx: {…}}`, or a bare transaction JSON object. */
export function parseSubmission(body: unknown): Transaction {
  const o = requireObject(body, 'request');
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === 'raw') return decodeTx(parseHex(o.raw, 'raw'));
  if (keys.length === 1 && keys[0] === 'tx') return txFromJson(o.tx);
  return txFromJson(o);
}
