/** JSON form of transactions: strict parsing, canonical output (fixed key order) for lossless round trips. */
import { ECDSA_SIGNATURE_BYTES, PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { MalformedError, TxError } from '../errors.js';
import { bytesEqual, parseHex, toHex } from '../codec/bytes.js';
import { parseAddress, parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { type Transaction, TxType, type ValueTxFields, assertWellFormed, isAuthorization, txHash, txSender } from './transaction.js';

/** JSON of a value transaction (types 0 and 3). */
export interface ValueTxJson {
  type: 0 | 3;
  nonce: number;
  gasPrice: string;
  gasLimit: number;
  to: string | null;
  value: string;
  data: string;
  from: string;
  hash: string;
  publicKey?: string;
  signature?: string;
  ecdsaSignature?: string;
}

/** JSON of an ECDSA authorisation or revocation (types 1 and 2). */
export interface AuthorizationTxJson {
  type: 1 | 2;
  nonce: number;
  ecdsaAddress: string;
  from: string;
  hash: string;
  publicKey: string;
  signature: string;
}

export type TxJson = ValueTxJson | AuthorizationTxJson;

/** Canonical JSON of a transaction, including derived `from` and `hash`. */
export function txToJson(tx: Transaction): TxJson {
  const from = toHex(txSender(tx));
  const hash = toHex(txHash(tx));
  if (isAuthorization(tx)) {
    return { type: tx.type, nonce: Number(tx.nonce), ecdsaAddress: toHex(tx.ecdsaAddress), from, hash, publicKey: toHex(tx.publicKey), signature: toHex(tx.signature) };
  }
  const base = {
    type: tx.type,
    nonce: Number(tx.nonce),
    gasPrice: tx.gasPrice.toString(10),
    gasLimit: Number(tx.gasLimit),
    to: tx.to === null ? null : toHex(tx.to),
    value: tx.value.toString(10),
    data: toHex(tx.data),
    from,
    hash,
  };
  return tx.type === TxType.Standard
    ? { ...base, publicKey: toHex(tx.publicKey), signature: toHex(tx.signature) }
    : { ...base, ecdsaSignature: toHex(tx.ecdsaSignature) };
}

const VALUE_KEYS = ['type', 'nonce', 'gasPrice', 'gasLimit', 'to', 'value', 'data', 'from', 'hash'] as const;

/** Parses the value fields with the spec's messages (`malformed tx.Value`, `malformed tx.GasPrice`, …). */
export function parseValueFields(o: Record<string, unknown>): ValueTxFields {
  return {
    nonce: BigInt(parseUint(o.nonce, 'tx.Nonce')),
    gasPrice: parseDecimal(o.gasPrice, 'tx.GasPrice', 64),
    gasLimit: BigInt(parseUint(o.gasLimit, 'tx.GasLimit')),
    to: o.to === null ? null : parseAddress(o.to, 'tx.To'),
    value: parseDecimal(o.value, 'tx.Value', 256),
    data: o.data === undefined ? new Uint8Array(0) : parseHex(o.data, 'tx.Data'),
  };
}

/**
 * Parses a transaction from JSON. `type` defaults to 0. `from` and `hash`, when present,
 * must match what the transaction derives to (ErrInvalidSender / malformed tx.Hash).
 */
export function txFromJson(input: unknown): Transaction {
  const o = requireObject(input, 'tx');
  const type = o.type === undefined ? TxType.Standard : parseUint(o.type, 'tx.Type', 3);
  let tx: Transaction;
  if (type === TxType.EcdsaAuthorization || type === TxType.EcdsaRevocation) {
    rejectUnknownKeys(o, ['type', 'nonce', 'ecdsaAddress', 'from', 'hash', 'publicKey', 'signature'], 'tx');
    tx = {
      type,
      nonce: BigInt(parseUint(o.nonce, 'tx.Nonce')),
      ecdsaAddress: parseAddress(o.ecdsaAddress, 'tx.EcdsaAddress'),
      publicKey: parseHex(o.publicKey, 'tx.PublicKey', PUBLIC_KEY_BYTES),
      signature: parseHex(o.signature, 'tx.Signature', SIGNATURE_BYTES),
    };
  } else if (type === TxType.EcdsaAuthorized) {
    rejectUnknownKeys(o, [...VALUE_KEYS, 'ecdsaSignature'], 'tx');
    if (o.to === undefined) throw new MalformedError('tx.To', 'required (null deploys a contract)');
    tx = {
      type,
      ...parseValueFields(o),
      from: parseAddress(o.from, 'tx.From'),
      ecdsaSignature: parseHex(o.ecdsaSignature, 'tx.EcdsaSignature', ECDSA_SIGNATURE_BYTES),
    };
  } else {
    rejectUnknownKeys(o, [...VALUE_KEYS, 'publicKey', 'signature'], 'tx');
    if (o.to === undefined) throw new MalformedError('tx.To', 'required (null deploys a contract)');
    tx = {
      type: TxType.Standard,
      ...parseValueFields(o),
      publicKey: parseHex(o.publicKey, 'tx.PublicKey', PUBLIC_KEY_BYTES),
      signature: parseHex(o.signature, 'tx.Signature', SIGNATURE_BYTES),
    };
  }
  assertWellFormed(tx);
  if (o.from !== undefined && tx.type !== TxType.EcdsaAuthorized) {
    const claimed = parseAddress(o.from, 'tx.From');
    if (!bytesEqual(claimed, txSender(tx))) throw new TxError('ErrInvalidSender');
  }
  if (o.hash !== undefined && !bytesEqual(parseHex(o.hash, 'tx.Hash', 32), txHash(tx))) {
    throw new MalformedError('tx.Hash', 'does not match the transaction');
  }
  return tx;
}
