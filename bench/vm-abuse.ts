/**
 * The abuse table of `npm run bench -- --only vm`: each hostile shape of issue 33 as one
 * transaction at the block gas cap (or, for shapes that are cheap per transaction, a block full of
 * them), imported as a block through `ExecutionChain.importBlock` on the same LevelDB-backed node
 * as the plain-transfer blocks of vm-blocks.ts. The figure is import milliseconds per million gas
 * the block used, against the plain-transfer blocks' in the same run; the goal is at most
 * ABUSE_GOAL times that, so that gas alone bounds how long any block takes to import.
 */
import asc from 'assemblyscript/asc';
import { encodeDeploy } from '../src/core/codec/calldata.js';
import type { StandardTx } from '../src/core/types/transaction.js';
import type { ImportResult } from '../src/api/execution.js';
import type { WalletKeys } from '../src/wallet/derivation.js';
import { clearModuleCache } from '../src/vm/executor.js';
import { heavyModule, type HeavyShape, ISSUE_HEAVY } from './vm-shapes.js';
import type { BenchResult } from './harness.js';

/** Each shape's import time per gas, at most this many times a plain-transfer block's. */
export const ABUSE_GOAL = 3;
/** Blocks of each shape; the best counts (other load on a shared machine hits every kind alike). */
const ROUNDS = 2;

/** What the abuse rows need from the block bench's node. */
export interface AbuseContext {
  /** Imports a block of `txs` on the head (no receipt status check) and times importBlock. */
  importNext(txs: StandardTx[]): Promise<{ seconds: number; result: ImportResult }>;
  sign(from: WalletKeys, to: string | null, gasLimit: bigint, data: Uint8Array): StandardTx;
  accounts: WalletKeys[];
  maxGas: bigint;
  /** The plain-transfer blocks' best import ms per million gas, this run: warm (admitted first) and cold (signatures verified in the import). */
  plainMsPerMgas: { warm: number; cold: number };
}

const SOURCE = `
@external("svc", "revert") declare function revert(p: usize, l: i32): void;
@external("svc", "caller") declare function caller(p: usize): void;
@external("svc", "input_copy") declare function input_copy(p: usize): void;
@external("svc", "input_size") declare function input_size(): i32;
@external("svc", "call") declare function call(a: usize, i: usize, l: i32, v: usize, g: i64): i32;
@external("svc", "sha3") declare function sha3(p: usize, l: i32, o: usize): void;
@external("svc", "gas_left") declare function gas_left(): i64;
@external("svc", "storage_read") declare function storage_read(k: usize, o: usize): i32;
@external("svc", "storage_write") declare function storage_write(k: usize, v: usize): void;
@external("svc", "balance") declare function balance(a: usize, o: usize): void;
@external("svc", "emit_log") declare function emit_log(t: usize, n: i32, d: usize, l: i32): void;
@external("svc", "set_return") declare function set_return(p: usize, l: i32): void;
@external("svc", "mldsa_verify") declare function mldsa_verify(k: usize, m: usize, l: i32, s: usize): i32;
export function svcAbort(msg: usize, file: usize, line: u32, col: u32): void { revert(0, 0); }
memory.grow(2);
export function spin(): void { let i: u64 = 0; while (true) { i++; store<u64>(0, i); } }
export function callerSpin(): void { while (true) caller(0); }
export function gasSpin(): void { while (true) gas_left(); }
export function sha3Spin(): void { while (true) sha3(0, 0, 64); }
export function sha3WordSpin(): void { while (true) sha3(0, 32, 64); }
export function sha3BigSpin(): void { while (true) sha3(0, 65536, 0); }
export function readSpin(): void { while (true) storage_read(0, 64); }
export function balanceSpin(): void { while (true) balance(0, 64); }
export function writeSpin(): void { let i: u64 = 0; store<u64>(32, 1); while (true) { i++; store<u64>(0, i); storage_write(0, 32); } }
@external("svc", "call_value") declare function call_value(p: usize): void;
export function valueSpin(): void { while (true) call_value(0); }
// Logs of a run that fails are dropped, so these stop while they can still succeed: every log lands in the receipt.
export function logSpin(): void { while (gas_left() > 20000) emit_log(0, 0, 0, 0); }
export function topicSpin(): void { while (gas_left() > 30000) emit_log(0, 4, 0, 0); }
export function dataLogSpin(): void { while (gas_left() > 4300000) emit_log(0, 0, 0, 65536); }
export function returnSpin(): void { while (true) set_return(0, 65536); }
export function mldsaSpin(): void { while (true) mldsa_verify(0, 0, 32, 4096); }
export function growSpin(): void { while (true) memory.grow(1); }
export function revertBig(): void { revert(0, 65536); }
/** Calls the contracts whose addresses are the input (20 bytes each) with method noop, round and round. */
export function callSpin(): void {
  input_copy(1024);
  const n = input_size() / 20;
  store<u32>(200, 0x6f6f6e04);
  store<u8>(204, 0x70);
  for (let i = 0; ; i = (i + 1) % n) call(1024 + 20 * i, 200, 5, 300, 0);
}
/** Calls each contract of the input once. */
export function callEach(): void {
  input_copy(1024);
  const n = input_size() / 20;
  store<u32>(200, 0x6f6f6e04);
  store<u8>(204, 0x70);
  for (let i = 0; i < n; i++) call(1024 + 20 * i, 200, 5, 300, 0);
}
export function noop(): void {}
`;

/** A callee whose stored form is mostly code: compile work, paid per byte of it. */
const COMPILE_HEAVY: HeavyShape = { pages: 1, dataSegments: 0, segmentBytes: 0, tableEntries: 0, globals: 1, functions: 4_000 };
/** Distinct compile-heavy callees the cold-compile shape calls once each, with the module cache emptied. */
const COLD_CALLEES = 4;
/** Gas limit of each transaction of the per-transaction shapes (a block holds the cap's worth). */
const SMALL_TX_GAS = 200_000n;

/** Rows of the abuse table, one a shape, each against the plain-transfer blocks of the same run. */
export async function abuseTableRows(ctx: AbuseContext, say: (msg: string) => void): Promise<BenchResult[]> {
  const out = await asc.compileString(SOURCE, { runtime: 'stub', optimizeLevel: 3, use: ['abort=input/svcAbort'] });
  if (!out.binary) throw new Error(`AssemblyScript compile failed: ${out.stderr.toString()}`);
  const deployer = ctx.accounts[0]!;
  // The margin pays the init frame's compilation (10 a stored byte: the rewrite can grow code sixfold) and instantiation.
  const deployGas = (code: Uint8Array): bigint => 32_000n + 200n * BigInt(code.length) + 6_000_000n;
  const deploy = async (codes: Uint8Array[]): Promise<string[]> => {
    const addresses: string[] = [];
    let batch: StandardTx[] = [];
    let gas = 0n;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const { result } = await ctx.importNext(batch);
      for (const r of result.receipts) {
        if (r.status !== 1 || !r.contractAddress) throw new Error(`abuse bench: deployment failed: ${r.error}`);
        addresses.push(r.contractAddress);
      }
      batch = [];
      gas = 0n;
    };
    for (const code of codes) {
      const g = deployGas(code);
      if (gas + g > ctx.maxGas) await flush();
      batch.push(ctx.sign(deployer, null, g, encodeDeploy(code)));
      gas += g;
    }
    await flush();
    return addresses;
  };
  const [abuse, heavy, ...cold] = await deploy([
    out.binary,
    heavyModule(ISSUE_HEAVY),
    // Distinct code (a different global initialiser) so each is compiled on its own.
    ...Array.from({ length: COLD_CALLEES }, (_, i) => heavyModule({ ...COMPILE_HEAVY, globals: 2 + i })),
  ]);
  const callData = (method: string, args: Uint8Array = new Uint8Array(0)): Uint8Array => Uint8Array.from([method.length, ...new TextEncoder().encode(method), ...args]);
  const addressBytes = (list: string[]): Uint8Array => Uint8Array.from(list.flatMap((a) => [...Buffer.from(a.slice(2), 'hex')]));

  interface Shape {
    name: string;
    txs: () => StandardTx[];
    /** Runs before each timed import (the cold-compile shape empties the module cache). */
    before?: () => void;
    /** A block of many transactions, each verified in the import: measured against the cold plain blocks, which verify as many. */
    manyTxs?: boolean;
  }
  let sender = 1;
  const nextSender = (): WalletKeys => ctx.accounts[1 + (sender++ % (ctx.accounts.length - 1))]!;
  const capTx = (method: string, args?: Uint8Array) => (): StandardTx[] => [ctx.sign(nextSender(), abuse!, ctx.maxGas, callData(method, args))];
  const fullBlock = (method: string) => (): StandardTx[] =>
    Array.from({ length: Number(ctx.maxGas / SMALL_TX_GAS) }, (_, i) => ctx.sign(ctx.accounts[i % ctx.accounts.length]!, abuse!, SMALL_TX_GAS, callData(method)));
  const shapes: Shape[] = [
    { name: 'plain loop (memory stores)', txs: capTx('spin') },
    { name: 'nested calls: heavy callee (32 pages, 1,024 data segments, 4,096 table entries, 1,000 i64 globals)', txs: capTx('callSpin', addressBytes([heavy!])) },
    { name: 'nested calls: the AssemblyScript noop', txs: capTx('callSpin', addressBytes([abuse!])) },
    { name: `nested calls: ${COLD_CALLEES} compile-heavy callees (4,000 functions), module cache emptied`, txs: () => [ctx.sign(nextSender(), abuse!, ctx.maxGas, callData('callEach', addressBytes(cold)))], before: clearModuleCache },
    { name: 'host calls: sha3 of 0 bytes', txs: capTx('sha3Spin') },
    { name: 'host calls: sha3 of 32 bytes', txs: capTx('sha3WordSpin') },
    { name: 'host calls: sha3 of 64 KiB', txs: capTx('sha3BigSpin') },
    { name: 'host calls: caller', txs: capTx('callerSpin') },
    { name: 'host calls: gas_left', txs: capTx('gasSpin') },
    { name: 'host calls: call_value', txs: capTx('valueSpin') },
    { name: 'host calls: storage_read (one slot)', txs: capTx('readSpin') },
    { name: 'host calls: balance', txs: capTx('balanceSpin') },
    { name: 'host calls: set_return of 64 KiB', txs: capTx('returnSpin') },
    { name: 'host calls: mldsa_verify', txs: capTx('mldsaSpin') },
    { name: 'storage writes (a new slot each)', txs: capTx('writeSpin') },
    { name: 'memory.grow loop', txs: capTx('growSpin') },
    { name: 'logs: as many empty logs as the gas buys', txs: capTx('logSpin') },
    { name: 'logs: as many 4-topic logs as the gas buys', txs: capTx('topicSpin') },
    { name: 'logs: as many 64 KiB logs as the gas buys', txs: capTx('dataLogSpin') },
    { name: `revert with a 64 KiB reason (a block of ${Number(ctx.maxGas / SMALL_TX_GAS)} transactions)`, txs: fullBlock('revertBig'), manyTxs: true },
  ];
  const rows: BenchResult[] = [];
  for (const shape of shapes) {
    let best = Infinity;
    let gasUsed = 0;
    let receiptBytes = 0;
    let logs = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const txs = shape.txs();
      shape.before?.();
      const { seconds, result } = await ctx.importNext(txs);
      const msPerMgas = (seconds * 1000) / (result.gas_used / 1e6);
      if (msPerMgas < best) {
        best = msPerMgas;
        gasUsed = result.gas_used;
        receiptBytes = result.receipts.reduce((n, x) => n + JSON.stringify(x).length, 0);
        logs = result.receipts.reduce((n, x) => n + x.logs.length, 0);
      }
    }
    const reference = shape.manyTxs ? ctx.plainMsPerMgas.cold : ctx.plainMsPerMgas.warm;
    const ratio = best / reference;
    say(`abuse: ${shape.name}: ${best.toFixed(1)} ms per million gas, ${gasUsed.toLocaleString('en-US')} gas, ${logs} logs, receipts ${receiptBytes.toLocaleString('en-US')} bytes`);
    rows.push({
      name: shape.name,
      backend: `importBlock, best of ${ROUNDS}; ${(gasUsed / 1e6).toFixed(1)}M gas, receipts ${(receiptBytes / 1024).toFixed(0)} KiB`,
      unit: 'ms',
      value: best,
      ratio: ratio / ABUSE_GOAL,
      note: `${ratio.toFixed(2)}x a ${shape.manyTxs ? 'cold' : 'warm'} plain-transfer block per gas, goal <= ${ABUSE_GOAL}x (${(ratio / ABUSE_GOAL).toFixed(2)} of limit)`,
    });
  }
  return rows;
}
