/**
 * Moves the state of a layout-5 or layout-6 data directory, which kept it in the chain's database,
 * into the state's own (layout 7, ../store.ts): nodes and code as they are, each block's stale-node
 * list from `z:<block hash>` to its version's `staleKey`. Copies first (synced), then deletes from
 * the chain's database: a crash at any point leaves the old layout readable, and running it again
 * copies the same keys again.
 */
import type { BlockRecord } from '../blocks.js';
import { Keys } from '../store.js';
import { type ChainStore, WriteBatch } from '../../shared/store.js';
import { STATE_PREFIXES, staleKey } from './trie.js';

/** Where layouts 5 and 6 kept each block's stale-node list. */
const OLD_STALE_PREFIX = 'z:';
/** Keys per batch: bounds the memory of moving a large state. */
const MOVE_BATCH = 10_000;
const UTF8 = new TextEncoder();

/** Moves the state keys of `chain` (an older layout's database) into `state`; returns how many moved. */
export async function moveStateKeys(chain: ChainStore, state: ChainStore): Promise<number> {
  let moved = 0;
  let batch = new WriteBatch();
  const flush = async (force: boolean): Promise<void> => {
    if (batch.ops.length === 0 || (!force && batch.ops.length < MOVE_BATCH)) return;
    await state.write(batch);
    batch = new WriteBatch();
  };
  for (const prefix of STATE_PREFIXES) {
    for await (const [key, value] of chain.db.iterator<string, Uint8Array>({ gte: prefix, lt: prefix + '\xff', valueEncoding: 'view' })) {
      batch.putBytes(key, value as Uint8Array);
      moved++;
      await flush(false);
    }
  }
  for await (const [key, value] of chain.db.iterator<string, string>({ gte: OLD_STALE_PREFIX, lt: OLD_STALE_PREFIX + '\xff' })) {
    moved++;
    // A list whose block has no record (none is written without one) names nothing a state uses.
    const record = await chain.get<BlockRecord>(Keys.block(key.slice(OLD_STALE_PREFIX.length)));
    if (record === undefined) continue;
    batch.putBytes(staleKey(record.state_version), UTF8.encode(value as string));
    await flush(false);
  }
  await flush(true);
  for (const prefix of [...STATE_PREFIXES, OLD_STALE_PREFIX]) {
    let del = new WriteBatch();
    for await (const key of chain.db.keys({ gte: prefix, lt: prefix + '\xff' })) {
      del.del(key);
      if (del.ops.length >= MOVE_BATCH) {
        await chain.write(del);
        del = new WriteBatch();
      }
    }
    if (del.ops.length > 0) await chain.write(del);
  }
  return moved;
}
