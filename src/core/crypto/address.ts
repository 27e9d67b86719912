/** Address derivation for ML-DSA (SHA3-256) and companion secp256k1 (Keccak-256) keys. */
import { ADDRESS_BYTES, PUBLIC_KEY_BYTES } from '../constants.js';
import { CryptoError, MalformedError } from '../errors.js';
import { toHex, u64LE, utf8 } from '../codec/bytes.js';
import { keccak256, sha3, sha3Hex } from './hash.js';

/** Address of an ML-DSA-65 public key: the last 20 bytes of SHA3-256(public key). */
export function addressFromPublicKey(publicKey: Uint8Array): Uint8Array {
  if (publicKey.length !== PUBLIC_KEY_BYTES) throw new CryptoError(`public key must be ${PUBLIC_KEY_BYTES} bytes, got ${publicKey.length}`);
  return sha3(publicKey).slice(32 - ADDRESS_BYTES);
}

/** addressFromPublicKey as 0x hex, cut from the digest's hex (no byte arrays: the verifier threads' form). */
export function addressHexFromPublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== PUBLIC_KEY_BYTES) throw new CryptoError(`public key must be ${PUBLIC_KEY_BYTES} bytes, got ${publicKey.length}`);
  return '0x' + sha3Hex(publicKey).slice(2 + 2 * (32 - ADDRESS_BYTES));
}

/** Ethereum address of an uncompressed secp256k1 public key (65 bytes, 0x04 prefix). */
export function ecdsaAddressFromPublicKey(uncompressed: Uint8Array): Uint8Array {
  if (uncompressed.length !== 65 || uncompressed[0] !== 0x04) throw new CryptoError('expected a 65-byte uncompressed secp256k1 public key');
  return keccak256(uncompressed.slice(1)).slice(32 - ADDRESS_BYTES);
}

/** Normalises an address string: 0x + 40 hex digits of any case in, lowercase out. */
export function normalizeAddress(value: unknown, field = 'address'): string {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
    throw new MalformedError(field, 'expected a 0x-prefixed 20-byte hex address');
  }
  return value.toLowerCase();
}

/** Lowercase 0x string of a 20-byte address. */
export function addressToString(address: Uint8Array): string {
  return toHex(address);
}

/** Domain tag of contract addresses, so no other SHA3-256 preimage in the protocol can collide with one. */
const CONTRACT_ADDRESS_TAG = utf8('svc/contract-address');

/**
 * Address of the contract that `sender` deploys with its transaction of nonce `nonce`: the last
 * 20 bytes of SHA3-256("svc/contract-address" ‖ sender (20 bytes) ‖ nonce (u64 LE)).
 */
export function contractAddress(sender: string, nonce: bigint): string {
  const from = Buffer.from(normalizeAddress(sender, 'sender').slice(2), 'hex');
  return toHex(sha3(CONTRACT_ADDRESS_TAG, from, u64LE(nonce)).slice(32 - ADDRESS_BYTES));
}
