/**
 * The execution layer's own error codes: its API, storage, state reads, call threads and faucet (the core's, the VM's, the bridge's and the pool's have their own unions). Every code has its HTTP status in src/api/errors.ts.
 */
import { SvcError } from '../../core/errors.js';
import type { ErrorCode } from '../../api/errors.js';

/** Codes the execution layer raises itself. */
export const EXECUTION_ERROR_CODES = ['BATCH_TOO_LARGE', 'BODY_TOO_LARGE', 'CALLS_BUSY', 'CALLS_CLOSED', 'CALL_THREAD_FAILED', 'CALL_TIMEOUT', 'CORRUPT_DB', 'DB_OPEN_FAILED', 'DB_SCHEMA_MISMATCH', 'FAUCET_COOLDOWN', 'FAUCET_DISABLED', 'FAUCET_KEY_MISMATCH', 'FINALITY_REGRESSION', 'FINALIZED_NOT_ANCESTOR', 'GAS_TOO_HIGH', 'GAS_TOO_LOW', 'GENESIS_MISMATCH', 'INSUFFICIENT_FUNDS', 'INTERNAL', 'INVALID_BLOCK_ID', 'INVALID_LOG_RANGE', 'INVALID_REQUEST', 'JOURNAL_KEY_MISMATCH', 'LISTEN_FAILED', 'LOG_RANGE_TOO_LARGE', 'LOG_RESULT_TOO_LARGE', 'MALFORMED_INPUT', 'NOT_FOUND', 'P2P_NEEDS_DATA_DIR', 'REORG_PAST_FINALIZED', 'SHUTTING_DOWN', 'STATE_NODE_MISSING', 'STATE_PRUNED', 'STATE_READER_DEAD', 'STATE_READER_FAILED', 'STATE_READER_TIMEOUT', 'STATE_READ_FAILED', 'UNKNOWN_BLOCK', 'VERIFIER_FAILED'] as const satisfies readonly ErrorCode[];
export type ExecutionErrorCode = (typeof EXECUTION_ERROR_CODES)[number];

/** An error the execution layer raises; `code` says which rule or fault. */
export class ExecutionError extends SvcError<ExecutionErrorCode> {}
