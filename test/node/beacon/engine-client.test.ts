/**
 * The beacon's engine client against an execution-side stand-in (a plain HTTP server that records
 * each request): newPayload sends the block's SSZ bytes as application/octet-stream, exactly the
 * bytes given, and maps execution's answer and error envelope.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { type Block, buildSignedBlock, encodeBlock } from '../../../src/core/types/block.js';
import { EngineError, connectEngine } from '../../../src/node/beacon/engine-client.js';
import { SSZ_MEDIA_TYPE } from '../../../src/api/media.js';
import { encodeImportAnswer, receiptsWhere } from '../../../src/api/import-answer.js';
import { isBridgeOutcome } from '../../../src/node/beacon/bridge/store.js';
import type { Receipt } from '../../../src/api/execution.js';
import { filled } from '../../helpers/assert.js';
import { waitFor } from '../../helpers/network.js';
import { CHAIN_ID, devnet, transfer } from '../execution/fixture.js';
import { httpStatusOf } from '../../../src/api/errors.js';

interface Seen {
  method: string;
  path: string;
  contentType: string | undefined;
  accept: string | undefined;
  body: Uint8Array;
}

/** A stand-in execution engine: config answers this chain; other routes answer what `reply` says (bytes go as SSZ; 'drop' cuts the answer off mid-body, 'hang' never answers). */
async function standIn(reply: (seen: Seen) => { status: number; body: unknown } | 'drop' | 'hang'): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const { genesis } = devnet();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', path: req.url ?? '', contentType: req.headers['content-type'], accept: req.headers.accept, body: new Uint8Array(Buffer.concat(chunks)) };
      seen.push(s);
      const r = s.path === '/api/v1/engine/config' ? { status: 200, body: { success: true, data: { chain_id: genesis.chain_id, network_id: genesis.network_id, genesis_hash: EXPECTED.genesis_hash } } } : reply(s);
      if (r === 'hang') return;
      // Headers and part of the body, then the connection is dropped.
      if (r === 'drop') return res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' }).write('{"success":tr', () => res.socket?.destroy());
      if (r.body instanceof Uint8Array) res.writeHead(r.status, { 'content-type': SSZ_MEDIA_TYPE }).end(r.body);
      else res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((ok) => { server.close(() => ok()); server.closeAllConnections(); }) };
}

const EXPECTED = { chain_id: CHAIN_ID, network_id: devnet().genesis.network_id, genesis_hash: '0x' + '11'.repeat(32) };

function fullishBlock(): Block {
  const { keys } = devnet();
  const txs = [0, 1, 2].map((n) => transfer(keys.accounts[0]!, { nonce: n }));
  return buildSignedBlock({ chainId: CHAIN_ID, index: 1, timestampMs: 1_700_000_002_000, parentHash: filled(32, 1), transactions: txs, key: keys.validators[0]!.mldsa, validatorIndex: 0, validatorId: parseHex(keys.validators[0]!.address, 'address', 20), vrfSeed: filled(32, 2), randaoReveal: filled(32, 3), stateRoot: filled(32, 4) });
}

test('newPayload posts the given SSZ bytes as application/octet-stream and returns execution\'s answer', async () => {
  const result = { hash: '0x' + 'ab'.repeat(32), number: 1, state_root: '0x' + 'cd'.repeat(32), receipts: [] };
  const exec = await standIn(() => ({ status: 200, body: { success: true, data: result } }));
  try {
    const client = connectEngine(exec.url, EXPECTED);
    const ssz = encodeBlock(fullishBlock());
    assert.equal(await client.newPayload(ssz), result);
    const posts = exec.seen.filter((s) => s.method === 'POST');
    assert.is(posts.length, 1);
    assert.is(posts[0]!.path, '/api/v1/engine/newPayload');
    assert.is(posts[0]!.contentType, SSZ_MEDIA_TYPE);
    assert.equal(posts[0]!.body, ssz, 'exactly the bytes given, not an encoding of a decoded block');
    // Other calls still send JSON.
    await client.forkchoiceUpdated('0x' + 'ab'.repeat(32), '0x' + 'ab'.repeat(32)).catch(() => undefined);
    const fcu = exec.seen.find((s) => s.path === '/api/v1/engine/forkchoiceUpdated')!;
    assert.is(fcu.contentType, 'application/json');
  } finally {
    await exec.close();
  }
});

test('newPayload asks for the compact SSZ answer and decodes it; a malformed one is EXECUTION_ERROR', async () => {
  const receipts: Receipt[] = [{ transactionHash: '0x' + '01'.repeat(32), transactionIndex: 0, blockHash: '0x' + 'ab'.repeat(32), blockNumber: 1, from: '0x' + '11'.repeat(20), to: null, kind: 'transfer', status: 1, gasUsed: 21000, cumulativeGasUsed: 21000, effectiveGasPrice: '1', fee: '21000', contractAddress: null, logs: [] }];
  const result = { status: 'VALID' as const, block_hash: '0x' + 'ab'.repeat(32), block_number: 1, state_root: '0x' + 'cd'.repeat(32), gas_used: 21000, receipts, canonical: true, already_known: false, registry_changed: false };
  let answer: Uint8Array = encodeImportAnswer(result, receipts.map((r) => JSON.stringify(r)));
  const exec = await standIn(() => ({ status: 200, body: answer }));
  try {
    const client = connectEngine(exec.url, EXPECTED);
    assert.equal(JSON.parse(JSON.stringify(await client.newPayload(encodeBlock(fullishBlock())))), result);
    assert.match(exec.seen.find((s) => s.method === 'POST')!.accept ?? '', /application\/octet-stream/);
    answer = answer.subarray(0, 40);
    const err = await client.newPayload(encodeBlock(fullishBlock())).then(() => undefined, (e: unknown) => e);
    assert.instance(err, EngineError);
    assert.is((err as EngineError).code, 'EXECUTION_ERROR');
  } finally {
    await exec.close();
  }
});

test('the beacon parses only the bridge receipts of a compact answer: their status and kind come from its binary columns', async () => {
  const base = { blockHash: '0x' + 'ab'.repeat(32), blockNumber: 1, from: '0x' + '11'.repeat(20), to: null, gasUsed: 21000, cumulativeGasUsed: 21000, effectiveGasPrice: '1', fee: '21000', contractAddress: null, logs: [] };
  const receipts: Receipt[] = [
    { ...base, transactionHash: '0x' + '01'.repeat(32), transactionIndex: 0, kind: 'transfer', status: 1 },
    { ...base, transactionHash: '0x' + '02'.repeat(32), transactionIndex: 1, kind: 'bridge_lock', status: 1 },
    { ...base, transactionHash: '0x' + '03'.repeat(32), transactionIndex: 2, kind: 'bridge_lock', status: 0, error: 'revert: locked' },
  ];
  const result = { status: 'VALID' as const, block_hash: base.blockHash, block_number: 1, state_root: '0x' + 'cd'.repeat(32), gas_used: 63000, receipts, canonical: true, already_known: false, registry_changed: false };
  const json = receipts.map((r) => JSON.stringify(r));
  // The transfer's and the failed lock's JSON are cut short: parsing either would throw.
  json[0] = json[0]!.slice(0, 10);
  json[2] = json[2]!.slice(0, 10);
  const exec = await standIn(() => ({ status: 200, body: encodeImportAnswer(result, json) }));
  try {
    const answer = await connectEngine(exec.url, EXPECTED).newPayload(encodeBlock(fullishBlock()));
    assert.equal(receiptsWhere(answer, isBridgeOutcome), [receipts[1]]);
    assert.is(answer.state_root, result.state_root);
  } finally {
    await exec.close();
  }
});

test('newPayload: execution\'s error envelope becomes an EngineError with its code; a non-envelope answer is EXECUTION_ERROR', async () => {
  let answer: { status: number; body: unknown } = { status: 400, body: { success: false, error: { code: 'MALFORMED_INPUT', message: 'malformed block: bad offset' } } };
  const exec = await standIn(() => answer);
  try {
    const client = connectEngine(exec.url, EXPECTED);
    const err = await client.newPayload(Uint8Array.of(1, 2, 3)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof EngineError);
    assert.equal([(err as EngineError).code, (err as EngineError).message, httpStatusOf(err as EngineError)], ['MALFORMED_INPUT', 'malformed block: bad offset', 400]);
    answer = { status: 502, body: 'not an envelope' };
    const other = await client.newPayload(Uint8Array.of(1)).then(() => undefined, (e: unknown) => e);
    assert.equal([(other as EngineError).code, httpStatusOf(other as EngineError)], ['EXECUTION_ERROR', 502]);
  } finally {
    await exec.close();
  }
});

/** The EngineError `p` rejects with. */
async function engineError(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  assert.instance(err, EngineError);
  return err as EngineError;
}

test('garbage answers: non-JSON is EXECUTION_ERROR (400 for a 2xx/4xx, 502 for a 5xx), an empty or truncated SSZ answer is EXECUTION_ERROR 502', async () => {
  let answer: { status: number; body: unknown } = { status: 200, body: '<html>not json' };
  const exec = await standIn(() => answer);
  const client = connectEngine(exec.url, EXPECTED);
  try {
    const fcu = () => client.forkchoiceUpdated('0x' + 'ab'.repeat(32), '0x' + 'ab'.repeat(32));
    assert.equal(await engineError(fcu()).then((e) => [e.code, httpStatusOf(e)]), ['EXECUTION_ERROR', 400]);
    answer = { status: 200, body: null };
    assert.equal(await engineError(fcu()).then((e) => [e.code, httpStatusOf(e)]), ['EXECUTION_ERROR', 400], 'JSON null');
    answer = { status: 503, body: { success: false, error: 'no object' } };
    assert.equal(await engineError(fcu()).then((e) => [e.code, httpStatusOf(e)]), ['EXECUTION_ERROR', 502], 'an error that is not an envelope');
    for (const bytes of [new Uint8Array(0), Uint8Array.of(1, 2, 3)]) {
      answer = { status: 200, body: bytes };
      const e = await engineError(client.newPayload(encodeBlock(fullishBlock())));
      assert.equal([e.code, httpStatusOf(e)], ['EXECUTION_ERROR', 502], `${bytes.length} SSZ bytes`);
      assert.match(e.message, /malformed SSZ answer/);
    }
    assert.is(client.linkProblem(), undefined, 'an answer, even a bad one, means execution is reachable');
  } finally {
    client.close();
    await exec.close();
  }
});

test('a connection dropped mid-answer is EXECUTION_UNREACHABLE 503, and the chain is checked again before the next call', async () => {
  let drop = true;
  const exec = await standIn(() => (drop ? 'drop' : { status: 200, body: { success: true, data: { head: {}, finalized: {}, reverted: 0, applied: 0 } } }));
  const client = connectEngine(exec.url, EXPECTED);
  try {
    const fcu = () => client.forkchoiceUpdated('0x' + 'ab'.repeat(32), '0x' + 'ab'.repeat(32));
    const e = await engineError(fcu());
    assert.equal([e.code, httpStatusOf(e)], ['EXECUTION_UNREACHABLE', 503]);
    assert.match(e.message, /cut off/);
    assert.is(client.linkProblem()?.code, 'EXECUTION_UNREACHABLE');
    drop = false;
    const before = exec.seen.filter((s) => s.path === '/api/v1/engine/config').length;
    await fcu();
    const paths = exec.seen.slice(-2).map((s) => s.path);
    assert.equal(paths, ['/api/v1/engine/config', '/api/v1/engine/forkchoiceUpdated'], 'config first, then the call');
    assert.is(exec.seen.filter((s) => s.path === '/api/v1/engine/config').length, before + 1);
    assert.is(client.linkProblem(), undefined);
  } finally {
    client.close();
    await exec.close();
  }
});

test('an engine that hangs past the deadline is EXECUTION_UNREACHABLE; close() ends a call in flight the same way', async () => {
  const exec = await standIn(() => 'hang');
  const client = connectEngine(exec.url, EXPECTED, undefined, 300);
  try {
    const e = await engineError(client.registry());
    assert.equal([e.code, httpStatusOf(e)], ['EXECUTION_UNREACHABLE', 503]);
    assert.match(e.message, /within 300 ms/);
    const slow = connectEngine(exec.url, EXPECTED);
    const inFlight = engineError(slow.registry());
    await waitFor('the second call to reach the engine', async () => exec.seen.length >= 2 || undefined, 5_000, 10);
    slow.close();
    assert.is((await inFlight).code, 'EXECUTION_UNREACHABLE');
  } finally {
    client.close();
    await exec.close();
  }
});

test('an execution URL that is not http(s) is refused at construction (INVALID_URL)', () => {
  try {
    connectEngine('ftp://127.0.0.1:8546', EXPECTED);
    assert.unreachable();
  } catch (err) {
    assert.is((err as { code?: string }).code, 'INVALID_URL');
  }
});

test.run();
