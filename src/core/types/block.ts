/**
 * Blocks: wire JSON (ms timestamps, 0x hex), SSZ, the block hash, and the 3409-byte canonical
 * SignedHeader that proposers sign with a deterministic ML-DSA-65 signature. A block carries
 * transactions, attestations and slashing evidence; `merkle_root` covers all three (see
 * `blockMerkleRoot`), so the proposer's signature binds every included vote and evidence without
 * changing the SignedHeader.
 */
import { HASH_BYTES, MAX_BLOCK_ATTESTATIONS, MAX_BLOCK_SLASHINGS, MAX_BLOCK_TXS, SIGNATURE_BYTES } from '../constants.js';
import { BlockError, MalformedError } from '../errors.js';
import { concatBytes, parseHex, toHex, utf8 } from '../codec/bytes.js';
import { parseAddress, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { Domain, signingHash } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { type MlDsaKeyPair, sign, verify } from '../crypto/mldsa.js';
import { merkleRoot } from './merkle.js';
import { vrfProve } from '../crypto/vrf.js';
import { BlockHeaderSsz, BlockSsz } from './ssz.js';
import { type SignedHeader, encodeSignedHeader } from './signed-header.js';
import { type Attestation, type AttestationJson, attestationFromJson, attestationHash, attestationToJson } from './attestation.js';
import { type Transaction, decodeTx, decodeTxViews, encodeTx, txHash } from './transaction.js';
import { txFromJson, txToJson, type TxJson } from './transaction-json.js';
import { type SlashingEvidence, type SlashingEvidenceJson, decodeEvidence, encodeEvidence, evidenceFromJson, evidenceToJson, slashingLeaf } from './evidence.js';

// Where they were defined before signed-header.ts; many modules import them from here.
export { type SignedHeader, encodeSignedHeader };

/** Wire header. `index` is the block height; `timestampMs` is the slot start in Unix ms. */
export interface BlockHeader {
  index: number;
  timestampMs: number;
  parentHash: Uint8Array;
  merkleRoot: Uint8Array;
  /** Proposer address. */
  validatorId: Uint8Array;
  vrfProof: Uint8Array;
  vrfSeed: Uint8Array;
  /** Next preimage of the proposer's RANDAO hash chain. */
  randaoReveal: Uint8Array;
  /**
   * Root of the state this block executes on: its parent's post-state root (block 1: the genesis
   * state root), known before execution, as CometBFT's app_hash. Covered by the block hash, not
   * by the 100-byte SignedHeader.
   */
  stateRoot: Uint8Array;
}

export interface Block {
  header: BlockHeader;
  transactions: Transaction[];
  signature: Uint8Array;
  /** Votes the proposer included (covered by `merkle_root`); [] for none. */
  attestations: Attestation[];
  /** Slashing evidence the proposer included (covered by `merkle_root`); [] for none. */
  slashings: SlashingEvidence[];
}

/** Merkle root of a block's transactions (its whole `merkle_root` when it includes no attestation). */
export function txMerkleRoot(txs: readonly Transaction[]): Uint8Array {
  return merkleRoot(txs.map(txHash));
}

const ATTESTATION_LEAF_TAG = utf8('svc/attestation-leaf');

/**
 * Leaf of an included attestation: SHA3-256("svc/attestation-leaf" ‖ attestation hash). The tag
 * keeps it from ever equalling a transaction hash (an envelope starts with a type byte 0-3, never 's').
 */
export function attestationLeaf(att: Attestation): Uint8Array {
  return sha3(ATTESTATION_LEAF_TAG, attestationHash(att));
}

/**
 * A block's `merkle_root`: the tree over its transaction hashes followed by its attestation
 * leaves, then its slashing leaves (`slashingLeaf`), count mixed in. Without attestations and
 * slashings this is the transactions' root, unchanged.
 */
export function blockMerkleRoot(txHashes: readonly Uint8Array[], attestations: readonly Attestation[], slashings: readonly SlashingEvidence[]): Uint8Array {
  if (attestations.length === 0 && slashings.length === 0) return merkleRoot(txHashes);
  return merkleRoot([...txHashes, ...attestations.map(attestationLeaf), ...slashings.map(slashingLeaf)]);
}

/** `blockMerkleRoot` from decoded transactions. */
export function bodyMerkleRoot(txs: readonly Transaction[], attestations: readonly Attestation[], slashings: readonly SlashingEvidence[]): Uint8Array {
  return blockMerkleRoot(txs.map(txHash), attestations, slashings);
}

/** Block hash: SHA3-256 of the SSZ wire header (the proposer signature is not part of it). */
export function blockHash(header: BlockHeader): Uint8Array {
  return sha3(BlockHeaderSsz.serialize(header));
}

/** The SignedHeader a block's proposer signs, given the proposer's registry index. */
export function signedHeaderOf(header: BlockHeader, chainId: string, validatorIndex: number): SignedHeader {
  return {
    chainId,
    index: header.index,
    timestamp: Math.floor(header.timestampMs / 1000),
    parentHash: header.parentHash,
    merkleRoot: header.merkleRoot,
    validatorIndex,
  };
}

/** The canonical encoding: SignedHeader SSZ ‖ signature (3409 bytes). */
export function canonicalHeaderBytes(sh: SignedHeader, signature: Uint8Array): Uint8Array {
  if (signature.length !== SIGNATURE_BYTES) throw new MalformedError('block.signature', `expected ${SIGNATURE_BYTES} bytes`);
  return concatBytes(encodeSignedHeader(sh), signature);
}

/** Domain-separated hash a proposer signs. */
export function headerSigningHash(sh: SignedHeader): Uint8Array {
  return signingHash(Domain.Block, sh.chainId, encodeSignedHeader(sh));
}

/** Signs a block deterministically (a second, different block for the same slot is provable). */
export function signBlock(header: BlockHeader, transactions: Transaction[], key: MlDsaKeyPair, chainId: string, validatorIndex: number, attestations: Attestation[] = [], slashings: SlashingEvidence[] = []): Block {
  const signature = sign(key.secretKey, headerSigningHash(signedHeaderOf(header, chainId, validatorIndex)), { deterministic: true });
  return { header, transactions, signature, attestations, slashings };
}

/** True when the block signature verifies for the proposer's key and registry index. */
export function verifyBlockSignature(block: Block, chainId: string, validatorIndex: number, publicKey: Uint8Array): boolean {
  return verify(publicKey, headerSigningHash(signedHeaderOf(block.header, chainId, validatorIndex)), block.signature);
}

/** SSZ encoding of a block (transactions as typed envelopes, passed in when already encoded). */
export function encodeBlock(block: Block, envelopes: Uint8Array[] = block.transactions.map(encodeTx)): Uint8Array {
  return BlockSsz.serialize({ header: block.header, transactions: envelopes, signature: block.signature, attestations: block.attestations, slashings: block.slashings.map(encodeEvidence) });
}

/** Decodes an SSZ block; structural faults are `malformed block`. */
export function decodeBlock(bytes: Uint8Array): Block {
  return decodeBlockBytes(bytes, false).block;
}

/**
 * Decodes an SSZ block and keeps each transaction's envelope as received: decodeTx proved every
 * one canonical, so importers hash and store these bytes instead of encoding the transactions again.
 * The envelopes and every byte field of the block are views into `bytes` (no copy of a 7.6 MB
 * block): whoever keeps any of them keeps `bytes`, which must not change afterwards.
 */
export function decodeBlockWithEnvelopes(bytes: Uint8Array): { block: Block; envelopes: Uint8Array[] } {
  return decodeBlockBytes(bytes, true);
}

function decodeBlockBytes(bytes: Uint8Array, views: boolean): { block: Block; envelopes: Uint8Array[] } {
  let v: ReturnType<typeof BlockSsz.deserialize>;
  try {
    v = BlockSsz.deserialize(bytes, { reuseBytes: views });
  } catch (err) {
    throw new MalformedError('block', (err as Error).message);
  }
  if (!Number.isSafeInteger(v.header.index) || !Number.isSafeInteger(v.header.timestampMs)) {
    throw new MalformedError('block.header', 'index and timestamp must be below 2^53');
  }
  for (const a of v.attestations) {
    if (!Number.isSafeInteger(a.validatorIndex) || !Number.isSafeInteger(a.data.slot) || !Number.isSafeInteger(a.data.source.epoch) || !Number.isSafeInteger(a.data.target.epoch)) {
      throw new MalformedError('block.attestations', 'integers must be below 2^53');
    }
  }
  const block = { header: v.header, transactions: v.transactions.map(views ? decodeTxViews : decodeTx), signature: v.signature, attestations: v.attestations, slashings: v.slashings.map(decodeEvidence) };
  return { block, envelopes: v.transactions };
}

/** Wire JSON of a block. */
export interface BlockJson {
  header: {
    index: number;
    timestamp: number;
    parent_hash: string;
    merkle_root: string;
    validator_id: string;
    vrf_proof: string;
    vrf_seed: string;
    randao_reveal: string;
    state_root: string;
  };
  transactions: TxJson[];
  signature: string;
  attestations: AttestationJson[];
  slashings: SlashingEvidenceJson[];
}

/** Wire JSON of a block header. */
export type BlockHeaderJson = BlockJson['header'];

/** Canonical wire JSON of a header (the `header` object of a block). */
export function headerToJson(h: BlockHeader): BlockHeaderJson {
  return {
    index: h.index,
    timestamp: h.timestampMs,
    parent_hash: toHex(h.parentHash),
    merkle_root: toHex(h.merkleRoot),
    validator_id: toHex(h.validatorId),
    vrf_proof: toHex(h.vrfProof),
    vrf_seed: toHex(h.vrfSeed),
    randao_reveal: toHex(h.randaoReveal),
    state_root: toHex(h.stateRoot),
  };
}

/** Strictly parses a header's wire JSON (every field present; light clients hash what they parse). */
export function headerFromJson(input: unknown, field = 'header'): BlockHeader {
  const h = requireObject(input, field);
  rejectUnknownKeys(h, ['index', 'timestamp', 'parent_hash', 'merkle_root', 'validator_id', 'vrf_proof', 'vrf_seed', 'randao_reveal', 'state_root'], field);
  const header: BlockHeader = {
    index: parseUint(h.index, `${field}.index`),
    timestampMs: parseUint(h.timestamp, `${field}.timestamp`),
    parentHash: parseHex(h.parent_hash, `${field}.parent_hash`, HASH_BYTES),
    merkleRoot: parseHex(h.merkle_root, `${field}.merkle_root`, HASH_BYTES),
    validatorId: parseAddress(h.validator_id, `${field}.validator_id`),
    vrfProof: parseHex(h.vrf_proof, `${field}.vrf_proof`, SIGNATURE_BYTES),
    vrfSeed: parseHex(h.vrf_seed, `${field}.vrf_seed`, HASH_BYTES),
    randaoReveal: parseHex(h.randao_reveal, `${field}.randao_reveal`, HASH_BYTES),
    stateRoot: parseHex(h.state_root, `${field}.state_root`, HASH_BYTES),
  };
  return header;
}

/** Canonical wire JSON of a block. */
export function blockToJson(block: Block): BlockJson {
  return {
    header: headerToJson(block.header),
    transactions: block.transactions.map(txToJson),
    signature: toHex(block.signature),
    attestations: block.attestations.map(attestationToJson),
    slashings: block.slashings.map(evidenceToJson),
  };
}

/**
 * Parses wire JSON strictly. Validation (Merkle root, signatures) is the importer's job.
 * With `deferMissing`, an absent signature or VRF proof parses as zero bytes so the importer can
 * report it at its own step of the spec's order (after the Merkle root and the transactions).
 */
export function blockFromJson(input: unknown, opts: { deferMissing?: boolean } = {}): Block {
  const o = requireObject(input, 'block');
  rejectUnknownKeys(o, ['header', 'transactions', 'signature', 'attestations', 'slashings'], 'block');
  const h = requireObject(o.header, 'block.header');
  rejectUnknownKeys(h, ['index', 'timestamp', 'parent_hash', 'merkle_root', 'validator_id', 'vrf_proof', 'vrf_seed', 'randao_reveal', 'state_root'], 'block.header');
  if (!Array.isArray(o.transactions)) throw new MalformedError('block.transactions', 'expected an array');
  if (o.transactions.length > MAX_BLOCK_TXS) throw new MalformedError('block.transactions', `more than ${MAX_BLOCK_TXS}`);
  // Absent means none: blocks written before attestations were included stay readable.
  const atts = o.attestations ?? [];
  if (!Array.isArray(atts)) throw new MalformedError('block.attestations', 'expected an array');
  if (atts.length > MAX_BLOCK_ATTESTATIONS) throw new MalformedError('block.attestations', `more than ${MAX_BLOCK_ATTESTATIONS}`);
  const slashings = o.slashings ?? [];
  if (!Array.isArray(slashings)) throw new MalformedError('block.slashings', 'expected an array');
  if (slashings.length > MAX_BLOCK_SLASHINGS) throw new MalformedError('block.slashings', `more than ${MAX_BLOCK_SLASHINGS}`);
  return {
    header: {
      index: parseUint(h.index, 'block.header.index'),
      timestampMs: parseUint(h.timestamp, 'block.header.timestamp'),
      parentHash: parseHex(h.parent_hash, 'block.header.parent_hash', HASH_BYTES),
      merkleRoot: parseHex(h.merkle_root, 'block.header.merkle_root', HASH_BYTES),
      validatorId: parseAddress(h.validator_id, 'block.header.validator_id'),
      vrfProof: requirePresent(h.vrf_proof, 'MISSING_VRF_PROOF', opts, () => parseHex(h.vrf_proof, 'block.header.vrf_proof', SIGNATURE_BYTES)),
      vrfSeed: parseHex(h.vrf_seed, 'block.header.vrf_seed', HASH_BYTES),
      randaoReveal: parseHex(h.randao_reveal, 'block.header.randao_reveal', HASH_BYTES),
      stateRoot: parseHex(h.state_root, 'block.header.state_root', HASH_BYTES),
    },
    transactions: o.transactions.map((t) => txFromJson(t)),
    signature: requirePresent(o.signature, 'MISSING_SIGNATURE', opts, () => parseHex(o.signature, 'block.signature', SIGNATURE_BYTES)),
    attestations: atts.map((a) => attestationFromJson(a)),
    slashings: slashings.map((e) => evidenceFromJson(e)),
  };
}

// The spec names an absent signature or VRF proof as its own rejection reason, distinct from a malformed one.
function requirePresent(value: unknown, code: 'MISSING_SIGNATURE' | 'MISSING_VRF_PROOF', opts: { deferMissing?: boolean }, parse: () => Uint8Array): Uint8Array {
  if (value === undefined || value === null || value === '' || value === '0x') {
    if (opts.deferMissing) return new Uint8Array(0);
    throw new BlockError(code);
  }
  return parse();
}

/** Everything a proposer decides for a block. */
export interface BlockProposal {
  chainId: string;
  index: number;
  timestampMs: number;
  parentHash: Uint8Array;
  transactions: Transaction[];
  key: MlDsaKeyPair;
  validatorIndex: number;
  validatorId: Uint8Array;
  vrfSeed: Uint8Array;
  randaoReveal: Uint8Array;
  /** The parent's post-state root (see BlockHeader.stateRoot). */
  stateRoot: Uint8Array;
  /** Attestations to include (default none). */
  attestations?: Attestation[];
  /** Slashing evidence to include (default none). */
  slashings?: SlashingEvidence[];
}

/** Assembles and signs a block: Merkle root, VRF proof over the seed, deterministic signature. */
export function buildSignedBlock(p: BlockProposal): Block {
  const header: BlockHeader = {
    index: p.index,
    timestampMs: p.timestampMs,
    parentHash: p.parentHash,
    merkleRoot: bodyMerkleRoot(p.transactions, p.attestations ?? [], p.slashings ?? []),
    validatorId: p.validatorId,
    vrfProof: vrfProve(p.key, p.vrfSeed, p.chainId),
    vrfSeed: p.vrfSeed,
    randaoReveal: p.randaoReveal,
    stateRoot: p.stateRoot,
  };
  return signBlock(header, p.transactions, p.key, p.chainId, p.validatorIndex, p.attestations ?? [], p.slashings ?? []);
}
