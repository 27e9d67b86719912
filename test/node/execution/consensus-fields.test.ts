/**
 * Header fields that the block hash covers but the proposer's signature does not (timestamp
 * below the second, vrf_seed, vrf_proof, randao_reveal), through the engine API of a real node:
 * a re-headered copy of a valid block is refused with a reason and nothing of it is stored; a
 * proposer's own wrong seed, wrong slot or wrong reveal is refused too; and the RANDAO reveal is
 * checked per branch across reorganisations and restarts (canonical `q:` state plus undo data).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryLevel } from 'memory-level';
import { toHex } from '../../../src/core/codec/bytes.js';
import { proposerForSlot } from '../../../src/core/consensus/proposer.js';
import { seedMixFor } from '../../../src/core/consensus/randao.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { BlockError } from '../../../src/core/errors.js';
import { ExecutionError } from '../../../src/node/execution/errors.js';
import { genesisHash, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { type Block, blockHash } from '../../../src/core/types/block.js';
import { type ConsensusCarrier, ConsensusFields, revealKey } from '../../../src/node/execution/consensus-fields.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { Registry } from '../../../src/node/execution/registry.js';
import { genesisRegistry } from '../../../src/core/consensus/registry.js';
import { ChainStore, type Db, WriteBatch } from '../../../src/node/shared/store.js';
import { expectError } from '../../helpers/assert.js';
import {
  devnet,
  drawnSlot,
  expectEnvelope,
  expectOk,
  genesisBranch,
  genesisRef,
  get,
  height,
  importOk,
  makeBlock,
  newPayload,
  type ParentRef,
  post,
  randaoChainOf,
  reheader,
  startNode,
  withTempDir,
} from './fixture.js';

const { genesis, keys } = devnet();
const val0 = keys.validators[0]!;
const val1 = keys.validators[1]!;
const hashHex = (b: Block) => toHex(blockHash(b.header));
const fcu = (node: ExecutionNode, head: string) => post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: head });

/** Refused with `code` (message starting with the code's phrase), and nothing changed: head, height, no stored block. */
async function refused(node: ExecutionNode, block: Block, code: string, message: RegExp): Promise<void> {
  const head = node.chain.head();
  const before = await height(node);
  expectEnvelope(await newPayload(node, block), 400, code, message);
  assert.is(await height(node), before, 'height unchanged');
  assert.equal(node.chain.head(), head, 'head unchanged');
  expectEnvelope(await get(node, `/api/v1/blocks/${hashHex(block)}`), 404, 'NOT_FOUND');
}

const rehead = suite('consensus fields: re-headered copies and proposer faults');
let node: ExecutionNode;
let g: ParentRef;
let a1: ParentRef;
let original: Block;
rehead.before(async () => {
  node = await startNode();
  g = await genesisRef(node);
});
rehead.after(async () => node?.stop());

rehead('a re-headered copy of a valid block is refused, field by field, with a reason; nothing is stored', async () => {
  original = makeBlock(g);
  a1 = (await importOk(node, original)).ref;
  const cases: Array<[Parameters<typeof reheader>[1], string, RegExp]> = [
    ['randaoReveal', 'INVALID_RANDAO_REVEAL', /^Block randao_reveal is not the preimage of the proposer's last RANDAO value: RANDAO reveal of validator 0 is not the preimage/],
    ['vrfSeed', 'INVALID_VRF_SEED', /^Block vrf_seed is not the seed of its slot: vrf_seed 0x[0-9a-f]{64} is not the seed of slot \d+/],
    ['vrfProof', 'INVALID_VRF_PROOF', /^VRF proof verification failed$/],
    ['timestampMs', 'INVALID_TIMESTAMP', /^Block timestamp is not the start of a slot after its parent: timestamp \d+ is not the start of a slot after genesis/],
  ];
  for (const [field, code, message] of cases) {
    const copy = reheader(original, field);
    assert.is.not(hashHex(copy), a1.hash, `${field}: the copy has another hash`);
    await refused(node, copy, code, message);
  }
  // The original is still the only block at height 1, and resending it is acknowledged as known.
  assert.is(expectOk(await get(node, '/api/v1/blocks/1')).hash, a1.hash);
  assert.is(expectOk(await newPayload(node, original)).already_known, true);
  const metrics = (await get(node, '/metrics')).text;
  for (const code of ['INVALID_RANDAO_REVEAL', 'INVALID_VRF_SEED', 'INVALID_VRF_PROOF', 'INVALID_TIMESTAMP']) {
    assert.match(metrics, new RegExp(`service_execution_blocks_rejected_total\\{reason="${code}"\\} 1`), code);
  }
});

rehead('the proposer itself cannot pick another seed, slot, timestamp or reveal', async () => {
  const spe = genesis.config.slots_per_epoch;
  const b = a1.branch;
  // A valid proof over a seed that is not the slot's (the next slot's seed).
  const { slot } = drawnSlot(genesis, b, 0);
  const otherSeed = proposerForSlot(b.validators, seedMixFor(b.mixes, b.slot, slot + 1, spe), slot + 1).seed;
  await refused(node, makeBlock(a1, { vrfSeed: otherSeed }), 'INVALID_VRF_SEED', new RegExp(`is not the seed of slot ${slot} `));
  // A slot the draw gives validator 1, signed by validator 0 with that slot's seed.
  const theirs = drawnSlot(genesis, b, 1).slot;
  await refused(node, makeBlock(a1, { slot: theirs }), 'WRONG_PROPOSER', new RegExp(`validator 0 is not the proposer of slot ${theirs} \\(validator 1 is\\)`));
  // Two blocks of the same slot on one branch, and a timestamp before genesis.
  await refused(node, makeBlock(a1, { timestampMs: a1.timestamp }), 'INVALID_TIMESTAMP', /is not after the parent's slot/);
  await refused(node, makeBlock(a1, { timestampMs: slotStartMs(genesis, 0) - 2000 }), 'INVALID_TIMESTAMP', /is not the start of a slot after genesis/);
  // Replaying the accepted reveal, or skipping a link of the hash chain.
  const chain = randaoChainOf(val0);
  await refused(node, makeBlock(a1, { randaoReveal: chain.reveal(1) }), 'INVALID_RANDAO_REVEAL', /RANDAO reveal of validator 0 replayed/);
  await refused(node, makeBlock(a1, { randaoReveal: chain.reveal(3) }), 'INVALID_RANDAO_REVEAL', /is not the preimage of its last accepted value/);
  // The honest block of the same slot still goes in.
  const next = await importOk(node, makeBlock(a1));
  assert.is(next.result.canonical, true);
});

rehead.run();

const reorg = suite('consensus fields: RANDAO reveals per branch across reorganisations and restarts');

reorg('a validator proposing on two branches reveals correctly on each; reorgs back and forth keep the canonical value', async () => {
  await withTempDir(async (dir) => {
    let n = await startNode({ dataDir: dir });
    try {
      const root = await genesisRef(n);
      const chain = randaoChainOf(val0);
      // Branch A: validator 0 at its first slot. Branch B: validator 0 at its second slot, so the
      // two blocks differ but carry the same first reveal.
      const a1b = makeBlock(root);
      const ra1 = await importOk(n, a1b);
      const b1b = makeBlock(root, { salt: 1 });
      assert.equal(b1b.header.randaoReveal, a1b.header.randaoReveal, 'the same reveal on both branches');
      const rb1 = await importOk(n, b1b);
      assert.is(rb1.result.canonical, false);
      // On B (a side branch), the next reveal is the second link; the first is a replay there.
      await refused(n, makeBlock(rb1.ref, { randaoReveal: chain.reveal(1) }), 'INVALID_RANDAO_REVEAL', /replayed/);
      const rb2 = await importOk(n, makeBlock(rb1.ref));
      assert.equal(makeBlock(rb1.ref).header.randaoReveal, chain.reveal(2));
      assert.is(rb2.result.canonical, false);
      // Validator 1 has not proposed anywhere: its first reveal is valid on B too.
      const rb3 = await importOk(n, makeBlock(rb2.ref, { proposer: val1 }));

      // Reorg to B: the canonical value of validator 0 becomes its second reveal.
      expectOk(await fcu(n, rb3.ref.hash));
      assert.is(n.chain.head().hash, rb3.ref.hash);
      await refused(n, makeBlock(rb3.ref, { randaoReveal: chain.reveal(2) }), 'INVALID_RANDAO_REVEAL', /replayed/);
      // A is now the side branch; its next block still wants the second reveal (A saw only the first).
      const ra2 = await importOk(n, makeBlock(ra1.ref));
      assert.is(ra2.result.canonical, false);
      assert.equal(makeBlock(ra1.ref).header.randaoReveal, chain.reveal(2));

      // Back to A: B's reveals are undone, A's applied.
      expectOk(await fcu(n, ra2.ref.hash));
      assert.is(n.chain.head().hash, ra2.ref.hash);
      const ra3 = await importOk(n, makeBlock(ra2.ref));
      assert.is(ra3.result.canonical, true);
      assert.equal(makeBlock(ra2.ref).header.randaoReveal, chain.reveal(3));
      // Validator 1 never proposed on A: its first reveal is the one A expects (B's was undone).
      const ra4 = await importOk(n, makeBlock(ra3.ref, { proposer: val1 }));
      assert.is(ra4.result.canonical, true);

      // Restart: the canonical values come back from disk, side branches still resolve.
      await n.stop();
      n = await startNode({ dataDir: dir });
      await refused(n, makeBlock(ra4.ref, { randaoReveal: chain.reveal(3) }), 'INVALID_RANDAO_REVEAL', /replayed/);
      assert.is((await importOk(n, makeBlock(ra4.ref))).result.canonical, true);
      assert.is((await importOk(n, makeBlock(rb3.ref))).result.canonical, false, 'B extends with its own next reveal');
    } finally {
      await n.stop();
    }
  });
});

reorg('a validator that proposes rarely is checked against its own last reveal, however far back', async () => {
  const n = await startNode();
  try {
    let head = (await importOk(n, makeBlock(await genesisRef(n), { proposer: val1 }))).ref;
    for (let i = 0; i < 12; i++) head = (await importOk(n, makeBlock(head))).ref;
    assert.equal(makeBlock(head, { proposer: val1 }).header.randaoReveal, randaoChainOf(val1).reveal(2));
    head = (await importOk(n, makeBlock(head, { proposer: val1 }))).ref;
    assert.is(await height(n), 14);
  } finally {
    await n.stop();
  }
});

reorg.run();

const unit = suite('consensus fields: unit');

async function withFields(fn: (f: ConsensusFields, store: ChainStore) => Promise<void>): Promise<void> {
  const db = new MemoryLevel<string, string>();
  try {
    const store = new ChainStore(db as unknown as Db);
    const registry = new Registry();
    registry.load(genesisRegistry(genesis));
    await fn(new ConsensusFields(genesis, toHex(genesisHash(genesis)), store, registry), store);
  } finally {
    await db.close();
  }
}

const genesisCarrier: ConsensusCarrier = { hash: '0x' + 'ab'.repeat(32), index: 0, timestamp: slotStartMs(genesis, 0) };

unit('slotOf: only an exact slot start after the parent\'s slot', async () => {
  await withFields(async (f) => {
    assert.is(f.slotOf(slotStartMs(genesis, 3), genesisCarrier), 3);
    for (const ms of [slotStartMs(genesis, 3) + 1, slotStartMs(genesis, 3) - 999, slotStartMs(genesis, 0), slotStartMs(genesis, 0) - 2000]) {
      expectError(() => f.slotOf(ms, genesisCarrier), BlockError, { code: 'INVALID_TIMESTAMP' });
    }
  });
});

unit('a record without consensus fields (an older data directory) is CORRUPT_DB, genesis never is', async () => {
  await withFields(async (f) => {
    assert.is(f.of(genesisCarrier).slot, 0);
    const old: ConsensusCarrier = { hash: '0x' + 'cd'.repeat(32), index: 4, timestamp: slotStartMs(genesis, 9) };
    expectError(() => f.of(old), ExecutionError, { code: 'CORRUPT_DB' });
  });
});

unit('checkReveal resolves the last value over the path; persist applies and undoes it', async () => {
  await withFields(async (f, store) => {
    const chain = randaoChainOf(val0);
    const entry = genesisRegistry(genesis)[0]!;
    const header = (reveal: Uint8Array) => ({ ...makeBlock({ hash: genesisCarrier.hash, index: 0, timestamp: genesisCarrier.timestamp, branch: genesisBranch() }).header, randaoReveal: reveal });
    // A1 on genesis: the first reveal; it replaced the commitment, stored explicitly (a
    // re-commitment may later change the registry's commitment, which is only the head's).
    const c1 = await f.checkReveal(header(chain.reveal(1)), 1, genesisCarrier, entry, { reverted: [], applied: [] });
    assert.is(c1.previous, entry.randao_commitment);
    assert.is(c1.reveal, toHex(chain.reveal(1)));
    const a1: ConsensusCarrier = { hash: '0x' + '01'.repeat(32), index: 1, timestamp: slotStartMs(genesis, 1), consensus: c1 };
    await store.write(persisted(f, a1, 1));
    assert.is(await store.get<string>(revealKey(0)), toHex(chain.reveal(1)));
    // On A1 (canonical): the first reveal is a replay, the second is next.
    await expectRejects(f.checkReveal(header(chain.reveal(1)), 2, a1, entry, { reverted: [], applied: [] }), /replayed/);
    const c2 = await f.checkReveal(header(chain.reveal(2)), 2, a1, entry, { reverted: [], applied: [] });
    assert.is(c2.previous, toHex(chain.reveal(1)));
    // A sibling of A1 (path reverts A1): the commitment is back, so the first reveal is valid there.
    const sibling = await f.checkReveal(header(chain.reveal(1)), 2, genesisCarrier, entry, { reverted: [a1], applied: [] });
    assert.is(sibling.previous, entry.randao_commitment);
    // Undoing A1 restores the commitment.
    await store.write(persisted(f, a1, -1));
    assert.is(await store.get<string>(revealKey(0)), entry.randao_commitment);
  });
});

unit('withCommits records each re-commitment with the value it replaced; persist and the path walk apply and undo them in order', async () => {
  await withFields(async (f, store) => {
    const chain = randaoChainOf(val0);
    const entry = genesisRegistry(genesis)[0]!;
    const entry1 = genesisRegistry(genesis)[1]!;
    const header = (reveal: Uint8Array) => ({ ...makeBlock({ hash: genesisCarrier.hash, index: 0, timestamp: genesisCarrier.timestamp, branch: genesisBranch() }).header, randaoReveal: reveal });
    const fresh = new RandaoChain(val0.mldsaSeed, 8, 0, 1);
    const other = sha3(Uint8Array.of(7));
    // A1: validator 0 reveals and, in the same block, validators 0 and 1 re-commit.
    const r1 = await f.checkReveal(header(chain.reveal(1)), 1, genesisCarrier, entry, { reverted: [], applied: [] });
    const c1 = await f.withCommits(r1, [{ validatorIndex: 0, commitment: fresh.commitment() }, { validatorIndex: 1, commitment: other }], { reverted: [], applied: [] });
    assert.equal(c1.commits, [
      { index: 0, value: toHex(fresh.commitment()), previous: toHex(chain.reveal(1)) },
      { index: 1, value: toHex(other), previous: entry1.randao_commitment },
    ]);
    assert.is(await f.withCommits(r1, [], { reverted: [], applied: [] }), r1, 'no re-commitment: the record as it was');
    const a1: ConsensusCarrier = { hash: '0x' + '01'.repeat(32), index: 1, timestamp: slotStartMs(genesis, 1), consensus: c1 };
    await store.write(persisted(f, a1, 1));
    assert.is(await store.get<string>(revealKey(0)), toHex(fresh.commitment()));
    assert.is(await store.get<string>(revealKey(1)), toHex(other));
    // On A1 the old chain's next reveal is refused, the new chain's first accepted.
    await expectRejects(f.checkReveal(header(chain.reveal(2)), 2, a1, entry, { reverted: [], applied: [] }), /not the preimage/);
    assert.is((await f.checkReveal(header(fresh.reveal(1)), 2, a1, entry, { reverted: [], applied: [] })).previous, toHex(fresh.commitment()));
    // A sibling of A1 (path reverts A1): the genesis chain again.
    assert.is((await f.checkReveal(header(chain.reveal(1)), 2, genesisCarrier, entry, { reverted: [a1], applied: [] })).previous, entry.randao_commitment);
    // Undo restores both validators' values.
    await store.write(persisted(f, a1, -1));
    assert.is(await store.get<string>(revealKey(0)), entry.randao_commitment);
    assert.is(await store.get<string>(revealKey(1)), entry1.randao_commitment);
    // A side branch through A1 (path applies it) sees the new commitment.
    assert.is((await f.checkReveal(header(fresh.reveal(1)), 2, a1, entry, { reverted: [], applied: [a1] })).previous, toHex(fresh.commitment()));
  });
});

/** A batch holding what persist queues for applying (1) or reverting (-1) one block. */
function persisted(f: ConsensusFields, r: ConsensusCarrier, sign: 1 | -1): WriteBatch {
  const batch = new WriteBatch();
  f.persist(batch, r, sign);
  return batch;
}

async function expectRejects(p: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, BlockError);
    assert.is((err as BlockError).code, 'INVALID_RANDAO_REVEAL');
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable('expected INVALID_RANDAO_REVEAL');
}

unit.run();
