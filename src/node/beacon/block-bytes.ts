/**
 * Reads of a stored block's SSZ (`encodeBlock`) that need only its fixed-size head: the header
 * and the proposer signature. BlockSsz starts with the fixed-size header, then the 4-byte offset
 * of the transaction list, then the fixed-size signature, so both are slices at known offsets.
 * Light-client routes, finality updates and the head's metric read headers of full blocks; decoding
 * every transaction envelope for that would cost the block's size, not the header's.
 */
import { MalformedError } from '../../core/errors.js';
import type { BlockHeader } from '../../core/types/block.js';
import { BlockHeaderSsz, BlockSsz } from '../../core/types/ssz.js';
import { SIGNATURE_BYTES } from '../../core/constants.js';

const HEADER_BYTES = BlockHeaderSsz.fixedSize!;
/** The header, the transactions' offset, then the signature. */
const SIGNATURE_OFFSET = HEADER_BYTES + 4;
/** Every other field is variable-size: one 4-byte offset each after the signature. */
const MIN_BLOCK_BYTES = BlockSsz.minSize;

function checkLength(bytes: Uint8Array): void {
  if (bytes.length < MIN_BLOCK_BYTES) throw new MalformedError('block', `${bytes.length} bytes is shorter than the smallest block (${MIN_BLOCK_BYTES})`);
}

/** The header of an SSZ block, without decoding its body; a short or out-of-range one is `malformed block`. */
export function headerOfBlockBytes(bytes: Uint8Array): BlockHeader {
  checkLength(bytes);
  const h = BlockHeaderSsz.deserialize(bytes.subarray(0, HEADER_BYTES));
  // As decodeBlock: heights and timestamps are JS numbers.
  if (!Number.isSafeInteger(h.index) || !Number.isSafeInteger(h.timestampMs)) throw new MalformedError('block.header', 'index and timestamp must be below 2^53');
  return h;
}

/** The proposer signature of an SSZ block (a view into `bytes`). */
export function signatureOfBlockBytes(bytes: Uint8Array): Uint8Array {
  checkLength(bytes);
  return bytes.subarray(SIGNATURE_OFFSET, SIGNATURE_OFFSET + SIGNATURE_BYTES);
}

/**
 * The transaction envelopes of an SSZ block, as views into `bytes` (nothing is copied or decoded):
 * the list runs from its offset (after the header) to the attestations' offset (after the
 * signature); inside it, the first 4-byte offset gives the count. Offsets that do not fit are
 * `malformed block`. A transaction's hash is SHA3-256 of its envelope, so a received block's
 * Merkle root is checked from these without encoding a transaction again.
 */
export function envelopesOfBlockBytes(bytes: Uint8Array): Uint8Array[] {
  checkLength(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = view.getUint32(HEADER_BYTES, true);
  const end = view.getUint32(SIGNATURE_OFFSET + SIGNATURE_BYTES, true);
  if (start > end || end > bytes.length) throw new MalformedError('block', 'transaction list offsets out of range');
  if (start === end) return [];
  const list = bytes.subarray(start, end);
  const lv = new DataView(list.buffer, list.byteOffset, list.byteLength);
  if (list.length < 4) throw new MalformedError('block', 'transaction list shorter than its first offset');
  const first = lv.getUint32(0, true);
  if (first % 4 !== 0 || first === 0 || first > list.length) throw new MalformedError('block', 'bad first transaction offset');
  const count = first / 4;
  const out: Uint8Array[] = new Array<Uint8Array>(count);
  for (let i = 0; i < count; i++) {
    const from = lv.getUint32(i * 4, true);
    const to = i + 1 < count ? lv.getUint32((i + 1) * 4, true) : list.length;
    if (from > to || to > list.length) throw new MalformedError('block', `transaction ${i}'s offsets out of range`);
    out[i] = list.subarray(from, to);
  }
  return out;
}

/** Whether two byte strings are equal. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
