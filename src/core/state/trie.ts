/**
 * The state trie's node encoding and its proof verifier (docs/protocol.md, "State trie"): a
 * 16-ary Jellyfish-style Merkle tree over SHA3-256 key hashes. The node's trie code and the light
 * client both hash through these functions, so a proof the node builds and a proof a client checks
 * can never disagree on the encoding.
 *
 * - leaf     = 0x00 ‖ key hash (32) ‖ value
 * - internal = 0x01 ‖ child bitmap (u16 BE, bit i = nibble i) ‖ child hashes (32 each, nibble order)
 * - node hash = SHA3-256(encoding); the empty trie's root is 32 zero bytes.
 *
 * A leaf sits at the shallowest depth where its key's nibble prefix is unique; an internal node
 * never has a single leaf as its only child.
 */
import { HASH_BYTES } from '../constants.js';
import { bigintToBytesBE, bytesEqual, bytesToBigintBE, concatBytes, parseHex, toHex } from '../codec/bytes.js';
import { sha3 } from '../crypto/hash.js';

/** Root of a trie with no leaves. */
export const EMPTY_TRIE_ROOT: Uint8Array = new Uint8Array(HASH_BYTES);
/** Code hash of an account without code: SHA3-256 of nothing. */
export const EMPTY_CODE_HASH: Uint8Array = sha3(new Uint8Array(0));
/** Bytes of an account leaf's value: balance (32 BE) ‖ nonce (8 BE) ‖ code hash ‖ storage root. */
export const ACCOUNT_VALUE_BYTES = 32 + 8 + HASH_BYTES + HASH_BYTES;
/** Bytes of a storage leaf's value. */
export const STORAGE_VALUE_BYTES = 32;

/** First byte of a leaf's encoding. */
export const LEAF_TAG = 0x00;
/** First byte of an internal node's encoding. */
export const INTERNAL_TAG = 0x01;
const LEAF = LEAF_TAG;
const INTERNAL = INTERNAL_TAG;

/** The four fields an account leaf commits to. */
export interface AccountValue {
  balance: bigint;
  nonce: bigint;
  codeHash: Uint8Array;
  storageRoot: Uint8Array;
}

/** Trie key of an account: SHA3-256 of its 20 address bytes. */
export function accountKey(address: string): Uint8Array {
  return sha3(parseHex(address, 'address', 20));
}

/** Trie key of a storage slot: SHA3-256 of its 32 key bytes. */
export function storageKey(slot: Uint8Array): Uint8Array {
  return sha3(slot);
}

/** The `depth`-th nibble (4 bits, high first) of a key hash. */
export function nibble(key: Uint8Array, depth: number): number {
  const b = key[depth >> 1]!;
  return depth & 1 ? b & 0x0f : b >> 4;
}

/** Encodes an account leaf's value. */
export function encodeAccountValue(a: AccountValue): Uint8Array {
  return concatBytes(bigintToBytesBE(a.balance, 32), bigintToBytesBE(a.nonce, 8), a.codeHash, a.storageRoot);
}

/** Decodes an account leaf's value. */
export function decodeAccountValue(v: Uint8Array): AccountValue {
  if (v.length !== ACCOUNT_VALUE_BYTES) throw new RangeError(`account value is ${v.length} bytes, expected ${ACCOUNT_VALUE_BYTES}`);
  return {
    balance: bytesToBigintBE(v.subarray(0, 32)),
    nonce: bytesToBigintBE(v.subarray(32, 40)),
    codeHash: v.slice(40, 72),
    storageRoot: v.slice(72, 104),
  };
}

/** Encoding of a leaf. */
export function encodeLeaf(key: Uint8Array, value: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(LEAF), key, value);
}

/** Encoding of an internal node from its 16 child hashes (null: no child). */
export function encodeInternal(children: ReadonlyArray<Uint8Array | null>): Uint8Array {
  let bitmap = 0;
  const hashes: Uint8Array[] = [];
  children.forEach((c, i) => {
    if (c) {
      bitmap |= 1 << i;
      hashes.push(c);
    }
  });
  return concatBytes(Uint8Array.of(INTERNAL, bitmap >> 8, bitmap & 0xff), ...hashes);
}

/** Hash of an encoded node. */
export function nodeHash(encoding: Uint8Array): Uint8Array {
  return sha3(encoding);
}

/** A decoded node, as the verifier and the trie read it. */
export type DecodedNode = { kind: 'leaf'; key: Uint8Array; value: Uint8Array } | { kind: 'internal'; children: Array<Uint8Array | null> };

/**
 * Decodes a node encoding whose leaves carry `valueBytes` of value; returns the node and the
 * bytes it used (the node store appends bookkeeping after them), or null when malformed.
 */
export function decodeNode(bytes: Uint8Array, valueBytes: number): { node: DecodedNode; length: number } | null {
  if (bytes[0] === LEAF) {
    const length = 1 + HASH_BYTES + valueBytes;
    if (bytes.length < length) return null;
    return { node: { kind: 'leaf', key: bytes.slice(1, 1 + HASH_BYTES), value: bytes.slice(1 + HASH_BYTES, length) }, length };
  }
  if (bytes[0] !== INTERNAL || bytes.length < 3) return null;
  const bitmap = (bytes[1]! << 8) | bytes[2]!;
  const children: Array<Uint8Array | null> = [];
  let at = 3;
  for (let i = 0; i < 16; i++) {
    if (bitmap & (1 << i)) {
      if (bytes.length < at + HASH_BYTES) return null;
      children.push(bytes.slice(at, at + HASH_BYTES));
      at += HASH_BYTES;
    } else children.push(null);
  }
  // Two children at least: one leaf alone is hoisted, and an empty node is no node.
  if (bitmap === 0) return null;
  return { node: { kind: 'internal', children }, length: at };
}

/**
 * Walks `proof` (encodings from the root down) for `key` against `root`: the leaf's value when the
 * key is present, null when the proof shows it absent (an empty child slot, or another key's leaf
 * where it would sit), undefined when the proof is invalid.
 */
export function verifyTrieProof(root: Uint8Array, key: Uint8Array, proof: readonly Uint8Array[], valueBytes: number): Uint8Array | null | undefined {
  if (key.length !== HASH_BYTES) return undefined;
  if (bytesEqual(root, EMPTY_TRIE_ROOT)) return proof.length === 0 ? null : undefined;
  let expected = root;
  for (let depth = 0; depth < proof.length; depth++) {
    const enc = proof[depth]!;
    if (!bytesEqual(nodeHash(enc), expected)) return undefined;
    const d = decodeNode(enc, valueBytes);
    if (!d || d.length !== enc.length) return undefined;
    const last = depth === proof.length - 1;
    if (d.node.kind === 'leaf') {
      if (!last) return undefined;
      // A leaf below depth d shares its first d nibbles with every key routed to it.
      for (let i = 0; i < depth; i++) if (nibble(d.node.key, i) !== nibble(key, i)) return undefined;
      return bytesEqual(d.node.key, key) ? d.node.value : null;
    }
    const child = d.node.children[nibble(key, depth)];
    if (!child) return last ? null : undefined;
    if (last) return undefined;
    expected = child;
  }
  return undefined;
}

/** One storage slot's proof, in wire form. */
export interface StorageProofWire {
  /** 32-byte key, 0x hex. */
  key: string;
  /** 32-byte value, 0x hex (all zero when absent). */
  value: string;
  /** Encoded trie nodes from the storage root down, 0x hex (docs/protocol.md, State trie). */
  proof: string[];
}

/** An account proof with its storage proofs against a block's state root, in wire form (eth_getProof's shape). */
export interface AccountProofWire {
  address: string;
  /** The state root this proof is against. */
  stateRoot: string;
  balance: string;
  nonce: number;
  codeHash: string;
  storageHash: string;
  /** Encoded trie nodes from the state root down to the account's leaf (or to the proof of its absence). */
  accountProof: string[];
  storageProof: StorageProofWire[];
}

function hexList(list: unknown): Uint8Array[] | undefined {
  if (!Array.isArray(list)) return undefined;
  try {
    return list.map((s, i) => parseHex(s, `proof[${i}]`));
  } catch {
    return undefined;
  }
}

/**
 * Verifies an account proof against `stateRoot`: the proof's state root is that root, and the
 * account fields it states (zero balance and nonce, empty code and storage when absent) are
 * what the trie holds at `proof.address`. Storage proofs are checked separately
 * (verifyStorageProof) against the proven storageHash.
 */
export function verifyAccountProof(stateRoot: Uint8Array, proof: AccountProofWire): boolean {
  try {
    if (toHex(stateRoot) !== proof.stateRoot.toLowerCase()) return false;
    const nodes = hexList(proof.accountProof);
    if (!nodes) return false;
    const value = verifyTrieProof(stateRoot, accountKey(proof.address), nodes, ACCOUNT_VALUE_BYTES);
    if (value === undefined) return false;
    const claimed: AccountValue = {
      balance: BigInt(proof.balance),
      nonce: BigInt(proof.nonce),
      codeHash: parseHex(proof.codeHash, 'codeHash', HASH_BYTES),
      storageRoot: parseHex(proof.storageHash, 'storageHash', HASH_BYTES),
    };
    if (value === null) return claimed.balance === 0n && claimed.nonce === 0n && bytesEqual(claimed.codeHash, EMPTY_CODE_HASH) && bytesEqual(claimed.storageRoot, EMPTY_TRIE_ROOT);
    return bytesEqual(value, encodeAccountValue(claimed));
  } catch {
    return false;
  }
}

/** Verifies one storage slot's proof against an account's storage root (an absent slot's value is all zero). */
export function verifyStorageProof(storageRoot: Uint8Array, proof: StorageProofWire): boolean {
  try {
    const nodes = hexList(proof.proof);
    if (!nodes) return false;
    const slot = parseHex(proof.key, 'key', 32);
    const claimed = parseHex(proof.value, 'value', 32);
    const value = verifyTrieProof(storageRoot, storageKey(slot), nodes, STORAGE_VALUE_BYTES);
    if (value === undefined) return false;
    return value === null ? claimed.every((b) => b === 0) : bytesEqual(value, claimed);
  } catch {
    return false;
  }
}

/** Verifies an account proof and every storage proof it carries against `stateRoot`. */
export function verifyProof(stateRoot: Uint8Array, proof: AccountProofWire): boolean {
  if (!verifyAccountProof(stateRoot, proof)) return false;
  const storageRoot = parseHex(proof.storageHash, 'storageHash', HASH_BYTES);
  return proof.storageProof.every((s) => verifyStorageProof(storageRoot, s));
}

/** Leaves of a trie built from scratch: key hash → value. */
export type TrieEntries = ReadonlyArray<readonly [Uint8Array, Uint8Array]>;

function sortedEntries(entries: TrieEntries): Array<readonly [Uint8Array, Uint8Array]> {
  return [...entries].sort(([a], [b]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  });
}

// The encoding of the subtree holding `items` below `depth`, or null when empty.
function buildNode(items: Array<readonly [Uint8Array, Uint8Array]>, depth: number): Uint8Array | null {
  if (items.length === 0) return null;
  if (items.length === 1) return encodeLeaf(items[0]![0], items[0]![1]);
  const groups: Array<Array<readonly [Uint8Array, Uint8Array]>> = Array.from({ length: 16 }, () => []);
  for (const e of items) groups[nibble(e[0], depth)]!.push(e);
  return encodeInternal(groups.map((g) => {
    const n = buildNode(g, depth + 1);
    return n && nodeHash(n);
  }));
}

/**
 * Root of the trie holding `entries`, built from scratch (O(n log n)): the reference the node's
 * incremental trie must equal, and how a tool computes a root without a database.
 */
export function trieRoot(entries: TrieEntries): Uint8Array {
  const n = buildNode(sortedEntries(entries), 0);
  return n ? nodeHash(n) : EMPTY_TRIE_ROOT;
}

/** The proof of `key` (presence or absence) in the trie holding `entries`, built from scratch. */
export function trieProof(entries: TrieEntries, key: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let items = sortedEntries(entries);
  for (let depth = 0; items.length > 0; depth++) {
    out.push(buildNode(items, depth)!);
    if (items.length === 1) break;
    const i = nibble(key, depth);
    items = items.filter((e) => nibble(e[0], depth) === i);
  }
  return out;
}
