/**
 * Child process that plays the REST client of the admission rows, so the node's process does only
 * server work (as with a real client) and the client's CPU is counted apart. Receives the URL and
 * bodies, POSTs the warm-up bodies and reports `warm`; on the next message POSTs the timed bodies
 * with `concurrency` requests in flight over keep-alive connections (node:http, or Node's global
 * fetch) and reports the outcome and its own CPU time; exits when the parent disconnects.
 * Bodies are JSON strings (`{raw}`), SSZ envelopes, or SSZ envelope lists for the batch endpoint,
 * whose answer must accept every entry.
 */
import http from 'node:http';
import { httpPoster, pump, type PumpResult } from './pump.js';

/** What the bodies are: JSON `{raw}` strings, single SSZ envelopes, or SSZ envelope lists (batch). */
export type LoadBodyKind = 'json' | 'ssz' | 'batch';

interface Init {
  url: string;
  /** `http` (node:http, keep-alive agent) or `fetch` (undici). */
  client: 'http' | 'fetch';
  kind: LoadBodyKind;
  warm: Array<string | Uint8Array>;
  timed: Array<string | Uint8Array>;
  /** Transactions per batch body (kind `batch`): the answer must report them all accepted. */
  perBody: number[];
  concurrency: number;
}

/** Messages this child sends. */
export type LoadMessage = { warm: PumpResult } | { result: PumpResult; cpuSeconds: number };

const send = (m: LoadMessage): void => {
  process.send!(m);
};

/** A POST of SSZ bytes over node:http: undefined when the answer is the expected status (and, for a batch, accepts every entry). */
function binaryPoster(url: URL, agent: http.Agent, kind: LoadBodyKind, expected: Map<Uint8Array, number>): (body: Uint8Array) => Promise<string | undefined> {
  const ok = kind === 'batch' ? 200 : 202;
  return (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/octet-stream', 'content-length': body.byteLength } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== ok) return resolve(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
            if (kind !== 'batch') return resolve(undefined);
            const accepted = (JSON.parse(text) as { data: { accepted: number } }).data.accepted;
            resolve(accepted === expected.get(body) ? undefined : `batch accepted ${accepted} of ${expected.get(body)}: ${text.slice(0, 300)}`);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

process.on('disconnect', () => process.exit(0));
process.once('message', (init: Init) => {
  // node:http with a keep-alive agent: about half the client CPU of fetch (undici) per request,
  // which matters when client and server share the same few cores.
  const url = new URL(init.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: init.concurrency });
  const viaFetch = async (body: string | Uint8Array): Promise<string | undefined> => {
    const res = await fetch(init.url, { method: 'POST', headers: { 'content-type': typeof body === 'string' ? 'application/json' : 'application/octet-stream' }, body });
    const text = await res.text();
    return res.status === (init.kind === 'batch' ? 200 : 202) ? undefined : `HTTP ${res.status}: ${text.slice(0, 300)}`;
  };
  const expected = new Map<Uint8Array, number>();
  [...init.warm, ...init.timed].forEach((b, i) => typeof b !== 'string' && expected.set(b, init.perBody[i] ?? 1));
  const viaJson = httpPoster(url, agent);
  const viaBytes = binaryPoster(url, agent, init.kind, expected);
  const post = init.client === 'fetch' ? viaFetch : (body: string | Uint8Array) => (typeof body === 'string' ? viaJson(body) : viaBytes(body));
  void pump(init.warm, init.concurrency, post).then((warm) => {
    send({ warm });
    process.once('message', () => {
      const c0 = process.cpuUsage();
      void pump(init.timed, init.concurrency, post).then((result) => {
        const c = process.cpuUsage(c0);
        send({ result, cpuSeconds: (c.user + c.system) / 1e6 });
      });
    });
  });
});
