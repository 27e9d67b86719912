/**
 * The versioned, persisted 16-ary Merkle trie (node encoding: src/core/state/trie.ts). A node is
 * stored under `n:<version>:<tree>:<nibble path>`: the version is the sequence number of the import
 * that wrote it, so the states of sibling blocks (different versions) coexist without copying,
 * and a write never overwrites a node another state reads. Pruning deletes whole versions
 * (orphaned blocks) or the nodes a finalised block replaced (its stale index), see db.ts.
 *
 * Stored form = the hashed encoding, then bookkeeping the hash does not cover: an internal node's
 * per-child version (6 bytes BE) and leaf flag (1 byte); an account leaf's storage-root version.
 * (The account trie's levels 0 to 3 go to disk without their internal children's hashes: hashless.ts.)
 */
import { bytesEqual } from '../../../core/codec/bytes.js';
import { HASH_BYTES } from '../../../core/constants.js';
import { ACCOUNT_VALUE_BYTES, EMPTY_TRIE_ROOT, INTERNAL_TAG, LEAF_TAG, STORAGE_VALUE_BYTES, nibble, nodeHash } from '../../../core/state/trie.js';
import { ByteArena } from '../../../util/byte-arena.js';

/** Where a trie's root node is: its hash and the version that wrote it. */
export interface NodeRef {
  version: number;
  hash: Uint8Array;
}

/** The root of an empty trie (no node is stored for it). */
export const EMPTY_REF: NodeRef = Object.freeze({ version: 0, hash: EMPTY_TRIE_ROOT });

/** A resumable walk toward one key (see Trie.advance). */
export interface PathCursor {
  key: Uint8Array;
  /** Version of the next node on the path; -1 once the walk has ended. */
  version: number;
  path: string;
  depth: number;
}

/** A child pointer of an internal node. */
export interface ChildRef {
  hash: Uint8Array;
  version: number;
  leaf: boolean;
}

/**
 * A leaf as stored, read in place: one buffer and one object per cached leaf (the views are made
 * when asked for), because most of a large state's cached nodes are leaves read once.
 */
export class LeafNode {
  readonly kind = 'leaf' as const;

  constructor(
    /** Stored bytes: the hashed encoding, then the extra bytes. */
    readonly bytes: Uint8Array,
    private readonly valueEnd: number,
  ) {}

  /** Stores `key`, `value` and `extra` as one buffer. */
  static build(key: Uint8Array, value: Uint8Array, extra: Uint8Array): LeafNode {
    const bytes = new Uint8Array(1 + key.length + value.length + extra.length);
    bytes[0] = LEAF_TAG;
    bytes.set(key, 1);
    bytes.set(value, 1 + key.length);
    bytes.set(extra, 1 + key.length + value.length);
    return new LeafNode(bytes, 1 + key.length + value.length);
  }

  /** The key hash. */
  get key(): Uint8Array {
    return this.bytes.subarray(1, 1 + HASH_BYTES);
  }

  /** The value the leaf commits to. */
  get value(): Uint8Array {
    return this.bytes.subarray(1 + HASH_BYTES, this.valueEnd);
  }

  /** Bookkeeping beside the value (an account's storage-root version), not hashed. */
  get extra(): Uint8Array {
    return this.bytes.subarray(this.valueEnd);
  }

  /** The hashed encoding (what proofs carry). */
  hashed(): Uint8Array {
    return this.bytes.subarray(0, this.valueEnd);
  }
}

/**
 * An internal node as stored, read in place: child hashes, versions and leaf flags are read from
 * the one buffer when a walk asks for them. Decoding each child into its own object and view cost
 * about 200 bytes per child in the cache and most of a block's garbage collection.
 */
export class InternalNode {
  readonly kind = 'internal' as const;

  private constructor(
    /** Stored bytes: the hashed encoding, then each present child's version (6 bytes BE) and leaf flag. */
    readonly bytes: Uint8Array,
    /** Bit i set: nibble i has a child. */
    readonly bitmap: number,
    private readonly hashedLength: number,
  ) {}

  /** Decodes stored bytes; null when malformed. */
  static decode(bytes: Uint8Array): InternalNode | null {
    if (bytes.length < 3 || bytes[0] !== INTERNAL_TAG) return null;
    const bitmap = (bytes[1]! << 8) | bytes[2]!;
    // Two children at least in a valid trie; an empty node is no node.
    if (bitmap === 0) return null;
    const count = popcount(bitmap);
    const hashedLength = 3 + count * HASH_BYTES;
    if (bytes.length !== hashedLength + count * CHILD_INFO_BYTES) return null;
    return new InternalNode(bytes, bitmap, hashedLength);
  }

  /**
   * Stores a node with these children (null: none; undefined: `base`'s child there, copied byte
   * for byte), encoded once for both its hash and its stored form. A block rewrites full 16-child
   * nodes at the upper levels with one or two children changed: copying the others in place spares
   * an object and two views per untouched child.
   */
  static build(children: ReadonlyArray<ChildRef | null | undefined>, base?: InternalNode): InternalNode {
    let bitmap = 0;
    let count = 0;
    for (let i = 0; i < 16; i++) {
      const c = children[i];
      if (c === undefined ? base !== undefined && base.has(i) : c !== null) {
        bitmap |= 1 << i;
        count++;
      }
    }
    const hashedLength = 3 + count * HASH_BYTES;
    const bytes = commitBytes(hashedLength + count * CHILD_INFO_BYTES);
    if (base !== undefined && bitmap === base.bitmap) {
      // Same children present (a block changing existing accounts): the layout is the base's, so
      // one copy carries every untouched child and only the changed ones are written over it.
      bytes.set(base.bytes);
      for (let i = 0, j = 0; i < 16; i++) {
        if (((bitmap >> i) & 1) === 0) continue;
        const c = children[i];
        if (c) writeChild(bytes, hashedLength, j, c);
        j++;
      }
      return new InternalNode(bytes, bitmap, hashedLength);
    }
    bytes[0] = INTERNAL_TAG;
    bytes[1] = bitmap >> 8;
    bytes[2] = bitmap & 0xff;
    let j = 0;
    for (let i = 0; i < 16; i++) {
      if (((bitmap >> i) & 1) === 0) continue;
      const c = children[i];
      if (c) writeChild(bytes, hashedLength, j, c);
      else {
        const from = base!.bytes;
        const k = base!.slot(i);
        bytes.set(from.subarray(3 + k * HASH_BYTES, 3 + (k + 1) * HASH_BYTES), 3 + j * HASH_BYTES);
        const info = base!.hashedLength + k * CHILD_INFO_BYTES;
        bytes.set(from.subarray(info, info + CHILD_INFO_BYTES), hashedLength + j * CHILD_INFO_BYTES);
      }
      j++;
    }
    return new InternalNode(bytes, bitmap, hashedLength);
  }

  /** Whether nibble `i` has a child. */
  has(i: number): boolean {
    return ((this.bitmap >> i) & 1) === 1;
  }

  /** Whether the child at nibble `i` is a leaf (false when there is none). */
  childIsLeaf(i: number): boolean {
    return this.has(i) && this.bytes[this.hashedLength + this.slot(i) * CHILD_INFO_BYTES + VERSION_BYTES] === 1;
  }

  /** Index of nibble `i`'s child among the present ones. */
  slot(i: number): number {
    return popcount(this.bitmap & ((1 << i) - 1));
  }

  /** The child at nibble `i`, or null. */
  child(i: number): ChildRef | null {
    if (!this.has(i)) return null;
    const j = this.slot(i);
    const at = this.hashedLength + j * CHILD_INFO_BYTES;
    return { hash: this.bytes.subarray(3 + j * HASH_BYTES, 3 + (j + 1) * HASH_BYTES), version: readU48(this.bytes, at), leaf: this.bytes[at + VERSION_BYTES] === 1 };
  }

  /** The version of the child at nibble `i` (where its node is stored), or -1 when there is none: a walk needs no more. */
  childVersion(i: number): number {
    if (!this.has(i)) return -1;
    return readU48(this.bytes, this.hashedLength + this.slot(i) * CHILD_INFO_BYTES);
  }

  /** All 16 child slots. */
  children(): Array<ChildRef | null> {
    return Array.from({ length: 16 }, (_, i) => this.child(i));
  }

  /** The hashed encoding (what proofs carry). */
  hashed(): Uint8Array {
    return this.bytes.subarray(0, this.hashedLength);
  }
}

/** A node as stored. */
export type StoredNode = LeafNode | InternalNode;


/** Writes child `c` into slot `j` of an internal node's stored bytes. */
function writeChild(bytes: Uint8Array, hashedLength: number, j: number, c: ChildRef): void {
  bytes.set(c.hash, 3 + j * HASH_BYTES);
  const at = hashedLength + j * CHILD_INFO_BYTES;
  writeU48(bytes, at, c.version);
  bytes[at + VERSION_BYTES] = c.leaf ? 1 : 0;
}

/** Bits set in a 16-bit child bitmap. */
export function popcount(x: number): number {
  let v = x - ((x >> 1) & 0x5555);
  v = (v & 0x3333) + ((v >> 2) & 0x3333);
  v = (v + (v >> 4)) & 0x0f0f;
  return (v + (v >> 8)) & 0x1f;
}

/** One key's change: a null value deletes it. `extra` is stored beside an account leaf (not hashed). */
export interface TrieUpdate {
  key: Uint8Array;
  value: Uint8Array | null;
  extra?: Uint8Array;
}

/** What one trie update produced: the new root, the nodes to write and the node keys it replaced. */
export interface TrieWrite {
  root: NodeRef;
  puts: Map<string, Uint8Array>;
  stale: string[];
  /**
   * The stale keys the node cache's generations may hold, to drop from them: leaves, and internal
   * nodes the upper levels do not hold (which are never in the generations too).
   */
  evict: string[];
  inserted: number;
  deleted: number;
}

/** Bytes of a stored version (big-endian). */
export const VERSION_BYTES = 6;
/** Stored bookkeeping per present child of an internal node: its version and leaf flag. */
export const CHILD_INFO_BYTES = VERSION_BYTES + 1;
/**
 * Where commits build internal nodes and their stored forms (util/byte-arena.ts): a chunk holds
 * about 400 full nodes, and a node outlives its block only as a copy (the held upper levels'
 * slabs, LevelDB's batch, the node cache: node-store.ts `decode`; db.ts `queue`).
 */
const NODE_ARENA = new ByteArena(256 * 1024);

/** `n` zeroed bytes from the commit arena, for a node built or encoded during a commit. */
export function commitBytes(n: number): Uint8Array {
  return NODE_ARENA.alloc(n);
}
const HEX = '0123456789abcdef';
/** Hex digits of the version in a node key. */
const VERSION_HEX = 12;

/** Name of the account trie in node keys (a storage trie is `s` and its account's key). */
export const ACCOUNT_TREE = 'a';
/** Where an account-trie node key's path starts: `n:<version>:a:`. */
const ACCOUNT_PATH_AT = 2 + VERSION_HEX + 3;

/** Version and path of an account-trie node key whose path has at most `maxDepth` nibbles; null for any other key. */
export function accountNodeAt(key: string, maxDepth: number): { version: number; path: string } | null {
  if (key.length > ACCOUNT_PATH_AT + maxDepth || key.length < ACCOUNT_PATH_AT || key.charCodeAt(0) !== 0x6e) return null;
  if (key.charAt(ACCOUNT_PATH_AT - 2) !== ACCOUNT_TREE || key.charAt(ACCOUNT_PATH_AT - 1) !== ':') return null;
  return { version: parseInt(key.slice(2, 2 + VERSION_HEX), 16), path: key.slice(ACCOUNT_PATH_AT) };
}

/** Database key of the node at `path` (hex nibbles) of `tree`, written by `version`. */
export function nodeKey(version: number, tree: string, path: string): string {
  // A block builds tens of thousands of keys from a handful of versions: format each version once.
  let prefix = prefixes.get(version);
  if (prefix === undefined) {
    if (prefixes.size >= PREFIX_MEMO) prefixes.clear();
    prefixes.set(version, (prefix = versionPrefix(version)));
  }
  return prefix + tree + ':' + path;
}

const prefixes = new Map<number, string>();
/** Versions whose key prefix is remembered (a block's paths use a few hundred at most). */
const PREFIX_MEMO = 4096;

/** Leaf value size of the trie a node key belongs to (tree `a`: accounts; `s…`: storage). */
export function valueBytesOf(key: string): number {
  return key.charAt(3 + VERSION_HEX) === 'a' ? ACCOUNT_VALUE_BYTES : STORAGE_VALUE_BYTES;
}

/** Prefix of every node a version wrote (any tree), and of its stale list. */
export function versionPrefix(version: number): string {
  return `n:${version.toString(16).padStart(VERSION_HEX, '0')}:`;
}

/** Where every state key sorts: nodes and stale lists (`n:`), code (`c:`, `i:`). */
export const STATE_PREFIXES = ['n:', 'c:', 'i:'] as const;

/**
 * Key of the JSON list of node keys the state `version` no longer uses (its parent state still
 * does), deleted with them when the version's block is finalised. It sorts after the version's
 * nodes (`~` follows every tree name), inside the version's own key range: a block's whole write
 * is one contiguous range above every earlier version, so LevelDB moves its flushed tables down
 * the levels whole instead of merging them with older ones (docs/execution.md, "State database").
 */
export function staleKey(version: number): string {
  return versionPrefix(version) + '~';
}

/** The first key above every node and stale list of versions up to `version`. */
export function aboveVersion(version: number): string {
  return versionPrefix(version + 1);
}

/** The first key above every node key of every version. */
export const NODES_END = 'n:\xff';

function u48(n: number): Uint8Array {
  const out = new Uint8Array(VERSION_BYTES);
  let v = n;
  for (let i = VERSION_BYTES - 1; i >= 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  return out;
}

function writeU48(out: Uint8Array, at: number, n: number): void {
  let v = n;
  for (let i = VERSION_BYTES - 1; i >= 0; i--) {
    out[at + i] = v % 256;
    v = Math.floor(v / 256);
  }
}

/** Reads a stored version at `at`. */
export function readU48(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < VERSION_BYTES; i++) v = v * 256 + b[at + i]!;
  return v;
}

/** Encodes a version for a leaf's `extra` (an account's storage-root version). */
export const encodeVersion = u48;
/** Decodes a version from a leaf's `extra`. */
export function decodeVersion(extra: Uint8Array): number {
  return extra.length >= VERSION_BYTES ? readU48(extra, 0) : 0;
}

/** The hashed encoding of a stored node (what proofs carry). */
export function hashedEncoding(n: StoredNode): Uint8Array {
  return n.hashed();
}

/** Decodes stored bytes (leaves of this tree carry `valueBytes` of value); null when malformed. */
export function decodeStored(bytes: Uint8Array, valueBytes: number): StoredNode | null {
  if (bytes[0] === LEAF_TAG) {
    const valueEnd = 1 + HASH_BYTES + valueBytes;
    return bytes.length < valueEnd ? null : new LeafNode(bytes, valueEnd);
  }
  return InternalNode.decode(bytes);
}

/** Leaf result of an update, not yet placed (placement decides its path). */
interface LeafSub {
  kind: 'leaf';
  hash: Uint8Array;
  /** Where it is stored now, if it is an existing leaf. */
  at?: string;
  version?: number;
  /** The leaf, when known (an untouched leaf is read only if it must move). */
  data?: LeafNode;
}
type Sub = LeafSub | { kind: 'internal'; hash: Uint8Array; version: number };

const hex = (i: number) => HEX[i]!;
const NO_EXTRA = new Uint8Array(0);

/**
 * The reads a trie makes of its node store (node-store.ts NodeStore). Declared here, not imported:
 * the store is built over this file's node types, so the trie names only what it calls.
 */
export interface TrieNodeSource {
  /** The node under `key`; a missing node is a damaged (or pruned) state, never an empty one. */
  node(key: string, valueBytes: number): StoredNode;
  /** The node `version` wrote at `path` of `tree`. */
  nodeAt(tree: string, version: number, path: string, valueBytes: number): StoredNode;
  /** Whether the store's upper levels hold the node `version` wrote at `path` of `tree`. */
  holdsAt(tree: string, version: number, path: string): boolean;
  /** A cached node at `path` of `tree`, without reading. */
  cachedAt(tree: string, version: number, path: string): StoredNode | undefined;
}

/** One trie (the account trie, or one account's storage trie) read through a node store. */
export class Trie {
  constructor(
    private readonly store: TrieNodeSource,
    /** `a` for accounts, `s<account key hex>` for an account's storage. */
    readonly tree: string,
    /** Bytes of a leaf's value in this trie. */
    readonly valueBytes: number,
  ) {}

  private load(version: number, path: string): StoredNode {
    return this.store.nodeAt(this.tree, version, path, this.valueBytes);
  }

  /** The leaf under `key` (value and extra), or undefined. Synchronous: misses are read from disk. */
  get(root: NodeRef, key: Uint8Array): { value: Uint8Array; extra: Uint8Array } | undefined {
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return undefined;
    let version = root.version;
    let path = '';
    for (let depth = 0; ; depth++) {
      const n = this.load(version, path);
      if (n.kind === 'leaf') return bytesEqual(n.key, key) ? { value: n.value, extra: n.extra } : undefined;
      const i = nibble(key, depth);
      version = n.childVersion(i);
      if (version < 0) return undefined;
      path += hex(i);
    }
  }

  /** Hashed encodings from the root down to `key`'s leaf or to the proof of its absence. */
  proof(root: NodeRef, key: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return out;
    let version = root.version;
    let path = '';
    for (let depth = 0; version >= 0; depth++) {
      const n = this.load(version, path);
      out.push(hashedEncoding(n));
      if (n.kind === 'leaf') break;
      const i = nibble(key, depth);
      version = n.childVersion(i);
      path += hex(i);
    }
    return out;
  }

  /** Walks toward `keys` from the root, one cursor per key, for a level-by-level prefetch. */
  cursors(root: NodeRef, keys: Uint8Array[]): PathCursor[] {
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return [];
    return keys.map((key) => ({ key, version: root.version, path: '', depth: 0 }));
  }

  /**
   * Moves each cursor down through cached nodes until it reaches a leaf, an empty slot or a node
   * that is not cached; returns the cursors still walking and the node keys they wait for. Each
   * round resumes where the last stopped, so a prefetch costs O(keys · depth) lookups in all.
   */
  advance(cursors: PathCursor[]): { pending: PathCursor[]; want: string[] } {
    const want = new Set<string>();
    const pending: PathCursor[] = [];
    for (const c of cursors) {
      while (c.version >= 0) {
        const n = this.store.cachedAt(this.tree, c.version, c.path);
        if (!n) {
          want.add(nodeKey(c.version, this.tree, c.path));
          pending.push(c);
          break;
        }
        if (n.kind === 'leaf') break;
        const i = nibble(c.key, c.depth);
        c.version = n.childVersion(i);
        c.path += hex(i);
        c.depth++;
      }
    }
    return { pending, want: [...want] };
  }

  /**
   * Applies `updates` (any order; one per key) to the trie at `root` as `version`, adding the nodes
   * to write to `puts` (a commit passes one map for all its tries). Costs O(k · log N).
   */
  update(root: NodeRef, updates: TrieUpdate[], version: number, puts = new Map<string, Uint8Array>()): TrieWrite {
    const w: TrieWrite = { root, puts, stale: [], evict: [], inserted: 0, deleted: 0 };
    if (updates.length === 0) return w;
    const sorted = [...updates].sort((a, b) => compareKeys(a.key, b.key));
    const empty = bytesEqual(root.hash, EMPTY_TRIE_ROOT);
    const sub = this.apply(w, version, empty ? null : { hash: root.hash, version: root.version, leaf: false }, 0, '', sorted, 0, sorted.length);
    if (!sub) w.root = EMPTY_REF;
    else {
      const c = this.place(w, version, sub, '');
      w.root = { version: c.version, hash: c.hash };
    }
    return w;
  }

  /** The subtree at `path` (now `ref`) after the updates `all[from..to)`: a run of the sorted updates, so no copy per child. */
  private apply(w: TrieWrite, version: number, ref: ChildRef | null, depth: number, path: string, all: TrieUpdate[], from: number, to: number): Sub | null {
    if (from === to) {
      if (!ref) return null;
      return ref.leaf ? { kind: 'leaf', hash: ref.hash, at: nodeKey(ref.version, this.tree, path), version: ref.version } : { kind: 'internal', hash: ref.hash, version: ref.version };
    }
    if (!ref) {
      const items: TrieUpdate[] = [];
      for (let k = from; k < to; k++) if (all[k]!.value !== null) items.push(all[k]!);
      w.inserted += items.length;
      return this.fresh(w, version, depth, path, items);
    }
    const at = nodeKey(ref.version, this.tree, path);
    const n = this.store.nodeAt(this.tree, ref.version, path, this.valueBytes);
    if (n.kind === 'leaf') {
      const ups = all.slice(from, to);
      const same = ups.find((u) => bytesEqual(u.key, n.key));
      if (ups.length === 1 && same && same.value && bytesEqual(same.value, n.value) && bytesEqual(same.extra ?? new Uint8Array(0), n.extra)) {
        return { kind: 'leaf', hash: ref.hash, at, version: ref.version, data: n };
      }
      w.stale.push(at);
      w.evict.push(at);
      const items: TrieUpdate[] = [];
      for (const u of ups) {
        if (u === same) {
          if (u.value === null) w.deleted++;
          else items.push(u);
        } else if (u.value !== null) {
          w.inserted++;
          items.push(u);
        }
      }
      if (!same) items.push({ key: n.key, value: n.value, extra: n.extra });
      items.sort((a, b) => compareKeys(a.key, b.key));
      return this.fresh(w, version, depth, path, items);
    }
    w.stale.push(at);
    // At a million accounts most of a block's replaced nodes are held upper-level nodes: looking
    // each up in the generations' large maps to drop it cost more than at a small state.
    if (!this.store.holdsAt(this.tree, ref.version, path)) w.evict.push(at);
    // `ups` is sorted and shares this node's path, so each child's updates are one run of it.
    // Untouched children (undefined here) keep their pointer as it is: same path, same version,
    // nothing read and nothing allocated for them.
    const subs: Array<Sub | null | undefined> = [];
    let present = 0;
    let lone = -1;
    let lo = from;
    for (let i = 0; i < 16; i++) {
      let hi = lo;
      while (hi < to && nibble(all[hi]!.key, depth) === i) hi++;
      const s = hi === lo ? undefined : this.apply(w, version, n.child(i), depth + 1, path + hex(i), all, lo, hi);
      subs.push(s);
      if (s === undefined ? n.has(i) : s !== null) {
        present++;
        lone = i;
      }
      lo = hi;
    }
    if (present === 0) return null;
    if (present === 1) {
      // A single leaf left below moves up to this node's place.
      const s = subs[lone];
      if (s === undefined && n.childIsLeaf(lone)) {
        const c = n.child(lone)!;
        return { kind: 'leaf', hash: c.hash, at: nodeKey(c.version, this.tree, path + hex(lone)), version: c.version };
      }
      if (s && s.kind === 'leaf') return s;
    }
    const children: Array<ChildRef | null | undefined> = new Array(16);
    for (let i = 0; i < 16; i++) {
      const s = subs[i];
      children[i] = s === undefined ? undefined : s ? this.place(w, version, s, path + hex(i)) : null;
    }
    return this.build(w, version, path, children, n);
  }

  /** A subtree holding exactly `items` (sorted, all non-null), below `path`. */
  private fresh(w: TrieWrite, version: number, depth: number, path: string, items: TrieUpdate[]): Sub | null {
    if (items.length === 0) return null;
    if (items.length === 1) {
      const u = items[0]!;
      const data = LeafNode.build(u.key, u.value!, u.extra ?? NO_EXTRA);
      return { kind: 'leaf', hash: nodeHash(data.hashed()), data };
    }
    const groups = group(items, depth);
    const children: Array<ChildRef | null> = new Array(16);
    for (let i = 0; i < 16; i++) {
      const s = this.fresh(w, version, depth + 1, path + hex(i), groups[i]!);
      children[i] = s ? this.place(w, version, s, path + hex(i)) : null;
    }
    return this.build(w, version, path, children);
  }

  /** Writes the internal node at `path` with these children. */
  private build(w: TrieWrite, version: number, path: string, children: Array<ChildRef | null | undefined>, base?: InternalNode): Sub {
    const node = InternalNode.build(children, base);
    w.puts.set(nodeKey(version, this.tree, path), node.bytes);
    return { kind: 'internal', hash: nodeHash(node.hashed()), version };
  }

  /** Stores a subtree's top at `path` (a leaf may move up when its siblings went away). */
  private place(w: TrieWrite, version: number, s: Sub, path: string): ChildRef {
    if (s.kind === 'internal') return { hash: s.hash, version: s.version, leaf: false };
    if (s.at !== undefined && s.version !== undefined && s.at === nodeKey(s.version, this.tree, path)) return { hash: s.hash, version: s.version, leaf: true };
    let data = s.data;
    if (!data) {
      const n = this.store.node(s.at!, this.valueBytes);
      if (n.kind !== 'leaf') throw new Error(`trie node ${s.at} is not a leaf`);
      data = n;
    }
    if (s.at !== undefined) {
      w.stale.push(s.at);
      w.evict.push(s.at);
    }
    // A leaf's stored bytes do not depend on where it sits: a moved leaf is written as it was.
    w.puts.set(nodeKey(version, this.tree, path), data.bytes);
    return { hash: s.hash, version, leaf: true };
  }
}

function compareKeys(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function group(items: TrieUpdate[], depth: number): TrieUpdate[][] {
  const out: TrieUpdate[][] = Array.from({ length: 16 }, () => []);
  for (const u of items) out[nibble(u.key, depth)]!.push(u);
  return out;
}
