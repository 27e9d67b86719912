/**
 * The engine API's SSZ bodies: newPayload (and POST /api/v1/blocks) takes encodeBlock bytes with
 * the same answer and state as the JSON block; a truncated or garbage SSZ block is a 400 envelope
 * and changes nothing; getPendingTransactions answers an SSZ envelope list in build order when
 * asked with Accept: application/octet-stream, and newPayload the compact SSZ answer. SSZ bodies are read into one buffer of their
 * declared length: one over the engine limit is a 413 envelope, a chunked one (no length) still
 * imports, and a client that hangs up mid-body leaves the node answering.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { connect } from 'node:net';
import { ENGINE_BODY_LIMIT } from '../../../../src/node/shared/http.js';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { GWEI } from '../../../../src/core/constants.js';
import { blockToJson, encodeBlock } from '../../../../src/core/types/block.js';
import { decodeEnvelopeList, encodeTx } from '../../../../src/core/types/transaction.js';
import { decodeImportAnswer } from '../../../../src/api/import-answer.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { devnet, expectEnvelope, expectOk, genesisRef, get, hashOf, http, makeBlock, post, submitOk, transfer, withNode, withTempDir } from '../fixture.js';

const { keys } = devnet();
const SSZ = { 'content-type': 'application/octet-stream' };
const postBytes = (node: ExecutionNode, path: string, bytes: Uint8Array) => http(node.restUrl, path, { body: bytes, headers: SSZ });

const newPayload = suite('newPayload with SSZ bytes');

newPayload('the same block as SSZ and as JSON: the same answer, state root, receipts and stored block', async () => {
  const txs = [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }), transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 3n * GWEI }), transfer(keys.accounts[0]!, { nonce: 1, gasPrice: 3n * GWEI })];
  const run = (send: (node: ExecutionNode, body: ReturnType<typeof makeBlock>) => ReturnType<typeof post>) =>
    withNode(async (node) => {
      const block = makeBlock(await genesisRef(node), { txs });
      const result = expectOk(await send(node, block));
      assert.is(result.status, 'VALID');
      assert.is(result.canonical, true);
      const stored = expectOk(await get(node, `/api/v1/blocks/${result.block_hash}`));
      // Sent again in the other encoding, it is the same block, already known.
      const again = expectOk(await (send === viaSsz ? post(node, '/api/v1/engine/newPayload', blockToJson(block)) : viaSsz(node, block)));
      assert.is(again.already_known, true);
      assert.is(again.state_root, result.state_root);
      return { result, stored };
    });
  const viaSsz = (node: ExecutionNode, block: ReturnType<typeof makeBlock>) => postBytes(node, '/api/v1/engine/newPayload', encodeBlock(block));
  const viaJson = (node: ExecutionNode, block: ReturnType<typeof makeBlock>) => post(node, '/api/v1/engine/newPayload', blockToJson(block));
  const ssz = await run(viaSsz);
  const json = await run(viaJson);
  assert.equal(ssz, json);
  assert.equal(ssz.stored.transactions, txs.map(hashOf));
  assert.is(ssz.result.receipts.length, txs.length);
});

newPayload('POST /api/v1/blocks takes SSZ bytes too', async () => {
  await withNode(async (node) => {
    const block = makeBlock(await genesisRef(node), { txs: [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI })] });
    const r = expectOk(await postBytes(node, '/api/v1/blocks', encodeBlock(block)));
    assert.is(r.status, 'VALID');
    assert.is(node.chain.head().index, 1);
  });
});

newPayload('a truncated, garbage or empty SSZ block is a 400 envelope and the head does not move', async () => {
  await withNode(async (node) => {
    const bytes = encodeBlock(makeBlock(await genesisRef(node), { txs: [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI })] }));
    for (const body of [bytes.subarray(0, bytes.length - 1), bytes.subarray(0, 500), Uint8Array.from({ length: 4000 }, (_, i) => (i * 31) & 0xff), new Uint8Array(0), Uint8Array.of(1)]) {
      for (const path of ['/api/v1/engine/newPayload', '/api/v1/blocks']) {
        const r = await postBytes(node, path, body);
        assert.is(r.status, 400, `${body.length} bytes: ${r.text}`);
        assert.is(r.body?.success, false, r.text);
      }
    }
    expectEnvelope(await postBytes(node, '/api/v1/engine/newPayload', bytes.subarray(0, bytes.length - 1)), 400, 'MALFORMED_INPUT');
    assert.is(node.chain.head().index, 0);
    // The intact bytes still import.
    assert.is(expectOk(await postBytes(node, '/api/v1/engine/newPayload', bytes)).status, 'VALID');
  });
});

newPayload('an SSZ block whose transaction envelope does not decode is MALFORMED_INPUT naming tx.Envelope', async () => {
  await withNode(async (node) => {
    const tx = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
    const block = makeBlock(await genesisRef(node), { txs: [tx] });
    const bytes = encodeBlock(block);
    const env = encodeTx(tx);
    const at = Buffer.from(bytes).indexOf(Buffer.from(env));
    assert.ok(at > 0);
    const bad = bytes.slice();
    bad[at] = 9;
    const r = await postBytes(node, '/api/v1/engine/newPayload', bad);
    expectEnvelope(r, 400, 'MALFORMED_INPUT', /tx\.Type/);
    assert.is(node.chain.head().index, 0);
  });
});

newPayload('the answer is the ok envelope of the import result, byte for byte as JSON.stringify writes it', async () => {
  await withNode(async (node) => {
    const txs = [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }), transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 3n * GWEI })];
    const r = await postBytes(node, '/api/v1/engine/newPayload', encodeBlock(makeBlock(await genesisRef(node), { txs })));
    assert.is(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const body = r.body as { success: boolean; data: { receipts: unknown[] } };
    assert.is(r.text, JSON.stringify(body));
    assert.equal(Object.keys(body.data), ['status', 'block_hash', 'block_number', 'state_root', 'gas_used', 'receipts', 'canonical', 'already_known', 'registry_changed']);
    assert.is(body.data.receipts.length, 2);
    assert.is((body.data as { registry_changed?: unknown }).registry_changed, false, 'two transfers leave the registry as it was');
  });
});

/** POSTs `body` with Content-Length, or chunked without one; resolves with the status and parsed answer. */
function rawPost(url: string, path: string, body: Uint8Array, chunked: boolean): Promise<{ status: number; json: { success: boolean; error?: { code: string } } }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream', ...(chunked ? {} : { 'content-length': body.length }) };
    const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    // The server may answer (413) and stop reading before the whole body is written.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    if (chunked) {
      const step = 1 << 20;
      for (let at = 0; at < body.length; at += step) req.write(body.subarray(at, at + step));
      req.end();
    } else req.end(body);
  });
}

newPayload('an SSZ body over the engine limit is a 413 envelope, declared or chunked; a chunked block within it imports', async () => {
  await withNode(async (node) => {
    const over = new Uint8Array(ENGINE_BODY_LIMIT + 1);
    for (const chunked of [false, true]) {
      const r = await rawPost(node.restUrl, '/api/v1/engine/newPayload', over, chunked);
      assert.is(r.status, 413, `chunked ${chunked}`);
      assert.is(r.json.error?.code, 'BODY_TOO_LARGE');
    }
    assert.is(node.chain.head().index, 0);
    const block = makeBlock(await genesisRef(node), { txs: [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI })] });
    const r = await rawPost(node.restUrl, '/api/v1/blocks', encodeBlock(block), true);
    assert.is(r.status, 200, JSON.stringify(r.json));
    assert.is(node.chain.head().index, 1);
  });
});

newPayload('a client that hangs up mid-body gets nothing imported, and the node keeps answering public and engine calls', async () => {
  await withNode(async (node) => {
    const bytes = encodeBlock(makeBlock(await genesisRef(node), { txs: [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI })] }));
    const u = new URL(node.restUrl);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(u.port), u.hostname, () => {
        socket.write(`POST /api/v1/engine/newPayload HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/octet-stream\r\ncontent-length: ${bytes.length}\r\n\r\n`);
        socket.end(bytes.subarray(0, 1000));
      });
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.resume();
    });
    // Public lookups wait while an engine call is in flight: they answer, so the cut call ended.
    expectEnvelope(await get(node, `/api/v1/receipts/0x${'00'.repeat(32)}`), 404, 'NOT_FOUND');
    assert.is(node.chain.head().index, 0);
    assert.is(expectOk(await postBytes(node, '/api/v1/engine/newPayload', bytes)).status, 'VALID');
  });
});

const pending = suite('getPendingTransactions with Accept: application/octet-stream');

pending('answers the envelopes in build order as one SSZ list, the same transactions as the JSON answer', async () => {
  await withNode(async (node) => {
    const txs = [transfer(keys.accounts[0]!, { nonce: 1, gasPrice: 3n * GWEI }), transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }), transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 5n * GWEI })];
    for (const tx of txs) await submitOk(node, tx, tx.nonce === 1n ? 'queued' : 'ready');
    const json = expectOk(await get(node, '/api/v1/engine/getPendingTransactions'));
    const r = await fetch(`${node.restUrl}/api/v1/engine/getPendingTransactions`, { headers: { accept: 'application/octet-stream' } });
    assert.is(r.status, 200);
    assert.is(r.headers.get('content-type'), 'application/octet-stream');
    const envelopes = decodeEnvelopeList(new Uint8Array(await r.arrayBuffer()));
    assert.is(envelopes.length, json.count);
    assert.equal(envelopes.map(toHex), json.transactions.map((t: { hash: string }) => toHex(encodeTx(txs.find((x) => hashOf(x) === t.hash)!))));
    const limited = await fetch(`${node.restUrl}/api/v1/engine/getPendingTransactions?max_gas=21000`, { headers: { accept: 'application/octet-stream' } });
    assert.is(decodeEnvelopeList(new Uint8Array(await limited.arrayBuffer())).length, 1);
    // A bad query is still a JSON error envelope.
    expectEnvelope(await get(node, '/api/v1/engine/getPendingTransactions?max_gas=x', { accept: 'application/octet-stream' }), 400, 'MALFORMED_INPUT');
  });
});

newPayload('with Accept: application/octet-stream the answer is the compact SSZ answer, equal to the JSON one; errors stay JSON envelopes', async () => {
  const txs = [transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI }), transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 3n * GWEI })];
  const asked = { ...SSZ, accept: 'application/octet-stream' };
  const json = await withNode(async (node) => expectOk(await postBytes(node, '/api/v1/engine/newPayload', encodeBlock(makeBlock(await genesisRef(node), { txs })))));
  // On the memory DB and on disk, where the answer's receipts are the bytes the body file wrote.
  for (const onDisk of [false, true]) await withTempDir((dir) => withNode(async (node) => {
    const bytes = encodeBlock(makeBlock(await genesisRef(node), { txs }));
    const answer = async () => {
      const res = await fetch(`${node.restUrl}/api/v1/engine/newPayload`, { method: 'POST', headers: asked, body: bytes });
      assert.is(res.status, 200);
      assert.is(res.headers.get('content-type'), 'application/octet-stream');
      return decodeImportAnswer(new Uint8Array(await res.arrayBuffer()));
    };
    assert.equal(JSON.parse(JSON.stringify(await answer())), json);
    // Already known: the stored receipts, in the same form.
    const again = await answer();
    assert.is(again.already_known, true);
    assert.equal(again.receipts, json.receipts);
    const bad = await http(node.restUrl, '/api/v1/engine/newPayload', { body: bytes.subarray(0, 500), headers: asked });
    expectEnvelope(bad, 400, 'MALFORMED_INPUT');
  }, onDisk ? { dataDir: dir } : {}));
});

newPayload.run();
pending.run();
