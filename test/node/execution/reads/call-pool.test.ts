/**
 * eth_call and eth_estimateGas on the call threads of a real in-process node: the same answers as
 * running the VM inline (state written and read back within the call, reverts with their data),
 * the main thread free while a full-cap call runs, a call past its time budget ended with a clear
 * error and the pool working again after it, and the queue bounded per client and in all.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { GWEI } from '../../../../src/core/constants.js';
import { contractAddress } from '../../../../src/core/crypto/address.js';
import { chainBackend, ContractReader } from '../../../../src/node/execution/api/contracts.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { CallLimitError, CallPool } from '../../../../src/node/execution/reads/call-pool.js';
import { SvcError } from '../../../../src/core/errors.js';
import { ExecutionError } from '../../../../src/node/execution/errors.js';
import { callData, deployData, HOST_IMPORTS, wat } from '../../../helpers/wat.js';
import { COUNTER } from '../../../vm/contracts.js';
import { devnet, genesisRef, importOk, makeBlock, rpc, startNode, transfer } from '../fixture.js';
import { httpStatusOf } from '../../../../src/api/errors.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;

/** `spin` loops until it runs out of gas; `bump` writes slot 0 and returns what it reads back. */
const WORKER = wat(`(module ${HOST_IMPORTS} (memory (export "memory") 1)
  (data (i32.const 64) "\\2a")
  (func (export "spin") (loop $l (br $l)))
  (func (export "bump")
    (call $storage_write (i32.const 0) (i32.const 64))
    (drop (call $storage_read (i32.const 0) (i32.const 128)))
    (call $set_return (i32.const 128) (i32.const 32))))`);

interface Ctx {
  node: ExecutionNode;
  block: { hash: string; index: number; timestamp: number };
  counter: string;
  worker: string;
}
const test = suite<Ctx>('call pool', {} as Ctx);

/** Awaits `p` and asserts it rejected with an error of exactly `cls` carrying `code` (and `status`). */
async function rejects(p: Promise<unknown>, cls: abstract new (...args: never[]) => SvcError, code: string, status?: number): Promise<SvcError> {
  const err = await p.then(
    () => assert.unreachable(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SvcError && err.constructor === cls, `expected ${cls.name}, got ${String(err)}`);
  const e = err as SvcError;
  assert.is(e.code, code, e.message);
  if (status !== undefined) assert.is(httpStatusOf(e), status);
  return e;
}

test.before(async (ctx) => {
  ctx.node = await startNode();
  const deploys = [COUNTER, WORKER].map((code, nonce) => transfer(acc0, { nonce, to: null, value: 0n, data: deployData(code, new Uint8Array(32)), gasLimit: 5_000_000n, gasPrice: GWEI }));
  const { result } = await importOk(ctx.node, makeBlock(await genesisRef(ctx.node), { txs: deploys }));
  ctx.block = { hash: result.block_hash, index: 1, timestamp: (await ctx.node.chain.record(result.block_hash))!.timestamp };
  ctx.counter = contractAddress(acc0.address, 0n);
  ctx.worker = contractAddress(acc0.address, 1n);
});
test.after(async (ctx) => ctx.node?.stop());

test('answers equal the inline VM: a read, a write read back within the call, a revert with its data, an estimate', async ({ node, block, counter, worker }) => {
  const inline = new ContractReader(chainBackend(node.chain), 30_000_000n);
  const pooled = new ContractReader(chainBackend(node.chain), 30_000_000n, node.calls);
  for (const [to, method] of [[counter, 'get'], [worker, 'bump'], [counter, 'increment']] as const) {
    const req = { from: acc0.address, to, value: 0n, data: callData(method) };
    assert.equal(await pooled.call(block, req), await inline.call(block, req), `${method}`);
    assert.is(await pooled.estimateGas(block, req), await inline.estimateGas(block, req), `${method} estimate`);
  }
  const fail = { from: acc0.address, to: counter, value: 0n, data: callData('fail') };
  const a = await inline.call(block, fail).catch((e: unknown) => e);
  const b = await pooled.call(block, fail).catch((e: unknown) => e);
  assert.instance(b, (a as object).constructor as new () => object);
  assert.equal(b, a, 'the same CallFailedError, reason and revert data');
  // Over JSON-RPC: the revert's code 3 and data are what they were.
  const r = await rpc(node, 'eth_call', [{ to: counter, data: toHex(callData('fail')) }, 'latest']);
  assert.is((r.error as { code: number }).code, 3);
});

test('the main thread runs other work while a full-cap call runs on the call thread', async ({ node, block, worker }) => {
  let turns = 0;
  let done = false;
  const call = node.calls.call(block, { from: acc0.address, to: worker, value: 0n, data: callData('spin') }).catch((e: unknown) => e).finally(() => (done = true));
  // Event-loop turns keep coming while the VM spins through 30M gas elsewhere.
  while (!done && turns < 50) {
    await new Promise((r) => setImmediate(r));
    turns++;
  }
  assert.ok(turns >= 50, `the main thread was blocked: ${turns} event-loop turns before the call ended`);
  const out = await call;
  assert.match(String((out as Error).message), /out of gas/);
});

test('a call past its time budget ends with CALL_TIMEOUT (JSON-RPC -32000), and the next call runs on a fresh thread', async ({ node, block, counter, worker }) => {
  const pool = new CallPool(node.chain, 30_000_000n, { threads: 1, maxQueued: 4, maxQueuedPerClient: 4, timeoutMs: 1 });
  try {
    await rejects(pool.call(block, { from: acc0.address, to: worker, value: 0n, data: callData('spin') }), CallLimitError, 'CALL_TIMEOUT', 503);
    const relaxed = new CallPool(node.chain, 30_000_000n, { threads: 1, maxQueued: 4, maxQueuedPerClient: 4, timeoutMs: 60_000 });
    try {
      const r = await relaxed.call(block, { from: acc0.address, to: counter, value: 0n, data: callData('get') });
      assert.is(r.status, 1);
    } finally {
      await relaxed.close();
    }
  } finally {
    await pool.close();
  }
});

test('the queue is bounded per client and in all: CALLS_BUSY (429) while full, served again after', async ({ node, block, counter, worker }) => {
  const pool = new CallPool(node.chain, 30_000_000n, { threads: 1, maxQueued: 3, maxQueuedPerClient: 2, timeoutMs: 60_000 });
  try {
    const spin = { from: acc0.address, to: worker, value: 0n, data: callData('spin') };
    const held = [pool.call(block, spin, 'a').catch((e: unknown) => e), pool.call(block, spin, 'a').catch((e: unknown) => e)];
    await rejects(pool.call(block, spin, 'a'), CallLimitError, 'CALLS_BUSY', 429);
    const third = pool.call(block, spin, 'b').catch((e: unknown) => e);
    await rejects(pool.call(block, spin, 'c'), CallLimitError, 'CALLS_BUSY', 429);
    await Promise.all([...held, third]);
    assert.is((await pool.call(block, { from: acc0.address, to: counter, value: 0n, data: callData('get') }, 'a')).status, 1);
  } finally {
    await pool.close();
  }
});

test('an unknown block fails before queueing, as before', async ({ node }) => {
  await rejects(node.calls.call({ hash: '0x' + 'ab'.repeat(32), index: 9, timestamp: 0 }, { from: acc0.address, to: acc0.address, value: 0n, data: new Uint8Array(0) }), ExecutionError, 'UNKNOWN_BLOCK', 404);
});

test.run();
