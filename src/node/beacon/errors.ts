/**
 * The beacon's errors. Their own module so the proposal checks, the chain, the API and the sync
 * verdicts can all raise or recognise them without importing the chain.
 */
import type { InclusionReason } from '../../core/consensus/inclusion.js';
import type { SlashingErrorCode } from '../../core/consensus/slashing.js';
import { SvcError } from '../../core/errors.js';
import type { ErrorCode } from '../../api/errors.js';
import type { RelayedStatus } from '../../api/errors.js';

/**
 * Machine codes the beacon raises itself (besides the core's, fork choice's and the light client's):
 * proposal and attestation checks, its API, storage and sync. Every code has its HTTP status in
 * src/api/errors.ts.
 */
export const BEACON_ERROR_CODES = ['BEACON_SYNCING', 'DB_OPEN_FAILED', 'DB_SCHEMA_MISMATCH', 'EPOCH_TOO_FAR', 'EXECUTION_ERROR', 'EXECUTION_REJECTED', 'FUTURE_SLOT', 'HEADER_RANGE_TOO_LONG', 'HEAD_MOVING', 'INACTIVE_VALIDATOR', 'INVALID_ATTESTATION', 'INVALID_BLOCK_SIGNATURE', 'INVALID_HEIGHT', 'INVALID_RANDAO_REVEAL', 'INVALID_SIGNATURE', 'INVALID_SLASHING', 'INVALID_SLOT', 'INVALID_TIMESTAMP', 'INVALID_TOKEN', 'INVALID_VRF_PROOF', 'LISTEN_FAILED', 'MALFORMED_INPUT', 'MERKLE_ROOT_MISMATCH', 'NOT_ANCESTOR', 'NOT_FINALIZED', 'NOT_FOUND', 'NO_FINALITY_UPDATE', 'NO_FINALIZED_HEADER', 'P2P_RATE_LIMITED', 'SLASHABLE_ATTESTATION', 'UNKNOWN_BID', 'UNKNOWN_PARENT', 'UNKNOWN_REGISTRATION', 'UNKNOWN_VALIDATOR', 'WRONG_PROPOSER', 'WRONG_VRF_SEED'] as const satisfies readonly ErrorCode[];
export type BeaconErrorCode = (typeof BEACON_ERROR_CODES)[number];

/** A proposal, attestation or request the beacon refuses, or a fault of its own; `code` names which. */
export class BeaconError extends SvcError<BeaconErrorCode> {}

/** A block whose included attestations break an inclusion rule (code INVALID_ATTESTATION); `reason` names the rule. */
export class IncludedAttestationError extends BeaconError {
  constructor(readonly reason: InclusionReason, message: string) {
    super('INVALID_ATTESTATION', message);
  }
}

/** A block whose slashing evidence is refused (code INVALID_SLASHING); `reason` is the SlashingError code. */
export class IncludedSlashingError extends BeaconError {
  constructor(readonly reason: SlashingErrorCode, message: string) {
    super('INVALID_SLASHING', message);
  }
}

/**
 * Execution refused a block the beacon's checks passed (code EXECUTION_REJECTED); `executionCode`
 * is execution's own code. A refusal because execution could not be reached answers 503, so the
 * proposer retries instead of dropping the block.
 */
export class ExecutionRejectedError extends BeaconError implements RelayedStatus {
  readonly relayStatus: 503 | undefined;

  constructor(readonly executionCode: string, message: string, unavailable: boolean) {
    super('EXECUTION_REJECTED', message);
    this.relayStatus = unavailable ? 503 : undefined;
  }
}
