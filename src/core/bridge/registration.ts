/**
 * Who may register a bridge counterpart (docs/bridge.md "Who may register"): validators holding
 * ≥ 2/3 of this chain's active stake sign the registration's terms (this chain, the counterpart's
 * genesis hash, chain id and validator set, the allowance), and execution checks those signatures
 * against its own registry, as it checks slashing evidence. Pure: no I/O.
 */
import { ByteListType, ByteVectorType, ContainerType, UintBigintType } from '@chainsafe/ssz';
import { CHAIN_ID_BYTES, HASH_BYTES } from '../constants.js';
import { bigintToBytesBE, concatBytes, parseHex, toHex, utf8, tag32 } from '../codec/bytes.js';
import { Domain, signingHash } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { type MlDsaKeyPair, sign, verify } from '../crypto/mldsa.js';
import type { Genesis } from '../genesis/genesis.js';
import { type BidSignature, BridgeError, type RegisterBody } from './types.js';

/** What a validator consents to when it signs a registration. */
export interface RegistrationTerms {
  /** This chain's genesis hash (the chain the registration is for). */
  chain: Uint8Array;
  /** The counterpart's genesis hash. */
  counterpart: Uint8Array;
  counterpartChainId: string;
  /** validatorSetCommitment of the counterpart's genesis: the set its proofs are checked against. */
  validatorSet: Uint8Array;
  /** Wei moved from this chain's unallocated reserve into the counterpart's ledger. */
  allowance: bigint;
}

const bytes32 = new ByteVectorType(HASH_BYTES);
export const RegistrationTermsSsz = new ContainerType({
  chain: bytes32,
  counterpart: bytes32,
  counterpartChainId: new ByteListType(CHAIN_ID_BYTES),
  validatorSet: bytes32,
  allowance: new UintBigintType(32),
});


const REGISTRATION_TAG = tag32('svc/bridge/registration/v1');
const VALIDATOR_SET_TAG = tag32('svc/bridge/validator-set/v1');

/** SHA3-256 over a genesis document's validators (index, public key, stake), in index order: what a signer reads as "the set I trust". */
export function validatorSetCommitment(g: Genesis): Uint8Array {
  const parts = [...g.validators]
    .sort((a, b) => a.index - b.index)
    .map((v) => concatBytes(bigintToBytesBE(BigInt(v.index), 8), parseHex(v.public_key, 'public_key'), bigintToBytesBE(BigInt(v.stake), 32)));
  return sha3(VALIDATOR_SET_TAG, ...parts);
}

/** The terms registering `counterpart` (genesis hash `counterpartHash`) on the chain `selfHash` with `allowance` wei. */
export function registrationTerms(selfHash: Uint8Array, counterpart: Genesis, counterpartHash: Uint8Array, allowance: bigint): RegistrationTerms {
  return { chain: selfHash, counterpart: counterpartHash, counterpartChainId: counterpart.chain_id, validatorSet: validatorSetCommitment(counterpart), allowance };
}

function termsBytes(t: RegistrationTerms): Uint8Array {
  return RegistrationTermsSsz.serialize({ ...t, counterpartChainId: utf8(t.counterpartChainId) });
}

/** The id of a registration request (beacon routes, CLI): SHA3-256(tag ‖ SSZ(terms)). */
export function registrationId(t: RegistrationTerms): Uint8Array {
  return sha3(REGISTRATION_TAG, termsBytes(t));
}

/** Hash a validator of `chainId` signs to consent to a registration (Domain.BridgeRegistration). */
export function registrationSigningHash(t: RegistrationTerms, chainId: string): Uint8Array {
  return signingHash(Domain.BridgeRegistration, chainId, termsBytes(t));
}

/** Signs registration terms as validator `validatorIndex` of `chainId`. */
export function signRegistration(t: RegistrationTerms, validatorIndex: number, key: MlDsaKeyPair, chainId: string): BidSignature {
  return { validatorIndex, signature: sign(key.secretKey, registrationSigningHash(t, chainId), { deterministic: true }) };
}

/** True when a registration signature verifies under `publicKey`. */
export function verifyRegistrationSignature(t: RegistrationTerms, s: BidSignature, publicKey: Uint8Array, chainId: string): boolean {
  return verify(publicKey, registrationSigningHash(t, chainId), s.signature);
}

/** A validator of this chain as the registration rule reads it (execution's registry). */
export interface RegistrySigner {
  stake: bigint;
  active: boolean;
  slashed: boolean;
  publicKey(): Uint8Array;
}

/** This chain's validator registry as the registration rule reads it. */
export interface RegistryView {
  /** This chain's id (the signatures' domain). */
  chainId: string;
  validator(index: number): RegistrySigner | undefined;
  /** Stake of the active, unslashed validators, wei. */
  activeStake(): bigint;
}

/**
 * Checks a registration's signatures against this chain's registry, cheapest checks first so a
 * hostile registration costs no signature verification: each signer an active, unslashed
 * validator, once (BRIDGE_UNKNOWN_SIGNER, BRIDGE_DUPLICATE_SIGNER); together ≥ 2/3 of the active
 * stake (BRIDGE_REGISTRATION_UNAUTHORIZED); then every signature valid (BRIDGE_BAD_SIGNATURE).
 */
export function checkRegistrationSignatures(body: RegisterBody, terms: RegistrationTerms, registry: RegistryView): void {
  const seen = new Set<number>();
  const signers: Array<{ s: BidSignature; v: RegistrySigner }> = [];
  let signed = 0n;
  for (const s of body.signatures) {
    const v = registry.validator(s.validatorIndex);
    if (!v) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `registration signer ${s.validatorIndex} is not a validator of ${registry.chainId}`);
    if (v.slashed) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `registration signer ${s.validatorIndex} is slashed`);
    if (!v.active) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `registration signer ${s.validatorIndex} is not active (exited)`);
    if (seen.has(s.validatorIndex)) throw new BridgeError('BRIDGE_DUPLICATE_SIGNER', `validator ${s.validatorIndex} signs the registration twice`);
    seen.add(s.validatorIndex);
    signers.push({ s, v });
    signed += v.stake;
  }
  const active = registry.activeStake();
  if (active === 0n || 3n * signed < 2n * active) {
    throw new BridgeError(
      'BRIDGE_REGISTRATION_UNAUTHORIZED',
      `registering ${terms.counterpartChainId} (${toHex(terms.counterpart)}) needs signatures of validators holding ≥ 2/3 of ${registry.chainId}'s active stake ${active}; ${body.signatures.length} signer(s) hold ${signed}`,
    );
  }
  for (const { s, v } of signers) {
    if (!verifyRegistrationSignature(terms, s, v.publicKey(), registry.chainId)) {
      throw new BridgeError('BRIDGE_BAD_SIGNATURE', `the registration signature of validator ${s.validatorIndex} does not verify for these terms on ${registry.chainId}`);
    }
  }
}
