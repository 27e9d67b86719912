/** Slashing evidence: conflicts, full verification with real ML-DSA keys, every forged case, codecs, block inclusion. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { MalformedError } from '../../../src/core/errors.js';
import {
  ATTESTER_SLASHING_BYTES,
  PROPOSER_SLASHING_BYTES,
  type SignedBlockHeader,
  type SlashingEvidence,
  SlashingError,
  attesterSlashing,
  checkConflict,
  decodeEvidence,
  encodeEvidence,
  evidenceFromJson,
  evidenceHash,
  evidenceToJson,
  proposerSlashing,
  slashingLeaf,
  verifyEvidence,
} from '../../../src/core/consensus/slashing.js';
import { type AttestationData, signAttestation } from '../../../src/core/types/attestation.js';
import { type SignedHeader, blockFromJson, blockMerkleRoot, blockToJson, decodeBlock, encodeBlock, headerSigningHash, signBlock, type BlockHeader } from '../../../src/core/types/block.js';
import { merkleRoot } from '../../../src/core/types/merkle.js';
import { sign } from '../../../src/core/crypto/mldsa.js';
import { bytesIs, expectError, filled, flipByte } from '../../helpers/assert.js';

const CHAIN = 'svc-test';
const key = keygenFromSeed(filled(32, 7));
const other = keygenFromSeed(filled(32, 8));

function signedHeader(over: Partial<SignedHeader> = {}, k = key): SignedBlockHeader {
  const header: SignedHeader = { chainId: CHAIN, index: 5, timestamp: 1_800_000_010, parentHash: filled(32, 1), merkleRoot: filled(32, 2), validatorIndex: 3, ...over };
  return { header, signature: sign(k.secretKey, headerSigningHash(header), { deterministic: true }) };
}

function vote(source: number, target: number, root = 9, slot = target * 4): AttestationData {
  return { slot, beaconBlockRoot: filled(32, root), source: { epoch: source, root: filled(32, 20 + source) }, target: { epoch: target, root: filled(32, 40 + target) } };
}

const att = (index: number, data: AttestationData, k = key) => signAttestation(index, data, k, CHAIN);

const doubleProposal = () => proposerSlashing(signedHeader(), signedHeader({ merkleRoot: filled(32, 3) }));
const doubleVote = () => attesterSlashing(att(3, vote(1, 2, 9)), att(3, vote(1, 2, 10)));
const surround = () => attesterSlashing(att(3, vote(1, 4)), att(3, vote(2, 3)));

function refused(fn: () => unknown, code: string): void {
  const err = expectError(fn, SlashingError, { code });
  assert.is(err.slashingCode, code);
}

test('each offence verifies under the validator key and names its kind', () => {
  assert.is(verifyEvidence(doubleProposal(), key.publicKey, CHAIN), 'double_proposal');
  assert.is(verifyEvidence(doubleVote(), key.publicKey, CHAIN), 'double_vote');
  assert.is(verifyEvidence(surround(), key.publicKey, CHAIN), 'surround_vote');
  // Surround in the other order is the same offence, with the same (canonical) encoding.
  const reversed = attesterSlashing(att(3, vote(2, 3)), att(3, vote(1, 4)));
  assert.is(verifyEvidence(reversed, key.publicKey, CHAIN), 'surround_vote');
  bytesIs(evidenceHash(reversed), evidenceHash(surround()));
});

test('forged: a signature by another key, or a tampered signature, is INVALID_EVIDENCE_SIGNATURE', () => {
  refused(() => verifyEvidence(doubleProposal(), other.publicKey, CHAIN), 'INVALID_EVIDENCE_SIGNATURE');
  const forgedVote = attesterSlashing(att(3, vote(1, 2, 9)), att(3, vote(1, 2, 10), other));
  refused(() => verifyEvidence(forgedVote, key.publicKey, CHAIN), 'INVALID_EVIDENCE_SIGNATURE');
  const h = signedHeader({ merkleRoot: filled(32, 3) });
  const tampered = proposerSlashing(signedHeader(), { ...h, signature: flipByte(h.signature, 100) });
  refused(() => verifyEvidence(tampered, key.publicKey, CHAIN), 'INVALID_EVIDENCE_SIGNATURE');
});

test('forged: messages that do not conflict are NOT_CONFLICTING', () => {
  // Same header twice, headers of different slots, the same vote twice, and a plain later vote.
  refused(() => checkConflict(proposerSlashing(signedHeader(), signedHeader())), 'NOT_CONFLICTING');
  refused(() => checkConflict(proposerSlashing(signedHeader(), signedHeader({ timestamp: 1_800_000_016, merkleRoot: filled(32, 3) }))), 'NOT_CONFLICTING');
  refused(() => checkConflict(attesterSlashing(att(3, vote(1, 2)), att(3, vote(1, 2)))), 'NOT_CONFLICTING');
  refused(() => verifyEvidence(attesterSlashing(att(3, vote(1, 2)), att(3, vote(2, 3))), key.publicKey, CHAIN), 'NOT_CONFLICTING');
  // Same source, nested target: s1 < s2 is required, so not a surround.
  refused(() => checkConflict(attesterSlashing(att(3, vote(1, 4)), att(3, vote(1, 3)))), 'NOT_CONFLICTING');
});

test('forged: messages of two validators are DIFFERENT_VALIDATORS', () => {
  refused(() => checkConflict(proposerSlashing(signedHeader(), signedHeader({ validatorIndex: 4, merkleRoot: filled(32, 3) }, other))), 'DIFFERENT_VALIDATORS');
  refused(() => checkConflict(attesterSlashing(att(3, vote(1, 2, 9)), att(4, vote(1, 2, 10), other))), 'DIFFERENT_VALIDATORS');
});

test('evidence of another chain is WRONG_CHAIN', () => {
  const ev = proposerSlashing(signedHeader({ chainId: 'other' }), signedHeader({ chainId: 'other', merkleRoot: filled(32, 3) }));
  refused(() => verifyEvidence(ev, key.publicKey, CHAIN), 'WRONG_CHAIN');
  assert.is(verifyEvidence(ev, key.publicKey, 'other'), 'double_proposal');
});

test('wire encoding: fixed sizes, round trip, canonical order, malformed input', () => {
  const cases: SlashingEvidence[] = [doubleProposal(), doubleVote(), surround()];
  for (const ev of cases) {
    const bytes = encodeEvidence(ev);
    assert.is(bytes.length, ev.type === 'proposer' ? PROPOSER_SLASHING_BYTES : ATTESTER_SLASHING_BYTES);
    bytesIs(encodeEvidence(decodeEvidence(bytes)), bytes);
    assert.equal(evidenceToJson(evidenceFromJson(JSON.parse(JSON.stringify(evidenceToJson(ev))))), evidenceToJson(ev));
  }
  assert.is(PROPOSER_SLASHING_BYTES, 1 + 2 * 3409);
  const p = doubleProposal();
  // Swapped halves decode to the same canonical evidence.
  const swapped = proposerSlashing(p.header2, p.header1);
  assert.is(toHex(evidenceHash(swapped)), toHex(evidenceHash(p)));
  expectError(() => decodeEvidence(new Uint8Array(0)), MalformedError, { field: 'slashing' });
  expectError(() => decodeEvidence(encodeEvidence(p).subarray(0, 100)), MalformedError, { field: 'slashing' });
  const wrongType = encodeEvidence(p);
  wrongType[0] = 2;
  expectError(() => decodeEvidence(wrongType), MalformedError, { field: 'slashing' });
  // A chain id that is not canonically padded.
  const badChain = encodeEvidence(p);
  badChain[1] = 0;
  expectError(() => decodeEvidence(badChain), MalformedError, { field: 'slashing.header_1.chain_id' });
  expectError(() => evidenceFromJson({ type: 'other' }), MalformedError, { field: 'slashing.type' });
  expectError(() => evidenceFromJson({ type: 'proposer', header_1: {}, header_2: {} }), MalformedError);
  expectError(() => evidenceFromJson({ ...evidenceToJson(p), extra: 1 }), MalformedError, { field: 'slashing.extra' });
  expectError(() => evidenceFromJson('x'), MalformedError, { field: 'slashing' });
});

test('blocks carry slashings: covered by merkle_root after the other leaves, SSZ and JSON round trip', () => {
  const ev = doubleVote();
  bytesIs(blockMerkleRoot([], [], []), merkleRoot([]));
  bytesIs(blockMerkleRoot([filled(32, 5)], [], [ev]), merkleRoot([filled(32, 5), slashingLeaf(ev)]));
  const header: BlockHeader = { index: 1, timestampMs: 1_800_000_010_000, parentHash: filled(32, 1), merkleRoot: blockMerkleRoot([], [], [ev]), validatorId: filled(20, 1), vrfProof: filled(3309, 0), vrfSeed: filled(32, 2), randaoReveal: filled(32, 3), stateRoot: filled(32, 4) };
  const block = signBlock(header, [], key, CHAIN, 3, [], [ev]);
  const back = decodeBlock(encodeBlock(block));
  assert.is(back.slashings.length, 1);
  bytesIs(evidenceHash(back.slashings[0]!), evidenceHash(ev));
  const json = blockToJson(block);
  assert.is(json.slashings.length, 1);
  bytesIs(evidenceHash(blockFromJson(JSON.parse(JSON.stringify(json))).slashings[0]!), evidenceHash(ev));
  // Absent means none (older JSON), and more than the cap is malformed.
  const { slashings: _s, ...noField } = json;
  assert.is(blockFromJson(noField).slashings.length, 0);
  expectError(() => blockFromJson({ ...json, slashings: Array(17).fill(json.slashings[0]) }), MalformedError, { field: 'block.slashings' });
});

test.run();
