/**
 * The account trie's upper levels, held apart from the node cache's generations. Every block walks
 * them, but at a million accounts the fourth level alone is 65,536 nodes: a cache that fills only
 * with what blocks touch would take hundreds of blocks to hold it, so a restarted node read two
 * nodes from disk for most accounts (the level-4 node and the leaf) instead of one. `StateDb.warm`
 * reads these levels at start-up, level by level within a byte budget; commits then keep them
 * current. One node per path is held (the most recent version imported), so the tier is bounded
 * by the trie's shape and the budget, never by the number of versions or blocks.
 */
import type { CacheStats } from '../../../util/byte-cache.js';
import { ACCOUNT_TREE, type InternalNode, type StoredNode, accountNodeAt, nodeKey } from './trie.js';

/** Nodes of the account trie at paths of at most `depth` nibbles, one version per path, within `maxBytes`. */
export class TopLevels {
  private readonly byKey = new Map<string, InternalNode>();
  /** Path → the key held there. */
  private readonly byPath = new Map<string, string>();
  private bytes = 0;
  /** Set once a node was turned away for want of room: a warm-up stops there. */
  private spent = false;
  /** Deepest level held (paths of this many nibbles); -1 until a warm-up admits a level. */
  private depth = -1;
  /** Length of a node key at the deepest held level. */
  private maxKeyLength = -1;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (n: StoredNode) => number,
  ) {}

  /** The node under `key`, if held. */
  get(key: string): StoredNode | undefined {
    // Most lookups are of deeper nodes or storage tries: a length test spares them a map lookup.
    return key.length > this.maxKeyLength ? undefined : this.byKey.get(key);
  }

  /** Extends the held levels to `depth` while the budget has room left; says whether it had. */
  admitLevel(depth: number): boolean {
    if (this.spent) return false;
    this.depth = Math.max(this.depth, depth);
    this.maxKeyLength = nodeKey(0, ACCOUNT_TREE, '').length + this.depth;
    return true;
  }

  /** Whether the budget is spent. */
  full(): boolean {
    return this.spent;
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
    const prevKey = this.byPath.get(at.path);
    if (prevKey === key) return true;
    const prev = prevKey === undefined ? undefined : this.byKey.get(prevKey);
    // An older state's node (a side branch's parent, a proof at an old block) does not displace the head's.
    if (prevKey !== undefined && accountNodeAt(prevKey, this.depth)!.version > at.version) return false;
    const size = this.sizeOf(node);
    if (this.bytes - (prev ? this.sizeOf(prev) : 0) + size > this.maxBytes) {
      this.spent = true;
      return false;
    }
    if (prevKey !== undefined) this.delete(prevKey);
    this.byKey.set(key, node);
    this.byPath.set(at.path, key);
    this.bytes += size;
    return true;
  }

  /** Forgets `key` (pruned, or displaced by a newer version of its path). */
  delete(key: string): void {
    const n = this.byKey.get(key);
    if (!n) return;
    this.byKey.delete(key);
    const path = accountNodeAt(key, Infinity)!.path;
    if (this.byPath.get(path) === key) this.byPath.delete(path);
    this.bytes -= this.sizeOf(n);
  }

  /** The keys held, by path. */
  held(): ReadonlyMap<string, string> {
    return this.byPath;
  }

  /** Bytes and entries held, and the levels (paths of at most `depth` nibbles) they come from. */
  stats(): CacheStats & { depth: number } {
    return { bytes: this.bytes, entries: this.byKey.size, maxBytes: this.maxBytes, depth: this.depth };
  }
}
