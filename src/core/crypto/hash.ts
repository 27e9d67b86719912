/** SHA3-256 (node:crypto, the hot-path implementation) and Keccak-256 for secp256k1 addresses. */
import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';

/** SHA3-256 over the concatenation of `parts`. */
export function sha3(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha3-256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** Keccak-256 (pre-standard SHA3), used only for Ethereum-style ECDSA addresses. */
export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}
