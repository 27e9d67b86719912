/**
 * Pruning at finality: which states a move of the finalised pointer leaves unreadable, and the
 * deletion of their trie nodes. Runs one block behind finality (see queuePrune), so the
 * finalised header's state_root stays provable.
 */
import type { BlockRef } from '../../api/execution.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import { parentOf } from './ancestry.js';
import type { BlockRecord, BlockStore } from './blocks.js';
import type { StateDb } from './state/db.js';
import { Keys } from './store.js';

/**
 * Queues the pruning that moving finality from `from` to `to` allows: the nodes each newly
 * finalised block replaced, and every node of the blocks at those heights off the finalised
 * chain (their descendants above are found when finality passes their heights). Costs the
 * blocks finalised and the nodes pruned, never the size of the state.
 */
export async function queuePrune(store: ChainStore, blocks: Pick<BlockStore, 'record'>, state: StateDb, batch: WriteBatch, from: BlockRef, to: BlockRef): Promise<string[]> {
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
