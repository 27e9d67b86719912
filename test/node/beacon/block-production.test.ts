/**
 * GET /api/v1/validator/blocks/:slot against a real beacon and execution: the beacon builds the
 * slot's block on its head (parent, height, timestamp, the duty's seed, the parent's post-state
 * root, execution's pending transactions and the pooled votes under one Merkle root), the
 * proposer writes its VRF proof, RANDAO reveal and signature in place, and the beacon accepts
 * the result. Refusals: another validator's slot (WRONG_PROPOSER), a slot the head has passed
 * (INVALID_SLOT), no token (401), malformed slot or index (400).
 */
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { vrfProve } from '../../../src/core/crypto/vrf.js';
import { slotStartMs } from '../../../src/core/genesis/genesis.js';
import { blockMerkleRoot, decodeBlock, signBlock } from '../../../src/core/types/block.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { envelopesOfBlockBytes, headerOfBlockBytes, withProposerFields } from '../../../src/core/types/block-bytes.js';
import { BeaconClient, BeaconClientError } from '../../../src/client/beacon.js';
import { http, submit } from '../execution/fixture.js';
import { bget, currentSlot, dutyOf, type Harness, harnessSuite, okData, parentStateRoot, randaoChain, transferTx } from './fixture.js';

const test = harnessSuite('beacon: block production', { validators: 2 });

/** The harness, or the reason it did not start. */
function harness(ctx: { h?: Harness; startError?: unknown }): Harness {
  if (!ctx.h) throw ctx.startError;
  return ctx.h;
}

async function refusal(p: Promise<unknown>): Promise<BeaconClientError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, BeaconClientError);
    return err as BeaconClientError;
  }
  return assert.unreachable('expected a refusal') as never;
}

test('the beacon builds the slot\'s block on its head; the proposer signs it in place and the beacon accepts it', async (ctx) => {
  const h = harness(ctx);
  const tx = transferTx(h, h.accounts[0]!, 0n);
  assert.is((await submit(h.exec, tx)).status, 202);
  const head = okData(await bget(h, '/api/v1/beacon/head'));
  const slot = currentSlot(h);
  const duty = await dutyOf(h, slot);
  const v = duty.validator_index;
  const client = new BeaconClient(h.beacon.url, { token: h.token });
  const t = await client.produceBlock(slot, v);
  assert.is(t.slot, slot);
  assert.is(t.proposerIndex, v);
  const header = headerOfBlockBytes(t.block);
  assert.is(toHex(header.parentHash), head.root, 'built on the head');
  assert.is(header.index, head.index + 1);
  assert.is(header.timestampMs, slotStartMs(h.genesis, slot));
  assert.is(toHex(header.validatorId), duty.address);
  assert.is(toHex(header.vrfSeed), duty.vrf_seed, "the duty's seed");
  assert.is(toHex(header.stateRoot), toHex(await parentStateRoot(h, header.parentHash)), "the parent's post-state root from execution");
  const envelopes = envelopesOfBlockBytes(t.block);
  assert.equal(envelopes.map((e) => toHex(sha3(e))), [toHex(sha3(encodeTx(tx)))], "execution's pending transaction");
  const block = decodeBlock(t.block);
  assert.is(toHex(header.merkleRoot), toHex(blockMerkleRoot(envelopes.map((e) => sha3(e)), block.attestations, block.slashings)), 'one Merkle root over transactions, votes and evidence');
  assert.ok(header.vrfProof.every((b) => b === 0) && header.randaoReveal.every((b) => b === 0) && block.signature.every((b) => b === 0), 'the proposer\'s fields are left to it');

  // The proposer's part: reveal, VRF proof, signature, written in place.
  const key = h.validators[v]!;
  const chain = randaoChain(h, v);
  const randaoReveal = chain.next(t.randaoLast ?? chain.commitment());
  const vrfProof = vrfProve(key.mldsa, header.vrfSeed, h.genesis.chain_id);
  const { signature } = signBlock(header, [], key.mldsa, h.genesis.chain_id, v);
  const accepted = await client.proposeBlock(withProposerFields(t.block, { vrfProof, randaoReveal, signature }));
  assert.is(accepted.slot, slot);
  const after = okData(await bget(h, '/api/v1/beacon/head'));
  assert.is(after.root, accepted.block_hash, 'the signed template is the new head');
  assert.is(okData(await http(h.exec.restUrl, `/api/v1/blocks/${accepted.block_hash}`)).transactions.length, 1, 'execution applied it with the transaction');

  // The head is now at the slot: no second block for it.
  const again = await refusal(client.produceBlock(slot, v));
  assert.equal([again.code, again.httpStatus], ['INVALID_SLOT', 400]);
});

test('refusals: another validator\'s slot, no token, malformed slot and index; JSON for a caller that asks for it', async (ctx) => {
  const h = harness(ctx);
  const slot = currentSlot(h) + 1;
  const duty = await dutyOf(h, slot);
  const other = duty.validator_index === 0 ? 1 : 0;
  const client = new BeaconClient(h.beacon.url, { token: h.token });
  const wrong = await refusal(client.produceBlock(slot, other));
  assert.equal([wrong.code, wrong.httpStatus], ['WRONG_PROPOSER', 400]);
  assert.match(wrong.message, new RegExp(`validator ${other} is not the proposer of slot ${slot}`));
  const noToken = await refusal(new BeaconClient(h.beacon.url).produceBlock(slot, duty.validator_index));
  assert.equal([noToken.code, noToken.httpStatus], ['UNAUTHORIZED', 401]);
  const auth = { authorization: `Bearer ${h.token}` };
  for (const path of [`/api/v1/validator/blocks/x?proposer_index=0`, `/api/v1/validator/blocks/${slot}`, `/api/v1/validator/blocks/${slot}?proposer_index=-1`, `/api/v1/validator/blocks/${2 ** 40}?proposer_index=0`]) {
    const r = await bget(h, path, auth);
    assert.is(r.status, 400, `${path}: ${r.text}`);
    assert.is(r.body.error.code, 'MALFORMED_INPUT', path);
  }
  // Without Accept: application/octet-stream, the same template as JSON.
  const json = okData(await bget(h, `/api/v1/validator/blocks/${slot}?proposer_index=${duty.validator_index}`, auth));
  assert.equal(Object.keys(json).sort(), ['block', 'dependent_root', 'proposer_index', 'randao_last', 'slot']);
  assert.is(json.slot, slot);
  assert.is(json.block.header.vrf_seed, duty.vrf_seed);
  assert.is(parseHex(json.dependent_root, 'dependent_root', 32).length, 32);
});

test.run();
