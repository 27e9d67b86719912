/**
 * Refusals of the beacon chain. Their own module so the proposal checks, the chain and the sync
 * verdicts can all raise or recognise them without importing the chain.
 */
import type { InclusionReason } from '../../core/consensus/inclusion.js';
import type { SlashingErrorCode } from '../../core/consensus/slashing.js';
import { SvcError } from '../../core/errors.js';

/** A proposal or attestation the beacon refuses; `code` names the rule. */
export class BeaconError extends SvcError {}

/** A block whose included attestations break an inclusion rule (code INVALID_ATTESTATION); `reason` names the rule. */
export class IncludedAttestationError extends BeaconError {
  constructor(readonly reason: InclusionReason, message: string) {
    super('INVALID_ATTESTATION', message, 400);
  }
}

/** A block whose slashing evidence is refused (code INVALID_SLASHING); `reason` is the SlashingError code. */
export class IncludedSlashingError extends BeaconError {
  constructor(readonly reason: SlashingErrorCode, message: string) {
    super('INVALID_SLASHING', message, 400);
  }
}

/** Execution refused a block the beacon's checks passed (code EXECUTION_REJECTED); `executionCode` is execution's own code. */
export class ExecutionRejectedError extends BeaconError {
  constructor(readonly executionCode: string, message: string, status: number) {
    super('EXECUTION_REJECTED', message, status);
  }
}
