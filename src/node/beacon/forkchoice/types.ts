/**
 * The vocabulary every fork-choice module shares: roots, checkpoints, votes, slashing evidence,
 * the error class, and the small pure checks on them. Kept apart so the block tree, the FFG
 * bookkeeping and the persisted format can each import it without importing one another.
 */
import { toHex } from '../../../core/codec/bytes.js';
import { parseUint, rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { MalformedError, SvcError } from '../../../core/errors.js';
import type { ErrorCode } from '../../../api/errors.js';
import type { Attestation } from '../../../core/types/attestation.js';

/** A block root: `0x` + 64 lowercase hex digits. */
export type Root = string;

/** An FFG checkpoint with a hex root. */
export interface CheckpointHex {
  epoch: number;
  root: Root;
}

/** What fork choice knows about a block. `parentRoot` is null only for the genesis block. */
export interface ForkChoiceBlock {
  root: Root;
  parentRoot: Root | null;
  slot: number;
}

/** The attestation fields fork choice uses (signature already verified by the caller). */
export interface ForkChoiceAttestation {
  validatorIndex: number;
  slot: number;
  beaconBlockRoot: Root;
  source: CheckpointHex;
  target: CheckpointHex;
}

/** One validator's vote: AttestationData with hex roots. */
export type VoteData = Omit<ForkChoiceAttestation, 'validatorIndex'>;

/**
 * Two votes of one validator that are slashable together. Fork choice holds no signatures: the
 * caller pairs `previous` and `conflicting` with the signed attestations it received.
 */
export interface SlashingEvidence {
  kind: 'double_vote' | 'surround_vote';
  validatorIndex: number;
  /** The vote recorded earlier. */
  previous: VoteData;
  /** The vote just received, which was not counted. */
  conflicting: VoteData;
}

/** Result of `onAttestation`. */
export type AttestationOutcome =
  /** `lmd`: the latest message changed; `ffg`: the vote counts toward justification. */
  | { status: 'applied'; lmd: boolean; ffg: boolean }
  /** The identical vote was already recorded. */
  | { status: 'duplicate' }
  /** Conflicts with a recorded vote of the same validator; not counted. */
  | { status: 'slashable'; evidence: SlashingEvidence };

/** Machine codes of fork-choice errors (their HTTP statuses are in src/api/errors.ts). */
export const FORK_CHOICE_ERROR_CODES = ['UNKNOWN_PARENT', 'INVALID_SLOT', 'BLOCK_CONFLICT', 'FINALIZED_CONFLICT', 'UNKNOWN_BLOCK', 'INVALID_ATTESTATION', 'CHECKPOINT_UNAVAILABLE'] as const satisfies readonly ErrorCode[];

export type ForkChoiceErrorCode = (typeof FORK_CHOICE_ERROR_CODES)[number];

/** A block or attestation fork choice refuses, or a query about a block it does not hold. */
export class ForkChoiceError extends SvcError<ForkChoiceErrorCode> {
  constructor(code: ForkChoiceErrorCode, message: string) {
    super(code, message);
  }
}

/** Converts a decoded (signature-checked) attestation into fork-choice input. */
export function toForkChoiceAttestation(att: Attestation): ForkChoiceAttestation {
  const d = att.data;
  return {
    validatorIndex: att.validatorIndex,
    slot: d.slot,
    beaconBlockRoot: toHex(d.beaconBlockRoot),
    source: { epoch: d.source.epoch, root: toHex(d.source.root) },
    target: { epoch: d.target.epoch, root: toHex(d.target.root) },
  };
}

const ROOT_RE = /^0x[0-9a-fA-F]{64}$/;

/** Parses a block root, lowercased so equal roots compare equal (MALFORMED_INPUT otherwise). */
export function parseRoot(value: unknown, field: string): Root {
  if (typeof value !== 'string' || !ROOT_RE.test(value)) throw new MalformedError(field, 'expected 0x and 64 hex digits');
  return value.toLowerCase();
}

/** Parses a `{ epoch, root }` checkpoint strictly (MALFORMED_INPUT on unknown keys or bad fields). */
export function parseCheckpoint(value: unknown, field: string): CheckpointHex {
  const o = requireObject(value, field);
  rejectUnknownKeys(o, ['epoch', 'root'], field);
  return { epoch: parseUint(o.epoch, `${field}.epoch`), root: parseRoot(o.root, `${field}.root`) };
}

/** Map key of a checkpoint. */
export function cpKey(cp: CheckpointHex): string {
  return `${cp.epoch}:${cp.root}`;
}

/** Whether two checkpoints are the same epoch and root. */
export function sameCheckpoint(a: CheckpointHex, b: CheckpointHex): boolean {
  return a.epoch === b.epoch && a.root === b.root;
}

/** Whether two votes are identical (a re-sent vote, not a double vote). */
export function sameVote(a: VoteData, b: VoteData): boolean {
  return a.slot === b.slot && a.beaconBlockRoot === b.beaconBlockRoot && sameCheckpoint(a.source, b.source) && sameCheckpoint(a.target, b.target);
}

/** True when `outer` strictly surrounds `inner` (Casper's second slashing condition). */
export function surrounds(outer: VoteData, inner: VoteData): boolean {
  return outer.source.epoch < inner.source.epoch && inner.target.epoch < outer.target.epoch;
}

/** A copy the caller may keep: stored checkpoints are never shared with callers. */
export function copyCheckpoint(cp: CheckpointHex): CheckpointHex {
  return { epoch: cp.epoch, root: cp.root };
}

/** A deep copy of a vote, for the same reason as `copyCheckpoint`. */
export function copyVote(v: VoteData): VoteData {
  return { slot: v.slot, beaconBlockRoot: v.beaconBlockRoot, source: copyCheckpoint(v.source), target: copyCheckpoint(v.target) };
}

/** A deep copy of slashing evidence, for the same reason as `copyCheckpoint`. */
export function copyEvidence(e: SlashingEvidence): SlashingEvidence {
  return { kind: e.kind, validatorIndex: e.validatorIndex, previous: copyVote(e.previous), conflicting: copyVote(e.conflicting) };
}
