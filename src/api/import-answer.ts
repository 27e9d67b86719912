/**
 * The compact answer of newPayload, sent when the caller asks with `Accept: application/octet-stream`
 * (the beacon's engine client does): the SSZ container `ImportAnswerSsz`. Its receipts are the
 * UTF-8 JSON strings the JSON answer carries, as byte lists, and beside them each receipt's
 * outcome (status and kind) in two binary columns. A beacon reads every receipt's outcome (its
 * bridge looks for successful bridge operations) but the whole receipt only of the few that are
 * bridge operations: the columns let it skip parsing a full block's ~0.7 MB of JSON. A full
 * block's JSON answer is parsed whole to read one state root; this one reads its fixed fields in
 * place. Errors stay JSON envelopes.
 */
import { ByteListType, ByteVectorType, ContainerType, ListCompositeType, UintNumberType, BooleanType } from '@chainsafe/ssz';
import { MalformedError } from '../core/errors.js';
import type { ImportResult, Receipt, ReceiptKind } from './execution.js';

/** Bounds of the receipts list (the body limit bounds a block far below them). */
const MAX_RECEIPTS = 1 << 20;
const MAX_RECEIPT_BYTES = 1 << 24;
/** Longest receipt kind name (the longest today, ecdsa_authorization, is 19). */
const MAX_KIND_BYTES = 64;

/** The answer's SSZ type (the encoder and decoder below write and read exactly this). */
export const ImportAnswerSsz = new ContainerType({
  blockHash: new ByteVectorType(32),
  stateRoot: new ByteVectorType(32),
  blockNumber: new UintNumberType(8),
  gasUsed: new UintNumberType(8),
  canonical: new BooleanType(),
  alreadyKnown: new BooleanType(),
  registryChanged: new BooleanType(),
  receipts: new ListCompositeType(new ByteListType(MAX_RECEIPT_BYTES), MAX_RECEIPTS),
  /** Receipt i's status (0 or 1), one byte each. */
  statuses: new ByteListType(MAX_RECEIPTS),
  /** Receipt i's kind name, ASCII. */
  kinds: new ListCompositeType(new ByteListType(MAX_KIND_BYTES), MAX_RECEIPTS),
});

/** What a receipt's outcome columns say: enough to pick the receipts worth parsing. */
export interface ReceiptOutcome {
  status: 0 | 1;
  kind: ReceiptKind;
}

/** A decoded compact answer: the JSON answer's fields, plus each receipt's outcome without parsing it. */
export interface DecodedImportAnswer extends ImportResult {
  /** Receipt i's status and kind, from the binary columns (not enumerable: JSON shows the JSON answer). */
  readonly outcomes: readonly ReceiptOutcome[];
  /** Receipt i alone, parsed from its JSON and checked against its outcome. */
  receipt(i: number): Receipt;
}

/** Receipts already encoded: their UTF-8 JSON back to back, and each one's byte length. */
export interface EncodedReceipts {
  bytes: Uint8Array;
  lengths: Uint32Array;
}

/** Bytes before the variable part: two hashes, two uint64, three booleans and three offsets. */
const FIXED_BYTES = 32 + 32 + 8 + 8 + 1 + 1 + 1 + 3 * 4;
/** Where the offsets of receipts, statuses and kinds sit. */
const RECEIPTS_OFFSET_AT = 83;
const STATUSES_OFFSET_AT = 87;
const KINDS_OFFSET_AT = 91;

function hexToBuffer(hex: string): Buffer {
  return Buffer.from(hex.slice(2), 'hex');
}

/**
 * Writes an SSZ list of byte lists at `at`: an offset per item (`lengths` are their byte
 * lengths), then the items, as one joined string (a native call per item cost ~3 ms for a full
 * block's receipts) or as bytes already joined. Returns its end.
 */
function writeByteLists(b: Buffer, at: number, lengths: ArrayLike<number>, items: readonly string[] | Uint8Array): number {
  const n = lengths.length;
  let end = 4 * n;
  for (let i = 0; i < n; i++) {
    b.writeUInt32LE(end, at + 4 * i);
    end += lengths[i]!;
  }
  if (items instanceof Uint8Array) {
    if (items.length !== end - 4 * n) throw new RangeError(`${items.length} encoded receipt bytes, lengths sum to ${end - 4 * n}`);
    b.set(items, at + 4 * n);
  } else b.write(items.join(''), at + 4 * n, 'utf8');
  return at + end;
}

/**
 * Encodes a VALID import result whose receipts are `receiptsJson` (the strings the JSON answer
 * carries, in `r.receipts`' order, or those strings already encoded), straight into one buffer:
 * no per-receipt byte arrays.
 */
export function encodeImportAnswer(r: ImportResult, receiptsJson: readonly string[] | EncodedReceipts): Uint8Array {
  const encoded = 'bytes' in receiptsJson ? receiptsJson : undefined;
  const n = encoded ? encoded.lengths.length : (receiptsJson as readonly string[]).length;
  if (r.receipts.length !== n) throw new RangeError(`${r.receipts.length} receipts, ${n} JSON strings`);
  const lengths = encoded ? encoded.lengths : (receiptsJson as readonly string[]).map((j) => Buffer.byteLength(j, 'utf8'));
  const kinds = new Array<string>(n);
  const kindLengths = new Array<number>(n);
  // A block has a few distinct kinds: each one's byte length is measured once.
  const kindByteLength = new Map<string, number>();
  let receiptBytes = 4 * n;
  let kindBytes = 4 * n;
  for (let i = 0; i < n; i++) {
    receiptBytes += lengths[i]!;
    const kind = (kinds[i] = r.receipts[i]!.kind);
    let len = kindByteLength.get(kind);
    if (len === undefined) kindByteLength.set(kind, (len = Buffer.byteLength(kind, 'utf8')));
    kindBytes += kindLengths[i] = len;
  }
  // Every byte is written below.
  const b = Buffer.allocUnsafe(FIXED_BYTES + receiptBytes + n + kindBytes);
  hexToBuffer(r.block_hash).copy(b, 0);
  hexToBuffer(r.state_root).copy(b, 32);
  b.writeBigUInt64LE(BigInt(r.block_number), 64);
  b.writeBigUInt64LE(BigInt(r.gas_used), 72);
  b[80] = r.canonical ? 1 : 0;
  b[81] = r.already_known ? 1 : 0;
  b[82] = r.registry_changed ? 1 : 0;
  const statusesAt = writeByteLists(b, FIXED_BYTES, lengths, encoded ? encoded.bytes : (receiptsJson as readonly string[]));
  for (let i = 0; i < n; i++) b[statusesAt + i] = r.receipts[i]!.status;
  const kindsAt = statusesAt + n;
  writeByteLists(b, kindsAt, kindLengths, kinds);
  b.writeUInt32LE(FIXED_BYTES, RECEIPTS_OFFSET_AT);
  b.writeUInt32LE(statusesAt, STATUSES_OFFSET_AT);
  b.writeUInt32LE(kindsAt, KINDS_OFFSET_AT);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Start and end offsets of each item of an SSZ list of byte lists (`list`), validated; `bad` throws. */
function byteListBounds(list: Buffer, bad: (why: string) => never, what: string): { starts: number[]; ends: number[] } {
  const starts: number[] = [];
  const ends: number[] = [];
  if (list.length === 0) return { starts, ends };
  const first = list.length >= 4 ? list.readUInt32LE(0) : bad(`${what} offsets`);
  if (first % 4 !== 0 || first > list.length || first === 0) bad(`${what} offsets`);
  const n = first / 4;
  let prev = first;
  for (let i = 1; i <= n; i++) {
    const end = i < n ? list.readUInt32LE(4 * i) : list.length;
    if (end < prev || end > list.length) bad(`${what} offsets`);
    starts.push(prev);
    ends.push(end);
    prev = end;
  }
  return { starts, ends };
}

/**
 * Decodes a compact answer into the JSON answer's shape. The outcomes are read at once; a
 * receipt is parsed from its JSON when read (`receipt(i)`, or all of them through `receipts`).
 * Any structural fault, or a receipt that disagrees with its outcome, is
 * `MalformedError('import answer', …)`.
 */
export function decodeImportAnswer(bytes: Uint8Array): DecodedImportAnswer {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bad = (why: string): never => {
    throw new MalformedError('import answer', why);
  };
  if (b.length < FIXED_BYTES) bad('too short');
  const receiptsAt = b.readUInt32LE(RECEIPTS_OFFSET_AT);
  const statusesAt = b.readUInt32LE(STATUSES_OFFSET_AT);
  const kindsAt = b.readUInt32LE(KINDS_OFFSET_AT);
  if (receiptsAt !== FIXED_BYTES || statusesAt < receiptsAt || kindsAt < statusesAt || kindsAt > b.length) bad('field offsets');
  const flag = (at: number): boolean => (b[at]! > 1 ? bad('boolean out of range') : b[at] === 1);
  const number = (at: number): number => {
    const v = b.readBigUInt64LE(at);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? bad('integer above 2^53') : Number(v);
  };
  const list = b.subarray(receiptsAt, statusesAt);
  const { starts, ends } = byteListBounds(list, bad, 'receipts');
  const n = ends.length;
  const statuses = b.subarray(statusesAt, kindsAt);
  if (statuses.length !== n) bad(`${statuses.length} statuses for ${n} receipts`);
  const kindList = b.subarray(kindsAt);
  const kindBounds = byteListBounds(kindList, bad, 'kinds');
  if (kindBounds.ends.length !== n) bad(`${kindBounds.ends.length} kinds for ${n} receipts`);
  const outcomes = new Array<ReceiptOutcome>(n);
  // A block's kinds repeat (a full block of transfers has one): a kind whose bytes equal the
  // previous receipt's reuses its string instead of decoding another.
  let prevStart = 0;
  let prevEnd = 0;
  let prevKind: ReceiptKind | undefined;
  for (let i = 0; i < n; i++) {
    const status = statuses[i]!;
    if (status > 1) bad(`receipt ${i} status ${status}`);
    const s = kindBounds.starts[i]!;
    const e = kindBounds.ends[i]!;
    if (e - s > MAX_KIND_BYTES) bad(`receipt ${i} kind longer than ${MAX_KIND_BYTES} bytes`);
    let same = prevKind !== undefined && e - s === prevEnd - prevStart;
    for (let j = 0; same && j < e - s; j++) same = kindList[s + j] === kindList[prevStart + j];
    if (!same) {
      const raw = kindList.toString('latin1', s, e);
      if (!/^[a-z0-9_]+$/.test(raw)) bad(`receipt ${i} kind is not a kind name`);
      prevKind = raw as ReceiptKind;
    }
    prevStart = s;
    prevEnd = e;
    outcomes[i] = { status: status as 0 | 1, kind: prevKind! };
  }
  const parsed = new Array<Receipt | undefined>(n);
  const receipt = (i: number): Receipt => {
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`receipt ${i} of ${n}`);
    const known = parsed[i];
    if (known) return known;
    let r: Receipt;
    try {
      r = JSON.parse(list.toString('utf8', starts[i], ends[i])) as Receipt;
    } catch {
      return bad('a receipt is not JSON');
    }
    // The columns decide which receipts a beacon parses: a receipt they misdescribe is a broken answer.
    if (r === null || typeof r !== 'object' || r.status !== outcomes[i]!.status || r.kind !== outcomes[i]!.kind) bad(`receipt ${i} disagrees with its status and kind`);
    return (parsed[i] = r);
  };
  let all: Receipt[] | undefined;
  const receipts = (): Receipt[] => (all ??= Array.from({ length: n }, (_, i) => receipt(i)));
  // Enumerable, in the JSON answer's key order, so the decoded answer deep-equals the JSON one.
  const out = { status: 'VALID', block_hash: '0x' + b.toString('hex', 0, 32), block_number: number(64), state_root: '0x' + b.toString('hex', 32, 64), gas_used: number(72) } as DecodedImportAnswer;
  Object.defineProperty(out, 'receipts', { get: receipts, enumerable: true });
  out.canonical = flag(80);
  out.already_known = flag(81);
  out.registry_changed = flag(82);
  Object.defineProperty(out, 'outcomes', { value: outcomes, enumerable: false });
  Object.defineProperty(out, 'receipt', { value: receipt, enumerable: false });
  return out;
}

/**
 * The receipts of an import answer whose outcome `keep` accepts, in order. A decoded compact
 * answer parses only those; any other answer's receipts are filtered as they are.
 */
export function receiptsWhere(answer: ImportResult | DecodedImportAnswer, keep: (o: ReceiptOutcome) => boolean): Receipt[] {
  if (!('outcomes' in answer)) return answer.receipts.filter(keep);
  const out: Receipt[] = [];
  for (let i = 0; i < answer.outcomes.length; i++) if (keep(answer.outcomes[i]!)) out.push(answer.receipt(i));
  return out;
}
