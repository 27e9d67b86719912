/**
 * Proposer-selection "VRF": the seed is public and unbiasable given the RANDAO mix, and the
 * proof is the proposer's deterministic ML-DSA-65 signature over it (unique per key and seed).
 */
import { utf8, u64LE } from '../codec/bytes.js';
import { Domain, signingHash } from './domain.js';
import { sha3 } from './hash.js';
import { type MlDsaKeyPair, sign, verify } from './mldsa.js';

const VRF_PREFIX = utf8('vrf');

/** vrf_seed = SHA3-256("vrf" ‖ randao_mix(epoch) ‖ uint64_le(slot)). */
export function vrfSeed(randaoMix: Uint8Array, slot: number): Uint8Array {
  return sha3(VRF_PREFIX, randaoMix, u64LE(slot));
}

/** The proposer's proof for `seed`. */
export function vrfProve(key: MlDsaKeyPair, seed: Uint8Array, chainId: string): Uint8Array {
  return sign(key.secretKey, signingHash(Domain.Vrf, chainId, seed), { deterministic: true });
}

/** True when `proof` is a valid proof for `seed` under `publicKey`. */
export function vrfVerify(publicKey: Uint8Array, seed: Uint8Array, proof: Uint8Array, chainId: string): boolean {
  return verify(publicKey, signingHash(Domain.Vrf, chainId, seed), proof);
}
