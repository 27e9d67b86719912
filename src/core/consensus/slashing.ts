/**
 * Slashing evidence: two signed messages of one validator that it must never sign together.
 * Evidence is self-contained (the two messages with their ML-DSA signatures), so anyone holding
 * the validator's public key and the chain id can verify it; nothing here reads any node's state.
 * This module holds the rules; the evidence's types and encodings are in
 * src/core/types/evidence.ts (re-exported here).
 *
 * - Proposer slashing (`double_proposal`): two canonical signed headers with the same validator
 *   index and the same timestamp (slot_seconds is an integer, so the same second is the same
 *   slot) and different SignedHeader bytes.
 * - Attester slashing: two signed attestations of one validator with different data that are a
 *   double vote (same target epoch, `double_vote`) or a surround vote (s1 < s2 and t2 < t1, in
 *   either order, `surround_vote`).
 */
import { bytesEqual } from '../codec/bytes.js';
import { SvcError } from '../errors.js';
import { verify } from '../crypto/mldsa.js';
import { verifyAttestation } from '../types/attestation.js';
import { encodeSignedHeader, headerSigningHash } from '../types/block.js';
import type { SlashingEvidence } from '../types/evidence.js';
import { AttestationDataSsz } from '../types/ssz.js';

export {
  type AttesterSlashing,
  type ProposerSlashing,
  type SignedBlockHeader,
  type SignedHeaderJson,
  type SlashingEvidence,
  type SlashingEvidenceJson,
  ATTESTER_SLASHING_BYTES,
  MAX_EVIDENCE_BYTES,
  PROPOSER_SLASHING_BYTES,
  PROPOSER_SLASHING_TYPE,
  attesterSlashing,
  decodeEvidence,
  encodeEvidence,
  evidenceFromJson,
  evidenceHash,
  evidenceToJson,
  proposerSlashing,
  slashingLeaf,
} from '../types/evidence.js';

/** What an offence is. */
export type SlashingKind = 'double_proposal' | 'double_vote' | 'surround_vote';

/** Why evidence is refused; anyone verifying evidence raises the same codes. */
export type SlashingErrorCode = 'NOT_CONFLICTING' | 'DIFFERENT_VALIDATORS' | 'INVALID_EVIDENCE_SIGNATURE' | 'WRONG_CHAIN' | 'ALREADY_SLASHED' | 'UNKNOWN_VALIDATOR' | 'DUPLICATE_EVIDENCE';

/** Evidence that does not prove an offence (or proves one already punished). */
export class SlashingError extends SvcError<SlashingErrorCode> {
  constructor(
    readonly slashingCode: SlashingErrorCode,
    message: string,
  ) {
    super(slashingCode, message);
  }
}

/** The validator an evidence accuses (the first message's; checkConflict requires both to agree). */
export function accusedIndex(ev: SlashingEvidence): number {
  return ev.type === 'proposer' ? ev.header1.header.validatorIndex : ev.attestation1.validatorIndex;
}

/**
 * What the two messages prove, checked on the messages alone (no signature, no registry):
 * same validator, and a double proposal, double vote or surround vote.
 */
export function checkConflict(ev: SlashingEvidence): SlashingKind {
  if (ev.type === 'proposer') {
    const [a, b] = [ev.header1.header, ev.header2.header];
    if (a.validatorIndex !== b.validatorIndex) throw new SlashingError('DIFFERENT_VALIDATORS', `headers of validators ${a.validatorIndex} and ${b.validatorIndex}`);
    if (a.chainId !== b.chainId) throw new SlashingError('NOT_CONFLICTING', `headers of chains ${a.chainId} and ${b.chainId}`);
    if (a.timestamp !== b.timestamp) throw new SlashingError('NOT_CONFLICTING', `headers of different slots (timestamps ${a.timestamp} and ${b.timestamp})`);
    if (bytesEqual(encodeSignedHeader(a), encodeSignedHeader(b))) throw new SlashingError('NOT_CONFLICTING', 'the two headers are the same SignedHeader');
    return 'double_proposal';
  }
  const [a, b] = [ev.attestation1, ev.attestation2];
  if (a.validatorIndex !== b.validatorIndex) throw new SlashingError('DIFFERENT_VALIDATORS', `attestations of validators ${a.validatorIndex} and ${b.validatorIndex}`);
  if (bytesEqual(AttestationDataSsz.serialize(a.data), AttestationDataSsz.serialize(b.data))) throw new SlashingError('NOT_CONFLICTING', 'the two attestations vote for the same data');
  const [s1, t1, s2, t2] = [a.data.source.epoch, a.data.target.epoch, b.data.source.epoch, b.data.target.epoch];
  if (t1 === t2) return 'double_vote';
  if ((s1 < s2 && t2 < t1) || (s2 < s1 && t1 < t2)) return 'surround_vote';
  throw new SlashingError('NOT_CONFLICTING', `votes ${s1}→${t1} and ${s2}→${t2} are neither a double nor a surround vote`);
}

/**
 * Verifies evidence completely: the messages conflict and both signatures verify under the
 * accused validator's `publicKey` on chain `chainId`. Returns the offence; throws SlashingError.
 */
export function verifyEvidence(ev: SlashingEvidence, publicKey: Uint8Array, chainId: string): SlashingKind {
  const kind = checkConflict(ev);
  if (ev.type === 'proposer') {
    for (const h of [ev.header1, ev.header2]) {
      if (h.header.chainId !== chainId) throw new SlashingError('WRONG_CHAIN', `header of chain ${h.header.chainId}, not ${chainId}`);
      if (!verify(publicKey, headerSigningHash(h.header), h.signature)) throw new SlashingError('INVALID_EVIDENCE_SIGNATURE', `header ${h === ev.header1 ? 1 : 2}: signature does not verify`);
    }
  } else {
    for (const [i, att] of [ev.attestation1, ev.attestation2].entries()) {
      if (!verifyAttestation(att, publicKey, chainId)) throw new SlashingError('INVALID_EVIDENCE_SIGNATURE', `attestation ${i + 1}: signature does not verify`);
    }
  }
  return kind;
}

/** What the block-evidence rule needs of an accused validator; undefined when not registered. */
export interface AccusedValidator {
  readonly slashed: boolean;
  readonly publicKey: () => Uint8Array;
}

/**
 * The rule the beacon and execution both apply to a block's evidence: each item accuses a
 * registered validator not yet slashed and not accused earlier in the block, and proves a
 * conflict under that validator's key (`verified(ev)` true skips the two signature checks for
 * evidence the caller verified before: its hash commits to both signatures). Returns the
 * accused indices in block order; throws SlashingError whose message names the item.
 */
export function checkBlockEvidence(evidence: readonly SlashingEvidence[], lookup: (index: number) => AccusedValidator | undefined, chainId: string, verified: (ev: SlashingEvidence) => boolean = () => false): number[] {
  const accused: number[] = [];
  evidence.forEach((ev, i) => {
    const index = accusedIndex(ev);
    try {
      const v = lookup(index);
      if (!v) throw new SlashingError('UNKNOWN_VALIDATOR', `no validator with index ${index}`);
      if (v.slashed) throw new SlashingError('ALREADY_SLASHED', `validator ${index} is already slashed`);
      if (accused.includes(index)) throw new SlashingError('DUPLICATE_EVIDENCE', `validator ${index} is accused twice in the block`);
      if (verified(ev)) checkConflict(ev);
      else verifyEvidence(ev, v.publicKey(), chainId);
      accused.push(index);
    } catch (err) {
      if (err instanceof SlashingError) throw new SlashingError(err.slashingCode, `slashing ${i}: ${err.message}`);
      throw err;
    }
  });
  return accused;
}

