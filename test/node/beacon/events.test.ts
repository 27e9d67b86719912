/**
 * The /ws event stream on a real Fastify server (port 0) with real `ws` clients: the spec
 * envelope, broadcast to many clients, refused upgrade paths, keepalive drops, slow-client drops
 * that leave the others served, read-only enforcement and close(). Waits are event-driven with a
 * deadline; no fixed sleeps.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { createServer } from '../../../src/node/shared/http.js';
import { EVENT_TYPES, type BeaconEvent } from '../../../src/api/events.js';
import { EventHub, type EventHubOptions } from '../../../src/node/beacon/events.js';
import { BeaconMetrics } from '../../../src/node/beacon/metrics.js';
import { captureLog, type LogLine } from '../../helpers/log.js';

const DEADLINE_MS = 10_000;

/** Resolves once `pred()` holds (polled every millisecond or so), or rejects at the deadline. */
async function until(pred: () => boolean, what: string, ms = DEADLINE_MS): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** `p`, or a rejection at the deadline. */
async function within<T>(p: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface Harness {
  hub: EventHub;
  metrics: BeaconMetrics;
  lines: LogLine[];
  port: number;
  url: string;
}

/** A Fastify server on 127.0.0.1:0 with a hub; everything is closed afterwards. */
async function withHub(opts: Partial<Omit<EventHubOptions, 'log' | 'metrics'>>, fn: (h: Harness) => Promise<void>): Promise<void> {
  const { log, lines } = captureLog();
  const app = createServer(log);
  app.get('/ping', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const metrics = new BeaconMetrics();
  const hub = EventHub.attach(app.server, { log, metrics, ...opts });
  const port = (app.server.address() as AddressInfo).port;
  try {
    await fn({ hub, metrics, lines, port, url: `ws://127.0.0.1:${port}/ws` });
  } finally {
    await hub.close();
    await app.close();
  }
}

/** A connected client that records every text message and its close code. */
interface Client {
  ws: WebSocket;
  raw: string[];
  events: BeaconEvent[];
  closed: number | undefined;
}

async function connect(url: string, wsOpts: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<Client> {
  const ws = new WebSocket(url, wsOpts);
  const c: Client = { ws, raw: [], events: [], closed: undefined };
  ws.on('message', (data, isBinary) => {
    assert.not.ok(isBinary, 'events are text messages');
    const s = (data as Buffer).toString('utf8');
    c.raw.push(s);
    c.events.push(JSON.parse(s) as BeaconEvent);
  });
  ws.on('close', (code) => {
    c.closed = code;
  });
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return c;
}

function metricValue(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

const H = (n: number): string => '0x' + n.toString(16).padStart(64, '0');
const ADDR = '0x' + 'ab'.repeat(20);

// ---------------------------------------------------------------------------------------------
const envelope = suite('events: envelope and broadcast');

envelope('every event type reaches the client as { type, data, timestamp } with an ISO 8601 UTC timestamp', async () => {
  await withHub({}, async ({ hub, metrics, url }) => {
    const a = await connect(url);
    const b = await connect(`${url}?from=test`); // a query string is fine
    await until(() => hub.clients === 2, 'two clients');
    const before = Date.now();
    const sent = [
      hub.publish('new_block', { slot: 12, block_hash: H(1), proposer: ADDR, transactions: 3 }),
      hub.publish('new_attestation', { slot: 12, validator: ADDR, block_hash: H(1) }),
      hub.publish('bridge_bid_registered', { bid: H(2), status: 'PENDING', amount: '1000000000000000000', chain: 'ethereum' }),
      hub.publish('bridge_bid_status', { bid: H(2), status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' }),
      hub.publish('finalized_checkpoint', { epoch: 4, root: H(3) }),
      hub.publish('slashing', { kind: 'double_vote', validator_index: 7, validator: null, evidence_hash: '0x' + '00'.repeat(32), slot: 1, epoch: 0, evidence: { previous: { slot: 1n }, conflicting: { slot: 2n } } }),
      hub.publish('head', { slot: 12, block_hash: H(1), proposer_dependent_roots: [{ epoch: 3, root: H(4) }, { epoch: 4, root: H(5) }] }),
    ];
    assert.equal(sent, [2, 2, 2, 2, 2, 2, 2], 'publish returns the number of clients');
    await until(() => a.events.length === 7 && b.events.length === 7, 'seven events on both clients');
    const after = Date.now();
    for (const c of [a, b]) {
      assert.equal(
        c.events.map((e) => e.type),
        [...EVENT_TYPES],
      );
      for (const e of c.events) {
        assert.equal(Object.keys(e).sort(), ['data', 'timestamp', 'type']);
        assert.match(e.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        const t = Date.parse(e.timestamp);
        assert.ok(t >= before - 1 && t <= after + 1, `timestamp ${e.timestamp} is the publish time`);
      }
      const [blk, att, bid, status, fin, sl, head] = c.events;
      assert.equal(blk!.data, { slot: 12, block_hash: H(1), proposer: ADDR, transactions: 3 });
      assert.equal(att!.data, { slot: 12, validator: ADDR, block_hash: H(1) });
      assert.equal(bid!.data, { bid: H(2), status: 'PENDING', amount: '1000000000000000000', chain: 'ethereum' });
      assert.equal(status!.data, { bid: H(2), status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' });
      assert.equal(fin!.data, { epoch: 4, root: H(3) });
      assert.equal(sl!.data, { kind: 'double_vote', validator_index: 7, validator: null, evidence_hash: '0x' + '00'.repeat(32), slot: 1, epoch: 0, evidence: { previous: { slot: '1' }, conflicting: { slot: '2' } } }, 'bigints go out as strings');
      assert.equal(head!.data, { slot: 12, block_hash: H(1), proposer_dependent_roots: [{ epoch: 3, root: H(4) }, { epoch: 4, root: H(5) }] });
    }
    assert.equal(a.raw, b.raw, 'both clients got the same bytes');
    const text = await metrics.text();
    assert.is(metricValue(text, 'service_beacon_ws_clients'), 2);
    assert.match(text, /service_beacon_ws_events_published_total\{type="new_block"\} 1/);
    a.ws.close();
    b.ws.close();
    await until(() => hub.clients === 0, 'clients gone after they close');
    assert.is(metricValue(await metrics.text(), 'service_beacon_ws_clients'), 0);
  });
});

envelope('20 clients receive the same message, byte for byte', async () => {
  await withHub({}, async ({ hub, url }) => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => connect(url)));
    await until(() => hub.clients === 20, '20 clients');
    for (let slot = 0; slot < 10; slot++) assert.is(hub.publish('new_block', { slot, block_hash: H(slot), proposer: ADDR, transactions: slot }), 20);
    await until(() => clients.every((c) => c.raw.length === 10), 'ten events on every client');
    for (const c of clients) assert.equal(c.raw, clients[0]!.raw);
    assert.equal(
      clients[0]!.events.map((e) => (e.type === 'new_block' ? e.data.slot : -1)),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      'in publish order',
    );
    for (const c of clients) c.ws.close();
  });
});

envelope('publish with no client is a no-op; an unknown type throws', async () => {
  await withHub({}, async ({ hub }) => {
    assert.is(hub.publish('finalized_checkpoint', { epoch: 1, root: H(1) }), 0);
    assert.throws(() => hub.publish('nope' as 'new_block', { slot: 0, block_hash: H(0), proposer: ADDR, transactions: 0 }), /unknown event type nope/);
  });
});

// ---------------------------------------------------------------------------------------------
const paths = suite('events: upgrade routing');

/** The WebSocket handshake request for `path`. */
function upgradeRequest(port: number, path: string): string {
  return [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', ''].join('\r\n');
}

/**
 * A raw upgrade attempt at `path` that expects a refusal: resolves with the status and body once
 * the server has ended the connection (the client never closes its side first).
 */
function tryUpgrade(port: number, path: string): Promise<{ status: number; body: string }> {
  return within(
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(upgradeRequest(port, path)));
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        socket.destroy();
        resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
    }),
    `the server to end the refused upgrade at ${path}`,
  );
}

paths('an upgrade at any path but /ws gets 404 with the error envelope, then the server closes the socket', async () => {
  await withHub({}, async ({ hub, port }) => {
    for (const p of ['/', '/wss', '/ws/', '/ws/x', '/api/v1/ws', '/ping']) {
      const r = await tryUpgrade(port, p);
      assert.is(r.status, 404, p);
      const body = JSON.parse(r.body) as { success: boolean; error: { code: string; message: string } };
      assert.is(body.success, false);
      assert.is(body.error.code, 'NOT_FOUND');
    }
    assert.is(hub.clients, 0);
    // Plain HTTP on the same server is untouched.
    const res = await fetch(`http://127.0.0.1:${port}/ping`);
    assert.equal(await res.json(), { ok: true });
  });
});

// ---------------------------------------------------------------------------------------------
const keepalive = suite('events: keepalive');

keepalive('a client that stops answering pings is terminated; a responsive one stays', async () => {
  await withHub({ pingIntervalMs: 100 }, async ({ hub, metrics, lines, url }) => {
    const good = await connect(url);
    const mute = await connect(url, { autoPong: false });
    let pings = 0;
    good.ws.on('ping', () => pings++);
    await until(() => hub.clients === 2, 'two clients');
    await until(() => mute.closed !== undefined, 'the server to drop the silent client');
    assert.is(mute.closed, 1006, 'terminated, no close handshake');
    await until(() => hub.clients === 1, 'hub count down to one');
    // The responsive client has answered several pings by now and keeps going.
    await until(() => pings >= 4, 'four pings on the responsive client');
    assert.is(good.closed, undefined);
    assert.is(good.ws.readyState, WebSocket.OPEN);
    hub.publish('finalized_checkpoint', { epoch: 9, root: H(9) });
    await until(() => good.events.length === 1, 'the event on the responsive client');
    const drops = lines.filter((l) => l.msg.includes('no pong'));
    assert.is(drops.length, 1, 'logged once');
    assert.match(await metrics.text(), /service_beacon_ws_clients_dropped_total\{reason="unresponsive"\} 1/);
    good.ws.close();
  });
});

// ---------------------------------------------------------------------------------------------
const slow = suite('events: slow clients');

/** A raw TCP client that completes the WebSocket handshake and then never reads. */
async function stalledClient(port: number): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.on('error', () => {});
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(upgradeRequest(port, '/ws'));
  let head = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause(); // from here on nothing is read: the kernel buffers fill up
      if (head.startsWith('HTTP/1.1 101')) resolve();
      else reject(new Error(`handshake refused: ${head}`));
    };
    socket.on('data', onData);
  });
  return { socket, closed };
}

slow('a client that never reads is terminated at the buffer cap, once; a normal client receives every event', async () => {
  const cap = 256 * 1024;
  await withHub({ maxBufferedBytes: cap }, async ({ hub, metrics, lines, port, url }) => {
    const normal = await connect(url);
    const stalled = await stalledClient(port);
    await until(() => hub.clients === 2, 'two clients');
    // 64 KiB events (slashing evidence carries signed messages, so large events are real).
    const filler = 'f'.repeat(64 * 1024);
    let published = 0;
    const publish = (): void => {
      hub.publish('slashing', { kind: 'double_proposal', validator_index: published, validator: null, evidence_hash: '0x' + '00'.repeat(32), slot: 1, epoch: 0, evidence: { filler } });
      published++;
    };
    // One event at a time, waiting for the normal client to have it: the stalled client's backlog
    // grows (once the loopback socket buffers are full) while the normal client's never does.
    const end = Date.now() + 20_000;
    while (hub.clients === 2) {
      if (Date.now() > end) throw new Error(`stalled client still connected after ${published} events`);
      publish();
      await until(() => normal.events.length === published, `event ${published} on the normal client`);
    }
    assert.ok(published > 4, `the kernel absorbed some events first (${published})`);
    const slowDrops = lines.filter((l) => l.msg.includes('too slow'));
    assert.is(slowDrops.length, 1, 'logged once');
    assert.is(slowDrops[0]!.level, 'warn');
    assert.ok((slowDrops[0]!.fields.backlog_bytes as number) + filler.length > cap);
    assert.match(await metrics.text(), /service_beacon_ws_clients_dropped_total\{reason="slow"\} 1/);
    // The normal client is still served.
    for (let i = 0; i < 5; i++) publish();
    await until(() => normal.events.length === published, 'the later events on the normal client');
    assert.equal(
      normal.events.map((e) => (e.type === 'slashing' ? e.data.validator_index : -1)),
      Array.from({ length: published }, (_, i) => i),
      'every event, in order',
    );
    assert.is(normal.closed, undefined);
    // Once the stalled client reads again it finds the end of the stream.
    stalled.socket.resume();
    await within(stalled.closed, 'the stalled socket to close');
    normal.ws.close();
  });
});

// ---------------------------------------------------------------------------------------------
const inbound = suite('events: read-only stream');

inbound('small client messages are ignored; a client sending more than 4 KiB is dropped', async () => {
  await withHub({}, async ({ hub, metrics, url }) => {
    const chatty = await connect(url);
    const big = await connect(url);
    const quiet = await connect(url);
    await until(() => hub.clients === 3, 'three clients');
    for (let i = 0; i < 3; i++) chatty.ws.send('hello');
    big.ws.send('x'.repeat(5000));
    await until(() => big.closed !== undefined, 'the oversized sender to be dropped');
    hub.publish('new_block', { slot: 1, block_hash: H(1), proposer: ADDR, transactions: 0 });
    await until(() => chatty.events.length === 1 && quiet.events.length === 1, 'the event on the others');
    // Many small messages add up.
    for (let i = 0; i < 10; i++) chatty.ws.send('y'.repeat(500));
    await until(() => chatty.closed !== undefined, 'the cumulative sender to be dropped');
    await until(() => hub.clients === 1, 'one client left');
    assert.match(await metrics.text(), /service_beacon_ws_clients_dropped_total\{reason="inbound"\} 2/);
    quiet.ws.close();
  });
});

// ---------------------------------------------------------------------------------------------
const closing = suite('events: close');

closing('close() closes every client with 1001, then refuses upgrades with 503 and publishes nothing', async () => {
  await withHub({}, async ({ hub, port, url }) => {
    const clients = await Promise.all([connect(url), connect(url), connect(url)]);
    await until(() => hub.clients === 3, 'three clients');
    await hub.close();
    assert.is(hub.clients, 0);
    await until(() => clients.every((c) => c.closed !== undefined), 'every client closed');
    for (const c of clients) assert.is(c.closed, 1001);
    assert.is(hub.publish('new_block', { slot: 1, block_hash: H(1), proposer: ADDR, transactions: 0 }), 0);
    const r = await tryUpgrade(port, '/ws');
    assert.is(r.status, 503);
    await hub.close(); // idempotent
  });
});

closing('close() terminates a client that never answers the close frame', async () => {
  await withHub({}, async ({ hub, port }) => {
    const stalled = await stalledClient(port);
    await until(() => hub.clients === 1, 'one client');
    await hub.close(); // resolves after the grace period
    assert.is(hub.clients, 0);
    stalled.socket.resume();
    await within(stalled.closed, 'the stalled socket to close');
  });
});

envelope.run();
paths.run();
keepalive.run();
slow.run();
inbound.run();
closing.run();
