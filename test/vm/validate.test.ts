/** Static refusals at deployment and the stored (instrumented) form. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { u64LE } from '../../src/core/codec/bytes.js';
import { ContractModuleError } from '../../src/vm/errors.js';
import { type ContractTxContext, intrinsicGas, runContractTx, validateDeploy } from '../../src/vm/executor.js';
import { DEPTH_EXPORT, GAS_EXPORT, instrument, START_EXPORT } from '../../src/vm/instrument.js';
import { MAX_CODE_BYTES, MAX_MEMORY_PAGES } from '../../src/vm/schedule.js';
import { HOST_SIGNATURES, validateModule } from '../../src/vm/validate.js';
import { encodeModule, parseModule } from '../../src/vm/wasm.js';
import { expectError } from '../helpers/assert.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../helpers/wat.js';
import { COUNTER } from './contracts.js';

const ALICE = '0x' + 'a1'.repeat(20);
const test = suite('vm validation');
const MEM = '(memory (export "memory") 1)';

function refused(code: Uint8Array, errCode: string, message?: RegExp): void {
  const err = expectError(() => validateDeploy(deployData(code)), ContractModuleError, { code: errCode, status: 400 });
  if (message) assert.match(err.message, message);
}

test('the counter example validates and its stored form round-trips through the reader', () => {
  validateDeploy(deployData(COUNTER));
  const stored = instrument(validateModule(COUNTER));
  const m = parseModule(stored);
  const names = m.exports.map((e) => e.name);
  assert.ok(names.includes(GAS_EXPORT) && names.includes(DEPTH_EXPORT) && names.includes('memory'));
  assert.is(m.memories[0]!.max, MAX_MEMORY_PAGES, 'a memory without a maximum gets the cap');
  assert.equal(encodeModule(parseModule(stored)), stored, 'reader and writer are inverse on the stored form');
});

test('malformed modules and deploy data', () => {
  refused(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), 'CONTRACT_MODULE_MALFORMED', /magic/);
  refused(COUNTER.subarray(0, COUNTER.length - 3), 'CONTRACT_MODULE_MALFORMED');
  // A function body the engine refuses on types (i64 where i32 is expected) though every opcode is known.
  const typed = parseModule(wat(`(module ${MEM} (func (export "f")))`));
  typed.bodies[0]!.code = Uint8Array.of(0x41, 0x01, 0x42, 0x02, 0x6a, 0x1a, 0x0b);
  refused(encodeModule(typed), 'CONTRACT_MODULE_MALFORMED', /i32\.add/);
  expectError(() => validateDeploy(Uint8Array.of(1, 2)), ContractModuleError, { code: 'CONTRACT_DEPLOY_DATA_MALFORMED' });
  expectError(() => validateDeploy(Uint8Array.of(100, 0, 0, 0, 1)), ContractModuleError, { code: 'CONTRACT_DEPLOY_DATA_MALFORMED' });
  // Deploy data that does not frame pays intrinsic gas for every byte (it never gets that far: admission refuses it).
  assert.is(intrinsicGas(null, Uint8Array.of(100, 0, 0, 0, 1)), 32_000n + 200n * 5n);
  assert.is(intrinsicGas(null, Uint8Array.of(1, 0, 0, 0, 0xaa, 7, 7)), 32_000n + 200n);
});

test('imports: only svc host functions with their exact signatures', () => {
  refused(wat(`(module (import "env" "abort" (func (param i32 i32 i32 i32))) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT', /env\.abort is not allowed/);
  refused(wat(`(module (import "svc" "exec" (func)) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT', /svc\.exec/);
  refused(wat(`(module (import "svc" "caller" (func (param i64))) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT', /signature \(i64\) -> \(\), expected \(i32\) -> \(\)/);
  refused(wat(`(module (import "svc" "mem" (memory 1)))`), 'CONTRACT_FORBIDDEN_IMPORT');
  refused(wat(`(module (import "svc" "g" (global i32)) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT');
});

/**
 * Every name an object literal answers without defining it (Object.prototype's own members, and
 * those of Function.prototype, which a host function table could inherit): a deployer chooses
 * import and export names, so each must be refused as an unknown import (400), never reach a
 * prototype member (a TypeError, once answered 500 at admission).
 */
const PROTOTYPE_NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Function.prototype), '__proto__', 'prototype'])].filter((n) => !HOST_SIGNATURES.has(n)); // `caller` is both

test('imports named after prototype members are refused like any unknown import', () => {
  assert.ok(PROTOTYPE_NAMES.includes('constructor') && PROTOTYPE_NAMES.includes('hasOwnProperty') && PROTOTYPE_NAMES.includes('toString'));
  for (const name of PROTOTYPE_NAMES) {
    refused(wat(`(module (import "svc" "${name}" (func)) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT', new RegExp(`svc\\.${name.replace(/[$]/g, '\\$')} is not allowed`));
    refused(wat(`(module (import "svc" "${name}" (func (param i32 i32) (result i32))) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT');
    refused(wat(`(module (import "${name}" "caller" (func (param i32))) ${MEM})`), 'CONTRACT_FORBIDDEN_IMPORT');
  }
});

test('exports named after prototype members deploy, and calls by those names run the export or revert cleanly', async () => {
  const exportsAll = PROTOTYPE_NAMES.filter((n) => !n.startsWith('_')).map((n) => `(func (export "${n}"))`).join(' ');
  const code = wat(`(module ${MEM} ${exportsAll})`);
  validateDeploy(deployData(code));
  const state = await TrieState.open({ [ALICE]: 10n ** 20n });
  const ctx = (over: Partial<ContractTxContext>): ContractTxContext => ({ from: ALICE, to: null, value: 0n, data: new Uint8Array(0), gasLimit: 2_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 1_700_000_000_000, ...over });
  const deployed = runContractTx(state.view, ctx({ data: deployData(code), gasLimit: 30_000_000n }));
  assert.is(deployed.status, 1, deployed.error);
  for (const name of PROTOTYPE_NAMES.filter((n) => !n.startsWith('_'))) {
    const r = runContractTx(state.view, ctx({ to: deployed.contractAddress!, data: callData(name), nonce: 1n }));
    assert.is(r.status, 1, `${name}: ${r.error}`);
  }
  // A module without those exports: every such name is "no callable method", a clean revert.
  const plain = wat(`(module ${MEM} (func (export "f")))`);
  const other = runContractTx(state.view, ctx({ data: deployData(plain), gasLimit: 30_000_000n, nonce: 2n }));
  assert.is(other.status, 1, other.error);
  for (const name of PROTOTYPE_NAMES.filter((n) => n.length <= 64 && !n.startsWith('_'))) {
    const r = runContractTx(state.view, ctx({ to: other.contractAddress!, data: callData(name), nonce: 3n }));
    assert.is(r.status, 0, name);
    assert.match(r.error ?? '', /no callable method/, name);
  }
});

test('size limit', () => {
  const big = wat(`(module ${MEM} (data (i32.const 0) "${'a'.repeat(MAX_CODE_BYTES)}"))`);
  refused(big, 'CONTRACT_MODULE_TOO_LARGE', new RegExp(`over the ${MAX_CODE_BYTES}-byte limit`));
});

test('floating point anywhere is refused', () => {
  refused(wat(`(module ${MEM} (func (export "f") (drop (f64.add (f64.const 1) (f64.const 2)))))`), 'CONTRACT_FLOAT');
  refused(wat(`(module ${MEM} (func (export "f") (param f32)))`), 'CONTRACT_FLOAT');
  refused(wat(`(module ${MEM} (func (export "f") (local f64)))`), 'CONTRACT_FLOAT');
  refused(wat(`(module ${MEM} (global f32 (f32.const 1)))`), 'CONTRACT_FLOAT');
  refused(wat(`(module ${MEM} (func (export "f") (drop (i32.trunc_f32_s (f32.load (i32.const 0))))))`), 'CONTRACT_FLOAT');
  refused(wat(`(module ${MEM} (func (export "f") (drop (i64.reinterpret_f64 (f64.const 0)))))`), 'CONTRACT_FLOAT');
});

test('floats are found in block types and named by function; immediates that equal float opcodes are not floats', () => {
  refused(wat(`(module ${MEM} (func (export "f") (drop (block (result f64) (f64.const 0)))))`), 'CONTRACT_FLOAT', /^function 0: /);
  refused(wat(`(module (import "svc" "gas_left" (func (result i64))) ${MEM} (func (export "f") (drop (f32.const 0))))`), 'CONTRACT_FLOAT', /^function 1: .*f32\.const/);
  // i32.const 42 is 0x41 0x2a (0x2a is f32.load); i64.const 68 is 0x42 0xc4 0x00 (0x44 is f64.const);
  // a load's offset of 0x38 (f32.store) and a local index of 0x39 (f64.store).
  validateDeploy(
    deployData(
      wat(`(module ${MEM} (func (export "f") (local ${'i64 '.repeat(0x3a)})
        (drop (i32.const 42)) (drop (i64.const 68)) (drop (i32.load offset=0x38 (i32.const 0))) (drop (local.get 0x39))))`),
    ),
  );
});

test('memory: exactly one, defined, under the cap', () => {
  refused(wat('(module (func (export "f")))'), 'CONTRACT_MEMORY', /exactly one memory, this module defines 0/);
  const two = parseModule(wat(`(module ${MEM})`));
  two.memories.push({ min: 1 });
  refused(encodeModule(two), 'CONTRACT_MEMORY', /defines 2/);
  refused(wat(`(module (memory ${MAX_MEMORY_PAGES + 1}))`), 'CONTRACT_MEMORY', /starts at/);
  refused(wat(`(module (memory 1 ${MAX_MEMORY_PAGES + 1}))`), 'CONTRACT_MEMORY', /maximum/);
  refused(wat('(module (memory 1) (func (export "memory")))'), 'CONTRACT_MEMORY');
  validateDeploy(deployData(wat(`(module (memory 1 ${MAX_MEMORY_PAGES}))`)));
});

test('tables, locals and reserved export names are limited', () => {
  refused(wat(`(module ${MEM} (table 5000 funcref))`), 'CONTRACT_LIMIT', /table/);
  refused(wat(`(module ${MEM} (func (local ${'i64 '.repeat(1100)})))`), 'CONTRACT_LIMIT', /locals/);
  refused(wat(`(module ${MEM} (global $g (mut i64) (i64.const 0)) (export "__svc_gas" (global $g)))`), 'CONTRACT_RESERVED_EXPORT');
});

test('unsupported features are refused by name', () => {
  const m = parseModule(wat(`(module ${MEM} (func (export "f")))`));
  m.bodies[0]!.code = Uint8Array.of(0xfd, 0x0c, ...new Uint8Array(16), 0x1a, 0x0b);
  refused(encodeModule(m), 'CONTRACT_UNSUPPORTED_FEATURE', /SIMD/);
  m.bodies[0]!.code = Uint8Array.of(0x12, 0x00, 0x0b);
  refused(encodeModule(m), 'CONTRACT_UNSUPPORTED_FEATURE', /tail calls/);
});

test('a refused module costs only the intrinsic gas at execution and creates nothing', async () => {
  const chain = await TrieState.open({ [ALICE]: 10n ** 20n });
  const state = chain.view;
  const code = wat(`(module (import "env" "abort" (func)) ${MEM})`);
  const ctx: ContractTxContext = { from: ALICE, to: null, value: 0n, data: deployData(code), gasLimit: 1_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0 };
  const before = chain.digest();
  const r = runContractTx(state, ctx);
  assert.is(r.status, 0);
  assert.is(r.gasUsed, intrinsicGas(null, ctx.data));
  assert.match(r.error!, /env\.abort is not allowed/);
  assert.is(chain.digest(), before);
});

const START = wat(`(module ${HOST_IMPORTS} ${MEM}
  (global $ran (mut i64) (i64.const 0))
  (func $start (global.set $ran (i64.add (global.get $ran) (i64.const 1))))
  (start $start)
  (func (export "ran") (i64.store (i32.const 0) (global.get $ran)) (call $set_return (i32.const 0) (i32.const 8))))`);

test('the start function is moved out of instantiation and run by the VM once gas is set', async () => {
  const stored = instrument(validateModule(START));
  const m = parseModule(stored);
  assert.is(m.start, undefined);
  assert.ok(m.exports.some((e) => e.name === START_EXPORT));
  // Instantiating the stored form runs nothing: the start function would have traced into gas.
  const inst = new WebAssembly.Instance(new WebAssembly.Module(stored), { svc: Object.fromEntries([...HOST_SIGNATURES.keys()].map((k) => [k, () => 0])) });
  assert.is((inst.exports[GAS_EXPORT] as WebAssembly.Global).value, 0n);
  const state = (await TrieState.open({ [ALICE]: 10n ** 20n })).view;
  const d = runContractTx(state, { from: ALICE, to: null, value: 0n, data: deployData(START), gasLimit: 1_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0 });
  assert.is(d.status, 1, d.error);
  const r = runContractTx(state, { from: ALICE, to: d.contractAddress, value: 0n, data: callData('ran'), gasLimit: 1_000_000n, nonce: 1n, blockNumber: 1, timestampMs: 0 });
  assert.equal(r.returnData, u64LE(1n), 'the start function ran once in this instance, before the method');
});

test('a start function that never ends runs out of the deployment gas instead of hanging instantiation', async () => {
  const code = wat(`(module ${MEM} (func $s (loop $l (br $l))) (start $s))`);
  validateDeploy(deployData(code));
  const state = (await TrieState.open({ [ALICE]: 10n ** 20n })).view;
  const r = runContractTx(state, { from: ALICE, to: null, value: 0n, data: deployData(code), gasLimit: 3_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0 });
  assert.is(r.status, 0);
  assert.is(r.error, 'out of gas');
  assert.is(r.gasUsed, 3_000_000n);
  assert.ok(state.code(r.contractAddress!) === undefined, 'a failed deployment leaves no code');
});

test.run();
