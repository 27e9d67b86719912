/**
 * A lying beacon for light-client tests: an HTTP server on a free loopback port that forwards
 * every request to a real beacon and, on the light-client routes, rewrites the JSON answer with
 * the tamper function given (drop signatures, forge a header, alter a proof...). Not a test file.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Rewrites the `data` of one answer; `path` is the request path without the query. */
export type Tamper = (path: string, data: any) => any;

export interface TamperProxy {
  url: string;
  /** Requests answered with a rewritten body. */
  tampered: number;
  close(): Promise<void>;
}

/** Answers a request itself instead of forwarding it (`seen`: earlier requests on the same path), or undefined to forward. */
export type Answer = (path: string, seen: number) => { status: number; body: unknown } | undefined;

/** Starts a proxy to `target` that rewrites successful JSON answers through `tamper`, after `answer` had its say. */
export async function startTamperProxy(target: string, tamper: Tamper, answer?: Answer): Promise<TamperProxy> {
  const state = { tampered: 0 };
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', target);
    const n = seen.get(url.pathname) ?? 0;
    seen.set(url.pathname, n + 1);
    const own = answer?.(url.pathname, n);
    if (own) {
      res.writeHead(own.status, { 'content-type': 'application/json' }).end(JSON.stringify(own.body));
      return;
    }
    fetch(url, { method: req.method ?? 'GET', signal: AbortSignal.timeout(30_000) })
      .then(async (up) => {
        const text = await up.text();
        let body = text;
        if (up.ok) {
          try {
            const json = JSON.parse(text) as { success?: boolean; data?: unknown };
            if (json.success === true) {
              const data = tamper(url.pathname, structuredClone(json.data));
              if (JSON.stringify(data) !== JSON.stringify(json.data)) state.tampered++;
              body = JSON.stringify({ ...json, data });
            }
          } catch {
            // not JSON: forwarded as it is
          }
        }
        res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(body);
      })
      .catch((err: Error) => res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: { code: 'PROXY', message: err.message } })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get tampered() {
      return state.tampered;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
