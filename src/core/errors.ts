/**
 * Typed errors shared by every layer. Callers branch on `code`, never on message text.
 */

/**
 * Base class: every error the project raises on purpose carries a stable machine code. `C` is the
 * domain's code union (each domain's error class narrows it). The protocol knows no HTTP: the
 * status a server answers with is the code's row in src/api/errors.ts.
 */
export class SvcError<C extends string = string> extends Error {
  readonly code: C;

  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Input that does not parse: wrong type, wrong length, non-canonical number string. */
export class MalformedError extends SvcError<'MALFORMED_INPUT'> {
  /** Dotted path of the offending field, e.g. `tx.Value`. */
  readonly field: string;

  constructor(field: string, detail?: string) {
    super('MALFORMED_INPUT', detail ? `malformed ${field}: ${detail}` : `malformed ${field}`);
    this.field = field;
  }
}

/** The spec's named transaction validation errors, with the spec's messages. */
export const TX_ERRORS = {
  ErrInvalidSignature: { code: 'INVALID_SIGNATURE', message: 'invalid transaction signature' },
  ErrInvalidSender: { code: 'INVALID_SENDER', message: 'invalid sender: address derived from the public key does not match from' },
  ErrInvalidNonce: { code: 'NONCE_TOO_LOW', message: 'nonce too low' },
  ErrInsufficientFunds: { code: 'INSUFFICIENT_FUNDS', message: 'insufficient balance for value + gas' },
  ErrGasTooLow: { code: 'GAS_TOO_LOW', message: 'intrinsic gas too low' },
  ErrGasTooHigh: { code: 'GAS_TOO_HIGH', message: 'gas limit exceeds protocol max' },
  ErrGasPriceTooLow: { code: 'GAS_PRICE_TOO_LOW', message: 'gas price below minimum' },
} as const;

export type TxErrorName = keyof typeof TX_ERRORS;
/** Machine codes of TxError. */
export type TxErrorCode = (typeof TX_ERRORS)[TxErrorName]['code'];

/** A transaction that parsed but breaks a protocol rule. */
export class TxError extends SvcError<TxErrorCode> {
  /** The spec's error name, e.g. `ErrInvalidSignature`. */
  readonly specName: TxErrorName;

  constructor(specName: TxErrorName, message?: string) {
    super(TX_ERRORS[specName].code, message ?? TX_ERRORS[specName].message);
    this.specName = specName;
  }
}

/** Wallet and keystore problems: wrong password, missing file, refusing to overwrite. */
export class WalletError extends SvcError {}

/**
 * Machine codes of GenesisError: INVALID_GENESIS for the document itself, the others for its
 * bridge counterparts list (docs/bridge.md "Genesis counterparts").
 */
export const GENESIS_ERROR_CODES = ['INVALID_GENESIS', 'GENESIS_COUNTERPART_INVALID', 'GENESIS_COUNTERPART_DUPLICATE', 'GENESIS_COUNTERPART_SELF', 'GENESIS_COUNTERPART_RESERVE'] as const;
export type GenesisErrorCode = (typeof GENESIS_ERROR_CODES)[number];

/** Genesis documents that are invalid or inconsistent. */
export class GenesisError extends SvcError<GenesisErrorCode> {
  constructor(message: string, code: GenesisErrorCode = 'INVALID_GENESIS') {
    super(code, message);
  }
}

/** A cryptographic primitive was misused (wrong key or seed length). */
export class CryptoError extends SvcError<'CRYPTO_ERROR'> {
  constructor(message: string) {
    super('CRYPTO_ERROR', message);
  }
}

/** The spec's block rejection reasons; messages contain the spec's phrases verbatim. */
export const BLOCK_ERRORS = {
  MERKLE_ROOT_MISMATCH: 'Block Merkle root mismatch',
  INVALID_BLOCK_SIGNATURE: 'DILITHIUM SIGNATURE VERIFICATION FAILED',
  INVALID_TRANSACTION: 'Transaction verification failed',
  UNKNOWN_VALIDATOR: 'Unknown validator',
  MISSING_SIGNATURE: 'Block missing Dilithium signature',
  SIGNED_HEADER_FAILED: 'Failed to create SignedHeader',
  MISSING_VRF_PROOF: 'Block missing VRF proof',
  INVALID_VRF_PROOF: 'VRF proof verification failed',
  // Not in the spec's list: structural checks every importer needs before the six steps.
  UNKNOWN_PARENT: 'Unknown parent block',
  INVALID_HEIGHT: 'Block index does not follow its parent',
  INVALID_TIMESTAMP: 'Block timestamp is not the start of a slot after its parent',
  // Header fields the block hash covers but the SignedHeader does not: without these checks
  // anyone could re-header a valid block into a copy with another hash.
  INVALID_VRF_SEED: 'Block vrf_seed is not the seed of its slot',
  WRONG_PROPOSER: 'Block proposer is not the validator drawn for its slot',
  INVALID_RANDAO_REVEAL: "Block randao_reveal is not the preimage of the proposer's last RANDAO value",
  // An included vote breaks the inclusion rules (src/core/consensus/inclusion.ts); the detail names the rule.
  INVALID_ATTESTATION: 'Block includes an invalid attestation',
  // An included slashing evidence is forged, not conflicting, a duplicate in the block, or accuses
  // a validator already slashed or unknown (src/core/consensus/slashing.ts); the detail names the code.
  INVALID_SLASHING: 'Block includes invalid slashing evidence',
  // The parent's state was pruned at finality: the block does not descend from the finalized block.
  PARENT_STATE_PRUNED: 'Block parent is not a descendant of the finalized block (its state is pruned)',
  // header.state_root must be the parent's post-state root, which light clients prove against.
  STATE_ROOT_MISMATCH: 'Block state root mismatch',
} as const;

export type BlockErrorCode = keyof typeof BLOCK_ERRORS;

/** A block that is rejected; `code` is one of BLOCK_ERRORS' keys. */
export class BlockError extends SvcError<BlockErrorCode> {
  constructor(code: BlockErrorCode, detail?: string) {
    super(code, detail ? `${BLOCK_ERRORS[code]}: ${detail}` : BLOCK_ERRORS[code]);
  }
}

/**
 * Two layers that belong to different chains (chain id or genesis hash differ): a beacon must not
 * drive, and execution must not be paid by, another chain's node. The message names both sides.
 */
export class WrongChainError extends SvcError<'WRONG_CHAIN'> {
  constructor(message: string) {
    super('WRONG_CHAIN', message);
  }
}
