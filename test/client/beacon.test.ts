/**
 * The validator's HTTP clients on the binary wire, against stand-in servers that record each
 * request: BeaconClient.proposeBlock sends `encodeBlock` bytes; the engine client (src/client/engine.ts) asks for
 * pending transactions as an SSZ envelope list, reads a JSON answer too (by Content-Type), stops
 * at the first entry that does not decode, and calls a list that is not one a BAD_RESPONSE; no
 * answer is UNREACHABLE or TIMEOUT for the validator, as before the engine clients were one.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseHex } from '../../src/core/codec/bytes.js';
import { buildSignedBlock, encodeBlock } from '../../src/core/types/block.js';
import { encodeEnvelopeList, encodeTx } from '../../src/core/types/transaction.js';
import { txToJson } from '../../src/core/types/transaction-json.js';
import { SSZ_MEDIA_TYPE } from '../../src/api/media.js';
import { BeaconClient, BeaconClientError } from '../../src/client/beacon.js';
import { EngineClient, EngineError } from '../../src/client/engine.js';
import { filled } from '../helpers/assert.js';
import { CHAIN_ID, devnet, transfer } from '../node/execution/fixture.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Uint8Array;
}

type Answer = { status: number; type: string; body: string | Uint8Array };

async function standIn(answer: (s: Seen) => Answer): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: new Uint8Array(Buffer.concat(chunks)) };
      seen.push(s);
      const a = answer(s);
      res.writeHead(a.status, { 'content-type': a.type }).end(a.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((ok) => { server.close(() => ok()); server.closeAllConnections(); }) };
}

const json = (status: number, body: unknown): Answer => ({ status, type: 'application/json', body: JSON.stringify(body) });
const bytes = (body: Uint8Array): Answer => ({ status: 200, type: SSZ_MEDIA_TYPE, body });

const { keys } = devnet();
const TXS = [0, 1, 2].map((n) => transfer(keys.accounts[0]!, { nonce: n }));
const ENVELOPES = TXS.map(encodeTx);

test('pendingTransactions asks for SSZ and decodes the envelope list, keeping execution\'s envelopes', async () => {
  const exec = await standIn(() => bytes(encodeEnvelopeList(ENVELOPES)));
  try {
    const p = await new EngineClient(exec.url).pendingTransactions();
    assert.is(p.count, 3);
    assert.equal(p.envelopes, ENVELOPES);
    assert.equal(p.transactions.map((t) => encodeTx(t)), ENVELOPES);
    assert.is(p.malformed, undefined);
    assert.match(String(exec.seen[0]!.headers.accept), SSZ_MEDIA_TYPE);
    assert.is(exec.seen[0]!.path, '/api/v1/engine/getPendingTransactions');
  } finally {
    await exec.close();
  }
});

test('pendingTransactions reads a JSON answer (an execution node without SSZ) into the same transactions and envelopes', async () => {
  const exec = await standIn(() => json(200, { success: true, data: { count: 3, gas: 63_000, transactions: TXS.map(txToJson) } }));
  try {
    const p = await new EngineClient(exec.url).pendingTransactions();
    assert.is(p.count, 3);
    assert.equal(p.envelopes, ENVELOPES);
  } finally {
    await exec.close();
  }
});

test('pendingTransactions: decoding stops at the first bad entry (reported); a body that is not a list is BAD_RESPONSE; an error envelope keeps its code', async () => {
  let answer: Answer = bytes(encodeEnvelopeList([ENVELOPES[0]!, Uint8Array.of(0x7f, 0, 0), ENVELOPES[2]!]));
  const exec = await standIn(() => answer);
  try {
    const client = new EngineClient(exec.url);
    const p = await client.pendingTransactions();
    assert.is(p.count, 3);
    assert.equal(p.envelopes, [ENVELOPES[0]]);
    assert.is(p.malformed?.position, 1);
    assert.match(p.malformed!.message, /malformed/);

    answer = bytes(Uint8Array.of(9, 9, 9));
    const bad = await client.pendingTransactions().then(() => undefined, (e: unknown) => e);
    assert.ok(bad instanceof EngineError);
    assert.is((bad as EngineError).code, 'BAD_RESPONSE');
    assert.match((bad as Error).message, /getPendingTransactions: malformed transactions/);

    answer = json(200, { success: true, data: { count: 2, transactions: [txToJson(TXS[0]!), { nonce: 'x' }] } });
    const j = await client.pendingTransactions();
    assert.equal([j.count, j.envelopes.length, j.malformed?.position], [2, 1, 1]);

    answer = json(403, { success: false, error: { code: 'ENGINE_FORBIDDEN', message: 'no' } });
    const forbidden = await client.pendingTransactions().then(() => undefined, (e: unknown) => e);
    assert.equal([(forbidden as EngineError).code, (forbidden as EngineError).httpStatus], ['ENGINE_FORBIDDEN', 403]);
  } finally {
    await exec.close();
  }
});

test('the validator\'s engine calls: no answer is UNREACHABLE or TIMEOUT (transport, no HTTP status); a non-envelope error is HTTP_ERROR; a JSON getPayload answer is read', async () => {
  const root = '0x' + 'cd'.repeat(32);
  let answer: Answer | 'hang' = json(200, { success: true, data: { state_root: root.toUpperCase().replace('0X', '0x'), transactions: [] } });
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    if (answer === 'hang') return;
    res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new EngineClient(url, { timeoutMs: 300 });
  const hash = '0x' + 'ab'.repeat(32);
  try {
    const payload = await client.payload(hash, '0x' + '11'.repeat(20), false);
    assert.equal([Buffer.from(payload.stateRoot).toString('hex'), payload.envelopes], [root.slice(2), []]);
    answer = bytes(new Uint8Array([1, 2, 3]));
    const garbled = await client.payload(hash, '0x' + '11'.repeat(20), false).then(() => undefined, (e: unknown) => e as EngineError);
    assert.equal([garbled?.code, garbled?.transport], ['BAD_RESPONSE', false], 'an SSZ payload that does not decode');
    assert.match(garbled!.message, /malformed payload/);
    answer = { status: 500, type: 'text/plain', body: 'boom' };
    const http = await client.payload(hash, '0x' + '11'.repeat(20), false).then(() => undefined, (e: unknown) => e as EngineError);
    assert.equal([http?.code, http?.httpStatus, http?.transport], ['HTTP_ERROR', 500, false]);
    answer = 'hang';
    const slow = await client.pendingTransactions().then(() => undefined, (e: unknown) => e as EngineError);
    assert.equal([slow?.code, slow?.httpStatus, slow?.transport], ['TIMEOUT', undefined, true]);
    assert.match(slow!.message, /did not answer GET \/api\/v1\/engine\/getPendingTransactions within 300 ms/);
  } finally {
    client.close();
    await new Promise<void>((ok) => { server.close(() => ok()); server.closeAllConnections(); });
  }
  const down = await client.pendingTransactions().then(() => undefined, (e: unknown) => e as EngineError);
  assert.equal([down?.code, down?.transport], ['UNREACHABLE', true]);
  const refused = await new EngineClient(url).pendingTransactions().then(() => undefined, (e: unknown) => e as EngineError);
  assert.equal([refused?.code, refused?.httpStatus, refused?.transport], ['UNREACHABLE', undefined, true]);
  assert.match(refused!.message, /cannot reach the execution node at http:\/\/127\.0\.0\.1:\d+ \(connection refused\)/);
});

test('proposeBlock sends the block\'s SSZ bytes with the bearer token; refusals keep the beacon\'s code', async () => {
  const block = buildSignedBlock({ chainId: CHAIN_ID, index: 1, timestampMs: 1_700_000_002_000, parentHash: filled(32, 1), transactions: TXS, key: keys.validators[0]!.mldsa, validatorIndex: 0, validatorId: parseHex(keys.validators[0]!.address, 'address', 20), vrfSeed: filled(32, 2), randaoReveal: filled(32, 3), stateRoot: filled(32, 4) });
  const ssz = encodeBlock(block, ENVELOPES);
  const hash = '0x' + 'ab'.repeat(32);
  let answer = json(200, { success: true, data: { block_hash: hash, slot: 1, index: 1, state_root: hash, transactions: 3, already_known: false } });
  const beacon = await standIn(() => answer);
  try {
    const client = new BeaconClient(beacon.url, { token: 'secret' });
    const r = await client.proposeBlock(ssz);
    assert.equal([r.block_hash, r.slot], [hash, 1]);
    const post = beacon.seen[0]!;
    assert.equal([post.method, post.path, post.headers['content-type'], post.headers.authorization], ['POST', '/api/v1/validator/blocks/propose', SSZ_MEDIA_TYPE, 'Bearer secret']);
    assert.equal(post.body, ssz);

    answer = json(400, { success: false, error: { code: 'MALFORMED_INPUT', message: 'malformed block' } });
    const refused = await client.proposeBlock(ssz).then(() => undefined, (e: unknown) => e);
    assert.equal([(refused as BeaconClientError).code, (refused as BeaconClientError).httpStatus, (refused as BeaconClientError).transport], ['MALFORMED_INPUT', 400, false]);

    answer = json(200, { success: true, data: { block_hash: 'nope', slot: 1 } });
    assert.is(((await client.proposeBlock(ssz).catch((e: unknown) => e)) as BeaconClientError).code, 'BAD_RESPONSE');
  } finally {
    await beacon.close();
  }
});

test.run();
