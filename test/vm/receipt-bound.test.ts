import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../src/core/codec/bytes.js';
import { type ContractTxResult, runContractTx } from '../../src/vm/executor.js';
import { LOG_JSON_BYTES, LOG_TOPIC_JSON_BYTES, MAX_REVERT_REASON_BYTES, RECEIPT_BYTE_GAS } from '../../src/vm/schedule.js';
import { reasonText } from '../../src/vm/runtime.js';
import { TrieState } from '../helpers/trie-state.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../helpers/wat.js';

const ALICE = '0x' + 'a1'.repeat(20);
const BLOCK_GAS = 30_000_000n;
const test = suite('vm receipt bound');

/** Emits logs of `topics` topics and `bytes` bytes of data while it can still finish, then succeeds: every log lands in the receipt. */
function emitter(topics: number, bytes: number, margin: number): Uint8Array {
  return wat(`(module ${HOST_IMPORTS}
    (memory (export "memory") 2)
    (func (export "go")
      (block $done (loop $l
        (br_if $done (i64.lt_u (call $gas_left) (i64.const ${margin})))
        (call $emit_log (i32.const 0) (i32.const ${topics}) (i32.const 0) (i32.const ${bytes}))
        (br $l))))
    (func (export "fail") (call $revert (i32.const 0) (i32.const 65536))))`);
}

/** The receipt JSON of `r`'s logs, as block-execution writes them, with the widest fixed fields a chain can have. */
function logsJson(r: ContractTxResult): number {
  const hash = '0x' + 'ff'.repeat(32);
  const logs = r.logs.map((l, j) => ({
    address: l.address,
    topics: l.topics.map((t) => toHex(t)),
    data: toHex(l.data),
    blockNumber: Number.MAX_SAFE_INTEGER,
    blockHash: hash,
    transactionHash: hash,
    transactionIndex: 99_999,
    logIndex: 9_999_999 + j,
  }));
  return JSON.stringify(logs).length;
}

async function run(code: Uint8Array, method: string): Promise<ContractTxResult> {
  const state = (await TrieState.open({ [ALICE]: 10n ** 20n })).view;
  const d = runContractTx(state, { from: ALICE, to: null, value: 0n, data: deployData(code), gasLimit: BLOCK_GAS, nonce: 0n, blockNumber: 1, timestampMs: 0 });
  assert.is(d.status, 1, d.error);
  return runContractTx(state, { from: ALICE, to: d.contractAddress!, value: 0n, data: callData(method), gasLimit: BLOCK_GAS, nonce: 1n, blockNumber: 1, timestampMs: 0 });
}

for (const [name, topics, bytes, margin] of [
  ['empty logs', 0, 0, 30_000],
  ['4-topic logs', 4, 0, 40_000],
  ['64 KiB logs', 0, 65_536, 4_300_000],
  ['4 topics and 100 bytes', 4, 100, 40_000],
] as const) {
  test(`${name}: a block-cap transaction's logs add at most gas used / ${RECEIPT_BYTE_GAS} bytes of receipt JSON`, async () => {
    const r = await run(emitter(topics, bytes, margin), 'go');
    assert.is(r.status, 1, r.error);
    assert.ok(r.logs.length > 0);
    const json = logsJson(r);
    assert.ok(json <= Number(r.gasUsed / RECEIPT_BYTE_GAS), `${r.logs.length} logs: ${json} bytes for ${r.gasUsed} gas`);
    // The per-log figures the prices rest on.
    assert.ok(json <= r.logs.length * (LOG_JSON_BYTES + topics * LOG_TOPIC_JSON_BYTES + 2 * bytes), `${json} bytes over the per-log bound`);
    // Most of the gas went on logs, so the bound is met with the gas, not by a short run.
    assert.ok(r.gasUsed > (BLOCK_GAS * 85n) / 100n, `gas used ${r.gasUsed}`);
  });
}

test('the issue shape: 61,172 empty logs no longer fit one 30M-gas transaction; at most about 1,500 do', async () => {
  const r = await run(emitter(0, 0, 30_000), 'go');
  assert.ok(r.logs.length <= 1_500, `${r.logs.length} logs`);
});

test('a revert reason adds at most 2 characters a kept byte, priced at no less than the receipt rate', async () => {
  const r = await run(emitter(0, 0, 0), 'fail');
  assert.is(r.status, 0);
  assert.is(r.returnData.length, MAX_REVERT_REASON_BYTES);
  const text = reasonText(r.returnData);
  assert.ok(text.length <= 2 + 2 * MAX_REVERT_REASON_BYTES);
  assert.ok(r.gasUsed >= RECEIPT_BYTE_GAS * BigInt(text.length), `${r.gasUsed} gas for ${text.length} characters`);
});

test.run();
