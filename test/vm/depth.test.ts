/**
 * The injected native-stack budget must always trip before V8's own stack limit, whose depth is
 * not deterministic: unbounded recursion with small and large frames, deep operand stacks, and a
 * chain of contracts that shares one budget, also started from an already deep JavaScript stack.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { concatBytes } from '../../src/core/codec/bytes.js';
import { type ContractTxContext, type ContractTxResult, runContractTx } from '../../src/vm/executor.js';
import { MAX_CALL_DEPTH } from '../../src/vm/schedule.js';
import type { StateView } from '../../src/node/execution/state/types.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../helpers/wat.js';
import { FORWARDER } from './contracts.js';

const ALICE = '0x' + 'a1'.repeat(20);
const test = suite('vm call depth');

function tx(over: Partial<ContractTxContext>): ContractTxContext {
  return { from: ALICE, to: null, value: 0n, data: new Uint8Array(0), gasLimit: 30_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0, ...over };
}

function deploy(state: StateView, code: Uint8Array, nonce: bigint): string {
  const r = runContractTx(state, tx({ data: deployData(code), nonce }));
  assert.is(r.status, 1, r.error);
  return r.contractAddress!;
}

/** Runs `fn` under `frames` nested JavaScript frames, as a request handler deep in a server would. */
function atJsDepth<T>(frames: number, fn: () => T): T {
  return frames === 0 ? fn() : atJsDepth(frames - 1, fn);
}

const i64s = (n: number): string => 'i64 '.repeat(n);

const RECURSORS: Record<string, string> = {
  'no locals': '(func $r (export "go") (call $r))',
  '8 locals': `(func $r (export "go") (local ${i64s(8)}) (call $r))`,
  '1000 locals': `(func $r (export "go") (local ${i64s(1000)}) (local.set 999 (i64.const 1)) (call $r))`,
  '300-deep operand stack': `(func $r (result i64) ${'(i64.add (i64.const 1) '.repeat(300)} (call $r) ${')'.repeat(300)}) (func (export "go") (drop (call $r)))`,
  'mutual recursion through call_indirect': `(type $t (func)) (table 2 funcref) (elem (i32.const 0) $a $b)
    (func $a (local ${i64s(40)}) (call_indirect (type $t) (i32.const 1))) (func $b (call_indirect (type $t) (i32.const 0))) (func (export "go") (call $a))`,
};

for (const [name, fn] of Object.entries(RECURSORS)) {
  test(`unbounded recursion (${name}) ends with "call depth exceeded", status 0, all gas used`, async () => {
    for (const jsDepth of [0, 5_000]) {
      const state = (await TrieState.open()).view;
      const c = deploy(state, wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1) ${fn})`), 0n);
      const r = atJsDepth(jsDepth, () => runContractTx(state, tx({ to: c, data: callData('go') })));
      assert.is(r.status, 0);
      assert.is(r.error, 'call depth exceeded', `at JavaScript depth ${jsDepth}`);
      assert.is(r.gasUsed, 30_000_000n);
    }
  });
}

/** Deploys `n` forwarders and returns their addresses. */
function chain(state: StateView, n: number): string[] {
  return Array.from({ length: n }, (_, i) => deploy(state, FORWARDER, BigInt(i)));
}

function forward(state: StateView, addrs: string[]): ContractTxResult {
  const rest = concatBytes(...addrs.slice(1).map((a) => Buffer.from(a.slice(2), 'hex')));
  return runContractTx(state, tx({ to: addrs[0]!, data: callData('fwd', rest) }));
}

test(`contract call depth: ${MAX_CALL_DEPTH} nested contracts run, one more fails`, async () => {
  const state = (await TrieState.open()).view;
  const addrs = chain(state, MAX_CALL_DEPTH + 1);
  const ok = forward(state, addrs.slice(0, MAX_CALL_DEPTH));
  assert.is(ok.status, 1, ok.error);
  const deep = forward(state, addrs);
  assert.is(deep.status, 0);
  assert.is(deep.error, 'revert: chain broke');
});

test('nested contracts share the native-stack budget: recursion at the bottom of a 64-deep chain trips the injected limit', async () => {
  for (const jsDepth of [0, 5_000]) {
    for (const length of [1, 8, MAX_CALL_DEPTH]) {
      const state = (await TrieState.open()).view;
      const addrs = chain(state, length);
      assert.is(runContractTx(state, tx({ to: addrs[length - 1]!, data: callData('deep') })).status, 1);
      const r = atJsDepth(jsDepth, () => forward(state, addrs));
      assert.is(r.status, 0, `chain of ${length}`);
      // The bottom frame failed on the injected limit (a V8 stack overflow would have thrown VmResourceError).
      assert.is(r.error, length === 1 ? 'call depth exceeded' : 'revert: chain broke');
    }
  }
});

test.run();
