/**
 * A counting proxy for request-count tests (not a test file): an HTTP server on a free loopback
 * port that forwards every request unchanged (body and answer streamed, WebSocket upgrades piped)
 * to `target` and records each one as "METHOD /path" (query left out).
 */
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface CountingProxy {
  url: string;
  /** Every request forwarded so far, in arrival order. */
  readonly seen: readonly string[];
  /** How many recorded requests match `re` ("METHOD /path"). */
  count(re: RegExp): number;
  close(): Promise<void>;
}

/** Starts a counting proxy in front of `target` (http://host:port). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const seen: string[] = [];
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const record = (method: string | undefined, url: string | undefined): void => {
    seen.push(`${method ?? 'GET'} ${new URL(url ?? '/', target).pathname}`);
  };
  const server: Server = createServer((req, res) => {
    record(req.method, req.url);
    const up = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  // /ws: the upgrade request is written to the target as it came, then the two sockets are piped.
  server.on('upgrade', (req, socket, head) => {
    record(req.method, req.url);
    const up = connect(Number(to.port), to.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      up.write(head);
      socket.pipe(up).pipe(socket);
    });
    sockets.add(up);
    up.once('close', () => sockets.delete(up));
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (re) => seen.filter((s) => re.test(s)).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
