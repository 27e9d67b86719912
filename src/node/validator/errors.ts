/**
 * The validator client's own error codes: its keys, data directory, slashing-protection database and RANDAO chain. Every code has its HTTP status in src/api/errors.ts.
 */
import { SvcError } from '../../core/errors.js';
import type { ErrorCode } from '../../api/errors.js';

/** Codes the validator client raises itself. */
export const VALIDATOR_ERROR_CODES = ['CORRUPT_DATA_DIR', 'CORRUPT_DB', 'DATA_DIR_UNREADABLE', 'DB_OPEN_FAILED', 'DUPLICATE_KEY', 'GENESIS_MISMATCH', 'LEGACY_RANDAO_GENERATION', 'METRICS_LISTEN_FAILED', 'NOT_FOUND', 'NO_KEYS', 'RANDAO_NOT_READY', 'SLASHING_DB_CLOSED', 'SLASHING_DB_WRITE_FAILED'] as const satisfies readonly ErrorCode[];
export type ValidatorErrorCode = (typeof VALIDATOR_ERROR_CODES)[number];

/** An error the validator client raises; `code` says which rule or fault. */
export class ValidatorError extends SvcError<ValidatorErrorCode> {}
