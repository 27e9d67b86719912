/**
 * The versioned, persisted 16-ary Merkle trie (node encoding: src/core/state/trie.ts). A node is
 * stored under `n:<version>:<tree>:<nibble path>`: the version is the sequence number of the import
 * that wrote it, so the states of sibling blocks (different versions) coexist without copying,
 * and a write never overwrites a node another state reads. Pruning deletes whole versions
 * (orphaned blocks) or the nodes a finalised block replaced (its stale index), see db.ts.
 *
 * Stored form = the hashed encoding, then bookkeeping the hash does not cover: an internal node's
 * per-child version (6 bytes BE) and leaf flag (1 byte); an account leaf's storage-root version.
 */
import { bytesEqual } from '../../../core/codec/bytes.js';
import { ACCOUNT_VALUE_BYTES, EMPTY_TRIE_ROOT, STORAGE_VALUE_BYTES, decodeNode, encodeInternal, encodeLeaf, nibble, nodeHash } from '../../../core/state/trie.js';
import type { NodeStore } from './node-store.js';

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
  ref: ChildRef | null;
  path: string;
  depth: number;
}

/** A child pointer of an internal node. */
export interface ChildRef {
  hash: Uint8Array;
  version: number;
  leaf: boolean;
}

/** A node as stored. */
export type StoredNode = { kind: 'leaf'; key: Uint8Array; value: Uint8Array; extra: Uint8Array } | { kind: 'internal'; children: Array<ChildRef | null> };

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
  inserted: number;
  deleted: number;
}

const VERSION_BYTES = 6;
const HEX = '0123456789abcdef';
/** Hex digits of the version in a node key. */
const VERSION_HEX = 12;

/** Database key of the node at `path` (hex nibbles) of `tree`, written by `version`. */
export function nodeKey(version: number, tree: string, path: string): string {
  return `n:${version.toString(16).padStart(VERSION_HEX, '0')}:${tree}:${path}`;
}

/** Leaf value size of the trie a node key belongs to (tree `a`: accounts; `s…`: storage). */
export function valueBytesOf(key: string): number {
  return key.charAt(3 + VERSION_HEX) === 'a' ? ACCOUNT_VALUE_BYTES : STORAGE_VALUE_BYTES;
}

/** Prefix of every node a version wrote (any tree). */
export function versionPrefix(version: number): string {
  return `n:${version.toString(16).padStart(VERSION_HEX, '0')}:`;
}

function u48(n: number): Uint8Array {
  const out = new Uint8Array(VERSION_BYTES);
  let v = n;
  for (let i = VERSION_BYTES - 1; i >= 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  return out;
}

function readU48(b: Uint8Array, at: number): number {
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
  return n.kind === 'leaf' ? encodeLeaf(n.key, n.value) : encodeInternal(n.children.map((c) => c?.hash ?? null));
}

/** Stored bytes of a node. */
export function encodeStored(n: StoredNode): Uint8Array {
  const base = hashedEncoding(n);
  const extra = n.kind === 'leaf' ? n.extra : storedChildInfo(n.children);
  const out = new Uint8Array(base.length + extra.length);
  out.set(base);
  out.set(extra, base.length);
  return out;
}

function storedChildInfo(children: Array<ChildRef | null>): Uint8Array {
  const present = children.filter((c): c is ChildRef => c !== null);
  const out = new Uint8Array(present.length * (VERSION_BYTES + 1));
  present.forEach((c, i) => {
    out.set(u48(c.version), i * (VERSION_BYTES + 1));
    out[i * (VERSION_BYTES + 1) + VERSION_BYTES] = c.leaf ? 1 : 0;
  });
  return out;
}

/** Decodes stored bytes (leaves of this tree carry `valueBytes` of value); null when malformed. */
export function decodeStored(bytes: Uint8Array, valueBytes: number): StoredNode | null {
  const d = decodeNode(bytes, valueBytes);
  if (!d) return null;
  // Views into the one stored buffer: a cached node costs one allocation, not one per hash.
  if (d.node.kind === 'leaf') return { kind: 'leaf', key: bytes.subarray(1, 33), value: bytes.subarray(33, d.length), extra: bytes.subarray(d.length) };
  let at = d.length;
  let h = 3;
  const children = d.node.children.map((present): ChildRef | null => {
    if (!present) return null;
    const c = { hash: bytes.subarray(h, h + 32), version: readU48(bytes, at), leaf: bytes[at + VERSION_BYTES] === 1 };
    h += 32;
    at += VERSION_BYTES + 1;
    return c;
  });
  if (at !== bytes.length) return null;
  return { kind: 'internal', children };
}

/** Leaf result of an update, not yet placed (placement decides its path). */
interface LeafSub {
  kind: 'leaf';
  hash: Uint8Array;
  /** Where it is stored now, if it is an existing leaf. */
  at?: string;
  version?: number;
  /** Key and value, when known (an untouched leaf is read only if it must move). */
  data?: { key: Uint8Array; value: Uint8Array; extra: Uint8Array };
}
type Sub = LeafSub | { kind: 'internal'; hash: Uint8Array; version: number };

const hex = (i: number) => HEX[i]!;

/** One trie (the account trie, or one account's storage trie) read through a node store. */
export class Trie {
  constructor(
    private readonly store: NodeStore,
    /** `a` for accounts, `s<account key hex>` for an account's storage. */
    readonly tree: string,
    /** Bytes of a leaf's value in this trie. */
    readonly valueBytes: number,
  ) {}

  private load(version: number, path: string): StoredNode {
    return this.store.node(nodeKey(version, this.tree, path), this.valueBytes);
  }

  /** The leaf under `key` (value and extra), or undefined. Synchronous: misses are read from disk. */
  get(root: NodeRef, key: Uint8Array): { value: Uint8Array; extra: Uint8Array } | undefined {
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return undefined;
    let ref: ChildRef = { hash: root.hash, version: root.version, leaf: false };
    let path = '';
    for (let depth = 0; ; depth++) {
      const n = this.load(ref.version, path);
      if (n.kind === 'leaf') return bytesEqual(n.key, key) ? { value: n.value, extra: n.extra } : undefined;
      const i = nibble(key, depth);
      const c = n.children[i];
      if (!c) return undefined;
      ref = c;
      path += hex(i);
    }
  }

  /** Hashed encodings from the root down to `key`'s leaf or to the proof of its absence. */
  proof(root: NodeRef, key: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return out;
    let ref: ChildRef | null = { hash: root.hash, version: root.version, leaf: false };
    let path = '';
    for (let depth = 0; ref; depth++) {
      const n = this.load(ref.version, path);
      out.push(hashedEncoding(n));
      if (n.kind === 'leaf') break;
      const i = nibble(key, depth);
      ref = n.children[i] ?? null;
      path += hex(i);
    }
    return out;
  }

  /** Walks toward `keys` from the root, one cursor per key, for a level-by-level prefetch. */
  cursors(root: NodeRef, keys: Uint8Array[]): PathCursor[] {
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return [];
    return keys.map((key) => ({ key, ref: { hash: root.hash, version: root.version, leaf: false }, path: '', depth: 0 }));
  }

  /**
   * Moves each cursor down through cached nodes until it reaches a leaf, an empty slot or a node
   * that is not cached; returns the cursors still walking and the node keys they wait for. Each
   * round resumes where the last stopped, so a prefetch costs O(keys · depth) lookups in all.
   */
  advance(cursors: PathCursor[], cached: (key: string) => StoredNode | undefined): { pending: PathCursor[]; want: string[] } {
    const want = new Set<string>();
    const pending: PathCursor[] = [];
    for (const c of cursors) {
      while (c.ref) {
        const k = nodeKey(c.ref.version, this.tree, c.path);
        const n = cached(k);
        if (!n) {
          want.add(k);
          pending.push(c);
          break;
        }
        if (n.kind === 'leaf') break;
        const i = nibble(c.key, c.depth);
        c.ref = n.children[i] ?? null;
        c.path += hex(i);
        c.depth++;
      }
    }
    return { pending, want: [...want] };
  }

  /** Applies `updates` (any order; one per key) to the trie at `root` as `version`. Costs O(k · log N). */
  update(root: NodeRef, updates: TrieUpdate[], version: number): TrieWrite {
    const w: TrieWrite = { root, puts: new Map(), stale: [], inserted: 0, deleted: 0 };
    if (updates.length === 0) return w;
    const sorted = [...updates].sort((a, b) => compareKeys(a.key, b.key));
    const empty = bytesEqual(root.hash, EMPTY_TRIE_ROOT);
    const sub = this.apply(w, version, empty ? null : { hash: root.hash, version: root.version, leaf: false }, 0, '', sorted);
    if (!sub) w.root = EMPTY_REF;
    else {
      const c = this.place(w, version, sub, '');
      w.root = { version: c.version, hash: c.hash };
    }
    return w;
  }

  private apply(w: TrieWrite, version: number, ref: ChildRef | null, depth: number, path: string, ups: TrieUpdate[]): Sub | null {
    if (ups.length === 0) {
      if (!ref) return null;
      return ref.leaf ? { kind: 'leaf', hash: ref.hash, at: nodeKey(ref.version, this.tree, path), version: ref.version } : { kind: 'internal', hash: ref.hash, version: ref.version };
    }
    if (!ref) {
      const items = ups.filter((u) => u.value !== null);
      w.inserted += items.length;
      return this.fresh(w, version, depth, path, items);
    }
    const at = nodeKey(ref.version, this.tree, path);
    const n = this.store.node(at, this.valueBytes);
    if (n.kind === 'leaf') {
      const same = ups.find((u) => bytesEqual(u.key, n.key));
      if (ups.length === 1 && same && same.value && bytesEqual(same.value, n.value) && bytesEqual(same.extra ?? new Uint8Array(0), n.extra)) {
        return { kind: 'leaf', hash: ref.hash, at, version: ref.version, data: { key: n.key, value: n.value, extra: n.extra } };
      }
      w.stale.push(at);
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
    const groups = group(ups, depth);
    const subs: Array<Sub | null> = n.children.map((c, i) => this.apply(w, version, c, depth + 1, path + hex(i), groups[i]!));
    const present = subs.filter((s): s is Sub => s !== null);
    w.stale.push(at);
    if (present.length === 0) return null;
    if (present.length === 1 && present[0]!.kind === 'leaf') return present[0]!;
    return this.internal(w, version, path, subs);
  }

  /** A subtree holding exactly `items` (sorted, all non-null), below `path`. */
  private fresh(w: TrieWrite, version: number, depth: number, path: string, items: TrieUpdate[]): Sub | null {
    if (items.length === 0) return null;
    if (items.length === 1) {
      const u = items[0]!;
      const data = { key: u.key, value: u.value!, extra: u.extra ?? new Uint8Array(0) };
      return { kind: 'leaf', hash: nodeHash(encodeLeaf(data.key, data.value)), data };
    }
    const groups = group(items, depth);
    return this.internal(
      w,
      version,
      path,
      groups.map((g, i) => this.fresh(w, version, depth + 1, path + hex(i), g)),
    );
  }

  private internal(w: TrieWrite, version: number, path: string, subs: Array<Sub | null>): Sub {
    const children = subs.map((s, i) => (s ? this.place(w, version, s, path + hex(i)) : null));
    const node: StoredNode = { kind: 'internal', children };
    this.write(w, nodeKey(version, this.tree, path), node);
    return { kind: 'internal', hash: nodeHash(hashedEncoding(node)), version };
  }

  /** Stores a subtree's top at `path` (a leaf may move up when its siblings went away). */
  private place(w: TrieWrite, version: number, s: Sub, path: string): ChildRef {
    if (s.kind === 'internal') return { hash: s.hash, version: s.version, leaf: false };
    if (s.at !== undefined && s.version !== undefined && s.at === nodeKey(s.version, this.tree, path)) return { hash: s.hash, version: s.version, leaf: true };
    let data = s.data;
    if (!data) {
      const n = this.store.node(s.at!, this.valueBytes);
      if (n.kind !== 'leaf') throw new Error(`trie node ${s.at} is not a leaf`);
      data = { key: n.key, value: n.value, extra: n.extra };
    }
    if (s.at !== undefined) w.stale.push(s.at);
    this.write(w, nodeKey(version, this.tree, path), { kind: 'leaf', ...data });
    return { hash: s.hash, version, leaf: true };
  }

  private write(w: TrieWrite, key: string, node: StoredNode): void {
    w.puts.set(key, encodeStored(node));
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
