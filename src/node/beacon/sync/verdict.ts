/**
 * What a failed block or attestation import means for the peer that sent it. Gossip turns this
 * into a GossipVerdict, range sync into "penalise and disconnect", "go back to the finalised
 * checkpoint" or "stop for now". Decided on machine codes and statuses, never on messages.
 */
import type { InclusionReason } from '../../../core/consensus/inclusion.js';
import { SvcError, WrongChainError } from '../../../core/errors.js';
import { isServerFault } from '../../../api/errors.js';
import { ExecutionRejectedError, IncludedAttestationError, IncludedSlashingError } from '../chain.js';

/**
 * unknown_parent / unknown_block: we lack an ancestor (fetch it); future: not yet valid;
 * duplicate: seen before; local: our side cannot judge now (execution unreachable, store);
 * invalid: the message breaks a rule whatever the receiver's state (the sender is penalised).
 */
export type ImportFaultKind = 'unknown_parent' | 'unknown_block' | 'future' | 'duplicate' | 'local' | 'invalid';

/** A classified import failure; `reason` is the metric label (the error's code). */
export interface ImportFault {
  kind: ImportFaultKind;
  reason: string;
}

// Codes that say the message may become valid later, or was already seen: never penalised.
const BENIGN: Record<string, ImportFaultKind> = {
  UNKNOWN_PARENT: 'unknown_parent',
  UNKNOWN_BLOCK: 'unknown_block',
  FUTURE_SLOT: 'future',
  // Two votes of one validator that conflict are evidence against the validator, not against
  // the peer that relayed the second one.
  SLASHABLE_ATTESTATION: 'duplicate',
  // A block or vote on a branch finality has already ruled out: stale, not forged.
  FINALIZED_CONFLICT: 'duplicate',
  BLOCK_CONFLICT: 'duplicate',
  // Judged against our copy of the registry (deposits, exits, stakes), which may differ from the
  // sender's while branches differ: possibly valid elsewhere, so not worth a ban (three rejects
  // in quick succession ban a peer, docs/protocol.md "Scoring and bans").
  UNKNOWN_VALIDATOR: 'local',
  INACTIVE_VALIDATOR: 'local',
  WRONG_PROPOSER: 'local',
  WRONG_VRF_SEED: 'local',
};

/** Included votes judged against this node's copy of the registry: the block may be valid on the sender's branch. */
const REGISTRY_DEPENDENT: ReadonlySet<InclusionReason> = new Set(['UNKNOWN_VALIDATOR', 'INACTIVE_VALIDATOR']);

/**
 * Execution's refusals that say what execution holds, not what the block is: its parent is not
 * there, or its parent's state was pruned at finality (a branch finality ruled out, which the
 * beacon's own check normally refuses first as FINALIZED_CONFLICT).
 */
const EXECUTION_STATE_DEPENDENT: ReadonlySet<string> = new Set(['UNKNOWN_PARENT', 'PARENT_STATE_PRUNED']);

/** Classifies an error thrown by the chain while importing a block or attestation from a peer. */
export function classifyImportError(err: unknown): ImportFault {
  if (!(err instanceof SvcError)) return { kind: 'local', reason: 'INTERNAL' };
  if (err instanceof WrongChainError) return { kind: 'local', reason: err.code };
  if (err instanceof ExecutionRejectedError && EXECUTION_STATE_DEPENDENT.has(err.executionCode)) return { kind: 'local', reason: err.executionCode };
  if (err instanceof IncludedAttestationError && REGISTRY_DEPENDENT.has(err.reason)) return { kind: 'local', reason: err.code };
  // Evidence against a validator this node's registry lacks or has already slashed may be news on the sender's branch.
  if (err instanceof IncludedSlashingError && (err.reason === 'UNKNOWN_VALIDATOR' || err.reason === 'ALREADY_SLASHED')) return { kind: 'local', reason: err.code };
  const benign = BENIGN[err.code];
  if (benign) return { kind: benign, reason: err.code };
  // 5xx: execution unreachable or our storage failing; the sender did nothing wrong.
  if (isServerFault(err)) return { kind: 'local', reason: err.code };
  return { kind: 'invalid', reason: err.code };
}
