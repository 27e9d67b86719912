/**
 * Binary (SSZ) transaction submission: the same transaction as bytes or as JSON gives the same
 * answer and the same pool; a malformed binary body gets the error envelope of the same bytes sent
 * as `{raw}`; the batch endpoint judges each entry on its own, counts each refusal once, refuses an
 * oversize batch or a body that is not a list; JSON-only routes sent bytes answer 4xx, never 500.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { concatBytes, toHex } from '../../../../src/core/codec/bytes.js';
import { GWEI, MAX_TX_BATCH } from '../../../../src/core/constants.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { encodeEnvelopeList, encodeTx } from '../../../../src/core/types/transaction.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { devnet, expectEnvelope, expectOk, hashOf, http, metricValue, post, transfer, withNode } from '../fixture.js';

const { keys } = devnet();
const SSZ = { 'content-type': 'application/octet-stream' };
const REJECTED = 'service_execution_transactions_rejected_total';

const postBytes = (node: ExecutionNode, path: string, bytes: Uint8Array) => http(node.restUrl, path, { body: bytes, headers: SSZ });

async function poolView(node: ExecutionNode): Promise<unknown> {
  const r = await http(node.restUrl, '/api/v1/execution/mempool');
  assert.is(r.status, 200, r.text);
  return r.body.transactions;
}

async function rejections(node: ExecutionNode, reason: string): Promise<number> {
  return metricValue((await http(node.restUrl, '/metrics')).text, REJECTED, `reason="${reason}"`) ?? 0;
}

const single = suite('POST /api/v1/transactions with SSZ bytes');

single('the same transaction as bytes and as JSON {raw}: the same 202 answer and the same pool', async () => {
  const txs = [0, 1].map((nonce) => transfer(keys.accounts[0]!, { nonce, gasPrice: 3n * GWEI }));
  const viaBytes = await withNode(async (node) => {
    const answers = [];
    for (const tx of txs) answers.push(expectOk(await postBytes(node, '/api/v1/transactions', encodeTx(tx)), 202));
    return { answers, pool: await poolView(node) };
  });
  const viaJson = await withNode(async (node) => {
    const answers = [];
    for (const tx of txs) answers.push(expectOk(await post(node, '/api/v1/transactions', { raw: toHex(encodeTx(tx)) }), 202));
    return { answers, pool: await poolView(node) };
  });
  assert.equal(viaBytes.answers, txs.map((tx) => ({ hash: hashOf(tx), status: 'ready' })));
  assert.equal(viaBytes, viaJson);
});

single('a malformed binary body gets exactly the envelope (status, code, message) of the same bytes sent as {raw}', async () => {
  await withNode(async (node) => {
    const env = encodeTx(transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }));
    const wrongType = env.slice();
    wrongType[0] = 9;
    const badOffset = env.slice();
    badOffset[1 + 24] += 1;
    const cases: Array<[string, Uint8Array]> = [
      ['empty', new Uint8Array(0)],
      ['one byte', Uint8Array.of(0)],
      ['truncated', env.subarray(0, env.length - 7)],
      ['unknown type', wrongType],
      ['bad offset', badOffset],
      ['garbage', Uint8Array.from({ length: 300 }, (_, i) => (i * 37) & 0xff)],
    ];
    const before = await rejections(node, 'MALFORMED');
    for (const [what, bytes] of cases) {
      const binary = await postBytes(node, '/api/v1/transactions', bytes);
      const json = await post(node, '/api/v1/transactions', { raw: toHex(bytes) });
      expectEnvelope(binary, 400, 'MALFORMED_INPUT');
      assert.equal({ status: binary.status, body: binary.body }, { status: json.status, body: json.body }, what);
    }
    assert.is(await rejections(node, 'MALFORMED'), before + 2 * cases.length, 'each refusal counted once');
    assert.is(node.admission.pool.size, 0);
  });
});

single('an invalid signature as bytes is the same spec error as in JSON', async () => {
  await withNode(async (node) => {
    const env = encodeTx(transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }));
    env[200] ^= 1;
    const binary = await postBytes(node, '/api/v1/transactions', env);
    const json = await post(node, '/api/v1/transactions', { raw: toHex(env) });
    assert.is(binary.status, 400, binary.text);
    assert.equal(binary.body, json.body);
  });
});

const batch = suite('POST /api/v1/transactions/batch');

batch('SSZ list with good, duplicate and malformed entries: each judged alone, in request order; the good ones pooled and counted once each', async () => {
  await withNode(async (node) => {
    const a = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
    const b = transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 3n * GWEI });
    const c = transfer(keys.accounts[0]!, { nonce: 1, gasPrice: 3n * GWEI });
    expectOk(await postBytes(node, '/api/v1/transactions', encodeTx(c)), 202);
    const truncated = encodeTx(b).subarray(0, 100);
    const cheap = transfer(keys.accounts[1]!, { nonce: 1, gasPrice: 1n });
    const beforeMalformed = await rejections(node, 'MALFORMED');
    const beforeKnown = await rejections(node, 'ALREADY_KNOWN');
    const r = await postBytes(node, '/api/v1/transactions/batch', encodeEnvelopeList([encodeTx(a), truncated, encodeTx(b), encodeTx(c), encodeTx(cheap)]));
    const data = expectOk(r);
    assert.is(data.accepted, 2);
    assert.equal(
      data.results.map((x: { hash: string; status: string; error?: { code: string } }) => [x.hash, x.status, x.error?.code]),
      [
        [hashOf(a), 'accepted', undefined],
        [toHex(sha3(truncated)), 'rejected', 'MALFORMED_INPUT'],
        [hashOf(b), 'accepted', undefined],
        [hashOf(c), 'rejected', 'ALREADY_KNOWN'],
        [hashOf(cheap), 'rejected', 'GAS_PRICE_TOO_LOW'],
      ],
    );
    assert.is(data.results[0].pool_status, 'ready');
    for (const h of [hashOf(a), hashOf(b), hashOf(c)]) assert.ok(node.admission.pool.get(h), h);
    assert.is(node.admission.pool.size, 3);
    assert.is(await rejections(node, 'MALFORMED'), beforeMalformed + 1);
    assert.is(await rejections(node, 'ALREADY_KNOWN'), beforeKnown + 1);
  });
});

batch('JSON {raw: [...]} gives the same answer as the SSZ list; an entry that is not hex has a null hash', async () => {
  const a = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
  const b = transfer(keys.accounts[0]!, { nonce: 1, gasPrice: 3n * GWEI });
  const entries = [encodeTx(a), Uint8Array.of(7, 7), encodeTx(b)];
  const ssz = await withNode(async (node) => expectOk(await postBytes(node, '/api/v1/transactions/batch', encodeEnvelopeList(entries))));
  const json = await withNode(async (node) => {
    const d = expectOk(await post(node, '/api/v1/transactions/batch', { raw: [...entries.map(toHex), 'not hex'] }));
    assert.equal(d.results[3], { hash: null, status: 'rejected', error: d.results[3].error });
    assert.is(d.results[3].error.code, 'MALFORMED_INPUT');
    return { accepted: d.accepted, results: d.results.slice(0, 3) };
  });
  assert.equal(ssz, json);
  assert.is(ssz.accepted, 2);
});

batch('the same transaction twice in one batch: one accepted, the other refused', async () => {
  await withNode(async (node) => {
    const env = encodeTx(transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }));
    const d = expectOk(await postBytes(node, '/api/v1/transactions/batch', encodeEnvelopeList([env, env])));
    assert.is(d.accepted, 1);
    assert.equal(d.results.map((x: { status: string }) => x.status).sort(), ['accepted', 'rejected']);
    assert.is(node.admission.pool.size, 1);
  });
});

batch('more than MAX_TX_BATCH entries is 413 BATCH_TOO_LARGE (SSZ and JSON); nothing is admitted', async () => {
  await withNode(async (node) => {
    const env = encodeTx(transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }));
    const over = Array.from({ length: MAX_TX_BATCH + 1 }, () => env);
    expectEnvelope(await postBytes(node, '/api/v1/transactions/batch', encodeEnvelopeList(over)), 413, 'BATCH_TOO_LARGE');
    expectEnvelope(await post(node, '/api/v1/transactions/batch', { raw: over.map(() => '0x00') }), 413, 'BATCH_TOO_LARGE');
    assert.is(node.admission.pool.size, 0);
  });
});

batch('a body that is not a list at all is a 400 envelope', async () => {
  await withNode(async (node) => {
    const env = encodeTx(transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }));
    expectEnvelope(await postBytes(node, '/api/v1/transactions/batch', Uint8Array.of(1, 2, 3)), 400, 'MALFORMED_INPUT');
    // A single envelope is not a list of envelopes.
    expectEnvelope(await postBytes(node, '/api/v1/transactions/batch', env), 400, 'MALFORMED_INPUT');
    expectEnvelope(await post(node, '/api/v1/transactions/batch', { raw: toHex(env) }), 400, 'MALFORMED_INPUT');
    expectEnvelope(await post(node, '/api/v1/transactions/batch', [toHex(env)]), 400, 'MALFORMED_INPUT');
    expectEnvelope(await post(node, '/api/v1/transactions/batch', { raw: [], extra: 1 }), 400, 'MALFORMED_INPUT');
    assert.is(node.admission.pool.size, 0);
  });
});

batch('the per-client rate limit counts each transaction of a batch', async () => {
  // 1 per second, burst 2: of five entries at most three (two plus one refilled) get through.
  await withNode(
    async (node) => {
      // The per-sender limit (same rate) may refuse some too: every refusal is RATE_LIMITED, counted once.
      const envs = [0, 1, 2, 3, 4].map((i) => encodeTx(transfer(keys.accounts[i % 2]!, { nonce: i >> 1, gasPrice: 3n * GWEI })));
      const before = await rejections(node, 'RATE_LIMITED');
      const d = expectOk(await postBytes(node, '/api/v1/transactions/batch', encodeEnvelopeList(envs)));
      const limited = d.results.filter((x: { error?: { code: string } }) => x.error?.code === 'RATE_LIMITED').length;
      assert.ok(limited >= 2, JSON.stringify(d.results));
      assert.is(d.accepted + limited, envs.length);
      assert.is(await rejections(node, 'RATE_LIMITED'), before + limited);
    },
    { submitRatePerIp: 1 },
  );
});

const jsonOnly = suite('JSON-only routes sent SSZ bytes');

jsonOnly('REST and engine JSON routes answer a 4xx envelope; JSON-RPC a parse error; never 500', async () => {
  await withNode(async (node) => {
    const bytes = concatBytes(Uint8Array.of(0), new Uint8Array(64).fill(0x41));
    for (const path of ['/api/v1/faucet/claim', '/faucet', '/api/v1/execution/call', '/api/v1/execution/estimate-gas', '/api/v1/engine/forkchoiceUpdated']) {
      const r = await postBytes(node, path, bytes);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status} ${r.text}`);
      assert.is(r.body?.success, false, `${path}: ${r.text}`);
    }
    expectEnvelope(await postBytes(node, '/api/v1/faucet/claim', bytes), 400, 'MALFORMED_INPUT');
    const rpc = await http(node.rpcUrl, '/', { body: bytes, headers: SSZ });
    assert.is(rpc.status, 200, rpc.text);
    assert.is(rpc.body.error.code, -32700);
  });
});

single.run();
batch.run();
jsonOnly.run();
