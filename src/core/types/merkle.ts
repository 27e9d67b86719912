/**
 * Transactions Merkle root: binary SHA3-256 tree over tx hashes, leaves zero-padded to a power
 * of two, then the leaf count mixed in (SSZ-style) so padding can never be mistaken for leaves.
 */
import { HASH_BYTES } from '../constants.js';
import { u64LE } from '../codec/bytes.js';
import { sha3 } from '../crypto/hash.js';

const ZERO = new Uint8Array(HASH_BYTES);

/** Root of the tree over `leaves` (32-byte hashes), with the count mixed in; [] has root SHA3(0^32 ‖ 0^32). */
export function merkleRoot(leaves: readonly Uint8Array[]): Uint8Array {
  // A block's root is ~2,000 pair hashes: each pair is copied into one 64-byte buffer and hashed
  // one-shot (a Hash object per pair cost several times more), and the zero padding is not
  // hashed: a pair of all-padding subtrees at a level is that level's precomputed zero hash.
  const pair = new Uint8Array(2 * HASH_BYTES);
  const hashPair = (left: Uint8Array, right: Uint8Array): Uint8Array => {
    pair.set(left, 0);
    pair.set(right, HASH_BYTES);
    return sha3(pair);
  };
  let level: Uint8Array[] = leaves.length === 0 ? [ZERO] : [...leaves];
  let width = 1;
  while (width < level.length) width <<= 1;
  let zero: Uint8Array = ZERO;
  while (width > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(hashPair(level[i]!, level[i + 1] ?? zero));
    zero = hashPair(zero, zero);
    level = next;
    width >>= 1;
  }
  const length = new Uint8Array(HASH_BYTES);
  length.set(u64LE(leaves.length));
  return hashPair(level[0]!, length);
}
