/**
 * State trie (`npm run bench -- --only state`), each figure beside its limit:
 *  1. per-block state update (prefetch of the touched paths, the view's changes, the new root,
 *     the synced batch, the cache update) for 1,428 touched accounts (1,400 distinct existing ones
 *     drawn uniformly at random, a new draw per block, and 28 new ones) at 10,000, 100,000 and
 *     1,000,000 accounts: the median of 20 blocks after 3 untimed ones, with the 90th percentile
 *     beside it; goal: the 1,000,000 median within 2× of the 10,000 median (each row also prints
 *     the median CPU time per block, all threads, and its ratio: on a loaded machine that holds
 *     where the wall time does not);
 *  2. resident memory of the process holding the 1,000,000-account state after those blocks;
 *     goal: under 500 MB.
 * Each size is built by one child process (state-child.ts) on a LevelDB in a temp directory with
 * the commit path blocks use, 20,000 accounts per commit (the bulk path: no transactions, no
 * signatures), each chunk's replaced nodes pruned as finality would, and measured by another that
 * reopens it, so no size's memory or cache helps another's. The measured process is a restarted
 * node once its start-up warm-up (the account trie's upper levels, read in the background) is
 * done; the warm-up's time is printed beside the block time.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchResult, formatTable } from './harness.js';
import type { BuiltState, StateChildResult } from './state-child.js';

/** Accounts a block touches in the issue's measurement. */
export const TOUCHED = 1_428;
const SIZES = [10_000, 100_000, 1_000_000] as const;
const GROWTH_LIMIT = 2;
const RSS_LIMIT_MB = 500;

function child<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const c = fork(fileURLToPath(new URL('./state-child.js', import.meta.url)), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: T | undefined;
    c.once('message', (m: T) => (result = m));
    c.once('exit', (code) => (result ? resolve(result) : reject(new Error(`state bench child (${args.join(' ')}) exited with code ${code}`))));
  });
}

async function runSize(accounts: number): Promise<StateChildResult> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-state-'));
  try {
    const built = await child<BuiltState>(['build', dir, String(accounts)]);
    return await child<StateChildResult>(['blocks', dir, String(accounts), String(TOUCHED), JSON.stringify(built)]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the state rows. */
export async function runStateBench(opts: { print: boolean }): Promise<{ results: BenchResult[]; details: StateChildResult[] }> {
  const details: StateChildResult[] = [];
  for (const n of SIZES) details.push(await runSize(n));
  const base = details[0]!.blockMs;
  const baseCpu = details[0]!.blockCpuMs;
  const results: BenchResult[] = details.map((d) => ({
    name: `state root update, ${TOUCHED} touched of ${d.accounts.toLocaleString('en-US')} accounts`,
    backend: 'trie',
    unit: 'ms',
    value: d.blockMs,
    ratio: d.blockMs / base,
    note: `median of ${d.blocksMs.length} blocks, ${d.accounts === SIZES[0] ? 'reference' : `${(d.blockMs / base).toFixed(2)}× the 10,000 median (limit ${GROWTH_LIMIT}×)`}, p90 ${d.blockP90Ms.toFixed(0)} ms; CPU ${d.blockCpuMs.toFixed(0)} ms per block (median, all threads${d.accounts === SIZES[0] ? '' : `, ${(d.blockCpuMs / baseCpu).toFixed(2)}×`}; p90 ${d.blockCpuP90Ms.toFixed(0)} ms${d.blockMainCpuMs < 0 ? '' : `; main thread ${d.blockMainCpuMs.toFixed(0)}, other threads ${d.blockOtherCpuMs.toFixed(0)}`}); ${d.nodesWritten.toLocaleString('en-US')} nodes (${(d.bytesWritten / 1e3).toFixed(0)} kB) written per block; after a ${Math.round(d.warmMs)} ms start-up warm-up (${d.warmNodes.toLocaleString('en-US')} nodes, ${d.warmLevels} whole levels, ${d.warmMb.toFixed(0)} MB); build ${d.buildSeconds.toFixed(0)} s`,
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
