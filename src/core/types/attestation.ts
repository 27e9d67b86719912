/** Attestations: a validator's signed vote for a head block and an FFG source → target link. */
import { HASH_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { parseHex, toHex } from '../codec/bytes.js';
import { parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { Domain, signingHash } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { MalformedError } from '../errors.js';
import { type MlDsaKeyPair, sign, verify } from '../crypto/mldsa.js';
import { AttestationMessageSsz, AttestationSsz } from './ssz.js';

export interface Checkpoint {
  epoch: number;
  root: Uint8Array;
}

export interface AttestationData {
  slot: number;
  beaconBlockRoot: Uint8Array;
  source: Checkpoint;
  target: Checkpoint;
}

export interface Attestation {
  validatorIndex: number;
  data: AttestationData;
  signature: Uint8Array;
}

/** Domain-separated hash an attester signs (covers its index and the vote). */
export function attestationSigningHash(validatorIndex: number, data: AttestationData, chainId: string): Uint8Array {
  return signingHash(Domain.Attestation, chainId, AttestationMessageSsz.serialize({ validatorIndex, data }));
}

/** Signs an attestation deterministically, so a double vote is two distinct signed messages. */
export function signAttestation(validatorIndex: number, data: AttestationData, key: MlDsaKeyPair, chainId: string): Attestation {
  return { validatorIndex, data, signature: sign(key.secretKey, attestationSigningHash(validatorIndex, data, chainId), { deterministic: true }) };
}

/** True when the attestation's signature verifies under `publicKey`. */
export function verifyAttestation(att: Attestation, publicKey: Uint8Array, chainId: string): boolean {
  return verify(publicKey, attestationSigningHash(att.validatorIndex, att.data, chainId), att.signature);
}

/** SSZ of a signed attestation (the gossip payload). */
export function encodeAttestation(att: Attestation): Uint8Array {
  return AttestationSsz.serialize(att);
}

/** Decodes an SSZ attestation; structural faults are `MalformedError`. */
export function decodeAttestation(bytes: Uint8Array): Attestation {
  let v: ReturnType<typeof AttestationSsz.deserialize>;
  try {
    v = AttestationSsz.deserialize(bytes);
  } catch (err) {
    throw new MalformedError('attestation', (err as Error).message);
  }
  if (!Number.isSafeInteger(v.validatorIndex) || !Number.isSafeInteger(v.data.slot) || !Number.isSafeInteger(v.data.source.epoch) || !Number.isSafeInteger(v.data.target.epoch)) {
    throw new MalformedError('attestation', 'integers must be below 2^53');
  }
  return v;
}

/** Identity of a signed attestation: SHA3-256 of its SSZ (also its gossip message id). */
export function attestationHash(att: Attestation): Uint8Array {
  return sha3(encodeAttestation(att));
}

export interface CheckpointJson {
  epoch: number;
  root: string;
}

export interface AttestationJson {
  validator_index: number;
  data: { slot: number; beacon_block_root: string; source: CheckpointJson; target: CheckpointJson };
  signature: string;
}

/** Canonical JSON of an attestation. */
export function attestationToJson(att: Attestation): AttestationJson {
  const cp = (c: Checkpoint): CheckpointJson => ({ epoch: c.epoch, root: toHex(c.root) });
  return {
    validator_index: att.validatorIndex,
    data: { slot: att.data.slot, beacon_block_root: toHex(att.data.beaconBlockRoot), source: cp(att.data.source), target: cp(att.data.target) },
    signature: toHex(att.signature),
  };
}

function checkpointFromJson(input: unknown, field: string): Checkpoint {
  const o = requireObject(input, field);
  rejectUnknownKeys(o, ['epoch', 'root'], field);
  return { epoch: parseUint(o.epoch, `${field}.epoch`), root: parseHex(o.root, `${field}.root`, HASH_BYTES) };
}

/** Strictly parses attestation JSON. */
export function attestationFromJson(input: unknown): Attestation {
  const o = requireObject(input, 'attestation');
  rejectUnknownKeys(o, ['validator_index', 'data', 'signature'], 'attestation');
  const d = requireObject(o.data, 'attestation.data');
  rejectUnknownKeys(d, ['slot', 'beacon_block_root', 'source', 'target'], 'attestation.data');
  return {
    validatorIndex: parseUint(o.validator_index, 'attestation.validator_index'),
    data: {
      slot: parseUint(d.slot, 'attestation.data.slot'),
      beaconBlockRoot: parseHex(d.beacon_block_root, 'attestation.data.beacon_block_root', HASH_BYTES),
      source: checkpointFromJson(d.source, 'attestation.data.source'),
      target: checkpointFromJson(d.target, 'attestation.data.target'),
    },
    signature: parseHex(o.signature, 'attestation.signature', SIGNATURE_BYTES),
  };
}
