/**
 * The beacon's light-client side: LightStore turns the observed votes of a finalizing link into a
 * finality update a light client verifies (and refuses to store one without 2/3, keeps the newest
 * LIGHT_UPDATES_KEPT); the `/api/v1/light/...` routes answer bootstrap and proofs a client
 * verifies, and every bad input is a 4xx envelope.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryLevel } from 'memory-level';
import { toHex } from '../../../src/core/codec/bytes.js';
import { LIGHT_UPDATES_KEPT, MAX_LIGHT_HEADERS } from '../../../src/core/constants.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { finalityUpdateFromJson, trustedFromGenesis, type TrustedValidator } from '../../../src/core/light/types.js';
import { verifyAccountAgainstHeader, verifyFinalityUpdate } from '../../../src/core/light/verify.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import { signAttestation } from '../../../src/core/types/attestation.js';
import { type BlockHeader, blockHash, headerFromJson } from '../../../src/core/types/block.js';
import { LightStore } from '../../../src/node/beacon/light.js';
import { ChainStore, type Db } from '../../../src/node/shared/store.js';
import { silentLogger } from '../../../src/util/log.js';
import { filled } from '../../helpers/assert.js';
import { expectEnvelope } from '../execution/fixture.js';
import { bget, buildProposal, currentSlot, harnessSuite, okData, proposeBlock } from './fixture.js';

const CHAIN = 'svc-light';
const keys = [0, 1, 2, 3].map((i) => keygenFromSeed(filled(32, 0x40 + i)));
const STAKE = 32n * 10n ** 18n;
const stakes = { size: 4, activeStake: (i: number) => (i < 4 ? STAKE : undefined), totalActive: 4n * STAKE };

function header(index: number): BlockHeader {
  return { index, timestampMs: 1_000 * index, parentHash: filled(32, index), merkleRoot: filled(32, 2), validatorId: filled(20, 1), vrfProof: filled(3309, 2), vrfSeed: filled(32, 3), randaoReveal: filled(32, 4), stateRoot: filled(32, 5) };
}

const vote = (i: number, sourceEpoch: number, root: Uint8Array, target = filled(32, 0x77)) =>
  signAttestation(i, { slot: (sourceEpoch + 1) * 4, beaconBlockRoot: target, source: { epoch: sourceEpoch, root }, target: { epoch: sourceEpoch + 1, root: target } }, keys[i]!, CHAIN);

async function openStore(): Promise<{ store: ChainStore; light: LightStore }> {
  const store = new ChainStore(new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db);
  return { store, light: await LightStore.open(store, silentLogger) };
}

test('LightStore: the finalizing link\'s votes make an update a light client verifies; it survives reopening', async () => {
  const { store, light } = await openStore();
  const h = header(8);
  const root = blockHash(h);
  // Three of four sign 2 → 3; the vote that finalizes arrives when fork choice already says epoch 2.
  light.observe(vote(0, 2, root), 1);
  light.observe(vote(1, 2, root), 1);
  light.observe(vote(2, 2, root), 2);
  // Ignored: another link shape (2 → 4 is not k = 1), and a source older than finality.
  light.observe(signAttestation(3, { slot: 16, beaconBlockRoot: filled(32, 9), source: { epoch: 2, root }, target: { epoch: 4, root: filled(32, 9) } }, keys[3]!, CHAIN), 1);
  light.observe(vote(3, 1, filled(32, 1)), 2);
  const u = await light.finalized({ epoch: 2, root: toHex(root) }, h, stakes);
  assert.ok(u);
  assert.is(u!.signers, 3);
  assert.is(u!.participation, '0x07');
  const validators = new Map<number, TrustedValidator>(keys.map((k, i) => [i, { index: i, publicKey: k.publicKey, stake: STAKE, active: true }]));
  const v = verifyFinalityUpdate(finalityUpdateFromJson(u), { chainId: CHAIN, slotsPerEpoch: 4, root: filled(32, 0), validators });
  assert.is(v.epoch, 2);
  assert.is(u!.size_bytes, 3505 + 3 * (8 + 8 + 32 + 2 * (8 + 32) + 3309));
  const again = await LightStore.open(store, silentLogger);
  assert.equal(await again.update(), u);
  assert.equal(await again.update(2), u);
  assert.is(await again.update(1), undefined);
});

test('LightStore: no update without 2/3 of the votes at hand; only the newest LIGHT_UPDATES_KEPT are kept', async () => {
  const { store, light } = await openStore();
  const h = header(4);
  const root = blockHash(h);
  light.observe(vote(0, 1, root), 0);
  light.observe(vote(1, 1, root), 0);
  assert.is(await light.finalized({ epoch: 1, root: toHex(root) }, h, stakes), undefined, '2 of 4 is not 2/3');
  assert.is(await light.update(), undefined);
  for (let e = 2; e < 2 + LIGHT_UPDATES_KEPT + 3; e++) {
    const he = header(e * 4);
    const r = blockHash(he);
    for (let i = 0; i < 3; i++) light.observe(vote(i, e, r), e - 1);
    assert.ok(await light.finalized({ epoch: e, root: toHex(r) }, he, stakes));
  }
  const kept = await store.scan<unknown>('L:');
  assert.is(kept.length, LIGHT_UPDATES_KEPT);
  assert.is((await light.update())!.finalized.epoch, 1 + LIGHT_UPDATES_KEPT + 3);
  assert.is(await light.update(2), undefined, 'the oldest were deleted');
});

test('LightStore: a finalized checkpoint\'s link keeps collecting votes until the next finality, so a short update can be framed again', async () => {
  const { light } = await openStore();
  const h = header(12);
  const root = blockHash(h);
  const cp = { epoch: 3, root: toHex(root) };
  // Fork choice finalized on two votes (the set shrank); the light record needs three of these four.
  light.observe(vote(0, 3, root), 2);
  light.observe(vote(1, 3, root), 2);
  assert.is(await light.finalized(cp, h, stakes), undefined);
  // A vote arriving after finality (fork choice now at epoch 3) joins the same link.
  light.observe(vote(2, 3, root), 3);
  const links = light.finalizedLinks(cp);
  assert.equal(links.map((l) => l.votes.map((v) => v.validatorIndex)), [[0, 1, 2]]);
  const u = await light.finalizedWith(cp, h, links, stakes);
  assert.is(u?.signers, 3);
  // The next finality drops the older checkpoint's links.
  const h2 = header(16);
  light.observe(vote(0, 4, blockHash(h2)), 3);
  light.finalizedLinks({ epoch: 4, root: toHex(blockHash(h2)) });
  assert.equal(light.finalizedLinks(cp), []);
});

const routes = harnessSuite('light routes', { validators: 2, slotsAgo: 3 });

routes('bootstrap from genesis; a proof against block 1 verifies against its header state_root (the genesis root)', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.h!;
  const boot = okData(await bget(h, '/api/v1/light/bootstrap'));
  assert.is(boot.genesis_hash, toHex(genesisHash(h.genesis)));
  assert.is(boot.header, null);
  assert.equal(boot.block, { root: toHex(genesisHash(h.genesis)), index: 0, slot: 0 });
  assert.equal(boot.validators.map((v: { index: number; active: boolean }) => [v.index, v.active]), [[0, true], [1, true]]);
  // No finality yet.
  expectEnvelope(await bget(h, '/api/v1/light/finality_update'), 404, 'NO_FINALITY_UPDATE');
  // Block 1, not finalized: provable (proofs need a known header), but not a bootstrap point.
  const slot = currentSlot(h);
  const { block } = await buildProposal(h, { slot });
  const root = okData(await proposeBlock(h, block)).block_hash as string;
  expectEnvelope(await bget(h, `/api/v1/light/bootstrap?root=${root}`), 409, 'NOT_FINALIZED');
  expectEnvelope(await bget(h, `/api/v1/light/headers?from=${root}&to=1`), 409, 'NOT_FINALIZED');
  const account = h.genesis.alloc[0]!.address;
  const p = okData(await bget(h, `/api/v1/light/proof?root=${root}&address=${account}`));
  assert.is(p.block_hash, root);
  const hdr = headerFromJson(p.header);
  assert.is(toHex(blockHash(hdr)), root);
  assert.is(toHex(hdr.stateRoot), toHex(genesisStateRoot(h.genesis)));
  assert.is(verifyAccountAgainstHeader(hdr, account, p.proof).balance, BigInt(h.genesis.alloc[0]!.balance));
  // The trusted set a genesis bootstrap uses comes from the file and matches what is served.
  assert.is(trustedFromGenesis(h.genesis, genesisHash(h.genesis)).validators.size, boot.validators.length);
});

routes('bad input is a 4xx envelope on every light route', async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.h!;
  const G = toHex(genesisHash(h.genesis));
  const unknown = '0x' + '12'.repeat(32);
  const account = h.genesis.alloc[0]!.address;
  const cases: Array<[string, number, string]> = [
    ['/api/v1/light/bootstrap?root=0x12', 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/bootstrap?root=${unknown}`, 404, 'NOT_FOUND'],
    ['/api/v1/light/finality_update?epoch=-1', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/finality_update?epoch=3', 404, 'NO_FINALITY_UPDATE'],
    ['/api/v1/light/headers', 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/headers?from=${G}`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/headers?from=zz&to=1`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/headers?from=${G}&to=1`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/headers?from=${G}&to=x`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/headers?from=${unknown}&to=1`, 404, 'NOT_FOUND'],
    ['/api/v1/light/proof', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/proof?address=0x12', 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/proof?address=${account}&keys=0x12`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/proof?address=${account}&keys=${Array(65).fill('0x' + '00'.repeat(32)).join(',')}`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/proof?address=${account}&root=${G}`, 400, 'MALFORMED_INPUT'],
    [`/api/v1/light/proof?address=${account}`, 404, 'NO_FINALIZED_HEADER'],
    [`/api/v1/light/proof?address=${account}&root=${unknown}`, 404, 'NOT_FOUND'],
    [`/api/v1/light/proof?address=${account}&root=nothex`, 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?from_epoch=-1', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?from_epoch=1.5', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?from_epoch=0x10', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?limit=0', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?limit=17', 400, 'MALFORMED_INPUT'],
    ['/api/v1/light/set_changes?limit=abc', 400, 'MALFORMED_INPUT'],
  ];
  for (const [path, status, code] of cases) expectEnvelope(await bget(h, path), status, code);
  // The set never changed: no set change, and no next page, at any start or page size.
  for (const q of ['', '?from_epoch=1', '?from_epoch=0&limit=1', '?limit=16', `?from_epoch=${2 ** 31}`]) {
    assert.equal(okData(await bget(h, `/api/v1/light/set_changes${q}`)), { set_changes: [], next_from_epoch: null }, q);
  }
});

const long = harnessSuite('light routes: a long chain', { validators: 1, slotsAgo: MAX_LIGHT_HEADERS + 8 });

long(`a header chain longer than MAX_LIGHT_HEADERS (${MAX_LIGHT_HEADERS}) is 400 HEADER_RANGE_TOO_LONG, checked before finality`, async (ctx) => {
  if (ctx.startError) throw ctx.startError;
  const h = ctx.h!;
  // One validator is drawn at every slot: a block per past slot.
  let root = '';
  for (let slot = 1; slot <= MAX_LIGHT_HEADERS + 1; slot++) root = okData(await proposeBlock(h, (await buildProposal(h, { slot })).block)).block_hash as string;
  expectEnvelope(await bget(h, `/api/v1/light/headers?from=${root}&to=1`), 400, 'HEADER_RANGE_TOO_LONG', `${MAX_LIGHT_HEADERS + 1} headers asked, at most ${MAX_LIGHT_HEADERS} per request: ask again from the last header's parent`);
  // Within the cap the range checks pass and finality is what refuses: nothing is finalized here.
  expectEnvelope(await bget(h, `/api/v1/light/headers?from=${root}&to=2`), 409, 'NOT_FINALIZED');
});

test.run();
routes.run();
long.run();
