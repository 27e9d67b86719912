/**
 * The SDK's example contracts (dist/contracts/{counter,token,caller}.wasm, built by `npm run build`)
 * run on the VM: deployment with constructor arguments, methods, decoded return values, events
 * with the plan's topics, reverts with their reasons, nested calls with their revert path and the
 * 63/64 gas cap, and the same gas figures and state roots every time. The state is the shipped
 * state trie (over an in-memory LevelDB), each transaction its own committed block, so the
 * examples' storage goes through the storage tries, and later calls read it back from them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '../../src/core/codec/bytes.js';
import { addressTopic, type CallValue, decodeValues, encodeCall, encodeDeploy, encodeValues, eventTopic } from '../../src/core/codec/calldata.js';
import { contractAddress } from '../../src/core/crypto/address.js';
import { clearModuleCache, type ContractTxResult, intrinsicGas, runContractTx } from '../../src/vm/executor.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { TrieState } from '../helpers/trie-state.js';
import { wat } from '../helpers/wat.js';

const ALICE = '0x' + 'a1'.repeat(20);
const BOB = '0x' + 'b0'.repeat(20);
const CAROL = '0x' + 'c4'.repeat(20);
const ZERO = '0x' + '00'.repeat(20);
const GAS = 20_000_000n;

const built = (name: string): Uint8Array => new Uint8Array(readFileSync(join(REPO_ROOT, 'dist', 'contracts', `${name}.wasm`)));
const COUNTER = built('counter');
const TOKEN = built('token');
const CALLER = built('caller');
/** A contract whose `spin` and `increment` never end: a callee that burns all the gas it is given. */
const SPINNER = wat('(module (memory (export "memory") 1) (func $spin (loop $l (br $l))) (export "spin" (func $spin)) (export "increment" (func $spin)))');

const u64 = (value: bigint): CallValue => ({ type: 'u64', value });
const u256 = (value: bigint): CallValue => ({ type: 'u256', value });
const addr = (value: string): CallValue => ({ type: 'address', value });
const str = (value: string): CallValue => ({ type: 'string', value });

/** One receipt as the transcript records it: everything a node would put in a receipt. */
interface Receipt {
  status: 0 | 1;
  gasUsed: string;
  error: string | null;
  returnData: string;
  logs: Array<{ address: string; topics: string[]; data: string }>;
  /** The state root after the transaction's block. */
  root: string;
}

/** A sender-nonce-tracking driver over the state trie, one transaction a block, recording every receipt. */
class Chain {
  readonly transcript: Receipt[] = [];
  private readonly nonces = new Map<string, bigint>();
  private block = 1;
  /** Whether the last transaction left the state as it found it (apart from the nonce the chain moves). */
  unchanged = false;

  private constructor(readonly state: TrieState) {}

  /** A chain whose genesis funds the three users. */
  static async open(): Promise<Chain> {
    return new Chain(await TrieState.open({ [ALICE]: 10n ** 24n, [BOB]: 10n ** 24n, [CAROL]: 10n ** 24n }));
  }

  /** Runs a transaction as the chain would (the nonce moves whatever the outcome), commits its block and records its receipt. */
  async send(from: string, to: string | null, data: Uint8Array, value = 0n, gasLimit = GAS): Promise<ContractTxResult> {
    const nonce = this.nonces.get(from) ?? 0n;
    const view = this.state.view;
    const r = runContractTx(view, { from, to, value, data, gasLimit, nonce, blockNumber: this.block++, timestampMs: 1_700_000_000_000 + this.block * 2_000 });
    // The view starts each block empty, so what it would commit is what the transaction did.
    this.unchanged = view.touched().size === 0 && view.codes.size === 0;
    view.incrementNonce(from);
    await this.state.commitBlock();
    this.nonces.set(from, nonce + 1n);
    this.transcript.push({
      status: r.status,
      gasUsed: r.gasUsed.toString(),
      error: r.error ?? null,
      returnData: toHex(r.returnData),
      logs: r.logs.map((l) => ({ address: l.address, topics: l.topics.map(toHex), data: toHex(l.data) })),
      root: this.state.root(),
    });
    return r;
  }

  /** Deploys `code` with constructor args; asserts success and the documented address. */
  async deploy(from: string, code: Uint8Array, args: CallValue[] = []): Promise<string> {
    const nonce = this.nonces.get(from) ?? 0n;
    const r = await this.send(from, null, encodeDeploy(code, args));
    assert.is(r.status, 1, r.error);
    assert.is(r.contractAddress, contractAddress(from, nonce));
    return r.contractAddress!;
  }

  /** Calls a method; returns the receipt. */
  call(from: string, to: string, method: string, args: CallValue[] = [], gasLimit = GAS): Promise<ContractTxResult> {
    return this.send(from, to, encodeCall(method, args), 0n, gasLimit);
  }

  /** Calls a method that must succeed; returns its decoded return values. */
  async ok(from: string, to: string, method: string, args: CallValue[] = []): Promise<CallValue[]> {
    const r = await this.call(from, to, method, args);
    assert.is(r.status, 1, `${method}: ${r.error}`);
    return decodeValues(r.returnData);
  }
}

async function counterScenario(chain: Chain): Promise<void> {
  const counter = await chain.deploy(ALICE, COUNTER, [u64(41n)]);
  assert.equal(await chain.ok(BOB, counter, 'get'), [u64(41n)], 'init stored the constructor argument');
  const r = await chain.call(BOB, counter, 'increment');
  assert.is(r.status, 1, r.error);
  assert.equal(decodeValues(r.returnData), [u64(42n)]);
  assert.equal(
    r.logs.map((l) => ({ address: l.address, topics: l.topics.map(toHex), data: l.data })),
    [{ address: counter, topics: [eventTopic('Incremented'), addressTopic(BOB)], data: encodeValues([u64(42n)]) }],
  );
  assert.equal(await chain.ok(ALICE, counter, 'increment'), [u64(43n)]);
  assert.equal(await chain.ok(CAROL, counter, 'get'), [u64(43n)]);
  // Without arguments init starts at 0; a method given arguments it does not take reverts.
  const fresh = await chain.deploy(BOB, COUNTER);
  assert.equal(await chain.ok(BOB, fresh, 'get'), [u64(0n)]);
  const extra = await chain.call(BOB, fresh, 'increment', [u64(1n)]);
  assert.is(extra.status, 0);
  assert.match(extra.error!, /^revert: /);
  assert.ok(chain.unchanged);
  assert.equal(await chain.ok(BOB, fresh, 'get'), [u64(0n)]);
}

async function tokenScenario(chain: Chain): Promise<void> {
  const supply = 1_000_000n * 10n ** 18n;
  const deployData = encodeDeploy(TOKEN, [str('Svc Token'), str('SVT'), u64(18n), u256(supply)]);
  const d = await chain.send(ALICE, null, deployData);
  assert.is(d.status, 1, d.error);
  const token = d.contractAddress!;
  assert.ok(d.gasUsed > intrinsicGas(null, deployData), 'init is charged on top of the intrinsic deployment gas');
  assert.equal(
    d.logs.map((l) => ({ address: l.address, topics: l.topics.map(toHex), data: l.data })),
    [{ address: token, topics: [eventTopic('Transfer'), addressTopic(ZERO), addressTopic(ALICE)], data: encodeValues([u256(supply)]) }],
    'the mint is a Transfer from the zero address to the deployer',
  );
  assert.equal(await chain.ok(BOB, token, 'name'), [str('Svc Token')]);
  assert.equal(await chain.ok(BOB, token, 'symbol'), [str('SVT')]);
  assert.equal(await chain.ok(BOB, token, 'decimals'), [u64(18n)]);
  assert.equal(await chain.ok(BOB, token, 'totalSupply'), [u256(supply)]);
  assert.equal(await chain.ok(BOB, token, 'balanceOf', [addr(ALICE)]), [u256(supply)]);

  const t = await chain.call(ALICE, token, 'transfer', [addr(BOB), u256(250n)]);
  assert.is(t.status, 1, t.error);
  assert.equal(decodeValues(t.returnData), [{ type: 'bool', value: true }]);
  assert.not.ok(chain.unchanged, 'a transfer changes the state');
  assert.equal(t.logs.map((l) => l.topics.map(toHex)), [[eventTopic('Transfer'), addressTopic(ALICE), addressTopic(BOB)]]);
  assert.equal(t.logs[0]!.data, encodeValues([u256(250n)]));
  assert.equal(await chain.ok(CAROL, token, 'balanceOf', [addr(BOB)]), [u256(250n)]);
  assert.equal(await chain.ok(CAROL, token, 'balanceOf', [addr(ALICE)]), [u256(supply - 250n)]);

  // Overdraw: status 0 with the SDK's reason, gas charged (more than the intrinsic, less than the limit: a revert keeps the rest), state unchanged.
  const over = await chain.call(BOB, token, 'transfer', [addr(CAROL), u256(251n)]);
  assert.is(over.status, 0);
  assert.is(over.error, 'revert: insufficient balance');
  assert.ok(over.gasUsed > intrinsicGas(token, new Uint8Array(1)) && over.gasUsed < GAS, `gas charged: ${over.gasUsed}`);
  assert.equal(over.logs, []);
  assert.ok(chain.unchanged, 'a reverted call changes no state');

  // approve / allowance / transferFrom, and a transferFrom over the allowance.
  const a = await chain.call(BOB, token, 'approve', [addr(CAROL), u256(100n)]);
  assert.is(a.status, 1, a.error);
  assert.equal(a.logs.map((l) => l.topics.map(toHex)), [[eventTopic('Approval'), addressTopic(BOB), addressTopic(CAROL)]]);
  assert.equal(a.logs[0]!.data, encodeValues([u256(100n)]));
  assert.equal(await chain.ok(ALICE, token, 'allowance', [addr(BOB), addr(CAROL)]), [u256(100n)]);
  const tf = await chain.call(CAROL, token, 'transferFrom', [addr(BOB), addr(ALICE), u256(60n)]);
  assert.is(tf.status, 1, tf.error);
  assert.equal(tf.logs.map((l) => l.topics.map(toHex)), [[eventTopic('Transfer'), addressTopic(BOB), addressTopic(ALICE)]]);
  assert.equal(await chain.ok(ALICE, token, 'allowance', [addr(BOB), addr(CAROL)]), [u256(40n)]);
  assert.equal(await chain.ok(ALICE, token, 'balanceOf', [addr(BOB)]), [u256(190n)]);
  assert.equal(await chain.ok(ALICE, token, 'balanceOf', [addr(ALICE)]), [u256(supply - 190n)]);
  const tooMuch = await chain.call(CAROL, token, 'transferFrom', [addr(BOB), addr(CAROL), u256(41n)]);
  assert.is(tooMuch.status, 0);
  assert.is(tooMuch.error, 'revert: allowance exceeded');
  assert.ok(chain.unchanged);
  assert.equal(await chain.ok(ALICE, token, 'totalSupply'), [u256(supply)], 'transfers never change the supply');
}

async function callerScenario(chain: Chain): Promise<void> {
  const counter = await chain.deploy(ALICE, COUNTER, [u64(10n)]);
  const caller = await chain.deploy(ALICE, CALLER, [addr(counter)]);
  assert.equal(await chain.ok(BOB, caller, 'counter'), [addr(counter)]);

  // A nested call's input is full calldata (method ‖ args) and the callee sees args only: the
  // counter's increment refuses any argument, so a success shows the header was stripped.
  const bump = await chain.call(BOB, caller, 'bump');
  assert.is(bump.status, 1, bump.error);
  assert.equal(decodeValues(bump.returnData), [u64(11n)]);
  assert.equal(
    bump.logs.map((l) => ({ address: l.address, topics: l.topics.map(toHex) })),
    [{ address: counter, topics: [eventTopic('Incremented'), addressTopic(caller)] }],
    'the callee sees the calling contract as its caller',
  );
  assert.equal(await chain.ok(BOB, caller, 'bumpBy', [u64(3n)]), [u64(14n)]);
  assert.equal(await chain.ok(BOB, counter, 'get'), [u64(14n)]);
  const bad = await chain.call(BOB, caller, 'bumpBy', [u64(11n)]);
  assert.is(bad.status, 0);
  assert.is(bad.error, 'revert: times must be 1..10');
  assert.ok(chain.unchanged);

  // tryCall: a failing nested call is undone and reported, the outer call succeeds.
  const nope = await chain.call(BOB, caller, 'tryCall', [str('nope')]);
  assert.is(nope.status, 1, nope.error);
  assert.equal(decodeValues(nope.returnData), [{ type: 'bool', value: false }]);
  assert.equal(nope.logs.map((l) => ({ address: l.address, topics: l.topics.map(toHex), data: l.data })), [
    { address: caller, topics: [eventTopic('CallFailed')], data: encodeValues([str('nope'), str('no callable method nope')]) },
  ]);
  const yes = await chain.call(BOB, caller, 'tryCall', [str('increment')]);
  assert.is(yes.status, 1, yes.error);
  assert.equal(decodeValues(yes.returnData), [{ type: 'bool', value: true }]);
  assert.equal(await chain.ok(BOB, counter, 'get'), [u64(15n)]);

  // A callee that burns everything: Contract.call with gas 0 asks for all that is left, the VM
  // forwards at most 63/64 of it, so the caller survives to report (tryCall) or revert (bump).
  const spinner = await chain.deploy(BOB, SPINNER);
  const viaSpinner = await chain.deploy(BOB, CALLER, [addr(spinner)]);
  // 1/64 of it must pay the caller's CallFailed log (20,000 + 2,100 a topic + 64 a byte since logs are priced by their receipt bytes).
  const limit = 8_000_000n;
  const survived = await chain.call(CAROL, viaSpinner, 'tryCall', [str('spin')], limit);
  assert.is(survived.status, 1, survived.error);
  assert.equal(decodeValues(survived.returnData), [{ type: 'bool', value: false }]);
  assert.equal(survived.logs.map((l) => l.topics.map(toHex)), [[eventTopic('CallFailed')]]);
  assert.ok(survived.gasUsed > ((limit - intrinsicGas(viaSpinner, new Uint8Array(1))) * 63n) / 64n, `the callee got about 63/64 of the gas: used ${survived.gasUsed}`);
  assert.ok(survived.gasUsed < limit, 'the caller kept enough to finish');
  const reverted = await chain.call(CAROL, viaSpinner, 'bump', [], limit);
  assert.is(reverted.status, 0);
  assert.is(reverted.error, 'revert: counter call failed: ', 'running out of gas leaves no reason');
  assert.ok(reverted.gasUsed < limit, 'a revert after a failed nested call keeps the unspent gas');
  assert.ok(chain.unchanged);
}

const SCENARIOS: Record<string, (chain: Chain) => Promise<void>> = { counter: counterScenario, token: tokenScenario, caller: callerScenario };

const test = suite('vm runs the SDK examples on the state trie');

for (const [name, scenario] of Object.entries(SCENARIOS)) {
  test(name, async () => {
    const chain = await Chain.open();
    try {
      await scenario(chain);
    } finally {
      await chain.state.close();
    }
  });
}

test('every receipt and every state root are the same on a second run, with a cold module cache', async () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    const first = await Chain.open();
    const second = await Chain.open();
    try {
      await scenario(first);
      clearModuleCache();
      await scenario(second);
      assert.equal(second.transcript, first.transcript, `${name}: receipts (gas and state roots included)`);
    } finally {
      await first.state.close();
      await second.state.close();
    }
  }
});

test.run();
