/**
 * Child process that floods an execution node's public ports with receipt lookups at a fixed
 * rate (open loop: requests are sent on schedule whether or not earlier ones have answered),
 * alternating REST `GET /api/v1/transactions/:hash/receipt` and JSON-RPC
 * `eth_getTransactionReceipt`. A separate process, so the node's process does only server work.
 * Messages: the init (URLs, hashes, rate), then 'start' / 'pause' (answered with the figures of
 * the run that ended); exits when the parent disconnects.
 */
import http from 'node:http';
import type { PumpResult } from './pump.js';

interface Init {
  rest: string;
  rpc: string;
  hashes: string[];
  perSecond: number;
}

/** What one flooding period did: the pump's figures plus how many lookups were sent. */
export interface FloodReport extends PumpResult {
  sent: number;
}

/** Most requests left unanswered before the client stops sending (the node is then the bottleneck). */
const MAX_IN_FLIGHT = 2000;
const TICK_MS = 5;

process.on('disconnect', () => process.exit(0));
process.once('message', (init: Init) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const rest = new URL(init.rest);
  const rpc = new URL(init.rpc);
  let i = 0;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let stats = { sent: 0, ok: 0, failed: 0, latencies: [] as number[], firstError: undefined as string | undefined, t0: 0 };
  let inFlight = 0;

  const request = (): void => {
    const hash = init.hashes[i % init.hashes.length]!;
    const viaRpc = i++ % 2 === 1;
    const body = viaRpc ? JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [hash] }) : undefined;
    const url = viaRpc ? rpc : rest;
    const t = performance.now();
    const s = stats;
    s.sent++;
    inFlight++;
    const done = (error?: string): void => {
      inFlight--;
      s.latencies.push(performance.now() - t);
      if (error === undefined) s.ok++;
      else {
        s.failed++;
        s.firstError ??= error;
      }
    };
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: viaRpc ? '/' : `/api/v1/transactions/${hash}/receipt`,
        method: viaRpc ? 'POST' : 'GET',
        agent,
        headers: viaRpc ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body!) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const found = res.statusCode === 200 && (viaRpc ? (JSON.parse(text) as { result?: { transactionHash?: string } }).result?.transactionHash === hash : true);
          done(found ? undefined : `HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        });
        res.on('error', (e) => done(e.message));
      },
    );
    req.on('error', (e) => done(e.message));
    req.end(body);
  };

  const report = (): FloodReport => {
    const l = stats.latencies.sort((a, b) => a - b);
    const pct = (p: number): number => l[Math.min(l.length - 1, Math.floor(p * l.length))] ?? 0;
    return { sent: stats.sent, ok: stats.ok, failed: stats.failed, seconds: (performance.now() - stats.t0) / 1000, p50Ms: pct(0.5), p99Ms: pct(0.99), ...(stats.firstError ? { firstError: stats.firstError } : {}) };
  };

  process.on('message', (m: 'start' | 'pause') => {
    if (m === 'start' && !running) {
      running = true;
      stats = { sent: 0, ok: 0, failed: 0, latencies: [], firstError: undefined, t0: performance.now() };
      // Sends what the schedule says is due at each tick, so the rate holds whatever the timer jitter.
      timer = setInterval(() => {
        const due = Math.floor(((performance.now() - stats.t0) / 1000) * init.perSecond) - stats.sent;
        for (let k = 0; k < due && inFlight < MAX_IN_FLIGHT; k++) request();
      }, TICK_MS);
      process.send!('started');
    } else if (m === 'pause' && running) {
      running = false;
      clearInterval(timer);
      process.send!(report());
    }
  });
  process.send!('ready');
});
