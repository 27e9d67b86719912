/**
 * The beacon node's proposal and attestation checks, end to end over HTTP: a real execution node
 * (memory DB) and a real beacon node (temp data dir), both on ephemeral loopback ports, over a
 * devnet genesis whose slot 0 lies 20 slots in the past. Proposals are built as a validator
 * client builds them (duties and vrf_seed from the beacon, keys from the derivation paths,
 * reveals from the validator's RANDAO chain), then spoiled one fault at a time. Every refusal
 * must name its rule and leave the beacon head, the execution height and every validator's
 * randao_last as they were; the honest version of the same proposal is accepted afterwards.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { TX_BASE_GAS } from '../../../src/core/constants.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { sign } from '../../../src/core/crypto/mldsa.js';
import { vrfProve } from '../../../src/core/crypto/vrf.js';
import { epochOfSlot, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { attestationFromJson, attestationToJson, signAttestation, type AttestationData } from '../../../src/core/types/attestation.js';
import { type Block, blockFromJson, blockHash, blockToJson, headerSigningHash, signBlock, signedHeaderOf } from '../../../src/core/types/block.js';
import { signStandardTx, type StandardTx } from '../../../src/core/types/transaction.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { classifyImportError } from '../../../src/node/beacon/sync/verdict.js';
import { silentLogger } from '../../../src/util/log.js';
import type { WalletKeys } from '../../../src/wallet/derivation.js';
import { flipByte } from '../../helpers/assert.js';
import { expectEnvelope, http, type HttpResult } from '../execution/fixture.js';
import {
  beaconHead,
  beaconMetrics,
  bget,
  bpost,
  buildProposal,
  currentSlot,
  dutyOf,
  execHeight,
  type Harness,
  okData,
  proposeBlock,
  randaoChain,
  randaoLast,
  sample,
  startHarness,
  stopHarness,
} from './fixture.js';

const PROPOSE = '/api/v1/validator/blocks/propose';
const PROPOSAL_ALIAS = '/api/v1/beacon/block/proposal';
const ATTEST = '/api/v1/attestation';
const REJECTED = 'service_beacon_proposals_rejected_total';

interface Ctx {
  h?: Harness;
  /** Why the nodes did not start (uvu swallows a failing before hook, so each test rethrows it). */
  startError?: unknown;
  /** The first accepted block: its slot, proposer and reveal (for the replay). */
  first?: { slot: number; validator: number; reveal: Uint8Array; root: string };
}

/** Head, execution height and every validator's randao_last: what a refusal must not touch. */
async function snapshot(h: Harness): Promise<{ head: unknown; height: number; randao: string[] }> {
  return { head: await beaconHead(h), height: await execHeight(h), randao: await Promise.all(h.validators.map((_, i) => randaoLast(h, i))) };
}

/** Execution's answer for a block hash (404 when it never saw the block). */
const execBlock = (h: Harness, block: Block): Promise<HttpResult> => http(h.exec.restUrl, `/api/v1/blocks/${toHex(blockHash(block.header))}`);

/**
 * Posts `block` and asserts a 400 with `code` (and `message`), no state change, the rejection
 * counted under its reason, and execution never told. Returns the message.
 */
async function refuse(h: Harness, block: Block, code: string, message?: string | RegExp, path = PROPOSE): Promise<string> {
  const before = await snapshot(h);
  const counted = sample(await beaconMetrics(h), REJECTED, `reason="${code}"`) ?? 0;
  const msg = expectEnvelope(await proposeBlock(h, block, path), 400, code, message);
  assert.equal(await snapshot(h), before, `${code}: head, execution height and randao_last unchanged`);
  assert.is(sample(await beaconMetrics(h), REJECTED, `reason="${code}"`), counted + 1, `${code} counted once`);
  assert.is((await execBlock(h, block)).status, 404, `${code}: execution never received the block`);
  return msg;
}

/** Posts an honest block and asserts it became the head on both layers. */
async function accept(h: Harness, block: Block, slot: number, validator: number, reveal: Uint8Array, path = PROPOSE): Promise<any> {
  const before = await snapshot(h);
  const data = okData(await proposeBlock(h, block, path));
  const root = toHex(blockHash(block.header));
  assert.equal(
    { ...data, state_root: undefined },
    { block_hash: root, slot, index: block.header.index, state_root: undefined, transactions: block.transactions.length, already_known: false },
  );
  assert.match(data.state_root, /^0x[0-9a-f]{64}$/);
  const after = await snapshot(h);
  const head = after.head as { root: string; slot: number; index: number };
  assert.equal([head.root, head.slot, head.index], [root, slot, block.header.index], 'the block is the head');
  assert.is(after.height, before.height + 1, 'execution height grows by one');
  assert.is(after.randao[validator], toHex(reveal), "the proposer's randao_last is its reveal");
  after.randao.forEach((v, i) => i !== validator && assert.is(v, before.randao[i], `validator ${i}'s randao_last unchanged`));
  const exec = okData(await execBlock(h, block));
  assert.is(exec.hash, root);
  assert.is(exec.canonical, true);
  return data;
}

/** The first slot after the head that has started (a proposal there is on time). */
async function nextSlot(h: Harness): Promise<number> {
  const head = await beaconHead(h);
  const slot = head.slot + 1;
  assert.ok(slot <= currentSlot(h), `slot ${slot} has started (current ${currentSlot(h)})`);
  return slot;
}

/** The running harness, or the start-up failure. */
function harness(ctx: Ctx): Harness {
  if (!ctx.h) throw ctx.startError ?? new Error('nodes not started');
  return ctx.h;
}

/** A one-wei transfer from `from`, signed for the harness chain. */
function transferTx(h: Harness, from: WalletKeys, nonce: bigint): StandardTx {
  const to = parseHex('0x' + 'aa'.repeat(20), 'to', 20);
  return signStandardTx({ nonce, gasPrice: BigInt(h.genesis.config.min_gas_price), gasLimit: TX_BASE_GAS, to, value: 1n, data: new Uint8Array(0) }, from.mldsa, h.genesis.chain_id);
}

/** The other validator of a two-validator registry. */
const other = (i: number): number => 1 - i;

const proposals = suite<Ctx>('beacon proposals', {});

proposals.before(async (ctx) => {
  try {
    ctx.h = await startHarness({ validators: 2, slotsAgo: 20 });
  } catch (err) {
    ctx.startError = err;
  }
});

proposals.after(async (ctx) => {
  if (ctx.h) await stopHarness(ctx.h);
});

proposals('validator routes answer 401 UNAUTHORIZED without the bearer token or with a wrong one', async (ctx) => {
  const h = harness(ctx);
  const slot = await nextSlot(h);
  const { block } = await buildProposal(h, { slot });
  const body = blockToJson(block);
  const before = await snapshot(h);
  const wrong = [
    null,
    'x'.repeat(h.token.length), // same length, wrong value
    h.token.slice(0, -1), // a prefix
    h.token + 'a', // longer
    '', // "Bearer " with nothing after it
  ];
  for (const path of [PROPOSE, PROPOSAL_ALIAS, ATTEST]) {
    for (const token of wrong) {
      const r = await bpost(h, path, path === ATTEST ? { validator_index: 0 } : body, token);
      expectEnvelope(r, 401, 'UNAUTHORIZED', /Authorization: Bearer <token>/);
    }
    // Another scheme with the right secret, and the token sent bare, are refused too.
    for (const authorization of [`Basic ${h.token}`, h.token, `bearer${h.token}`]) {
      const r = await http(h.beacon.url, path, { json: body, headers: { authorization } });
      expectEnvelope(r, 401, 'UNAUTHORIZED');
    }
    // Authentication comes before parsing: a malformed body without the token is still a 401.
    const r = await http(h.beacon.url, path, { body: '{not json', headers: { 'content-type': 'application/json' } });
    expectEnvelope(r, 401, 'UNAUTHORIZED');
  }
  assert.equal(await snapshot(h), before, 'nothing changed');
  assert.is((await execBlock(h, block)).status, 404, 'execution never received the block');
  const metrics = await beaconMetrics(h);
  assert.is(sample(metrics, 'service_beacon_blocks_proposed_total'), 0);
  // The head is still genesis, which is unsigned: no canonical encoding exists, so the gauge has
  // no sample (a 0 would read as a wrong length and fire CanonicalBytesLengthIncorrect).
  assert.match(metrics, /^# TYPE quantum_canonical_bytes_len gauge$/m);
  assert.is(sample(metrics, 'quantum_canonical_bytes_len'), undefined);
});

proposals('a valid proposal is accepted: head moves, execution height grows, randao_last advances; a repeat is already_known', async (ctx) => {
  const h = harness(ctx);
  const slot = await nextSlot(h);
  assert.is(slot, 1);
  const { block, validator, reveal, duty } = await buildProposal(h, { slot });
  assert.is(duty.address, h.validators[validator]!.address);
  // The first reveal is H^(n-1)(secret): it hashes to the genesis commitment.
  assert.is(toHex(sha3(reveal)), h.genesis.validators[validator]!.randao_commitment);
  const data = await accept(h, block, slot, validator, reveal);
  ctx.first = { slot, validator, reveal, root: data.block_hash };

  const stored = okData(await bget(h, `/api/v1/beacon/blocks/${slot}`));
  assert.is(stored.root, data.block_hash);
  assert.is(stored.proposer, h.validators[validator]!.address);
  assert.is(stored.proposer_index, validator);
  assert.equal(stored.block, blockToJson(block));
  const metrics = await beaconMetrics(h);
  assert.is(sample(metrics, 'service_beacon_blocks_proposed_total'), 1);
  assert.is(sample(metrics, 'quantum_canonical_bytes_len'), 3409, 'the SignedHeader ‖ signature the beacon encoded');

  // The same block again changes nothing and says so.
  const before = await snapshot(h);
  const again = okData(await proposeBlock(h, block, PROPOSAL_ALIAS));
  assert.equal(again, { ...data, already_known: true });
  assert.equal(await snapshot(h), before);
  assert.is(sample(await beaconMetrics(h), 'service_beacon_blocks_proposed_total'), 1);
});

proposals('a copy of an accepted header with a corrupted signature is refused, not reported as already known', async (ctx) => {
  const h = harness(ctx);
  const first = ctx.first!;
  const stored = okData(await bget(h, `/api/v1/beacon/blocks/${first.root}`));
  const block = blockFromJson(stored.block);
  const before = await snapshot(h);
  // The block hash covers the header only, so these copies have the accepted block's hash.
  const corrupted = { ...block, signature: flipByte(block.signature, 100) };
  assert.is(toHex(blockHash(corrupted.header)), first.root);
  expectEnvelope(await proposeBlock(h, corrupted), 400, 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  const foreign = signBlock(block.header, [], h.validators[other(first.validator)]!.mldsa, h.genesis.chain_id, first.validator);
  expectEnvelope(await proposeBlock(h, foreign, PROPOSAL_ALIAS), 400, 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  // Transactions that are not the header's: refused, even though the header is known.
  const account = h.accounts[0]!;
  expectEnvelope(await proposeBlock(h, { ...block, transactions: [transferTx(h, account, 99n)] }), 400, 'MERKLE_ROOT_MISMATCH');
  // A different but valid (hedged) signature by the proposer is the same block.
  const key = h.validators[first.validator]!.mldsa;
  const hedged = { ...block, signature: sign(key.secretKey, headerSigningHash(signedHeaderOf(block.header, h.genesis.chain_id, first.validator))) };
  assert.is.not(toHex(hedged.signature), toHex(block.signature));
  assert.is(okData(await proposeBlock(h, hedged)).already_known, true);
  assert.equal(await snapshot(h), before);
  assert.is(sample(await beaconMetrics(h), 'service_beacon_blocks_proposed_total'), 1);
});

proposals('a replayed RANDAO reveal is refused (and a skipped link); the next link is then accepted', async (ctx) => {
  const h = harness(ctx);
  const first = ctx.first!;
  // A later slot, already started, whose drawn proposer is the first block's proposer.
  let found: number | undefined;
  for (let s = first.slot + 1; s <= currentSlot(h) && found === undefined; s++) if ((await dutyOf(h, s)).validator_index === first.validator) found = s;
  assert.ok(found !== undefined, `validator ${first.validator} is drawn again in some slot after ${first.slot}`);
  const slot = found;
  assert.is(await randaoLast(h, first.validator), toHex(first.reveal));

  const replay = await buildProposal(h, { slot, randaoReveal: first.reveal });
  assert.is(replay.validator, first.validator);
  const msg = await refuse(h, replay.block, 'INVALID_RANDAO_REVEAL', /replayed/);
  assert.match(msg, `validator ${first.validator}`);

  // Skipping a link (the reveal after next) is refused as well, with its own reason.
  const skipped = await buildProposal(h, { slot, randaoReveal: randaoChain(h, first.validator).reveal(3) });
  await refuse(h, skipped.block, 'INVALID_RANDAO_REVEAL', /not the preimage/);
  // A value from the other validator's chain is not a link of this one.
  const foreign = await buildProposal(h, { slot, randaoReveal: randaoChain(h, other(first.validator)).reveal(1) });
  await refuse(h, foreign.block, 'INVALID_RANDAO_REVEAL', /not the preimage/);

  // The honest next link, with a transaction, through the alias route.
  const tx = transferTx(h, h.accounts[0]!, 0n);
  const honest = await buildProposal(h, { slot, transactions: [tx] });
  assert.is(toHex(sha3(honest.reveal)), toHex(first.reveal), 'the next link hashes to the last accepted one');
  const data = await accept(h, honest.block, slot, first.validator, honest.reveal, PROPOSAL_ALIAS);
  assert.is(data.transactions, 1);
});

proposals('bad proposals are refused with their rule and change nothing; the honest one is accepted after', async (ctx) => {
  const h = harness(ctx);
  const slot = await nextSlot(h);
  const honest = await buildProposal(h, { slot });
  const v = honest.validator;
  const w = other(v);
  const seed = parseHex(honest.duty.vrf_seed, 'vrf_seed', 32);
  const head = await beaconHead(h);

  // Bad signature: one bit flipped; a valid signature by another key; the right key over another registry index.
  await refuse(h, { ...honest.block, signature: flipByte(honest.block.signature, 7) }, 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  await refuse(h, signBlock(honest.block.header, [], h.validators[w]!.mldsa, h.genesis.chain_id, v), 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  await refuse(h, (await buildProposal(h, { slot, signedIndex: w })).block, 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED', PROPOSAL_ALIAS);

  // Wrong VRF seed: an arbitrary one, and the seed of the next slot (both correctly proven).
  const wrongSeed = await refuse(h, (await buildProposal(h, { slot, vrfSeed: sha3(randomBytes(32)) })).block, 'WRONG_VRF_SEED');
  assert.match(wrongSeed, `is not the seed of slot ${slot} (${honest.duty.vrf_seed})`);
  const nextSeed = parseHex((await dutyOf(h, slot + 1)).vrf_seed, 'vrf_seed', 32);
  await refuse(h, (await buildProposal(h, { slot, vrfSeed: nextSeed })).block, 'WRONG_VRF_SEED');

  // Wrong proposer: the validator not drawn, with the slot's seed, its own proof, its own valid
  // next reveal and a correct signature.
  const usurper = await buildProposal(h, { slot, validator: w });
  assert.is(toHex(sha3(usurper.reveal)), await randaoLast(h, w), "the usurper's reveal is a valid link");
  await refuse(h, usurper.block, 'WRONG_PROPOSER', `validator ${w} is not the proposer of slot ${slot} (validator ${v} is)`);

  // Bad VRF proof: one bit flipped; the other validator's proof of the right seed. The signature
  // does not cover the proof, so it still verifies: the proof check alone refuses these.
  const withProof = (proof: Uint8Array): Block => ({ ...honest.block, header: { ...honest.block.header, vrfProof: proof } });
  await refuse(h, withProof(flipByte(honest.block.header.vrfProof, 11)), 'INVALID_VRF_PROOF', 'VRF proof verification failed');
  await refuse(h, withProof(vrfProve(h.validators[w]!.mldsa, seed, h.genesis.chain_id)), 'INVALID_VRF_PROOF');

  // Unknown parent.
  const orphan = (await buildProposal(h, { slot, parentHash: sha3(randomBytes(32)) })).block;
  await refuse(h, orphan, 'UNKNOWN_PARENT', `unknown parent block ${toHex(orphan.header.parentHash)}`);

  // Timestamps that are not a slot start: mid-slot (a whole second), one millisecond late, genesis itself.
  const start = slotStartMs(h.genesis, slot);
  for (const timestampMs of [start + 1000, start + 1, start - 1000, h.genesis.genesis_time * 1000]) {
    await refuse(h, (await buildProposal(h, { slot, timestampMs })).block, 'INVALID_TIMESTAMP', `timestamp ${timestampMs} is not the start of a slot after genesis`);
  }

  // A slot at or before the parent's.
  await refuse(h, (await buildProposal(h, { slot: head.slot })).block, 'INVALID_SLOT', `slot ${head.slot} is not after the parent's slot ${head.slot}`);

  // A height that does not follow the parent's.
  await refuse(h, (await buildProposal(h, { slot, index: head.index + 2 })).block, 'INVALID_HEIGHT');

  // A slot in the future (more than half a slot ahead), otherwise as its drawn proposer would send it.
  // The last slot of the next epoch: at least two slots ahead, and its duties are published.
  const now = currentSlot(h);
  const future = (epochOfSlot(h.genesis, now) + 2) * h.genesis.config.slots_per_epoch - 1;
  assert.ok(future >= now + 2, 'the slot is more than half a slot ahead');
  await refuse(h, (await buildProposal(h, { slot: future })).block, 'FUTURE_SLOT', `slot ${future} has not started yet`);

  // None of this disturbed the honest proposal of the slot.
  await accept(h, honest.block, slot, v, honest.reveal);
});

proposals('attestations: a bad signature is refused (INVALID_SIGNATURE), a valid one is accepted', async (ctx) => {
  const h = harness(ctx);
  const slot = currentSlot(h);
  const d = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${slot}`));
  const head = await beaconHead(h);
  assert.is(d.slot, slot);
  assert.is(d.beacon_block_root, head.root);
  const data: AttestationData = {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
  const chainId = h.genesis.chain_id;
  const received = () => beaconMetrics(h).then((t) => sample(t, 'service_beacon_attestations_received_total'));
  assert.is(await received(), 0);

  const good = signAttestation(0, data, h.validators[0]!.mldsa, chainId);
  const before = await snapshot(h);
  // A flipped bit, validator 1's signature claimed as validator 0's, and validator 0's vote under index 1.
  for (const bad of [
    { ...good, signature: flipByte(good.signature, 3) },
    { ...good, signature: signAttestation(0, data, h.validators[1]!.mldsa, chainId).signature },
    { ...good, validatorIndex: 1 },
  ]) {
    expectEnvelope(await bpost(h, ATTEST, attestationToJson(bad)), 400, 'INVALID_SIGNATURE', 'attestation signature verification failed');
  }
  expectEnvelope(await bpost(h, ATTEST, attestationToJson({ ...good, validatorIndex: 7 })), 400, 'UNKNOWN_VALIDATOR');
  assert.equal(await snapshot(h), before);
  assert.is(await received(), 0, 'no refused attestation was counted');

  assert.equal(okData(await bpost(h, ATTEST, attestationToJson(good))), { status: 'applied' });
  assert.is(await received(), 1);
  // Validator 0's key was checked four times above (three refusals, then the vote): expanded at most once.
  const text = await beaconMetrics(h);
  const hits = sample(text, 'service_beacon_signature_key_cache_lookups_total', 'result="hit"')!;
  const misses = sample(text, 'service_beacon_signature_key_cache_lookups_total', 'result="miss"')!;
  assert.ok(hits >= 3 && misses >= 1, `key cache: ${hits} hits, ${misses} misses`);
  assert.equal((await snapshot(h)).height, before.height);

  // Attestation data for a slot that has not started is refused.
  expectEnvelope(await bget(h, `/api/v1/validator/attestation_data?slot=${currentSlot(h) + 3}`), 400, 'FUTURE_SLOT');

  // A validator running late asks after a later block arrived: it gets the head as of its own
  // slot, never a block after it (a vote for that would be refused as invalid).
  assert.ok(head.slot > 0, 'earlier tests proposed blocks');
  const late = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${head.slot - 1}`));
  assert.is(late.slot, head.slot - 1);
  assert.is.not(late.beacon_block_root, head.root);
});

proposals('included attestations: the pool offers received votes, a block including them is accepted and counted, a forged or repeated one is refused', async (ctx) => {
  const h = harness(ctx);
  const head = await beaconHead(h);
  const chainId = h.genesis.chain_id;
  // Validator 1 votes at the head's slot: includable in any later block.
  const d = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${head.slot}`));
  const data: AttestationData = {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
  const vote = signAttestation(1, data, h.validators[1]!.mldsa, chainId);
  assert.equal(okData(await bpost(h, ATTEST, attestationToJson(vote))), { status: 'applied' });

  const slot = await nextSlot(h);
  const BA = `/api/v1/validator/block_attestations?slot=${slot}`;
  expectEnvelope(await bget(h, BA), 401, 'UNAUTHORIZED');
  const auth = { authorization: `Bearer ${h.token}` };
  const offered = okData(await bget(h, BA, auth));
  assert.is(offered.slot, slot);
  assert.ok(offered.attestations.some((a: unknown) => JSON.stringify(a) === JSON.stringify(attestationToJson(vote))), 'the vote is offered');
  const atts = offered.attestations.map((a: unknown) => attestationFromJson(a));

  // A forged vote (validator 0's signature under index 1) is refused before execution sees the block.
  const forged = { ...vote, signature: signAttestation(1, data, h.validators[0]!.mldsa, chainId).signature };
  const bad = await buildProposal(h, { slot, attestations: [forged] });
  assert.match(await refuse(h, bad.block, 'INVALID_ATTESTATION'), /INVALID_SIGNATURE/);
  // Votes that the signed merkle_root does not cover are refused.
  const honest = await buildProposal(h, { slot, attestations: atts });
  await refuse(h, { ...honest.block, attestations: [] }, 'MERKLE_ROOT_MISMATCH');

  const balance = async () => BigInt(okData(await http(h.exec.restUrl, `/api/v1/accounts/${h.validators[1]!.address}`)).balance);
  const before = await balance();
  await accept(h, honest.block, slot, honest.validator, honest.reveal);
  const stored = okData(await bget(h, `/api/v1/beacon/blocks/${toHex(blockHash(honest.block.header))}`));
  assert.equal(stored.block.attestations, offered.attestations, 'the stored block carries its votes');
  const proposerReward = honest.validator === 1 ? BigInt(h.genesis.config.proposer_reward) : 0n;
  assert.is(await balance(), before + BigInt(h.genesis.config.attester_reward) + proposerReward, 'execution credited the attester in the including block');
  assert.equal(okData(await bget(h, '/api/v1/validators/1')).latest_vote, { root: d.beacon_block_root, epoch: d.target.epoch });

  // Included on the head's branch: no longer offered, and a block repeating it is refused.
  const next = await nextSlot(h);
  const again = okData(await bget(h, `/api/v1/validator/block_attestations?slot=${next}`, auth));
  assert.not.ok(again.attestations.some((a: unknown) => JSON.stringify(a) === JSON.stringify(attestationToJson(vote))), 'an included vote is not offered again');
  const repeat = await buildProposal(h, { slot: next, attestations: [vote] });
  assert.match(await refuse(h, repeat.block, 'INVALID_ATTESTATION'), /ALREADY_INCLUDED/);
});

proposals('a block from a peer: accepted, duplicate, unknown parent, future and registry-dependent faults benign, invalid with its code (sync/verdict.ts)', async (ctx) => {
  const h = harness(ctx);
  const chain = h.beacon.chain;
  // What gossip and range sync do with a peer's block: propose it, classify a refusal.
  const fromPeer = async (block: Block) => {
    try {
      const r = await chain.processBlock(block);
      return r.already_known ? 'duplicate' : 'accepted';
    } catch (err) {
      return classifyImportError(err);
    }
  };
  const slot = await nextSlot(h);
  const good = await buildProposal(h, { slot });
  const hash = toHex(blockHash(good.block.header));
  const orphan = await buildProposal(h, { slot, parentHash: new Uint8Array(32).fill(0x42) });
  assert.equal(await fromPeer(orphan.block), { kind: 'unknown_parent', reason: 'UNKNOWN_PARENT' });
  const forged = { ...good.block, signature: flipByte(good.block.signature, 9) };
  assert.equal(await fromPeer(forged), { kind: 'invalid', reason: 'INVALID_BLOCK_SIGNATURE' });
  const far = currentSlot(h) + 2;
  const future = await buildProposal(h, { slot: far, randaoReveal: good.reveal });
  assert.equal(await fromPeer(future.block), { kind: 'future', reason: 'FUTURE_SLOT' });
  // Included votes: an unknown validator may be known on the sender's branch (benign); a fault of the vote itself (here a
  // forged signature) is not (invalid).
  const stranger = signAttestation(1, { slot: 0, beaconBlockRoot: new Uint8Array(32), source: { epoch: 0, root: new Uint8Array(32) }, target: { epoch: 0, root: new Uint8Array(32) } }, h.validators[1]!.mldsa, h.genesis.chain_id);
  const unknown = await buildProposal(h, { slot, attestations: [{ ...stranger, validatorIndex: 9 }] });
  assert.equal(await fromPeer(unknown.block), { kind: 'local', reason: 'INVALID_ATTESTATION' });
  const badSig = await buildProposal(h, { slot, attestations: [{ ...stranger, validatorIndex: 0 }] });
  assert.equal(await fromPeer(badSig.block), { kind: 'invalid', reason: 'INVALID_ATTESTATION' });
  assert.is(await fromPeer(good.block), 'accepted');
  assert.is(await fromPeer(good.block), 'duplicate');
  assert.is((await beaconHead(h)).root, hash);
});

proposals('bad input on beacon routes: malformed JSON 400, malformed block 400, unknown route 404, bad params 400', async (ctx) => {
  const h = harness(ctx);
  const auth = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' };
  const before = await snapshot(h);
  for (const path of [PROPOSE, PROPOSAL_ALIAS, ATTEST]) {
    expectEnvelope(await http(h.beacon.url, path, { body: '{"header": ', headers: auth }), 400, 'INVALID_JSON');
    expectEnvelope(await http(h.beacon.url, path, { body: '[]', headers: auth }), 400, 'MALFORMED_INPUT');
  }
  const slot = await nextSlot(h);
  const body = blockToJson((await buildProposal(h, { slot })).block);
  expectEnvelope(await bpost(h, PROPOSE, { ...body, extra: 1 }), 400, 'MALFORMED_INPUT');
  expectEnvelope(await bpost(h, PROPOSE, { ...body, header: { ...body.header, timestamp: '1' } }), 400, 'MALFORMED_INPUT', /block\.header\.timestamp/);
  expectEnvelope(await bpost(h, PROPOSE, { ...body, signature: '0x' }), 400, 'MISSING_SIGNATURE');
  expectEnvelope(await bpost(h, PROPOSE, { ...body, header: { ...body.header, vrf_proof: '0x' } }), 400, 'MISSING_VRF_PROOF');

  expectEnvelope(await bget(h, '/api/v1/beacon/nope'), 404, 'NOT_FOUND', 'no route GET /api/v1/beacon/nope');
  expectEnvelope(await bpost(h, '/api/v1/validator/blocks/nope', body), 404, 'NOT_FOUND');

  for (const epoch of ['abc', '-1', '1.5', '0x1', '4294967296', '%20']) {
    expectEnvelope(await bget(h, `/api/v1/validator/duties/proposer/${epoch}`), 400, 'MALFORMED_INPUT', /^malformed epoch/);
  }
  const far = epochOfSlot(h.genesis, currentSlot(h)) + 2;
  expectEnvelope(await bget(h, `/api/v1/validator/duties/proposer/${far}`), 400, 'EPOCH_TOO_FAR');
  expectEnvelope(await bget(h, '/api/v1/validator/attestation_data'), 400, 'MALFORMED_INPUT', /slot/);
  expectEnvelope(await bget(h, '/api/v1/validator/attestation_data?slot=x'), 400, 'MALFORMED_INPUT', /slot/);
  // Each parameter is named as what it is (these once all said "malformed epoch").
  expectEnvelope(await bget(h, '/api/v1/validators/abc'), 400, 'MALFORMED_INPUT', 'malformed validator index');
  expectEnvelope(await bget(h, '/api/v1/validators/99'), 404, 'NOT_FOUND');
  expectEnvelope(await bget(h, '/api/v1/beacon/blocks/abc'), 400, 'MALFORMED_INPUT', 'malformed slot');
  expectEnvelope(await bget(h, `/api/v1/beacon/blocks/0x${'11'.repeat(32)}`), 404, 'NOT_FOUND');
  assert.equal(await snapshot(h), before, 'bad input changed nothing');
});

proposals('after a restart the beacon reports the head\'s canonical length before any new proposal', async (ctx) => {
  const h = harness(ctx);
  const head = await beaconHead(h);
  assert.ok(head.index > 0, 'the head is a signed block');
  await h.beacon.stop();
  h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir: join(h.dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
  assert.equal(await beaconHead(h), head, 'the same head after the restart');
  const metrics = await beaconMetrics(h);
  assert.is(sample(metrics, 'service_beacon_blocks_proposed_total'), 0, 'nothing proposed since the restart');
  assert.is(sample(metrics, 'quantum_canonical_bytes_len'), 3409, "re-encoded from the head's stored SignedHeader");
});

proposals.run();
