/** Builds unsigned value-transaction fields from user strings with the protocol's strict parsers. */
import { parseHex } from '../core/codec/bytes.js';
import { parseDecimal } from '../core/codec/json.js';
import { parseAddress } from '../core/codec/json.js';
import { type ValueTxFields, intrinsicGas } from '../core/types/transaction.js';
import { TxType } from '../core/types/transaction.js';
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from '../core/constants.js';

/** User-facing inputs: decimal strings as typed on a command line or form. */
export interface ValueTxInput {
  to: string | null;
  value: string;
  nonce: string;
  gasPrice: string;
  /** Omitted: the intrinsic gas of the transaction. */
  gasLimit?: string | undefined;
  data: string;
}

/** Parses inputs (errors carry the spec's `malformed tx.X` messages) and fills the default gas limit. */
export function buildValueTx(input: ValueTxInput): ValueTxFields {
  const fields: ValueTxFields = {
    nonce: parseDecimal(input.nonce, 'tx.Nonce', 53),
    gasPrice: parseDecimal(input.gasPrice, 'tx.GasPrice', 64),
    gasLimit: 0n,
    to: input.to === null ? null : parseAddress(input.to, 'tx.To'),
    value: parseDecimal(input.value, 'tx.Value', 256),
    data: parseHex(input.data, 'tx.Data'),
  };
  fields.gasLimit =
    input.gasLimit === undefined
      ? intrinsicGas({ type: TxType.Standard, ...fields, signature: new Uint8Array(SIGNATURE_BYTES), publicKey: new Uint8Array(PUBLIC_KEY_BYTES) })
      : parseDecimal(input.gasLimit, 'tx.GasLimit', 53);
  return fields;
}
