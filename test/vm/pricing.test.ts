import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sha3 } from '../../src/core/crypto/hash.js';
import { clearModuleCache, type ContractTxContext, intrinsicGas, runContractTx } from '../../src/vm/executor.js';
import {
  COMPILE_BYTE_GAS,
  copyGas,
  DATA_SEGMENT_GAS,
  ELEMENT_ENTRY_GAS,
  I32_GLOBAL_GAS,
  I64_GLOBAL_GAS,
  INSTANCE_GAS,
  MEMORY_PAGE_GAS,
  TABLE_ENTRY_GAS,
} from '../../src/vm/schedule.js';
import type { StateView } from '../../src/node/execution/state/types.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../helpers/wat.js';

const ALICE = '0x' + 'a1'.repeat(20);
const test = suite('vm instantiation and compile pricing');

/** 3 pages, two data segments (5 and 7 bytes), a 10-entry table with 4 element entries, 2 i64 and 3 i32 globals; `noop` charges no instruction gas. */
const HEAVY = wat(`(module
  (memory (export "memory") 3)
  (table 10 funcref)
  (func $noop (export "noop"))
  (elem (i32.const 0) $noop $noop $noop $noop)
  (global (mut i64) (i64.const 1)) (global i64 (i64.const 2))
  (global (mut i32) (i32.const 1)) (global i32 (i32.const 2)) (global i32 (i32.const 3))
  (data (i32.const 0) "abcde") (data (i32.const 64) "fghijkl"))`);
/** The stored form adds the VM's gas (i64) and depth (i32) globals. */
const HEAVY_INSTANCE =
  INSTANCE_GAS + 3n * MEMORY_PAGE_GAS + 2n * DATA_SEGMENT_GAS + copyGas(12) + 10n * TABLE_ENTRY_GAS + 4n * ELEMENT_ENTRY_GAS + 3n * I64_GLOBAL_GAS + 4n * I32_GLOBAL_GAS;

/** Calls the address in its input twice with method noop (`twice`) or once (`once`). */
const TWICE = wat(`(module ${HOST_IMPORTS}
  (memory (export "memory") 1)
  (data (i32.const 200) "\\04noop")
  (func $one (call $input_copy (i32.const 1024)) (drop (call $call (i32.const 1024) (i32.const 200) (i32.const 5) (i32.const 300) (i64.const 0))))
  (func (export "once") (call $one))
  (func (export "twice") (call $one) (call $one)))`);

function tx(over: Partial<ContractTxContext>): ContractTxContext {
  return { from: ALICE, to: null, value: 0n, data: new Uint8Array(0), gasLimit: 5_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0, ...over };
}

async function setup(): Promise<{ state: StateView; heavy: string; caller: string; stored: number }> {
  const state = (await TrieState.open({ [ALICE]: 10n ** 20n })).view;
  const a = runContractTx(state, tx({ data: deployData(HEAVY), nonce: 0n, gasLimit: 30_000_000n }));
  const b = runContractTx(state, tx({ data: deployData(TWICE), nonce: 1n, gasLimit: 30_000_000n }));
  assert.is(a.status, 1, a.error);
  assert.is(b.status, 1, b.error);
  return { state, heavy: a.contractAddress!, caller: b.contractAddress!, stored: state.instrumented(sha3(HEAVY))!.length };
}

test('a call pays intrinsic + compilation of the stored module + its instantiation, exactly, warm cache or cold', async () => {
  const { state, heavy, stored } = await setup();
  const data = callData('noop');
  const expected = intrinsicGas(heavy, data) + COMPILE_BYTE_GAS * BigInt(stored) + HEAVY_INSTANCE;
  const warm = runContractTx(state, tx({ to: heavy, data, nonce: 2n }));
  assert.is(warm.status, 1, warm.error);
  assert.is(warm.gasUsed, expected);
  clearModuleCache();
  const cold = runContractTx(state, tx({ to: heavy, data, nonce: 3n }));
  assert.is(cold.gasUsed, expected, 'the cache never shows in gas');
});

test('a frame that cannot pay its instantiation runs out of gas before the engine instantiates it', async () => {
  const { state, heavy, stored } = await setup();
  const data = callData('noop');
  const needed = intrinsicGas(heavy, data) + COMPILE_BYTE_GAS * BigInt(stored) + HEAVY_INSTANCE;
  const short = runContractTx(state, tx({ to: heavy, data, gasLimit: needed - 1n }));
  assert.is(short.status, 0);
  assert.is(short.error, 'out of gas');
  assert.is(short.gasUsed, needed - 1n);
  const exact = runContractTx(state, tx({ to: heavy, data, gasLimit: needed }));
  assert.is(exact.status, 1, exact.error);
});

test('nested calls: each instantiation is charged, the compilation once a transaction', async () => {
  const { state, heavy, caller } = await setup();
  const args = Buffer.from(heavy.slice(2), 'hex');
  const once = runContractTx(state, tx({ to: caller, data: callData('once', args) }));
  const twice = runContractTx(state, tx({ to: caller, data: callData('twice', args) }));
  assert.is(once.status, 1, once.error);
  assert.is(twice.status, 1, twice.error);
  // The second call repeats the call's own charges and the instantiation, never the compilation.
  const intrinsicDelta = intrinsicGas(caller, callData('twice', args)) - intrinsicGas(caller, callData('once', args));
  const secondCall = twice.gasUsed - once.gasUsed - intrinsicDelta;
  assert.ok(secondCall > HEAVY_INSTANCE, `second call ${secondCall}`);
  assert.ok(secondCall < HEAVY_INSTANCE + 20_000n, `second call ${secondCall} would include a compilation`);
  clearModuleCache();
  const cold = runContractTx(state, tx({ to: caller, data: callData('twice', args) }));
  assert.is(cold.gasUsed, twice.gasUsed);
});

test.run();
