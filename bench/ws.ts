/**
 * WebSocket fan-out of the beacon's `/ws` stream (`--only ws`): an EventHub on a Fastify server on
 * loopback, 100 and then 1,000 `ws` clients in child processes (bench/ws-client.ts, so the hub's
 * process does only server work and the clients' CPU is counted apart), the publisher offering
 * 1,000 `new_block` events per second, open loop, for `seconds` (default 3) after a 0.5 s warm-up.
 * Each event carries its send time (`sent_ms`, monotonic clock) and every client records the
 * delivery latency of every event; the run reports p50/p99/p99.9/max over all deliveries, the
 * deliveries missing, clients dropped, the hub's CPU (cores, and µs per publish) and the
 * clients' CPU. Bounded: each client count ends after the publishing window plus at most
 * `DRAIN_MS` of draining, and children are killed on the way out.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { EventHub } from '../src/node/beacon/events.js';
import { BeaconMetrics } from '../src/node/beacon/metrics.js';
import { createServer } from '../src/node/shared/http.js';
import { silentLogger } from '../src/util/log.js';
import { startCpu } from './threads.js';
import { LatencyHistogram, nowMs, type WsClientMessage, type WsClientResult } from './ws-protocol.js';

const CLIENT_COUNTS = [100, 1_000] as const;
const RATE = 1_000;
const WARM_SECONDS = 0.5;
const DRAIN_MS = 10_000;
/** The spec's latency goal (Limits, WebSocket row), checked at 100 clients. */
const GOAL_P99_MS = 10;

/** One client count. */
export interface WsFanoutResult {
  clients: number;
  clientProcesses: number;
  events: number;
  /** Events per second actually published during the window (RATE unless the hub saturates). */
  publishRate: number;
  /** p99 of publish call − due time: how far the publisher fell behind RATE (not in the latencies). */
  lagP99Ms: number;
  payloadBytes: number;
  deliveries: number;
  expected: number;
  droppedClients: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Wall time inside `publish()` per event, µs (serialisation + handing the frame to every socket). */
  publishUs: number;
  /** Hub process CPU over the window and the drain, in cores. */
  hubCores: number;
  /** Client processes' CPU over the same wall time, in cores. */
  clientCores: number;
  /** Other processes on the machine meanwhile, in cores (Linux). */
  otherCores?: number;
  wallSeconds: number;
  /** Hub-process heap + external memory per open connection (after GC when --expose-gc). */
  bytesPerClient: number;
}

/** heapUsed + external, after two collections when node runs with --expose-gc. */
function heapBytes(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

const HASH = '0x' + 'ab'.repeat(32);
const PROPOSER = '0x' + 'cd'.repeat(20);

function child(): ChildProcess {
  return fork(fileURLToPath(new URL('./ws-client.js', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** The next message of `c`, or an error if it exits or `ms` passes. */
function next(c: ChildProcess, ms: number): Promise<WsClientMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`ws client process silent for ${ms} ms`)), ms);
    const onExit = (code: number | null): void => done(new Error(`ws client process exited early (code ${code})`));
    const onMessage = (m: WsClientMessage): void => done(undefined, m);
    const done = (err: Error | undefined, m?: WsClientMessage): void => {
      clearTimeout(timer);
      c.off('exit', onExit);
      c.off('message', onMessage);
      if (err) reject(err);
      else if ('error' in m!) reject(new Error(`ws client process failed: ${m.error}`));
      else resolve(m!);
    };
    c.once('exit', onExit);
    c.once('message', onMessage);
  });
}

/**
 * Publishes up to `count` events at RATE per second for at most `count / RATE` seconds of wall
 * time (open loop: a late tick catches up, so a saturated hub publishes fewer events rather than
 * running longer). Returns what was sent, the time spent inside publish() and the publisher's lag
 * (publish call − the event's due time).
 */
function publishFor(hub: EventHub, count: number, warm: boolean, seqBase: number): Promise<{ sent: number; publishMs: number; wallMs: number; payloadBytes: number; lag: LatencyHistogram }> {
  return new Promise((resolve) => {
    const t0 = nowMs();
    const windowMs = (count * 1000) / RATE;
    const lag = new LatencyHistogram();
    let sent = 0;
    let publishMs = 0;
    let payloadBytes = 0;
    const tick = (): void => {
      const elapsed = nowMs() - t0;
      const due = Math.min(count, Math.floor((elapsed * RATE) / 1000) + 1);
      while (sent < due) {
        const now = nowMs();
        if (now - t0 >= windowMs) break;
        lag.record(now - t0 - (sent * 1000) / RATE);
        // Extra fields (send time, warm-up flag) ride along in the new_block data.
        const data = warm
          ? { slot: seqBase + sent, block_hash: HASH, proposer: PROPOSER, transactions: 0, warm: true, sent_ms: now }
          : { slot: seqBase + sent, block_hash: HASH, proposer: PROPOSER, transactions: 0, sent_ms: now };
        hub.publish('new_block', data);
        publishMs += nowMs() - now;
        if (payloadBytes === 0) payloadBytes = Buffer.byteLength(JSON.stringify({ type: 'new_block', data, timestamp: new Date().toISOString() }));
        sent++;
      }
      if (sent >= count || nowMs() - t0 >= windowMs) resolve({ sent, publishMs, wallMs: nowMs() - t0, payloadBytes, lag });
      else setTimeout(tick, 1);
    };
    tick();
  });
}

async function fanout(clients: number, seconds: number): Promise<WsFanoutResult> {
  const app = createServer(silentLogger);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const metrics = new BeaconMetrics();
  const hub = EventHub.attach(app.server, { log: silentLogger, metrics });
  const url = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/ws`;
  // One core for the hub, the rest (at least one process, at most four) for the clients.
  const procs = Math.max(1, Math.min(4, os.availableParallelism() - 1));
  const kids = Array.from({ length: procs }, child);
  try {
    const mem0 = heapBytes();
    const shares = kids.map((_, i) => Math.floor(clients / procs) + (i < clients % procs ? 1 : 0));
    const ready = await Promise.all(
      kids.map((k, i) => {
        const m = next(k, 60_000);
        k.send({ url, clients: shares[i], drainMs: DRAIN_MS });
        return m;
      }),
    );
    const connected = ready.reduce((n, m) => n + (m as { ready: number }).ready, 0);
    if (connected !== clients || hub.clients !== clients) throw new Error(`only ${connected} of ${clients} clients connected (hub sees ${hub.clients})`);
    const bytesPerClient = (heapBytes() - mem0) / clients;

    await publishFor(hub, Math.round(RATE * WARM_SECONDS), true, -1_000_000);
    const cpu = startCpu();
    const t0 = nowMs();
    for (const k of kids) k.send('go');
    const pub = await publishFor(hub, Math.round(RATE * seconds), false, 0);
    const events = pub.sent;
    const results = await Promise.all(
      kids.map((k) => {
        const m = next(k, DRAIN_MS + 10_000);
        k.send({ finish: events });
        return m;
      }),
    );
    const wallSeconds = (nowMs() - t0) / 1000;
    const rs = results.map((m) => (m as { result: WsClientResult }).result);
    const clientSeconds = rs.reduce((n, r) => n + r.cpuSeconds, 0);
    const split = cpu.finish(wallSeconds, {}, clientSeconds);
    const hist = new LatencyHistogram();
    for (const r of rs) hist.add(r.histogram);
    const dropped = (await metrics.wsDropped.get()).values.reduce((n, v) => n + v.value, 0);
    const out: WsFanoutResult = {
      clients,
      clientProcesses: procs,
      events,
      publishRate: (events * 1000) / pub.wallMs,
      lagP99Ms: pub.lag.quantile(0.99),
      payloadBytes: pub.payloadBytes,
      deliveries: rs.reduce((n, r) => n + r.received, 0),
      expected: events * clients,
      droppedClients: Math.max(dropped, rs.reduce((n, r) => n + r.closed, 0)),
      p50Ms: hist.quantile(0.5),
      p99Ms: hist.quantile(0.99),
      p999Ms: hist.quantile(0.999),
      maxMs: hist.quantile(1),
      publishUs: (pub.publishMs * 1000) / events,
      hubCores: split.cores,
      clientCores: clientSeconds / wallSeconds,
      wallSeconds,
      bytesPerClient,
    };
    if (split.otherProcessesCores !== undefined) out.otherCores = split.otherProcessesCores;
    return out;
  } finally {
    for (const k of kids) if (k.exitCode === null && k.signalCode === null) k.kill();
    await hub.close();
    await app.close();
  }
}

const fmt = (v: number, d = 2): string => (Number.isFinite(v) ? v.toFixed(d) : String(v));

/** Plain-text table of the results. */
export function formatWsTable(rs: readonly WsFanoutResult[]): string {
  const rows = [
    ['clients', 'events/s', 'lag p99 ms', 'delivered', 'dropped', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'publish µs', 'hub CPU', 'client CPU', 'goal'],
    ...rs.map((r) => [
      r.clients.toLocaleString('en-US'),
      r.publishRate.toFixed(0),
      fmt(r.lagP99Ms),
      `${r.deliveries.toLocaleString('en-US')}/${r.expected.toLocaleString('en-US')}`,
      String(r.droppedClients),
      fmt(r.p50Ms),
      fmt(r.p99Ms),
      fmt(r.p999Ms),
      fmt(r.maxMs),
      r.publishUs.toFixed(0),
      `${r.hubCores.toFixed(2)} cores`,
      `${r.clientCores.toFixed(2)} cores (${r.clientProcesses} proc)`,
      r.clients === 100 ? (r.p99Ms < GOAL_P99_MS ? `p99 < ${GOAL_P99_MS} ms: met` : `p99 < ${GOAL_P99_MS} ms: MISSED`) : '',
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const line = (row: string[]): string => row.map((cell, c) => (c <= 10 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rs.map((_, i) => line(rows[i + 1]!))].join('\n');
}

/** Runs the suite: 100 then 1,000 clients. */
export async function runWsBench(o: { seconds: number; print: boolean }): Promise<WsFanoutResult[]> {
  const seconds = Math.max(3, o.seconds);
  if (o.print) console.log(`WebSocket fan-out (/ws): ${RATE.toLocaleString('en-US')} new_block events/s offered for ${seconds} s after a ${WARM_SECONDS} s warm-up, clients in child processes`);
  const out: WsFanoutResult[] = [];
  for (const n of CLIENT_COUNTS) out.push(await fanout(n, seconds));
  if (o.print) {
    console.log(formatWsTable(out));
    const r = out[0]!;
    const gcNote = (globalThis as { gc?: unknown }).gc ? 'after GC' : 'no --expose-gc: noisy';
    console.log(`hub memory per connection (heap + external, ${gcNote}): ${out.map((x) => `${x.clients} clients ${(x.bytesPerClient / 1024).toFixed(1)} KiB`).join(', ')}`);
    const others = out.map((x) => (x.otherCores === undefined ? '' : `${x.clients} clients: other processes ${x.otherCores.toFixed(2)} cores`)).filter(Boolean);
    console.log(
      `payload ${r.payloadBytes} B per event; latency = client receive − publish call (monotonic clock), over all deliveries of all clients; lag = publish call − due time at ${RATE}/s${others.length ? `; ${others.join(', ')}` : ''}`,
    );
  }
  return out;
}
