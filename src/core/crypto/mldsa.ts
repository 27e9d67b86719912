/**
 * ML-DSA-65 (FIPS 204) keys, signing and verification behind one interface with three backends:
 * @noble/post-quantum (audited reference, always loaded); liboqs compiled to WebAssembly (hedged
 * signing and verification, loaded only when chosen or as a fallback); and `svc-wasm`, the
 * default: svc's own WebAssembly module (mldsa-wasm.ts), which signs both ways (deterministic
 * and hedged, byte for byte what noble gives for the same rnd; 15-18x noble, about liboqs' speed)
 * and verifies as fast as liboqs for a key it has not seen, about three times
 * faster for one whose expansion it keeps. Key generation from a seed always uses noble.
 */
import { randomBytes } from 'node:crypto';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { KEYGEN_SEED_BYTES, PUBLIC_KEY_BYTES, SECRET_KEY_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { CryptoError } from '../errors.js';
import { type KeyCacheStats, MlDsaWasm, SIGN_RANDOM_BYTES, VERIFY_KEY_CACHE_ENTRIES } from './mldsa-wasm.js';

/** An ML-DSA-65 key pair. */
export interface MlDsaKeyPair {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

/** A conforming ML-DSA-65 implementation (pure mode, empty context). */
export interface SignatureBackend {
  readonly name: 'noble' | 'liboqs' | 'svc-wasm';
  /** Hedged (randomised) signature. */
  sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array;
  /** Deterministic signature (rnd = 0): a function of key and message, the same under every backend. */
  signDeterministic(secretKey: Uint8Array, message: Uint8Array): Uint8Array;
  /** True when `signature` verifies; false for any malformed input, never throws. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  /** This thread's cache of expanded keys (svc-wasm only). */
  keyCacheStats?(): KeyCacheStats;
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
  signDeterministic(secretKey, message) {
    checkSecretKey(secretKey);
    return ml_dsa65.sign(message, secretKey, { extraEntropy: false });
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
    // liboqs-js has no deterministic variant.
    signDeterministic: nobleBackend.signDeterministic,
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

const ZERO_RANDOM = new Uint8Array(SIGN_RANDOM_BYTES);

/**
 * The `svc-wasm` backend: svc's WebAssembly module signs, and verifies with this thread's cache
 * of expanded keys. One instance per thread (each worker loads its own backend).
 */
export function wasmBackend(keyCacheEntries: number = keyCacheEntriesFromEnv()): SignatureBackend {
  const wasm = new MlDsaWasm(keyCacheEntries);
  return {
    name: 'svc-wasm',
    sign: (secretKey, message) => wasm.sign(secretKey, message, randomBytes(SIGN_RANDOM_BYTES)),
    signDeterministic: (secretKey, message) => wasm.sign(secretKey, message, ZERO_RANDOM),
    verify(publicKey, message, signature) {
      return wasm.verify(publicKey, message, signature);
    },
    keyCacheStats: () => wasm.stats(),
  };
}

/** Expanded keys each verifying thread keeps: `SVC_KEY_CACHE_ENTRIES` (unset: 2,048); throws unless a positive integer. */
export function keyCacheEntriesFromEnv(): number {
  const v = process.env.SVC_KEY_CACHE_ENTRIES;
  if (v === undefined || v === '') return VERIFY_KEY_CACHE_ENTRIES;
  if (!/^[1-9][0-9]{0,6}$/.test(v)) throw new CryptoError(`SVC_KEY_CACHE_ENTRIES must be a positive integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** Set by initSignatureBackend, else on first use by defaultBackend. */
let current: SignatureBackend | undefined;

/**
 * Backend preference: `auto` is `svc-wasm`, falling back to liboqs and then to noble with a
 * warning; `liboqs` and `svc-wasm` fail rather than fall back.
 */
export type BackendChoice = 'auto' | 'noble' | 'liboqs' | 'svc-wasm';

/** The operator's backend choice from `SVC_CRYPTO_BACKEND` (unset: `auto`); throws on an unknown value. */
export function backendFromEnv(): BackendChoice {
  const v = process.env.SVC_CRYPTO_BACKEND;
  if (v === undefined || v === '') return 'auto';
  if (v === 'auto' || v === 'noble' || v === 'liboqs' || v === 'svc-wasm') return v;
  throw new CryptoError(`SVC_CRYPTO_BACKEND must be auto, noble, liboqs or svc-wasm, got ${JSON.stringify(v)}`);
}

/**
 * Selects the process-wide backend. Call once at start-up; until then the first signature or
 * verification picks svc-wasm (noble when SVC_CRYPTO_BACKEND says so or the module is missing).
 * `choice` defaults to `SVC_CRYPTO_BACKEND` (the nodes pass backendFromEnv() explicitly), so operators can pin the reference implementation.
 */
export async function initSignatureBackend(
  choice: BackendChoice = backendFromEnv(),
  warn: (msg: string) => void = (msg) => process.emitWarning(msg),
): Promise<SignatureBackend> {
  if (choice === 'noble') {
    current = nobleBackend;
    return current;
  }
  if (choice === 'liboqs') {
    try {
      current = await loadLiboqsBackend();
    } catch (err) {
      throw new CryptoError(`liboqs backend failed to load: ${(err as Error).message}`);
    }
    return current;
  }
  // A bad setting stops start-up; it is not a reason to fall back.
  const keyCacheEntries = keyCacheEntriesFromEnv();
  try {
    current = wasmBackend(keyCacheEntries);
    return current;
  } catch (err) {
    if (choice === 'svc-wasm') throw new CryptoError(`svc-wasm backend failed to load: ${(err as Error).message}`);
    warn(`svc-wasm backend failed to load (${(err as Error).message}); trying liboqs`);
  }
  try {
    current = await loadLiboqsBackend();
  } catch (err) {
    warn(`liboqs WebAssembly backend failed to load (${(err as Error).message}); signing and verifying with the slower noble backend`);
    current = nobleBackend;
  }
  return current;
}

/** The backend currently serving `sign` and `verify`. */
export function signatureBackend(): SignatureBackend {
  return (current ??= defaultBackend());
}

/** The backend a process that never chose one gets: synchronous, so liboqs (loaded asynchronously) is never it. */
function defaultBackend(): SignatureBackend {
  if (backendFromEnv() === 'noble') return nobleBackend;
  try {
    return wasmBackend();
  } catch (err) {
    process.emitWarning(`svc-wasm backend failed to load (${(err as Error).message}); signing and verifying with the slower noble backend`);
    return nobleBackend;
  }
}

/** Deterministic ML-DSA-65 key pair from a 32-byte seed ξ (FIPS 204 ML-DSA.KeyGen_internal). */
export function keygenFromSeed(seed: Uint8Array): MlDsaKeyPair {
  if (seed.length !== KEYGEN_SEED_BYTES) throw new CryptoError(`key seed must be ${KEYGEN_SEED_BYTES} bytes, got ${seed.length}`);
  const { publicKey, secretKey } = ml_dsa65.keygen(seed);
  return { publicKey, secretKey };
}

/** Signs `message`; `deterministic` (blocks, VRF proofs) makes the signature a function of key and message. */
export function sign(secretKey: Uint8Array, message: Uint8Array, opts: { deterministic?: boolean } = {}): Uint8Array {
  const backend = signatureBackend();
  return opts.deterministic ? backend.signDeterministic(secretKey, message) : backend.sign(secretKey, message);
}

/** Verifies with the active backend; false on any malformed input. */
export function verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return signatureBackend().verify(publicKey, message, signature);
}
