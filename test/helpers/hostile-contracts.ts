/**
 * The contract VM's hostile shapes from issue 33, as deployable modules for end-to-end tests
 * (not a test file itself): a callee whose instantiation is as expensive as the VM's limits
 * allow, and a module that spends whatever gas it is given on nested calls into it, on `sha3`
 * host calls, or (for eth_estimateGas) on nested calls only when `gas_left()` is near the cap.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseHex } from '../../src/core/codec/bytes.js';
import { MAX_DATA_SEGMENTS, MAX_MEMORY_PAGES, MAX_TABLE_ENTRIES } from '../../src/vm/schedule.js';
import { watBytes } from '../vm/contracts.js';
import { wat } from './wat.js';

/** Globals the callee declares (under the VM's MAX_GLOBALS). */
const CALLEE_GLOBALS = 1_000;

/**
 * The expensive callee: every limit at its cap (32 memory pages, 1,024 active data segments,
 * 4,096 table entries, 1,000 globals) and a `run` that does nothing: all of its cost is its
 * instantiation, which each nested call pays afresh.
 */
export function heavyCallee(): Uint8Array {
  const globals = Array.from({ length: CALLEE_GLOBALS }, (_, i) => `(global $g${i} (mut i64) (i64.const ${i}))`).join('\n');
  const data = Array.from({ length: MAX_DATA_SEGMENTS }, (_, i) => `(data (i32.const ${i * 64}) "\\${(i % 256).toString(16).padStart(2, '0')}")`).join('\n');
  const elems = Array.from({ length: MAX_TABLE_ENTRIES }, () => '$nop').join(' ');
  return wat(`(module
  (memory (export "memory") ${MAX_MEMORY_PAGES})
  (table ${MAX_TABLE_ENTRIES} funcref)
  ${globals}
  ${data}
  (elem (i32.const 0) ${elems})
  (func $nop)
  (func (export "run"))
)`);
}

/**
 * The attacker: `hammer` calls `callee`'s `run` until its gas is gone; `hash` runs `sha3` over
 * 32 bytes until its gas is gone; `picky` reverts unless `gas_left()` is at least `pickyGas`,
 * then hammers (so eth_estimateGas's search runs near the cap, each run as costly as `hammer`).
 */
export function attacker(callee: string, pickyGas: bigint): Uint8Array {
  return wat(`(module
  (import "svc" "call" (func $call (param i32 i32 i32 i32 i64) (result i32)))
  (import "svc" "sha3" (func $sha3 (param i32 i32 i32)))
  (import "svc" "gas_left" (func $gas_left (result i64)))
  (import "svc" "revert" (func $revert (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "${watBytes(parseHex(callee, 'callee', 20))}")
  (data (i32.const 20) "\\03run")
  (data (i32.const 200) "not enough gas")
  (func $hammer (loop $l (drop (call $call (i32.const 0) (i32.const 20) (i32.const 4) (i32.const 64) (i64.const 0))) (br $l)))
  (func (export "hammer") (call $hammer))
  (func (export "hash") (loop $l (call $sha3 (i32.const 0) (i32.const 32) (i32.const 128)) (br $l)))
  (func (export "picky")
    (if (i64.lt_u (call $gas_left) (i64.const ${pickyGas})) (then (call $revert (i32.const 200) (i32.const 14))))
    (call $hammer))
)`);
}

/** Writes `code` to `dir/name.wasm` for `svc contract deploy`; returns the path. */
export async function wasmFile(dir: string, name: string, code: Uint8Array): Promise<string> {
  const path = join(dir, `${name}.wasm`);
  await writeFile(path, code);
  return path;
}
