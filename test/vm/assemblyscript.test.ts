/**
 * The VM accepts what the installed AssemblyScript compiler emits, with each of its runtimes
 * (the SDK in contracts/ builds on this): no float instructions, only svc imports once `abort`
 * is routed to the contract, and a start function where top-level code needs one.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import asc from 'assemblyscript/asc';
import { type ContractTxContext, runContractTx } from '../../src/vm/executor.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData } from '../helpers/wat.js';

const ALICE = '0x' + 'a1'.repeat(20);
const test = suite('vm runs AssemblyScript output');

const SOURCE = `
@external("svc", "storage_read") declare function storage_read(k: usize, o: usize): i32;
@external("svc", "storage_write") declare function storage_write(k: usize, v: usize): void;
@external("svc", "set_return") declare function set_return(p: usize, l: i32): void;
@external("svc", "revert") declare function revert(p: usize, l: i32): void;

export function svcAbort(msg: usize, file: usize, line: u32, col: u32): void { revert(0, 0); }

const seen = new Map<string, u64>();

export function increment(): void {
  const key = new ArrayBuffer(32);
  const val = new ArrayBuffer(32);
  storage_read(changetype<usize>(key), changetype<usize>(val));
  const v = load<u64>(changetype<usize>(val)) + 1;
  store<u64>(changetype<usize>(val), v);
  seen.set("n" + v.toString(), v);
  storage_write(changetype<usize>(key), changetype<usize>(val));
  set_return(changetype<usize>(val), 8);
}
`;

for (const runtime of ['stub', 'minimal', 'incremental']) {
  test(`runtime ${runtime}: deploys and keeps state across calls`, async () => {
    const out = await asc.compileString(SOURCE, { runtime, optimizeLevel: 3, use: ['abort=input/svcAbort'] });
    assert.ok(out.binary, out.stderr.toString());
    const state = (await TrieState.open()).view;
    const tx = (over: Partial<ContractTxContext>): ContractTxContext => ({ from: ALICE, to: null, value: 0n, data: new Uint8Array(0), gasLimit: 30_000_000n, nonce: 0n, blockNumber: 1, timestampMs: 0, ...over });
    const d = runContractTx(state, tx({ data: deployData(out.binary!) }));
    assert.is(d.status, 1, d.error);
    let last;
    for (let i = 0; i < 3; i++) {
      last = runContractTx(state, tx({ to: d.contractAddress, data: callData('increment') }));
      assert.is(last.status, 1, last.error);
    }
    assert.equal(last!.returnData, Uint8Array.of(3, 0, 0, 0, 0, 0, 0, 0));
  });
}

test.run();
