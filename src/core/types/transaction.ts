/**
 * Typed transaction envelope (EIP-2718 style): one type byte, then the type's SSZ payload.
 * Signing hash = SHA3-256(domain ‖ chain id ‖ unsigned envelope); tx hash = SHA3-256(signed envelope).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import {
  ADDRESS_BYTES,
  ECDSA_SIGNATURE_BYTES,
  MAX_TX_BYTES,
  MAX_TX_DATA_BYTES,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
} from '../constants.js';
import { MalformedError, TxError } from '../errors.js';
import { bigintToBytesBE, bytesToBigintBE, concatBytes, toHex } from '../codec/bytes.js';
import { addressFromPublicKey, addressHexFromPublicKey, ecdsaAddressFromPublicKey } from '../crypto/address.js';
import { chainIdBytes, Domain, domainTagBytes, signingHash } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { type MlDsaKeyPair, sign, verify } from '../crypto/mldsa.js';
import { EcdsaAuthorizationSsz, EcdsaAuthorizedTxSsz, StandardTxSsz, TxEnvelopeListSsz } from './ssz.js';

/** Envelope type bytes. */
export const TxType = {
  Standard: 0,
  EcdsaAuthorization: 1,
  EcdsaRevocation: 2,
  EcdsaAuthorized: 3,
} as const;

/** Fields shared by value-moving transactions. */
export interface ValueTxFields {
  nonce: bigint;
  gasPrice: bigint;
  gasLimit: bigint;
  /** null deploys a contract. */
  to: Uint8Array | null;
  value: bigint;
  data: Uint8Array;
}

/** Type 0: signed by the sender's ML-DSA-65 key. */
export interface StandardTx extends ValueTxFields {
  type: 0;
  signature: Uint8Array;
  publicKey: Uint8Array;
}

/** Types 1 and 2: gas-free (de)authorisation of a companion ECDSA key. */
export interface AuthorizationTx {
  type: 1 | 2;
  nonce: bigint;
  ecdsaAddress: Uint8Array;
  signature: Uint8Array;
  publicKey: Uint8Array;
}

/** Type 3: value transaction for `from`, signed by an ECDSA key that `from` authorised. */
export interface EcdsaAuthorizedTx extends ValueTxFields {
  type: 3;
  from: Uint8Array;
  /** r ‖ s ‖ v (v = recovery id 0 or 1), Ethereum order. */
  ecdsaSignature: Uint8Array;
}

export type Transaction = StandardTx | AuthorizationTx | EcdsaAuthorizedTx;

/** What a transaction does, as the spec names it. */
export type TxKind = 'transfer' | 'contract_deploy' | 'contract_call' | 'ecdsa_authorization' | 'ecdsa_revocation';

/** True for the gas-free ECDSA (de)authorisation types. */
export function isAuthorization(tx: Transaction): tx is AuthorizationTx {
  return tx.type === TxType.EcdsaAuthorization || tx.type === TxType.EcdsaRevocation;
}

/** Classifies a transaction; calls are value transactions with call data. */
export function txKind(tx: Transaction): TxKind {
  if (isAuthorization(tx)) return tx.type === TxType.EcdsaAuthorization ? 'ecdsa_authorization' : 'ecdsa_revocation';
  if (tx.to === null) return 'contract_deploy';
  return tx.data.length > 0 ? 'contract_call' : 'transfer';
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function checkValueFields(tx: ValueTxFields): void {
  // Nonces and gas limits stay below 2^53 so every JSON codec can carry them as numbers.
  if (tx.nonce < 0n || tx.nonce > MAX_SAFE) throw new MalformedError('tx.Nonce', 'must be an integer in [0, 2^53-1]');
  if (tx.gasLimit < 0n || tx.gasLimit > MAX_SAFE) throw new MalformedError('tx.GasLimit', 'must be an integer in [0, 2^53-1]');
  if (tx.gasPrice < 0n || tx.gasPrice >= 1n << 64n) throw new MalformedError('tx.GasPrice', 'exceeds 64-bit range');
  if (tx.value < 0n || tx.value >= 1n << 256n) throw new MalformedError('tx.Value', 'exceeds 256-bit range');
  if (tx.to !== null && tx.to.length !== ADDRESS_BYTES) throw new MalformedError('tx.To', `expected ${ADDRESS_BYTES} bytes`);
}

function checkFixed(bytes: Uint8Array, length: number, field: string): void {
  if (bytes.length !== length) throw new MalformedError(field, `expected ${length} bytes, got ${bytes.length}`);
}

/** Validates field widths; every constructor and decoder goes through it. */
export function assertWellFormed(tx: Transaction): void {
  switch (tx.type) {
    case TxType.Standard:
      checkValueFields(tx);
      checkFixed(tx.signature, SIGNATURE_BYTES, 'tx.Signature');
      checkFixed(tx.publicKey, PUBLIC_KEY_BYTES, 'tx.PublicKey');
      return;
    case TxType.EcdsaAuthorization:
    case TxType.EcdsaRevocation:
      if (tx.nonce < 0n || tx.nonce > MAX_SAFE) throw new MalformedError('tx.Nonce', 'must be an integer in [0, 2^53-1]');
      checkFixed(tx.ecdsaAddress, ADDRESS_BYTES, 'tx.EcdsaAddress');
      checkFixed(tx.signature, SIGNATURE_BYTES, 'tx.Signature');
      checkFixed(tx.publicKey, PUBLIC_KEY_BYTES, 'tx.PublicKey');
      return;
    case TxType.EcdsaAuthorized:
      checkValueFields(tx);
      checkFixed(tx.from, ADDRESS_BYTES, 'tx.From');
      checkFixed(tx.ecdsaSignature, ECDSA_SIGNATURE_BYTES, 'tx.EcdsaSignature');
      return;
    default:
      throw new MalformedError('tx.Type', `unknown transaction type ${(tx as { type: unknown }).type}`);
  }
}

function valueSsz(tx: ValueTxFields) {
  return {
    nonce: tx.nonce,
    gasPrice: tx.gasPrice,
    gasLimit: tx.gasLimit,
    to: tx.to ?? new Uint8Array(0),
    value: bigintToBytesBE(tx.value, 32),
    data: tx.data,
  };
}

function payload(tx: Transaction): Uint8Array {
  switch (tx.type) {
    case TxType.Standard:
      return StandardTxSsz.serialize({ ...valueSsz(tx), signature: tx.signature, publicKey: tx.publicKey });
    case TxType.EcdsaAuthorization:
    case TxType.EcdsaRevocation:
      return EcdsaAuthorizationSsz.serialize({ nonce: tx.nonce, ecdsaAddress: tx.ecdsaAddress, signature: tx.signature, publicKey: tx.publicKey });
    case TxType.EcdsaAuthorized:
      return EcdsaAuthorizedTxSsz.serialize({ ...valueSsz(tx), from: tx.from, ecdsaSignature: tx.ecdsaSignature });
  }
}

/** The signed envelope: type byte ‖ SSZ payload. */
export function encodeTx(tx: Transaction): Uint8Array {
  assertWellFormed(tx);
  return concatBytes(Uint8Array.of(tx.type), payload(tx));
}

function valueFromSsz(v: { nonce: bigint; gasPrice: bigint; gasLimit: bigint; to: Uint8Array; value: Uint8Array; data: Uint8Array }): ValueTxFields {
  return {
    nonce: v.nonce,
    gasPrice: v.gasPrice,
    gasLimit: v.gasLimit,
    to: v.to.length === 0 ? null : v.to,
    value: bytesToBigintBE(v.value),
    data: v.data,
  };
}

/** Decodes a signed envelope; any structural fault is `malformed tx.Envelope`. */
export function decodeTx(bytes: Uint8Array): Transaction {
  return decodeEnvelope(bytes, false);
}

/**
 * decodeTx whose byte fields (signature, key, data, …) are views into `bytes`, not copies: for
 * transient decodes (block import) of bytes nobody changes, where copying was the decode's largest
 * cost. Whoever keeps the transaction keeps `bytes`.
 */
export function decodeTxViews(bytes: Uint8Array): Transaction {
  return decodeEnvelope(bytes, true);
}

function decodeEnvelope(bytes: Uint8Array, views: boolean): Transaction {
  if (bytes.length < 2) throw new MalformedError('tx.Envelope', 'too short');
  if (bytes.length > MAX_TX_BYTES) throw new MalformedError('tx.Envelope', `larger than ${MAX_TX_BYTES} bytes`);
  if (bytes[0] === TxType.Standard) {
    const fast = decodeStandardCanonical(bytes, views);
    if (fast) {
      assertWellFormed(fast);
      return fast;
    }
  }
  const body = bytes.subarray(1);
  const reuse = { reuseBytes: views };
  let tx: Transaction;
  try {
    switch (bytes[0]) {
      case TxType.Standard: {
        const v = StandardTxSsz.deserialize(body, reuse);
        tx = { type: 0, ...valueFromSsz(v), signature: v.signature, publicKey: v.publicKey };
        break;
      }
      case TxType.EcdsaAuthorization:
      case TxType.EcdsaRevocation: {
        const v = EcdsaAuthorizationSsz.deserialize(body, reuse);
        tx = { type: bytes[0] as 1 | 2, nonce: v.nonce, ecdsaAddress: v.ecdsaAddress, signature: v.signature, publicKey: v.publicKey };
        break;
      }
      case TxType.EcdsaAuthorized: {
        const v = EcdsaAuthorizedTxSsz.deserialize(body, reuse);
        tx = { type: 3, ...valueFromSsz(v), from: v.from, ecdsaSignature: v.ecdsaSignature };
        break;
      }
      default:
        throw new MalformedError('tx.Type', `unknown transaction type ${bytes[0]}`);
    }
  } catch (err) {
    if (err instanceof MalformedError) throw err;
    throw new MalformedError('tx.Envelope', (err as Error).message);
  }
  assertWellFormed(tx);
  checkCanonicalLayout(tx, bytes);
  return tx;
}

// Byte offsets inside a value envelope (type 0 or 3): type byte, nonce, gasPrice, gasLimit, then
// the `to` offset; `value` (32 bytes) sits between the `to` and `data` offsets.
const VALUE_TO_OFFSET_AT = 1 + 8 + 8 + 8;
const VALUE_DATA_OFFSET_AT = VALUE_TO_OFFSET_AT + 4 + 32;
/** Fixed parts of the payloads (after the type byte): what the first variable field's offset must equal. */
const STANDARD_FIXED = 8 * 3 + 4 + 32 + 4 + SIGNATURE_BYTES + PUBLIC_KEY_BYTES;
const AUTHORIZED_FIXED = 8 * 3 + 4 + 32 + 4 + ADDRESS_BYTES + ECDSA_SIGNATURE_BYTES;

/**
 * A type-0 envelope in its canonical layout (what checkCanonicalLayout requires), read field by
 * field: the generic SSZ decoder cost ~5 µs per transaction, ~7 ms for a full block's import.
 * Anything else returns undefined, and the generic path decodes it or names its fault, so both
 * paths accept exactly the same envelopes and return the same transaction.
 */
function decodeStandardCanonical(bytes: Uint8Array, views: boolean): StandardTx | undefined {
  const n = bytes.length;
  if (n < 1 + STANDARD_FIXED) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  // Offsets count from the payload, after the type byte.
  const toAt = view.getUint32(VALUE_TO_OFFSET_AT, true);
  const dataAt = view.getUint32(VALUE_DATA_OFFSET_AT, true);
  const toLength = dataAt - toAt;
  const dataLength = n - 1 - dataAt;
  if (toAt !== STANDARD_FIXED || (toLength !== 0 && toLength !== ADDRESS_BYTES) || dataLength < 0 || dataLength > MAX_TX_DATA_BYTES) return undefined;
  const valueAt = VALUE_TO_OFFSET_AT + 4;
  const signatureAt = VALUE_DATA_OFFSET_AT + 4;
  return {
    type: TxType.Standard,
    nonce: view.getBigUint64(1, true),
    gasPrice: view.getBigUint64(9, true),
    gasLimit: view.getBigUint64(17, true),
    to: toLength === 0 ? null : part(bytes, views, 1 + toAt, ADDRESS_BYTES),
    value: bytesToBigintBE(bytes.subarray(valueAt, valueAt + 32)),
    data: part(bytes, views, 1 + dataAt, dataLength),
    signature: part(bytes, views, signatureAt, SIGNATURE_BYTES),
    publicKey: part(bytes, views, signatureAt + SIGNATURE_BYTES, PUBLIC_KEY_BYTES),
  };
}

/**
 * A field of `bytes`: a view or a copy. A module function, not a closure per decode, which the
 * optimiser compiled again for each. The copy is new Uint8Array(view): when `bytes` is a Node
 * Buffer (a file read, an HTTP body), its slice() is another view.
 */
function part(bytes: Uint8Array, views: boolean, from: number, length: number): Uint8Array {
  const view = bytes.subarray(from, from + length);
  return views ? view : new Uint8Array(view);
}

/**
 * The envelope is the one SSZ encoding of its value, proven in O(1) instead of by encoding it
 * again (which cost as much as the decode). Every fixed field reads back to the same bytes (uints
 * little-endian, vectors verbatim, `value` 32 bytes big-endian), so the encodings of one value can
 * differ only in where the variable fields (`to`, `data`) start and where the envelope ends: those
 * must be exactly the canonical offsets and length. Type 1/2 payloads are all fixed-size, and
 * the SSZ decoder refuses any other length.
 */
function checkCanonicalLayout(tx: Transaction, bytes: Uint8Array): void {
  if (isAuthorization(tx)) {
    if (bytes.length !== 1 + 8 + ADDRESS_BYTES + SIGNATURE_BYTES + PUBLIC_KEY_BYTES) throw new MalformedError('tx.Envelope', 'non-canonical encoding');
    return;
  }
  const fixed = tx.type === TxType.Standard ? STANDARD_FIXED : AUTHORIZED_FIXED;
  const toLength = tx.to === null ? 0 : tx.to.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (
    view.getUint32(VALUE_TO_OFFSET_AT, true) !== fixed ||
    view.getUint32(VALUE_DATA_OFFSET_AT, true) !== fixed + toLength ||
    bytes.length !== 1 + fixed + toLength + tx.data.length
  ) {
    throw new MalformedError('tx.Envelope', 'non-canonical encoding');
  }
}

/** SSZ list of signed envelopes (a batch submission, a proposer's pending transactions). */
export function encodeEnvelopeList(envelopes: readonly Uint8Array[]): Uint8Array {
  return TxEnvelopeListSsz.serialize(envelopes as Uint8Array[]);
}

/**
 * Splits an SSZ envelope list; a structural fault is `malformed FIELD`. The envelopes themselves
 * are not decoded here: each is judged on its own (decodeTx), so one bad entry refuses only itself.
 */
export function decodeEnvelopeList(bytes: Uint8Array, field = 'transactions'): Uint8Array[] {
  try {
    return TxEnvelopeListSsz.deserialize(bytes);
  } catch (err) {
    throw new MalformedError(field, `not an SSZ list of transaction envelopes: ${(err as Error).message}`);
  }
}

/** The envelope with every signature and key field zero-filled: what the signer commits to. */
export function encodeUnsignedTx(tx: Transaction): Uint8Array {
  switch (tx.type) {
    case TxType.Standard:
    case TxType.EcdsaAuthorization:
    case TxType.EcdsaRevocation:
      return encodeTx({ ...tx, signature: new Uint8Array(SIGNATURE_BYTES), publicKey: new Uint8Array(PUBLIC_KEY_BYTES) });
    case TxType.EcdsaAuthorized:
      return encodeTx({ ...tx, ecdsaSignature: new Uint8Array(ECDSA_SIGNATURE_BYTES) });
  }
}

/** Domain-separated hash the sender signs. */
export function txSigningHash(tx: Transaction, chainId: string): Uint8Array {
  const tag = isAuthorization(tx) ? Domain.Authorization : Domain.Tx;
  return signingHash(tag, chainId, encodeUnsignedTx(tx));
}

/** Transaction hash: SHA3-256 of the signed envelope. */
export function txHash(tx: Transaction): Uint8Array {
  return sha3(encodeTx(tx));
}

/** The account the transaction acts for. */
export function txSender(tx: Transaction): Uint8Array {
  return tx.type === TxType.EcdsaAuthorized ? tx.from : addressFromPublicKey(tx.publicKey);
}

/** Signs a standard (type 0) transaction with an ML-DSA-65 key. */
export function signStandardTx(fields: ValueTxFields, key: MlDsaKeyPair, chainId: string): StandardTx {
  const unsigned: StandardTx = { type: 0, ...fields, signature: new Uint8Array(SIGNATURE_BYTES), publicKey: key.publicKey };
  return { ...unsigned, signature: sign(key.secretKey, txSigningHash(unsigned, chainId)) };
}

/** Signs an ECDSA authorisation (type 1) or revocation (type 2) with the ML-DSA-65 master key. */
export function signAuthorizationTx(
  type: 1 | 2,
  fields: { nonce: bigint; ecdsaAddress: Uint8Array },
  key: MlDsaKeyPair,
  chainId: string,
): AuthorizationTx {
  const unsigned: AuthorizationTx = { type, ...fields, signature: new Uint8Array(SIGNATURE_BYTES), publicKey: key.publicKey };
  return { ...unsigned, signature: sign(key.secretKey, txSigningHash(unsigned, chainId)) };
}

/** Signs a type-3 transaction for `from` with an authorised secp256k1 key. */
export function signEcdsaAuthorizedTx(
  fields: ValueTxFields & { from: Uint8Array },
  ecdsaPrivateKey: Uint8Array,
  chainId: string,
): EcdsaAuthorizedTx {
  const unsigned: EcdsaAuthorizedTx = { type: 3, ...fields, ecdsaSignature: new Uint8Array(ECDSA_SIGNATURE_BYTES) };
  const rec = secp256k1.sign(txSigningHash(unsigned, chainId), ecdsaPrivateKey, { prehash: false, format: 'recovered' });
  return { ...unsigned, ecdsaSignature: concatBytes(rec.subarray(1), rec.subarray(0, 1)) };
}

const SECP256K1_HALF_N = secp256k1.Point.CURVE().n >> 1n;

/**
 * Verifies the transaction's signature and returns the key that signed it: the ML-DSA sender
 * address, or for type 3 the recovered ECDSA address (whose authorisation for `from` is state,
 * checked by execution). Throws ErrInvalidSignature.
 */
export function verifyTxSignature(tx: Transaction, chainId: string): Uint8Array {
  const hash = txSigningHash(tx, chainId);
  if (tx.type === TxType.EcdsaAuthorized) {
    const sig = tx.ecdsaSignature;
    const v = sig[64]!;
    if (v > 1) throw new TxError('ErrInvalidSignature');
    // EIP-2: low s only; otherwise (r, n - s, v ^ 1) is a second valid signature and the tx hash is malleable.
    if (bytesToBigintBE(sig.subarray(32, 64)) > SECP256K1_HALF_N) throw new TxError('ErrInvalidSignature');
    try {
      const compressed = secp256k1.recoverPublicKey(concatBytes(Uint8Array.of(v), sig.subarray(0, 64)), hash, { prehash: false });
      return ecdsaAddressFromPublicKey(secp256k1.Point.fromBytes(compressed).toBytes(false));
    } catch {
      throw new TxError('ErrInvalidSignature');
    }
  }
  if (!verify(tx.publicKey, hash, tx.signature)) throw new TxError('ErrInvalidSignature');
  return addressFromPublicKey(tx.publicKey);
}

/** Enforces the minimum gas price (`gas price below minimum`). */
export function checkGasPrice(tx: Transaction, minGasPrice: bigint): void {
  if (isAuthorization(tx)) return;
  if (tx.gasPrice < minGasPrice) throw new TxError('ErrGasPriceTooLow');
}

/** Most the sender can be charged: value + gasLimit × gasPrice. */
export function maxCost(tx: Transaction): bigint {
  if (isAuthorization(tx)) return 0n;
  return tx.value + tx.gasLimit * tx.gasPrice;
}

// Type 0 layout: type byte, then the fixed SSZ part: nonce, gasPrice, gasLimit (8 each), the
// To offset (4), Value (32), the Data offset (4), then the signature and the public key.
const STD_SIG_START = 1 + 8 + 8 + 8 + 4 + 32 + 4;
const STD_PK_START = STD_SIG_START + SIGNATURE_BYTES;
const STD_PK_END = STD_PK_START + PUBLIC_KEY_BYTES;

/** Bytes of a type 0 signature that key the verified-transaction cache (the start of ML-DSA's challenge hash). */
export const SIGNATURE_KEY_BYTES = 32;

/**
 * A slice of the envelope's signature, found without decoding, or undefined for other types:
 * a valid signature's bytes cannot be chosen, so it keys a cache that is then confirmed by
 * comparing the whole envelope, with no hash to compute.
 */
export function envelopeSignatureKey(envelope: Uint8Array): Uint8Array | undefined {
  if (envelope[0] !== TxType.Standard || envelope.length < STD_PK_END) return undefined;
  return envelope.subarray(STD_SIG_START, STD_SIG_START + SIGNATURE_KEY_BYTES);
}

/**
 * Verifies a canonical signed envelope without decoding it: for type 0 the unsigned form is the
 * same bytes with the signature and key zeroed, so the signing hash needs one copy and one hash.
 * Returns the signer address, or null when the signature does not verify.
 */
export function verifyEnvelope(envelope: Uint8Array, chainId: string): Uint8Array | null {
  if (envelope[0] !== TxType.Standard || envelope.length < STD_PK_END) {
    try {
      return verifyTxSignature(decodeTx(envelope), chainId);
    } catch {
      return null;
    }
  }
  // A copy, never slice(): on a Node Buffer slice() is a view and would zero the caller's bytes.
  const unsigned = new Uint8Array(envelope);
  unsigned.fill(0, STD_SIG_START, STD_PK_END);
  const publicKey = envelope.subarray(STD_PK_START, STD_PK_END);
  if (!verify(publicKey, signingHash(Domain.Tx, chainId, unsigned), envelope.subarray(STD_SIG_START, STD_PK_START))) return null;
  return addressFromPublicKey(publicKey);
}

/** Public keys whose addresses an EnvelopeVerifier remembers (about 2 MB of keys per thread). */
const ADDRESS_CACHE_ENTRIES = 1024;
/** Leading public-key bytes (ML-DSA's matrix seed ρ) that key that memory; the whole key confirms a hit. */
const ADDRESS_CACHE_KEY_BYTES = 32;

/**
 * verifyEnvelope for a thread that verifies many envelopes of one chain. The signing hash's
 * preimage (domain tag, chain id, the envelope with signature and key zeroed) is assembled in one
 * buffer kept between calls, and the signer comes back as hex cut from the digest's hex: a type 0
 * check allocates no 5 KB copy of the envelope and no intermediate byte arrays, each of which
 * was an ArrayBuffer for the garbage collector's threads to sweep.
 */
export class EnvelopeVerifier {
  private readonly prefix: Uint8Array;
  /** Grows to the longest envelope seen, at most MAX_TX_BYTES past the prefix. */
  private preimage: Uint8Array;
  /** Signer addresses by the first bytes of their public key, confirmed by comparing the whole key; oldest out first. */
  private readonly addresses = new Map<string, { publicKey: Uint8Array; address: string }>();

  constructor(private readonly chainId: string) {
    this.prefix = concatBytes(domainTagBytes(Domain.Tx), chainIdBytes(chainId));
    this.preimage = new Uint8Array(0);
  }

  /** The signer's address (0x hex) of a canonical signed envelope, or null when the signature does not verify. */
  signer(envelope: Uint8Array): string | null {
    if (envelope[0] !== TxType.Standard || envelope.length < STD_PK_END || envelope.length > MAX_TX_BYTES) {
      const signer = verifyEnvelope(envelope, this.chainId);
      return signer && toHex(signer);
    }
    const at = this.prefix.length;
    const end = at + envelope.length;
    if (this.preimage.length < end) {
      this.preimage = new Uint8Array(end);
      this.preimage.set(this.prefix);
    }
    const preimage = this.preimage;
    preimage.set(envelope, at);
    preimage.fill(0, at + STD_SIG_START, at + STD_PK_END);
    const publicKey = envelope.subarray(STD_PK_START, STD_PK_END);
    if (!verify(publicKey, sha3(preimage.subarray(0, end)), envelope.subarray(STD_SIG_START, STD_PK_START))) return null;
    return this.address(publicKey);
  }

  /** A verified key's address: senders repeat, and a remembered one saves a SHA3 of the 1,952-byte key. */
  private address(publicKey: Uint8Array): string {
    const key = Buffer.from(publicKey.buffer, publicKey.byteOffset, ADDRESS_CACHE_KEY_BYTES).toString('latin1');
    const hit = this.addresses.get(key);
    if (hit && Buffer.from(hit.publicKey.buffer, hit.publicKey.byteOffset, hit.publicKey.byteLength).equals(Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength))) return hit.address;
    const address = addressHexFromPublicKey(publicKey);
    if (!hit && this.addresses.size >= ADDRESS_CACHE_ENTRIES) this.addresses.delete(this.addresses.keys().next().value!);
    // A copy: the key is a view into a message buffer that must not stay alive for the cache.
    this.addresses.set(key, { publicKey: new Uint8Array(publicKey), address });
    return address;
  }
}
