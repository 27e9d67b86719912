/**
 * One size of the state bench (state.ts), in two processes: `build` writes `accounts` accounts
 * into a fresh LevelDB trie, pruning each chunk's replaced nodes as finality does on a running
 * node; `blocks` reopens it like a restarted node, waits for the start-up warm-up of the account
 * trie's upper levels (StateDb.warm, as the node runs it; its time is reported), then applies, in
 * the turns the parent asks for, blocks that each touch `touched` accounts (distinct existing ones
 * drawn uniformly at random, a new draw per block, plus a few new ones) exactly as import does
 * (prefetch, view, commit, synced batch), and finally reports the median and 90th-percentile block
 * time, the median CPU time per block (main thread and others apart) and its own resident memory.
 * Many blocks are timed so that one garbage collection or LevelDB compaction does not decide a
 * size's figure.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHex, toHex } from '../src/core/codec/bytes.js';
import { ClassicLevel } from 'classic-level';
import { ChainStore, type Db, WriteBatch } from '../src/node/shared/store.js';
import { StateDb } from '../src/node/execution/state/db.js';
import { EMPTY_REF, type NodeRef } from '../src/node/execution/state/trie.js';
import type { View } from '../src/node/execution/state/view.js';
import { DEFAULT_CHAIN_CACHE } from '../src/node/execution/blocks.js';
import { EXECUTION_DB_OPTIONS, STATE_DB_DIR } from '../src/node/execution/store.js';
import { quantile } from './harness.js';

/** What one child reports. */
export interface StateChildResult {
  accounts: number;
  /** Median wall time of the measured blocks. */
  blockMs: number;
  /** 90th-percentile wall time of the measured blocks. */
  blockP90Ms: number;
  blocksMs: number[];
  /**
   * Median CPU time per measured block, all the process's threads (LevelDB's reads and writes
   * included): it holds under load, where the wall time follows the other processes.
   */
  blockCpuMs: number;
  /** 90th-percentile CPU time per measured block, all threads. */
  blockCpuP90Ms: number;
  blocksCpuMs: number[];
  /**
   * Median CPU time per measured block of the main thread (the trie walk, hashing, encoding, the
   * batch's assembly) and of the other threads (LevelDB's reads, write and compaction on libuv's
   * and LevelDB's own threads, V8's garbage-collection helpers); -1 without Linux's /proc.
   */
  blockMainCpuMs: number;
  blockOtherCpuMs: number;
  blocksMainCpuMs: number[];
  blocksOtherCpuMs: number[];
  /** Distinct existing accounts each block touched, and the new ones it created. */
  touchedExisting: number;
  createdPerBlock: number;
  /** Nodes each block wrote (median), internal nodes and leaves together. */
  nodesWritten: number;
  /** Bytes of those nodes as stored (median; upper account-trie nodes are stored hashless). */
  bytesWritten: number;
  rssMb: number;
  /**
   * Resident memory split as Linux reports it: anonymous (the process's own allocations) and
   * file-backed (LevelDB memory-maps its table files, so pages of the database the reads touched
   * count as resident; the kernel reclaims them under pressure like page cache).
   */
  rssAnonMb: number;
  rssFileMb: number;
  /** V8 heap in use and memory outside it (buffers): what of the resident memory is JavaScript's. */
  heapUsedMb: number;
  externalMb: number;
  /** Reads that missed the cache after the prefetch and went to the reader thread. */
  syncReads: number;
  /** The node cache, upper levels included. */
  cacheMb: number;
  buildSeconds: number;
  /** The start-up warm-up: how long it took, and the nodes and estimated bytes it left held. */
  warmMs: number;
  warmNodes: number;
  warmMb: number;
  warmLevels: number;
}

/** Accounts per bulk commit: large enough to build 1,000,000 in about a minute, small enough to keep the builder's memory low. */
const BUILD_CHUNK = 20_000;
/** New accounts per block, beside the touched existing ones (a block's fresh recipients). */
const NEW_PER_BLOCK = 28;

const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');

/** xorshift32: the touched accounts are random but the same on every run. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/**
 * `count` distinct indices below `n`, uniformly at random. Drawn with replacement, a block at
 * 10,000 accounts would touch about 100 accounts fewer than one at 1,000,000 (repeats), and so
 * look cheaper than the row says it is.
 */
function distinct(next: () => number, n: number, count: number): number[] {
  const seen = new Set<number>();
  while (seen.size < Math.min(count, n)) seen.add(next() % n);
  return [...seen];
}

/** Nanoseconds each thread of this process has run (Linux schedstat: exact, where stat counts 10 ms ticks); empty elsewhere. */
function threadNs(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** CPU ms of the main thread and of all others between two threadNs snapshots; -1 each without /proc. */
function splitCpu(before: Map<number, number>, after: Map<number, number>): { main: number; other: number } {
  if (after.size === 0) return { main: -1, other: -1 };
  let main = 0;
  let other = 0;
  for (const [tid, ns] of after) {
    const d = (ns - (before.get(tid) ?? 0)) / 1e6;
    if (tid === process.pid) main += d;
    else other += d;
  }
  return { main, other };
}

async function commit(state: StateDb, view: View, version: number): Promise<{ root: NodeRef; nodes: number; bytes: number }> {
  const c = state.commit(view, version);
  const batch = new WriteBatch();
  const bytes = state.queue(batch, c);
  await state.write(batch);
  state.committed(c);
  return { root: c.root, nodes: c.puts.size, bytes };
}

/** Finalises the build chunk written as `version`: deletes the nodes it replaced, as a running node's finality does. */
async function finalise(state: StateDb, version: number): Promise<void> {
  const batch = new WriteBatch();
  const deleted = await state.pruneTo(batch, [version], []);
  await state.write(batch);
  state.pruned(deleted);
}

/** kB figures of /proc/self/status (zero where there is none). */
function procStatus(): { RssAnon: number; RssFile: number } {
  const out = { RssAnon: 0, RssFile: 0 };
  try {
    for (const line of readFileSync('/proc/self/status', 'utf8').split('\n')) {
      const m = /^(RssAnon|RssFile):\s+(\d+) kB/.exec(line);
      if (m) out[m[1] as 'RssAnon' | 'RssFile'] = Number(m[2]);
    }
  } catch {
    // Not Linux: the split stays zero, the total RSS is still reported.
  }
  return out;
}

/** Phase 1: writes the accounts; prints the root (version and hash) to the parent. */
async function build(dir: string, accounts: number): Promise<void> {
  const { db, state } = await open(dir);
  try {
    const t0 = performance.now();
    let root = EMPTY_REF;
    let version = 0;
    for (let from = 0; from < accounts; from += BUILD_CHUNK) {
      const chunk = Array.from({ length: Math.min(accounts, from + BUILD_CHUNK) - from }, (_, k) => from + k);
      await state.prefetch(root, chunk.map(addr));
      const view = state.view(root);
      for (const i of chunk) view.addBalance(addr(i), BigInt(i + 1) * 1_000_000_000n);
      root = (await commit(state, view, ++version)).root;
      // Without this the database would hold every chunk's replaced upper levels (about half its
      // size at a million accounts), which no running node keeps past finality.
      await finalise(state, version);
    }
    // A node that has run for a while has compacted its LevelDB; a fresh bulk load has not yet,
    // and its compaction would otherwise run during (and be counted in) the measured blocks.
    await (db as unknown as { compactRange(a: string, b: string): Promise<void> }).compactRange('n:', 'n:\xff');
    process.send!({ version: root.version, hash: toHex(root.hash), lastVersion: version, buildSeconds: (performance.now() - t0) / 1000 } satisfies BuiltState);
  } finally {
    await state.close();
    await db.close();
  }
}

/** What the parent sends a `blocks` child once it is warm: a turn of blocks, or the end. */
export type StateChildCommand = { turn: { lead: number; timed: number } } | { finish: true };

/** What a `blocks` child sends back: warm, a turn done, or (after `finish`) its result. */
export type StateChildMessage = { ready: true } | { turnDone: true } | { result: StateChildResult };

/** Polling interval, quiet span and patience of `quiesce`. */
const QUIET_POLL_MS = 5;
const QUIET_SPAN_MS = 40;
const QUIET_MAX_MS = 3_000;

/**
 * Waits until this process's other threads (LevelDB's compaction, libuv's reads and writes, V8's
 * collector helpers) have used no CPU for QUIET_SPAN_MS, at most QUIET_MAX_MS: the end of a turn,
 * so that the block work of one size never runs while another size's blocks are timed.
 */
async function quiesce(): Promise<void> {
  const until = performance.now() + QUIET_MAX_MS;
  let quietSince = performance.now();
  let last = otherThreadsNs();
  while (performance.now() < until && performance.now() - quietSince < QUIET_SPAN_MS) {
    await new Promise((r) => setTimeout(r, QUIET_POLL_MS));
    const now = otherThreadsNs();
    // Under 0.2 ms of CPU per poll is idle threads waking, not work.
    if (now - last > 200_000) quietSince = performance.now();
    last = now;
  }
}

/** CPU nanoseconds of every thread but the main one. */
function otherThreadsNs(): number {
  let ns = 0;
  for (const [tid, t] of threadNs()) if (tid !== process.pid) ns += t;
  return ns;
}

/**
 * Phase 2, in a fresh process (as a restarted node: nothing loaded): warms up, then applies blocks
 * in the turns the parent asks for (the parent alternates the sizes' turns, so every size is
 * measured over the same minutes of the machine's life), and reports when told to finish.
 */
async function blocks(dir: string, accounts: number, touched: number, built: BuiltState): Promise<void> {
  const { db, state } = await open(dir);
  try {
    let root: NodeRef = { version: built.version, hash: parseHex(built.hash, 'root', 32) };
    let version = built.lastVersion;
    // The node starts this in the background at open; the blocks are measured once it is done.
    const warm = await state.warm(root);
    const next = rng(0x5eed);
    let fresh = accounts;
    const times: number[] = [];
    const cpu: number[] = [];
    const mainCpu: number[] = [];
    const otherCpu: number[] = [];
    const written: number[] = [];
    const writtenBytes: number[] = [];
    const block = async (timed: boolean): Promise<void> => {
      // The draw is not timed: it stands for the block's transactions, which the row leaves out.
      const touchedNow = distinct(next, accounts, touched - NEW_PER_BLOCK).map(addr);
      for (let k = 0; k < NEW_PER_BLOCK; k++) touchedNow.push(addr(fresh++));
      // The thread snapshot (a directory listing and a file read per thread) is taken before the clock starts, not in the block's time.
      const th0 = threadNs();
      const c0 = process.cpuUsage();
      const t = performance.now();
      await state.prefetch(root, touchedNow);
      const view = state.view(root);
      for (const a of touchedNow) view.addBalance(a, 1n);
      const done = await commit(state, view, ++version);
      root = done.root;
      if (!timed) return;
      times.push(performance.now() - t);
      const c = process.cpuUsage(c0);
      const split = splitCpu(th0, threadNs());
      cpu.push((c.user + c.system) / 1000);
      mainCpu.push(split.main);
      otherCpu.push(split.other);
      written.push(done.nodes);
      writtenBytes.push(done.bytes);
    };
    const finished = new Promise<void>((resolve) => {
      let queue = Promise.resolve();
      process.on('message', (m: StateChildCommand) => {
        queue = queue.then(async () => {
          if ('finish' in m) return resolve();
          for (let b = 0; b < m.turn.lead + m.turn.timed; b++) await block(b >= m.turn.lead);
          await quiesce();
          process.send!({ turnDone: true } satisfies StateChildMessage);
        });
      });
    });
    process.send!({ ready: true } satisfies StateChildMessage);
    await finished;
    global.gc?.();
    const mem = process.memoryUsage();
    const status = procStatus();
    const result: StateChildResult = {
      accounts,
      blockMs: quantile(times, 0.5),
      blockP90Ms: quantile(times, 0.9),
      blocksMs: times,
      blockCpuMs: quantile(cpu, 0.5),
      blockCpuP90Ms: quantile(cpu, 0.9),
      blocksCpuMs: cpu,
      blockMainCpuMs: quantile(mainCpu, 0.5),
      blockOtherCpuMs: quantile(otherCpu, 0.5),
      blocksMainCpuMs: mainCpu,
      blocksOtherCpuMs: otherCpu,
      touchedExisting: touched - NEW_PER_BLOCK,
      createdPerBlock: NEW_PER_BLOCK,
      nodesWritten: quantile(written, 0.5),
      bytesWritten: quantile(writtenBytes, 0.5),
      rssMb: mem.rss / 1e6,
      rssAnonMb: status.RssAnon / 1e3,
      rssFileMb: status.RssFile / 1e3,
      heapUsedMb: mem.heapUsed / 1e6,
      externalMb: mem.external / 1e6,
      syncReads: state.nodes.syncReads,
      cacheMb: state.nodes.stats().bytes / 1e6,
      buildSeconds: built.buildSeconds,
      warmMs: warm.ms,
      warmNodes: warm.nodes,
      warmMb: warm.bytes / 1e6,
      warmLevels: warm.levels,
    };
    process.send!({ result } satisfies StateChildMessage);
  } finally {
    await state.close();
    await db.close();
    // The parent's channel is all that keeps this process alive now.
    process.disconnect?.();
  }
}

async function open(dir: string): Promise<{ db: Db; state: StateDb }> {
  const db = new ClassicLevel<string, string>(join(dir, STATE_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
  await db.open();
  return { db, state: await StateDb.open(new ChainStore(db), DEFAULT_CHAIN_CACHE.stateBytes) };
}

/** The root phase 1 wrote. */
export interface BuiltState {
  version: number;
  hash: string;
  lastVersion: number;
  buildSeconds: number;
}

const [phase, dir, accounts, touched, built] = process.argv.slice(2);
if (phase === 'build') await build(dir!, Number(accounts));
else await blocks(dir!, Number(accounts), Number(touched), JSON.parse(built!) as BuiltState);
