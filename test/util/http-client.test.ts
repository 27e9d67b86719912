/**
 * The node-to-node HTTP client against real local servers: bodies and media types both ways,
 * keep-alive reuse, and every way an answer can fail to arrive (refused, hung past the deadline,
 * cut off mid-body, too large, aborted, shut down) as an HttpClientError with its code.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient, HttpClientError, type HttpClientErrorCode, type HttpClientOptions } from '../../src/util/http-client.js';

interface Served {
  url: string;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A local server answering with `handle`; requests are buffered whole before it is called. */
async function serve(handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void): Promise<Served> {
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks), res));
  });
  server.on('connection', () => connections++);
  // Longer than any test: a connection closes only when the client (or the test) closes it.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

/** The code of the HttpClientError `p` rejects with (fails the test on success or another error). */
async function failureOf(p: Promise<unknown>): Promise<{ code: HttpClientErrorCode; reason: string }> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, HttpClientError);
    const e = err as HttpClientError;
    return { code: e.code, reason: e.reason };
  }
  assert.unreachable('the request succeeded');
  throw new Error('unreachable');
}

/** The failure code of one GET / to a fresh server answering with `handle`. */
async function codeOfGet(handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void, timeoutMs: number, opts: HttpClientOptions = {}): Promise<HttpClientErrorCode> {
  const s = await serve(handle);
  const c = new HttpClient(s.url, opts);
  try {
    return (await failureOf(c.request({ method: 'GET', path: '/', timeoutMs }))).code;
  } finally {
    c.close();
    await s.close();
  }
}

test('sends JSON and SSZ bodies as given and returns status, media type and body bytes over one kept connection', async () => {
  const seen: Array<{ method: string; path: string; type: string | undefined; body: Buffer; auth: string | undefined }> = [];
  const s = await serve((req, body, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', type: req.headers['content-type'], body, auth: req.headers.authorization });
    if (req.method === 'POST' && req.headers['content-type'] === 'application/octet-stream') res.writeHead(202, { 'content-type': 'Application/Octet-Stream; x=1' }).end(Buffer.from([9, 8, 7]));
    else res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"success":true,"data":1}');
  });
  const c = new HttpClient(s.url + '/prefix/');
  try {
    const a = await c.request({ method: 'POST', path: '/x?y=1', headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, body: '{"a":"é"}', timeoutMs: 5_000 });
    assert.is(a.status, 200);
    assert.is(a.contentType, 'application/json');
    assert.is(Buffer.from(a.body).toString('utf8'), '{"success":true,"data":1}');
    const bytes = new Uint8Array([0, 1, 2, 255]);
    const b = await c.request({ method: 'POST', path: '/ssz', headers: { 'content-type': 'application/octet-stream' }, body: bytes, timeoutMs: 5_000 });
    assert.is(b.status, 202);
    assert.is(b.contentType, 'application/octet-stream');
    assert.equal([...b.body], [9, 8, 7]);
    const g = await c.request({ method: 'GET', path: '/g', timeoutMs: 5_000 });
    assert.is(g.status, 200);
    assert.equal(
      seen.map((x) => [x.method, x.path, x.type, x.auth]),
      [
        ['POST', '/prefix/x?y=1', 'application/json', 'Bearer t'],
        ['POST', '/prefix/ssz', 'application/octet-stream', undefined],
        ['GET', '/prefix/g', undefined, undefined],
      ],
    );
    assert.is(seen[0]!.body.toString('utf8'), '{"a":"é"}');
    assert.equal([...seen[1]!.body], [0, 1, 2, 255]);
    assert.is(s.connections(), 1, 'sequential requests reuse the kept connection');
  } finally {
    c.close();
    await s.close();
  }
});

test('a kept connection idle past idleMs is closed by the client, and the next request opens a new one', async () => {
  let closed!: () => void;
  const serverSawClose = new Promise<void>((ok) => (closed = ok));
  const s = await serve((req, _body, res) => {
    req.socket.once('close', () => closed());
    res.writeHead(200).end('x');
  });
  const c = new HttpClient(s.url, { idleMs: 100 });
  try {
    await c.request({ method: 'GET', path: '/', timeoutMs: 5_000 });
    await Promise.race([serverSawClose, new Promise((_, fail) => setTimeout(() => fail(new Error('the client kept the idle connection open for 3 s')), 3_000).unref())]);
    await c.request({ method: 'GET', path: '/', timeoutMs: 5_000 });
    assert.is(s.connections(), 2);
  } finally {
    c.close();
    await s.close();
  }
});

test('a refused connection is HTTP_UNREACHABLE (connection refused)', async () => {
  const s = await serve((_req, _body, res) => res.end());
  const url = s.url;
  await s.close();
  const c = new HttpClient(url);
  try {
    const f = await failureOf(c.request({ method: 'GET', path: '/', timeoutMs: 5_000 }));
    assert.equal(f, { code: 'HTTP_UNREACHABLE', reason: 'connection refused' });
  } finally {
    c.close();
  }
});

test('a server that never answers is HTTP_TIMEOUT at the deadline', async () => {
  const s = await serve(() => undefined);
  const c = new HttpClient(s.url);
  try {
    const t0 = Date.now();
    const f = await failureOf(c.request({ method: 'GET', path: '/', timeoutMs: 300 }));
    assert.is(f.code, 'HTTP_TIMEOUT');
    assert.ok(Date.now() - t0 >= 290, 'not before the deadline');
  } finally {
    c.close();
    await s.close();
  }
});

test('a server that stalls mid-body is HTTP_TIMEOUT: the deadline covers the whole answer', async () => {
  const code = await codeOfGet((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    res.write('{"success":');
  }, 300);
  assert.is(code, 'HTTP_TIMEOUT');
});

test('a connection dropped mid-body is HTTP_TRUNCATED, and the client still works afterwards', async () => {
  const s = await serve((req, _body, res) => {
    if (req.url === '/ok') return res.writeHead(200).end('fine');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000' });
    res.write(Buffer.alloc(10), () => res.socket?.destroy());
  });
  const c = new HttpClient(s.url);
  try {
    assert.is((await failureOf(c.request({ method: 'GET', path: '/', timeoutMs: 5_000 }))).code, 'HTTP_TRUNCATED');
    const ok = await c.request({ method: 'GET', path: '/ok', timeoutMs: 5_000 });
    assert.is(Buffer.from(ok.body).toString(), 'fine');
  } finally {
    c.close();
    await s.close();
  }
});

test('a chunked answer cut off before its last chunk is HTTP_TRUNCATED', async () => {
  const code = await codeOfGet((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"success":true', () => res.socket?.destroy());
  }, 5_000);
  assert.is(code, 'HTTP_TRUNCATED');
});

test('an answer over maxBodyBytes is HTTP_BODY_TOO_LARGE', async () => {
  assert.is(await codeOfGet((_req, _body, res) => res.writeHead(200).end(Buffer.alloc(4096)), 5_000, { maxBodyBytes: 1024 }), 'HTTP_BODY_TOO_LARGE');
});

test('an abort signal ends the request (HTTP_ABORTED); close ends those in flight and later ones (HTTP_CLOSED)', async () => {
  let arrived!: () => void;
  const waiting = new Promise<void>((ok) => (arrived = ok));
  const s = await serve(() => arrived());
  const c = new HttpClient(s.url);
  try {
    const ac = new AbortController();
    const aborted = failureOf(c.request({ method: 'GET', path: '/', timeoutMs: 30_000, signal: ac.signal }));
    ac.abort();
    assert.is((await aborted).code, 'HTTP_ABORTED');
    const inFlight = failureOf(c.request({ method: 'GET', path: '/hang', timeoutMs: 30_000 }));
    await waiting;
    c.close();
    assert.is((await inFlight).code, 'HTTP_CLOSED');
    assert.is((await failureOf(c.request({ method: 'GET', path: '/', timeoutMs: 5_000 }))).code, 'HTTP_CLOSED');
  } finally {
    c.close();
    await s.close();
  }
});

test('only http:// and https:// base URLs are accepted', () => {
  for (const bad of ['ftp://127.0.0.1:1', 'not a url', 'file:///tmp/x']) {
    try {
      new HttpClient(bad);
      assert.unreachable(bad);
    } catch (err) {
      assert.is((err as { code?: string }).code, 'INVALID_URL', bad);
    }
  }
  assert.is(new HttpClient('https://example.invalid:8443/api/').baseUrl, 'https://example.invalid:8443/api');
});

test.run();
