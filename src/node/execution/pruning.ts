/**
 * How much state history a node keeps (DECISIONS "History": `--history full|finalized`), which
 * block states stay readable, and the deletion of the trie nodes no kept state uses.
 *
 * - `finalized`: pruning follows finality; the finalised block's state, its descendants' and its
 *   parent's stay readable. Runs one block behind finality (see queuePrune), so the finalised
 *   header's state_root stays provable.
 * - `full`: every block's state is kept, as anvil and geth's archive mode do (devnets' default).
 *
 * The chain records how far it has pruned (`pruned_to`): a full node never moves it, so switching
 * a data directory from full to finalized prunes the history it kept once, at start-up.
 */
import type { BlockRef } from '../../api/execution.js';
import type { PresetName } from '../../core/genesis/genesis.js';
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

/** What a node keeps of past states: every block's, or what building on finality needs. */
export type HistoryMode = 'full' | 'finalized';
export const HISTORY_MODES: readonly HistoryMode[] = ['full', 'finalized'];

/** Devnets keep every state (a test harness reads any past block); other chains keep what finality needs, so disk stays bounded. */
export function defaultHistory(preset: PresetName): HistoryMode {
  return preset === 'devnet' ? 'full' : 'finalized';
}

/** Heights pruned per write when a full node's kept history is pruned on switching to finalized (bounds one batch's memory). */
export const PRUNE_CATCH_UP_HEIGHTS = 256;

/** What the chain has kept: its mode and the finalised block it last pruned up to (a full node's stays where full history began). */
export interface KeptHistory {
  mode: HistoryMode;
  prunedTo: BlockRef;
}

/** Whether `r`'s state is still stored and readable under `kept` (reads at a block, proofs). */
export async function historyReadable(blocks: RecordReader, r: BlockRecord, head: BlockRef, finalized: BlockRef, kept: KeptHistory): Promise<boolean> {
  if (kept.mode === 'finalized') return stateReadable(blocks, r, head, finalized);
  // Nothing above the last prune has been deleted, on any branch; at and below it, what the last
  // prune kept: that block's state and its parent's.
  if (r.index > kept.prunedTo.index || r.hash === kept.prunedTo.hash) return true;
  return r.index === kept.prunedTo.index - 1 && (await blocks.record(kept.prunedTo.hash))?.parent === r.hash;
}

/** The refusal's text: which states this node keeps, so a caller knows what it may ask for. */
export function prunedMessage(r: BlockRecord, kept: KeptHistory): string {
  const what = `the state of block ${r.index} (${r.hash}) is pruned`;
  if (kept.mode === 'full') return `${what}: this node keeps every block's state since it began keeping full history at block ${kept.prunedTo.index} (and that block's parent's)`;
  return `${what}: this node (--history finalized) keeps only the finalized block's parent's, its own and its descendants' states; a node started with --history full keeps every block's`;
}
