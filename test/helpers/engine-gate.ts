/**
 * A gate between a beacon and its execution node, for tests of slow block imports (not a test
 * file): an HTTP proxy on a free loopback port that forwards every request unchanged to the real
 * execution node, except that a newPayload arriving while the gate is shut is held (received,
 * not yet forwarded) until `open()`. Execution still does the import; only its start is late,
 * which is what a beacon sees of an expensive block.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const NEW_PAYLOAD = '/api/v1/engine/newPayload';

export interface EngineGate {
  url: string;
  /** newPayload requests received so far (held or forwarded). */
  readonly newPayloads: number;
  /** newPayload requests held now. */
  readonly held: number;
  /** Holds every newPayload from now on until `open`. */
  shut(): void;
  /** Forwards the held newPayloads and lets later ones through. */
  open(): void;
  close(): Promise<void>;
}

/** Starts a gate in front of the execution node at `target` (open at first). */
export async function startEngineGate(target: string): Promise<EngineGate> {
  let shut = false;
  let received = 0;
  let waiting: (() => void)[] = [];
  const forward = (req: IncomingMessage, body: Buffer, res: import('node:http').ServerResponse) => {
    const up = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', (err) => res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: { code: 'GATE', message: err.message } })));
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.url === NEW_PAYLOAD) {
        received++;
        if (shut) {
          waiting.push(() => forward(req, body, res));
          return;
        }
      }
      forward(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get newPayloads() {
      return received;
    },
    get held() {
      return waiting.length;
    },
    shut: () => {
      shut = true;
    },
    open: () => {
      shut = false;
      const go = waiting;
      waiting = [];
      for (const f of go) f();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
