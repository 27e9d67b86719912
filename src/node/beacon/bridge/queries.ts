/**
 * The bridge store's reads for the API (src/node/beacon/bridge/store.ts, routes api.ts): BID
 * listings and a BID's signatures, straight from the keys of records.ts. Each query walks
 * only the keys of its answer (the address listing also those of the address's other statuses).
 */
import { BID_STATUSES, type BidDirection, type BidSignatureJson, type BidStatus } from '../../../api/bridge.js';
import type { ChainStore } from '../../shared/store.js';
import { type BidRecord, DIRECTIONS, K } from './records.js';

/** BIDs a listing returns unless `limit` says otherwise. */
export const BRIDGE_LIST_DEFAULT = 100;
/** Most BIDs one listing returns. */
export const BRIDGE_LIST_MAX = 1_000;

/** Filters of a listing (validated by the route). */
export interface BidQuery {
  status?: BidStatus;
  direction?: BidDirection;
  /** Lowercase 0x address: sender or recipient. */
  address?: string;
  limit: number;
}

/** The records of the BIDs `q` selects, newest first; reads only the index entries of the answer. */
export async function listBids(store: ChainStore, q: BidQuery): Promise<BidRecord[]> {
  let bids: string[];
  if (q.address !== undefined) {
    bids = [];
    for await (const value of store.db.values({ gte: K.addressPrefix(q.address), lt: K.addressPrefix(q.address) + '\xff', reverse: true })) {
      const r = await store.get<BidRecord>(K.bid(JSON.parse(value) as string));
      if (!r || (q.status && r.status !== q.status) || (q.direction && r.direction !== q.direction)) continue;
      bids.push(r.bid);
      if (bids.length >= q.limit) break;
    }
  } else if (q.status === undefined && q.direction === undefined) {
    bids = await walk(store, 'Xn:', q.limit).then((xs) => xs.map((x) => x.bid));
  } else {
    const prefixes = (q.direction ? [q.direction] : DIRECTIONS).flatMap((d) => (q.status ? [q.status] : BID_STATUSES).map((s) => K.statusPrefix(d, s)));
    const all = (await Promise.all(prefixes.map((p) => walk(store, p, q.limit)))).flat();
    bids = all.sort((a, b) => b.seq - a.seq).slice(0, q.limit).map((x) => x.bid);
  }
  const out: BidRecord[] = [];
  for (const bid of bids) {
    const r = await store.get<BidRecord>(K.bid(bid));
    if (r) out.push(r);
  }
  return out;
}

// The newest `limit` entries under an index prefix whose keys end in the sequence number.
async function walk(store: ChainStore, prefix: string, limit: number): Promise<Array<{ seq: number; bid: string }>> {
  const out: Array<{ seq: number; bid: string }> = [];
  for await (const [key, value] of store.db.iterator({ gte: prefix, lt: prefix + '\xff', reverse: true, limit })) {
    out.push({ seq: Number(String(key).slice(-16)), bid: JSON.parse(value) as string });
  }
  return out;
}

/** The BID signatures collected for a BID, by validator index; undefined for an unknown BID. */
export async function readSignatures(store: ChainStore, bid: string): Promise<BidSignatureJson[] | undefined> {
  const r = await store.get<BidRecord>(K.bid(bid));
  if (!r) return undefined;
  const out: BidSignatureJson[] = [];
  for await (const [key, value] of store.db.iterator({ gte: K.sigs(bid), lt: K.sigs(bid) + '\xff' })) {
    out.push({ validator_index: Number(String(key).slice(-8)), signature: JSON.parse(value) as string });
  }
  return out;
}
