import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bytesToBigintBE, concatBytes, toHex, u64LE } from '../../src/core/codec/bytes.js';
import { contractAddress } from '../../src/core/crypto/address.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { initSignatureBackend, keygenFromSeed, sign } from '../../src/core/crypto/mldsa.js';
import { clearModuleCache, type ContractTxContext, type ContractTxResult, intrinsicGas, runContractTx } from '../../src/vm/executor.js';
import { MAX_MEMORY_PAGES, MAX_REVERT_REASON_BYTES, MEMORY_PAGE_GAS, MLDSA_VERIFY_GAS, STORAGE_WRITE_GAS } from '../../src/vm/schedule.js';
import type { StateView } from '../../src/node/execution/state/types.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../helpers/wat.js';
import { CALLER, COUNTER, COUNTER_TOPIC, REVERT_REASON } from './contracts.js';

const ALICE = '0x' + 'a1'.repeat(20);
const BOB = '0x' + 'b0'.repeat(20);
const GAS = 2_000_000n;

const test = suite('vm executor');

/** ALICE funded at genesis; each test runs its transactions on the head View, as one block does. */
function funded(): Promise<TrieState> {
  return TrieState.open({ [ALICE]: 10n ** 20n });
}

function tx(over: Partial<ContractTxContext>): ContractTxContext {
  return { from: ALICE, to: null, value: 0n, data: new Uint8Array(0), gasLimit: GAS, nonce: 0n, blockNumber: 7, timestampMs: 1_700_000_000_000, ...over };
}

/** Deploys `code` from ALICE with `nonce` and returns the contract's address. */
function deploy(state: StateView, code: Uint8Array, nonce = 0n, args?: Uint8Array): string {
  const r = runContractTx(state, tx({ data: deployData(code, args), nonce, gasLimit: 30_000_000n }));
  assert.is(r.status, 1, r.error);
  return r.contractAddress!;
}

function call(state: StateView, to: string, method: string, args?: Uint8Array, over: Partial<ContractTxContext> = {}): ContractTxResult {
  return runContractTx(state, tx({ to, data: callData(method, args), ...over }));
}

function counterValue(r: ContractTxResult): bigint {
  return new DataView(r.returnData.buffer, r.returnData.byteOffset, 8).getBigUint64(0, true);
}

test('contractAddress is the last 20 bytes of SHA3-256(tag ‖ sender ‖ nonce u64 LE)', () => {
  const expected = toHex(sha3(new TextEncoder().encode('svc/contract-address'), Buffer.from(ALICE.slice(2), 'hex'), u64LE(5n)).slice(12));
  assert.is(contractAddress(ALICE, 5n), expected);
  assert.is(contractAddress(ALICE.toUpperCase().replace('0X', '0x'), 5n), expected);
  assert.is.not(contractAddress(ALICE, 6n), expected);
});

test('deploy: address from sender and nonce, code stored, init runs with the constructor args, gas at least the intrinsic', async () => {
  const chain = await funded();
  const state = chain.view;
  const data = deployData(COUNTER, u64LE(41n));
  const r = runContractTx(state, tx({ data, nonce: 3n }));
  assert.is(r.status, 1, r.error);
  assert.is(r.contractAddress, contractAddress(ALICE, 3n));
  assert.is(intrinsicGas(null, data), 32_000n + 200n * BigInt(COUNTER.length));
  assert.ok(r.gasUsed > intrinsicGas(null, data) + STORAGE_WRITE_GAS, `gas used ${r.gasUsed}`);
  assert.equal(state.code(r.contractAddress!), COUNTER);
  assert.equal(state.account(r.contractAddress!).codeHash, sha3(COUNTER));
  assert.ok(state.instrumented(sha3(COUNTER)), 'instrumented form stored under the code hash');
  assert.is(counterValue(call(state, r.contractAddress!, 'get')), 41n);
});

test('storage persists across calls, logs carry address, topics and data, the return data comes back', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  let incrementGas = 0n;
  for (let i = 1n; i <= 3n; i++) {
    const r = call(state, c, 'increment');
    incrementGas = r.gasUsed;
    assert.is(r.status, 1, r.error);
    assert.is(r.logs.length, 1);
    assert.is(r.logs[0]!.address, c);
    assert.equal(r.logs[0]!.topics, [COUNTER_TOPIC]);
    assert.equal(r.logs[0]!.data, u64LE(i));
    assert.ok(r.gasUsed >= 21_000n + STORAGE_WRITE_GAS);
  }
  const got = call(state, c, 'get');
  assert.is(got.status, 1);
  assert.is(counterValue(got), 3n);
  // Both pay the same compilation and instantiation; the increment adds a write and a log.
  assert.ok(got.gasUsed + STORAGE_WRITE_GAS < incrementGas, `a read (${got.gasUsed}) is cheaper than a write (${incrementGas})`);
  assert.equal(call(state, c, 'is_set').returnData, Uint8Array.of(1));
  assert.is(call(state, c, 'clear').status, 1);
  assert.equal(call(state, c, 'is_set').returnData, Uint8Array.of(0));
});

test('context: caller, own address, value, block number, timestamp and input', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const input = Uint8Array.of(9, 8, 7);
  const r = call(state, c, 'context', input, { value: 1234n });
  assert.is(r.status, 1, r.error);
  const d = r.returnData;
  assert.is(toHex(d.subarray(0, 20)), ALICE);
  assert.is(toHex(d.subarray(20, 40)), c);
  assert.is(bytesToBigintBE(d.subarray(40, 72)), 1234n);
  const view = new DataView(d.buffer, d.byteOffset);
  assert.is(view.getBigInt64(72, true), 7n);
  assert.is(view.getBigInt64(80, true), 1_700_000_000_000n);
  assert.equal(d.subarray(88), input);
  assert.is(state.account(c).balance, 1234n);
});

test('revert: status 0 with the reason, gas used so far charged, every change and log undone', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  call(state, c, 'increment');
  const before = chain.digest();
  const r = call(state, c, 'fail', undefined, { value: 5n });
  assert.is(r.status, 0);
  assert.is(r.error, `revert: ${REVERT_REASON}`);
  assert.equal(new TextDecoder().decode(r.returnData), REVERT_REASON);
  assert.ok(r.gasUsed > 21_000n + STORAGE_WRITE_GAS && r.gasUsed < GAS, `gas used ${r.gasUsed}`);
  assert.is(r.logs.length, 0);
  assert.is(chain.digest(), before);
  assert.is(counterValue(call(state, c, 'get')), 1n);
});

test('revert reasons are capped at MAX_REVERT_REASON_BYTES and binary reasons are shown as hex, so a receipt stays small', async () => {
  const chain = await funded();
  const state = chain.view;
  // Page 0 is zeros (NUL bytes); 1024.. holds printable text longer than the cap.
  const text = 'no! '.repeat(MAX_REVERT_REASON_BYTES / 2);
  const c = deploy(state, wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1)
    (data (i32.const 8192) "${text}")
    (data (i32.const 4096) "caf\\c3\\a9")
    (func (export "nuls") (call $revert (i32.const 0) (i32.const 65536)))
    (func (export "long") (call $revert (i32.const 8192) (i32.const ${text.length})))
    (func (export "utf8") (call $revert (i32.const 4096) (i32.const 5)))
    (func (export "badutf8") (call $revert (i32.const 4099) (i32.const 1))))`));
  const nuls = call(state, c, 'nuls');
  assert.is(nuls.status, 0);
  assert.is(nuls.returnData.length, MAX_REVERT_REASON_BYTES, 'the reason (and the return data) is cut to the cap');
  assert.is(nuls.error, `revert: 0x${'00'.repeat(MAX_REVERT_REASON_BYTES)}`, 'NUL bytes are hex, not JSON-escaped text');
  assert.ok(JSON.stringify({ error: nuls.error }).length < 2 * MAX_REVERT_REASON_BYTES + 32);
  const long = call(state, c, 'long');
  assert.is(long.error, `revert: ${text.slice(0, MAX_REVERT_REASON_BYTES)}`);
  assert.is(call(state, c, 'utf8').error, 'revert: café', 'printable UTF-8 stays text');
  assert.is(call(state, c, 'badutf8').error, 'revert: 0xc3', 'invalid UTF-8 (a lone lead byte) is hex');
});

test('out of gas in an infinite loop: status 0, the whole gas limit used, state untouched, bounded by the budget', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const before = chain.digest();
  const r = call(state, c, 'spin', undefined, { gasLimit: 30_000_000n, value: 1n });
  assert.is(r.status, 0);
  assert.is(r.error, 'out of gas');
  assert.is(r.gasUsed, 30_000_000n);
  assert.is(chain.digest(), before);
});

test('a trap: status 0, the whole gas limit used, state untouched', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const before = chain.digest();
  const r = call(state, c, 'trap');
  assert.is(r.status, 0);
  assert.match(r.error!, /^trap: /);
  assert.is(r.gasUsed, GAS);
  assert.is(chain.digest(), before);
});

test('memory grows to the cap and no further; each page is charged, so a small budget runs out', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const r = call(state, c, 'grow', undefined, { gasLimit: 5_000_000n });
  assert.is(r.status, 1, r.error);
  assert.is(new DataView(r.returnData.buffer, r.returnData.byteOffset).getUint32(0, true), MAX_MEMORY_PAGES);
  assert.ok(r.gasUsed > MEMORY_PAGE_GAS * BigInt(MAX_MEMORY_PAGES - 1));
  const poor = call(state, c, 'grow', undefined, { gasLimit: 21_000n + MEMORY_PAGE_GAS * 4n });
  assert.is(poor.status, 0);
  assert.is(poor.error, 'out of gas');
});

test('bulk memory operations are charged by length', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const r = call(state, c, 'fill');
  assert.is(r.status, 1, r.error);
  assert.equal(r.returnData, Uint8Array.of(7, 7, 7, 7));
  assert.ok(r.gasUsed >= 21_000n + 3n * (65_536n / 32n), `gas used ${r.gasUsed}`);
});

test('unknown, private and init methods are refused; malformed call data is status 0', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  for (const m of ['nope', '_private', 'init', 'memory']) {
    const r = call(state, c, m);
    assert.is(r.status, 0, m);
    assert.is(r.error, `revert: no callable method ${m}`);
  }
  const r = runContractTx(state, tx({ to: c, data: Uint8Array.of(200, 1, 2) }));
  assert.is(r.status, 0);
  assert.is(r.gasUsed, 21_000n);
});

test('value to an account without code, or to a contract with empty data, moves value and runs nothing', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const r1 = runContractTx(state, tx({ to: BOB, value: 7n }));
  const r2 = runContractTx(state, tx({ to: c, value: 9n }));
  assert.equal([r1.status, r1.gasUsed, r2.status, r2.gasUsed], [1, 21_000n, 1, 21_000n]);
  assert.is(state.account(BOB).balance, 7n);
  assert.is(state.account(c).balance, 9n);
});

test('sha3, transfer and balance host functions', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const msg = new TextEncoder().encode('hello');
  assert.equal(call(state, c, 'hash', msg).returnData, sha3(msg));
  runContractTx(state, tx({ to: c, value: 100n }));
  const amount = (n: bigint): Uint8Array => concatBytes(Buffer.from(BOB.slice(2), 'hex'), Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
  const ok = call(state, c, 'pay', amount(60n));
  assert.equal(ok.returnData, Uint8Array.of(0, 0, 0, 0));
  assert.is(state.account(BOB).balance, 60n);
  const short = call(state, c, 'pay', amount(60n));
  assert.equal(short.returnData, Uint8Array.of(1, 0, 0, 0), 'insufficient balance is reported, not trapped');
  assert.is(state.account(c).balance, 40n);
});

test('ML-DSA-65 verify host function: valid and tampered signatures, 50,000 gas', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const { publicKey, secretKey } = keygenFromSeed(new Uint8Array(32).fill(3));
  const msg = new TextEncoder().encode('pay bob');
  const sig = sign(secretKey, msg, { deterministic: true });
  const good = call(state, c, 'verify', concatBytes(publicKey, sig, msg), { gasLimit: 5_000_000n });
  assert.equal(good.returnData, Uint8Array.of(1));
  assert.ok(good.gasUsed > 21_000n + MLDSA_VERIFY_GAS);
  const bad = call(state, c, 'verify', concatBytes(publicKey, sig, new TextEncoder().encode('pay eve')), { gasLimit: 5_000_000n });
  assert.equal(bad.returnData, Uint8Array.of(0));
});

test('determinism across signature backends: the ML-DSA host function gives identical receipts with noble and liboqs', async () => {
  const { publicKey, secretKey } = keygenFromSeed(new Uint8Array(32).fill(4));
  const msg = new TextEncoder().encode('same on every node');
  const sig = sign(secretKey, msg, { deterministic: true });
  const inputs = [concatBytes(publicKey, sig, msg), concatBytes(publicKey, sig, msg.subarray(1)), concatBytes(publicKey, new Uint8Array(3309).fill(0xff), msg)];
  const runWith = async (backend: 'noble' | 'liboqs'): Promise<{ results: ContractTxResult[]; digest: string }> => {
    await initSignatureBackend(backend);
    const chain = await funded();
    const state = chain.view;
    const c = deploy(state, COUNTER);
    const results = inputs.map((input) => call(state, c, 'verify', input, { gasLimit: 5_000_000n }));
    return { results, digest: chain.digest() };
  };
  try {
    const noble = await runWith('noble');
    const liboqs = await runWith('liboqs');
    assert.equal(noble.results.map((r) => r.returnData[0]), [1, 0, 0]);
    assert.equal(liboqs.results, noble.results);
    assert.is(liboqs.digest, noble.digest);
  } finally {
    await initSignatureBackend('noble');
  }
});

test('gas_left falls as the call proceeds and stays below the budget', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, COUNTER);
  const r = call(state, c, 'gas');
  const left = new DataView(r.returnData.buffer, r.returnData.byteOffset).getBigUint64(0, true);
  assert.ok(left > 0n && left < GAS - 21_000n);
});

test('nested call: success keeps the callee changes and logs; revert and trap undo only the callee', async () => {
  const chain = await funded();
  const state = chain.view;
  const counter = deploy(state, COUNTER, 0n);
  const caller = deploy(state, CALLER, 1n);
  const target = Buffer.from(counter.slice(2), 'hex');

  const ok = call(state, caller, 'call_it', concatBytes(target, callData('increment')));
  assert.is(ok.status, 1, ok.error);
  assert.is(ok.returnData[0], 1);
  assert.is(ok.logs.length, 1);
  assert.is(ok.logs[0]!.address, counter);
  assert.is(counterValue(call(state, counter, 'get')), 1n);

  const reverted = call(state, caller, 'call_it', concatBytes(target, callData('fail')));
  assert.is(reverted.status, 1, 'the caller goes on after a failed callee');
  assert.is(reverted.returnData[0], 0);
  assert.is(new TextDecoder().decode(reverted.returnData.subarray(1)), REVERT_REASON, 'the revert reason is the return data');
  assert.is(reverted.logs.length, 0, "the reverted callee's log is dropped");
  assert.is(counterValue(call(state, counter, 'get')), 1n);
  assert.equal(state.storage(caller, new Uint8Array(32)), new Uint8Array(32).fill(0xaa), "the caller's own write stays");

  const trapped = call(state, caller, 'call_it', concatBytes(target, callData('trap')));
  assert.is(trapped.status, 1);
  assert.equal(trapped.returnData, Uint8Array.of(0));
  assert.is(counterValue(call(state, counter, 'get')), 1n);

  const missing = call(state, caller, 'call_it', concatBytes(target, callData('nope')));
  assert.equal(missing.returnData[0], 0);
});

test('nested out-of-gas consumes the forwarded gas only: the caller keeps 1/64 and finishes', async () => {
  const chain = await funded();
  const state = chain.view;
  const counter = deploy(state, COUNTER, 0n);
  const caller = deploy(state, CALLER, 1n);
  const r = call(state, caller, 'call_it', concatBytes(Buffer.from(counter.slice(2), 'hex'), callData('spin')), { gasLimit: 5_000_000n });
  assert.is(r.status, 1, r.error);
  assert.equal(r.returnData, Uint8Array.of(0));
  assert.ok(r.gasUsed > 4_800_000n, `gas used ${r.gasUsed}`);
});

test('re-entrancy: a call to a contract already on the call stack fails', async () => {
  const chain = await funded();
  const state = chain.view;
  const a = deploy(state, CALLER, 0n);
  const b = deploy(state, CALLER, 1n);
  const counter = deploy(state, COUNTER, 2n);
  // a -> b -> a: refused; b reports the refusal to a.
  const inner = concatBytes(Buffer.from(a.slice(2), 'hex'), callData('call_it', concatBytes(Buffer.from(counter.slice(2), 'hex'), callData('increment'))));
  const r = call(state, a, 'call_it', concatBytes(Buffer.from(b.slice(2), 'hex'), callData('call_it', inner)));
  assert.is(r.status, 1, r.error);
  assert.equal(r.returnData.subarray(0, 2), Uint8Array.of(1, 0), 'a -> b succeeded, b -> a was refused');
  assert.is(counterValue(call(state, counter, 'get')), 0n);
  // A contract calling itself is the same rule.
  const self = call(state, a, 'call_it', concatBytes(Buffer.from(a.slice(2), 'hex'), callData('call_it')));
  assert.equal(self.returnData, Uint8Array.of(0));
});

const LOOP = wat(`(module ${HOST_IMPORTS} (memory (export "mem") 1)
  (func (export "loop") (local $i i32) (local $n i32)
    (call $input_copy (i32.const 0))
    (local.set $n (i32.load (i32.const 0)))
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))))`);

test('metering charges every loop iteration its instructions exactly (8 gas for an 8-instruction body)', async () => {
  const chain = await funded();
  const state = chain.view;
  const c = deploy(state, LOOP);
  const n = (k: number): Uint8Array => Uint8Array.of(k & 0xff, (k >> 8) & 0xff, 0, 0);
  const g1000 = call(state, c, 'loop', n(1000));
  const g2000 = call(state, c, 'loop', n(2000));
  assert.is(g1000.status, 1, g1000.error);
  assert.is(g2000.gasUsed - g1000.gasUsed, 8000n);
  const tight = call(state, c, 'loop', n(60000), { gasLimit: 21_000n + 8n * 50_000n });
  assert.is(tight.status, 0, 'a budget for 50,000 iterations does not run 60,000');
  assert.is(tight.error, 'out of gas');
});

test('determinism: the same transactions give identical results, gas and state, with a fresh module cache', async () => {
  const runAll = async (): Promise<{ results: ContractTxResult[]; digest: string }> => {
    clearModuleCache();
    const chain = await funded();
    const state = chain.view;
    const results: ContractTxResult[] = [];
    const counter = contractAddress(ALICE, 0n);
    const caller = contractAddress(ALICE, 1n);
    results.push(runContractTx(state, tx({ data: deployData(COUNTER, u64LE(5n)), nonce: 0n, gasLimit: 30_000_000n })));
    results.push(runContractTx(state, tx({ data: deployData(CALLER), nonce: 1n, gasLimit: 30_000_000n })));
    for (const m of ['increment', 'fail', 'grow', 'spin', 'trap', 'increment', 'fill']) results.push(call(state, counter, m, undefined, { gasLimit: 3_000_000n }));
    results.push(call(state, caller, 'call_it', concatBytes(Buffer.from(counter.slice(2), 'hex'), callData('increment'))));
    results.push(call(state, caller, 'call_it', concatBytes(Buffer.from(counter.slice(2), 'hex'), callData('spin')), { gasLimit: 3_000_000n }));
    return { results, digest: chain.digest() };
  };
  const a = await runAll();
  const b = await runAll();
  assert.equal(a.results, b.results);
  assert.is(a.digest, b.digest);
});

test.run();
