/**
 * Request heads the server cannot or will not read: an over-long URL is a 414 envelope on a
 * connection that keeps serving (pipelined requests behind it are answered), a head beyond the
 * parser limit is a 431 envelope after every earlier response, never Node's or Fastify's own body.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { createServer, MAX_HEADER_BYTES, MAX_URL_BYTES } from '../../../../src/node/shared/http.js';
import { silentLogger } from '../../../../src/util/log.js';
import { expectEnvelope, get, withNode } from '../fixture.js';

const test = suite('http limits');

interface RawResponse {
  status: number;
  body: string;
}

/** Sends `payload` on one connection and parses `count` responses (or until the server closes). */
function pipeline(port: number, payload: string, count: number): Promise<{ responses: RawResponse[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    const parse = () => {
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        responses.push({ status: Number(head.split(' ')[1]), body: buf.subarray(end + 4, end + 4 + length).toString('utf8') });
        buf = buf.subarray(end + 4 + length);
        if (responses.length === count) {
          socket.destroy();
          resolve({ responses, closed: false });
        }
      }
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      parse();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ responses, closed: true }));
    socket.write(payload);
  });
}

const request = (path: string) => `GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\n`;

async function withServer(fn: (port: number, release: () => void) => Promise<void>): Promise<void> {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const app = createServer(silentLogger);
  app.get('/ok', async () => ({ ok: true }));
  app.get('/gated', async () => {
    await gate;
    return { gated: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    await fn((app.server.address() as { port: number }).port, open);
  } finally {
    open();
    await app.close();
  }
}

test('an over-long URL is 414 URI_TOO_LONG and the pipelined requests around it are answered', async () => {
  await withServer(async (port) => {
    const long = '/ok?x=' + 'y'.repeat(50_000);
    const { responses } = await pipeline(port, request('/ok') + request(long) + request('/ok'), 3);
    assert.equal(responses.map((r) => r.status), [200, 414, 200]);
    assert.equal(JSON.parse(responses[1]!.body), {
      success: false,
      error: { code: 'URI_TOO_LONG', message: `request URL is ${long.length} bytes; at most ${MAX_URL_BYTES} are accepted` },
    });
    assert.equal(JSON.parse(responses[2]!.body), { ok: true });
  });
});

test('a URL at the limit is served', async () => {
  await withServer(async (port) => {
    const path = '/ok?x=' + 'y'.repeat(MAX_URL_BYTES - 6);
    assert.is(path.length, MAX_URL_BYTES);
    const { responses } = await pipeline(port, request(path), 1);
    assert.is(responses[0]!.status, 200);
  });
});

test('a head beyond the parser limit is a 431 envelope, after the response of the request before it', async () => {
  await withServer(async (port, release) => {
    const huge = '/ok?x=' + 'y'.repeat(MAX_HEADER_BYTES + 1000);
    const pending = pipeline(port, request('/gated') + request(huge), 2);
    release();
    const { responses } = await pending;
    assert.equal(responses.map((r) => r.status), [200, 431]);
    assert.equal(JSON.parse(responses[0]!.body), { gated: true });
    assert.equal(JSON.parse(responses[1]!.body), { success: false, error: { code: 'HEADERS_TOO_LARGE', message: `request line and headers exceed ${MAX_HEADER_BYTES} bytes` } });
  });
});

test('a peer that closes mid-body gets its connection closed (the request in flight is not waited for)', async () => {
  const app = createServer(silentLogger);
  app.post('/body', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1');
    const socketClosed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => undefined);
    socket.resume();
    socket.write('POST /body HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":');
    socket.end();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the server kept the half-closed connection open')), 10_000)));
    await Promise.race([socketClosed, deadline]).finally(() => clearTimeout(timer));
  } finally {
    await app.close();
  }
});

test('a request that is not HTTP is a 400 envelope', async () => {
  await withServer(async (port) => {
    const { responses, closed } = await pipeline(port, 'NOT HTTP AT ALL\r\n\r\n', 1);
    assert.ok(closed || responses.length === 1);
    assert.is(responses[0]!.status, 400);
    assert.is(JSON.parse(responses[0]!.body).error.code, 'INVALID_REQUEST');
  });
});

test("the issue's repro on a real execution node: REST and JSON-RPC answer 414 and keep serving", async () => {
  await withNode(async (node) => {
    const tail = 'y'.repeat(50_000);
    expectEnvelope(await get(node, `/api/v1/execution/mempool?x=${tail}`), 414, 'URI_TOO_LONG');
    const rpc = await fetch(`${node.rpcUrl}/?x=${tail}`, { method: 'POST', body: '{}' });
    assert.is(rpc.status, 414);
    assert.is(((await rpc.json()) as { error: { code: string } }).error.code, 'URI_TOO_LONG');
    assert.is((await get(node, '/health')).status, 200);
  });
});

test.run();
