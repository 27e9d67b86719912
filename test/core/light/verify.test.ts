/**
 * The light client's pure checks (src/core/light/): a finality update signed by 3 of 4 equal
 * validators verifies; every tamper fails with the code naming it (signatures dropped below 2/3,
 * a bad signature, a duplicated signer, an unknown signer, a bitfield that lies, votes for another
 * link, a forged header); header chains (forged header, wrong parent link, skipped height); account
 * proofs against the header's state_root (altered balance, altered proof node, wrong address).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { type Attestation, type AttestationData, signAttestation } from '../../../src/core/types/attestation.js';
import { type BlockHeader, blockHash } from '../../../src/core/types/block.js';
import { type AccountProofWire, EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, trieProof, trieRoot } from '../../../src/core/state/trie.js';
import { type FinalityUpdate, LightClientError, type TrustedState, type TrustedValidator, bitfieldSize, finalityUpdateFromJson, parseServed, pinnedValidatorsFromJson, sameValidatorSet } from '../../../src/core/light/types.js';
import { participants, participationBits, verifyAccountAgainstHeader, verifyAncestry, verifyFinalityUpdate } from '../../../src/core/light/verify.js';
import { expectError, filled, flipByte } from '../../helpers/assert.js';

const CHAIN = 'svc-light';
const SPE = 4;
const keys = [0, 1, 2, 3].map((i) => keygenFromSeed(filled(32, i + 1)));
const STAKE = 32n * 10n ** 18n;
const validators = new Map<number, TrustedValidator>(keys.map((k, i) => [i, { index: i, publicKey: k.publicKey, stake: STAKE, active: true }]));
const trusted: TrustedState = { chainId: CHAIN, slotsPerEpoch: SPE, root: filled(32, 0xee), validators };

// A state with two accounts; headers name its root.
const ALICE = '0x' + 'a1'.repeat(20);
const BOB = '0x' + 'b2'.repeat(20);
const account = (balance: bigint) => encodeAccountValue({ balance, nonce: 3n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT });
const entries = [[accountKey(ALICE), account(5_000n)], [accountKey(BOB), account(7n)]] as const;
const stateRoot = trieRoot(entries);

function header(index: number, parentHash: Uint8Array, root = stateRoot): BlockHeader {
  return { index, timestampMs: 1_000 * index, parentHash, merkleRoot: filled(32, index), validatorId: filled(20, 1), vrfProof: filled(3309, 2), vrfSeed: filled(32, 3), randaoReveal: filled(32, 4), stateRoot: root };
}

// Headers 5 ← 6 ← 7 ← 8; 8 is the finalized checkpoint block of epoch 2.
const h5 = header(5, filled(32, 0x55));
const h6 = header(6, blockHash(h5));
const h7 = header(7, blockHash(h6));
const h8 = header(8, blockHash(h7));
const finalizedRoot = blockHash(h8);
const targetRoot = filled(32, 0x77);

const data = (slot = 13): AttestationData => ({ slot, beaconBlockRoot: targetRoot, source: { epoch: 2, root: finalizedRoot }, target: { epoch: 3, root: targetRoot } });
const vote = (i: number, d: AttestationData = data()): Attestation => signAttestation(i, d, keys[i]!, CHAIN);
const votes = [0, 1, 2].map((i) => vote(i));

function update(atts: Attestation[] = votes, o: Partial<FinalityUpdate> = {}): FinalityUpdate {
  return { finalized: { epoch: 2, root: finalizedRoot }, target: { epoch: 3, root: targetRoot }, header: h8, attestations: atts, participation: o.participation ?? participationBits(atts.map((a) => a.validatorIndex), 4), ...o };
}

function fails(fn: () => unknown, code: string, includes: string): void {
  const e = expectError(fn, LightClientError);
  assert.is(e.code, code, e.message);
  assert.ok(e.message.includes(includes), `${JSON.stringify(e.message)} should include ${JSON.stringify(includes)}`);
}

test('participation bitfield: bit i is byte i >> 3, bit i & 7; round trip', () => {
  assert.is(toHex(participationBits([0, 2, 9], 10)), '0x0502');
  assert.equal(participants(participationBits([0, 2, 9], 10)), [0, 2, 9]);
  assert.throws(() => participationBits([10], 10), /outside/);
});

test('a finality update signed by 3 of 4 equal stakes verifies', () => {
  const v = verifyFinalityUpdate(update(), trusted);
  assert.is(v.epoch, 2);
  assert.is(v.signers, 3);
  assert.is(v.signedStake, 3n * STAKE);
  assert.is(v.activeStake, 4n * STAKE);
  assert.is(toHex(v.root), toHex(finalizedRoot));
});

test('signatures dropped below 2/3 (bitfield consistent): LIGHT_INSUFFICIENT_STAKE', () => {
  fails(() => verifyFinalityUpdate(update(votes.slice(0, 2)), trusted), 'LIGHT_INSUFFICIENT_STAKE', 'below 2/3');
  // Exactly 2/3 passes (3 × signed ≥ 2 × active): 2 of 3 active validators.
  const three = new Map([...validators].slice(0, 3));
  assert.is(verifyFinalityUpdate(update(votes.slice(0, 2)), { ...trusted, validators: three }).signers, 2);
  // An exited validator's stake is not counted as active, nor its vote.
  const exited = new Map(validators);
  exited.set(2, { ...validators.get(2)!, active: false });
  fails(() => verifyFinalityUpdate(update(), { ...trusted, validators: exited }), 'LIGHT_UNKNOWN_SIGNER', 'validator 2 is not an active validator');
});

test('a bad signature, a duplicated signer, an unknown signer each fail by name', () => {
  const bad = { ...votes[1]!, signature: flipByte(votes[1]!.signature, 100) };
  fails(() => verifyFinalityUpdate(update([votes[0]!, bad, votes[2]!]), trusted), 'LIGHT_BAD_SIGNATURE', 'attestation of validator 1: signature verification failed');
  // A vote signed by another key under validator 1's index.
  const forged = signAttestation(1, data(), keys[3]!, CHAIN);
  fails(() => verifyFinalityUpdate(update([votes[0]!, forged, votes[2]!]), trusted), 'LIGHT_BAD_SIGNATURE', 'validator 1');
  // Another chain's signature does not verify either.
  fails(() => verifyFinalityUpdate(update([votes[0]!, signAttestation(1, data(), keys[1]!, 'other-chain'), votes[2]!]), trusted), 'LIGHT_BAD_SIGNATURE', 'validator 1');
  const dup = update([votes[0]!, votes[1]!, vote(1, data(14))], { participation: participationBits([0, 1], 4) });
  fails(() => verifyFinalityUpdate(dup, trusted), 'LIGHT_DUPLICATE_SIGNER', 'validator 1 signs the finality update twice');
  const stranger = keygenFromSeed(filled(32, 9));
  const five = signAttestation(5, data(), stranger, CHAIN);
  // Outside the trusted set's bitfield: a registry that grew since shows as a longer bitfield.
  fails(() => verifyFinalityUpdate(update([...votes, five], { participation: participationBits([0, 1, 2, 5], 8) }), trusted), 'LIGHT_NONCANONICAL', 'sets bits above validator 3');
  fails(() => verifyFinalityUpdate(update([...votes, five], { participation: participationBits([0, 1, 2, 5], 9) }), trusted), 'LIGHT_NONCANONICAL', 'follow its set changes first');
  const withFive = new Map([...validators, [4, { index: 4, publicKey: keys[3]!.publicKey, stake: STAKE, active: false }], [5, { index: 5, publicKey: keys[3]!.publicKey, stake: STAKE, active: false }]]);
  fails(() => verifyFinalityUpdate(update([...votes, five], { participation: participationBits([0, 1, 2, 5], 6) }), { ...trusted, validators: withFive }), 'LIGHT_UNKNOWN_SIGNER', 'follow its set changes first');
});

test('a bitfield that does not match the signers fails', () => {
  fails(() => verifyFinalityUpdate(update(votes, { participation: participationBits([0, 1, 2, 3], 4) }), trusted), 'LIGHT_BITFIELD_MISMATCH', 'names validators [0, 1, 2, 3]');
  fails(() => verifyFinalityUpdate(update(votes.slice(1), { participation: participationBits([0, 1, 2], 4) }), trusted), 'LIGHT_BITFIELD_MISMATCH', 'signed by [1, 2]');
});

test('one canonical form: exactly ceil(n / 8) bitfield bytes, no bits above the set, attestations by ascending index', () => {
  assert.is(bitfieldSize(validators), 4);
  const bits = participationBits([0, 1, 2], 4);
  assert.is(toHex(bits), '0x07');
  fails(() => verifyFinalityUpdate(update(votes, { participation: Uint8Array.of(0x07, 0x00) }), trusted), 'LIGHT_NONCANONICAL', 'is 2 bytes, the trusted set of 4 validators needs exactly 1');
  fails(() => verifyFinalityUpdate(update(votes, { participation: new Uint8Array(0) }), trusted), 'LIGHT_NONCANONICAL', 'is 0 bytes');
  fails(() => verifyFinalityUpdate(update(votes, { participation: Uint8Array.of(0x17) }), trusted), 'LIGHT_NONCANONICAL', 'sets bits above validator 3');
  fails(() => verifyFinalityUpdate(update([votes[1]!, votes[0]!, votes[2]!]), trusted), 'LIGHT_NONCANONICAL', 'not sorted by validator index: 0 follows 1');
  // A duplicate is named as such, in or out of order.
  fails(() => verifyFinalityUpdate(update([votes[0]!, votes[1]!, votes[1]!, votes[2]!]), trusted), 'LIGHT_DUPLICATE_SIGNER', 'validator 1 signs');
  // A set of 9 takes two bytes; only bit 0 of the second may be used.
  const nine = new Map([...validators, ...[4, 5, 6, 7, 8].map((i) => [i, { index: i, publicKey: keys[0]!.publicKey, stake: 0n, active: false }] as const)]);
  assert.is(verifyFinalityUpdate(update(votes, { participation: Uint8Array.of(0x07, 0x00) }), { ...trusted, validators: nine }).signers, 3);
  fails(() => verifyFinalityUpdate(update(votes, { participation: Uint8Array.of(0x07, 0x02) }), { ...trusted, validators: nine }), 'LIGHT_NONCANONICAL', 'above validator 8');
});

test('a pinned validator set parses from the bootstrap format, bare or in an object; sets compare by index, key, stake, activity', () => {
  const json = [...validators.values()].map((v) => ({ index: v.index, public_key: toHex(v.publicKey), stake: v.stake.toString(), active: v.active }));
  const pinned = pinnedValidatorsFromJson(json);
  assert.ok(sameValidatorSet(pinned, validators));
  assert.ok(sameValidatorSet(pinnedValidatorsFromJson({ validators: json }), validators));
  assert.not.ok(sameValidatorSet(pinnedValidatorsFromJson(json.slice(1)), validators));
  assert.not.ok(sameValidatorSet(pinnedValidatorsFromJson([{ ...json[0]!, stake: '1' }, ...json.slice(1)]), validators));
  assert.not.ok(sameValidatorSet(pinnedValidatorsFromJson([{ ...json[0]!, public_key: json[1]!.public_key }, ...json.slice(1)]), validators));
  assert.not.ok(sameValidatorSet(pinnedValidatorsFromJson([{ ...json[0]!, active: false }, ...json.slice(1)]), validators));
  assert.throws(() => pinnedValidatorsFromJson([]), /empty/);
  assert.throws(() => pinnedValidatorsFromJson({ nodes: json }), /expected an array/);
  assert.throws(() => pinnedValidatorsFromJson([json[0], json[0]]), /listed twice/);
  assert.throws(() => pinnedValidatorsFromJson([{ ...json[0]!, public_key: '0x12' }]), /public_key/);
  assert.throws(() => pinnedValidatorsFromJson([{ ...json[0]!, extra: 1 }]), /extra/);
});

test('votes for another link, or from outside the target epoch, are not the finalizing link', () => {
  const otherTarget = { ...data(), target: { epoch: 3, root: filled(32, 0x78) } };
  fails(() => verifyFinalityUpdate(update([votes[0]!, votes[1]!, vote(2, otherTarget)]), trusted), 'LIGHT_NOT_FINALIZING_LINK', 'attestation of validator 2');
  const otherSource = { ...data(), source: { epoch: 1, root: finalizedRoot } };
  fails(() => verifyFinalityUpdate(update([votes[0]!, votes[1]!, vote(2, otherSource)]), trusted), 'LIGHT_NOT_FINALIZING_LINK', 'not the finalizing link 2 → 3');
  fails(() => verifyFinalityUpdate(update([votes[0]!, votes[1]!, vote(2, data(16))]), trusted), 'LIGHT_NOT_FINALIZING_LINK', 'slot 16 is not in its target epoch 3');
  // A k = 2 link (2 → 4) does not finalize epoch 2 under the beacon's rule.
  fails(() => verifyFinalityUpdate(update(votes, { target: { epoch: 4, root: targetRoot } }), trusted), 'LIGHT_NOT_FINALIZING_LINK', 'target epoch 4 is not the epoch after the finalized epoch 2');
});

test('a forged header (another state root) does not hash to the finalized root', () => {
  fails(() => verifyFinalityUpdate(update(votes, { header: { ...h8, stateRoot: filled(32, 0x11) } }), trusted), 'LIGHT_HEADER_MISMATCH', 'not the finalized root');
  fails(() => verifyFinalityUpdate(update(), trusted, { minEpoch: 3 }), 'LIGHT_STALE_UPDATE', 'older than the trusted epoch 3');
});

test('ancestry: the chain back from a verified root verifies; a forged header, a wrong parent link or a skipped height fails', () => {
  assert.is(verifyAncestry(finalizedRoot, [h8, h7, h6, h5]).index, 5);
  assert.is(verifyAncestry(finalizedRoot, [h8]).index, 8);
  fails(() => verifyAncestry(finalizedRoot, []), 'LIGHT_ANCESTRY_BROKEN', 'empty');
  fails(() => verifyAncestry(finalizedRoot, [h8, { ...h7, merkleRoot: filled(32, 0x99) }, h6]), 'LIGHT_ANCESTRY_BROKEN', 'header 1 (index 7)');
  fails(() => verifyAncestry(finalizedRoot, [h8, h6]), 'LIGHT_ANCESTRY_BROKEN', 'the parent_hash of header 8');
  fails(() => verifyAncestry(blockHash(h7), [h8, h7]), 'LIGHT_ANCESTRY_BROKEN', 'the verified root');
  // A header whose hash links but whose index skips is refused.
  const skip = header(3, filled(32, 0x33));
  const top = header(9, blockHash(skip));
  fails(() => verifyAncestry(blockHash(top), [top, skip]), 'LIGHT_ANCESTRY_BROKEN', 'index 3, its child 9');
});

function proofOf(address: string): AccountProofWire {
  return {
    address,
    stateRoot: toHex(stateRoot),
    balance: address === ALICE ? '5000' : address === BOB ? '7' : '0',
    nonce: address === ALICE || address === BOB ? 3 : 0,
    codeHash: toHex(address === ALICE || address === BOB ? EMPTY_CODE_HASH : EMPTY_CODE_HASH),
    storageHash: toHex(EMPTY_TRIE_ROOT),
    accountProof: trieProof(entries, accountKey(address)).map((n) => toHex(n)),
    storageProof: [],
  };
}

test('account proofs against the header state_root: presence and absence verify; altered balance, node or address fail', () => {
  const a = verifyAccountAgainstHeader(h8, ALICE, proofOf(ALICE));
  assert.is(a.balance, 5_000n);
  assert.is(a.nonce, 3n);
  const absent = '0x' + 'c3'.repeat(20);
  assert.is(verifyAccountAgainstHeader(h8, absent, proofOf(absent)).balance, 0n);
  fails(() => verifyAccountAgainstHeader(h8, ALICE, { ...proofOf(ALICE), balance: '5001' }), 'LIGHT_PROOF_INVALID', 'does not verify against state_root');
  const nodes = proofOf(ALICE).accountProof;
  const altered = nodes.map((n, i) => (i === nodes.length - 1 ? n.slice(0, -2) + (n.endsWith('0') ? '1' : '0') : n));
  fails(() => verifyAccountAgainstHeader(h8, ALICE, { ...proofOf(ALICE), accountProof: altered }), 'LIGHT_PROOF_INVALID', 'does not verify');
  fails(() => verifyAccountAgainstHeader(h8, ALICE, proofOf(BOB)), 'LIGHT_PROOF_INVALID', `the proof is for ${BOB}`);
  // A header naming another state refuses a proof of this one.
  fails(() => verifyAccountAgainstHeader(header(8, blockHash(h7), filled(32, 0x12)), ALICE, proofOf(ALICE)), 'LIGHT_PROOF_INVALID', 'does not verify');
  // A requested storage key without its proof is named.
  fails(() => verifyAccountAgainstHeader(h8, ALICE, proofOf(ALICE), ['0x' + '00'.repeat(32)]), 'LIGHT_PROOF_INVALID', 'no storage proof for key');
});

test('served JSON is parsed strictly: a malformed update is LIGHT_MALFORMED naming the field', () => {
  fails(() => parseServed('finality update', () => finalityUpdateFromJson({ finalized: { epoch: 2, root: '0x12' } })), 'LIGHT_MALFORMED', 'finality update: malformed finality_update.attestations');
});

test.run();
