/**
 * The compact answer of newPayload, sent when the caller asks with `Accept: application/octet-stream`
 * (the beacon's engine client does): the SSZ container `ImportAnswerSsz`, whose receipts are the
 * UTF-8 JSON strings the JSON answer carries, as byte lists. A full block's JSON answer is ~0.7 MB
 * that the caller parses whole to read one state root; this one reads its fixed fields in place
 * and parses receipts only when asked for. Errors stay JSON envelopes.
 */
import { ByteListType, ByteVectorType, ContainerType, ListCompositeType, UintNumberType, BooleanType } from '@chainsafe/ssz';
import { MalformedError } from '../core/errors.js';
import type { ImportResult, Receipt } from './execution.js';

/** Bounds of the receipts list (the body limit bounds a block far below them). */
const MAX_RECEIPTS = 1 << 20;
const MAX_RECEIPT_BYTES = 1 << 24;

/** The answer's SSZ type (the encoder and decoder below write and read exactly this). */
export const ImportAnswerSsz = new ContainerType({
  blockHash: new ByteVectorType(32),
  stateRoot: new ByteVectorType(32),
  blockNumber: new UintNumberType(8),
  gasUsed: new UintNumberType(8),
  canonical: new BooleanType(),
  alreadyKnown: new BooleanType(),
  receipts: new ListCompositeType(new ByteListType(MAX_RECEIPT_BYTES), MAX_RECEIPTS),
});

/** Bytes before the receipts list: two hashes, two uint64, two booleans and the list's offset. */
const FIXED_BYTES = 32 + 32 + 8 + 8 + 1 + 1 + 4;

function hexToBuffer(hex: string): Buffer {
  return Buffer.from(hex.slice(2), 'hex');
}

/**
 * Encodes a VALID import result whose receipts are `receiptsJson` (the strings the JSON answer
 * carries), straight into one buffer: no per-receipt byte arrays.
 */
export function encodeImportAnswer(r: Omit<ImportResult, 'receipts'>, receiptsJson: readonly string[]): Uint8Array {
  const n = receiptsJson.length;
  const lengths = new Array<number>(n);
  let total = FIXED_BYTES + 4 * n;
  for (let i = 0; i < n; i++) total += lengths[i] = Buffer.byteLength(receiptsJson[i]!, 'utf8');
  const b = Buffer.alloc(total);
  hexToBuffer(r.block_hash).copy(b, 0);
  hexToBuffer(r.state_root).copy(b, 32);
  b.writeBigUInt64LE(BigInt(r.block_number), 64);
  b.writeBigUInt64LE(BigInt(r.gas_used), 72);
  b[80] = r.canonical ? 1 : 0;
  b[81] = r.already_known ? 1 : 0;
  b.writeUInt32LE(FIXED_BYTES, 82);
  // The list: an offset per receipt (from the list's start), then the receipts, written as one
  // joined string (a native call per receipt cost ~3 ms for a full block).
  let at = 4 * n;
  for (let i = 0; i < n; i++) {
    b.writeUInt32LE(at, FIXED_BYTES + 4 * i);
    at += lengths[i]!;
  }
  b.write(receiptsJson.join(''), FIXED_BYTES + 4 * n, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Decodes a compact answer into the JSON answer's shape. Its receipts are parsed from their JSON
 * on first access (the beacon reads only the fixed fields); any structural fault is
 * `MalformedError('import answer', …)`.
 */
export function decodeImportAnswer(bytes: Uint8Array): ImportResult {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bad = (why: string): never => {
    throw new MalformedError('import answer', why);
  };
  if (b.length < FIXED_BYTES) bad('too short');
  if (b.readUInt32LE(82) !== FIXED_BYTES) bad('receipts offset');
  const flag = (at: number): boolean => (b[at]! > 1 ? bad('boolean out of range') : b[at] === 1);
  const number = (at: number): number => {
    const v = b.readBigUInt64LE(at);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? bad('integer above 2^53') : Number(v);
  };
  const list = b.subarray(FIXED_BYTES);
  const ends: number[] = [];
  if (list.length > 0) {
    const first = list.length >= 4 ? list.readUInt32LE(0) : bad('receipts offsets');
    if (first % 4 !== 0 || first > list.length || first === 0) bad('receipts offsets');
    const n = first / 4;
    let prev = first;
    for (let i = 1; i <= n; i++) {
      const end = i < n ? list.readUInt32LE(4 * i) : list.length;
      if (end < prev || end > list.length) bad('receipts offsets');
      ends.push(end);
      prev = end;
    }
  }
  let parsed: Receipt[] | undefined;
  const receipts = (): Receipt[] => {
    if (parsed) return parsed;
    let start = ends.length > 0 ? list.readUInt32LE(0) : 0;
    parsed = ends.map((end) => {
      const json = list.toString('utf8', start, end);
      start = end;
      try {
        return JSON.parse(json) as Receipt;
      } catch {
        return bad('a receipt is not JSON');
      }
    });
    return parsed;
  };
  const result = {
    status: 'VALID' as const,
    block_hash: '0x' + b.toString('hex', 0, 32),
    block_number: number(64),
    state_root: '0x' + b.toString('hex', 32, 64),
    gas_used: number(72),
    canonical: flag(80),
    already_known: flag(81),
  };
  // Enumerable, in the JSON answer's key order, so the decoded answer deep-equals the JSON one.
  const out = { status: result.status, block_hash: result.block_hash, block_number: result.block_number, state_root: result.state_root, gas_used: result.gas_used } as ImportResult;
  Object.defineProperty(out, 'receipts', { get: receipts, enumerable: true });
  out.canonical = result.canonical;
  out.already_known = result.already_known;
  return out;
}
