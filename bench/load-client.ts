/**
 * Child process that plays the REST client of the admission row, so the node's process does only
 * server work (as with a real client) and the client's CPU is counted apart. Receives the URL and
 * bodies, POSTs the warm-up bodies and reports `warm`; on the next message POSTs the timed bodies
 * with `concurrency` requests in flight over keep-alive connections (node:http, or Node's global
 * fetch) and reports the outcome and its own CPU time; exits when the parent disconnects.
 */
import http from 'node:http';
import { httpPoster, pump, type PumpResult } from './pump.js';

interface Init {
  url: string;
  /** `http` (node:http, keep-alive agent) or `fetch` (undici). */
  client: 'http' | 'fetch';
  warm: string[];
  timed: string[];
  concurrency: number;
}

/** Messages this child sends. */
export type LoadMessage = { warm: PumpResult } | { result: PumpResult; cpuSeconds: number };

const send = (m: LoadMessage): void => {
  process.send!(m);
};

process.on('disconnect', () => process.exit(0));
process.once('message', (init: Init) => {
  // node:http with a keep-alive agent: about half the client CPU of fetch (undici) per request,
  // which matters when client and server share the same few cores.
  const url = new URL(init.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: init.concurrency });
  const viaFetch = async (body: string): Promise<string | undefined> => {
    const res = await fetch(init.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await res.text();
    return res.status === 202 ? undefined : `HTTP ${res.status}: ${text.slice(0, 300)}`;
  };
  const viaHttp = httpPoster(url, agent);
  const post = init.client === 'fetch' ? viaFetch : viaHttp;
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
