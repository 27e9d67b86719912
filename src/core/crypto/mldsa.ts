/**
 * ML-DSA-65 (FIPS 204) keys, signing and verification behind one interface with two backends:
 * @noble/post-quantum (audited reference, always loaded) and liboqs compiled to WebAssembly
 * (about 14x faster verification, loaded asynchronously). Key generation from a seed and
 * deterministic signing always use noble: liboqs-js exposes neither.
 */
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { KEYGEN_SEED_BYTES, PUBLIC_KEY_BYTES, SECRET_KEY_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { CryptoError } from '../errors.js';

/** An ML-DSA-65 key pair. */
export interface MlDsaKeyPair {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

/** A conforming ML-DSA-65 implementation (pure mode, empty context). */
export interface SignatureBackend {
  readonly name: 'noble' | 'liboqs';
  /** Hedged (randomised) signature. */
  sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array;
  /** True when `signature` verifies; false for any malformed input, never throws. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

function sizesOk(publicKey: Uint8Array, signature: Uint8Array): boolean {
  return publicKey.length === PUBLIC_KEY_BYTES && signature.length === SIGNATURE_BYTES;
}

function checkSecretKey(secretKey: Uint8Array): void {
  if (secretKey.length !== SECRET_KEY_BYTES) throw new CryptoError(`secret key must be ${SECRET_KEY_BYTES} bytes, got ${secretKey.length}`);
}

/** The @noble/post-quantum backend. */
export const nobleBackend: SignatureBackend = {
  name: 'noble',
  sign(secretKey, message) {
    checkSecretKey(secretKey);
    return ml_dsa65.sign(message, secretKey);
  },
  verify(publicKey, message, signature) {
    if (!sizesOk(publicKey, signature)) return false;
    try {
      return ml_dsa65.verify(signature, message, publicKey);
    } catch {
      return false;
    }
  },
};

// liboqs-js refuses Node Buffers (a Uint8Array subclass) and would report them as invalid,
// where noble accepts them: present plain views so the two backends always agree.
function plain(bytes: Uint8Array): Uint8Array {
  return Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}

/** Loads the liboqs WebAssembly backend; rejects if the module cannot be instantiated. */
export async function loadLiboqsBackend(): Promise<SignatureBackend> {
  const { createMLDSA65 } = await import('@oqs/liboqs-js');
  const oqs = await createMLDSA65();
  return {
    name: 'liboqs',
    sign(secretKey, message) {
      checkSecretKey(secretKey);
      return oqs.sign(plain(message), plain(secretKey));
    },
    verify(publicKey, message, signature) {
      if (!sizesOk(publicKey, signature)) return false;
      try {
        return oqs.verify(plain(message), plain(signature), plain(publicKey));
      } catch {
        return false;
      }
    },
  };
}

let active: SignatureBackend = nobleBackend;

/** Backend preference: `auto` tries liboqs and falls back to noble with a warning. */
export type BackendChoice = 'auto' | 'noble' | 'liboqs';

/** The operator's backend choice from `SVC_CRYPTO_BACKEND` (unset: `auto`); throws on an unknown value. */
export function backendFromEnv(): BackendChoice {
  const v = process.env.SVC_CRYPTO_BACKEND;
  if (v === undefined || v === '') return 'auto';
  if (v === 'auto' || v === 'noble' || v === 'liboqs') return v;
  throw new CryptoError(`SVC_CRYPTO_BACKEND must be auto, noble or liboqs, got ${JSON.stringify(v)}`);
}

/**
 * Selects the process-wide backend. Call once at start-up; until then noble serves (correct, slower).
 * `choice` defaults to `SVC_CRYPTO_BACKEND` (the nodes pass backendFromEnv() explicitly), so operators can pin the reference implementation.
 */
export async function initSignatureBackend(
  choice: BackendChoice = backendFromEnv(),
  warn: (msg: string) => void = (msg) => process.emitWarning(msg),
): Promise<SignatureBackend> {
  if (choice === 'noble') {
    active = nobleBackend;
    return active;
  }
  try {
    active = await loadLiboqsBackend();
  } catch (err) {
    if (choice === 'liboqs') throw new CryptoError(`liboqs backend failed to load: ${(err as Error).message}`);
    warn(`liboqs WebAssembly backend failed to load (${(err as Error).message}); using the slower noble backend`);
    active = nobleBackend;
  }
  return active;
}

/** The backend currently serving `sign` and `verify`. */
export function signatureBackend(): SignatureBackend {
  return active;
}

/** Deterministic ML-DSA-65 key pair from a 32-byte seed ξ (FIPS 204 ML-DSA.KeyGen_internal). */
export function keygenFromSeed(seed: Uint8Array): MlDsaKeyPair {
  if (seed.length !== KEYGEN_SEED_BYTES) throw new CryptoError(`key seed must be ${KEYGEN_SEED_BYTES} bytes, got ${seed.length}`);
  const { publicKey, secretKey } = ml_dsa65.keygen(seed);
  return { publicKey, secretKey };
}

/** Signs `message`; `deterministic` (blocks, VRF proofs) makes the signature a function of key and message. */
export function sign(secretKey: Uint8Array, message: Uint8Array, opts: { deterministic?: boolean } = {}): Uint8Array {
  if (opts.deterministic) {
    checkSecretKey(secretKey);
    return ml_dsa65.sign(message, secretKey, { extraEntropy: false });
  }
  return active.sign(secretKey, message);
}

/** Verifies with the active backend; false on any malformed input. */
export function verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return active.verify(publicKey, message, signature);
}
