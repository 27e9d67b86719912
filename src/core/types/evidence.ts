/**
 * Slashing evidence as data: its types, canonical order, wire encoding, hash, Merkle leaf and
 * JSON (the rules that judge it are in src/core/consensus/slashing.ts). Apart from the rules so
 * the block types, which carry evidence in their bodies, import only this, and the rules may
 * import the block types.
 *
 * - Proposer slashing: two canonical signed headers (100-byte SignedHeader ‖ 3,309-byte
 *   signature each, DECISIONS "Cryptography").
 * - Attester slashing: two signed attestations.
 *
 * The two messages are kept in canonical order (byte order of their encodings), so one offence
 * has one encoding and one hash whichever order it was found or submitted in.
 *
 * Wire encoding (gossip `/service/slashings/v1`, block bodies): one type byte, then
 * - 0x01: header_1 (100) ‖ signature_1 (3,309) ‖ header_2 (100) ‖ signature_2 (3,309): 6,819 bytes;
 * - 0x02: attestation_1 SSZ (3,437) ‖ attestation_2 SSZ (3,437): 6,875 bytes.
 * The evidence hash is SHA3-256 of that encoding.
 */
import { HASH_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { MalformedError } from '../errors.js';
import { bytesEqual, concatBytes, parseHex, toHex, utf8 } from '../codec/bytes.js';
import { parseString, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { chainIdBytes } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { type Attestation, type AttestationJson, attestationFromJson, attestationToJson, decodeAttestation, encodeAttestation } from './attestation.js';
import { type SignedHeader, encodeSignedHeader } from './signed-header.js';
import { AttestationSsz, MAX_EVIDENCE_BYTES, SignedHeaderSsz } from './ssz.js';

/** A canonical signed header: what a proposer's signature covers, and the signature. */
export interface SignedBlockHeader {
  header: SignedHeader;
  signature: Uint8Array;
}

/** Two signed headers of one proposer for one slot. */
export interface ProposerSlashing {
  type: 'proposer';
  header1: SignedBlockHeader;
  header2: SignedBlockHeader;
}

/** Two signed attestations of one validator that conflict. */
export interface AttesterSlashing {
  type: 'attester';
  attestation1: Attestation;
  attestation2: Attestation;
}

export type SlashingEvidence = ProposerSlashing | AttesterSlashing;

/** Type byte of a proposer slashing's encoding. */
export const PROPOSER_SLASHING_TYPE = 0x01;
const PROPOSER_TYPE = PROPOSER_SLASHING_TYPE;
const ATTESTER_TYPE = 0x02;
const SIGNED_HEADER_BYTES = SignedHeaderSsz.fixedSize!;
const CANONICAL_HEADER_BYTES = SIGNED_HEADER_BYTES + SIGNATURE_BYTES;
const ATTESTATION_BYTES = AttestationSsz.fixedSize!;
/** Size of a proposer slashing's encoding. */
export const PROPOSER_SLASHING_BYTES = 1 + 2 * CANONICAL_HEADER_BYTES;
/** Size of an attester slashing's encoding. */
export const ATTESTER_SLASHING_BYTES = 1 + 2 * ATTESTATION_BYTES;
export { MAX_EVIDENCE_BYTES };

const SLASHING_LEAF_TAG = utf8('svc/slashing-leaf');

function canonicalHeader(h: SignedBlockHeader): Uint8Array {
  return concatBytes(encodeSignedHeader(h.header), h.signature);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Proposer evidence from two signed headers, in canonical order. */
export function proposerSlashing(a: SignedBlockHeader, b: SignedBlockHeader): ProposerSlashing {
  return compareBytes(canonicalHeader(a), canonicalHeader(b)) <= 0 ? { type: 'proposer', header1: a, header2: b } : { type: 'proposer', header1: b, header2: a };
}

/** Attester evidence from two signed attestations, in canonical order. */
export function attesterSlashing(a: Attestation, b: Attestation): AttesterSlashing {
  return compareBytes(encodeAttestation(a), encodeAttestation(b)) <= 0 ? { type: 'attester', attestation1: a, attestation2: b } : { type: 'attester', attestation1: b, attestation2: a };
}

/** Wire encoding (see the module comment). */
export function encodeEvidence(ev: SlashingEvidence): Uint8Array {
  if (ev.type === 'proposer') {
    for (const h of [ev.header1, ev.header2]) if (h.signature.length !== SIGNATURE_BYTES) throw new MalformedError('slashing.signature', `expected ${SIGNATURE_BYTES} bytes`);
    return concatBytes(Uint8Array.of(PROPOSER_TYPE), canonicalHeader(ev.header1), canonicalHeader(ev.header2));
  }
  return concatBytes(Uint8Array.of(ATTESTER_TYPE), encodeAttestation(ev.attestation1), encodeAttestation(ev.attestation2));
}

function decodeSignedHeader(bytes: Uint8Array, field: string): SignedBlockHeader {
  let v: ReturnType<typeof SignedHeaderSsz.deserialize>;
  try {
    v = SignedHeaderSsz.deserialize(bytes.subarray(0, SIGNED_HEADER_BYTES));
  } catch (err) {
    throw new MalformedError(field, (err as Error).message);
  }
  if (!Number.isSafeInteger(v.index) || !Number.isSafeInteger(v.timestamp) || !Number.isSafeInteger(v.validatorIndex)) throw new MalformedError(field, 'integers must be below 2^53');
  const header: SignedHeader = { chainId: chainIdFromBytes(v.chainId, `${field}.chain_id`), index: v.index, timestamp: v.timestamp, parentHash: v.parentHash, merkleRoot: v.merkleRoot, validatorIndex: v.validatorIndex };
  return { header, signature: bytes.slice(SIGNED_HEADER_BYTES, CANONICAL_HEADER_BYTES) };
}

// The padded form must be the canonical one, or two encodings would name the same header.
function chainIdFromBytes(raw: Uint8Array, field: string): string {
  let end = raw.length;
  while (end > 0 && raw[end - 1] === 0) end--;
  const id = new TextDecoder('utf-8', { fatal: false }).decode(raw.subarray(0, end));
  let canonical: Uint8Array;
  try {
    canonical = chainIdBytes(id);
  } catch (err) {
    throw new MalformedError(field, (err as Error).message);
  }
  if (!bytesEqual(canonical, raw)) throw new MalformedError(field, 'not a canonical chain id');
  return id;
}

/** Decodes the wire encoding; structural faults are MalformedError. The result is in canonical order. */
export function decodeEvidence(bytes: Uint8Array): SlashingEvidence {
  if (bytes.length === PROPOSER_SLASHING_BYTES && bytes[0] === PROPOSER_TYPE) {
    return proposerSlashing(decodeSignedHeader(bytes.subarray(1, 1 + CANONICAL_HEADER_BYTES), 'slashing.header_1'), decodeSignedHeader(bytes.subarray(1 + CANONICAL_HEADER_BYTES), 'slashing.header_2'));
  }
  if (bytes.length === ATTESTER_SLASHING_BYTES && bytes[0] === ATTESTER_TYPE) {
    return attesterSlashing(decodeAttestation(bytes.slice(1, 1 + ATTESTATION_BYTES)), decodeAttestation(bytes.slice(1 + ATTESTATION_BYTES)));
  }
  throw new MalformedError('slashing', `expected type 1 in ${PROPOSER_SLASHING_BYTES} bytes or type 2 in ${ATTESTER_SLASHING_BYTES} bytes, got type ${bytes[0] ?? 'none'} in ${bytes.length}`);
}

/** Identity of evidence: SHA3-256 of its wire encoding. */
export function evidenceHash(ev: SlashingEvidence): Uint8Array {
  return sha3(encodeEvidence(ev));
}

/** Merkle leaf of included evidence: SHA3-256("svc/slashing-leaf" ‖ evidence hash). */
export function slashingLeaf(ev: SlashingEvidence): Uint8Array {
  return sha3(SLASHING_LEAF_TAG, evidenceHash(ev));
}

/** JSON of a signed header (0x hex, integers as numbers). */
export interface SignedHeaderJson {
  chain_id: string;
  index: number;
  /** Unix seconds, as signed. */
  timestamp: number;
  parent_hash: string;
  merkle_root: string;
  validator_index: number;
  signature: string;
}

/** Wire JSON of evidence. */
export type SlashingEvidenceJson =
  | { type: 'proposer'; header_1: SignedHeaderJson; header_2: SignedHeaderJson }
  | { type: 'attester'; attestation_1: AttestationJson; attestation_2: AttestationJson };

function headerToJson(h: SignedBlockHeader): SignedHeaderJson {
  const s = h.header;
  return { chain_id: s.chainId, index: s.index, timestamp: s.timestamp, parent_hash: toHex(s.parentHash), merkle_root: toHex(s.merkleRoot), validator_index: s.validatorIndex, signature: toHex(h.signature) };
}

/** Canonical JSON of evidence. */
export function evidenceToJson(ev: SlashingEvidence): SlashingEvidenceJson {
  return ev.type === 'proposer'
    ? { type: 'proposer', header_1: headerToJson(ev.header1), header_2: headerToJson(ev.header2) }
    : { type: 'attester', attestation_1: attestationToJson(ev.attestation1), attestation_2: attestationToJson(ev.attestation2) };
}

function headerFromJson(input: unknown, field: string): SignedBlockHeader {
  const o = requireObject(input, field);
  rejectUnknownKeys(o, ['chain_id', 'index', 'timestamp', 'parent_hash', 'merkle_root', 'validator_index', 'signature'], field);
  const chainId = parseString(o.chain_id, `${field}.chain_id`);
  try {
    chainIdBytes(chainId);
  } catch (err) {
    throw new MalformedError(`${field}.chain_id`, (err as Error).message);
  }
  return {
    header: {
      chainId,
      index: parseUint(o.index, `${field}.index`),
      timestamp: parseUint(o.timestamp, `${field}.timestamp`),
      parentHash: parseHex(o.parent_hash, `${field}.parent_hash`, HASH_BYTES),
      merkleRoot: parseHex(o.merkle_root, `${field}.merkle_root`, HASH_BYTES),
      validatorIndex: parseUint(o.validator_index, `${field}.validator_index`),
    },
    signature: parseHex(o.signature, `${field}.signature`, SIGNATURE_BYTES),
  };
}

/** Strictly parses evidence JSON (MalformedError on bad input); the result is in canonical order. */
export function evidenceFromJson(input: unknown): SlashingEvidence {
  const o = requireObject(input, 'slashing');
  if (o.type === 'proposer') {
    rejectUnknownKeys(o, ['type', 'header_1', 'header_2'], 'slashing');
    return proposerSlashing(headerFromJson(o.header_1, 'slashing.header_1'), headerFromJson(o.header_2, 'slashing.header_2'));
  }
  if (o.type === 'attester') {
    rejectUnknownKeys(o, ['type', 'attestation_1', 'attestation_2'], 'slashing');
    return attesterSlashing(attestationFromJson(o.attestation_1), attestationFromJson(o.attestation_2));
  }
  throw new MalformedError('slashing.type', 'expected "proposer" or "attester"');
}
