/**
 * The `blocks_by_range` request/response (`SyncProtocols.blocksByRange`): `{start_slot u64,
 * count u64}` asks for the canonical blocks of slots [start_slot, start_slot + count), answered
 * as one SSZ block (`encodeBlock`) per chunk in ascending slot order. Empty slots have no chunk.
 */
import { SvcError } from '../../../core/errors.js';
import type { Genesis } from '../../../core/genesis/genesis.js';
import type { Block } from '../../../core/types/block.js';
import type { BeaconBlockRecord } from '../chain.js';

/** Most blocks one request may ask for (DECISIONS.md, P2P); larger counts are served capped. */
export const MAX_BLOCKS_PER_REQUEST = 64;
/** start_slot(u64 LE) ‖ count(u64 LE). */
export const RANGE_REQUEST_BYTES = 16;

/** One blocks_by_range request. */
export interface RangeRequest {
  startSlot: number;
  count: number;
}

/** Which part of the sync protocol a frame breaks. */
export type SyncProtocolErrorCode = 'BAD_RANGE_REQUEST' | 'BAD_STATUS' | 'BAD_RANGE_RESPONSE';

/** A request or response frame that breaks the protocol: the peer is penalised. */
export class SyncProtocolError extends SvcError<SyncProtocolErrorCode> {
  constructor(code: SyncProtocolErrorCode, message: string) {
    super(code, message);
  }
}

/** Encodes a range request. */
export function encodeRangeRequest(r: RangeRequest): Uint8Array {
  const out = new Uint8Array(RANGE_REQUEST_BYTES);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(r.startSlot), true);
  view.setBigUint64(8, BigInt(r.count), true);
  return out;
}

/** Decodes a range request; a wrong length or an out-of-range integer is BAD_RANGE_REQUEST. */
export function decodeRangeRequest(bytes: Uint8Array): RangeRequest {
  if (bytes.length !== RANGE_REQUEST_BYTES) throw new SyncProtocolError('BAD_RANGE_REQUEST', `expected ${RANGE_REQUEST_BYTES} bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = view.getBigUint64(0, true);
  const count = view.getBigUint64(8, true);
  if (start > BigInt(Number.MAX_SAFE_INTEGER)) throw new SyncProtocolError('BAD_RANGE_REQUEST', 'start_slot must be below 2^53');
  return { startSlot: Number(start), count: Number(count > BigInt(MAX_BLOCKS_PER_REQUEST) ? BigInt(MAX_BLOCKS_PER_REQUEST) : count) };
}

/** The slot a block's timestamp names (its header carries the slot start in ms). */
export function slotOfBlock(genesis: Genesis, block: Block): number {
  return Math.floor((block.header.timestampMs - genesis.genesis_time * 1000) / (genesis.config.slot_seconds * 1000));
}

/** What serving a range needs from the chain. */
export interface RangeSource {
  head(): BeaconBlockRecord;
  record(root: string): BeaconBlockRecord | undefined;
  /** A block's stored SSZ bytes. */
  body(root: string): Promise<Uint8Array | undefined>;
}

/**
 * The canonical (head's branch) records with slots in [start, start + count), ascending. Walks
 * parent links back from the head over the in-memory records: the cost is the distance from the
 * head to the range, not a scan of storage.
 */
export function canonicalRange(source: RangeSource, r: RangeRequest): BeaconBlockRecord[] {
  const end = r.startSlot + r.count;
  const out: BeaconBlockRecord[] = [];
  let rec: BeaconBlockRecord | undefined = source.head();
  while (rec && rec.index > 0 && rec.slot >= r.startSlot) {
    if (rec.slot < end) out.push(rec);
    rec = source.record(rec.parent);
  }
  return out.reverse();
}

/** Serves one request: the stored SSZ of each canonical block in the range, ascending, as stored (never decoded and encoded again). */
export async function* serveBlocksByRange(source: RangeSource, request: Uint8Array): AsyncIterable<Uint8Array> {
  const r = decodeRangeRequest(request);
  if (r.count === 0) return;
  for (const rec of canonicalRange(source, r)) {
    const ssz = await source.body(rec.root);
    // A body missing from our own store is our fault, not the peer's: stop the answer there.
    if (ssz === undefined) return;
    yield ssz;
  }
}
