/**
 * The P2P host's own error codes: its configuration, identity and request budgets (framing, the handshake, peer exchange and requests have their own classes). Every code has its HTTP status in src/api/errors.ts.
 */
import { SvcError } from '../../core/errors.js';
import type { ErrorCode } from '../../api/errors.js';

/** Codes the P2P host raises itself. */
export const P2P_ERROR_CODES = ['P2P_BAD_BOOTNODE', 'P2P_BAD_GENESIS_HASH', 'P2P_BAD_MAX_PEERS', 'P2P_BAD_SLOT', 'P2P_LISTEN_FAILED', 'P2P_PEER_KEY_INVALID', 'P2P_PEER_KEY_MISSING', 'P2P_PEER_KEY_SEED', 'P2P_PORT_CLASH', 'P2P_PORT_IN_USE', 'P2P_RATE_LIMITED', 'P2P_REQUEST_TOO_LARGE'] as const satisfies readonly ErrorCode[];
export type P2pErrorCode = (typeof P2P_ERROR_CODES)[number];

/** An error the P2P host raises; `code` says which rule or fault. */
export class P2pError extends SvcError<P2pErrorCode> {}
