/**
 * The beacon on the P2P network, with real nodes: beacons (each on its own in-process execution
 * node, memory DB) on loopback libp2p hosts over the hybrid handshake, plus a bare test host that
 * speaks the beacon's protocols badly. A block proposed to one beacon is imported by the other
 * through gossip; an attestation propagates; a beacon started late catches up by range sync; a
 * peer whose status names another chain is disconnected; malformed gossip and request frames are
 * refused, counted by reason and penalised, and the node keeps following.
 *
 * Deadlines come from the genesis slot time (2 s devnet slots) with generous margins; every wait
 * polls an observable condition.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { WebSocket } from 'ws';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { chainIdBytes } from '../../../src/core/crypto/domain.js';
import { type Genesis } from '../../../src/core/genesis/genesis.js';
import { attestationToJson, encodeAttestation, signAttestation, type AttestationData } from '../../../src/core/types/attestation.js';
import { blockHash, decodeBlock, encodeBlock } from '../../../src/core/types/block.js';
import { attesterSlashing, decodeEvidence, encodeEvidence, evidenceHash, evidenceToJson } from '../../../src/core/consensus/slashing.js';
import type { BeaconEvent } from '../../../src/api/events.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { encodeRangeRequest } from '../../../src/node/beacon/sync/blocks-by-range.js';
import { decodeStatus, encodeStatus } from '../../../src/node/beacon/sync/status.js';
import { HYBRID_NOISE_PROTOCOL, startP2p } from '../../../src/node/p2p/host.js';
import { type P2pHost, SyncProtocols, Topics } from '../../../src/node/p2p/types.js';
import { silentLogger } from '../../../src/util/log.js';
import { type BidFields, bidId, signBid } from '../../../src/core/bridge/types.js';
import { encodeBidSignatureGossip } from '../../../src/node/beacon/bridge/gossip.js';
import { bridgeReceipt } from './bridge/fixture.js';
import { beaconHead, beaconMetrics, bget, bpost, buildProposal, execHeight, type Harness, harnessGenesis, okData, proposeBlock, sample, startHarness, stopHarness } from './fixture.js';
import { metricSum, parseMetrics } from '../../helpers/fuzz.js';

/** Generous multiple of the slot time for anything that should happen within a slot or two. */
const SLOTS_MARGIN = 15;

interface Ctx {
  genesis?: Genesis;
  a?: Harness;
  b?: Harness;
  late?: Harness;
  lone?: Harness;
  startError?: unknown;
  bare: { host?: P2pHost; dir: string }[];
}

const p2p = suite<Ctx>('beacon P2P: gossip, sync, bad input', { bare: [] });

const LOOPBACK = { host: '127.0.0.1', port: 0 };

/** The beacon's dialable loopback multiaddr. */
function addrOf(h: Harness): string {
  const net = h.beacon.net;
  if (!net) throw new Error('beacon runs without P2P');
  const a = net.host.multiaddrs().find((m) => m.includes('/127.0.0.1/'));
  if (!a) throw new Error('beacon host has no loopback address');
  return a.includes('/p2p/') ? a : `${a}/p2p/${net.host.peerId}`;
}

/** Polls `check` until true; fails naming `what` after `slots` slot times. */
async function until(g: Genesis, what: string, check: () => boolean | Promise<boolean>, slots = SLOTS_MARGIN): Promise<void> {
  const deadline = Date.now() + slots * g.config.slot_seconds * 1000;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${slots} slots waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function ctxOf(ctx: Ctx): { g: Genesis; a: Harness; b: Harness } {
  if (!ctx.a || !ctx.b || !ctx.genesis) throw ctx.startError ?? new Error('nodes not started');
  return { g: ctx.genesis, a: ctx.a, b: ctx.b };
}

/** A bare libp2p host on `target`'s genesis (so the handshake passes), dialling it. */
async function bareHost(ctx: Ctx, target: Harness): Promise<P2pHost> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bare-'));
  ctx.bare.push({ dir });
  const host = await startP2p({ layer: 'beacon', ...LOOPBACK, bootnodes: [addrOf(target)], dataDir: dir, genesisHash: target.beacon.chain.genesisRoot, metrics: new Registry(), log: silentLogger });
  ctx.bare.at(-1)!.host = host;
  return host;
}

/** Sum of every sample of a metric, whatever its labels. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name + '{') || line.startsWith(name + ' ')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

const sampleOf = async (h: Harness, name: string, labels = ''): Promise<number> => sample(await beaconMetrics(h), name, labels) ?? 0;

/** Proposes the next block on `h` at the first slot after its head and returns its root. */
async function proposeNext(h: Harness): Promise<string> {
  const head = await beaconHead(h);
  const { block } = await buildProposal(h, { slot: head.slot + 1 });
  okData(await proposeBlock(h, block));
  return toHex(blockHash(block.header));
}

p2p.before(async (ctx) => {
  try {
    // Slot 0 lies 40 slots back: blocks for past slots can be proposed at once, one per slot.
    ctx.genesis = harnessGenesis({ validators: 2, slotsAgo: 40 });
    ctx.a = await startHarness({ genesis: ctx.genesis, p2p: { ...LOOPBACK, bootnodes: [] } });
    ctx.b = await startHarness({ genesis: ctx.genesis, p2p: { ...LOOPBACK, bootnodes: [addrOf(ctx.a)] } });
  } catch (err) {
    ctx.startError = err;
  }
});

p2p.after(async (ctx) => {
  await Promise.allSettled(ctx.bare.map((b) => b.host?.stop()));
  await Promise.allSettled(ctx.bare.map((b) => rm(b.dir, { recursive: true, force: true })));
  for (const h of [ctx.lone, ctx.late, ctx.b, ctx.a]) if (h) await stopHarness(h).catch(() => undefined);
});

p2p('two beacons connect over the hybrid handshake; peers, health and the peer-count metric say so', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  await until(g, 'both beacons to see one peer', () => a.beacon.net!.peerCount() === 1 && b.beacon.net!.peerCount() === 1);
  const list = (await bget(a, '/api/v1/p2p/peers')).body as { peers: { peer_id: string; direction: string; handshake: string; address: string; connected_since: string }[] };
  assert.is(list.peers.length, 1);
  assert.is(list.peers[0]!.peer_id, b.beacon.net!.host.peerId);
  assert.is(list.peers[0]!.direction, 'inbound', 'B dialled A');
  assert.is(list.peers[0]!.handshake, HYBRID_NOISE_PROTOCOL);
  assert.ok(!Number.isNaN(Date.parse(list.peers[0]!.connected_since)));
  assert.is((await bget(b, '/beacon/v1/node/health')).body.peers, 1);
  assert.is(await sampleOf(a, 'service_beacon_peer_count'), 1);
  // The status exchange on connect ran both ways (each side served one).
  await until(g, 'a status exchange', async () => (await sampleOf(a, 'service_beacon_sync_requests_served_total', 'protocol="status",result="ok"')) >= 1);
});

p2p('a block proposed to one beacon is imported by the other through gossip, by its execution node, and announced on its /ws', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  const ws = new WebSocket(b.beacon.url.replace(/^http/, 'ws') + '/ws');
  const events: BeaconEvent[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data)) as BeaconEvent));
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let root: string;
  try {
    root = await proposeNext(a);
    await until(g, "the new_block event on B's /ws", () => events.some((e) => e.type === 'new_block' && e.data.block_hash === root));
  } finally {
    ws.close();
  }
  await until(g, 'B to import the block', async () => (await beaconHead(b)).root === root);
  await until(g, 'the gossip verdict', async () => (await sampleOf(b, 'service_beacon_gossip_messages_total', `topic="${Topics.blocks}",verdict="accept"`)) === 1);
  assert.is(await execHeight(b), 1, "B's execution node applied it");
  assert.is(await sampleOf(b, 'service_beacon_sync_blocks_imported_total'), 0, 'it came by gossip, not sync');
  // A block B holds already is not imported twice when A's copy comes back round.
  assert.is(await sampleOf(b, 'service_beacon_blocks_proposed_total'), 1);
});

p2p('an attestation sent to one beacon reaches the other', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  const head = await beaconHead(a);
  const slot = a.beacon.chain.currentSlot();
  const d = okData(await bget(a, `/api/v1/validator/attestation_data?slot=${slot}`));
  const data: AttestationData = {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
  const att = signAttestation(1, data, a.validators[1]!.mldsa, g.chain_id);
  okData(await bpost(a, '/api/v1/attestation', attestationToJson(att)));
  await until(g, "validator 1's vote on B", async () => okData(await bget(b, '/api/v1/validators/1')).latest_vote?.root === head.root);
  // The verdict is counted once the vote is durable, a moment after fork choice shows it.
  await until(g, 'the gossip verdict', async () => (await sampleOf(b, 'service_beacon_gossip_messages_total', `topic="${Topics.attestations}",verdict="accept"`)) === 1);
  assert.is(await sampleOf(b, 'service_beacon_attestations_received_total'), 1);
});

p2p('a beacon started late catches up by range sync and then follows gossip', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  let root = '';
  for (let i = 0; i < 5; i++) root = await proposeNext(a);
  await until(g, 'B to follow the five blocks', async () => (await beaconHead(b)).root === root);
  ctx.late = await startHarness({ genesis: g, p2p: { ...LOOPBACK, bootnodes: [addrOf(a)] } });
  const late = ctx.late;
  await until(g, 'the late beacon to reach the head', async () => (await beaconHead(late)).root === root);
  // Gossipsub may offer the latest block from its recent-message cache (IHAVE/IWANT) once the
  // parent is in; everything else must have come by range sync.
  // Fork choice shows the head before the import returns (execution is told first): wait for the counts.
  const imported = async () => (await sampleOf(late, 'service_beacon_sync_blocks_imported_total')) + (await sampleOf(late, 'service_beacon_gossip_messages_total', `topic="${Topics.blocks}",verdict="accept"`));
  await until(g, 'six imports counted', async () => (await imported()) >= 6);
  assert.is(await imported(), 6, 'each of the six blocks imported once');
  const synced = await sampleOf(late, 'service_beacon_sync_blocks_imported_total');
  assert.ok(synced >= 5, `${synced} blocks came by range sync`);
  assert.is(await execHeight(late), 6);
  // The same blocks, slot by slot, as the producer's.
  for (let slot = 1; slot <= (await beaconHead(a)).slot; slot++) {
    const mine = await bget(a, `/api/v1/beacon/blocks/${slot}`);
    const theirs = await bget(late, `/api/v1/beacon/blocks/${slot}`);
    assert.is(theirs.status, mine.status, `slot ${slot}`);
    if (mine.status === 200) assert.is(theirs.body.data.root, mine.body.data.root, `slot ${slot}`);
  }
  const syncing = (await bget(late, '/beacon/v1/node/syncing')).body.data;
  assert.is(syncing.head_slot, String((await beaconHead(a)).slot));
  // Caught up, it follows by gossip.
  const next = await proposeNext(a);
  await until(g, 'the late beacon to follow the next block', async () => (await beaconHead(late)).root === next);
});

p2p('a beacon on another branch, restarted with a bootnode, syncs the peer branch from the common ancestor and fork choice moves it over', async (ctx) => {
  const { g, a } = ctxOf(ctx);
  // Alone, it builds its own branch: a block at slot 2 on genesis (A's chain has slot 1 there).
  const lone = await startHarness({ genesis: g, p2p: { ...LOOPBACK, bootnodes: [] } });
  ctx.lone = lone;
  const { block } = await buildProposal(lone, { slot: 2 });
  okData(await proposeBlock(lone, block));
  const own = toHex(blockHash(block.header));
  assert.is((await beaconHead(lone)).root, own);
  const aHead = await beaconHead(a);
  assert.ok(aHead.slot > 2, 'A is ahead on its own branch');

  // Down, then back with A as bootnode: its start-up status exchange finds A's head unknown.
  await lone.beacon.stop();
  lone.beacon = await BeaconNode.start({ genesis: g, dataDir: join(lone.dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: lone.exec.restUrl, tokenFile: join(lone.dir, 'validator-token'), log: silentLogger, p2p: { ...LOOPBACK, bootnodes: [addrOf(a)] } });
  await until(g, "A's head to be imported", () => lone.beacon.chain.record(aHead.root) !== undefined);
  assert.ok(lone.beacon.chain.record(own), 'its own block is still held: fork choice decides between the branches');
  // A vote for A's head settles fork choice; it reaches the restarted beacon by gossip.
  const slot = a.beacon.chain.currentSlot();
  const d = okData(await bget(a, `/api/v1/validator/attestation_data?slot=${slot}`));
  const data: AttestationData = {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
  okData(await bpost(a, '/api/v1/attestation', attestationToJson(signAttestation(0, data, a.validators[0]!.mldsa, g.chain_id))));
  await until(g, 'the restarted beacon to take A\'s head', async () => (await beaconHead(lone)).root === d.beacon_block_root);
  await until(g, 'its execution node to follow', async () => (await execHeight(lone)) === (await execHeight(a)));
});

p2p('a peer whose status names another chain is answered, then disconnected and counted', async (ctx) => {
  const { g, a } = ctxOf(ctx);
  const bare = await bareHost(ctx, a);
  await until(g, 'the bare host to connect', () => a.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  const head = await beaconHead(a);
  const limits = { maxRequestBytes: 1024, maxResponseChunks: 4, maxChunkBytes: 1024, timeoutMs: 10_000 };
  const ours = { chainId: chainIdBytes('other-chain'), genesisHash: a.beacon.chain.genesisRoot, headRoot: head.root, headSlot: head.slot, finalizedRoot: head.root, finalizedEpoch: 0 };
  const chunks = await bare.request(a.beacon.net!.host.peerId, SyncProtocols.status, encodeStatus(ours), limits);
  assert.is(chunks.length, 1);
  const theirs = decodeStatus(chunks[0]!);
  assert.is(theirs.headRoot, head.root, "A's answer names its head");
  assert.is(theirs.genesisHash, a.beacon.chain.genesisRoot);
  await until(g, 'A to drop the other-chain peer', () => !a.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  assert.is(await sampleOf(a, 'service_beacon_peers_refused_total', 'reason="other_chain"'), 1);
});

p2p('malformed gossip and request frames are refused, counted by reason and penalised; the node keeps following', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  const bare = await bareHost(ctx, b);
  const bId = b.beacon.net!.host.peerId;
  await until(g, 'the bare host to connect to B', () => b.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  const limits = { maxRequestBytes: 1024, maxResponseChunks: 128, maxChunkBytes: 1 << 20, timeoutMs: 10_000 };

  // A well-formed range request: B's canonical chain, ascending, ending at its head.
  const served = await bare.request(bId, SyncProtocols.blocksByRange, encodeRangeRequest({ startSlot: 0, count: 1000 }), limits);
  const blocks = served.map(decodeBlock);
  assert.ok(blocks.length >= 7, `${blocks.length} blocks served`);
  assert.ok(blocks.length <= 64, 'the count is capped');
  blocks.forEach((bl, i) => i > 0 && assert.ok(bl.header.index === blocks[i - 1]!.header.index + 1, 'ascending and contiguous'));
  assert.is(toHex(blockHash(blocks.at(-1)!.header)), (await beaconHead(b)).root);

  // Request frames that are not the protocol's: refused, counted.
  for (const [protocol, frame] of [
    [SyncProtocols.blocksByRange, new Uint8Array(3)],
    [SyncProtocols.status, new Uint8Array(5)],
  ] as const) {
    await bare.request(bId, protocol, frame, limits).then(
      () => assert.unreachable(`${protocol} answered a malformed request`),
      () => undefined,
    );
  }
  assert.is(await sampleOf(b, 'service_beacon_sync_requests_served_total', 'protocol="blocks_by_range",result="bad_request"'), 1);
  assert.is(await sampleOf(b, 'service_beacon_sync_requests_served_total', 'protocol="status",result="bad_request"'), 1);

  // Gossip garbage on both topics: refused as MALFORMED.
  const garbage = new Uint8Array(600).fill(0xab);
  const att = encodeAttestation(signAttestation(0, { slot: 1, beaconBlockRoot: new Uint8Array(32), source: { epoch: 0, root: new Uint8Array(32) }, target: { epoch: 0, root: new Uint8Array(32) } }, a.validators[0]!.mldsa, g.chain_id));
  const truncated = att.subarray(0, att.length - 10);
  const rejected = (topic: string) => sampleOf(b, 'service_beacon_gossip_dropped_total', `topic="${topic}",verdict="reject",reason="MALFORMED"`);
  await until(g, 'B to refuse malformed gossip on both topics', async () => {
    // Published again until B has seen it: the bare host learns B's subscriptions shortly after connecting.
    if ((await rejected(Topics.blocks)) === 0) await bare.publish(Topics.blocks, garbage).catch(() => 0);
    if ((await rejected(Topics.attestations)) === 0) await bare.publish(Topics.attestations, truncated).catch(() => 0);
    return (await rejected(Topics.blocks)) >= 1 && (await rejected(Topics.attestations)) >= 1;
  });
  // A replayed block B already holds is not imported again.
  const proposedBefore = await sampleOf(b, 'service_beacon_blocks_proposed_total');
  await bare.publish(Topics.blocks, encodeBlock(blocks[0]!)).catch(() => 0);
  assert.ok(total(await beaconMetrics(b), 'service_p2p_peer_penalties_total') >= 3, 'the bare host was penalised for each bad frame and message');

  // B is still up and following A.
  const next = await proposeNext(a);
  await until(g, 'B to follow the next block', async () => (await beaconHead(b)).root === next);
  await until(g, 'the import to be counted', async () => (await sampleOf(b, 'service_beacon_blocks_proposed_total')) >= proposedBefore + 1);
  assert.is(await sampleOf(b, 'service_beacon_blocks_proposed_total'), proposedBefore + 1, 'only the new block was imported');
});

p2p('a peer that serves an invalid block in range sync is penalised and disconnected; the head does not move', async (ctx) => {
  const { g, b } = ctxOf(ctx);
  const bare = await bareHost(ctx, b);
  const head = await beaconHead(b);
  // Claims a head B lacks one slot ahead, and serves that slot's block with a corrupted signature.
  const { block } = await buildProposal(b, { slot: head.slot + 1 });
  const forged = { ...block, signature: block.signature.map((x, i) => (i === 100 ? x ^ 1 : x)) };
  const limits = { maxRequestBytes: 1024, maxResponseChunks: 64, maxChunkBytes: 1 << 20, timeoutMs: 10_000 };
  bare.handle(
    SyncProtocols.status,
    async function* () {
      yield encodeStatus({ chainId: chainIdBytes(g.chain_id), genesisHash: b.beacon.chain.genesisRoot, headRoot: toHex(blockHash(block.header)), headSlot: head.slot + 1, finalizedRoot: b.beacon.chain.genesisRoot, finalizedEpoch: 0 });
    },
    limits,
  );
  bare.handle(
    SyncProtocols.blocksByRange,
    async function* () {
      yield encodeBlock(forged);
    },
    limits,
  );
  const failed = () => sampleOf(b, 'service_beacon_sync_failures_total', 'reason="INVALID_BLOCK_SIGNATURE"');
  await until(g, 'B to refuse the forged block', async () => (await failed()) === 1);
  await until(g, 'B to drop the peer', () => !b.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  assert.is((await beaconHead(b)).root, head.root);
  assert.ok(total(await beaconMetrics(b), 'service_p2p_peer_penalties_total') >= 1);
});

p2p('slashing evidence: submitted to A it reaches B by gossip; malformed or forged evidence from a peer is rejected and penalised', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  const bare = await bareHost(ctx, b);
  await until(g, 'the bare host to connect to B', () => b.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  const root = (i: number) => new Uint8Array(32).fill(i);
  const data = (r: number): AttestationData => ({ slot: 1, beaconBlockRoot: root(r), source: { epoch: 0, root: root(1) }, target: { epoch: 0, root: root(2) } });
  const [k0, k1] = [a.validators[0]!.mldsa, a.validators[1]!.mldsa];
  const real = attesterSlashing(signAttestation(1, data(3), k1, g.chain_id), signAttestation(1, data(4), k1, g.chain_id));
  assert.is(okData(await bpost(a, '/api/v1/slashing', evidenceToJson(real), null), 202).status, 'added');
  const hash = toHex(evidenceHash(real));
  await until(g, 'B to hold the evidence', async () => (await bget(b, `/api/v1/slashing/${hash}`)).status === 200);
  assert.ok((await sampleOf(b, 'service_beacon_gossip_messages_total', `topic="${Topics.slashings}",verdict="accept"`)) >= 1, 'accepted from gossip');

  const forged = encodeEvidence(attesterSlashing(signAttestation(1, data(5), k0, g.chain_id), signAttestation(1, data(6), k1, g.chain_id)));
  const truncated = forged.subarray(0, 100);
  const dropped = (reason: string) => sampleOf(b, 'service_beacon_gossip_dropped_total', `topic="${Topics.slashings}",verdict="reject",reason="${reason}"`);
  await until(g, 'B to reject malformed and forged evidence', async () => {
    if ((await dropped('MALFORMED')) === 0) await bare.publish(Topics.slashings, truncated).catch(() => 0);
    if ((await dropped('INVALID_EVIDENCE_SIGNATURE')) === 0) await bare.publish(Topics.slashings, forged).catch(() => 0);
    return (await dropped('MALFORMED')) >= 1 && (await dropped('INVALID_EVIDENCE_SIGNATURE')) >= 1;
  });
  // (Earlier tests of this suite built two branches, which is a real double proposal: that evidence is held too.)
  assert.is((await bget(b, `/api/v1/slashing/${toHex(evidenceHash(decodeEvidence(forged)))}`)).status, 404, 'the forged evidence is not held');
});

p2p('BID signatures: posted to A they reach B by gossip (held until B registers the BID); malformed and forged ones are rejected', async (ctx) => {
  const { g, a, b } = ctxOf(ctx);
  const bare = await bareHost(ctx, b);
  await until(g, 'the bare host to connect to B', () => b.beacon.net!.peers().some((p) => p.peer_id === bare.peerId));
  const f: BidFields = { source: parseHex(a.beacon.chain.genesisRoot, 'genesis', 32), destination: new Uint8Array(32).fill(0xbb), lockTx: new Uint8Array(32).fill(0x61), sender: new Uint8Array(20).fill(0xa1), recipient: new Uint8Array(20).fill(0xb0), amount: 10n ** 18n, timeout: Math.floor(Date.now() / 1000) + 3600 };
  const bid = toHex(bidId(f));
  const head = await beaconHead(a);
  const lock = (h: Harness) => h.beacon.chain.bridge.importBlock([bridgeReceipt('bridge_lock', 'Locked', f, { hash: head.root, index: head.index })], { hash: head.root, index: head.index });
  const sign = (v: number) => signBid(bidId(f), v, a.validators[v]!.mldsa, g.chain_id);
  const signersOn = async (h: Harness) => {
    const r = await bget(h, `/api/v1/bridge/bids/${bid}`);
    return r.status === 200 ? (okData(r).signatures.signers as number) : -1;
  };
  await lock(a);
  // B has not registered the BID: the gossiped signature is verified and held.
  okData(await bpost(a, `/api/v1/bridge/bids/${bid}/signatures`, { validator_index: 0, signature: toHex(sign(0).signature) }, null), 202);
  await until(g, 'B to hold the gossiped signature', async () => (await sampleOf(b, 'service_beacon_gossip_dropped_total', `topic="${Topics.bidSignatures}",verdict="ignore",reason="UNKNOWN_BID"`)) >= 1);
  await lock(b);
  assert.is(await signersOn(b), 1, 'the held signature joined the BID when B registered it');
  // The other way round: posted to B, A gets it and reaches 2/3.
  okData(await bpost(b, `/api/v1/bridge/bids/${bid}/signatures`, { validator_index: 1, signature: toHex(sign(1).signature) }, null), 202);
  assert.is(okData(await bget(b, `/api/v1/bridge/bids/${bid}`)).status, 'ATTESTED');
  await until(g, 'A to attest the BID from the gossiped signature', async () => okData(await bget(a, `/api/v1/bridge/bids/${bid}`)).status === 'ATTESTED');
  assert.ok((await sampleOf(a, 'service_beacon_gossip_messages_total', `topic="${Topics.bidSignatures}",verdict="accept"`)) >= 1);

  const forged = encodeBidSignatureGossip(bidId(f), { validatorIndex: 1, signature: sign(0).signature });
  const truncated = forged.subarray(0, 100);
  const dropped = (reason: string) => sampleOf(b, 'service_beacon_gossip_dropped_total', `topic="${Topics.bidSignatures}",verdict="reject",reason="${reason}"`);
  await until(g, 'B to reject malformed and forged BID signatures', async () => {
    if ((await dropped('MALFORMED')) === 0) await bare.publish(Topics.bidSignatures, truncated).catch(() => 0);
    if ((await dropped('BRIDGE_BAD_SIGNATURE')) === 0) await bare.publish(Topics.bidSignatures, forged).catch(() => 0);
    return (await dropped('MALFORMED')) >= 1 && (await dropped('BRIDGE_BAD_SIGNATURE')) >= 1;
  });
  assert.equal(okData(await bget(b, `/api/v1/bridge/bids/${bid}/signatures`)).signatures.map((x: { signature: string }) => x.signature), [toHex(sign(0).signature), toHex(sign(1).signature)], 'the forged one is not kept');
});

p2p('a status answer that ends with no chunk is ignored, not penalised; two chunks are penalised', async (ctx) => {
  const { g, b } = ctxOf(ctx);
  const bare = await bareHost(ctx, b);
  const limits = { maxRequestBytes: 1024, maxResponseChunks: 64, maxChunkBytes: 1 << 20, timeoutMs: 10_000 };
  const count = async (name: string, match: Record<string, string>) => metricSum(parseMetrics(await beaconMetrics(b)), name, match);
  const badStatus = () => count('service_p2p_peer_penalties_total', { reason: 'bad_status' });
  const answered = () => count('service_p2p_requests_total', { protocol: SyncProtocols.status, direction: 'outbound', result: 'ok' });
  const before = await badStatus();
  const answeredBefore = await answered();
  const status = encodeStatus({ chainId: chainIdBytes(g.chain_id), genesisHash: b.beacon.chain.genesisRoot, headRoot: b.beacon.chain.genesisRoot, headSlot: 0, finalizedRoot: b.beacon.chain.genesisRoot, finalizedEpoch: 0 });
  let chunks = 0;
  let asked = 0;
  bare.handle(SyncProtocols.status, async function* () {
    asked++;
    for (let i = 0; i < chunks; i++) yield status;
  }, limits);
  // No chunk: what a peer shutting down or cut off mid-request sends too.
  await until(g, 'B to ask the bare host its status', async () => asked >= 1 && (await answered()) > answeredBefore);
  assert.is(await badStatus(), before, 'no penalty for an empty answer');
  assert.ok(b.beacon.net!.peers().some((p) => p.peer_id === bare.peerId), 'the peer stays connected');
  // The exchange's one-chunk limit refuses the second chunk before the status is read.
  const overrun = () => count('service_p2p_peer_penalties_total', { reason: 'resp_too_many_chunks' });
  const overrunBefore = await overrun();
  chunks = 2;
  await until(g, 'B to penalise two status chunks', async () => (await overrun()) > overrunBefore);
});

p2p.run();
