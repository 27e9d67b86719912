/**
 * Blocks as SSZ on the beacon: the proposal route takes `encodeBlock` bytes
 * (application/octet-stream) as well as JSON with the same answer, refuses malformed bytes with a
 * 400 envelope, stores the bytes it accepted (storage layout 2) and serves them unchanged
 * (blocks_by_range, the block route, light-client headers), also after a restart; a data
 * directory of the older layout (blocks as JSON) is refused with DB_SCHEMA_MISMATCH.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassicLevel } from 'classic-level';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { type Genesis, epochOfSlot } from '../../../src/core/genesis/genesis.js';
import { attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { type Block, blockHash, blockToJson, decodeBlock, encodeBlock, headerToJson } from '../../../src/core/types/block.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { SSZ_MEDIA_TYPE } from '../../../src/api/media.js';
import { BEACON_SCHEMA_VERSION } from '../../../src/node/beacon/chain.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { encodeRangeRequest, serveBlocksByRange } from '../../../src/node/beacon/sync/blocks-by-range.js';
import { silentLogger } from '../../../src/util/log.js';
import { expectEnvelope, http, type HttpResult } from '../execution/fixture.js';
import { beaconHead, bget, bpost, buildProposal, currentSlot, type Harness, harnessGenesis, harnessSuite, okData, proposeBlock, startHarness, stopHarness, transferTx } from './fixture.js';

const PROPOSE = '/api/v1/validator/blocks/propose';
const PROPOSAL_ALIAS = '/api/v1/beacon/block/proposal';

/** POST SSZ bytes to a proposal route, with the bearer token unless `token` is null. */
function proposeSsz(h: Harness, bytes: Uint8Array, path = PROPOSE, token: string | null = h.token): Promise<HttpResult> {
  return http(h.beacon.url, path, { body: bytes, headers: { 'content-type': SSZ_MEDIA_TYPE, ...(token === null ? {} : { authorization: `Bearer ${token}` }) } });
}

/** Every chunk blocks_by_range serves for [start, start + count). */
async function range(node: BeaconNode, start: number, count: number): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of serveBlocksByRange(node.chain, encodeRangeRequest({ startSlot: start, count }))) out.push(new Uint8Array(chunk));
  return out;
}

/** A one-wei transfer from `from`, signed for the harness chain. */
/** The answer fields two beacons must agree on for the same block. */
const answer = (d: Record<string, unknown>) => ({ block_hash: d.block_hash, slot: d.slot, index: d.index, state_root: d.state_root, transactions: d.transactions });

// ---------------------------------------------------------------------------------------------

const wire = suite<{ a?: Harness; b?: Harness; genesis?: Genesis; startError?: unknown }>('beacon block wire: SSZ and JSON proposals');

wire.before(async (ctx) => {
  try {
    // Two pairs on one genesis: the same block goes to one as SSZ and to the other as JSON.
    ctx.genesis = harnessGenesis({ validators: 2, slotsAgo: 12 });
    ctx.a = await startHarness({ genesis: ctx.genesis });
    ctx.b = await startHarness({ genesis: ctx.genesis });
  } catch (err) {
    ctx.startError = err;
  }
});

wire.after(async (ctx) => {
  if (ctx.a) await stopHarness(ctx.a);
  if (ctx.b) await stopHarness(ctx.b);
});

wire('the same block proposed as SSZ and as JSON gets the same answer, storage and served bytes; a repeat in the other encoding is already_known', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const a = ctx.a!;
  const b = ctx.b!;
  const slot = 1;
  assert.ok(slot <= currentSlot(a));
  const txs = [transferTx(a, a.accounts[0]!, 0n), transferTx(a, a.accounts[0]!, 1n)];
  const { block } = await buildProposal(a, { slot, transactions: txs });
  const ssz = encodeBlock(block);
  const viaSsz = okData(await proposeSsz(a, ssz));
  const viaJson = okData(await proposeBlock(b, block));
  assert.equal(answer(viaSsz), answer(viaJson), 'same answer from either encoding');
  assert.is(viaSsz.already_known, false);
  assert.is(viaSsz.transactions, 2);
  assert.is(viaSsz.block_hash, toHex(blockHash(block.header)));
  // Both stored the same bytes, which are the bytes sent as SSZ, and serve them as sent.
  const servedA = await range(a.beacon, slot, 1);
  const servedB = await range(b.beacon, slot, 1);
  assert.is(servedA.length, 1);
  assert.equal(servedA[0], ssz);
  assert.equal(servedB[0], ssz);
  // The block route answers the wire JSON of the stored block on both.
  const routeA = okData(await bget(a, `/api/v1/beacon/blocks/${slot}`));
  const routeB = okData(await bget(b, `/api/v1/beacon/blocks/${slot}`));
  assert.equal(routeA.block, blockToJson(block));
  assert.equal(routeB.block, routeA.block);
  // Each execution node imported it with the same post-state.
  const execA = okData(await http(a.exec.restUrl, `/api/v1/blocks/${viaSsz.block_hash}`));
  const execB = okData(await http(b.exec.restUrl, `/api/v1/blocks/${viaSsz.block_hash}`));
  assert.is(execA.state_root, execB.state_root);
  assert.is(execA.state_root, viaSsz.state_root);

  // The other encoding of a known block is the known block.
  const againA = okData(await proposeBlock(a, block));
  const againB = okData(await proposeSsz(b, ssz, PROPOSAL_ALIAS));
  assert.equal([answer(againA), againA.already_known], [answer(viaSsz), true]);
  assert.equal([answer(againB), againB.already_known], [answer(viaSsz), true]);

  // A copy of the known header with another signature is refused, not reported as known.
  const forged = encodeBlock({ ...block, signature: new Uint8Array(block.signature.length).fill(7) });
  expectEnvelope(await proposeSsz(a, forged), 400, 'INVALID_BLOCK_SIGNATURE');
});

wire('malformed SSZ proposals are 400 MALFORMED_INPUT envelopes and change nothing; without the token they are 401', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.a!;
  const before = await beaconHead(h);
  const slot = before.slot + 1;
  assert.ok(slot <= currentSlot(h));
  const { block } = await buildProposal(h, { slot, transactions: [transferTx(h, h.accounts[0]!, 2n)] });
  const good = encodeBlock(block);
  // An envelope of an unknown transaction type inside a well-formed block list.
  const badEnvelope = encodeBlock(block, [Uint8Array.of(0x7f, 1, 2, 3)]);
  const truncatedTx = encodeBlock(block, [encodeBlock(block).subarray(0, 0)]);
  const cases: Array<[string, Uint8Array]> = [
    ['empty body', new Uint8Array(0)],
    ['a few bytes', Uint8Array.of(1, 2, 3)],
    ['garbage the size of a block', new Uint8Array(good.length).fill(0xff)],
    ['truncated', good.subarray(0, good.length - 1)],
    ['a trailing byte', Uint8Array.from([...good, 0])],
    ['cut inside the header', good.subarray(0, 100)],
    ['an unknown transaction type', badEnvelope],
    ['an empty transaction envelope', truncatedTx],
  ];
  for (const [what, bytes] of cases) {
    for (const path of [PROPOSE, PROPOSAL_ALIAS]) {
      const r = await proposeSsz(h, bytes, path);
      assert.is(r.status, 400, `${what} on ${path}: ${r.text}`);
      expectEnvelope(r, 400, 'MALFORMED_INPUT', /^malformed (block|tx)/);
    }
  }
  expectEnvelope(await proposeSsz(h, good, PROPOSE, null), 401, 'UNAUTHORIZED');
  expectEnvelope(await proposeSsz(h, good, PROPOSE, 'wrong'), 401, 'UNAUTHORIZED');
  assert.equal(await beaconHead(h), before, 'the head did not move');
  assert.is((await http(h.exec.restUrl, `/api/v1/blocks/${toHex(blockHash(block.header))}`)).status, 404, 'execution never received the block');
  // JSON-only routes given bytes answer a 400 envelope, not a 500.
  const att = await http(h.beacon.url, '/api/v1/attestation', { body: good.subarray(0, 64), headers: { 'content-type': SSZ_MEDIA_TYPE, authorization: `Bearer ${h.token}` } });
  assert.ok(att.status >= 400 && att.status < 500, `attestation route with bytes: ${att.status} ${att.text}`);
  assert.is(att.body.success, false);
  // Well-formed bytes whose transactions are not the ones the header's merkle_root commits to
  // (the root is checked from the received envelopes).
  const swapped = encodeBlock(block, [encodeTx(transferTx(h, h.accounts[0]!, 9n))]);
  expectEnvelope(await proposeSsz(h, swapped), 400, 'MERKLE_ROOT_MISMATCH');
  assert.equal(await beaconHead(h), before, 'the head did not move');
  // The honest bytes are still accepted.
  assert.is(okData(await proposeSsz(h, good)).block_hash, toHex(blockHash(block.header)));
});

// ---------------------------------------------------------------------------------------------

// One validator: it is drawn at every slot and its vote alone is all the stake.
const restart = harnessSuite('beacon block storage across a restart', { validators: 1, slotsAgo: 24 });

/** Restarts the harness's beacon on its data directory (the execution node keeps running). */
async function restartBeacon(h: Harness): Promise<void> {
  await h.beacon.stop();
  h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir: join(h.dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
}

restart('after a restart the head, blocks_by_range bytes, the block route and light-client answers are the same', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.h!;
  const spe = h.genesis.config.slots_per_epoch;
  const sent: Block[] = [];
  const lastSlot = 5 * spe;
  assert.ok(lastSlot <= currentSlot(h), `slot ${lastSlot} has started`);
  for (let slot = 1; slot <= lastSlot; slot++) {
    const { block } = await buildProposal(h, { slot });
    // Alternate the encodings: storage must not depend on how a block arrived.
    okData(slot % 2 === 0 ? await proposeSsz(h, encodeBlock(block)) : await proposeBlock(h, block));
    sent.push(block);
    // One vote per epoch, at the epoch's first slot, so each epoch is justified and the one before finalized.
    if (slot % spe === 0) {
      const data = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${slot}`));
      assert.is(data.target.epoch, epochOfSlot(h.genesis, slot));
      const att = signAttestation(0, { slot, beaconBlockRoot: parseHex(data.beacon_block_root, 'root', 32), source: { epoch: data.source.epoch, root: parseHex(data.source.root, 'root', 32) }, target: { epoch: data.target.epoch, root: parseHex(data.target.root, 'root', 32) } }, h.validators[0]!.mldsa, h.genesis.chain_id);
      assert.is(okData(await bpost(h, '/api/v1/attestation', attestationToJson(att))).status, 'applied');
    }
  }
  const fin = okData(await bget(h, '/api/v1/beacon/finality_checkpoints')).finalized as { epoch: number; root: string };
  assert.ok(fin.epoch >= 1, `an epoch after genesis is finalized (${JSON.stringify(fin)})`);
  const read = async () => {
    const finRec = okData(await bget(h, `/api/v1/beacon/blocks/${fin.root}`));
    return {
      head: await beaconHead(h),
      served: await range(h.beacon, 1, lastSlot),
      blocks: await Promise.all([1, 2, lastSlot].map(async (s) => okData(await bget(h, `/api/v1/beacon/blocks/${s}`)).block)),
      update: okData(await bget(h, '/api/v1/light/finality_update')),
      bootstrap: okData(await bget(h, `/api/v1/light/bootstrap?root=${fin.root}`)),
      headers: okData(await bget(h, `/api/v1/light/headers?from=${fin.root}&to=1`)),
      finIndex: finRec.index as number,
    };
  };
  const before = await read();
  assert.equal(before.served, sent.map((b) => encodeBlock(b)), 'blocks_by_range serves the bytes of every block, in slot order');
  assert.equal(before.blocks, [sent[0]!, sent[1]!, sent[lastSlot - 1]!].map(blockToJson));
  assert.equal(before.bootstrap.header, headerToJson(sent[before.finIndex - 1]!.header), 'bootstrap header of the finalized block');
  assert.is(before.headers.headers.length, before.finIndex);
  assert.is(before.update.finalized.epoch, fin.epoch);

  await restartBeacon(h);
  const after = await read();
  assert.equal(after, before, 'the same answers after the restart');
  // Served bytes decode to the blocks that were sent.
  assert.equal(decodeBlock(after.served[0]!).signature, sent[0]!.signature);
  // The restarted beacon keeps building on the stored chain.
  const next = lastSlot + 1;
  assert.ok(next <= currentSlot(h));
  const { block } = await buildProposal(h, { slot: next });
  assert.is(okData(await proposeSsz(h, encodeBlock(block))).index, lastSlot + 1);
});

// ---------------------------------------------------------------------------------------------

const layout = harnessSuite('beacon storage layout', { validators: 1, slotsAgo: 2 });

layout('a data directory of another layout is refused with DB_SCHEMA_MISMATCH and released; a new one is stamped with this layout', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.h!;
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-layout-'));
  try {
    const start = (dataDir: string) => BeaconNode.start({ genesis: h.genesis, dataDir, host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, log: silentLogger });
    const open = async (dataDir: string, f: (db: ClassicLevel<string, string>) => Promise<void>) => {
      await mkdir(dataDir, { recursive: true });
      const db = new ClassicLevel<string, string>(join(dataDir, 'beacon'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      try {
        await f(db);
      } finally {
        await db.close();
      }
    };
    // Layout 1 as the previous beacon wrote it: no stamp, blocks as wire JSON.
    const old = join(dir, 'old');
    const { block } = await buildProposal(h, { slot: 1 });
    const root = toHex(blockHash(block.header));
    await open(old, async (db) => {
      await db.put(`B:${root}`, JSON.stringify(blockToJson(block)));
      await db.put('m:forkchoice', JSON.stringify({}));
    });
    for (const [dataDir, stamped] of [[old, 1], [join(dir, 'future'), BEACON_SCHEMA_VERSION + 1]] as const) {
      if (stamped !== 1) await open(dataDir, (db) => db.put('m:schema', JSON.stringify(stamped)));
      let err: unknown;
      try {
        const node = await start(dataDir);
        await node.stop();
      } catch (e) {
        err = e;
      }
      assert.ok(err, `layout ${stamped} refused`);
      assert.is((err as { code?: string }).code, 'DB_SCHEMA_MISMATCH');
      assert.match((err as Error).message, `uses storage layout ${stamped}, this beacon reads layout ${BEACON_SCHEMA_VERSION}`);
      assert.match((err as Error).message, /start with a fresh data directory/);
      // Released: the directory opens again, untouched.
      await open(dataDir, async (db) => assert.is(await db.get('m:schema'), stamped === 1 ? undefined : JSON.stringify(stamped)));
    }
    // A fresh directory is stamped at first start and opens again.
    const fresh = join(dir, 'fresh');
    await (await start(fresh)).stop();
    await open(fresh, async (db) => assert.is(await db.get('m:schema'), String(BEACON_SCHEMA_VERSION)));
    await (await start(fresh)).stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

wire.run();
restart.run();
layout.run();
