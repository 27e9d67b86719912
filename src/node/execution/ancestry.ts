/**
 * Walks between stored blocks by their parent links: ancestors, the branch path between two
 * blocks (what a reorg reverts and applies), and the votes a side branch's validation replays.
 * A walk reads the records it passes through the block store, nothing else.
 */
import { ExecutionError } from './errors.js';
import type { BlockRecord, BlockStore } from './blocks.js';
import type { BranchPath } from './consensus-fields.js';
import type { IncludedVote, VotePath } from './rewards.js';

/** The block store's reads a walk needs. */
export type RecordReader = Pick<BlockStore, 'record'>;

/** The blocks to revert (newest first) and apply (oldest first) between two blocks, and their common ancestor. */
export interface Branch {
  reverted: BlockRecord[];
  applied: BlockRecord[];
  ancestor: BlockRecord;
}

// Every stored block's parent is stored (import requires it), so a missing one is a damaged
// database: a typed error naming it rather than a TypeError on undefined.
/** The stored parent of `r`. */
export async function parentOf(blocks: RecordReader, r: BlockRecord): Promise<BlockRecord> {
  const p = await blocks.record(r.parent);
  if (!p) throw new ExecutionError('CORRUPT_DB', `block ${r.hash} (${r.index}) has no stored parent ${r.parent}`);
  return p;
}

/** The ancestor of `from` at height `index`. */
export async function ancestorAt(blocks: RecordReader, from: BlockRecord, index: number): Promise<BlockRecord> {
  let r = from;
  while (r.index > index) r = await parentOf(blocks, r);
  return r;
}

/** Blocks to revert (newest first) and apply (oldest first) to move from `from` to `to`. */
export async function branchPath(blocks: RecordReader, from: string, to: string): Promise<Branch> {
  const load = async (hash: string): Promise<BlockRecord> => {
    const r = await blocks.record(hash);
    if (!r) throw new ExecutionError('CORRUPT_DB', `block ${hash} is not stored`);
    return r;
  };
  let a = await load(from);
  let b = await load(to);
  const reverted: BlockRecord[] = [];
  const applied: BlockRecord[] = [];
  while (a.index > b.index) {
    reverted.push(a);
    a = await parentOf(blocks, a);
  }
  while (b.index > a.index) {
    applied.push(b);
    b = await parentOf(blocks, b);
  }
  while (a.hash !== b.hash) {
    reverted.push(a);
    applied.push(b);
    a = await parentOf(blocks, a);
    b = await parentOf(blocks, b);
  }
  return { reverted, applied: applied.reverse(), ancestor: a };
}

/** The blocks (and their included votes) between the head and `block`: what consensus fields and vote checks replay. */
export async function replayPath(blocks: Pick<BlockStore, 'record' | 'changes'>, headHash: string, block: BlockRecord): Promise<{ path: BranchPath; votes: VotePath }> {
  let path: BranchPath = { reverted: [], applied: [] };
  const votes: { reverted: IncludedVote[][]; applied: IncludedVote[][] } = { reverted: [], applied: [] };
  if (block.hash !== headHash) {
    const { reverted, applied } = await branchPath(blocks, headHash, block.hash);
    for (const r of reverted) {
      votes.reverted.push((await blocks.changes(r.hash)).votes);
    }
    for (const a of applied) {
      votes.applied.push((await blocks.changes(a.hash)).votes);
    }
    path = { reverted, applied };
  }
  return { path, votes };
}
