/**
 * Pruning at finality: which block states stay readable (the finalised block's, its descendants',
 * and its parent's), and the deletion of the trie nodes only the others use when finality moves.
 * Runs one block behind finality (see queuePrune), so the finalised header's state_root stays
 * provable.
 */
import type { BlockRef } from '../../api/execution.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import { type RecordReader, ancestorAt, parentOf } from './ancestry.js';
import type { BlockRecord } from './blocks.js';
import type { StateDb } from './state/db.js';
import { Keys } from './store.js';

/**
 * Queues the pruning that moving finality from `from` to `to` allows: the nodes each newly
 * finalised block replaced, and every node of the blocks at those heights off the finalised
 * chain (their descendants above are found when finality passes their heights). Costs the
 * blocks finalised and the nodes pruned, never the size of the state.
 */
export async function queuePrune(store: ChainStore, blocks: RecordReader, state: StateDb, batch: WriteBatch, from: BlockRef, to: BlockRef): Promise<string[]> {
  const canonical: BlockRecord[] = [];
  let r = await blocks.record(to.hash);
  while (r && r.index > from.index) {
    canonical.push(r);
    r = await parentOf(blocks, r);
  }
  const keep = new Set(canonical.map((c) => c.hash));
  // Pruning runs one block behind finality: the stale nodes of block B are nodes B's parent
  // state used, so deleting those of `to` itself would lose the state `to`'s header names.
  // Those of `from` (held back last time) go now; those of `to` wait for the next move.
  const previous = from.index > 0 ? await blocks.record(from.hash) : undefined;
  canonical.shift();
  const orphans: number[] = [];
  for (let h = from.index + 1; h <= to.index; h++) {
    const prefix = Keys.blockAtHeightPrefix(h);
    for await (const key of store.db.keys({ gte: prefix, lt: prefix + '\xff' })) {
      batch.del(key);
      const hash = key.slice(prefix.length);
      if (keep.has(hash)) continue;
      const o = await blocks.record(hash);
      if (o) orphans.push(o.state_version);
    }
  }
  const versions = [...(previous ? [previous] : []), ...canonical.reverse()].map((c) => c.state_version);
  // Written before the chain batch moves finality: a crash between the two leaves the finalised
  // pointer behind states already pruned, which only a reorg below finality (refused by the
  // beacon's rules) would read; the next move prunes again, and deleting twice deletes nothing.
  const stateBatch = new WriteBatch();
  const pruned = await state.pruneTo(stateBatch, versions, orphans);
  await state.write(stateBatch);
  return pruned;
}

// States are kept for the finalised block and its descendants; pruning removed the rest (and
// the finalised block's parent's, see stateReadable, which imports never build on).
/** Whether `r`'s state is kept for building on: the finalised block's or a descendant's (the head's always is). */
export async function descendsFromFinalized(blocks: RecordReader, r: BlockRecord, head: BlockRef, finalized: BlockRef): Promise<boolean> {
  if (r.hash === head.hash || r.hash === finalized.hash) return true;
  if (r.index <= finalized.index) return false;
  return (await ancestorAt(blocks, r, finalized.index)).hash === finalized.hash;
}

/** Whether `r`'s state is readable (reads at a block, proofs): one kept for building on, or the finalised block's parent's. */
export async function stateReadable(blocks: RecordReader, r: BlockRecord, head: BlockRef, finalized: BlockRef): Promise<boolean> {
  // The finalised block's parent's state stays readable (pruning runs one block behind): the
  // finalised header's state_root names it, and light clients prove accounts against that header.
  const finalizedParent = r.index === finalized.index - 1 && (await blocks.record(finalized.hash))?.parent === r.hash;
  return finalizedParent || (await descendsFromFinalized(blocks, r, head, finalized));
}
