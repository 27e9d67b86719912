/**
 * The pool journal's file format (docs/execution.md, "Pool journal"): an 8-byte magic, then
 * records appended one after another, each
 *
 *   u32 LE CRC32C | u32 LE body length | body
 *
 * with the body one of
 *
 *   0x01 add:    32-byte tx hash | u64 LE arrival time (Unix ms) | signed envelope
 *   0x02 remove: one or more 32-byte tx hashes
 *
 * The checksum covers every byte after it (the length and the body) except an add record's
 * envelope, which its tx hash covers: the hash is the envelope's SHA3-256, so checking it on
 * read is as strong, and admission spends no checksum over 5 KB per transaction.
 *
 * A record whose length runs past the end of the file or out of bounds, or whose checksum does
 * not match, ends the readable journal: after a crash only the tail can be torn (everything
 * before it was synced first), so the scan keeps every record before it and the opener cuts the
 * rest. An add record whose envelope does not hash to its hash (its header is whole, so the
 * records after it are still found) is skipped and reported.
 */
import { type FileHandle } from 'node:fs/promises';
import { MAX_TX_BYTES } from '../../../core/constants.js';
import { toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import { crc32c } from '../../../util/crc32c.js';

/** A journaled transaction as read back on start (from an add record, or a legacy key). */
export interface JournalEntry {
  hash: string;
  envelope: Uint8Array;
  receivedAt: number;
}

/** First bytes of a journal file: the format and its version. */
export const JOURNAL_MAGIC = Buffer.from('SVCPJNL1', 'latin1');

/** Bytes before a record's body: its checksum and its length. */
const RECORD_HEADER_BYTES = 8;
/** Where the checksummed bytes of a record start (the length field). */
const CHECKED_FROM = 4;

const HASH_BYTES = 32;
const KIND_ADD = 1;
const KIND_REMOVE = 2;
/** Body bytes of an add record before its envelope: kind, hash, arrival time. */
const ADD_PREFIX_BYTES = 1 + HASH_BYTES + 8;
/** Bytes of an add record before its envelope. */
const ADD_HEAD_BYTES = RECORD_HEADER_BYTES + ADD_PREFIX_BYTES;
/** Hashes per remove record, so a block's worth of removals never makes one record past the bound below. */
export const MAX_REMOVALS_PER_RECORD = 4096;
/** No valid body is longer: a length past it is a torn or corrupt header, not a huge record. */
const MAX_BODY_BYTES = Math.max(ADD_PREFIX_BYTES + MAX_TX_BYTES, 1 + HASH_BYTES * MAX_REMOVALS_PER_RECORD);
/** Bytes read from the file at a time while scanning. */
const READ_CHUNK = 1 << 20;

/** A record read back from the file. */
export type JournalRecord = { kind: 'add'; hash: string; receivedAt: number; envelope: Uint8Array; bytes: number } | { kind: 'remove'; hashes: string[]; bytes: number };

/**
 * The add record of an admitted transaction (`hash`: its 0x-prefixed SHA3 hex), as the parts
 * to write in order: its head, then the envelope itself (not copied).
 */
export function encodeAdd(hash: string, receivedAt: number, envelope: Uint8Array): [Buffer, Uint8Array] {
  const head = Buffer.allocUnsafe(ADD_HEAD_BYTES);
  writeAddHead(head, 0, hash, receivedAt, envelope.length);
  return [head, envelope];
}

/** Bytes of the add record of an envelope of `envelopeBytes`. */
export function addRecordBytes(envelopeBytes: number): number {
  return ADD_HEAD_BYTES + envelopeBytes;
}

/**
 * Writes the add record of `envelope` into `out` at `at`, byte for byte what encodeAdd's parts
 * hold; returns the offset past it. The journal's writer builds a whole group-commit write this
 * way in one reused buffer: a head Buffer per transaction and a 256-part writev per batch cost
 * admission's main thread more than the copy does.
 */
export function encodeAddInto(out: Buffer, at: number, hash: string, receivedAt: number, envelope: Uint8Array): number {
  writeAddHead(out, at, hash, receivedAt, envelope.length);
  out.set(envelope, at + ADD_HEAD_BYTES);
  return at + ADD_HEAD_BYTES + envelope.length;
}

/** An add record's head (checksum, length, kind, hash, arrival time) at `out[at, at + ADD_HEAD_BYTES)`. */
function writeAddHead(out: Buffer, at: number, hash: string, receivedAt: number, envelopeBytes: number): void {
  out.writeUInt32LE(ADD_PREFIX_BYTES + envelopeBytes, at + CHECKED_FROM);
  out[at + RECORD_HEADER_BYTES] = KIND_ADD;
  writeHash(out, at + RECORD_HEADER_BYTES + 1, hash);
  const time = Math.max(0, Math.trunc(receivedAt));
  // Two u32 halves: exact for any millisecond time, without a BigInt per record.
  out.writeUInt32LE(time % 2 ** 32, at + RECORD_HEADER_BYTES + 1 + HASH_BYTES);
  out.writeUInt32LE(Math.floor(time / 2 ** 32), at + RECORD_HEADER_BYTES + 1 + HASH_BYTES + 4);
  out.writeUInt32LE(crc32c(out, at + CHECKED_FROM, at + ADD_HEAD_BYTES), at);
}

/** Encodes the remove records of `hashes` (several when there are more than one record holds). */
export function encodeRemove(hashes: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < hashes.length; i += MAX_REMOVALS_PER_RECORD) {
    const part = hashes.slice(i, i + MAX_REMOVALS_PER_RECORD);
    const body = 1 + HASH_BYTES * part.length;
    const rec = Buffer.allocUnsafe(RECORD_HEADER_BYTES + body);
    rec.writeUInt32LE(body, CHECKED_FROM);
    rec[RECORD_HEADER_BYTES] = KIND_REMOVE;
    part.forEach((h, j) => writeHash(rec, RECORD_HEADER_BYTES + 1 + j * HASH_BYTES, h));
    rec.writeUInt32LE(crc32c(rec, CHECKED_FROM), 0);
    out.push(rec);
  }
  return out;
}

/**
 * Whether `hash` is a 0x-prefixed 32-byte lowercase hex string, the only hash a record can hold.
 * A loop over the character codes: admission checks every journaled hash, and a regular
 * expression's call cost several times the loop.
 */
export function isRecordableHash(hash: string): boolean {
  if (hash.length !== 2 + 2 * HASH_BYTES || hash.charCodeAt(0) !== 0x30 || hash.charCodeAt(1) !== 0x78) return false;
  for (let i = 2; i < hash.length; i++) {
    const c = hash.charCodeAt(i);
    // '0'-'9' or 'a'-'f'.
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

function writeHash(out: Buffer, at: number, hash: string): void {
  if (out.write(hash.slice(2), at, HASH_BYTES, 'hex') !== HASH_BYTES) throw new RangeError(`not a 32-byte hash: ${hash}`);
}

/** Where the readable journal ends, and what was wrong with it. */
export interface ScanResult {
  /** File offset just past the last valid record. */
  end: number;
  /** Set when bytes past `end` were not a valid record (a torn tail). */
  torn?: string;
  /** Hashes of add records skipped because their envelope does not hash to them. */
  corrupt: string[];
}

/**
 * Reads the records of the journal open as `fh` (`size` bytes, magic already checked), in file
 * order, handing each to `onRecord`; stops at the first invalid one. Envelopes are copied out
 * of the read buffer: it is refilled for the next chunk of the file, so a view of it would be
 * overwritten (and would hold a whole chunk in memory).
 */
export async function scanRecords(fh: FileHandle, size: number, onRecord: (rec: JournalRecord) => void): Promise<ScanResult> {
  let buf = Buffer.allocUnsafe(READ_CHUNK);
  let bufStart = 0;
  let bufLen = 0;
  /** Makes `[pos, pos + n)` readable in `buf`; false when the file ends first. */
  const ensure = async (pos: number, n: number): Promise<boolean> => {
    if (pos + n > size) return false;
    if (pos >= bufStart && pos + n <= bufStart + bufLen) return true;
    if (buf.length < n) buf = Buffer.allocUnsafe(n);
    const want = Math.min(buf.length, size - pos);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(buf, got, want - got, pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    bufStart = pos;
    bufLen = got;
    return got >= n;
  };
  const corrupt: string[] = [];
  let pos = JOURNAL_MAGIC.length;
  while (pos < size) {
    if (!(await ensure(pos, RECORD_HEADER_BYTES))) return { end: pos, torn: 'record header cut short', corrupt };
    let at = pos - bufStart;
    const sum = buf.readUInt32LE(at);
    const body = buf.readUInt32LE(at + CHECKED_FROM);
    if (body === 0 || body > MAX_BODY_BYTES) return { end: pos, torn: `record length ${body} out of bounds`, corrupt };
    if (!(await ensure(pos, RECORD_HEADER_BYTES + body))) return { end: pos, torn: 'record cut short', corrupt };
    at = pos - bufStart;
    const b = at + RECORD_HEADER_BYTES;
    const kind = buf[b];
    const add = kind === KIND_ADD && body >= ADD_PREFIX_BYTES;
    if (crc32c(buf, at + CHECKED_FROM, add ? b + ADD_PREFIX_BYTES : b + body) !== sum) return { end: pos, torn: 'record checksum mismatch', corrupt };
    const bytes = RECORD_HEADER_BYTES + body;
    if (add) {
      const hash = '0x' + buf.toString('hex', b + 1, b + 1 + HASH_BYTES);
      const envelope = buf.subarray(b + ADD_PREFIX_BYTES, b + body);
      if (toHex(sha3(envelope)) !== hash) {
        corrupt.push(hash);
      } else {
        const receivedAt = buf.readUInt32LE(b + 1 + HASH_BYTES) + buf.readUInt32LE(b + 1 + HASH_BYTES + 4) * 2 ** 32;
        // new Uint8Array(view) copies; Buffer's slice() would be another view of the read buffer.
        onRecord({ kind: 'add', hash, receivedAt, envelope: new Uint8Array(envelope), bytes });
      }
    } else if (kind === KIND_REMOVE && (body - 1) % HASH_BYTES === 0) {
      const hashes: string[] = [];
      for (let h = b + 1; h < b + body; h += HASH_BYTES) hashes.push('0x' + buf.toString('hex', h, h + HASH_BYTES));
      onRecord({ kind: 'remove', hashes, bytes });
    } else {
      // A valid checksum over a body this version cannot read: a newer format, not a torn write.
      return { end: pos, torn: `unknown record kind ${kind}`, corrupt };
    }
    pos += bytes;
  }
  return { end: pos, corrupt };
}
