/** SHA3-256 (node:crypto, the hot-path implementation) and Keccak-256 for secp256k1 addresses. */
import { createHash, hash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';

/** SHA3-256 over the concatenation of `parts`. */
export function sha3(...parts: Uint8Array[]): Uint8Array {
  // One-shot for the common single part: about 2.5× faster than a Hash object for a trie node.
  if (parts.length === 1) return new Uint8Array(hash('sha3-256', parts[0]!, 'buffer'));
  const h = createHash('sha3-256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** SHA3-256 of `data` as 0x hex, straight from the digest: no byte arrays for a caller that wants the hex. */
export function sha3Hex(data: Uint8Array): string {
  return '0x' + hash('sha3-256', data, 'hex');
}

/** Keccak-256 (pre-standard SHA3), used only for Ethereum-style ECDSA addresses. */
export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}
