/**
 * The hashless stored form of the account trie's upper levels (levels 0 to 3): the node encoding
 * of a stored node without its internal children's hashes, which a read recomputes (node-store.ts
 * `expand`). Format: docs/protocol.md, State trie; why: docs/execution.md, State trie and proofs.
 */
import { HASH_BYTES } from '../../../core/constants.js';
import { INTERNAL_TAG } from '../../../core/state/trie.js';
import { CHILD_INFO_BYTES, InternalNode, VERSION_BYTES, accountNodeAt, commitBytes, popcount, readU48 } from './trie.js';

/**
 * First byte of an upper account-trie node stored without its internal children's hashes (see
 * `storedForm`): tag, bitmap, each present child's version and leaf flag (as in the full form's
 * tail), then the hashes of the children that are leaves, in nibble order.
 */
const HASHLESS_TAG = 0x02;
/**
 * Deepest level (path length) of the account trie stored hashless. Levels 0 to 3 are rewritten
 * nearly whole by every block of a large state (about 1,480 nodes of 16 children at a million
 * accounts) and are held in memory after the start-up warm-up, so their child hashes were most of
 * a block's bytes on disk (and of LevelDB's compaction) while nothing read them back. Their
 * internal children (down to level 4, held too) rebuild them on a read; a leaf child's hash stays
 * stored, so no leaf is read to rebuild one (a small state's level 3 points at leaves: it keeps
 * its hashes, and a large state's, pointing at level-4 nodes, drops them: the saving grows with
 * the state, as the bytes it saves did).
 */
export const HASHLESS_MAX_DEPTH = 3;

/**
 * An internal node stored without its internal children's hashes: which children are present,
 * their versions, which are leaves and the leaves' hashes; `expand` is given the others.
 */
export class HashlessNode {
  readonly kind = 'hashless' as const;

  private constructor(
    readonly bytes: Uint8Array,
    readonly bitmap: number,
    /** Children present. */
    readonly count: number,
  ) {}

  /** Parses stored bytes; null when they are not a hashless node. */
  static decode(bytes: Uint8Array): HashlessNode | null {
    if (bytes.length < 3 || bytes[0] !== HASHLESS_TAG) return null;
    const bitmap = (bytes[1]! << 8) | bytes[2]!;
    const count = popcount(bitmap);
    if (bitmap === 0 || bytes.length < 3 + count * CHILD_INFO_BYTES) return null;
    let leaves = 0;
    for (let j = 0; j < count; j++) leaves += bytes[3 + j * CHILD_INFO_BYTES + VERSION_BYTES] === 1 ? 1 : 0;
    if (bytes.length !== 3 + count * CHILD_INFO_BYTES + leaves * HASH_BYTES) return null;
    return new HashlessNode(bytes, bitmap, count);
  }

  /** Whether nibble `i` has a child. */
  has(i: number): boolean {
    return ((this.bitmap >> i) & 1) === 1;
  }

  /** Whether the child at nibble `i` is a leaf (false when there is none). */
  childIsLeaf(i: number): boolean {
    return this.has(i) && this.bytes[3 + popcount(this.bitmap & ((1 << i) - 1)) * CHILD_INFO_BYTES + VERSION_BYTES] === 1;
  }

  /** The version of the child at nibble `i`, or -1 when there is none. */
  childVersion(i: number): number {
    if (!this.has(i)) return -1;
    return readU48(this.bytes, 3 + popcount(this.bitmap & ((1 << i) - 1)) * CHILD_INFO_BYTES);
  }

  /** The full node, given the hash of each present internal child (by nibble; leaves' are stored). */
  expand(internalHash: (i: number) => Uint8Array): InternalNode {
    const hashedLength = 3 + this.count * HASH_BYTES;
    const bytes = new Uint8Array(hashedLength + this.count * CHILD_INFO_BYTES);
    bytes[0] = INTERNAL_TAG;
    bytes[1] = this.bytes[1]!;
    bytes[2] = this.bytes[2]!;
    const infoEnd = 3 + this.count * CHILD_INFO_BYTES;
    bytes.set(this.bytes.subarray(3, infoEnd), hashedLength);
    let leaf = infoEnd;
    for (let i = 0, j = 0; i < 16; i++) {
      if (!this.has(i)) continue;
      if (this.bytes[3 + j * CHILD_INFO_BYTES + VERSION_BYTES] === 1) {
        bytes.set(this.bytes.subarray(leaf, leaf + HASH_BYTES), 3 + j * HASH_BYTES);
        leaf += HASH_BYTES;
      } else bytes.set(internalHash(i), 3 + j * HASH_BYTES);
      j++;
    }
    return InternalNode.decode(bytes)!;
  }
}

/**
 * The bytes to put on disk for the node `bytes` under `key`: an account-trie internal node at a
 * path of at most HASHLESS_MAX_DEPTH nibbles without its internal children's hashes, any other
 * node as it is.
 */
export function storedForm(key: string, bytes: Uint8Array): Uint8Array {
  if (bytes[0] !== INTERNAL_TAG || accountNodeAt(key, HASHLESS_MAX_DEPTH) === null) return bytes;
  const count = popcount((bytes[1]! << 8) | bytes[2]!);
  const hashedLength = 3 + count * HASH_BYTES;
  let leaves = 0;
  for (let j = 0; j < count; j++) leaves += bytes[hashedLength + j * CHILD_INFO_BYTES + VERSION_BYTES] === 1 ? 1 : 0;
  // Only LevelDB's batch reads it (which copies it), so it is carved from the commit arena.
  const out = commitBytes(3 + count * CHILD_INFO_BYTES + leaves * HASH_BYTES);
  out[0] = HASHLESS_TAG;
  out[1] = bytes[1]!;
  out[2] = bytes[2]!;
  out.set(bytes.subarray(hashedLength), 3);
  let at = 3 + count * CHILD_INFO_BYTES;
  for (let j = 0; j < count; j++) {
    if (bytes[hashedLength + j * CHILD_INFO_BYTES + VERSION_BYTES] !== 1) continue;
    out.set(bytes.subarray(3 + j * HASH_BYTES, 3 + (j + 1) * HASH_BYTES), at);
    at += HASH_BYTES;
  }
  return out;
}
