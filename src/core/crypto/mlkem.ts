/** ML-KEM-1024 (FIPS 203, "Kyber-1024") wrappers for the post-quantum half of the P2P handshake. */
import { ml_kem1024 } from '@noble/post-quantum/ml-kem.js';
import { randomBytes } from 'node:crypto';
import { CryptoError } from '../errors.js';

/** Public (encapsulation) key length. */
export const KEM_PUBLIC_KEY_BYTES = 1568;
/** Ciphertext length. */
export const KEM_CIPHERTEXT_BYTES = 1568;
/** Secret (decapsulation) key length. */
export const KEM_SECRET_KEY_BYTES = 3168;
/** Key-generation seed length (d ‖ z). */
export const KEM_SEED_BYTES = 64;

/** An ML-KEM-1024 key pair. */
export interface KemKeyPair {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

/** Key pair from a 64-byte seed, or from fresh randomness when none is given. */
export function kemKeygen(seed: Uint8Array = new Uint8Array(randomBytes(KEM_SEED_BYTES))): KemKeyPair {
  if (seed.length !== KEM_SEED_BYTES) throw new CryptoError(`KEM seed must be ${KEM_SEED_BYTES} bytes, got ${seed.length}`);
  return ml_kem1024.keygen(seed);
}

/** Encapsulates a fresh shared secret to `publicKey`. */
export function kemEncapsulate(publicKey: Uint8Array): { ciphertext: Uint8Array; sharedSecret: Uint8Array } {
  if (publicKey.length !== KEM_PUBLIC_KEY_BYTES) throw new CryptoError(`KEM public key must be ${KEM_PUBLIC_KEY_BYTES} bytes`);
  const { cipherText, sharedSecret } = ml_kem1024.encapsulate(publicKey);
  return { ciphertext: cipherText, sharedSecret };
}

/** Recovers the shared secret; a tampered ciphertext yields an unrelated secret (implicit rejection). */
export function kemDecapsulate(ciphertext: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (ciphertext.length !== KEM_CIPHERTEXT_BYTES) throw new CryptoError(`KEM ciphertext must be ${KEM_CIPHERTEXT_BYTES} bytes`);
  if (secretKey.length !== KEM_SECRET_KEY_BYTES) throw new CryptoError(`KEM secret key must be ${KEM_SECRET_KEY_BYTES} bytes`);
  return ml_kem1024.decapsulate(ciphertext, secretKey);
}
