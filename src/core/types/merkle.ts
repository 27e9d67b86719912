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

/** Sibling hashes from leaf `index` up to the tree root (before the length mix-in). */
export function merkleProof(leaves: readonly Uint8Array[], index: number): Uint8Array[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`leaf index ${index} out of range`);
  let level: Uint8Array[] = [...leaves];
  let width = 1;
  while (width < level.length) width <<= 1;
  while (level.length < width) level.push(ZERO);
  const siblings: Uint8Array[] = [];
  let i = index;
  while (level.length > 1) {
    siblings.push(level[i ^ 1]!);
    const next: Uint8Array[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(sha3(level[j]!, level[j + 1]!));
    level = next;
    i >>= 1;
  }
  return siblings;
}

/** True when `leaf` sits at `index` of a `count`-leaf tree whose (length-mixed) root is `root`. */
export function verifyMerkleProof(leaf: Uint8Array, index: number, count: number, siblings: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isInteger(index) || index < 0 || index >= count) return false;
  let depth = 0;
  while (1 << depth < count) depth++;
  if (siblings.length !== depth) return false;
  let node = leaf;
  let i = index;
  for (const s of siblings) {
    node = i & 1 ? sha3(s, node) : sha3(node, s);
    i >>= 1;
  }
  const length = new Uint8Array(HASH_BYTES);
  length.set(u64LE(count));
  const got = sha3(node, length);
  return got.every((b, k) => b === root[k]);
}
