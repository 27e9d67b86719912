/**
 * The validator client's `/ws` subscription (src/client/event-stream.ts, the one stream client,
 * and its use in client.ts).
 *
 * - Units: the stream URL (http → ws, https → wss), the capped jittered backoff, the message checks.
 * - Against a real BeaconNode + ExecutionNode (in process, ephemeral ports, two ValidatorClients
 *   on real time): both subscribe (gauge 1), an attestation is sent on a `new_block` event with no
 *   head poll while subscribed; when the beacon's hub drops them they fall back to polling (head
 *   polls attest, blocks keep coming), and after a beacon restart on the same port they reconnect
 *   (gauge 1 again, reconnect counter incremented) and receive events again.
 * - Against a `ws` server standing in for the network peer: garbage is ignored and counted
 *   without dropping the connection, an oversize message costs a reconnect (not a crash);
 *   stop() cancels the reconnect timer, aborts a hanging handshake and closes an open socket.
 *
 * Every wait is for an observable condition with a deadline (waitFor), never a fixed sleep.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { slotAt, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { type Timers, ValidatorClient, type ValidatorClientOptions } from '../../../src/node/validator/client.js';
import { BeaconEventStream, backoffDelay, eventStreamUrl, parseStreamMessage } from '../../../src/client/event-stream.js';
import type { EventType } from '../../../src/api/events.js';
import { RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { SlashingProtectionDb } from '../../../src/node/validator/slashing/protection.js';
import { SvcError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/util/log.js';
import { captureLog, type LogLine } from '../../helpers/log.js';
import { waitFor } from '../../helpers/network.js';
import { type Harness, bget, okData, randaoChain, sample, startHarness, stopHarness } from '../beacon/fixture.js';
import { devnet } from '../execution/fixture.js';

// ---------------------------------------------------------------------------------------------
// Helpers

/** Timers that only record what is scheduled; the test fires them (`pending`) when it chooses. */
function heldTimers(): { pending: Set<{ fn: () => void }>; timers: Timers } {
  const pending = new Set<{ fn: () => void }>();
  const timers: Timers = {
    setTimeout: (fn) => {
      const t = { fn };
      pending.add(t);
      return t;
    },
    clearTimeout: (t) => void pending.delete(t as { fn: () => void }),
  };
  return { pending, timers };
}

async function metric(client: ValidatorClient, name: string, labels = ''): Promise<number | undefined> {
  return sample(await client.metrics.text(), name, labels);
}

const CONNECTED = 'service_validator_beacon_ws_connected';
const RECONNECTS = 'service_validator_beacon_ws_reconnects_total';
const MALFORMED = 'service_validator_beacon_ws_malformed_messages_total';
const EVENTS = 'service_validator_beacon_ws_events_total';
const ATTESTATIONS = 'service_validator_attestations_total';

/** Waits until `metric` of every client satisfies `ok`. */
function waitMetric(what: string, clients: ValidatorClient[], name: string, ok: (v: number) => boolean, ms: number, labels = ''): Promise<true> {
  return waitFor(what, async () => ((await Promise.all(clients.map((c) => metric(c, name, labels)))).every((v) => v !== undefined && ok(v)) ? true : undefined), ms, 25);
}

/** Resolves with the first line (over all logs) matching `pred`, waiting up to `ms`. */
function waitLine(what: string, logs: LogLine[][], pred: (l: LogLine) => boolean, ms: number): Promise<LogLine> {
  return waitFor(what, async () => logs.flat().find(pred), ms, 25);
}

// ---------------------------------------------------------------------------------------------
const Units = suite('validator event stream: URL, backoff, message checks');

/** The event types the validator client has handlers for (client.ts): only their data is checked. */
const VALIDATOR_READS: ReadonlySet<EventType> = new Set<EventType>(['new_block', 'head', 'bridge_bid_registered']);

Units('the stream URL follows the beacon URL: http → ws, https → wss, path prefix kept', () => {
  assert.is(eventStreamUrl('http://127.0.0.1:8080'), 'ws://127.0.0.1:8080/ws');
  assert.is(eventStreamUrl('https://beacon.example:443'), 'wss://beacon.example/ws');
  assert.is(eventStreamUrl('https://proxy.example/beacon/'), 'wss://proxy.example/beacon/ws');
  assert.is(eventStreamUrl('http://[::1]:9000'), 'ws://[::1]:9000/ws');
  for (const bad of ['ftp://x', 'not a url']) {
    try {
      eventStreamUrl(bad);
      assert.unreachable(`accepted ${bad}`);
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'INVALID_URL');
    }
  }
});

Units('backoff doubles from 250 ms to a 5 s cap, jittered within [0.8, 1.2) and never above the cap', () => {
  const mid = [0, 1, 2, 3, 4, 5, 6, 50].map((a) => backoffDelay(a, 250, 5_000, () => 0.5));
  assert.equal(mid, [250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  assert.is(backoffDelay(0, 250, 5_000, () => 0), 200);
  assert.is(backoffDelay(0, 250, 5_000, () => 0.999), 300);
  assert.is(backoffDelay(5, 250, 5_000, () => 0.999), 5_000, 'jitter never passes the cap');
  assert.is(backoffDelay(9, 250, 5_000, () => 0), 4_000);
});

Units('messages: well-formed new_block, head and bridge_bid_registered are parsed (hex lowercased); garbage is malformed; unknown types are not', () => {
  const ts = '2026-11-22T10:15:30.123Z';
  const hash = '0x' + 'AB'.repeat(32);
  const proposer = '0x' + 'Cd'.repeat(20);
  const block = { slot: 7, block_hash: hash, proposer, transactions: 3 };
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'new_block', data: block, timestamp: ts }), VALIDATOR_READS), {
    kind: 'new_block',
    data: { slot: 7, block_hash: hash.toLowerCase(), proposer: proposer.toLowerCase(), transactions: 3 },
    timestamp: ts,
  });
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'finalized_checkpoint', data: { epoch: 1, root: hash }, timestamp: ts }), VALIDATOR_READS), { kind: 'other', type: 'finalized_checkpoint', timestamp: ts });
  const head = { slot: 9, block_hash: hash, proposer_dependent_roots: [{ epoch: 2, root: hash }, { epoch: 3, root: hash }] };
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'head', data: head, timestamp: ts }), VALIDATOR_READS), {
    kind: 'head',
    data: { slot: 9, block_hash: hash.toLowerCase(), proposer_dependent_roots: [{ epoch: 2, root: hash.toLowerCase() }, { epoch: 3, root: hash.toLowerCase() }] },
    timestamp: ts,
  });
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'from_the_future', data: {}, timestamp: ts }), VALIDATOR_READS), { kind: 'unknown', type: 'from_the_future' });
  const bid = { bid: hash, status: 'PENDING', amount: '5000000000000000000', chain: 'svc-b' };
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'bridge_bid_registered', data: bid, timestamp: ts }), VALIDATOR_READS), { kind: 'bridge_bid_registered', data: { ...bid, bid: hash.toLowerCase() }, timestamp: ts });
  assert.equal(parseStreamMessage(JSON.stringify({ type: 'bridge_bid_status', data: { bid: hash, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' }, timestamp: ts }), VALIDATOR_READS), { kind: 'other', type: 'bridge_bid_status', timestamp: ts });
  const garbage: Array<[string, RegExp]> = [
    ['not json', /not JSON/],
    ['[]', /not a JSON object/],
    ['null', /not a JSON object/],
    ['"new_block"', /not a JSON object/],
    [JSON.stringify({ type: 5, data: {}, timestamp: ts }), /type/],
    [JSON.stringify({ type: 'new_block', data: block }), /timestamp/],
    [JSON.stringify({ type: 'new_block', data: block, timestamp: 'yesterday' }), /timestamp/],
    [JSON.stringify({ type: 'new_block', data: null, timestamp: ts }), /data/],
    [JSON.stringify({ type: 'new_block', data: [block], timestamp: ts }), /data/],
    [JSON.stringify({ type: 'new_block', data: { ...block, slot: -1 }, timestamp: ts }), /slot/],
    [JSON.stringify({ type: 'new_block', data: { ...block, slot: '7' }, timestamp: ts }), /slot/],
    [JSON.stringify({ type: 'new_block', data: { ...block, slot: 1.5 }, timestamp: ts }), /slot/],
    [JSON.stringify({ type: 'new_block', data: { ...block, block_hash: '0x1234' }, timestamp: ts }), /block_hash/],
    [JSON.stringify({ type: 'new_block', data: { ...block, proposer: 42 }, timestamp: ts }), /proposer/],
    [JSON.stringify({ type: 'new_block', data: { ...block, transactions: null }, timestamp: ts }), /transactions/],
    ['{"__proto__":{"polluted":true},"type":"new_block","data":{},"timestamp":"' + ts + '"}', /slot/],
    [JSON.stringify({ type: 'head', data: { ...head, slot: -1 }, timestamp: ts }), /head: slot/],
    [JSON.stringify({ type: 'head', data: { ...head, block_hash: '0x12' }, timestamp: ts }), /head: block_hash/],
    [JSON.stringify({ type: 'head', data: { ...head, proposer_dependent_roots: null }, timestamp: ts }), /proposer_dependent_roots/],
    [JSON.stringify({ type: 'head', data: { ...head, proposer_dependent_roots: [{ epoch: 2 }] }, timestamp: ts }), /proposer_dependent_roots/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, bid: '0x12' }, timestamp: ts }), /bridge_bid_registered: bid/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, status: 'pending' }, timestamp: ts }), /bridge_bid_registered: status/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, amount: 5 }, timestamp: ts }), /bridge_bid_registered: amount/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, amount: '-5' }, timestamp: ts }), /bridge_bid_registered: amount/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, amount: '05' }, timestamp: ts }), /bridge_bid_registered: amount/],
    [JSON.stringify({ type: 'bridge_bid_registered', data: { ...bid, chain: null }, timestamp: ts }), /bridge_bid_registered: chain/],
  ];
  for (const [text, why] of garbage) {
    const m = parseStreamMessage(text, VALIDATOR_READS);
    assert.is(m.kind, 'malformed', text);
    assert.match((m as { reason: string }).reason, why, text);
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
});

Units('retryNow() connects at once instead of waiting out the backoff, and does nothing when no attempt is waiting', async () => {
  // A port with nothing listening yet (taken, then freed).
  const probe = createTcpServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', () => ok()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((ok) => probe.close(() => ok()));
  const { pending, timers } = heldTimers();
  const { log, lines } = captureLog();
  let connects = 0;
  const stream = new BeaconEventStream({ beaconUrl: `http://127.0.0.1:${port}`, log, timers, handlers: { new_block: () => undefined, connected: () => void connects++ } });
  stream.retryNow();
  assert.is(pending.size, 0, 'not running: nothing to retry');
  stream.start();
  const wss = new WebSocketServer({ noServer: true });
  const server = createHttpServer();
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, () => undefined));
  try {
    await waitLine('the failed first attempt', [lines], (l) => l.msg.startsWith('cannot subscribe to the beacon event stream'), 10_000);
    assert.is(pending.size, 1, 'a reconnect timer waits (fake: it never fires by itself)');
    await new Promise<void>((ok) => server.listen(port, '127.0.0.1', () => ok()));
    stream.retryNow();
    assert.is(pending.size, 0, 'the waiting attempt was taken now');
    await waitFor('the stream connected', async () => (connects === 1 && stream.connected ? true : undefined), 10_000, 25);
    stream.retryNow();
    assert.is(connects, 1, 'connected: retryNow() does nothing');
  } finally {
    await stream.stop();
    wss.close();
    await new Promise<void>((ok) => server.close(() => ok()));
  }
});

Units.run();

// ---------------------------------------------------------------------------------------------
const Real = suite('validator client: /ws on a real beacon');

interface Running {
  client: ValidatorClient;
  lines: LogLine[];
  sp: SlashingProtectionDb;
}

let h: Harness | undefined;
let vals: Running[] = [];

async function startValidator(hh: Harness, i: number, extra: Partial<ValidatorClientOptions> = {}): Promise<Running> {
  const { log, lines } = captureLog();
  const sp = await SlashingProtectionDb.open({ memory: true });
  const client = new ValidatorClient({
    genesis: hh.genesis,
    keys: hh.validators[i]!,
    beaconUrl: hh.beacon.url,
    token: hh.token,
    slashingDb: sp,
    log,
    randaoChain: randaoChain(hh, i),
    ...extra,
  });
  try {
    await client.start();
  } catch (err) {
    await sp.close();
    throw err;
  }
  return { client, lines, sp };
}

async function stopValidators(): Promise<void> {
  for (const v of vals) {
    await v.client.stop();
    await v.sp.close();
  }
  vals = [];
}

Real.before(async () => {
  h = await startHarness({ validators: 2 });
  // A 1 s backoff cap keeps the restart test short; the default schedule is checked above.
  const backoff = { reconnectBackoffMs: { min: 100, max: 1_000 } };
  vals = [await startValidator(h, 0, backoff), await startValidator(h, 1, backoff)];
});

Real.after(async () => {
  await stopValidators();
  if (h) await stopHarness(h);
  h = undefined;
});

Real('both clients subscribe to /ws and attest the moment another validator\'s block arrives', async () => {
  const hh = h!;
  const clients = vals.map((v) => v.client);
  const logs = vals.map((v) => v.lines);
  await waitMetric('both clients subscribed (gauge 1)', clients, CONNECTED, (v) => v === 1, 10_000);
  assert.ok(clients.every((c) => c.eventsConnected));
  assert.is(hh.beacon.events.clients, 2, 'the beacon\'s hub holds both connections');
  for (const l of logs) assert.ok(l.some((x) => x.level === 'info' && x.msg.startsWith('beacon event stream connected') && x.fields.url === hh.beacon.url.replace('http:', 'ws:') + '/ws'));

  // A validator whose attestation slot another validator proposes attests on that block's
  // new_block event (the head poll is off while subscribed). With two validators this happens in
  // most epochs; the deadline covers several.
  const early = await waitLine('an attestation sent on new_block', logs, (l) => l.msg === 'attestation sent' && l.fields.trigger === 'new_block', 60_000);
  const slot = early.fields.slot as number;
  const block = okData(await bget(hh, `/api/v1/beacon/blocks/${slot}`));
  assert.is(early.fields.head, block.root, 'it voted for the block the event announced (the block of its slot)');
  assert.ok(early.at < slotStartMs(hh.genesis, slot) + hh.genesis.config.slot_seconds * 1000, 'within its slot');
  for (const c of clients) assert.ok(((await metric(c, EVENTS, 'type="new_block"')) ?? 0) >= 1, 'new_block events counted');
  // (A head poll may have run in the first milliseconds, before the subscription was up.)
  const subscribedAt = Math.max(...logs.flat().filter((l) => l.msg.startsWith('beacon event stream connected')).map((l) => l.at));
  assert.equal(logs.flat().filter((l) => l.at > subscribedAt && l.fields.trigger === 'head_poll'), [], 'no head poll while subscribed');
  assert.equal(logs.flat().filter((l) => l.level === 'error' || l.msg.startsWith('the beacon refused')), [], 'no errors, nothing refused');
  for (const c of clients) assert.is(await metric(c, MALFORMED), 0);
});

Real('the hub drops them: they poll (and keep attesting); after a beacon restart they reconnect', async () => {
  const hh = h!;
  const clients = vals.map((v) => v.client);
  const logs = vals.map((v) => v.lines);
  const attsBefore = await Promise.all(clients.map((c) => metric(c, ATTESTATIONS)));

  const droppedAt = Date.now();
  await hh.beacon.events.close(); // every client gets 1001; further upgrades are refused (503)
  await waitMetric('both clients see the drop (gauge 0)', clients, CONNECTED, (v) => v === 0, 10_000);
  for (const l of logs) assert.ok(l.some((x) => x.level === 'warn' && x.msg.startsWith('beacon event stream disconnected') && x.fields.code === 1001), 'the drop is logged');
  // Attempts after a logged drop are at debug (an outage is logged once).
  await waitLine('a refused reconnection attempt', logs, (l) => l.at >= droppedAt && l.level === 'debug' && l.msg === 'beacon event stream still unavailable' && /503/.test(String(l.fields.error)), 10_000);

  // Polling: the head poll is back, and both keep attesting while the stream is gone.
  const polled = await waitLine('an attestation sent by the head poll', logs, (l) => l.at >= droppedAt && l.msg === 'attestation sent' && l.fields.trigger === 'head_poll', 60_000);
  assert.ok(polled);
  await waitFor('both attest again without the stream', async () => {
    const now = await Promise.all(clients.map((c) => metric(c, ATTESTATIONS)));
    return now.every((v, i) => (v ?? 0) > (attsBefore[i] ?? 0)) ? true : undefined;
  }, 30_000, 50);
  assert.ok(clients.every((c) => !c.eventsConnected));

  // The beacon restarts on its data directory and port: both reconnect on their own.
  const port = Number(new URL(hh.beacon.url).port);
  const eventsBefore = await Promise.all(clients.map((c) => metric(c, EVENTS, 'type="new_block"')));
  await hh.beacon.stop();
  hh.beacon = await BeaconNode.start({ genesis: hh.genesis, dataDir: join(hh.dir, 'beacon'), host: '127.0.0.1', port, executionUrl: hh.exec.restUrl, tokenFile: join(hh.dir, 'validator-token'), log: silentLogger });
  const restartSlot = slotAt(hh.genesis, Date.now());
  await waitMetric('both reconnected (gauge 1)', clients, CONNECTED, (v) => v === 1, 10_000);
  await waitMetric('reconnects counted', clients, RECONNECTS, (v) => v >= 1, 1_000);
  for (const l of logs) assert.ok(l.some((x) => x.msg.startsWith('beacon event stream connected') && (x.fields.reconnects as number) >= 1), 'the reconnection is logged');
  assert.is(hh.beacon.events.clients, 2);
  // And the stream works again: blocks made after the restart arrive as events.
  await waitFor('new_block events after the reconnection', async () => {
    const now = await Promise.all(clients.map((c) => metric(c, EVENTS, 'type="new_block"')));
    return now.every((v, i) => (v ?? 0) > (eventsBefore[i] ?? 0)) ? true : undefined;
  }, 30_000, 50);
  const head = okData(await bget(hh, '/api/v1/beacon/head'));
  assert.ok(head.slot >= restartSlot, `the chain goes on after the restart (head slot ${head.slot}, restart at ${restartSlot})`);
  // (Duty errors are possible while the beacon restarts, e.g. a 503 from a closing server; the stream never errs.)
  assert.equal(logs.flat().filter((l) => l.msg === 'beacon event handler failed'), []);
});

Real.run();

// ---------------------------------------------------------------------------------------------
// A ws server standing in for the beacon as the network peer (a beacon never sends garbage);
// its REST side answers NOT_FOUND, so the client has no duties and only the stream matters.

class FakePeer {
  readonly http: HttpServer;
  readonly wss: WebSocketServer;
  readonly sockets: ServerSocket[] = [];
  readonly paths: string[] = [];
  readonly closes: number[] = [];
  url = '';

  constructor() {
    this.http = createHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'test double' } }));
    });
    this.wss = new WebSocketServer({ server: this.http });
    this.wss.on('connection', (ws, req) => {
      this.sockets.push(ws);
      this.paths.push(req.url ?? '');
      ws.on('close', (code) => this.closes.push(code));
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((ok) => this.http.listen(0, '127.0.0.1', () => ok()));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((ok) => this.wss.close(() => ok()));
    await new Promise<void>((ok) => {
      this.http.close(() => ok());
      this.http.closeAllConnections();
    });
  }
}

const { genesis, keys } = devnet();
const ME = keys.validators[0]!;
/** Built once (65,536 hashes). */
const RANDAO = new RandaoChain(ME.mldsaSeed, genesis.config.randao_chain_length);

async function peerClient(url: string, extra: Partial<ValidatorClientOptions> = {}): Promise<Running> {
  const { log, lines } = captureLog();
  const sp = await SlashingProtectionDb.open({ memory: true });
  const client = new ValidatorClient({ genesis, keys: ME, beaconUrl: url, token: 'validator-token-0123456789', slashingDb: sp, log, randaoChain: RANDAO, ...extra });
  await client.start();
  return { client, lines, sp };
}

const Peer = suite('validator client: /ws against a misbehaving peer');

Peer('garbage is ignored and counted without a disconnect; an oversize message costs a reconnect', async () => {
  const peer = new FakePeer();
  await peer.start();
  const v = await peerClient(peer.url);
  try {
    await waitMetric('connected', [v.client], CONNECTED, (x) => x === 1, 10_000);
    assert.equal(peer.paths, ['/ws']);
    const ts = new Date().toISOString();
    const hash = '0x' + '11'.repeat(32);
    const proposer = genesis.validators[1]!.address;
    const slot = slotAt(genesis, Date.now());
    const garbage: Array<string | Buffer> = [
      'not json',
      '[]',
      'null',
      '{"type":5}',
      JSON.stringify({ type: 'new_block', data: null, timestamp: ts }),
      JSON.stringify({ type: 'new_block', data: { slot: -1, block_hash: hash, proposer, transactions: 0 }, timestamp: ts }),
      JSON.stringify({ type: 'new_block', data: { slot: '3', block_hash: hash, proposer, transactions: 0 }, timestamp: ts }),
      JSON.stringify({ type: 'new_block', data: { slot, block_hash: '0xzz', proposer, transactions: 0 }, timestamp: ts }),
      JSON.stringify({ type: 'new_block', data: { slot, block_hash: hash, proposer, transactions: 0 }, timestamp: 'not a time' }),
      '{"__proto__":{"polluted":true},"type":"new_block"}',
      Buffer.from([0xff, 0x00, 0x01]), // a binary frame
    ];
    const ws = peer.sockets[0]!;
    for (const g of garbage) ws.send(g, { binary: Buffer.isBuffer(g) });
    ws.send(JSON.stringify({ type: 'from_the_future', data: {}, timestamp: ts }));
    ws.send(JSON.stringify({ type: 'finalized_checkpoint', data: { epoch: 1, root: hash }, timestamp: ts }));
    ws.send(JSON.stringify({ type: 'new_block', data: { slot, block_hash: hash, proposer, transactions: 2 }, timestamp: ts }));
    // Messages are handled in order: once the last one is counted, so are the others.
    await waitMetric('the valid new_block after the garbage', [v.client], EVENTS, (x) => x === 1, 10_000, 'type="new_block"');
    assert.is(await metric(v.client, MALFORMED), garbage.length, 'every malformed message counted');
    assert.is(await metric(v.client, EVENTS, 'type="unknown"'), 1, 'an unknown type is not malformed');
    assert.is(await metric(v.client, EVENTS, 'type="finalized_checkpoint"'), 1);
    assert.is(await metric(v.client, CONNECTED), 1, 'still connected');
    assert.is(await metric(v.client, RECONNECTS), 0);
    assert.equal(peer.closes, [], 'the client did not drop the connection over garbage');
    assert.is(({} as Record<string, unknown>).polluted, undefined);
    const warned = v.lines.filter((l) => l.msg.startsWith('malformed beacon event ignored'));
    assert.is(warned.filter((l) => l.level === 'warn').length, 1, 'one warning per connection, the rest at debug');
    assert.is(warned.length, garbage.length);

    // Over the 1 MiB message cap: ws closes the connection (1009); the client reconnects.
    ws.send('x'.repeat(1024 * 1024 + 1));
    await waitFor('the oversize message closes the connection', async () => (peer.closes.length === 1 ? true : undefined), 10_000, 25);
    assert.is(peer.closes[0], 1009);
    await waitFor('a second connection', async () => (peer.sockets.length === 2 ? true : undefined), 10_000, 25);
    await waitMetric('reconnected', [v.client], CONNECTED, (x) => x === 1, 10_000);
    assert.is(await metric(v.client, RECONNECTS), 1);
    assert.ok(v.lines.some((l) => l.level === 'warn' && l.msg.startsWith('beacon event stream disconnected') && /max payload/i.test(String(l.fields.error))), JSON.stringify(v.lines.filter((l) => l.msg.startsWith('beacon event stream'))));
    assert.equal(v.lines.filter((l) => l.level === 'error'), [], 'nothing escalated to an error');
  } finally {
    await v.client.stop();
    await v.sp.close();
    await peer.stop();
  }
  // stop() sent a normal close to the open connection.
  assert.is(peer.closes.at(-1), 1000, 'closed with 1000 by stop()');
  assert.is(await metric(v.client, CONNECTED), 0);
});

Peer('stop() cancels the reconnect timer, aborts a hanging handshake and leaves no socket behind', async () => {
  // 1. Nothing listens: the first attempt fails and a reconnect timer is pending (fake timers).
  const { pending, timers } = heldTimers();
  const closed = new FakePeer();
  await closed.start();
  const deadUrl = closed.url;
  await closed.stop();
  const a = await peerClient(deadUrl, { timers });
  try {
    await waitLine('the failed first attempt', [a.lines], (l) => l.msg.startsWith('cannot subscribe to the beacon event stream'), 10_000);
    // The beacon never answered, so the client also asks it again soon (its first contact).
    assert.is(pending.size, 4, "the slot timer, the bridge duty's epoch poll, the first-contact retry and the reconnect timer");
    const failure = a.lines.find((l) => l.msg.startsWith('cannot subscribe'))!;
    assert.is(failure.level, 'info', 'a missing stream is not a warning: the client polls');
    assert.ok((failure.fields.retry_in_ms as number) >= 200 && (failure.fields.retry_in_ms as number) <= 300);
  } finally {
    await a.client.stop();
    await a.sp.close();
  }
  assert.is(pending.size, 0, 'stop() cleared every timer');

  // 2. A peer that accepts TCP and never answers (neither REST nor the upgrade): stop() aborts
  // the handshake instead of waiting for its deadline.
  const held: Socket[] = [];
  const upgrades: Array<{ closed: boolean }> = [];
  const tcp = createTcpServer((s) => {
    held.push(s);
    s.on('error', () => undefined);
    s.once('data', (chunk: Buffer) => {
      if (!/^upgrade: websocket/im.test(chunk.toString('latin1'))) return;
      const u = { closed: false };
      upgrades.push(u);
      s.once('close', () => (u.closed = true));
    });
  });
  await new Promise<void>((ok) => tcp.listen(0, '127.0.0.1', () => ok()));
  const b = await peerClient(`http://127.0.0.1:${(tcp.address() as AddressInfo).port}`, { requestTimeoutMs: 200 });
  try {
    await waitFor('the client\'s upgrade request', async () => (upgrades.length === 1 ? true : undefined), 10_000, 25);
    assert.is(b.client.eventsConnected, false);
    const t0 = Date.now();
    await b.client.stop();
    assert.ok(Date.now() - t0 < 2_000, 'stop() does not wait for the handshake deadline');
    await waitFor('the peer sees the upgrading socket closed', async () => (upgrades[0]!.closed ? true : undefined), 5_000, 25);
    assert.is(upgrades.length, 1, 'no further attempt after stop()');
  } finally {
    await b.client.stop();
    await b.sp.close();
    for (const s of held) s.destroy();
    await new Promise<void>((ok) => tcp.close(() => ok()));
  }
});

Peer.run();
