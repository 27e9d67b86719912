/**
 * Child process of hashless.test.ts (not a test file itself): commits blocks to a classic-level
 * state as the node does (one synced batch per block) on a main chain with a side branch every
 * third block, finalises the main chain six blocks behind (pruning the finalised blocks'
 * replaced nodes and the orphaned side branches), and after each durable write reports the root
 * and the proofs of a few accounts to its parent, which SIGKILLs it at an arbitrary point.
 */
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { StateDb } from '../../../../src/node/execution/state/db.js';
import { EMPTY_REF, type NodeRef } from '../../../../src/node/execution/state/trie.js';
import type { AccountProofJson } from '../../../../src/node/execution/state/types.js';
import { EXECUTION_DB_OPTIONS, STATE_DB_DIR } from '../../../../src/node/execution/store.js';
import { ChainStore, type Db, WriteBatch } from '../../../../src/node/shared/store.js';

/** What the writer reports after each durable write. */
export type WriterMessage =
  | { kind: 'block'; owner: string; version: number; root: { version: number; hash: string }; proofs: AccountProofJson[] }
  | { kind: 'final'; owner: string };

/** Accounts at genesis (levels 0 to 3 full enough to hold internal and leaf children). */
export const WRITER_ACCOUNTS = 6000;
const TOUCHED = 300;

const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');

async function main(dir: string): Promise<void> {
  const db = new ClassicLevel<string, string>(join(dir, STATE_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
  await db.open();
  const store = new ChainStore(db);
  const state = await StateDb.open(store);
  let version = 0;
  let seed = 1;
  const send = (m: WriterMessage): Promise<void> => new Promise((resolve) => process.send!(m, () => resolve()));
  const block = async (parent: NodeRef, owner: string, count: number): Promise<NodeRef> => {
    const view = state.view(parent);
    const touched: string[] = [];
    for (let k = 0; k < count; k++) {
      // 32-bit arithmetic: a product past 2^53 would lose bits and shorten the cycle.
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      // A few past the genesis accounts: new leaves, moving others down a level.
      const a = addr((seed >>> 8) % (WRITER_ACCOUNTS + 400));
      view.addBalance(a, BigInt(k + 1));
      touched.push(a);
    }
    const c = state.commit(view, ++version);
    const batch = new WriteBatch();
    state.queue(batch, c);
    await store.write(batch);
    state.committed(c);
    const sample = [touched[0]!, touched[1]!, addr(7), addr(WRITER_ACCOUNTS + 5000)];
    const proofs = await Promise.all(sample.map((a) => state.proof(c.root, a, [])));
    await send({ kind: 'block', owner, version, root: { version: c.root.version, hash: toHex(c.root.hash) }, proofs });
    return c.root;
  };
  let head = await block(EMPTY_REF, 'b0', WRITER_ACCOUNTS);
  // Each block's version, and those of the side branches beside it.
  const main: Array<{ owner: string; version: number; sides: number[] }> = [{ owner: 'b0', version, sides: [] }];
  for (let h = 1; ; h++) {
    const parent = head;
    head = await block(parent, `b${h}`, TOUCHED);
    const own = version;
    const sides: number[] = [];
    if (h % 3 === 0) {
      await block(parent, `s${h}`, TOUCHED);
      sides.push(version);
    }
    main.push({ owner: `b${h}`, version: own, sides });
    if (h >= 6) {
      const f = main[h - 6]!;
      const batch = new WriteBatch();
      const deleted = await state.pruneTo(batch, [f.version], f.sides);
      await store.write(batch);
      state.pruned(deleted);
      await send({ kind: 'final', owner: f.owner });
    }
  }
}

if (process.argv[2]) await main(process.argv[2]);
