/**
 * Wire layouts and limits of the transaction-pool exchange (eth/68's `NewPooledTransactionHashes`
 * and `GetPooledTransactions`, as request/response on execution's libp2p host; docs/protocol.md,
 * "Pool exchange"). Every decoder checks the exact length before reading, and throws a
 * `PoolExchangeError` (400) on anything else: served requests then reset the stream and penalise
 * the requester, decoded responses penalise the responder.
 */
import { toHex } from '../../core/codec/bytes.js';
import { MAX_TX_BYTES } from '../../core/constants.js';
import { SvcError } from '../../core/errors.js';
import type { ProtocolLimits } from '../p2p/types.js';

/** Protocol ids of the pool exchange. */
export const PoolProtocols = {
  /** Ask for the hashes (and sizes) of a peer's pooled transactions admitted after a cursor. */
  hashes: '/service/pool/hashes/1',
  /** Get pooled transactions by hash (streamed envelopes). */
  txs: '/service/pool/txs/1',
} as const;

/** Most hashes in one page (eth/68's soft limit on one announcement). */
export const MAX_ANNOUNCE_HASHES = 4096;
/** Most hashes one fetch asks for (geth asks for at most 256 per `GetPooledTransactions`). */
export const MAX_FETCH_HASHES = 256;
/**
 * Soft limit on the bytes of one fetch's answer (geth's 2 MiB): the responder stops before a
 * transaction that would cross it (always serving at least one), the requester asks for no more.
 */
export const MAX_FETCH_BYTES = 2 * 1024 * 1024;

const HASH_BYTES = 32;
/** A hashes request: cursor (uint64) then limit (uint16), little-endian. */
export const HASHES_REQUEST_BYTES = 10;
/** Page header: next cursor (uint64), more (uint8: 1 if the responder holds entries past this page). */
const PAGE_HEADER_BYTES = 9;
/** Page entry: transaction hash (32 bytes), envelope size (uint32). */
const PAGE_ENTRY_BYTES = HASH_BYTES + 4;

/** A bad pool-exchange message (request or response); the machine code names the field. */
export class PoolExchangeError extends SvcError {
  constructor(message: string) {
    super('POOL_EXCHANGE_MALFORMED', message);
  }
}

/** A hashes request: entries admitted after `cursor` (the responder's own, opaque to the requester), at most `limit`. */
export interface HashesRequest {
  cursor: bigint;
  limit: number;
}

/** One announced transaction: its hash and envelope size. */
export interface Announced {
  hash: string;
  size: number;
}

/** A page of announced hashes and the cursor of the next page. */
export interface HashesPage {
  next: bigint;
  /** The responder holds entries past this page: ask again at once. */
  more: boolean;
  entries: Announced[];
}

/** The request/response limits each side enforces (the deadline is per call: see PoolExchange). */
export function poolLimits(timeoutMs: number): { hashes: ProtocolLimits; txs: ProtocolLimits } {
  return {
    hashes: { maxRequestBytes: HASHES_REQUEST_BYTES, maxResponseChunks: 1, maxChunkBytes: PAGE_HEADER_BYTES + MAX_ANNOUNCE_HASHES * PAGE_ENTRY_BYTES, timeoutMs },
    txs: { maxRequestBytes: MAX_FETCH_HASHES * HASH_BYTES, maxResponseChunks: MAX_FETCH_HASHES, maxChunkBytes: MAX_TX_BYTES, timeoutMs },
  };
}

/** Encodes a hashes request. */
export function encodeHashesRequest(r: HashesRequest): Uint8Array {
  const out = new Uint8Array(HASHES_REQUEST_BYTES);
  const v = new DataView(out.buffer);
  v.setBigUint64(0, r.cursor, true);
  v.setUint16(8, r.limit, true);
  return out;
}

/** Decodes a hashes request; the limit must be 1..MAX_ANNOUNCE_HASHES. */
export function decodeHashesRequest(b: Uint8Array): HashesRequest {
  if (b.length !== HASHES_REQUEST_BYTES) throw new PoolExchangeError(`hashes request must be ${HASHES_REQUEST_BYTES} bytes, got ${b.length}`);
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const limit = v.getUint16(8, true);
  if (limit < 1 || limit > MAX_ANNOUNCE_HASHES) throw new PoolExchangeError(`hashes request limit must be 1..${MAX_ANNOUNCE_HASHES}, got ${limit}`);
  return { cursor: v.getBigUint64(0, true), limit };
}

/** Encodes a page of hashes. */
export function encodeHashesPage(p: HashesPage): Uint8Array {
  const out = new Uint8Array(PAGE_HEADER_BYTES + p.entries.length * PAGE_ENTRY_BYTES);
  const v = new DataView(out.buffer);
  v.setBigUint64(0, p.next, true);
  out[8] = p.more ? 1 : 0;
  let o = PAGE_HEADER_BYTES;
  for (const e of p.entries) {
    out.set(Buffer.from(e.hash.slice(2), 'hex'), o);
    v.setUint32(o + HASH_BYTES, e.size, true);
    o += PAGE_ENTRY_BYTES;
  }
  return out;
}

/**
 * Decodes a page answering a request for at most `limit` hashes: more entries than asked, a size
 * no transaction can have, a repeated hash or a stray byte make the whole page malformed.
 */
export function decodeHashesPage(b: Uint8Array, limit: number): HashesPage {
  if (b.length < PAGE_HEADER_BYTES || (b.length - PAGE_HEADER_BYTES) % PAGE_ENTRY_BYTES !== 0) throw new PoolExchangeError(`hashes page of ${b.length} bytes is not a header plus whole entries`);
  const count = (b.length - PAGE_HEADER_BYTES) / PAGE_ENTRY_BYTES;
  if (count > limit) throw new PoolExchangeError(`hashes page holds ${count} entries, more than the ${limit} asked for`);
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const more = b[8]!;
  if (more > 1) throw new PoolExchangeError(`hashes page "more" flag must be 0 or 1, got ${more}`);
  const entries: Announced[] = [];
  const seen = new Set<string>();
  for (let o = PAGE_HEADER_BYTES; o < b.length; o += PAGE_ENTRY_BYTES) {
    const hash = toHex(b.subarray(o, o + HASH_BYTES));
    const size = v.getUint32(o + HASH_BYTES, true);
    if (size === 0 || size > MAX_TX_BYTES) throw new PoolExchangeError(`announced transaction ${hash} has size ${size}, outside 1..${MAX_TX_BYTES}`);
    if (seen.has(hash)) throw new PoolExchangeError(`hashes page repeats ${hash}`);
    seen.add(hash);
    entries.push({ hash, size });
  }
  return { next: v.getBigUint64(0, true), more: more === 1, entries };
}

/** Encodes a fetch: the hashes, concatenated. */
export function encodeTxsRequest(hashes: readonly string[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_BYTES);
  hashes.forEach((h, i) => out.set(Buffer.from(h.slice(2), 'hex'), i * HASH_BYTES));
  return out;
}

/** Decodes a fetch: 1..MAX_FETCH_HASHES distinct 32-byte hashes. */
export function decodeTxsRequest(b: Uint8Array): string[] {
  if (b.length === 0 || b.length % HASH_BYTES !== 0) throw new PoolExchangeError(`transactions request must be whole 32-byte hashes, got ${b.length} bytes`);
  const count = b.length / HASH_BYTES;
  if (count > MAX_FETCH_HASHES) throw new PoolExchangeError(`transactions request asks for ${count} hashes, more than ${MAX_FETCH_HASHES}`);
  const hashes: string[] = [];
  const seen = new Set<string>();
  for (let o = 0; o < b.length; o += HASH_BYTES) {
    const h = toHex(b.subarray(o, o + HASH_BYTES));
    if (seen.has(h)) throw new PoolExchangeError(`transactions request repeats ${h}`);
    seen.add(h);
    hashes.push(h);
  }
  return hashes;
}
