/**
 * The pool journal (as geth journals local transactions): every admitted transaction's envelope
 * is appended to one file in the data directory (format in journal-file.ts) and synced before
 * the submitter is answered; the start-up replays it through admission. Concurrent appends
 * share one write and one fdatasync (group commit), so the cost per transaction falls as load
 * rises instead of capping admission at the disk's sync rate. An append-only file rather than
 * LevelDB keys: a key per transaction cost a fifth of admission's main thread plus LevelDB's
 * own compaction threads, for data that is written once and read only after a crash.
 *
 * Removals (included, replaced, evicted, dropped) are appended without a sync of their own: one
 * lost in a crash only makes the replay drop the transaction again, or keep one still valid.
 * When the file holds far more dead records than live ones it is rewritten from the live set
 * beside the old one, in chunks, and swapped in by an atomic rename between two appends
 * (journal-compaction.ts). Legacy `p:` keys of the chain database move into the file at open
 * (journal-legacy.ts).
 */
import { type FileHandle, open, rename, rm, stat } from 'node:fs/promises';
import { SvcError } from '../../../core/errors.js';
import { syncDir } from '../../../util/fs.js';
import { GroupCommit } from '../../../util/group-commit.js';
import type { Logger } from '../../../util/log.js';
import { type BatchOp, type ChainStore, type WriteBatch } from '../../shared/store.js';
import { COMPACT_MIN_BYTES, type Compacted, compactionDue, type LiveEntry, swapInCompacted, writeCompacted } from './journal-compaction.js';
import { addRecordBytes, encodeAddInto, encodeRemove, isRecordableHash, JOURNAL_MAGIC, type JournalEntry, type ScanResult, scanRecords } from './journal-file.js';
import { upgradeLegacyKeys } from './journal-legacy.js';

// Defined beside the record format, which journal-legacy.ts shares without importing this module.
export type { JournalEntry } from './journal-file.js';

/** The journal's file name in the execution data directory (beside `chain/`). */
export const POOL_JOURNAL_FILE = 'pool.journal';
/** Deferred removals are written within this long when no admission carries them sooner. */
const LAZY_FLUSH_MS = 1000;
/** Largest write buffer the writer keeps for the next write; a larger write gets a buffer of its own. */
const KEPT_WRITE_BUFFER_BYTES = 8 << 20;

/** The journal could not be written; the submission was not kept. */
export class JournalError extends SvcError {
  constructor(cause: unknown) {
    super('POOL_JOURNAL_FAILED', `transaction not accepted: the pool journal could not be written (${(cause as Error).message})`, { cause });
  }
}

/** The journal file exists but is not a pool journal (its first bytes are not the magic). */
export class JournalFormatError extends SvcError {
  constructor(path: string) {
    super('POOL_JOURNAL_UNREADABLE', `${path} is not a pool journal (unknown header): move it away to start with an empty pool`);
  }
}

/** How to open the journal. */
export interface PoolJournalOptions {
  /** The journal file; absent for an in-memory node, whose pool cannot outlive the process anyway. */
  path?: string;
  /** The chain database: the faucet's claims are written there, and legacy `p:` keys read once. */
  store: ChainStore;
  log: Logger;
  /** Called after each synced write with the number of journal writes it carried (for metrics). */
  synced?: (writes: number) => void;
  /** Size from which a mostly dead file is compacted (tests lower it). */
  compactMinBytes?: number;
}

/**
 * One queued write: journal records in order (encoded bytes, or a transaction whose add record
 * the writer encodes straight into its write buffer), and chain-database writes that must be
 * durable before them.
 */
interface JournalOp {
  records: Array<Uint8Array | JournalEntry>;
  /** Journal writes it carries, for the metrics: its admissions, or 1 for a removal. */
  writes: number;
  extra?: readonly BatchOp[];
}

export class PoolJournal {
  private readonly commits: GroupCommit<JournalOp>;
  /** Transactions the journal holds (as the file will once queued writes land), in file order. */
  private readonly live = new Map<string, LiveEntry>();
  private liveBytes = 0;
  /** Legacy entries the file cannot hold (not the envelope of their hash): handed to the replay, which drops them. */
  private unjournaled: JournalEntry[] = [];
  /** Bytes of the file written so far: where the next record goes. */
  private size = 0;
  private compacting: Promise<void> | undefined;
  /** Records written to the old file since the running compaction took its snapshot. */
  private tail: Uint8Array[] | undefined;
  private swapReady: Compacted | undefined;
  /** The writer's buffer, reused by each write (one runs at a time) up to KEPT_WRITE_BUFFER_BYTES. */
  private writeBuffer: Buffer | undefined;
  private lazyTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly compactMinBytes: number;

  private constructor(
    private readonly opts: PoolJournalOptions,
    private fh: FileHandle | undefined,
  ) {
    this.compactMinBytes = opts.compactMinBytes ?? COMPACT_MIN_BYTES;
    this.commits = new GroupCommit((ops) => this.write(ops));
  }

  /**
   * Opens the journal: reads the file (cutting a torn tail), then moves any legacy `p:` keys of
   * the chain database into it and deletes them, so an older data directory keeps its pending
   * transactions. Without a path the journal keeps nothing but the faucet's extra writes.
   */
  static async open(opts: PoolJournalOptions): Promise<PoolJournal> {
    const journal = new PoolJournal(opts, opts.path === undefined ? undefined : await PoolJournal.openFile(opts.path));
    try {
      // Without a file there is nowhere to move legacy keys to (and an in-memory database has none).
      if (journal.fh) {
        await journal.load();
        await journal.upgrade();
      }
    } catch (err) {
      await journal.fh?.close().catch(() => undefined);
      throw err;
    }
    return journal;
  }

  /** The journal file, when there is one. */
  get path(): string | undefined {
    return this.opts.path;
  }

  /**
   * Queues the add record of an admitted transaction, the removal of the entries it displaced
   * after it (so a crash never keeps the removal without the replacement) and `extra` chain
   * writes (the faucet's claim), which are synced before the records; resolves once all are.
   */
  add(tx: JournalEntry, displaced: readonly string[] = [], extra?: WriteBatch): Promise<void> {
    return this.addMany([{ tx, displaced }], extra?.ops);
  }

  /**
   * `add` for many transactions as one write of the group commit (admission's batches): their
   * records in order, each followed by the removal of what it displaced; one promise for all.
   */
  addMany(items: ReadonlyArray<{ tx: JournalEntry; displaced: readonly string[] }>, extra: readonly BatchOp[] = []): Promise<void> {
    if (this.fh === undefined) {
      // No file (in-memory node): only the extra writes have somewhere to go.
      if (extra.length === 0) return Promise.resolve();
      return this.commits.submit([{ records: [], writes: 0, extra }]).catch((err: unknown) => {
        throw new JournalError(err);
      });
    }
    const records: Array<Uint8Array | JournalEntry> = [];
    const added = new Array<LiveEntry>(items.length);
    for (let i = 0; i < items.length; i++) {
      const { tx, displaced } = items[i]!;
      // Checked here, so a bad hash refuses this call alone rather than the whole group-commit write.
      if (!isRecordableHash(tx.hash)) throw new RangeError(`not a 32-byte hash: ${tx.hash}`);
      // The record is encoded by the writer, from the entry itself (its fields never change).
      records.push(tx);
      const entry: LiveEntry = { envelope: tx.envelope, receivedAt: tx.receivedAt, bytes: addRecordBytes(tx.envelope.length) };
      this.forgetLive(tx.hash);
      this.live.set(tx.hash, entry);
      this.liveBytes += entry.bytes;
      added[i] = entry;
      if (displaced.length === 0) continue;
      const gone = displaced.filter((h) => this.forgetLive(h));
      if (gone.length > 0) for (const r of encodeRemove(gone)) records.push(r);
    }
    const op: JournalOp = extra.length > 0 ? { records, writes: items.length, extra } : { records, writes: items.length };
    return this.commits.submit([op]).catch((err: unknown) => {
      // Not durable, so not kept: the caller takes the transactions out of the pool too.
      for (let i = 0; i < items.length; i++) {
        const hash = items[i]!.tx.hash;
        if (this.live.get(hash) === added[i]) this.forgetLive(hash);
      }
      throw new JournalError(err);
    });
  }

  /**
   * Forgets transactions that left the pool (included, stale, evicted, dropped on replay).
   * Nobody waits on it and it costs no sync of its own: the records ride with the next
   * admission's write, or a timer's.
   */
  remove(hashes: readonly string[]): void {
    if (this.unjournaled.length > 0) this.unjournaled = this.unjournaled.filter((e) => !hashes.includes(e.hash));
    const gone = hashes.filter((h) => this.forgetLive(h));
    if (gone.length === 0 || this.fh === undefined || this.closed) return;
    this.commits.defer([{ records: encodeRemove(gone), writes: 1 }]);
    this.lazyTimer ??= setTimeout(() => {
      this.lazyTimer = undefined;
      this.commits.submit([]).catch((err: Error) => this.opts.log.warn('pool journal removal failed', { error: err.message }));
    }, LAZY_FLUSH_MS).unref();
    this.maybeCompact();
  }

  /** The journaled transactions, in the order they were journaled (the start-up replay reads them once). */
  entries(): JournalEntry[] {
    return [...this.live].map(([hash, e]): JournalEntry => ({ hash, envelope: e.envelope, receivedAt: e.receivedAt })).concat(this.unjournaled);
  }

  /** Resolves once every queued write has been attempted, deferred removals included. */
  async drain(): Promise<void> {
    await this.commits.drain();
  }

  /** Drains, lets a running compaction finish, and closes the file; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    await this.compacting;
    await this.drain();
    await this.fh?.close();
  }

  /** Opens the file for positional writes, creating it (atomically, with its magic) when absent or empty. */
  private static async openFile(path: string): Promise<FileHandle> {
    // A compaction a crash interrupted: the old file is still the journal.
    await rm(`${path}.compact`, { force: true });
    const size = await stat(path).then((s) => s.size, (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return 0;
      throw err;
    });
    if (size === 0) {
      const tmp = `${path}.new`;
      const fh = await open(tmp, 'w');
      try {
        await fh.write(JOURNAL_MAGIC, 0, JOURNAL_MAGIC.length, 0);
        await fh.datasync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      await syncDir(path);
    }
    return open(path, 'r+');
  }

  /** Reads the file into the live set; a torn tail is cut off (and synced cut) with a warning. */
  private async load(): Promise<void> {
    const fh = this.fh!;
    const path = this.opts.path!;
    const size = (await fh.stat()).size;
    const { live, end, torn, corrupt } = await readLive(fh, size, path);
    // Never acknowledged (a record whose envelope was not fully written) or damaged since: not replayable either way.
    if (corrupt.length > 0) this.opts.log.warn('pool journal records skipped: envelope does not match its hash', { path, hashes: corrupt.slice(0, 10), count: corrupt.length });
    if (torn !== undefined) {
      // Only a write that was never acknowledged can be torn: what precedes it was synced first.
      this.opts.log.warn('pool journal torn tail cut', { path, at: end, bytes: size - end, reason: torn });
      await fh.truncate(end);
      await fh.datasync();
    }
    for (const [hash, e] of live) {
      this.live.set(hash, e);
      this.liveBytes += e.bytes;
    }
    this.size = end;
    if (end > JOURNAL_MAGIC.length) this.opts.log.info('pool journal read', { path, live: live.size, bytes: end });
  }

  /** Moves the chain database's legacy `p:` keys into the file (journal-legacy.ts). */
  private async upgrade(): Promise<void> {
    this.unjournaled = await upgradeLegacyKeys(this.opts.store, this.opts.log, { has: (hash) => this.live.has(hash), add: (e) => this.add(e) });
  }

  /** Removes `hash` from the live set; whether it was there. */
  private forgetLive(hash: string): boolean {
    const e = this.live.get(hash);
    if (e === undefined) return false;
    this.live.delete(hash);
    this.liveBytes -= e.bytes;
    return true;
  }

  /** The group commit's writer: chain writes first, then the records, then one fdatasync. */
  private async write(ops: JournalOp[]): Promise<void> {
    const extra = ops.flatMap((op) => op.extra ?? []);
    if (extra.length > 0) await this.opts.store.db.batch(extra as never, { sync: true } as never);
    if (this.fh === undefined) return;
    if (this.swapReady) await this.swap(this.swapReady);
    const fh = this.fh;
    let bytes = 0;
    for (const op of ops) for (const r of op.records) bytes += r instanceof Uint8Array ? r.length : addRecordBytes(r.envelope.length);
    if (bytes === 0) return;
    const buf = this.bufferFor(bytes);
    let at = 0;
    for (const op of ops) {
      for (const r of op.records) {
        if (r instanceof Uint8Array) {
          buf.set(r, at);
          at += r.length;
        } else {
          at = encodeAddInto(buf, at, r.hash, r.receivedAt, r.envelope);
        }
      }
    }
    try {
      const { bytesWritten } = await fh.write(buf, 0, bytes, this.size);
      if (bytesWritten !== bytes) throw new Error(`wrote ${bytesWritten} of ${bytes} bytes`);
      await fh.datasync();
    } catch (err) {
      // Not acknowledged, so not kept: the next write goes where these records went, and what
      // they left past that is cut now, so no unacknowledged record can follow a later one.
      await fh.truncate(this.size).catch(() => undefined);
      throw err;
    }
    this.size += bytes;
    // A copy (Buffer's slice would be a view): the buffer is the next write's.
    if (this.tail) this.tail.push(new Uint8Array(buf.subarray(0, bytes)));
    let writes = 0;
    for (const op of ops) if (op.records.length > 0) writes += op.writes;
    this.opts.synced?.(writes);
    this.maybeCompact();
  }

  /** A buffer of at least `bytes` for one write: the kept one, grown when needed, unless the write is unusually large. */
  private bufferFor(bytes: number): Buffer {
    if (this.writeBuffer !== undefined && this.writeBuffer.length >= bytes) return this.writeBuffer;
    // Slow (unpooled) allocation: a pooled slice would pin Node's shared 8 KB pool for no use.
    const buf = Buffer.allocUnsafeSlow(Math.max(bytes, this.writeBuffer?.length ?? 0));
    if (buf.length <= KEPT_WRITE_BUFFER_BYTES) this.writeBuffer = buf;
    return buf;
  }

  /** Starts a compaction when the file is large and mostly dead, unless one runs. */
  private maybeCompact(): void {
    if (this.compacting || this.closed || this.fh === undefined) return;
    if (!compactionDue(this.size, this.liveBytes, this.compactMinBytes)) return;
    this.compacting = this.compact()
      .catch((err: Error) => this.opts.log.warn('pool journal compaction failed', { error: err.message }))
      .finally(() => {
        this.compacting = undefined;
      });
  }

  /**
   * Writes the live set, as of now, to a new file in chunks (journal-compaction.ts), then has the
   * writer swap it in before its next write: the records appended since the snapshot are copied
   * over first.
   */
  private async compact(): Promise<void> {
    // Set in the same tick as writeCompacted's snapshot, so the tail holds every record written after it.
    this.tail = [];
    try {
      this.swapReady = await writeCompacted(this.opts.path!, this.live);
    } catch (err) {
      this.tail = undefined;
      throw err;
    }
    // The swap runs in the writer, between two appends; this empty write makes one happen now.
    await this.commits.submit([]);
  }

  /** Swaps a compacted file in (inside the writer, so no append is in flight). A failure keeps the old file. */
  private async swap(c: Compacted): Promise<void> {
    this.swapReady = undefined;
    const tail = this.tail ?? [];
    this.tail = undefined;
    const before = this.size;
    const size = await swapInCompacted(c, this.fh!, tail, this.opts.path!, this.opts.log);
    if (size === undefined) return;
    this.fh = c.fh;
    this.size = size;
    this.opts.log.info('pool journal compacted', { bytes_before: before, bytes_after: this.size, live: this.live.size });
  }
}

/**
 * The live entries of the journal file at `path`, as a restart would find them (read-only: a
 * torn tail is skipped, not cut). For inspection and tests; the node reads its journal at open.
 */
export async function readJournalFile(path: string): Promise<JournalEntry[]> {
  const fh = await open(path, 'r');
  try {
    const { live } = await readLive(fh, (await fh.stat()).size, path);
    return [...live].map(([hash, e]) => ({ hash, envelope: e.envelope, receivedAt: e.receivedAt }));
  } finally {
    await fh.close();
  }
}

/** Replays the records of an open journal file into its live set, in file order. */
async function readLive(fh: FileHandle, size: number, path: string): Promise<{ live: Map<string, LiveEntry> } & ScanResult> {
  const magic = Buffer.alloc(JOURNAL_MAGIC.length);
  await fh.read(magic, 0, magic.length, 0);
  if (!magic.equals(JOURNAL_MAGIC)) throw new JournalFormatError(path);
  const live = new Map<string, LiveEntry>();
  const result = await scanRecords(fh, size, (rec) => {
    if (rec.kind === 'add') {
      // Deleted first, so a re-added hash moves to the end: the map's order stays file order.
      live.delete(rec.hash);
      live.set(rec.hash, { envelope: rec.envelope, receivedAt: rec.receivedAt, bytes: rec.bytes });
    } else {
      for (const h of rec.hashes) live.delete(h);
    }
  });
  return { live, ...result };
}
