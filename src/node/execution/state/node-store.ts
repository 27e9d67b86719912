/**
 * Trie nodes and code as execution reads them: a bytes-bounded LRU of decoded nodes in front of
 * LevelDB. Reads are synchronous (execution cannot await); a miss goes to the synchronous reader
 * (sync-reader.ts), and hot paths avoid misses by prefetching asynchronously, level by level,
 * with batched reads before they execute.
 */
import { availableParallelism } from 'node:os';
import { ExecutionError } from '../errors.js';
import type { CacheStats } from '../../../util/byte-cache.js';
import type { ChainStore } from '../../shared/store.js';
import type { SyncReader } from './sync-reader.js';
import { TopLevels } from './top-levels.js';
import { ACCOUNT_VALUE_BYTES, nodeHash } from '../../../core/state/trie.js';
import { HASHLESS_MAX_DEPTH, HashlessNode } from './hashless.js';
import { detached } from '../../../util/byte-arena.js';
import { ACCOUNT_TREE, type InternalNode, accountNodeAt, decodeStored, nodeKey, type StoredNode, type TrieNodeSource, valueBytesOf } from './trie.js';

const HEX = '0123456789abcdef';

/** Resident bytes of a cached node beyond its stored bytes. */
const NODE_OVERHEAD_BYTES = 550;

/**
 * Estimated resident bytes of a cached node: its stored buffer with the buffer's own bookkeeping,
 * the node object, and the cache's key string and map entry (measured: see nodeBytes in the state
 * bench's notes, BENCHMARKS.md).
 */
function nodeBytes(n: StoredNode): number {
  return estimatedNodeBytes(n.bytes.length);
}

/** Estimated resident bytes of a cached node whose stored form is `storedBytes` long. */
export function estimatedNodeBytes(storedBytes: number): number {
  return NODE_OVERHEAD_BYTES + storedBytes;
}

/**
 * A bytes-bounded cache in two generations: hits in the young map cost one lookup, hits in the
 * old map move the entry up, and when the young map fills half the bound the old generation is
 * dropped whole. A block reads each top-level node thousands of times; an LRU that reorders its
 * map on every hit spent more time in the map than the trie spent hashing.
 */
class GenerationalCache<V> {
  private young = new Map<string, { value: V; size: number }>();
  private old = new Map<string, { value: V; size: number }>();
  private youngBytes = 0;
  private oldBytes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const y = this.young.get(key);
    if (y) return y.value;
    const o = this.old.get(key);
    if (!o) return undefined;
    this.old.delete(key);
    this.oldBytes -= o.size;
    this.insert(key, o);
    return o.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    this.setFresh(key, value);
  }

  /**
   * As `set`, for a key known not to be held (a node a commit just wrote: its key carries the
   * commit's new version, which nothing could read before), sparing the two lookups of the delete.
   */
  setFresh(key: string, value: V): void {
    const size = this.sizeOf(value);
    if (size * 2 > this.maxBytes) return;
    this.insert(key, { value, size });
  }

  private insert(key: string, e: { value: V; size: number }): void {
    if (this.youngBytes + e.size > this.maxBytes / 2) {
      this.old = this.young;
      this.oldBytes = this.youngBytes;
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.young.set(key, e);
    this.youngBytes += e.size;
  }

  delete(key: string): void {
    const y = this.young.get(key);
    if (y) {
      this.young.delete(key);
      this.youngBytes -= y.size;
    }
    const o = this.old.get(key);
    if (o) {
      this.old.delete(key);
      this.oldBytes -= o.size;
    }
  }

  stats(): CacheStats {
    return { bytes: this.youngBytes + this.oldBytes, entries: this.young.size + this.old.size, maxBytes: this.maxBytes };
  }
}

/** Default byte bound of the node cache. */
export const DEFAULT_NODE_CACHE_BYTES = 64 * 1024 * 1024;
/**
 * Default byte bound of the account trie's upper levels (top-levels.ts, packed: stored bytes and
 * index): levels 0 to 5 of a million-account trie (about 330,000 nodes) take about 82 MB; a larger
 * state holds fewer whole levels, never more bytes.
 */
export const DEFAULT_TOP_LEVEL_BYTES = 92 * 1024 * 1024;

/**
 * Batched reads run side by side at most (libuv's pool has four threads; the reads of one block
 * are spread over the cores there are, not over more threads than that).
 */
const READ_PARALLELISM = Math.max(1, Math.min(4, availableParallelism()));
/** Keys a parallel run reads at least: below this a second thread's hand-off costs more than it saves. */
const MIN_READ_RUN = 256;

/** Reads and caches stored trie nodes and code. */
export class NodeStore implements TrieNodeSource {
  private readonly cache: GenerationalCache<StoredNode>;
  /** The account trie's upper levels, apart from the generations. */
  readonly top: TopLevels;
  /** Reads that blocked on the synchronous reader, for metrics and tests. */
  syncReads = 0;

  constructor(
    private readonly store: ChainStore,
    readonly reader: SyncReader,
    cacheBytes = DEFAULT_NODE_CACHE_BYTES,
    topBytes = DEFAULT_TOP_LEVEL_BYTES,
  ) {
    this.cache = new GenerationalCache(cacheBytes, nodeBytes);
    this.top = new TopLevels(topBytes);
  }

  /** The node under `key`; a missing node is a damaged (or pruned) state, never an empty one. */
  node(key: string, valueBytes: number): StoredNode {
    return this.top.get(key) ?? this.cache.get(key) ?? this.read(key, valueBytes);
  }

  /**
   * The node `version` wrote at `path` of `tree`: as `node`, but a held upper-level node is found
   * by its path's number, without building its key.
   */
  nodeAt(tree: string, version: number, path: string, valueBytes: number): StoredNode {
    if (tree === ACCOUNT_TREE) {
      const t = this.top.getAt(version, path);
      if (t) return t;
    }
    const key = nodeKey(version, tree, path);
    return this.cache.get(key) ?? this.read(key, valueBytes);
  }

  /** Whether the upper levels hold the node `version` wrote at `path` of `tree`. */
  holdsAt(tree: string, version: number, path: string): boolean {
    return tree === ACCOUNT_TREE && this.top.getAt(version, path) !== undefined;
  }

  /** A cached node at `path` of `tree`, without reading. */
  cachedAt(tree: string, version: number, path: string): StoredNode | undefined {
    if (tree === ACCOUNT_TREE) {
      const t = this.top.getAt(version, path);
      if (t) return t;
    }
    return this.cache.get(nodeKey(version, tree, path));
  }

  /** Reads a node the caches miss, synchronously. */
  private read(key: string, valueBytes: number): StoredNode {
    this.syncReads++;
    const bytes = this.reader.read(key);
    if (!bytes) throw new ExecutionError('STATE_NODE_MISSING', `state trie node ${key} is not stored (pruned, or a damaged database)`);
    return this.decode(key, bytes, valueBytes);
  }

  /** A cached node, without reading. */
  cached(key: string): StoredNode | undefined {
    return this.top.get(key) ?? this.cache.get(key);
  }

  private decode(key: string, bytes: Uint8Array, valueBytes: number, fresh = false): StoredNode {
    const hashless = HashlessNode.decode(bytes);
    const n = hashless ? this.expand(key, hashless) : decodeStored(bytes, valueBytes);
    if (!n) throw new ExecutionError('CORRUPT_DB', `state trie node ${key} is malformed`);
    if (fresh) {
      // A node the commit built in its arena (trie.ts) is kept as a copy of its own, so the
      // cache never holds a whole arena chunk for one node (the upper levels copy into slabs).
      if (!this.top.offer(key, n)) {
        const own = detached(n.bytes);
        this.cache.setFresh(key, own === n.bytes ? n : decodeStored(own, valueBytes)!);
      }
    } else this.place(key, n);
    return n;
  }

  /**
   * The full node of a hashless upper node stored under `key` (see trie.ts `storedForm`): each
   * internal child's hash is copied from the newest held node at the same path when that node has
   * the same child (same version and path: the same node), else hashed from the child, read as any
   * node.
   * A block's reads of the head's upper levels never come here (they are held); reading an older
   * state's (a side branch's parent, a proof) costs about one child hash per changed child.
   */
  private expand(key: string, n: HashlessNode): InternalNode {
    const at = accountNodeAt(key, HASHLESS_MAX_DEPTH);
    if (!at) throw new ExecutionError('CORRUPT_DB', `state trie node ${key} is hashless but not an upper account-trie node`);
    const held = this.top.newestAt(at.path);
    return n.expand((i) => {
      const version = n.childVersion(i);
      if (held && held.childVersion(i) === version && !held.childIsLeaf(i)) return held.child(i)!.hash.slice();
      return nodeHash(this.nodeAt(ACCOUNT_TREE, version, at.path + HEX[i]!, ACCOUNT_VALUE_BYTES).hashed());
    });
  }

  /**
   * For a warm-up: `keys` as stored, one batched read for those not cached. A full node is decoded
   * and cached as `prefetch` does; a hashless one is returned unexpanded (expanding it would read
   * its children one by one: the warm-up reads the level below first, then calls `placeHashless`).
   */
  async warmRead(keys: string[], valueBytes: number): Promise<Array<StoredNode | HashlessNode | undefined>> {
    const out: Array<StoredNode | HashlessNode | undefined> = keys.map((k) => this.cached(k));
    // In key order, as `prefetch` reads.
    const missing = keys
      .map((_, i) => (out[i] ? -1 : i))
      .filter((i) => i >= 0)
      .sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    if (missing.length === 0) return out;
    const values = await this.readMany(missing.map((i) => keys[i]!));
    values.forEach((v, j) => {
      if (!v) return;
      const i = missing[j]!;
      const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      out[i] = HashlessNode.decode(bytes) ?? this.decode(keys[i]!, bytes, valueBytes);
    });
    return out;
  }

  /** Expands and caches a hashless node a warm-up read (its children read or cached first). */
  placeHashless(key: string, n: HashlessNode): void {
    this.place(key, this.expand(key, n));
  }

  /** Caches `n`: among the upper levels if it is one of theirs, else in the generations. */
  place(key: string, n: StoredNode): void {
    // Held above: a copy in the generations would count its bytes twice.
    if (this.top.offer(key, n)) this.cache.delete(key);
    else this.cache.set(key, n);
  }

  /** Reads `keys` (nodes of one trie) into the cache with one batched read; returns the nodes read. */
  async prefetch(keys: string[], valueBytes: number): Promise<Array<StoredNode | undefined>> {
    const missing = keys.filter((k) => !this.cached(k));
    if (missing.length === 0) return [];
    // In key order LevelDB's reads walk its tables and blocks forward, and the nodes one import
    // wrote (one version prefix) are read together.
    missing.sort();
    // LevelDB's answers are Buffers, the nodes a commit builds and the upper levels' views plain
    // Uint8Arrays: held as one kind, the walks' reads of node bytes stay monomorphic.
    const values = (await this.readMany(missing)).map((v) => (v ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : undefined));
    await this.prefetchHashlessChildren(missing, values);
    return values.map((v, i) => (v ? this.decode(missing[i]!, v, valueBytes) : undefined));
  }

  /**
   * Reads, with batched reads, the internal children that expanding the hashless nodes among
   * `values` would read (those the node held at the same path does not share), so that a cold
   * read of the upper levels (before the warm-up, or beyond its budget) reads them level by level
   * rather than one synchronous read per child.
   */
  private async prefetchHashlessChildren(keys: readonly string[], values: ReadonlyArray<Uint8Array | undefined>): Promise<void> {
    const want = new Set<string>();
    values.forEach((v, k) => {
      const n = v && HashlessNode.decode(v);
      const at = n && accountNodeAt(keys[k]!, HASHLESS_MAX_DEPTH);
      if (!n || !at) return;
      const held = this.top.newestAt(at.path);
      for (let i = 0; i < 16; i++) {
        if (!n.has(i) || n.childIsLeaf(i)) continue;
        const version = n.childVersion(i);
        if (held && held.childVersion(i) === version && !held.childIsLeaf(i)) continue;
        const child = nodeKey(version, ACCOUNT_TREE, at.path + HEX[i]!);
        if (!this.cached(child)) want.add(child);
      }
    });
    if (want.size > 0) await this.prefetch([...want], ACCOUNT_VALUE_BYTES);
  }

  /**
   * Reads sorted `keys` in up to READ_PARALLELISM contiguous runs at once. One getMany is one
   * thread reading key after key, while the block waits: at a million accounts that is every
   * touched leaf (about 1,400 a block, each a table block to find and decode), which a smaller
   * state holds in the cache. Runs of the sorted keys keep each thread's reads in key order.
   */
  private async readMany(keys: string[]): Promise<Array<Uint8Array | undefined>> {
    const runs = Math.min(READ_PARALLELISM, Math.floor(keys.length / MIN_READ_RUN));
    const read = (ks: string[]) => this.store.db.getMany<string, Uint8Array>(ks, { valueEncoding: 'view' }) as Promise<Array<Uint8Array | undefined>>;
    if (runs <= 1) return read(keys);
    const per = Math.ceil(keys.length / runs);
    const parts: Array<Promise<Array<Uint8Array | undefined>>> = [];
    for (let from = 0; from < keys.length; from += per) parts.push(read(keys.slice(from, from + per)));
    return (await Promise.all(parts)).flat();
  }

  /** Raw bytes under `key` (code), synchronously. */
  bytes(key: string): Uint8Array | undefined {
    this.syncReads++;
    return this.reader.read(key);
  }

  /**
   * Caches the nodes a committed batch wrote (decoded from their stored bytes, so each is one
   * buffer with views, like a node read from disk), and tells the reader what it wrote and deleted.
   * The batch's node keys are new (its version's), so none is in the cache yet.
   */
  committed(puts: ReadonlyMap<string, Uint8Array>, dels: readonly string[]): void {
    for (const [k, bytes] of puts) if (k.startsWith('n:')) this.decode(k, bytes, valueBytesOf(k), true);
    for (const k of dels) {
      this.cache.delete(k);
      this.top.delete(k);
    }
    this.reader.written(puts, dels);
  }

  /**
   * Drops `keys` (still stored) from the generations: the nodes a commit replaced, which only its
   * parent state reads. Each block reads the leaves it is about to replace; kept, they would fill
   * half the generations with nodes the head never reads again. The upper levels hold the newest
   * version per path, which a commit already moved on.
   */
  forget(keys: readonly string[]): void {
    for (const k of keys) this.cache.delete(k);
  }

  /** Bytes and entries of the node cache, upper levels included. */
  stats(): CacheStats {
    const c = this.cache.stats();
    const t = this.top.stats();
    return { bytes: c.bytes + t.bytes, entries: c.entries + t.entries, maxBytes: c.maxBytes + t.maxBytes };
  }
}
