/**
 * Reads of a stored block's SSZ (`encodeBlock`) that need only its fixed-size head: the header
 * and the proposer signature. BlockSsz starts with the fixed-size header, then the 4-byte offset
 * of the transaction list, then the fixed-size signature, so both are slices at known offsets.
 * Light-client routes, finality updates and the head's metric read headers of full blocks; decoding
 * every transaction envelope for that would cost the block's size, not the header's.
 */
import { MalformedError } from '../errors.js';
import type { BlockHeader } from './block.js';
import { BlockHeaderSsz, BlockSsz } from './ssz.js';
import { SIGNATURE_BYTES } from '../constants.js';

const HEADER_BYTES = BlockHeaderSsz.fixedSize!;
/** The header, the transactions' offset, then the signature. */
const SIGNATURE_OFFSET = HEADER_BYTES + 4;
/** Header fields before the VRF proof: index, timestamp (8 bytes each), parent hash, Merkle root (32 each), proposer address (20). */
const VRF_PROOF_OFFSET = 8 + 8 + 32 + 32 + 20;
/** After the VRF proof comes the VRF seed (32 bytes), then the RANDAO reveal. */
const RANDAO_REVEAL_OFFSET = VRF_PROOF_OFFSET + SIGNATURE_BYTES + 32;
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

/** What a proposer adds to a block the beacon built (docs/validator.md "Proposing"). */
export interface ProposerFields {
  vrfProof: Uint8Array;
  randaoReveal: Uint8Array;
  signature: Uint8Array;
}

/**
 * A copy of an SSZ block with the proposer's VRF proof, RANDAO reveal and signature written in
 * place: all three are fixed-size fields at fixed offsets, so nothing else is decoded or encoded
 * again (the beacon's block template carries zeros there).
 */
export function withProposerFields(bytes: Uint8Array, f: ProposerFields): Uint8Array {
  checkLength(bytes);
  if (f.vrfProof.length !== SIGNATURE_BYTES || f.signature.length !== SIGNATURE_BYTES || f.randaoReveal.length !== 32) throw new RangeError('proposer fields of the wrong size');
  const out = bytes.slice();
  out.set(f.vrfProof, VRF_PROOF_OFFSET);
  out.set(f.randaoReveal, RANDAO_REVEAL_OFFSET);
  out.set(f.signature, SIGNATURE_OFFSET);
  return out;
}

/** Whether two byte strings are equal. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
