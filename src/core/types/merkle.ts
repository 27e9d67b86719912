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
  let level: Uint8Array[] = leaves.length === 0 ? [ZERO] : [...leaves];
  let width = 1;
  while (width < level.length) width <<= 1;
  while (level.length < width) level.push(ZERO);
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha3(level[i]!, level[i + 1]!));
    level = next;
  }
  const length = new Uint8Array(HASH_BYTES);
  length.set(u64LE(leaves.length));
  return sha3(level[0]!, length);
}
