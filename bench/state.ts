/**
 * State trie (`npm run bench -- --only state`), each figure beside its limit:
 *  1. per-block state update (prefetch of the touched paths, the view's changes, the new root,
 *     the synced batch, the cache update) for 1,428 touched accounts (1,400 distinct existing ones
 *     drawn uniformly at random, a new draw per block, and 28 new ones) at 10,000, 100,000 and
 *     1,000,000 accounts: the median of 40 timed blocks (20 from each of REPLICAS processes), with
 *     the 90th percentile beside it, the sizes taking turns of 4 (see measureSizes); goal: the 1,000,000 median within 2× of the 10,000 median (each row also prints
 *     the median CPU time per block, all threads, and its ratio: on a loaded machine that holds
 *     where the wall time does not);
 *  2. resident memory of the process holding the 1,000,000-account state after those blocks;
 *     goal: under 500 MB.
 * Each size is built by one child process (state-child.ts) on a LevelDB in a temp directory with
 * the commit path blocks use, 20,000 accounts per commit (the bulk path: no transactions, no
 * signatures), each chunk's replaced nodes pruned as finality would, and measured by another that
 * reopens it, so no size's memory or cache helps another's. The measured process is a restarted
 * node once its start-up warm-up (the account trie's upper levels, read in the background) is
 * done; the warm-up's time is printed beside the block time. The measuring processes of all sizes
 * are alive together (about 1.8 GB: two per size, see REPLICAS), each idle while another's turn runs.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchResult, formatTable, quantile } from './harness.js';
import type { BuiltState, StateChildCommand, StateChildMessage, StateChildResult } from './state-child.js';

/** Accounts a block touches in the issue's measurement. */
export const TOUCHED = 1_428;
const SIZES = [10_000, 100_000, 1_000_000] as const;
const GROWTH_LIMIT = 2;
const RSS_LIMIT_MB = 500;
const CHILD = fileURLToPath(new URL('./state-child.js', import.meta.url));

/** Timed blocks per size: 5 turns of 4, enough for a median and a 90th percentile that one slow block does not move. */
const TURNS = 5;
const TIMED_PER_TURN = 4;
/** Untimed blocks before a size's first turn (the first blocks after a restart compile the hot paths) and before each later one. */
const FIRST_LEAD = 3;
const LEAD = 1;
/**
 * Measuring processes per size, each on its own copy of the built state, their blocks pooled into
 * one median: a process's median moves by up to a quarter between processes minutes apart (its
 * compiled code, where its collections fall), for every size alike, and one process per size let
 * that decide the ratio.
 */
const REPLICAS = 2;

/** Runs a `build` child; resolves with the root it wrote. */
function build(dir: string, accounts: number): Promise<BuiltState> {
  return new Promise((resolve, reject) => {
    const c = fork(CHILD, ['build', dir, String(accounts)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: BuiltState | undefined;
    c.once('message', (m: BuiltState) => (result = m));
    c.once('exit', (code) => (result ? resolve(result) : reject(new Error(`state bench build child (${accounts}) exited with code ${code}`))));
  });
}

/** A warm `blocks` child and the way to drive it: one message out, the next message back. */
class BlocksChild {
  private readonly inbox: StateChildMessage[] = [];
  private waiter?: { resolve: (m: StateChildMessage) => void; reject: (e: Error) => void };
  private exited?: Error;
  private readonly exit: Promise<void>;

  private constructor(
    readonly accounts: number,
    private readonly proc: ChildProcess,
  ) {
    proc.on('message', (m: StateChildMessage) => {
      if (this.waiter) this.waiter.resolve(m);
      else this.inbox.push(m);
      this.waiter = undefined;
    });
    this.exit = new Promise((resolve) =>
      proc.once('exit', (code) => {
        this.exited = new Error(`state bench blocks child (${accounts}) exited with code ${code}`);
        this.waiter?.reject(this.exited);
        resolve();
      }),
    );
  }

  /** Starts the child on `dir` and resolves once its warm-up is done. */
  static async start(dir: string, accounts: number, built: BuiltState): Promise<BlocksChild> {
    const c = new BlocksChild(accounts, fork(CHILD, ['blocks', dir, String(accounts), String(TOUCHED), JSON.stringify(built)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    await c.next();
    return c;
  }

  /** Runs one turn: `lead` untimed blocks, then `timed` timed ones; resolves once the child's threads are idle again. */
  async turn(lead: number, timed: number): Promise<void> {
    this.proc.send({ turn: { lead, timed } } satisfies StateChildCommand);
    await this.next();
  }

  /** Ends the child; resolves with its figures once it has closed its database and exited. */
  async finish(): Promise<StateChildResult> {
    this.proc.send({ finish: true } satisfies StateChildCommand);
    const m = await this.next();
    if (!('result' in m)) throw new Error(`state bench blocks child (${this.accounts}) answered finish with ${JSON.stringify(m)}`);
    await this.exit;
    return m.result;
  }

  /** Stops the child if it is still running; resolves once it has exited. */
  async kill(): Promise<void> {
    if (!this.exited) this.proc.kill();
    await this.exit;
  }

  private next(): Promise<StateChildMessage> {
    const m = this.inbox.shift();
    if (m) return Promise.resolve(m);
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }
}

/**
 * Builds every size, then warms one `blocks` child per size (one at a time, so each warm-up's time
 * is its own) and alternates their turns, rotating the order every round: each size's blocks are
 * spread over the same minutes, so a slower spell of this shared machine weighs on every size
 * alike instead of on whichever size ran then. A turn ends only once its child's background
 * threads are idle, so no size's work runs while another's blocks are timed.
 */
async function measureSizes(): Promise<Array<{ merged: StateChildResult; replicas: StateChildResult[] }>> {
  const dirs: string[] = [];
  const children: BlocksChild[] = [];
  try {
    const built: BuiltState[] = [];
    for (const n of SIZES) {
      dirs.push(await mkdtemp(join(tmpdir(), 'svc-bench-state-')));
      built.push(await build(dirs.at(-1)!, n));
    }
    // Replica r of size i is children[r * SIZES.length + i], on its own copy of the built state.
    for (let r = 0; r < REPLICAS; r++) {
      for (let i = 0; i < SIZES.length; i++) {
        let dir = dirs[i]!;
        if (r > 0) {
          dirs.push((dir = await mkdtemp(join(tmpdir(), 'svc-bench-state-'))));
          await cp(dirs[i]!, dir, { recursive: true });
        }
        children.push(await BlocksChild.start(dir, SIZES[i]!, built[i]!));
      }
    }
    for (let t = 0; t < TURNS; t++) {
      for (let k = 0; k < children.length; k++) await children[(t + k) % children.length]!.turn(t === 0 ? FIRST_LEAD : LEAD, TIMED_PER_TURN);
    }
    const results: StateChildResult[] = [];
    for (const c of children) results.push(await c.finish());
    return SIZES.map((_, i) => {
      const replicas = results.filter((_, k) => k % SIZES.length === i);
      return { merged: pool(replicas), replicas };
    });
  } finally {
    for (const c of children) await c.kill();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

/** One size's figures from its replicas: medians and p90s over all their blocks, the largest resident memory. */
function pool(replicas: StateChildResult[]): StateChildResult {
  const all = (f: (r: StateChildResult) => number[]) => replicas.flatMap(f);
  const largest = replicas.reduce((a, b) => (b.rssMb > a.rssMb ? b : a));
  return {
    ...largest,
    blockMs: quantile(all((r) => r.blocksMs), 0.5),
    blockP90Ms: quantile(all((r) => r.blocksMs), 0.9),
    blocksMs: all((r) => r.blocksMs),
    blockCpuMs: quantile(all((r) => r.blocksCpuMs), 0.5),
    blockCpuP90Ms: quantile(all((r) => r.blocksCpuMs), 0.9),
    blocksCpuMs: all((r) => r.blocksCpuMs),
    blockMainCpuMs: quantile(all((r) => r.blocksMainCpuMs), 0.5),
    blockOtherCpuMs: quantile(all((r) => r.blocksOtherCpuMs), 0.5),
    blocksMainCpuMs: all((r) => r.blocksMainCpuMs),
    blocksOtherCpuMs: all((r) => r.blocksOtherCpuMs),
    warmMs: Math.max(...replicas.map((r) => r.warmMs)),
  };
}

/** Runs the state rows. */
export async function runStateBench(opts: { print: boolean }): Promise<{ results: BenchResult[]; details: StateChildResult[] }> {
  const sizes = await measureSizes();
  const details = sizes.map((s) => s.merged);
  const base = details[0]!.blockMs;
  const baseCpu = details[0]!.blockCpuMs;
  const results: BenchResult[] = details.map((d) => ({
    name: `state root update, ${TOUCHED} touched of ${d.accounts.toLocaleString('en-US')} accounts`,
    backend: 'trie',
    unit: 'ms',
    value: d.blockMs,
    ratio: d.blockMs / base,
    note: `median of ${d.blocksMs.length} blocks in ${REPLICAS} processes (their own medians ${sizes.find((s) => s.merged === d)!.replicas.map((r) => r.blockMs.toFixed(1)).join(' and ')} ms), ${d.accounts === SIZES[0] ? 'reference' : `${(d.blockMs / base).toFixed(2)}× the 10,000 median (limit ${GROWTH_LIMIT}×)`}, p90 ${d.blockP90Ms.toFixed(0)} ms; CPU ${d.blockCpuMs.toFixed(0)} ms per block (median, all threads${d.accounts === SIZES[0] ? '' : `, ${(d.blockCpuMs / baseCpu).toFixed(2)}×`}; p90 ${d.blockCpuP90Ms.toFixed(0)} ms${d.blockMainCpuMs < 0 ? '' : `; main thread ${d.blockMainCpuMs.toFixed(0)}, other threads ${d.blockOtherCpuMs.toFixed(0)}`}); ${d.nodesWritten.toLocaleString('en-US')} nodes (${(d.bytesWritten / 1e3).toFixed(0)} kB) written per block; after a ${Math.round(d.warmMs)} ms start-up warm-up (${d.warmNodes.toLocaleString('en-US')} nodes, ${d.warmLevels} whole levels, ${d.warmMb.toFixed(0)} MB); build ${d.buildSeconds.toFixed(0)} s`,
  }));
  const big = details[details.length - 1]!;
  results.push({
    name: `resident memory with ${big.accounts.toLocaleString('en-US')} accounts`,
    backend: 'trie',
    unit: 'MB',
    value: big.rssMb,
    ratio: big.rssMb / RSS_LIMIT_MB,
    note: `${(big.rssMb / RSS_LIMIT_MB).toFixed(2)}× the ${RSS_LIMIT_MB} MB limit (anonymous ${big.rssAnonMb.toFixed(0)} MB, file-backed ${big.rssFileMb.toFixed(0)} MB; V8 heap ${big.heapUsedMb.toFixed(0)} MB, node cache ${big.cacheMb.toFixed(0)} MB)`,
  });
  if (opts.print) console.log(formatTable('State trie', results));
  return { results, details };
}
