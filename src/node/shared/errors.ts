/**
 * Error codes of the infrastructure every layer shares: TLS material and storage. Every code has its HTTP status in src/api/errors.ts.
 */
import { SvcError } from '../../core/errors.js';
import type { ErrorCode } from '../../api/errors.js';

/** Codes the shared node infrastructure raises. */
export const NODE_ERROR_CODES = ['CORRUPT_DB', 'TLS_FILE_UNREADABLE', 'TLS_INVALID', 'TLS_INVALID_CERT', 'TLS_INVALID_KEY', 'TLS_KEY_MISMATCH', 'TLS_UNTRUSTED'] as const satisfies readonly ErrorCode[];
export type NodeErrorCode = (typeof NODE_ERROR_CODES)[number];

/** An error of the shared node infrastructure; `code` says which fault. */
export class NodeError extends SvcError<NodeErrorCode> {}
