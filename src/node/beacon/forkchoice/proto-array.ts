/**
 * Fork choice's block tree and LMD weights, after the proto-array idea (Lodestar, Lighthouse):
 * blocks live in one array in import order, which is a topological order because a parent is
 * always imported before its children, so one reverse pass turns per-block vote weight into
 * subtree weight (O(blocks) per head computation, O(1) per vote change).
 *
 * It knows blocks, slots and weights only: which block the head walk starts from, and which
 * votes weigh what, are decided by the fork-choice store (fork-choice.ts).
 */
import type { ForkChoiceBlock, Root } from './types.js';

/** One block of the tree; indices are positions in the array. */
export interface ProtoNode {
  root: Root;
  parentRoot: Root | null;
  slot: number;
  /** Index of the parent in `nodes`, -1 for the anchor (genesis, or the finalized block after pruning). */
  parent: number;
  children: number[];
  /**
   * Index of the latest ancestor-or-self at or before the start slot of this block's epoch
   * (its epoch checkpoint), -1 if pruned away. Lets ancestor look-ups jump an epoch per step.
   */
  epochAnchor: number;
}

/** The block tree with each block's own vote weight, cached subtree weights and head walk. */
export class ProtoArray {
  private nodes: ProtoNode[] = [];
  private indices = new Map<Root, number>();
  /** Stake of the latest messages pointing directly at each node (same indexing as `nodes`). */
  private own: bigint[] = [];

  /** Subtree weights and the last head walk, recomputed lazily after any change. */
  private subtree: bigint[] | undefined;
  private headCache: { start: number; minSlot: number; head: Root } | undefined;

  /** An empty tree; `slotsPerEpoch` (≥ 1, checked by the caller) places epoch anchors. */
  constructor(readonly slotsPerEpoch: number) {}

  /**
   * A tree of `blocks`, parent-first, whose first entry is the anchor. The caller has checked
   * that every parent appears earlier and every slot exceeds its parent's.
   */
  static fromBlocks(slotsPerEpoch: number, blocks: readonly ForkChoiceBlock[]): ProtoArray {
    const tree = new ProtoArray(slotsPerEpoch);
    blocks.forEach((b, i) => {
      // Anything before the anchor is gone, so only an anchor at an epoch start anchors its epoch.
      if (i === 0) tree.push(b.root, b.parentRoot, b.slot, -1, -1);
      else tree.push(b.root, b.parentRoot, b.slot, tree.indices.get(b.parentRoot!)!);
    });
    return tree;
  }

  /** Number of blocks held. */
  get size(): number {
    return this.nodes.length;
  }

  /** Index of the block with this (lowercase) root, if held. */
  indexOf(root: Root): number | undefined {
    return this.indices.get(root);
  }

  /** Whether the block with this (lowercase) root is held. */
  has(root: Root): boolean {
    return this.indices.has(root);
  }

  /** The block at index `i` (read-only: the tree owns it). */
  node(i: number): Readonly<ProtoNode> {
    return this.nodes[i]!;
  }

  /** Every block, parent-first (the persisted order). */
  blocks(): ForkChoiceBlock[] {
    return this.nodes.map((n) => ({ root: n.root, parentRoot: n.parentRoot, slot: n.slot }));
  }

  /** First slot of `epoch`. */
  startSlot(epoch: number): number {
    return epoch * this.slotsPerEpoch;
  }

  /** Appends a block under `parent` (-1: the anchor) with no weight of its own; returns its index. */
  push(root: Root, parentRoot: Root | null, slot: number, parent: number, anchor?: number): number {
    const i = this.nodes.length;
    const start = this.startSlot(Math.floor(slot / this.slotsPerEpoch));
    let epochAnchor = anchor ?? -1;
    if (anchor === undefined && parent >= 0) {
      const p = this.nodes[parent]!;
      // A parent in an earlier epoch is the latest block before this epoch's start; a parent in
      // the same epoch already knows the answer.
      epochAnchor = p.slot <= start ? parent : p.epochAnchor;
    }
    if (slot === start) epochAnchor = i;
    this.nodes.push({ root, parentRoot, slot, parent, children: [], epochAnchor });
    this.own.push(0n);
    this.indices.set(root, i);
    if (parent >= 0) this.nodes[parent]!.children.push(i);
    this.invalidate();
    return i;
  }

  /** Adds `delta` (possibly negative) to the vote weight pointing directly at block `i`. */
  addWeight(i: number, delta: bigint): void {
    this.own[i]! += delta;
    this.invalidate();
  }

  /**
   * Index of the latest ancestor-or-self of node `i` at or before `slot`; -1 if pruned away.
   * O(epochs + slotsPerEpoch): whole epochs are skipped through `epochAnchor`, since every block
   * between a block and its epoch anchor lies after the epoch's start slot.
   */
  ancestorAtSlot(i: number, slot: number): number {
    let j = i;
    while (j >= 0) {
      const n = this.nodes[j]!;
      if (n.slot <= slot) break;
      const a = n.epochAnchor;
      const epochStart = n.slot - (n.slot % this.slotsPerEpoch);
      j = epochStart <= slot || a === j || a < 0 ? n.parent : a;
    }
    return j;
  }

  /** Subtree weight of every block (same indexing as the blocks). */
  weights(): bigint[] {
    if (this.subtree) return this.subtree;
    const w = this.own.slice();
    // Children come after their parent, so a reverse pass sees every subtree complete.
    for (let i = w.length - 1; i > 0; i--) {
      const p = this.nodes[i]!.parent;
      if (p >= 0) w[p]! += w[i]!;
    }
    this.subtree = w;
    return w;
  }

  /**
   * GHOST walk from block `start`: repeatedly step to the child whose subtree is heaviest, equal
   * weights going to the lexicographically greater root; children at or before `minSlot` are
   * skipped (they disagree with the checkpoint the walk starts from).
   */
  head(start: number, minSlot: number): Root {
    const c = this.headCache;
    if (c && c.start === start && c.minSlot === minSlot) return c.head;
    const w = this.weights();
    let i = start;
    for (;;) {
      let best = -1;
      for (const c of this.nodes[i]!.children) {
        const n = this.nodes[c]!;
        if (n.slot <= minSlot) continue;
        if (best < 0 || w[c]! > w[best]! || (w[c] === w[best] && n.root > this.nodes[best]!.root)) best = c;
      }
      if (best < 0) break;
      i = best;
    }
    const head = this.nodes[i]!.root;
    this.headCache = { start, minSlot, head };
    return head;
  }

  /**
   * Keeps block `f` (the new anchor) and its descendants except children of `f` at or before
   * `fStart` (they disagree with the checkpoint `f` is); own weights move with their blocks.
   */
  prune(f: number, fStart: number): void {
    // Parents precede children, so one forward pass decides membership; nodes before f cannot
    // descend from it. A child of f at or before the finalized epoch's start slot disagrees with
    // the finalized checkpoint (onBlock would refuse it now).
    const keep = new Array<boolean>(this.nodes.length).fill(false);
    keep[f] = true;
    for (let i = f + 1; i < this.nodes.length; i++) {
      const n = this.nodes[i]!;
      keep[i] = n.parent >= 0 && keep[n.parent]! && !(n.parent === f && n.slot <= fStart);
    }
    const oldNodes = this.nodes;
    const oldOwn = this.own;
    const remap = new Map<number, number>();
    this.nodes = [];
    this.own = [];
    this.indices = new Map();
    for (let i = 0; i < oldNodes.length; i++) {
      if (!keep[i]) continue;
      const n = oldNodes[i]!;
      const parent = i === f ? -1 : remap.get(n.parent)!;
      // Anchors point backwards, so they are already remapped (or gone: -1).
      remap.set(i, this.push(n.root, n.parentRoot, n.slot, parent, n.epochAnchor === i ? undefined : remap.get(n.epochAnchor) ?? -1));
      this.own[this.own.length - 1] = oldOwn[i]!;
    }
    this.invalidate();
  }

  private invalidate(): void {
    this.subtree = undefined;
    this.headCache = undefined;
  }
}
