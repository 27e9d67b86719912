/**
 * Child process of the WebSocket fan-out benchmark (bench/ws.ts): opens `clients` `ws`
 * connections to the hub and records, for every measured event each connection receives, the
 * delivery latency (receive time − the `sent_ms` the publisher put in the payload; both read the
 * same monotonic clock, `process.hrtime`, so they compare across processes). Protocol (IPC):
 * parent → `{ url, clients }`; child → `{ ready }`; parent → `'go'` (CPU baseline) and publishes;
 * parent → `{ finish: events }`; child waits until every open connection has `events` measured
 * messages (at most `drainMs`), then → `{ result }`. Exits when the parent disconnects.
 */
import { WebSocket } from 'ws';
import { LatencyHistogram, nowMs, type WsClientMessage } from './ws-protocol.js';

interface Init {
  url: string;
  clients: number;
  drainMs: number;
}


const send = (m: WsClientMessage): void => {
  process.send!(m);
};

const SENT = '"sent_ms":';
const WARM = '"warm":true';

interface Conn {
  ws: WebSocket;
  measured: number;
  closed: boolean;
}

process.on('disconnect', () => process.exit(0));
process.once('message', (init: Init) => {
  void run(init).catch((err: unknown) => send({ error: (err as Error).stack ?? String(err) }));
});

async function open(url: string, hist: LatencyHistogram, conns: Conn[]): Promise<void> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const c: Conn = { ws, measured: 0, closed: false };
  ws.on('message', (data: Buffer) => {
    // The payload is ASCII JSON; reading two fields by position keeps the harness's own cost
    // (which shares the machine with the hub) small. A real client would JSON.parse.
    const t = nowMs();
    const s = data.toString('latin1');
    if (s.includes(WARM)) return;
    const i = s.lastIndexOf(SENT);
    hist.record(t - parseFloat(s.slice(i + SENT.length)));
    c.measured++;
  });
  ws.on('close', () => {
    c.closed = true;
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.on('error', () => {});
  conns.push(c);
}

async function run(init: Init): Promise<void> {
  const hist = new LatencyHistogram();
  const conns: Conn[] = [];
  // Connect in waves so the listen backlog never overflows.
  for (let i = 0; i < init.clients; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, init.clients - i) }, () => open(init.url, hist, conns)));
  }
  send({ ready: conns.length });
  let c0 = process.cpuUsage();
  process.on('message', (m: 'go' | { finish: number }) => {
    if (m === 'go') {
      c0 = process.cpuUsage();
      return;
    }
    const events = m.finish;
    const deadline = nowMs() + init.drainMs;
    const check = (): void => {
      const done = conns.every((c) => c.closed || c.measured >= events);
      if (!done && nowMs() < deadline) {
        setTimeout(check, 2);
        return;
      }
      const cpu = process.cpuUsage(c0);
      send({
        result: {
          histogram: hist.toJSON(),
          received: conns.reduce((n, c) => n + c.measured, 0),
          closed: conns.filter((c) => c.closed).length,
          complete: done,
          cpuSeconds: (cpu.user + cpu.system) / 1e6,
        },
      });
      for (const c of conns) c.ws.terminate();
    };
    check();
  });
}
