/**
 * The shipped state trie (src/node/execution/state/) over an in-memory LevelDB, driven one block
 * at a time as chain.ts drives it (not a test file itself): a fresh View of the head state per
 * block, committed as the next version into a write batch, written, then cached.
 */
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { toHex } from '../../src/core/codec/bytes.js';
import { StateDb } from '../../src/node/execution/state/db.js';
import { EMPTY_REF, type NodeRef } from '../../src/node/execution/state/trie.js';
import type { View } from '../../src/node/execution/state/view.js';
import { ChainStore, type Db, WriteBatch } from '../../src/node/shared/store.js';
import { EXECUTION_DB_OPTIONS, STATE_DB_DIR } from '../../src/node/execution/store.js';

/** An empty in-memory LevelDB behind a ChainStore, opened. */
export async function memoryChainStore(): Promise<ChainStore> {
  const level = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
  await level.open();
  return new ChainStore(level);
}

/** The state's LevelDB in `dir`, opened as the execution node opens it (close `state`, then `db`). */
export async function openStateDir(dir: string): Promise<{ db: Db; chain: ChainStore; state: StateDb }> {
  const db = new ClassicLevel<string, string>(join(dir, STATE_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
  await db.open();
  const chain = new ChainStore(db);
  return { db, chain, state: await StateDb.open(chain) };
}

/** Commits a view as `version` (stale nodes listed under it) into `store` (the state's database), writes it, and returns the new root. */
export async function commitView(state: StateDb, store: ChainStore, view: View, version: number): Promise<NodeRef> {
  const c = state.commit(view, version);
  const batch = new WriteBatch();
  state.queue(batch, c);
  await store.write(batch);
  state.committed(c);
  return c.root;
}

/** A state that moves forward block by block. */
export class TrieState {
  /** Last committed version; the genesis commit is version 0. */
  private version = -1;
  private head: NodeRef = EMPTY_REF;
  /** The current block's view of the head state. */
  view: View;

  private constructor(
    readonly db: StateDb,
    private readonly store: ChainStore,
  ) {
    this.view = db.view(EMPTY_REF);
  }

  /** Opens an empty state whose genesis (version 0) holds `balances`. */
  static async open(balances: Record<string, bigint> = {}): Promise<TrieState> {
    const store = await memoryChainStore();
    const state = new TrieState(await StateDb.open(store), store);
    for (const [address, balance] of Object.entries(balances)) state.view.addBalance(address, balance);
    await state.commitBlock();
    return state;
  }

  /** Commits the current view as the next version (a block) and starts a fresh view of the result. */
  async commitBlock(): Promise<NodeRef> {
    const version = this.version + 1;
    const root = await commitView(this.db, this.store, this.view, version);
    this.version = version;
    this.head = root;
    this.view = this.db.view(root);
    return root;
  }

  /** The state root the current view would commit (computed, nothing written): for comparing states. */
  digest(): string {
    return toHex(this.db.commit(this.view, this.version + 1).root.hash);
  }

  /** The committed head state root, 0x hex. */
  root(): string {
    return toHex(this.head.hash);
  }

  /** Stops the state's reader. */
  close(): Promise<void> {
    return this.db.close();
  }
}
