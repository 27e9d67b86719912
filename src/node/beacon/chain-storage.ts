/**
 * The beacon database: what is kept per block, the keys it is kept under, and the storage layout
 * stamp a data directory is checked against at start.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { BeaconError } from './errors.js';
import { genesisRandao, type RandaoJson, randaoToJson } from '../../core/consensus/randao.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { genesisStateRoot } from '../../core/state/genesis-root.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';

/** What the beacon keeps per block. */
export interface BeaconBlockRecord {
  root: string;
  parent: string;
  slot: number;
  index: number;
  proposer: string;
  proposer_index: number;
  state_root: string;
  transactions: number;
  /** RANDAO state after this block. */
  randao: RandaoJson;
  /** [validator index, target epoch] of each attestation the block includes (absent: none). */
  included?: Array<[number, number]>;
}

/** The record of the genesis block (root `root`), which is never stored: every start makes it again. */
export function genesisRecord(g: Genesis, root: string): BeaconBlockRecord {
  return {
    root,
    parent: '0x' + '00'.repeat(32),
    slot: 0,
    index: 0,
    proposer: '0x' + '00'.repeat(20),
    proposer_index: -1,
    // Block 1's header names it; execution computes the same root from the same alloc.
    state_root: toHex(genesisStateRoot(g)),
    transactions: 0,
    randao: randaoToJson(genesisRandao(parseHex(root, 'genesis', 32), g.validators)),
  };
}

/** Keys of the beacon database. */
export const BEACON_KEYS = {
  record: (root: string) => `b:${root}`,
  /** The block's SSZ bytes (layout 2; layout 1 held its wire JSON with base64 fields). */
  body: (root: string) => `B:${root}`,
  bySlot: (slot: number) => `s:${String(slot).padStart(16, '0')}`,
  forkChoice: 'm:forkchoice',
  schema: 'm:schema',
} as const;

/**
 * The beacon database's storage layout. 1 (no `m:schema` key): blocks as wire JSON; 2: blocks as
 * SSZ bytes. A data directory of another layout is refused at start (DB_SCHEMA_MISMATCH), as
 * execution refuses one: reading it would misparse every stored block.
 */
export const BEACON_SCHEMA_VERSION = 2;

/**
 * Refuses a database of another storage layout; stamps an empty one with this layout. A database
 * without the stamp but with content is layout 1 (blocks as JSON), written before the stamp existed.
 */
export async function checkSchema(store: ChainStore): Promise<void> {
  let schema = await store.get<number>(BEACON_KEYS.schema);
  if (schema === undefined) {
    if (!(await isEmpty(store))) schema = 1;
    else {
      await store.write(new WriteBatch().put(BEACON_KEYS.schema, BEACON_SCHEMA_VERSION));
      return;
    }
  }
  if (schema !== BEACON_SCHEMA_VERSION) {
    throw new BeaconError(
      'DB_SCHEMA_MISMATCH',
      `beacon data directory uses storage layout ${schema}, this beacon reads layout ${BEACON_SCHEMA_VERSION} (blocks stored as SSZ): start with a fresh data directory (svc devnet up --fresh, or another --data-dir) and let the beacon sync from its peers`,
    );
  }
}

async function isEmpty(store: ChainStore): Promise<boolean> {
  for await (const _key of store.db.keys({ limit: 1 })) return false;
  return true;
}
