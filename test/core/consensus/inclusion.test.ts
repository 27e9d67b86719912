/** Inclusion rules of a block's attestations: each rule's refusal, order, and the proposer's packing. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BLOCK_ATTESTATIONS } from '../../../src/core/constants.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { checkInclusion, InclusionError, type InclusionView, selectIncludable } from '../../../src/core/consensus/inclusion.js';
import { type Attestation, signAttestation, verifyAttestation } from '../../../src/core/types/attestation.js';
import { expectError, filled } from '../../helpers/assert.js';

const CHAIN = 'svc-test';
const SPE = 4;
const keys = [1, 2, 3].map((i) => keygenFromSeed(filled(32, i)));
const root = filled(32, 9);

function vote(index: number, slot: number, target = Math.floor(slot / SPE), key = keys[index]!): Attestation {
  return signAttestation(index, { slot, beaconBlockRoot: root, source: { epoch: 0, root }, target: { epoch: target, root } }, key, CHAIN);
}

/** Validators 0 and 1 active, 2 exited; `last` is the branch's last included target epochs. */
function view(blockSlot: number, last: Record<number, number> = {}): InclusionView & { verified: number } {
  const v = {
    verified: 0,
    blockSlot,
    slotsPerEpoch: SPE,
    validator: (i: number) => (i < 3 ? { active: i !== 2, publicKey: keys[i]!.publicKey } : undefined),
    lastIncluded: (i: number) => last[i],
    verify: (att: Attestation, pk: Uint8Array) => {
      v.verified++;
      return verifyAttestation(att, pk, CHAIN);
    },
  };
  return v;
}

function reason(atts: Attestation[], v: InclusionView): string {
  try {
    checkInclusion(atts, v);
  } catch (err) {
    assert.instance(err, InclusionError);
    assert.is((err as InclusionError).code, 'INVALID_ATTESTATION');
    return (err as InclusionError).reason;
  }
  return 'accepted';
}

test('valid votes are accepted and each records its first inclusion with the value it replaces', () => {
  const out = checkInclusion([vote(0, 4), vote(1, 5), vote(0, 9)], view(10, { 1: 0 }));
  assert.equal(out, [
    { validator: 0, epoch: 1, previous: null },
    { validator: 1, epoch: 1, previous: 0 },
    { validator: 0, epoch: 2, previous: 1 },
  ]);
  assert.equal(checkInclusion([], view(10)), []);
});

test('each rule has its own reason', () => {
  const forged = { ...vote(0, 5), validatorIndex: 7 };
  assert.is(reason([forged], view(10)), 'UNKNOWN_VALIDATOR');
  assert.is(reason([vote(2, 5)], view(10)), 'INACTIVE_VALIDATOR');
  assert.is(reason([vote(0, 10)], view(10)), 'NOT_BEFORE_BLOCK');
  assert.is(reason([vote(0, 11)], view(10)), 'NOT_BEFORE_BLOCK');
  assert.is(reason([vote(0, 5, 2)], view(10)), 'TARGET_EPOCH_MISMATCH');
  assert.is(reason([vote(0, 3)], view(8)), 'TARGET_EPOCH_OUT_OF_WINDOW');
  assert.is(reason([vote(0, 4)], view(8)), 'accepted');
  assert.is(reason([vote(0, 5), vote(0, 6)], view(10)), 'DUPLICATE_VOTE');
  assert.is(reason([vote(0, 5)], view(10, { 0: 1 })), 'ALREADY_INCLUDED');
  assert.is(reason([vote(0, 5)], view(10, { 0: 2 })), 'ALREADY_INCLUDED');
  // Within a block a validator's votes go in ascending target epoch.
  assert.is(reason([vote(0, 9), vote(0, 5)], view(10)), 'ALREADY_INCLUDED');
  assert.is(reason([vote(0, 5, 1, keys[1])], view(10)), 'INVALID_SIGNATURE');
  const tampered = vote(0, 5);
  tampered.signature = tampered.signature.slice();
  tampered.signature[0]! ^= 1;
  assert.is(reason([tampered], view(10)), 'INVALID_SIGNATURE');
  const many = Array.from({ length: MAX_BLOCK_ATTESTATIONS + 1 }, () => vote(0, 5));
  assert.is(reason(many, view(10)), 'TOO_MANY_ATTESTATIONS');
});

test('the error names the position of the offending attestation; signatures are checked last', () => {
  const v = view(10);
  expectError(() => checkInclusion([vote(0, 5), vote(1, 10)], v), InclusionError, { code: 'INVALID_ATTESTATION', messageStartsWith: 'attestation 1: NOT_BEFORE_BLOCK' });
  assert.is(v.verified, 1, 'the refused vote was never verified');
});

test('selectIncludable packs what checkInclusion accepts: drops invalid, duplicate and already included votes, orders by target epoch', () => {
  const candidates = [vote(0, 9), vote(1, 5), vote(0, 5), vote(0, 6), vote(2, 5), vote(1, 10), vote(0, 1, 0), { ...vote(1, 7), signature: new Uint8Array(3309) }];
  const v = view(10, { 1: 1 });
  const picked = selectIncludable(candidates, v);
  assert.equal(picked.map((a) => [a.validatorIndex, a.data.slot]), [[0, 5], [0, 9]]);
  checkInclusion(picked, view(10, { 1: 1 }));
  assert.is(selectIncludable(Array.from({ length: 3 }, (_, i) => vote(i % 2, 5 + i)), view(10), 1).length, 1);
});

test.run();
