/**
 * The account trie's upper levels, held apart from the node cache's generations. Every block walks
 * them, but at a million accounts the fourth level alone is 65,536 nodes and the fifth about
 * 260,000: a cache that fills only with what blocks touch would take hundreds of blocks to hold
 * them, so a restarted node read two or three nodes from disk per account instead of one (the
 * leaf). `StateDb.warm` reads these levels at start-up, level by level within a byte budget;
 * commits then keep them current. One node per path is held (the most recent version imported),
 * so the tier is bounded by the trie's shape and the budget, never by versions or blocks.
 *
 * Packed: a node's stored bytes sit in slabs of same-sized slots (one slab class per child count)
 * and each level indexes its paths by number, densely (typed arrays) where the level above could
 * fill it, else in a map. Objects, key strings and map entries per node cost about 550 bytes
 * against a level-5 node's 100, and looking up 300,000 string keys in a map cost more per block
 * than the hashing; a path's number is read off its few nibbles.
 */
import type { CacheStats } from '../../../util/byte-cache.js';
import { ACCOUNT_TREE, InternalNode, type StoredNode, accountNodeAt, nodeKey } from './trie.js';

/**
 * Deepest level whose node views are kept between lookups (4,369 paths at most): every walk
 * passes through these few nodes, three walks per touched account a block, and a fresh view per
 * lookup is an allocation per step.
 */
const MEMO_MAX_DEPTH = 3;
/**
 * Views kept per deeper dense level, by path number modulo this: a block walks each touched
 * account's path three times (prefetch, read, commit), and below MEMO_MAX_DEPTH each step made a
 * fresh view, so a deeper trie (a larger state) cost an allocation more per level per walk.
 */
const RECENT_SLOTS = 8192;
/** Estimated bytes of one recent view: its slot in the two arrays and the view object. */
const RECENT_SLOT_BYTES = 160;
/** Deepest level a dense index may cover: 16^5 paths at 12 bytes each. */
const DENSE_MAX_DEPTH = 5;
/** A level is indexed densely when the level above holds nodes enough to fill 1/DENSE_FILL of its paths. */
const DENSE_FILL = 8;
/** Index bytes per path of a dense level: a slot handle (Int32) and a version (Float64). */
const DENSE_PATH_BYTES = 12;
/** Estimated index bytes per node of a sparse level (two map entries). */
const SPARSE_NODE_BYTES = 80;
/** Deepest level held: path numbers stay exact doubles (16^13 = 2^52). */
const MAX_DEPTH = 13;
/** Slots per slab chunk (a 16-child node's chunk is 160 kB). */
const CHUNK_SLOTS = 256;
/** Slot handles: class × 2^24 + slot + 1 (0: no node). */
const CLASS_SHIFT = 2 ** 24;
/** Stored bytes of an internal node: tag and bitmap, then per child a hash (32) and its version and leaf flag (7). */
const NODE_HEAD_BYTES = 3;
const PER_CHILD_BYTES = 39;

/** Same-sized slots for the nodes of one child count. */
class Slab {
  private readonly chunks: Uint8Array[] = [];
  private readonly free: number[] = [];
  private next = 0;

  constructor(readonly stride: number) {}

  /** A free slot's number (a freed one first). */
  alloc(): number {
    const f = this.free.pop();
    if (f !== undefined) return f;
    const i = this.next++;
    if (i % CHUNK_SLOTS === 0) this.chunks.push(new Uint8Array(CHUNK_SLOTS * this.stride));
    return i;
  }

  /** Returns slot `i` for reuse. */
  release(i: number): void {
    this.free.push(i);
  }

  /** Slot `i`'s bytes, in place. */
  view(i: number): Uint8Array {
    const o = (i % CHUNK_SLOTS) * this.stride;
    return this.chunks[(i / CHUNK_SLOTS) | 0]!.subarray(o, o + this.stride);
  }

  /** Copies `bytes` (exactly a slot long) into slot `i`. */
  write(i: number, bytes: Uint8Array): void {
    this.chunks[(i / CHUNK_SLOTS) | 0]!.set(bytes, (i % CHUNK_SLOTS) * this.stride);
  }
}

/** One level's index: path number → slot handle and version. */
interface Level {
  count: number;
  slots?: Int32Array;
  versions?: Float64Array;
  sparse?: Map<number, { handle: number; version: number }>;
  /** Views of the nodes held, by path number (levels up to MEMO_MAX_DEPTH); cleared when a path's node changes. */
  memo?: Array<InternalNode | undefined>;
  /** Deeper dense levels: the views last made, at path number modulo RECENT_SLOTS (recentPath holds the path number + 1). */
  recent?: Array<InternalNode | undefined>;
  recentPath?: Int32Array;
}

/**
 * A level with every field present, in one order: walks look levels of all three kinds up in one
 * place, and objects of one shape keep that lookup monomorphic (with optional fields left out,
 * a million-account trie's mix of kept-view, recent-view and sparse levels made it a slow one).
 */
function level(fields: Partial<Level>): Level {
  return {
    count: 0,
    slots: fields.slots,
    versions: fields.versions,
    sparse: fields.sparse,
    memo: fields.memo,
    recent: fields.recent,
    recentPath: fields.recentPath,
  };
}

/** Drops the view kept for path number `p` of `lv` (its slot changes or goes). */
function forgetView(lv: Level, p: number): void {
  if (lv.memo) lv.memo[p] = undefined;
  else if (lv.recent && lv.recentPath![p % RECENT_SLOTS] === p + 1) {
    lv.recentPath![p % RECENT_SLOTS] = 0;
    lv.recent[p % RECENT_SLOTS] = undefined;
  }
}

/** The number of a path of hex nibbles (at most MAX_DEPTH of them). */
function pathNumber(path: string): number {
  let p = 0;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    p = p * 16 + (c < 58 ? c - 48 : c - 87);
  }
  return p;
}

/**
 * Internal nodes of the account trie at paths of at most `depth` nibbles, one version per path,
 * within `maxBytes` (stored bytes plus index). A node returned is a view of its slot: valid until
 * its path is offered a newer version or deleted, so callers use it synchronously, as walks do.
 */
export class TopLevels {
  private readonly levels: Level[] = [];
  private readonly slabs: Slab[] = [];
  private bytes = 0;
  /** Of `bytes`, those reserved for nodes not offered yet (see `reserve`). */
  private reserved = 0;
  private entries = 0;
  /** Set once a node was turned away for want of room: a warm-up stops there. */
  private spent = false;
  /** Deepest level held (paths of this many nibbles); -1 until a warm-up admits a level. */
  private depth = -1;

  constructor(readonly maxBytes: number) {
    for (let c = 0; c <= 16; c++) this.slabs.push(new Slab(NODE_HEAD_BYTES + c * PER_CHILD_BYTES));
  }

  /** The node written by `version` at `path`, if held. */
  getAt(version: number, path: string): InternalNode | undefined {
    if (path.length > this.depth) return undefined;
    const lv = this.levels[path.length]!;
    const p = pathNumber(path);
    let handle: number;
    if (lv.slots) {
      if (lv.versions![p] !== version) return undefined;
      handle = lv.slots[p]!;
      if (handle === 0) return undefined;
      if (lv.memo !== undefined) return (lv.memo[p] ??= this.view(handle));
      if (lv.recent !== undefined) {
        const i = p % RECENT_SLOTS;
        if (lv.recentPath![i] === p + 1) return lv.recent[i];
        const n = this.view(handle);
        lv.recentPath![i] = p + 1;
        lv.recent[i] = n;
        return n;
      }
    } else {
      const e = lv.sparse!.get(p);
      if (!e || e.version !== version) return undefined;
      handle = e.handle;
    }
    return handle === 0 ? undefined : this.view(handle);
  }

  /** The newest node held at `path` (any version), if any: siblings of one path share most children. */
  newestAt(path: string): InternalNode | undefined {
    if (path.length > this.depth) return undefined;
    const lv = this.levels[path.length]!;
    const e = this.heldAt(lv, pathNumber(path));
    return e ? this.getAt(e.version, path) : undefined;
  }

  /** The node under `key`, if held. */
  get(key: string): StoredNode | undefined {
    const at = accountNodeAt(key, this.depth);
    return at ? this.getAt(at.version, at.path) : undefined;
  }

  private view(handle: number): InternalNode | undefined {
    const h = handle - 1;
    return InternalNode.decode(this.slabs[Math.floor(h / CLASS_SHIFT)]!.view(h % CLASS_SHIFT)) ?? undefined;
  }

  /**
   * Extends the held levels to `depth` while the budget has room left; says whether it had.
   * `aboveHint`: the nodes the level above `depth` will hold, when they are not placed yet (a warm-up
   * places hashless upper nodes after the level below them, whose hashes they need).
   */
  admitLevel(depth: number, aboveHint?: number): boolean {
    if (this.spent || depth > MAX_DEPTH) return false;
    for (let d = this.levels.length; d <= depth; d++) {
      const paths = 16 ** d;
      const above = d === 0 ? 1 : Math.max(this.levels[d - 1]!.count, d === depth ? (aboveHint ?? 0) : 0);
      const dense = d <= DENSE_MAX_DEPTH && above * 16 * DENSE_FILL >= paths && this.bytes + paths * DENSE_PATH_BYTES <= this.maxBytes;
      if (dense) {
        const views =
          d <= MEMO_MAX_DEPTH ? { memo: new Array<InternalNode | undefined>(paths) } : { recent: new Array<InternalNode | undefined>(RECENT_SLOTS), recentPath: new Int32Array(RECENT_SLOTS) };
        this.levels.push(level({ slots: new Int32Array(paths), versions: new Float64Array(paths), ...views }));
        this.bytes += paths * DENSE_PATH_BYTES + (d <= MEMO_MAX_DEPTH ? 0 : RECENT_SLOTS * RECENT_SLOT_BYTES);
      } else this.levels.push(level({ sparse: new Map() }));
    }
    this.depth = Math.max(this.depth, depth);
    return true;
  }

  /**
   * Counts against the budget a node of `children` children at `depth` that a warm-up will offer
   * later (a hashless node, expanded once the level below is read); says whether it fits.
   */
  reserve(depth: number, children: number): boolean {
    const b = this.slabs[children]!.stride + (this.levels[depth]?.slots ? 0 : SPARSE_NODE_BYTES);
    if (this.bytes + b > this.maxBytes) {
      this.spent = true;
      return false;
    }
    this.bytes += b;
    this.reserved += b;
    return true;
  }

  /** Gives back every reservation (the nodes reserved for are offered next). */
  unreserve(): void {
    this.bytes -= this.reserved;
    this.reserved = 0;
  }

  /** Whether the budget is spent. */
  full(): boolean {
    return this.spent;
  }

  /** Handle and version held at path number `p` of `lv`, if any. */
  private heldAt(lv: Level, p: number): { handle: number; version: number } | undefined {
    if (lv.slots) return lv.slots[p] === 0 ? undefined : { handle: lv.slots[p]!, version: lv.versions![p]! };
    return lv.sparse!.get(p);
  }

  private release(lv: Level, p: number, handle: number): void {
    const h = handle - 1;
    const slab = this.slabs[Math.floor(h / CLASS_SHIFT)]!;
    slab.release(h % CLASS_SHIFT);
    this.bytes -= slab.stride + (lv.slots ? 0 : SPARSE_NODE_BYTES);
    this.entries--;
    lv.count--;
    if (lv.slots) {
      lv.slots[p] = 0;
      lv.versions![p] = 0;
      forgetView(lv, p);
    } else lv.sparse!.delete(p);
  }

  /**
   * Holds `node` if it is an internal node of the account trie at a held level and no newer
   * version of its path is held (leaves are per account: they stay in the generations); says
   * whether it did. A displaced older version is dropped: it belongs to a parent state, which
   * blocks rarely read again.
   */
  offer(key: string, node: StoredNode): boolean {
    if (node.kind !== 'internal') return false;
    const at = accountNodeAt(key, this.depth);
    if (!at) return false;
    const lv = this.levels[at.path.length]!;
    const p = pathNumber(at.path);
    const prev = this.heldAt(lv, p);
    // An older state's node (a side branch's parent, a proof at an old block) does not displace the head's.
    if (prev && prev.version > at.version) return false;
    if (prev && prev.version === at.version) return true;
    const cls = (node.bytes.length - NODE_HEAD_BYTES) / PER_CHILD_BYTES;
    const slab = this.slabs[cls]!;
    const prevBytes = prev ? this.slabs[Math.floor((prev.handle - 1) / CLASS_SHIFT)]!.stride : 0;
    if (this.bytes - prevBytes + slab.stride + (lv.slots || prev ? 0 : SPARSE_NODE_BYTES) > this.maxBytes) {
      this.spent = true;
      return false;
    }
    if (prev) this.release(lv, p, prev.handle);
    const slot = slab.alloc();
    slab.write(slot, node.bytes);
    const handle = cls * CLASS_SHIFT + slot + 1;
    if (lv.slots) {
      lv.slots[p] = handle;
      lv.versions![p] = at.version;
      forgetView(lv, p);
    } else lv.sparse!.set(p, { handle, version: at.version });
    this.bytes += slab.stride + (lv.slots ? 0 : SPARSE_NODE_BYTES);
    this.entries++;
    lv.count++;
    return true;
  }

  /** Forgets `key` (pruned) if it is the version held at its path. */
  delete(key: string): void {
    const at = accountNodeAt(key, this.depth);
    if (!at) return;
    const lv = this.levels[at.path.length]!;
    const p = pathNumber(at.path);
    const prev = this.heldAt(lv, p);
    if (prev && prev.version === at.version) this.release(lv, p, prev.handle);
  }

  /** The keys held, by path (for tests and diagnostics: it walks every held path). */
  held(): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    const keyOf = (d: number, p: number, version: number): void => {
      const path = d === 0 ? '' : p.toString(16).padStart(d, '0');
      out.set(path, nodeKey(version, ACCOUNT_TREE, path));
    };
    this.levels.forEach((lv, d) => {
      if (lv.slots) lv.slots.forEach((h, p) => h !== 0 && keyOf(d, p, lv.versions![p]!));
      else for (const [p, e] of lv.sparse!) keyOf(d, p, e.version);
    });
    return out;
  }

  /** Bytes (stored nodes and index) and entries held, and the levels (paths of at most `depth` nibbles) they come from. */
  stats(): CacheStats & { depth: number } {
    return { bytes: this.bytes, entries: this.entries, maxBytes: this.maxBytes, depth: this.depth };
  }
}
