/**
 * Block bodies in an append-only file beside the database (as geth's freezer, but for every
 * block, any branch): each imported block appends its transactions' envelopes, then their
 * receipts' UTF-8 JSON, and LevelDB keeps only a small index per block (`j:`, see `Keys`) and the
 * file's committed end (`m:body_end`). A full block is ~7.7 MB of bodies: as LevelDB values they
 * cost a batch of 1,428 puts on the main thread, the write-ahead log, the memtable and a later
 * compaction rewriting them; here they cost positional writes and fdatasync, and the
 * envelopes' write and sync run on the thread pool while the block is still being validated.
 *
 * Durability: a block's bytes are synced before the LevelDB batch that indexes them is written,
 * and that batch before newPayload answers. Bytes past the committed end (a block whose import
 * failed, or a crash between the body's sync and the batch) belong to nothing: the next block
 * overwrites them, and opening cuts the file back to the end the database names. Bodies are never
 * deleted (LevelDB kept them forever too); a side branch's bodies stay as dead bytes once it is
 * pruned.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { constants } from 'node:fs';
import { SvcError } from '../../core/errors.js';
import { ExecutionError } from './errors.js';
import { syncDir } from '../../util/fs.js';

/** The body file's name in the execution data directory (beside `chain/`). */
export const BLOCK_BODIES_FILE = 'blocks.bodies';

/** The body file could not be written or read: the block was not stored (or cannot be served). */
export class BodyFileError extends SvcError {
  constructor(what: string, cause: unknown) {
    super('BLOCK_STORAGE_FAILED', `block body file ${what} failed: ${(cause as Error).message}`, { cause });
  }
}

/** The database names more body bytes than the file holds: the file was truncated or replaced. */
export class BodyFileCorruptError extends SvcError {
  constructor(path: string, size: number, end: number) {
    super('CORRUPT_DB', `${path} holds ${size} bytes but the database indexes block bodies up to byte ${end}: the data directory is damaged`);
  }
}

/** Bytes of the fixed part of an index value: the body's file offset (48-bit) and its transaction count. */
const INDEX_HEAD_BYTES = 10;
/** Bytes per transaction in an index value: its envelope's and its receipt's lengths. */
const INDEX_TX_BYTES = 8;

/** Where a block's bodies are in the file: its offset and each transaction's envelope and receipt lengths. */
export interface BodyIndex {
  offset: number;
  envelopeLengths: Uint32Array;
  receiptLengths: Uint32Array;
}

/** The `j:` value of a body: offset, count, then every envelope length and every receipt length (big-endian). */
export function encodeBodyIndex(ix: BodyIndex): Uint8Array {
  const n = ix.envelopeLengths.length;
  const b = Buffer.allocUnsafe(INDEX_HEAD_BYTES + n * INDEX_TX_BYTES);
  b.writeUIntBE(ix.offset, 0, 6);
  b.writeUInt32BE(n, 6);
  for (let i = 0; i < n; i++) {
    b.writeUInt32BE(ix.envelopeLengths[i]!, INDEX_HEAD_BYTES + 4 * i);
    b.writeUInt32BE(ix.receiptLengths[i]!, INDEX_HEAD_BYTES + 4 * (n + i));
  }
  return b;
}

/** Parses a `j:` value; one that does not parse is a damaged database. */
export function decodeBodyIndex(bytes: Uint8Array, key: string): BodyIndex {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = b.length >= INDEX_HEAD_BYTES ? b.readUInt32BE(6) : -1;
  if (n < 0 || b.length !== INDEX_HEAD_BYTES + n * INDEX_TX_BYTES) throw new ExecutionError('CORRUPT_DB', `database value at ${key} is not a block body index`);
  const envelopeLengths = new Uint32Array(n);
  const receiptLengths = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    envelopeLengths[i] = b.readUInt32BE(INDEX_HEAD_BYTES + 4 * i);
    receiptLengths[i] = b.readUInt32BE(INDEX_HEAD_BYTES + 4 * (n + i));
  }
  return { offset: b.readUIntBE(0, 6), envelopeLengths, receiptLengths };
}

/** Bytes of a body: its envelopes and receipts. */
export function bodyBytes(ix: BodyIndex): number {
  let n = 0;
  for (let i = 0; i < ix.envelopeLengths.length; i++) n += ix.envelopeLengths[i]! + ix.receiptLengths[i]!;
  return n;
}

/**
 * A block's body being written: its envelopes are on their way to the file from `begin`;
 * `finish` appends the receipts and syncs, and yields the index to store with the block.
 */
export interface BodyWrite {
  /**
   * Appends the receipts after the envelopes and syncs the file: returns the body's index at once
   * (its end is `offset` + `bodyBytes`), `synced`, which the indexing batch must wait for, and
   * the receipts' joined UTF-8 bytes (read-only: the write may still be reading them).
   */
  finish(receiptsJson: readonly string[]): { index: BodyIndex; synced: Promise<void>; receiptBytes: Uint8Array };
  /** Waits for the writes in flight (whether or not they succeeded), so an abandoned body cannot land after the next one. */
  settle(): Promise<void>;
}

/** The append-only block body file. One writer (the chain's import mutex); readers any time. */
export class BodyFile {
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    /** End of the bytes the database indexes: where the next body goes. */
    private end: number,
  ) {}

  /**
   * Opens (creating) the file and cuts it back to `indexedEnd`, the end the database names:
   * anything after it was written by an import that never committed.
   */
  static async open(path: string, indexedEnd: number): Promise<BodyFile> {
    let fh: FileHandle;
    let created = false;
    try {
      fh = await open(path, constants.O_RDWR);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new BodyFileError('open', err);
      fh = await open(path, constants.O_RDWR | constants.O_CREAT, 0o600).catch((e: unknown) => {
        throw new BodyFileError('create', e);
      });
      created = true;
    }
    try {
      const size = (await fh.stat()).size;
      if (size < indexedEnd) throw new BodyFileCorruptError(path, size, indexedEnd);
      if (size > indexedEnd) {
        await fh.truncate(indexedEnd);
        await fh.datasync();
      }
      // A new file's name is durable only with its directory.
      if (created) await syncDir(path);
    } catch (err) {
      await fh.close();
      throw err instanceof SvcError ? err : new BodyFileError('open', err);
    }
    return new BodyFile(path, fh, indexedEnd);
  }

  /** The committed end (bytes the database indexes). */
  get committedEnd(): number {
    return this.end;
  }

  /**
   * Starts writing `envelopes` at the committed end; nothing is committed until `committed` is
   * called with the new end after the indexing batch is written.
   */
  begin(envelopes: readonly Uint8Array[]): BodyWrite {
    const offset = this.end;
    let envelopeBytes = 0;
    const envelopeLengths = new Uint32Array(envelopes.length);
    for (let i = 0; i < envelopes.length; i++) envelopeBytes += envelopeLengths[i] = envelopes[i]!.length;
    // The envelopes are views into the received body: written from there, never copied in JS.
    // Synced at once, so flushing their megabytes to disk overlaps the block's validation and
    // execution; the sync in `finish` then flushes only the receipts.
    const early = this.writeAll(coalesce(envelopes), offset).then(() => this.sync());
    // Handled here so a failure before `finish` or `settle` looks is not an unhandled rejection;
    // they still see it.
    early.catch(() => undefined);
    let all: Promise<unknown> = early;
    return {
      finish: (receiptsJson) => {
        const receiptLengths = new Uint32Array(receiptsJson.length);
        for (let i = 0; i < receiptsJson.length; i++) receiptLengths[i] = Buffer.byteLength(receiptsJson[i]!, 'utf8');
        // One joined write: per-string writes cost a native call each, ~3 ms for a full block.
        const buf = Buffer.from(receiptsJson.join(''), 'utf8');
        // Another byte range, so it need not wait for the envelopes' sync; the last sync waits
        // for both and covers everything.
        const receipts = this.writeAll([buf], offset + envelopeBytes);
        receipts.catch(() => undefined);
        const synced = Promise.all([early, receipts]).then(() => this.sync());
        synced.catch(() => undefined);
        all = Promise.allSettled([early, receipts, synced]);
        // The receipts' UTF-8 bytes (lengths in the index) also go to the engine route's answer,
        // which would otherwise encode the same 0.7 MB again: it only reads them.
        return { index: { offset, envelopeLengths, receiptLengths }, synced, receiptBytes: buf };
      },
      settle: () => all.then(
        () => undefined,
        () => undefined,
      ),
    };
  }

  /** Records that the database now indexes the file up to `end`. */
  committed(end: number): void {
    this.end = end;
  }

  /** Reads `length` bytes at `offset`. */
  async read(offset: number, length: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    try {
      while (got < length) {
        const { bytesRead } = await this.fh.read(buf, got, length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
    } catch (err) {
      throw new BodyFileError('read', err);
    }
    if (got < length) throw new ExecutionError('CORRUPT_DB', `${this.path} ends before byte ${offset + length} of an indexed block body`);
    return buf;
  }

  /** Closes the file (once; later calls do nothing). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }

  private async sync(): Promise<void> {
    try {
      await this.fh.datasync();
    } catch (err) {
      throw new BodyFileError('sync', err);
    }
  }

  private async writeAll(parts: readonly Uint8Array[], position: number): Promise<void> {
    try {
      let pos = position;
      let list = parts;
      // writev may write less than asked (a signal, a full disk): carry on from where it stopped.
      while (list.length > 0) {
        const { bytesWritten } = await this.fh.writev(list as Uint8Array[], pos);
        pos += bytesWritten;
        list = advance(list, bytesWritten);
      }
    } catch (err) {
      throw new BodyFileError('write', err);
    }
  }
}

/**
 * Adjacent views of one buffer as one view: an SSZ block's envelopes lie back to back in the
 * received body, so 1,428 of them are usually one write vector, not 1,428.
 */
function coalesce(parts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (last && last.buffer === p.buffer && last.byteOffset + last.length === p.byteOffset) out[out.length - 1] = new Uint8Array(p.buffer, last.byteOffset, last.length + p.length);
    else if (p.length > 0) out.push(p);
  }
  return out;
}

/** `parts` without its first `n` bytes. */
function advance(parts: readonly Uint8Array[], n: number): readonly Uint8Array[] {
  let i = 0;
  let left = n;
  while (i < parts.length && left >= parts[i]!.length) left -= parts[i++]!.length;
  if (i === parts.length) return [];
  const rest = parts.slice(i);
  if (left > 0) rest[0] = rest[0]!.subarray(left);
  return rest;
}
