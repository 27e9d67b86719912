/** Argon2id key derivation for wallet encryption, run on a worker thread. */
import { createHash, randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { parseBase64, toBase64, utf8 } from '../core/codec/bytes.js';
import { WalletError } from '../core/errors.js';

/** The `kdf` object of a wallet file. `memory` is in KiB, as Argon2 defines it. */
export interface KdfParams {
  algo: 'argon2id';
  memory: number;
  iterations: number;
  parallelism: number;
  /** base64 of 16 random bytes. */
  salt: string;
}

/** Production parameters: RFC 9106's second recommended setting (64 MiB, t=3, p=4). */
export const PRODUCTION_KDF = { memory: 64 * 1024, iterations: 3, parallelism: 4 } as const;

/** Limits applied to parameters read from a file, so a hostile wallet cannot exhaust the machine. */
const MAX_MEMORY_KIB = 4 * 1024 * 1024;
const MAX_ITERATIONS = 64;
const MAX_PARALLELISM = 16;
/** Argon2 requires at least 8 KiB per lane. */
const MIN_MEMORY_PER_LANE_KIB = 8;

/** Fresh parameters with a random salt; `memory` may be lowered explicitly (tests, devnets). */
export function newKdfParams(memory: number = PRODUCTION_KDF.memory): KdfParams {
  return { algo: 'argon2id', ...PRODUCTION_KDF, memory, salt: toBase64(new Uint8Array(randomBytes(16))) };
}

/** Validates a `kdf` object read from a wallet file. */
export function parseKdfParams(input: unknown): KdfParams {
  const k = input as Partial<Record<keyof KdfParams, unknown>> | null;
  const intIn = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  if (!k || typeof k !== 'object' || k.algo !== 'argon2id') throw new WalletError('INVALID_WALLET', 'wallet kdf.algo must be argon2id');
  // An unknown parameter (say an Argon2 version) would otherwise be dropped and surface as "wrong password".
  const extra = Object.keys(k).find((key) => !['algo', 'memory', 'iterations', 'parallelism', 'salt'].includes(key));
  if (extra !== undefined) throw new WalletError('INVALID_WALLET', `wallet kdf has unknown field ${extra}`);
  if (!intIn(k.parallelism, 1, MAX_PARALLELISM)) throw new WalletError('INVALID_WALLET', `wallet kdf.parallelism must be 1..${MAX_PARALLELISM}`);
  if (!intIn(k.iterations, 1, MAX_ITERATIONS)) throw new WalletError('INVALID_WALLET', `wallet kdf.iterations must be 1..${MAX_ITERATIONS}`);
  const minMemory = MIN_MEMORY_PER_LANE_KIB * (k.parallelism as number);
  if (!intIn(k.memory, minMemory, MAX_MEMORY_KIB)) throw new WalletError('INVALID_WALLET', `wallet kdf.memory must be ${minMemory}..${MAX_MEMORY_KIB} KiB`);
  const salt = parseBase64(k.salt, 'wallet kdf.salt');
  if (salt.length < 16) throw new WalletError('INVALID_WALLET', 'wallet kdf.salt must be at least 16 bytes');
  return { algo: 'argon2id', memory: k.memory as number, iterations: k.iterations as number, parallelism: k.parallelism as number, salt: k.salt as string };
}

/**
 * Derivations this process already made (or is making), by a digest of their inputs. Wallets
 * written from one seed share one encrypted seed, salt included (a devnet's 64 validator
 * keystores), so a process unlocking all of them derives one key, not 64: each derivation costs a
 * worker thread's start (~0.2 s of CPU) on top of Argon2 itself. Bounded, oldest dropped first.
 */
const derived = new Map<string, Promise<Uint8Array>>();
/** Most derivations remembered. */
const DERIVED_KEPT = 8;

/** Derives the 32-byte encryption key from `password` without blocking the event loop (once per distinct password, salt and parameters). */
export async function deriveKey(password: string, params: KdfParams): Promise<Uint8Array> {
  const id = createHash('sha256').update(JSON.stringify([password, params.salt, params.memory, params.iterations, params.parallelism])).digest('hex');
  let p = derived.get(id);
  if (!p) {
    p = deriveOnWorker(password, params);
    derived.set(id, p);
    // A failure is not remembered: the next attempt derives again.
    p.catch(() => derived.delete(id));
    if (derived.size > DERIVED_KEPT) derived.delete(derived.keys().next().value!);
  }
  // A copy: callers may wipe the key they get.
  return new Uint8Array(await p);
}

function deriveOnWorker(password: string, params: KdfParams): Promise<Uint8Array> {
  const job = { password: utf8(password), salt: parseBase64(params.salt, 'kdf.salt'), memory: params.memory, iterations: params.iterations, parallelism: params.parallelism };
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./kdf-worker.js', import.meta.url), { workerData: job });
    worker.once('message', (msg: { key?: Uint8Array; error?: string }) => {
      void worker.terminate();
      if (msg.key) resolve(new Uint8Array(msg.key));
      else reject(new WalletError('KDF_FAILED', `argon2id failed: ${msg.error}`));
    });
    worker.once('error', (err) => reject(new WalletError('KDF_FAILED', `argon2id worker failed: ${err.message}`)));
    // Settling twice is a no-op, so this only fires if the worker died without answering.
    worker.once('exit', (code) => reject(new WalletError('KDF_FAILED', `argon2id worker exited with code ${code}`)));
  });
}
