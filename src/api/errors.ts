/**
 * Every machine code an svc process reports, and the HTTP status a server answers it with: the one
 * place a status is decided (DECISIONS.md envelope: `{success: false, error: {code, message}}`).
 * Errors themselves carry no status (src/core/errors.ts); the HTTP edge (src/node/shared/http.ts),
 * the JSON-RPC server, P2P request handlers and the clients all read this table. Clients branch on
 * `ErrorCode` with the compiler's help: `hasCode(err, 'NONCE_TOO_LOW')` does not compile with a
 * code that no server sends.
 *
 * Each domain's code union lives next to it (src/core/errors.ts, core/consensus, core/bridge,
 * core/light, vm/errors.ts, node/<layer>/errors.ts); test/api/errors.test.ts proves every one of
 * them has a row here, so a new code without a status does not compile.
 */
import { type BlockErrorCode, type GenesisErrorCode, SvcError, type TxErrorCode } from '../core/errors.js';
import type { BridgeErrorCode } from '../core/bridge/types.js';
import type { LightErrorCode } from '../core/light/types.js';
import type { ProposerErrorCode } from '../core/consensus/proposer.js';
import type { RandaoErrorCode } from '../core/consensus/randao.js';
import type { RECOMMIT_ERROR_CODE } from '../core/consensus/recommit.js';
import type { SlashingErrorCode } from '../core/consensus/slashing.js';

/** Status of each code. Rows group by the domain that raises the code first. */
export const ERROR_STATUS = {
  // the HTTP edge itself (src/node/shared/http.ts): requests no route handler saw
  BODY_TOO_LARGE: 413,
  ENGINE_FORBIDDEN: 403,
  INTERNAL: 500,
  INVALID_JSON: 400,
  INVALID_REQUEST: 400,
  NOT_FOUND: 404,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  URI_TOO_LONG: 414,
  // protocol core (types, consensus, bridge, light)
  ALREADY_SLASHED: 409,
  BRIDGE_ALREADY_REGISTERED: 400,
  BRIDGE_ALREADY_RELEASED: 400,
  BRIDGE_BAD_LOCK: 400,
  BRIDGE_BAD_SIGNATURE: 400,
  BRIDGE_COUNTERPART_INVALID: 400,
  BRIDGE_DUPLICATE_SIGNER: 400,
  BRIDGE_EXPIRED: 400,
  BRIDGE_INSUFFICIENT_LIQUIDITY: 400,
  BRIDGE_INSUFFICIENT_RESERVE: 400,
  BRIDGE_SET_UPDATE_INVALID: 400,
  BRIDGE_INSUFFICIENT_SIGNATURES: 400,
  BRIDGE_LOCK_NOT_PROVEN: 400,
  BRIDGE_NOT_LOCKED: 400,
  BRIDGE_PROOF_INVALID: 400,
  BRIDGE_REGISTRATION_UNAUTHORIZED: 400,
  BRIDGE_RELEASED_BEFORE_TIMEOUT: 400,
  BRIDGE_RELEASE_NOT_PROVEN: 400,
  BRIDGE_TIMEOUT_NOT_REACHED: 400,
  BRIDGE_UNKNOWN_COUNTERPART: 400,
  BRIDGE_UNKNOWN_SIGNER: 400,
  BRIDGE_WRONG_DESTINATION: 400,
  BRIDGE_WRONG_SOURCE: 400,
  CALLDATA_MALFORMED: 400,
  CRYPTO_ERROR: 400,
  DIFFERENT_VALIDATORS: 400,
  DUPLICATE_EVIDENCE: 400,
  GAS_PRICE_TOO_LOW: 400,
  GAS_TOO_HIGH: 400,
  GAS_TOO_LOW: 400,
  GENESIS_COUNTERPART_DUPLICATE: 400,
  GENESIS_COUNTERPART_INVALID: 400,
  GENESIS_COUNTERPART_RESERVE: 400,
  GENESIS_COUNTERPART_SELF: 400,
  INVALID_ATTESTATION: 400,
  INVALID_EVIDENCE_SIGNATURE: 400,
  INVALID_GENESIS: 400,
  INVALID_RANDAO_COMMITMENT: 400,
  INVALID_RANDAO_REVEAL: 400,
  INVALID_SEED: 400,
  INVALID_SENDER: 400,
  INVALID_SIGNATURE: 400,
  INVALID_SLOT: 400,
  INVALID_VALIDATOR_SET: 500,
  LIGHT_ANCESTRY_BROKEN: 400,
  LIGHT_BAD_SIGNATURE: 400,
  LIGHT_BITFIELD_MISMATCH: 400,
  LIGHT_DUPLICATE_SIGNER: 400,
  LIGHT_HEADER_MISMATCH: 400,
  LIGHT_INSUFFICIENT_STAKE: 400,
  LIGHT_MALFORMED: 400,
  LIGHT_NONCANONICAL: 400,
  LIGHT_NOT_FINALIZING_LINK: 400,
  LIGHT_PROOF_INVALID: 400,
  LIGHT_STALE_UPDATE: 400,
  LIGHT_UNKNOWN_SIGNER: 400,
  MALFORMED_INPUT: 400,
  NOT_CONFLICTING: 400,
  NO_ACTIVE_VALIDATORS: 500,
  RANDAO_COMMITMENT_EXISTS: 400,
  UNKNOWN_RANDAO_VALIDATOR: 400,
  UNKNOWN_VALIDATOR: 400,
  WRONG_CHAIN: 409,
  // the contract VM
  CONTRACT_DEPLOY_DATA_MALFORMED: 400,
  CONTRACT_FLOAT: 400,
  CONTRACT_FORBIDDEN_IMPORT: 400,
  CONTRACT_INSTRUMENTATION_FAILED: 500,
  CONTRACT_LIMIT: 400,
  CONTRACT_MEMORY: 400,
  CONTRACT_MODULE_MALFORMED: 400,
  CONTRACT_MODULE_TOO_LARGE: 400,
  CONTRACT_RESERVED_EXPORT: 400,
  CONTRACT_UNSUPPORTED_FEATURE: 400,
  VM_HOST_TRAP: 400,
  VM_OUT_OF_GAS: 400,
  VM_RESOURCE_EXHAUSTED: 503,
  VM_REVERT: 400,
  // P2P
  P2P_BAD_BOOTNODE: 400,
  P2P_BAD_FRAME: 400,
  P2P_BAD_GENESIS_HASH: 400,
  P2P_BAD_MAX_PEERS: 400,
  P2P_BAD_SLOT: 400,
  P2P_HANDSHAKE_FAILED: 400,
  P2P_LISTEN_FAILED: 400,
  P2P_PEER_KEY_INVALID: 400,
  P2P_PEER_KEY_MISSING: 400,
  P2P_PEER_KEY_SEED: 400,
  P2P_PEX_MALFORMED: 400,
  P2P_PORT_IN_USE: 409,
  P2P_REQUEST_FAILED: 502,
  P2P_REQUEST_TOO_LARGE: 400,
  P2P_RATE_LIMITED: 400,
  // node infrastructure
  CORRUPT_DB: 500,
  P2P_PORT_CLASH: 400,
  TLS_FILE_UNREADABLE: 400,
  TLS_INVALID_CERT: 400,
  TLS_INVALID_KEY: 400,
  TLS_KEY_MISMATCH: 400,
  TLS_UNTRUSTED: 500,
  // execution
  ALREADY_KNOWN: 409,
  BATCH_TOO_LARGE: 413,
  BLOCK_STORAGE_FAILED: 503,
  BRIDGE_MALFORMED: 400,
  CALLS_BUSY: 429,
  CALLS_CLOSED: 503,
  CALL_THREAD_FAILED: 500,
  CALL_TIMEOUT: 503,
  DB_OPEN_FAILED: 500,
  DB_SCHEMA_MISMATCH: 409,
  EXECUTION_FAILED: 400,
  EXECUTION_REVERTED: 400,
  FAUCET_COOLDOWN: 429,
  FAUCET_DISABLED: 503,
  FAUCET_KEY_MISMATCH: 400,
  FINALITY_REGRESSION: 409,
  FINALIZED_NOT_ANCESTOR: 409,
  GENESIS_MISMATCH: 409,
  INSUFFICIENT_FUNDS: 400,
  INVALID_BLOCK_ID: 400,
  INVALID_BLOCK_SIGNATURE: 400,
  INVALID_HEIGHT: 400,
  INVALID_LOG_RANGE: 400,
  INVALID_RANDAO_RECOMMIT: 400,
  INVALID_SLASHING: 400,
  INVALID_TIMESTAMP: 400,
  INVALID_TRANSACTION: 400,
  INVALID_VRF_PROOF: 400,
  INVALID_VRF_SEED: 400,
  JOURNAL_KEY_MISMATCH: 400,
  LISTEN_FAILED: 500,
  LOG_RANGE_TOO_LARGE: 400,
  LOG_RESULT_TOO_LARGE: 400,
  MERKLE_ROOT_MISMATCH: 400,
  MISSING_SIGNATURE: 400,
  MISSING_VRF_PROOF: 400,
  NONCE_TOO_HIGH: 400,
  NONCE_TOO_LOW: 400,
  P2P_NEEDS_DATA_DIR: 400,
  PARENT_STATE_PRUNED: 400,
  POOL_EXCHANGE_MALFORMED: 400,
  POOL_FULL: 409,
  POOL_JOURNAL_FAILED: 503,
  POOL_JOURNAL_UNREADABLE: 500,
  QUEUE_FULL: 409,
  RATE_LIMITED: 429,
  REORG_PAST_FINALIZED: 409,
  REPLACEMENT_UNDERPRICED: 409,
  SHUTTING_DOWN: 503,
  SIGNED_HEADER_FAILED: 400,
  STATE_NODE_MISSING: 500,
  STATE_PRUNED: 410,
  STATE_READER_DEAD: 500,
  STATE_READER_FAILED: 500,
  STATE_READER_TIMEOUT: 500,
  STATE_READ_FAILED: 500,
  STATE_ROOT_MISMATCH: 400,
  UNKNOWN_BLOCK: 404,
  UNKNOWN_PARENT: 400,
  VERIFIER_FAILED: 500,
  WRONG_PROPOSER: 400,
  // beacon
  BEACON_SYNCING: 503,
  BAD_RANGE_REQUEST: 400,
  BAD_RANGE_RESPONSE: 400,
  BAD_STATUS: 400,
  BLOCK_CONFLICT: 409,
  CHECKPOINT_UNAVAILABLE: 404,
  EPOCH_TOO_FAR: 400,
  EXECUTION_ERROR: 502,
  EXECUTION_REJECTED: 400,
  FINALIZED_CONFLICT: 409,
  FUTURE_SLOT: 400,
  HEADER_RANGE_TOO_LONG: 400,
  HEAD_MOVING: 503,
  INACTIVE_VALIDATOR: 400,
  INVALID_TOKEN: 400,
  NOT_ANCESTOR: 409,
  NOT_FINALIZED: 409,
  NO_FINALITY_UPDATE: 404,
  NO_FINALIZED_HEADER: 404,
  SLASHABLE_ATTESTATION: 409,
  TLS_INVALID: 400,
  UNKNOWN_BID: 404,
  UNKNOWN_REGISTRATION: 404,
  WRONG_VRF_SEED: 400,
  // validator client
  BRIDGE_POLICY_INVALID: 400,
  CORRUPT_DATA_DIR: 500,
  DATA_DIR_UNREADABLE: 500,
  DUPLICATE_KEY: 400,
  INVALID_RANDAO_CHAIN_ARGUMENT: 400,
  LEGACY_RANDAO_GENERATION: 409,
  METRICS_LISTEN_FAILED: 500,
  NO_KEYS: 400,
  RANDAO_CHAIN_EXHAUSTED: 409,
  RANDAO_NOT_READY: 500,
  RANDAO_VALUE_NOT_ON_CHAIN: 409,
  SLASHING_DB_CLOSED: 500,
  SLASHING_DB_WRITE_FAILED: 500,
  SLASHING_PROTECTION: 409,
  // HTTP transport
  FILE_EXISTS: 409,
  HTTP_ABORTED: 503,
  HTTP_BODY_TOO_LARGE: 503,
  HTTP_CLOSED: 503,
  HTTP_TIMEOUT: 504,
  HTTP_TRUNCATED: 503,
  HTTP_UNREACHABLE: 503,
  INVALID_URL: 400,
  // clients
  BAD_RESPONSE: 502,
  CONTRACT_FILE: 400,
  DEVNET_MANIFEST_INVALID: 400,
  DEVNET_NOT_FOUND: 404,
  EXECUTION_UNREACHABLE: 503,
  HTTP_ERROR: 502,
  LIGHT_CHECKPOINT_MISMATCH: 400,
  LIGHT_WRONG_CHAIN: 400,
  PROOF_ROOT_MOVED: 400,
  PROOF_UNAVAILABLE: 400,
  TIMEOUT: 502,
  TX_FAILED: 400,
  UNREACHABLE: 502,
  USAGE: 400,
  // wallet, genesis and contract tooling
  COMPILE_FAILED: 400,
  CONTRACT_START_FUNCTION: 400,
  FILE_NOT_FOUND: 404,
  INVALID_MNEMONIC: 400,
  INVALID_NAME: 400,
  INVALID_PATH: 400,
  INVALID_WALLET: 400,
  KDF_FAILED: 400,
  SIGN_FAILED: 400,
  WALLET_NOT_FOUND: 404,
  WATCH_ONLY: 400,
  WRONG_PASSWORD: 401,
  // devnet and CLI
  DEVNET_BRIDGE_REGISTER_FAILED: 400,
  DEVNET_MISMATCH: 409,
  DEVNET_NOT_RUNNING: 409,
  DEVNET_RUNNING: 409,
  DEVNET_START_FAILED: 400,
  DUPLICATE_KEYSTORE: 400,
  EXPORT_INVALID: 400,
  FILE_UNREADABLE: 400,
  INTERRUPTED: 400,
  KEYSTORES_DIR_NOT_FOUND: 404,
  KEYSTORE_ADDRESS_MISMATCH: 400,
  KEYSTORE_NOT_IN_GENESIS: 400,
  KEYSTORE_UNLOCK_FAILED: 400,
  NO_CHAIN: 400,
  NO_KEYSTORES: 404,
  SECRET_MISMATCH: 400,
  SECRET_REQUIRED: 400,
  SECRET_UNREADABLE: 400,
  UNKNOWN_PROCESS: 404,
} as const satisfies Record<string, number>;

/** A code some svc process reports. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Compiles only when every code of `C` has a row: how each domain's union proves it is complete. */
export type Listed<C extends ErrorCode> = C;

/** The protocol core's codes (core imports nothing of api, so its unions are checked here). */
export type CoreErrorCode = Listed<
  | TxErrorCode
  | BlockErrorCode
  | GenesisErrorCode
  | 'MALFORMED_INPUT'
  | 'CRYPTO_ERROR'
  | 'WRONG_CHAIN'
  | 'CALLDATA_MALFORMED'
  | ProposerErrorCode
  | RandaoErrorCode
  | typeof RECOMMIT_ERROR_CODE
  | SlashingErrorCode
  | BridgeErrorCode
  | LightErrorCode
>;

/** Status of a code that has no row (another version's code relayed by a client): a bad request, as before codes had rows. */
const UNLISTED_STATUS = 400;

/**
 * An error that passes on another server's answer (a client's, or a beacon relaying execution)
 * answers with the status it chose for that relay instead of its code's row.
 */
export interface RelayedStatus {
  readonly relayStatus?: number;
}

/** Another server's refusal passed on under its code, answering `relayStatus` (else the code's row). */
export class RelayedError extends SvcError implements RelayedStatus {
  constructor(
    code: string,
    message: string,
    readonly relayStatus?: number,
  ) {
    super(code, message);
  }
}

/** The HTTP status a server answers `err` with. */
export function httpStatusOf(err: Pick<SvcError, 'code'> & RelayedStatus): number {
  if (err.relayStatus !== undefined) return err.relayStatus;
  return statusOfCode(err.code);
}

/** The status of a code: its row, or 400 for a code this version does not list. */
export function statusOfCode(code: string): number {
  return Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as ErrorCode] : UNLISTED_STATUS;
}

/** True when `err` is an svc error with this code; the code must be one a process reports. */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/** True when `err` is the node's own fault or an upstream's (5xx), not the requester's. */
export function isServerFault(err: Pick<SvcError, 'code'> & RelayedStatus): boolean {
  return httpStatusOf(err) >= 500;
}
