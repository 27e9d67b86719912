/**
 * Hash-chain RANDAO (the EIP-8321 approach): a validator commits to H^n(secret) and reveals one
 * link back per proposal. Reveals are unique, so a proposer cannot grind the mix.
 */
import { u64LE, utf8 } from '../codec/bytes.js';
import { CryptoError } from '../errors.js';
import { sha3 } from './hash.js';

const SECRET_TAG = utf8('svc/randao-secret/v1');

/** The chain's secret, derived from the validator's 32-byte ML-DSA key seed. */
export function randaoSecret(keySeed: Uint8Array): Uint8Array {
  if (keySeed.length !== 32) throw new CryptoError('RANDAO secret needs the 32-byte key seed');
  return sha3(SECRET_TAG, keySeed);
}

const GENERATION_TAG = utf8('svc/randao-secret/generation/v1');

/**
 * The secret of a validator's `generation`-th chain: generation 0 is the genesis/deposit chain
 * (randaoSecret), each re-commitment moves to the next one, SHA3-256("svc/randao-secret/generation/v1"
 * ‖ key seed ‖ uint64_le(generation)). Derived from the key seed alone, so a client that lost its
 * files can rebuild any generation; the tag keeps the generations apart from each other and from
 * every other use of the seed.
 */
export function randaoSecretAt(keySeed: Uint8Array, generation: number): Uint8Array {
  if (!Number.isSafeInteger(generation) || generation < 0) throw new CryptoError(`RANDAO generation must be a non-negative integer, got ${generation}`);
  if (generation === 0) return randaoSecret(keySeed);
  if (keySeed.length !== 32) throw new CryptoError('RANDAO secret needs the 32-byte key seed');
  return sha3(GENERATION_TAG, keySeed, u64LE(generation));
}

/** H^n(value) with H = SHA3-256. */
export function hashChain(value: Uint8Array, n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new CryptoError(`hash chain length must be a non-negative integer, got ${n}`);
  let v = value;
  for (let i = 0; i < n; i++) v = sha3(v);
  return v;
}

/** The commitment registered at genesis or deposit: H^length(secret). */
export function randaoCommitment(keySeed: Uint8Array, length: number): Uint8Array {
  return hashChain(randaoSecret(keySeed), length);
}

/** The k-th reveal (k = 1 for the first proposal): H^(length-k)(secret). */
export function randaoReveal(keySeed: Uint8Array, length: number, k: number): Uint8Array {
  if (k < 1 || k > length) throw new CryptoError(`RANDAO chain exhausted or k out of range (k=${k}, length=${length})`);
  return hashChain(randaoSecret(keySeed), length - k);
}

/** True when `reveal` is the preimage of the last accepted value. */
export function verifyRandaoReveal(reveal: Uint8Array, lastValue: Uint8Array): boolean {
  const h = sha3(reveal);
  return h.length === lastValue.length && h.every((b, i) => b === lastValue[i]);
}

/** New mix after a reveal: SHA3-256(mix ‖ reveal). */
export function mixRandao(mix: Uint8Array, reveal: Uint8Array): Uint8Array {
  return sha3(mix, reveal);
}
