/** Value transactions from user input: strict parsing of the fields, the signing wallet, signing. */
import { parseHex, toHex } from '../core/codec/bytes.js';
import { parseDecimal, parseAddress } from '../core/codec/json.js';
import { type StandardTx, type ValueTxFields, encodeTx, signStandardTx, txHash, TxType } from '../core/types/transaction.js';
import { intrinsicGas } from '../core/gas.js';
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from '../core/constants.js';
import { SvcError, WalletError } from '../core/errors.js';
import type { MlDsaKeyPair } from '../core/crypto/mldsa.js';
import type { WalletFileV2 } from './keystore.js';
import { resolveWallet, type StoredWallet } from './store.js';

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

/** A wallet file that holds key material (not a watch-only legacy file). */
export interface SigningWallet extends StoredWallet {
  wallet: { kind: 'v2'; file: WalletFileV2 };
}

/** Finds a wallet (name, address or path) and refuses a watch-only one, before any password is asked. */
export async function resolveSigningWallet(ref: string): Promise<SigningWallet> {
  const stored = await resolveWallet(ref);
  if (stored.wallet.kind !== 'v2') throw new WalletError('WATCH_ONLY', `wallet ${stored.name} is a watch-only (legacy) wallet and cannot sign`);
  return stored as SigningWallet;
}

/** A signed standard transaction in the forms callers print or send. */
export interface SignedValueTx {
  tx: StandardTx;
  /** 0x tx hash. */
  hash: string;
  /** 0x hex of the typed envelope (what POST /api/v1/transactions takes as `raw`). */
  raw: string;
}

/** Signs `fields` for `chainId`; library failures surface as SIGN_FAILED. */
export function signValueTx(fields: ValueTxFields, key: MlDsaKeyPair, chainId: string): SignedValueTx {
  let tx: StandardTx;
  try {
    tx = signStandardTx(fields, key, chainId);
  } catch (err) {
    throw err instanceof SvcError ? err : new SvcError('SIGN_FAILED', (err as Error).message);
  }
  return { tx, hash: toHex(txHash(tx)), raw: toHex(encodeTx(tx)) };
}
