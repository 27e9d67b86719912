/**
 * The beacon's bridge state machine (src/node/beacon/bridge/store.ts) on a real LevelDB in a temp dir,
 * fed with ImportResult-shaped receipts whose logs are built by the core functions (bridgeLog,
 * bidId) and with BID signatures of real ML-DSA keys: registration, signatures and the 2/3 rule,
 * finality (only attested + finalised with a finalised block above the lock), expiry by the
 * clock, settlement, incoming BIDs, persistence across reopening, atomicity with the block write.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassicLevel } from 'classic-level';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { type BidFields, bidId, signBid } from '../../../../src/core/bridge/types.js';
import { keygenFromSeed } from '../../../../src/core/crypto/mldsa.js';
import { SvcError } from '../../../../src/core/errors.js';
import { genesisHash } from '../../../../src/core/genesis/genesis.js';
import type { Receipt, RegistryEntry } from '../../../../src/api/execution.js';
import type { CounterpartsView } from '../../../../src/api/bridge.js';
import { type BridgeBlockRef, BridgeStore } from '../../../../src/node/beacon/bridge/store.js';
import type { EventDataMap, EventType } from '../../../../src/api/events.js';
import { BeaconMetrics } from '../../../../src/node/beacon/metrics.js';
import { ChainStore, type Db, WriteBatch } from '../../../../src/node/shared/store.js';
import { silentLogger } from '../../../../src/util/log.js';
import { filled } from '../../../helpers/assert.js';
import { harnessGenesis, sample } from '../fixture.js';
import { bridgeReceipt } from './fixture.js';
import { HeldSignatures, MAX_HELD_SIGNATURES } from '../../../../src/node/beacon/bridge/gossip.js';
import { httpStatusOf } from '../../../../src/api/errors.js';

const genesis = harnessGenesis({ validators: 4, chainId: 'svc-a' });
const SELF_HASH = genesisHash(genesis);
const SELF = toHex(SELF_HASH);
const OTHER = filled(32, 0xbb);
const STAKE = 32n * 10n ** 18n;
const keys = [0, 1, 2, 3].map((i) => keygenFromSeed(filled(32, 0x50 + i)));
const ALICE = filled(20, 0xa1);
const BOB = filled(20, 0xb0);
const T0 = Date.UTC(2026, 10, 24, 8, 0, 0);

function registry(): RegistryEntry[] {
  return keys.map((k, i) => ({ index: i, address: toHex(filled(20, i + 1)), public_key: toHex(k.publicKey), stake: STAKE.toString(), randao_commitment: toHex(filled(32, 0)), active: true, slashed: false }));
}

/** Blocks 0..n on one branch (root of block i is filled(32, i + 1)), plus whatever a test adds. */
function chainOf(n: number): Map<string, BridgeBlockRef> {
  const m = new Map<string, BridgeBlockRef>();
  for (let i = 0; i <= n; i++) m.set(root(i), { root: root(i), parent: i === 0 ? toHex(filled(32, 0)) : root(i - 1), index: i });
  return m;
}
const root = (i: number) => toHex(filled(32, i + 1));

interface Rig {
  store: BridgeStore;
  db: ClassicLevel<string, string>;
  events: Array<{ type: EventType; data: unknown }>;
  metrics: BeaconMetrics;
  clock: { now: number };
  reg: RegistryEntry[];
  blocks: Map<string, BridgeBlockRef>;
}

async function open(dir: string, o: { clock?: { now: number }; reg?: RegistryEntry[]; blocks?: Map<string, BridgeBlockRef> } = {}): Promise<Rig> {
  const db = new ClassicLevel<string, string>(join(dir, 'beacon'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const events: Rig['events'] = [];
  const metrics = new BeaconMetrics();
  const clock = o.clock ?? { now: T0 };
  const reg = o.reg ?? registry();
  const blocks = o.blocks ?? chainOf(20);
  const view: CounterpartsView = { self: { chain_id: 'svc-a', genesis_hash: SELF }, counterparts: [{ chain_id: 'svc-b', genesis_hash: toHex(OTHER), validators: 4, active_stake: (4n * STAKE).toString(), slots_per_epoch: 4, slot_seconds: 2 }] };
  const store = await BridgeStore.open({
    genesis,
    store: new ChainStore(db as unknown as Db),
    metrics,
    log: silentLogger,
    events: { publish: <T extends EventType>(type: T, data: EventDataMap[T]) => (events.push({ type, data }), 1) },
    registry: () => reg,
    counterparts: async () => view,
    block: (r) => blocks.get(r),
    now: () => clock.now,
    currentSlot: () => Math.floor((clock.now / 1000 - genesis.genesis_time) / 2),
  });
  return { store, db, events, metrics, clock, reg, blocks };
}

async function withRig(fn: (r: Rig, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bridge-'));
  const rig = await open(dir);
  try {
    await fn(rig, dir);
  } finally {
    if (rig.db.status === 'open') await rig.db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function fields(n: number, o: Partial<BidFields> = {}): BidFields {
  return { source: SELF_HASH, destination: OTHER, lockTx: filled(32, 0x70 + n), sender: ALICE, recipient: BOB, amount: 5n * 10n ** 18n + BigInt(n), timeout: T0 / 1000 + 600, ...o };
}

/** A bridge receipt in block `block` of the test chain. */
const receipt = (kind: Receipt['kind'], event: 'Locked' | 'Released' | 'Completed' | 'Refunded', f: BidFields, block: number, status: 0 | 1 = 1): Receipt => bridgeReceipt(kind, event, f, at(block), status);
const at = (block: number) => ({ hash: root(block), index: block });
const sig = (f: BidFields, v: number, chain = 'svc-a') => signBid(bidId(f), v, keys[v]!, chain);

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SvcError, String(err));
    return `${httpStatusOf(err as SvcError)} ${(err as SvcError).code}`;
  }
  throw new Error('expected a refusal');
}

test('a lock registers a PENDING outgoing BID, announced once with the destination chain name; listings find it by status, address and direction', async () => {
  await withRig(async ({ store, events, metrics }) => {
    const f = fields(1);
    const bid = toHex(bidId(f));
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3));
    assert.equal(events, [{ type: 'bridge_bid_registered', data: { bid, status: 'PENDING', amount: f.amount.toString(), chain: 'svc-b' } }]);
    const v = (await store.bid(bid))!;
    assert.equal([v.status, v.direction, v.source.chain_id, v.destination, v.block], ['PENDING', 'outgoing', 'svc-a', { chain_id: 'svc-b', genesis_hash: toHex(OTHER) }, at(3)]);
    assert.equal(v.fields.recipient, toHex(BOB));
    assert.is(v.history.length, 1);
    assert.equal([v.history[0]!.status, v.history[0]!.block_hash, v.history[0]!.at], ['PENDING', root(3), new Date(T0).toISOString()]);
    assert.equal(v.signatures, { signers: 0, signed_stake: '0', active_stake: (4n * STAKE).toString() });
    // The same block imported again (or the same lock in another block) registers nothing new.
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3));
    assert.is(events.length, 1);
    const g = fields(2, { sender: filled(20, 0xc3) });
    await store.importBlock([receipt('bridge_lock', 'Locked', g, 4), receipt('bridge_lock', 'Locked', fields(9), 4, 0)], at(4));
    const ids = async (q: Parameters<BridgeStore['list']>[0]) => (await store.list(q)).map((x) => x.bid);
    assert.equal(await ids({ limit: 10 }), [toHex(bidId(g)), bid], 'newest first; the failed lock registered nothing');
    assert.equal(await ids({ limit: 1 }), [toHex(bidId(g))]);
    assert.equal(await ids({ status: 'PENDING', direction: 'outgoing', limit: 10 }), [toHex(bidId(g)), bid]);
    assert.equal(await ids({ status: 'ATTESTED', limit: 10 }), []);
    assert.equal(await ids({ direction: 'incoming', limit: 10 }), []);
    assert.equal(await ids({ address: toHex(ALICE), limit: 10 }), [bid]);
    assert.equal(await ids({ address: toHex(BOB), limit: 10 }), [toHex(bidId(g)), bid], 'recipient too');
    assert.equal(await ids({ address: toHex(BOB), status: 'COMPLETED', limit: 10 }), []);
    assert.is(sample(await metrics.text(), 'service_beacon_bridge_bids', 'status="PENDING",direction="outgoing"'), 2);
  });
});

test('logs that are not this chain\'s locks are ignored: failed receipts, another source, a log whose id does not commit to its fields, another address', async () => {
  await withRig(async ({ store, events }) => {
    const foreign = fields(3, { source: filled(32, 0xcc) });
    const forged = receipt('bridge_lock', 'Locked', fields(4), 2);
    forged.logs[0]!.topics[1] = toHex(filled(32, 0x99));
    const elsewhere = receipt('bridge_lock', 'Locked', fields(5), 2);
    elsewhere.logs[0]!.address = toHex(filled(20, 0x10));
    await store.importBlock([receipt('bridge_lock', 'Locked', fields(6), 2, 0), receipt('bridge_lock', 'Locked', foreign, 2), forged, elsewhere, receipt('transfer', 'Locked', fields(7), 2)], at(2));
    assert.equal(events, []);
    assert.equal(await store.list({ limit: 10 }), []);
  });
});

test('BID signatures: unknown BID 404, unknown/inactive/slashed signer and a signature under another chain id refused; 2/3 of active stake attests; a repeat is known', async () => {
  await withRig(async ({ store, events, reg }) => {
    const f = fields(1);
    const bid = toHex(bidId(f));
    assert.is(await code(store.addSignature(bid, sig(f, 0))), '404 UNKNOWN_BID');
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3));
    assert.is(await code(store.addSignature(bid, { ...sig(f, 0), validatorIndex: 7 })), '400 BRIDGE_UNKNOWN_SIGNER');
    assert.is(await code(store.addSignature(bid, sig(f, 0, 'svc-b'))), '400 BRIDGE_BAD_SIGNATURE');
    assert.is(await code(store.addSignature(bid, { ...sig(f, 0), validatorIndex: 1 })), '400 BRIDGE_BAD_SIGNATURE', "validator 0's signature as validator 1's");
    assert.is(await code(store.addSignature(bid, sig(fields(2), 0))), '400 BRIDGE_BAD_SIGNATURE', "another BID's signature");
    reg[3] = { ...reg[3]!, active: false, slashed: true };
    assert.is(await code(store.addSignature(bid, sig(f, 3))), '400 BRIDGE_UNKNOWN_SIGNER');
    reg[3] = { ...reg[3]!, active: true, slashed: false };
    const a = await store.addSignature(bid, sig(f, 0));
    assert.equal(a, { added: true, result: { bid, added: true, status: 'PENDING', signers: 1, signed_stake: STAKE.toString(), active_stake: (4n * STAKE).toString() } });
    const again = await store.addSignature(bid, sig(f, 0));
    assert.equal([again.added, again.result.signers], [false, 1]);
    assert.is((await store.addSignature(bid, sig(f, 1))).result.status, 'PENDING', '2 of 4 is not 2/3');
    const third = await store.addSignature(bid, sig(f, 2));
    assert.equal([third.added, third.result.status, third.result.signers], [true, 'ATTESTED', 3]);
    assert.equal(events.slice(1), [{ type: 'bridge_bid_status', data: { bid, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' } }]);
    assert.equal((await store.signatures(bid))!.map((s) => s.validator_index), [0, 1, 2]);
    assert.is((await store.signatures(bid))![2]!.signature, toHex(sig(f, 2).signature));
    assert.is(await store.signatures(toHex(filled(32, 1))), undefined);
    // A fourth signature is still kept (a relayer may use any 2/3), without another transition.
    assert.is((await store.addSignature(bid, sig(f, 3))).result.status, 'ATTESTED');
    assert.is(events.length, 2);
  });
});

test('FINALIZED only when attested and the lock block is finalised with a finalised block above it; a lock on an abandoned branch never is', async () => {
  await withRig(async ({ store, events, blocks }) => {
    const f = fields(1);
    const g = fields(2);
    const side = fields(3);
    const [bf, bg, bs] = [f, g, side].map((x) => toHex(bidId(x)));
    // A side branch forking after block 4: its block 5' holds `side`'s lock.
    blocks.set(toHex(filled(32, 0xee)), { root: toHex(filled(32, 0xee)), parent: root(4), index: 5 });
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 5)], at(5));
    await store.importBlock([receipt('bridge_lock', 'Locked', g, 6)], at(6));
    await store.importBlock([receipt('bridge_lock', 'Locked', side, 5)], { hash: toHex(filled(32, 0xee)), index: 5 });
    for (const v of [0, 1, 2]) await store.addSignature(bf, sig(f, v));
    assert.is((await store.bid(bf))!.status, 'ATTESTED');
    // Finality at the lock block itself: nothing above it is final yet.
    await store.onFinalized(root(5));
    assert.is((await store.bid(bf))!.status, 'ATTESTED');
    await store.onFinalized(root(8));
    assert.is((await store.bid(bf))!.status, 'FINALIZED');
    assert.is((await store.bid(bg))!.status, 'PENDING', 'final but not attested stays PENDING');
    assert.is((await store.bid(bs))!.status, 'PENDING');
    // Attestation completing after finality goes straight on to FINALIZED.
    for (const v of [0, 1, 2]) await store.addSignature(bg, sig(g, v));
    assert.equal((await store.bid(bg))!.history.map((t) => t.status), ['PENDING', 'ATTESTED', 'FINALIZED']);
    for (const v of [0, 1, 2]) await store.addSignature(bs, sig(side, v));
    await store.onFinalized(root(12));
    assert.is((await store.bid(bs))!.status, 'ATTESTED', 'the side branch lock is not final');
    const statuses = events.filter((e) => e.type === 'bridge_bid_status').map((e) => e.data);
    assert.equal(statuses, [
      { bid: bf, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' },
      { bid: bf, status: 'FINALIZED', previous: 'ATTESTED', direction: 'outgoing' },
      { bid: bg, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' },
      { bid: bg, status: 'FINALIZED', previous: 'ATTESTED', direction: 'outgoing' },
      { bid: bs, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' },
    ]);
  });
});

test('the clock expires open BIDs at their timeout; a completion or a refund settles them; completion observes the relay latency', async () => {
  await withRig(async ({ store, clock, metrics }) => {
    const f = fields(1, { timeout: T0 / 1000 + 60 });
    const g = fields(2, { timeout: T0 / 1000 + 120 });
    const h = fields(3, { timeout: T0 / 1000 + 30 });
    const [bf, bg, bh] = [f, g, h].map((x) => toHex(bidId(x)));
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 2), receipt('bridge_lock', 'Locked', g, 2), receipt('bridge_lock', 'Locked', h, 2)], at(2));
    for (const v of [0, 1, 2]) await store.addSignature(bh, sig(h, v));
    await store.onFinalized(root(4));
    assert.is((await store.bid(bh))!.status, 'FINALIZED');
    clock.now = T0 + 12_000;
    await store.importBlock([receipt('bridge_complete', 'Completed', h, 9)], at(9));
    assert.is((await store.bid(bh))!.status, 'COMPLETED');
    assert.match(await metrics.text(), /^service_beacon_bridge_relay_latency_seconds_sum 12$/m);
    assert.match(await metrics.text(), /^service_beacon_bridge_relay_latency_seconds_count 1$/m);
    clock.now = T0 + 59_999;
    await store.onSlot();
    assert.is((await store.bid(bf))!.status, 'PENDING', 'not before the timeout');
    clock.now = T0 + 60_000;
    await store.onSlot();
    assert.is((await store.bid(bf))!.status, 'EXPIRED');
    assert.is((await store.bid(bg))!.status, 'PENDING');
    assert.is((await store.bid(bh))!.status, 'COMPLETED', 'settled BIDs do not expire');
    await store.importBlock([receipt('bridge_refund', 'Refunded', f, 10)], at(10));
    const v = (await store.bid(bf))!;
    assert.equal(v.history.map((t) => [t.status, t.block_hash]), [['PENDING', root(2)], ['EXPIRED', null], ['REFUNDED', root(10)]]);
    // A completion of an expired BID (released before its timeout, completed later) settles it too.
    clock.now = T0 + 200_000;
    await store.onSlot();
    await store.importBlock([receipt('bridge_complete', 'Completed', g, 11)], at(11));
    assert.equal((await store.bid(bg))!.history.map((t) => t.status), ['PENDING', 'EXPIRED', 'COMPLETED']);
    // Settled is final: a later refund log changes nothing.
    await store.importBlock([receipt('bridge_refund', 'Refunded', g, 12)], at(12));
    assert.is((await store.bid(bg))!.status, 'COMPLETED');
    const text = await metrics.text();
    assert.is(sample(text, 'service_beacon_bridge_bids', 'status="COMPLETED",direction="outgoing"'), 2);
    assert.is(sample(text, 'service_beacon_bridge_bids', 'status="REFUNDED",direction="outgoing"'), 1);
    assert.is(sample(text, 'service_beacon_bridge_bids', 'status="PENDING",direction="outgoing"'), 0);
    assert.match(text, /^service_beacon_bridge_relay_latency_seconds_count 1$/m, 'only a BID seen FINALIZED has a relay latency');
  });
});

test('a release registers an incoming BID as COMPLETED, announced as a status; its signatures are not collected here', async () => {
  await withRig(async ({ store, events }) => {
    const f = fields(1, { source: OTHER, destination: SELF_HASH });
    const bid = toHex(bidId(f));
    await store.importBlock([receipt('bridge_release', 'Released', f, 4)], at(4));
    assert.equal(events, [{ type: 'bridge_bid_status', data: { bid, status: 'COMPLETED', previous: null, direction: 'incoming' } }]);
    const v = (await store.bid(bid))!;
    assert.equal([v.direction, v.status, v.source.chain_id, v.destination.chain_id, v.signatures], ['incoming', 'COMPLETED', 'svc-b', 'svc-a', null]);
    assert.is(await code(store.addSignature(bid, sig(f, 0))), '400 BRIDGE_WRONG_SOURCE');
    // A release for another destination is not this chain's.
    await store.importBlock([receipt('bridge_release', 'Released', fields(2, { source: OTHER, destination: filled(32, 0xdd) }), 5)], at(5));
    assert.is((await store.list({ direction: 'incoming', limit: 10 })).length, 1);
  });
});

test('everything reloads from LevelDB: records, histories, signatures, indexes, counts, arrival order', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bridge-'));
  let rig = await open(dir);
  try {
    const f = fields(1);
    const g = fields(2, { timeout: T0 / 1000 + 5 });
    const bf = toHex(bidId(f));
    await rig.store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3));
    await rig.store.importBlock([receipt('bridge_lock', 'Locked', g, 3)], at(3));
    for (const v of [0, 1]) await rig.store.addSignature(bf, sig(f, v));
    const before = await rig.store.list({ limit: 10 });
    await rig.db.close();
    rig = await open(dir, { clock: { now: T0 + 10_000 } });
    assert.equal(await rig.store.list({ limit: 10 }), before);
    assert.is(sample(await rig.metrics.text(), 'service_beacon_bridge_bids', 'status="PENDING",direction="outgoing"'), 2, 'counts reloaded');
    // The indexes came back: the signature and the finality queue continue, the expiry queue too.
    assert.is((await rig.store.addSignature(bf, sig(f, 2))).result.status, 'ATTESTED');
    await rig.store.onFinalized(root(5));
    assert.is((await rig.store.bid(bf))!.status, 'FINALIZED');
    await rig.store.onSlot();
    assert.is((await rig.store.bid(toHex(bidId(g))))!.status, 'EXPIRED');
    const h = fields(3);
    await rig.store.importBlock([receipt('bridge_lock', 'Locked', h, 6)], at(6));
    assert.is((await rig.store.list({ limit: 1 }))[0]!.bid, toHex(bidId(h)), 'arrival order continues after a restart');
  } finally {
    if (rig.db.status === 'open') await rig.db.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a block and its bridge changes are one write: nothing is announced or counted when it fails, and the block\'s own ops ride in it', async () => {
  await withRig(async ({ store, events, metrics, db }) => {
    const f = fields(1);
    const bid = toHex(bidId(f));
    const block = new WriteBatch().put('b:test', { root: root(3) });
    let seen: WriteBatch | undefined;
    const failing = async (b: WriteBatch) => {
      seen = b;
      throw new Error('disk full');
    };
    let failed = false;
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3), block, failing).catch(() => (failed = true));
    assert.ok(failed, 'the failed write reaches the caller');
    assert.ok(seen!.ops.some((o) => o.key === 'b:test') && seen!.ops.some((o) => o.key === `X:${bid}`), 'one batch holds both');
    assert.equal(events, []);
    assert.is(await store.bid(bid), undefined);
    assert.is(sample(await metrics.text(), 'service_beacon_bridge_bids', 'status="PENDING",direction="outgoing"'), 0);
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3), new WriteBatch().put('b:test', { root: root(3) }));
    assert.is((await store.bid(bid))!.status, 'PENDING');
    assert.is(await db.get('b:test'), JSON.stringify({ root: root(3) }));
    assert.is(events.length, 1);
  });
});

test('gossiped signatures of a BID not registered yet are verified and held (bounded), then join it at registration', async () => {
  await withRig(async ({ store, events }) => {
    const f = fields(1);
    const bid = toHex(bidId(f));
    assert.is(await code(store.gossipSignature(bid, { ...sig(f, 0), validatorIndex: 1 })), '400 BRIDGE_BAD_SIGNATURE', 'forged: not held');
    assert.is(await code(store.gossipSignature(bid, { ...sig(f, 0), validatorIndex: 9 })), '400 BRIDGE_UNKNOWN_SIGNER');
    for (const v of [0, 1, 2]) assert.is(await store.gossipSignature(bid, sig(f, v)), 'held');
    await store.importBlock([receipt('bridge_lock', 'Locked', f, 3)], at(3));
    const v = (await store.bid(bid))!;
    assert.equal([v.status, v.signatures!.signers], ['ATTESTED', 3]);
    assert.equal(events.map((e) => e.type), ['bridge_bid_registered', 'bridge_bid_status']);
    assert.is(await store.gossipSignature(bid, sig(f, 0)), 'known');
    assert.is(await store.gossipSignature(bid, sig(f, 3)), 'added');
  });
  const held = new HeldSignatures();
  for (let i = 0; i < MAX_HELD_SIGNATURES + 10; i++) held.hold(toHex(filled(32, i % 256).map((b, j) => (j === 0 ? i >> 8 : b))), { validatorIndex: 0, signature: filled(3309, 1) });
  assert.ok(held.count <= MAX_HELD_SIGNATURES, `${held.count} held`);
  assert.is(held.take(toHex(filled(32, 0))), undefined, 'the oldest went first');
});

test.run();
