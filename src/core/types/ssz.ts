/** SSZ schemas of every consensus object. Field order is the wire format: never reorder. */
import { ByteListType, ByteVectorType, ContainerType, ListCompositeType, UintBigintType, UintNumberType } from '@chainsafe/ssz';
import {
  ADDRESS_BYTES,
  CHAIN_ID_BYTES,
  ECDSA_SIGNATURE_BYTES,
  HASH_BYTES,
  MAX_BLOCK_ATTESTATIONS,
  MAX_BLOCK_SLASHINGS,
  MAX_BLOCK_TXS,
  MAX_TX_BYTES,
  MAX_TX_DATA_BYTES,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
} from '../constants.js';

const uint64 = new UintBigintType(8);
const uint64n = new UintNumberType(8);
const bytes32 = new ByteVectorType(HASH_BYTES);
const address = new ByteVectorType(ADDRESS_BYTES);
const optionalAddress = new ByteListType(ADDRESS_BYTES);
const signature = new ByteVectorType(SIGNATURE_BYTES);
const publicKey = new ByteVectorType(PUBLIC_KEY_BYTES);
const data = new ByteListType(MAX_TX_DATA_BYTES);

/** Type 0: the spec's standard transaction (transfer, deployment, call). */
export const StandardTxSsz = new ContainerType({
  nonce: uint64,
  gasPrice: uint64,
  gasLimit: uint64,
  to: optionalAddress,
  value: bytes32,
  data,
  signature,
  publicKey,
});

/** Types 1 and 2: authorise or revoke a companion ECDSA key; signed by the ML-DSA master key. */
export const EcdsaAuthorizationSsz = new ContainerType({
  nonce: uint64,
  ecdsaAddress: address,
  signature,
  publicKey,
});

/** Type 3: a standard transaction for `from`, signed by an ECDSA key that `from` authorised. */
export const EcdsaAuthorizedTxSsz = new ContainerType({
  nonce: uint64,
  gasPrice: uint64,
  gasLimit: uint64,
  to: optionalAddress,
  value: bytes32,
  data,
  from: address,
  ecdsaSignature: new ByteVectorType(ECDSA_SIGNATURE_BYTES),
});

/** The header fields a validator signs (3409 bytes once the signature is appended). */
export const SignedHeaderSsz = new ContainerType({
  chainId: new ByteVectorType(CHAIN_ID_BYTES),
  index: uint64n,
  timestamp: uint64n,
  parentHash: bytes32,
  merkleRoot: bytes32,
  validatorIndex: uint64n,
});

/** The wire header; its hash is the block hash. */
export const BlockHeaderSsz = new ContainerType({
  index: uint64n,
  timestampMs: uint64n,
  parentHash: bytes32,
  merkleRoot: bytes32,
  validatorId: address,
  vrfProof: signature,
  vrfSeed: bytes32,
  randaoReveal: bytes32,
  /** Root of the state the block executes on (its parent's post-state), appended last. */
  stateRoot: bytes32,
});

/** Casper FFG checkpoint. */
export const CheckpointSsz = new ContainerType({ epoch: uint64n, root: bytes32 });

/** What an attester votes for. */
export const AttestationDataSsz = new ContainerType({
  slot: uint64n,
  beaconBlockRoot: bytes32,
  source: CheckpointSsz,
  target: CheckpointSsz,
});

/**
 * A list of signed transaction envelopes: a batch submission, and the pending transactions the
 * engine API hands a proposer. At most one block's worth, the largest batch anyone needs.
 */
export const TxEnvelopeListSsz = new ListCompositeType(new ByteListType(MAX_TX_BYTES), MAX_BLOCK_TXS);

/** The signed payload of an attestation: the vote and who casts it. */
export const AttestationMessageSsz = new ContainerType({
  validatorIndex: uint64n,
  data: AttestationDataSsz,
});

/** A signed attestation: the gossip payload of `/service/attestations/v1` and a block's included votes. */
export const AttestationSsz = new ContainerType({
  validatorIndex: uint64n,
  data: AttestationDataSsz,
  signature,
});

/**
 * Largest slashing evidence encoding (src/core/consensus/slashing.ts): a type byte and two
 * canonical signed headers, or two signed attestations.
 */
export const MAX_EVIDENCE_BYTES = 1 + 2 * Math.max(SignedHeaderSsz.fixedSize! + SIGNATURE_BYTES, AttestationSsz.fixedSize!);

/**
 * A block: header, opaque typed transaction envelopes, proposer signature, then the included
 * attestations (appended last so every earlier field keeps its offset; the header's merkle_root
 * covers them, see `blockMerkleRoot`).
 */
export const BlockSsz = new ContainerType({
  header: BlockHeaderSsz,
  transactions: new ListCompositeType(new ByteListType(MAX_TX_BYTES), MAX_BLOCK_TXS),
  signature,
  attestations: new ListCompositeType(AttestationSsz, MAX_BLOCK_ATTESTATIONS),
  /** Slashing evidence encodings (appended last, like the attestations; merkle_root covers them). */
  slashings: new ListCompositeType(new ByteListType(MAX_EVIDENCE_BYTES), MAX_BLOCK_SLASHINGS),
});
