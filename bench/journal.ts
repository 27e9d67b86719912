/**
 * Pool journal rows (part of the execution suite): group-committed appends of real-size signed
 * envelopes to the journal file in a temp directory (adds per second and CPU per add by thread,
 * against the verifier floor admission is bounded by), and a compaction of a mostly
 * dead file (the longest the main thread held the event loop while it ran, against the "few
 * ms" goal).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { MemoryLevel } from 'memory-level';
import { toHex } from '../src/core/codec/bytes.js';
import { sha3 } from '../src/core/crypto/hash.js';
import { type JournalEntry, PoolJournal, POOL_JOURNAL_FILE } from '../src/node/execution/txpool/journal.js';
import { ChainStore, type Db } from '../src/node/shared/store.js';
import { silentLogger } from '../src/util/log.js';
import { type BenchResult, EVENT_LOOP_BLOCK_GOAL_MS, eventLoopBlockNote } from './harness.js';
import { formatCpu, startCpu, watchLoop } from './threads.js';

/** Adds in flight at once: one REST batch body's worth, as the batch admission row submits. */
const APPEND_IN_FLIGHT = 128;
const APPEND_COUNT = 8_000;
/** Compaction: this many live entries of COMPACT_WRITTEN written (past the 2x dead ratio and the 16 MiB floor). */
const COMPACT_LIVE = 3_000;
const COMPACT_WRITTEN = 10_000;
/** Removals per call, as a 30M-gas block of transfers includes them. */
const REMOVALS_PER_BLOCK = 1_428;

/** Journal rows' figures. */
export interface JournalFigures {
  appendPerSecond: number;
  appendSyncs: number;
  appendCpu: string;
  compactMs: number;
  compactLongestBlockMs: number;
  compactLongestBlockCpuMs: number;
  compactBytesBefore: number;
  compactBytesAfter: number;
}

/** Entries `from`..`from + n - 1` shaped like `envelope` (same size), each distinct, under its own SHA3 hash. */
function entries(envelope: Uint8Array, n: number, from = 0): JournalEntry[] {
  return Array.from({ length: n }, (_, i) => {
    const e = envelope.slice();
    new DataView(e.buffer).setUint32(e.length - 4, from + i);
    return { hash: toHex(sha3(e)), envelope: e, receivedAt: Date.now() };
  });
}

async function open(path: string, synced?: (writes: number) => void): Promise<PoolJournal> {
  const store = new ChainStore(new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db);
  return PoolJournal.open({ path, store, log: silentLogger, ...(synced ? { synced } : {}) });
}

/** Appends and a compaction on a fresh journal file; `floor` (the verifier floor, tx/s on all cores) is the append row's reference. */
export async function journalRows(envelope: Uint8Array, floor: number): Promise<{ results: BenchResult[]; figures: JournalFigures }> {
  const dir = await mkdtemp(join(os.tmpdir(), 'svc-bench-journal-'));
  try {
    // (1) Appends, APPEND_IN_FLIGHT at a time, each batch awaited (a sync per batch at most).
    let syncs = 0;
    let journal = await open(join(dir, POOL_JOURNAL_FILE), () => syncs++);
    const warm = entries(envelope, APPEND_IN_FLIGHT * 4);
    for (let i = 0; i < warm.length; i += APPEND_IN_FLIGHT) await Promise.all(warm.slice(i, i + APPEND_IN_FLIGHT).map((e) => journal.add(e)));
    const timed = entries(envelope, APPEND_COUNT, warm.length);
    syncs = 0;
    const cpu = startCpu();
    const t0 = performance.now();
    for (let i = 0; i < timed.length; i += APPEND_IN_FLIGHT) await Promise.all(timed.slice(i, i + APPEND_IN_FLIGHT).map((e) => journal.add(e)));
    const seconds = (performance.now() - t0) / 1000;
    const split = cpu.finish(seconds, {});
    await journal.close();
    const appendPerSecond = APPEND_COUNT / seconds;

    // (2) A compaction: all but COMPACT_LIVE of COMPACT_WRITTEN removed a block's worth at a
    // time; the last removal starts it (synchronously taking its snapshot), then a tick chain
    // measures the loop while it runs; close() waits for it.
    const cpath = join(dir, `compact-${POOL_JOURNAL_FILE}`);
    journal = await open(cpath);
    const all = entries(envelope, COMPACT_WRITTEN);
    for (let i = 0; i < all.length; i += APPEND_IN_FLIGHT) await Promise.all(all.slice(i, i + APPEND_IN_FLIGHT).map((e) => journal.add(e)));
    const before = (await stat(cpath)).size;
    const removed = all.slice(0, COMPACT_WRITTEN - COMPACT_LIVE).map((e) => e.hash);
    for (let i = 0; i < removed.length; i += REMOVALS_PER_BLOCK) journal.remove(removed.slice(i, i + REMOVALS_PER_BLOCK));
    const loop = watchLoop();
    const c0 = performance.now();
    await journal.close();
    const compactMs = performance.now() - c0;
    const block = loop.stop();
    const after = (await stat(cpath)).size;
    const figures: JournalFigures = {
      appendPerSecond,
      appendSyncs: syncs,
      appendCpu: formatCpu(split, APPEND_COUNT).replace('µs/tx', 'µs/add'),
      compactMs,
      compactLongestBlockMs: block.wallMs,
      compactLongestBlockCpuMs: block.cpuMs,
      compactBytesBefore: before,
      compactBytesAfter: after,
    };
    const MB = 1 << 20;
    const results: BenchResult[] = [
      {
        name: `pool journal append (${envelope.length} B envelopes, ${APPEND_IN_FLIGHT} at a time)`,
        backend: `file + fdatasync, ${syncs} syncs for ${APPEND_COUNT}`,
        unit: 'tx/s',
        value: appendPerSecond,
        ratio: appendPerSecond / floor,
        note: `${(appendPerSecond / floor).toFixed(2)}x the verifier floor; ${figures.appendCpu}`,
      },
      {
        name: `pool journal compaction (${COMPACT_LIVE.toLocaleString('en-US')} live of ${COMPACT_WRITTEN.toLocaleString('en-US')}), longest event-loop block, CPU`,
        backend: `${(before / MB).toFixed(0)} MB -> ${(after / MB).toFixed(0)} MB in ${compactMs.toFixed(0)} ms`,
        unit: 'ms',
        value: block.cpuMs,
        ratio: block.cpuMs / EVENT_LOOP_BLOCK_GOAL_MS,
        note: `${eventLoopBlockNote(block.cpuMs)}; wall ${block.wallMs.toFixed(1)} ms; longest GC pause ${block.gcMs.toFixed(1)} ms`,
      },
    ];
    return { results, figures };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
