/**
 * Compaction of the pool journal file (journal.ts): when the file holds far more dead records
 * than live ones it is rewritten from the live set beside the old one, in chunks, and swapped in
 * by an atomic rename between two appends. The journal keeps the state (its live set, the
 * records appended since the snapshot, the new file waiting to be swapped in) and decides when
 * each step runs; this module writes, completes and renames the files.
 */
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { syncDir } from '../../../util/fs.js';
import type { Logger } from '../../../util/log.js';
import { encodeAdd, JOURNAL_MAGIC } from './journal-file.js';

/** The file is compacted once it is this large and its dead records outweigh its live ones by COMPACT_DEAD_RATIO. */
export const COMPACT_MIN_BYTES = 16 << 20;
const COMPACT_DEAD_RATIO = 2;
/** Bytes of records a compaction encodes between two writes: about a millisecond of the event loop. */
const COMPACT_CHUNK_BYTES = 1 << 20;

/**
 * A live entry: what a compaction rewrites, and its share of the file. The record's head is not
 * kept (a compaction encodes it again, byte for byte): one object less per pooled transaction
 * for the garbage collector to trace.
 */
export interface LiveEntry {
  envelope: Uint8Array;
  receivedAt: number;
  bytes: number;
}

/** A compaction's new file, written and synced up to `size`, waiting to be swapped in. */
export interface Compacted {
  fh: FileHandle;
  tmp: string;
  size: number;
}

/** Whether a file of `size` bytes, `liveBytes` of them live, is large and mostly dead enough to compact. */
export function compactionDue(size: number, liveBytes: number, minBytes: number): boolean {
  return !(size < minBytes || size - liveBytes <= COMPACT_DEAD_RATIO * liveBytes);
}

/**
 * Writes the live set, as of now, to `<path>.compact` in chunks (the event loop runs between them
 * and appends go on to the old file meanwhile) and syncs it; an entry `live` no longer holds when
 * its turn comes is left out. On a failure the new file is removed.
 */
export async function writeCompacted(path: string, live: ReadonlyMap<string, LiveEntry>): Promise<Compacted> {
  const tmp = `${path}.compact`;
  const snapshot = [...live];
  const fh = await open(tmp, 'w');
  try {
    let size = 0;
    let chunk: Uint8Array[] = [JOURNAL_MAGIC];
    let chunkBytes = JOURNAL_MAGIC.length;
    const flush = async (): Promise<void> => {
      const { bytesWritten } = await fh.writev(chunk, size);
      if (bytesWritten !== chunkBytes) throw new Error(`compaction wrote ${bytesWritten} of ${chunkBytes} bytes`);
      size += chunkBytes;
      chunk = [];
      chunkBytes = 0;
    };
    for (const [hash, e] of snapshot) {
      // Gone since the snapshot: its removal is in the tail, but it need not be written at all.
      if (live.get(hash) !== e) continue;
      for (const part of encodeAdd(hash, e.receivedAt, e.envelope)) chunk.push(part);
      chunkBytes += e.bytes;
      if (chunkBytes >= COMPACT_CHUNK_BYTES) await flush();
    }
    if (chunkBytes > 0) await flush();
    await fh.datasync();
    return { fh, tmp, size };
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Swaps a compacted file in over `path` (called inside the writer, so no append is in flight):
 * appends `tail`, the records written to the old file since the snapshot, syncs, renames, closes
 * the old file `old` and syncs the directory. Returns the new file's size, or undefined when it
 * could not be swapped in: the failure is logged, the new file removed and the old one kept.
 */
export async function swapInCompacted(c: Compacted, old: FileHandle, tail: readonly Uint8Array[], path: string, log: Logger): Promise<number | undefined> {
  let size = c.size;
  try {
    if (tail.length > 0) {
      let bytes = 0;
      for (const r of tail) bytes += r.length;
      const { bytesWritten } = await c.fh.writev(tail, size);
      if (bytesWritten !== bytes) throw new Error(`wrote ${bytesWritten} of ${bytes} bytes`);
      size += bytes;
      await c.fh.datasync();
    }
    await rename(c.tmp, path);
  } catch (err) {
    log.warn('pool journal compaction not swapped in', { error: (err as Error).message });
    await c.fh.close().catch(() => undefined);
    await rm(c.tmp, { force: true });
    return undefined;
  }
  await old.close().catch(() => undefined);
  // The rename is durable only with the directory; until then a crash finds the old file, which is still complete.
  await syncDir(path).catch((err: Error) => log.warn('pool journal directory sync failed', { error: err.message }));
  return size;
}
