/**
 * Contract VM benchmark (`npm run bench -- --only vm`): the cost of metering. Each workload is
 * AssemblyScript compiled by the installed compiler, run once as the plain module and once in
 * its stored (instrumented) form, both called straight through the engine so that the only
 * difference is the injected gas and depth accounting. Goal: metered at most 2x the plain time.
 * A third row is whole contract calls through runContractTx on an in-memory state.
 */
import v8 from 'node:v8';
import asc from 'assemblyscript/asc';
import { type BenchResult, formatTable, measure } from './harness.js';
import { GAS_EXPORT, instrument, START_EXPORT } from '../src/node/execution/vm/instrument.js';
import { validateModule } from '../src/node/execution/vm/validate.js';

const METERING_GOAL = 2;
const ROUNDS = 5;

const SOURCE = `
@external("svc", "revert") declare function revert(p: usize, l: i32): void;
export function svcAbort(msg: usize, file: usize, line: u32, col: u32): void { revert(0, 0); }
// Top-level code becomes the start function, which the stored form runs only when the VM calls it.
memory.grow(2);

/** xorshift64: integer arithmetic in a tight loop. */
export function xorshift(): void {
  let x: u64 = 88172645463325252;
  for (let i: u32 = 0; i < 100000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  store<u64>(0, x);
}

/** Sieve of Eratosthenes over 60,000 bytes: loads, stores, nested loops and a bulk fill. */
export function sieve(): void {
  const n: u32 = 60000;
  memory.fill(1024, 1, n);
  for (let i: u32 = 2; i * i < n; i++) {
    if (load<u8>(1024 + i)) for (let j = i * i; j < n; j += i) store<u8>(1024 + j, 0);
  }
  let count: u32 = 0;
  for (let i: u32 = 2; i < n; i++) count += load<u8>(1024 + i);
  store<u32>(0, count);
}

/** Many small calls: recursion-heavy code pays the depth accounting on every call. */
function fib(n: u32): u32 { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
export function calls(): void { store<u32>(0, fib(20)); }
`;

/** Runs the vm suite and prints its table. */
export async function runVmBench(opts: { seconds: number; print: boolean }): Promise<BenchResult[]> {
  // Optimised code on both sides from the first call: V8 tiers up from its baseline compiler in
  // background threads, which on a busy machine can leave one side on baseline code for a whole
  // measurement and compare compilers instead of metering.
  v8.setFlagsFromString('--no-liftoff');
  const out = await asc.compileString(SOURCE, { runtime: 'stub', optimizeLevel: 3, use: ['abort=input/svcAbort'] });
  if (!out.binary) throw new Error(`AssemblyScript compile failed: ${out.stderr.toString()}`);
  const plain = new WebAssembly.Instance(new WebAssembly.Module(out.binary), { svc: { revert: () => undefined } }).exports;
  const metered = new WebAssembly.Instance(new WebAssembly.Module(instrument(validateModule(out.binary))), { svc: { revert: () => undefined } }).exports;
  const gas = metered[GAS_EXPORT] as WebAssembly.Global;
  gas.value = 1n << 62n;
  (metered[START_EXPORT] as () => void)();
  const results: BenchResult[] = [];
  for (const name of ['xorshift', 'sieve', 'calls']) {
    const p = plain[name] as () => void;
    const m = metered[name] as () => void;
    const mem = (e: WebAssembly.Exports): DataView => new DataView((e.memory as WebAssembly.Memory).buffer);
    p();
    gas.value = 1n << 62n;
    m();
    if (mem(plain).getBigUint64(0, true) !== mem(metered).getBigUint64(0, true)) throw new Error(`${name}: metered and plain results differ`);
    // Interleaved rounds, best of each: other load on a shared machine hits both sides alike.
    let plainRate = 0;
    let meteredRate = 0;
    for (let round = 0; round < ROUNDS; round++) {
      plainRate = Math.max(plainRate, measure(p, opts.seconds / ROUNDS));
      meteredRate = Math.max(
        meteredRate,
        measure(() => {
          gas.value = 1n << 62n;
          m();
        }, opts.seconds / ROUNDS),
      );
    }
    const gasPerRun = (1n << 62n) - (gas.value as bigint);
    const slowdown = plainRate / meteredRate;
    results.push({ name: `${name}, plain module`, backend: 'V8', unit: 'ops/s', value: plainRate, note: 'reference' });
    results.push({
      name: `${name}, metered (${gasPerRun.toLocaleString('en-US')} gas a run)`,
      backend: 'V8',
      unit: 'ops/s',
      value: meteredRate,
      ratio: slowdown / METERING_GOAL,
      note: `${slowdown.toFixed(2)}x plain time, goal <= ${METERING_GOAL}x (${(slowdown / METERING_GOAL).toFixed(2)} of limit)`,
    });
  }
  if (opts.print) console.log(formatTable('Contract VM: metering overhead', results));
  return results;
}
