/**
 * A data directory's first moments: the storage layout and genesis it holds (refused when they are
 * not this node's), and the genesis state and records a fresh one starts from.
 */
import { BRIDGE_ADDRESS, HASH_BYTES } from '../../core/constants.js';
import { genesisBridgeStorage } from '../../core/bridge/genesis.js';
import { ExecutionError } from './errors.js';
import { toHex } from '../../core/codec/bytes.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import type { BlockRef } from '../../api/execution.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import type { BlockRecord, BlockStore } from './blocks.js';
import { REGISTRY_ADDRESS, genesisRegistry, registryEntryWord, registryStorage } from '../../core/consensus/registry.js';
import type { StateDb } from './state/db.js';
import { EMPTY_REF } from './state/trie.js';
import { Keys, SCHEMA_VERSION } from './store.js';

const ZERO_HASH = '0x' + '00'.repeat(HASH_BYTES);
const ZERO_ADDRESS = '0x' + '00'.repeat(20);

/**
 * Refuses a data directory of another storage layout or genesis (an older layout stores blocks
 * under the same keys in another shape, and its chain's state roots are not this node's).
 */
export async function checkLayout(store: ChainStore, genesisHashHex: string): Promise<void> {
  const stored = await store.get<string>(Keys.meta('genesis'));
  if (stored === undefined) return;
  const schema = (await store.get<number>(Keys.meta('schema'))) ?? 1;
  if (schema !== SCHEMA_VERSION) {
    throw new ExecutionError(
      'DB_SCHEMA_MISMATCH',
      `data directory uses storage layout ${schema}, this node reads layout ${SCHEMA_VERSION}: start with a fresh data directory (svc devnet up --fresh, or another --data-dir)`,
    );
  }
  if (stored !== genesisHashHex) throw new ExecutionError('GENESIS_MISMATCH', `data directory belongs to genesis ${stored}, not ${genesisHashHex}`);
}

/** Writes genesis into a fresh directory: its state (balances, the registry's words, genesis bridge counterparts), then its record, validators and chain pointers. */
export async function initGenesis(genesis: Genesis, genesisHashHex: string, state: StateDb, blocks: BlockStore, store: ChainStore): Promise<void> {
  const g = genesis;
  const view = state.view(EMPTY_REF);
  for (const a of g.alloc) view.addBalance(a.address, BigInt(a.balance));
  // The genesis counterparts' registration words; their documents are the genesis's own (BridgeExecution).
  for (const [slot, word] of genesisBridgeStorage(g)) view.setStorage(BRIDGE_ADDRESS, slot, word);
  const validators = genesisRegistry(g);
  for (const [slot, word] of registryStorage(validators)) view.setStorage(REGISTRY_ADDRESS, slot, word);
  const committed = state.commit(view, 0);
  const record: BlockRecord = {
    hash: genesisHashHex,
    index: 0,
    parent: ZERO_HASH,
    timestamp: g.genesis_time * 1000,
    proposer: ZERO_ADDRESS,
    state_root: toHex(committed.root.hash),
    gas_used: 0,
    fees: '0',
    tx_count: 0,
    size: 0,
    state_version: 0,
    root_version: committed.root.version,
    accounts: committed.accountsDelta,
  };
  const ref: BlockRef = { hash: record.hash, index: 0 };
  const stateBatch = new WriteBatch();
  state.queue(stateBatch, committed);
  await state.write(stateBatch);
  const batch = new WriteBatch();
  for (const v of validators) batch.put(Keys.validator(v.index), v).put(Keys.registryEntry(toHex(registryEntryWord(v))), v);
  // Genesis has no body: only its record and state changes are stored.
  blocks.put(batch, { record, changes: { senders: [], registry: { added: validators, exited: [] }, authorizations: [], votes: [] }, shell: new Uint8Array(0), envelopes: [], txHashes: [], receipts: [] });
  batch.put(Keys.canonical(0), record.hash);
  batch.put(Keys.meta('head'), ref).put(Keys.meta('finalized'), ref).put(Keys.meta('genesis'), genesisHashHex).put(Keys.meta('schema'), SCHEMA_VERSION).put(Keys.meta('state_version'), 0);
  await store.write(batch);
  state.committed(committed);
}
