/**
 * The one event-stream client (src/client/event-stream.ts) beyond what the validator reads (those
 * checks are in test/node/validator/events.test.ts): every event type's data is checked when the
 * owner reads it, a stream URL can be given as such, the first-connection retry pace, and typed
 * handlers fed by a real `ws` server, with the types nobody reads only counted.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { EVENT_TYPES, type EventType, type FinalizedCheckpointEvent } from '../../src/api/events.js';
import { eventRoutes } from '../../src/api/routes/events.js';
import { BeaconEventStream, parseStreamMessage } from '../../src/client/event-stream.js';
import { SvcError } from '../../src/core/errors.js';
import type { Timers } from '../../src/util/timers.js';
import { silentLogger } from '../../src/util/log.js';
import { waitFor } from '../helpers/network.js';

const ts = '2026-11-22T10:15:30.123Z';
const HASH = '0x' + 'AB'.repeat(32);
const ADDR = '0x' + 'Cd'.repeat(20);
const ALL: ReadonlySet<EventType> = new Set(EVENT_TYPES);

/** One well-formed `data` per event type (hex in mixed case). */
const SAMPLES: { [T in EventType]: Record<string, unknown> } = {
  new_block: { slot: 7, block_hash: HASH, proposer: ADDR, transactions: 3 },
  new_attestation: { slot: 7, validator: ADDR, block_hash: HASH },
  bridge_bid_registered: { bid: HASH, status: 'PENDING', amount: '5', chain: 'svc-b' },
  bridge_bid_status: { bid: HASH, status: 'ATTESTED', previous: null, direction: 'incoming' },
  finalized_checkpoint: { epoch: 2, root: HASH },
  slashing: { kind: 'double_vote', validator_index: 1, validator: ADDR, evidence_hash: HASH, slot: 9, epoch: 1, evidence: { type: 'attester' } },
  head: { slot: 9, block_hash: HASH, proposer_dependent_roots: [{ epoch: 1, root: HASH }] },
};

const msg = (type: string, data: unknown): string => JSON.stringify({ type, data, timestamp: ts });

test('every event type the owner reads is checked and handed over with its hex lowercased', () => {
  assert.equal(Object.keys(SAMPLES), [...EVENT_TYPES], 'one sample per type, in the list order');
  for (const type of EVENT_TYPES) {
    const m = parseStreamMessage(msg(type, SAMPLES[type]), ALL);
    assert.is(m.kind, type);
    const text = JSON.stringify(m);
    assert.not.ok(/AB|Cd/.test(text), `${type}: ${text}`);
  }
  assert.equal(parseStreamMessage(msg('slashing', { ...SAMPLES.slashing, validator: null }), ALL), {
    kind: 'slashing',
    data: { kind: 'double_vote', validator_index: 1, validator: null, evidence_hash: HASH.toLowerCase(), slot: 9, epoch: 1, evidence: { type: 'attester' } },
    timestamp: ts,
  });
  // Not read: only counted, whatever its data.
  assert.equal(parseStreamMessage(msg('slashing', { kind: 'nonsense' }), new Set<EventType>(['new_block'])), { kind: 'other', type: 'slashing', timestamp: ts });
});

test('data of a read type that does not match its shape is malformed, naming the field', () => {
  const bad: Array<[EventType, Record<string, unknown>, RegExp]> = [
    ['new_attestation', { ...SAMPLES.new_attestation, validator: 'x' }, /new_attestation: validator/],
    ['new_attestation', { ...SAMPLES.new_attestation, slot: -1 }, /new_attestation: slot/],
    ['new_attestation', { ...SAMPLES.new_attestation, block_hash: null }, /new_attestation: block_hash/],
    ['finalized_checkpoint', { ...SAMPLES.finalized_checkpoint, epoch: '2' }, /finalized_checkpoint: epoch/],
    ['finalized_checkpoint', { ...SAMPLES.finalized_checkpoint, root: '0x12' }, /finalized_checkpoint: root/],
    ['bridge_bid_status', { ...SAMPLES.bridge_bid_status, previous: 'pending' }, /bridge_bid_status: previous/],
    ['bridge_bid_status', { ...SAMPLES.bridge_bid_status, direction: 'sideways' }, /bridge_bid_status: direction/],
    ['bridge_bid_status', { ...SAMPLES.bridge_bid_status, status: 1 }, /bridge_bid_status: status/],
    ['slashing', { ...SAMPLES.slashing, kind: 'double_spend' }, /slashing: kind/],
    ['slashing', { ...SAMPLES.slashing, validator: 5 }, /slashing: validator/],
    ['slashing', { ...SAMPLES.slashing, evidence_hash: 'x' }, /slashing: evidence_hash/],
    ['slashing', { ...SAMPLES.slashing, evidence: [] }, /slashing: evidence/],
  ];
  for (const [type, data, why] of bad) {
    const m = parseStreamMessage(msg(type, data), ALL);
    assert.is(m.kind, 'malformed', JSON.stringify(data));
    assert.match((m as { reason: string }).reason, why);
  }
});

test('a stream URL can be given as such (ws or wss only); the derived one ends in the route path', () => {
  assert.is(new BeaconEventStream({ url: 'ws://127.0.0.1:9/ws', log: silentLogger, handlers: {} }).url, 'ws://127.0.0.1:9/ws');
  assert.is(new BeaconEventStream({ beaconUrl: 'http://127.0.0.1:9', log: silentLogger, handlers: {} }).url, `ws://127.0.0.1:9${eventRoutes.stream.path}`);
  for (const bad of ['http://127.0.0.1:9/ws', 'not a url']) {
    try {
      new BeaconEventStream({ url: bad, log: silentLogger, handlers: {} });
      assert.unreachable(`accepted ${bad}`);
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'INVALID_URL');
    }
  }
});

test('before the first connection, attempts retry at firstConnectRetryMs instead of the backoff', async () => {
  // A port with nothing listening (taken, then freed).
  const probe = createServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', () => ok()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((ok) => probe.close(() => ok()));
  const delays: number[] = [];
  const waiting = new Set<() => void>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      delays.push(ms);
      waiting.add(fn);
      return fn;
    },
    clearTimeout: (h) => void waiting.delete(h as () => void),
  };
  const stream = new BeaconEventStream({ beaconUrl: `http://127.0.0.1:${port}`, log: silentLogger, timers, handlers: {}, minBackoffMs: 250, random: () => 0.5, firstConnectRetryMs: 100 });
  stream.start();
  try {
    for (let i = 1; i <= 3; i++) {
      await waitFor(`failed attempt ${i}`, async () => (delays.length === i ? true : undefined), 10_000, 10);
      const [fn] = waiting;
      waiting.clear();
      fn!();
    }
    assert.equal(delays.slice(0, 3), [100, 100, 100], 'flat, not 250, 500, 1000');
  } finally {
    await stream.stop();
  }
});

test('typed handlers get checked data and the timestamp; types without a handler are only counted', async () => {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', () => ok()));
  const port = (http.address() as AddressInfo).port;
  wss.on('connection', (ws) => {
    ws.send(msg('new_attestation', SAMPLES.new_attestation));
    ws.send(msg('finalized_checkpoint', { epoch: 'two', root: HASH }));
    ws.send(msg('finalized_checkpoint', SAMPLES.finalized_checkpoint));
  });
  const got: Array<[FinalizedCheckpointEvent, string]> = [];
  const counted: string[] = [];
  const malformed: string[] = [];
  const stream = new BeaconEventStream({
    url: `ws://127.0.0.1:${port}${eventRoutes.stream.path}`,
    log: silentLogger,
    handlers: { finalized_checkpoint: (d, time) => void got.push([d, time]), event: (t) => void counted.push(t), malformed: (r) => void malformed.push(r) },
  });
  stream.start();
  try {
    await waitFor('the finalized checkpoint', async () => (got.length === 1 ? true : undefined), 10_000, 10);
    assert.equal(got, [[{ epoch: 2, root: HASH.toLowerCase() }, ts]]);
    assert.equal(counted, ['new_attestation', 'finalized_checkpoint']);
    assert.is(malformed.length, 1);
    assert.match(malformed[0]!, /finalized_checkpoint: epoch/);
    assert.is(stream.malformed, 1);
  } finally {
    await stream.stop();
    wss.close();
    await new Promise<void>((ok) => http.close(() => ok()));
  }
});

test.run();
