/**
 * Which attestations a block may include: one pure rule set that the proposer's packing, the
 * beacon's proposal checks and execution's import all run, so the layers cannot disagree about
 * a block's votes, and therefore about its state root.
 *
 * Per included attestation, in block order:
 * - its validator is in the registry and active;
 * - `data.slot` is before the block's slot, and its target epoch is `data.slot`'s epoch;
 * - its target epoch is the block's epoch or the one before (a vote is includable for one epoch
 *   after its own, so the branch's votes are settled two epochs on);
 * - its target epoch is above the highest target epoch of that validator's votes already
 *   included on the block's branch or earlier in the block (so (validator, target epoch) is
 *   included at most once per branch, and a duplicate in one block is refused);
 * - its ML-DSA signature verifies under the validator's key.
 *
 * The per-validator "last included target epoch" is all the history the rule needs, so checking
 * a block costs O(its attestations).
 */
import { MAX_BLOCK_ATTESTATIONS } from '../constants.js';
import { SvcError } from '../errors.js';
import type { Attestation } from '../types/attestation.js';

/** Which rule an included attestation breaks. */
export type InclusionReason =
  | 'TOO_MANY_ATTESTATIONS'
  | 'UNKNOWN_VALIDATOR'
  | 'INACTIVE_VALIDATOR'
  | 'NOT_BEFORE_BLOCK'
  | 'TARGET_EPOCH_MISMATCH'
  | 'TARGET_EPOCH_OUT_OF_WINDOW'
  | 'DUPLICATE_VOTE'
  | 'ALREADY_INCLUDED'
  | 'INVALID_SIGNATURE';

/** A block's attestation that breaks an inclusion rule; `reason` names the rule, `position` the attestation. */
export class InclusionError extends SvcError {
  constructor(
    readonly reason: InclusionReason,
    readonly position: number,
    detail: string,
  ) {
    super('INVALID_ATTESTATION', `attestation ${position}: ${reason}: ${detail}`);
  }
}

/** What the rules need to know about the block's branch. */
export interface InclusionView {
  /** Slot of the including block. */
  blockSlot: number;
  slotsPerEpoch: number;
  /** Registry entry of a validator index (the key already decoded), undefined if unknown. */
  validator(index: number): { active: boolean; publicKey: Uint8Array } | undefined;
  /** Highest target epoch of `index`'s votes included on the block's branch before this block. */
  lastIncluded(index: number): number | undefined;
  /** Checks the attestation's signature under `publicKey` (callers may cache by attestation hash). */
  verify(att: Attestation, publicKey: Uint8Array): boolean;
}

/** One vote's first inclusion on a branch: what the block changes, and what undoing it restores. */
export interface IncludedVote {
  validator: number;
  epoch: number;
  /** The validator's last included target epoch before this block (null: none). */
  previous: number | null;
}

/** Checks one candidate against the rules (signature last, as it is the expensive check); returns the failing rule or undefined. */
function ruleBroken(att: Attestation, view: InclusionView, last: number | undefined, inBlock: ReadonlySet<string>): { reason: InclusionReason; detail: string } | undefined {
  const v = view.validator(att.validatorIndex);
  if (!v) return { reason: 'UNKNOWN_VALIDATOR', detail: `no validator with index ${att.validatorIndex}` };
  if (!v.active) return { reason: 'INACTIVE_VALIDATOR', detail: `validator ${att.validatorIndex} is not active` };
  const d = att.data;
  if (d.slot >= view.blockSlot) return { reason: 'NOT_BEFORE_BLOCK', detail: `vote slot ${d.slot} is not before the block's slot ${view.blockSlot}` };
  const spe = view.slotsPerEpoch;
  if (d.target.epoch !== Math.floor(d.slot / spe)) return { reason: 'TARGET_EPOCH_MISMATCH', detail: `target epoch ${d.target.epoch} is not the epoch of slot ${d.slot}` };
  const blockEpoch = Math.floor(view.blockSlot / spe);
  if (d.target.epoch + 1 < blockEpoch) return { reason: 'TARGET_EPOCH_OUT_OF_WINDOW', detail: `target epoch ${d.target.epoch} is more than one epoch before the block's epoch ${blockEpoch}` };
  if (inBlock.has(`${att.validatorIndex}:${d.target.epoch}`)) return { reason: 'DUPLICATE_VOTE', detail: `validator ${att.validatorIndex} already has a vote for target epoch ${d.target.epoch} in this block` };
  if (last !== undefined && d.target.epoch <= last) return { reason: 'ALREADY_INCLUDED', detail: `validator ${att.validatorIndex} already has a vote for target epoch ${last} included on this branch` };
  if (!view.verify(att, v.publicKey)) return { reason: 'INVALID_SIGNATURE', detail: `signature of validator ${att.validatorIndex} does not verify` };
  return undefined;
}

/**
 * Checks a block's attestations in order; throws InclusionError at the first that breaks a rule.
 * Returns each vote's first-inclusion record, in block order.
 */
export function checkInclusion(attestations: readonly Attestation[], view: InclusionView): IncludedVote[] {
  if (attestations.length > MAX_BLOCK_ATTESTATIONS) throw new InclusionError('TOO_MANY_ATTESTATIONS', MAX_BLOCK_ATTESTATIONS, `${attestations.length} attestations, at most ${MAX_BLOCK_ATTESTATIONS}`);
  const last = new Map<number, number | undefined>();
  const inBlock = new Set<string>();
  const out: IncludedVote[] = [];
  attestations.forEach((att, i) => {
    const v = att.validatorIndex;
    const before = last.has(v) ? last.get(v) : view.lastIncluded(v);
    const broken = ruleBroken(att, view, before, inBlock);
    if (broken) throw new InclusionError(broken.reason, i, broken.detail);
    inBlock.add(`${v}:${att.data.target.epoch}`);
    last.set(v, att.data.target.epoch);
    out.push({ validator: v, epoch: att.data.target.epoch, previous: before ?? null });
  });
  return out;
}

/**
 * The proposer's packing: from `candidates` (any order, possibly invalid or already included),
 * the largest rule-abiding selection up to `max`, ordered by target epoch then validator index
 * then slot, so `checkInclusion` accepts it as is.
 */
export function selectIncludable(candidates: readonly Attestation[], view: InclusionView, max = MAX_BLOCK_ATTESTATIONS): Attestation[] {
  const sorted = [...candidates].sort((a, b) => a.data.target.epoch - b.data.target.epoch || a.validatorIndex - b.validatorIndex || a.data.slot - b.data.slot);
  const last = new Map<number, number | undefined>();
  const inBlock = new Set<string>();
  const out: Attestation[] = [];
  for (const att of sorted) {
    if (out.length >= max) break;
    const v = att.validatorIndex;
    const before = last.has(v) ? last.get(v) : view.lastIncluded(v);
    if (ruleBroken(att, view, before, inBlock)) continue;
    inBlock.add(`${v}:${att.data.target.epoch}`);
    last.set(v, att.data.target.epoch);
    out.push(att);
  }
  return out;
}
