/**
 * svc's ML-DSA-65 signer and verifier (wasm/mldsa65/{sign,verify}.ts, compiled to
 * dist/wasm/mldsa65.wasm) and the verifier's cache of expanded public keys. Signing takes an
 * explicit rnd, so the same code gives the deterministic signatures the chain's blocks and votes
 * need (rnd = 0) and hedged ones; both are FIPS 204's, byte for byte (the tests compare with
 * noble). Expanding a key (tr, the matrix Â, NTT(t1·2^d)) is about two thirds of a
 * verification; senders, validators and attesters repeat, so each thread keeps the expansions of
 * the keys it verified most recently, as Lighthouse and Lodestar keep decompressed BLS keys. A
 * key whose expansion is cached verifies in about a third of the time; the answer is the same
 * either way (the slot is checked against the whole key before it is used).
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PUBLIC_KEY_BYTES, SECRET_KEY_BYTES, SIGNATURE_BYTES } from '../constants.js';
import { CryptoError } from '../errors.js';

interface ModuleExports {
  memory: WebAssembly.Memory;
  slotBytes(): number;
  publicKeyAt(): number;
  signatureAt(): number;
  messageAt(): number;
  messageCapacity(): number;
  expand(slot: number): number;
  verifyBegin(slot: number): number;
  absorbMessage(length: number): void;
  verifyEnd(slot: number): number;
  shake(rate: number, data: number, len: number, out: number, outLen: number): void;
  signKeyAt(): number;
  signRandomAt(): number;
  signBegin(): number;
  signEnd(out: number): number;
}

/** Bytes of ML-DSA's rnd (FIPS 204 Algorithm 2): zero for a deterministic signature. */
export const SIGN_RANDOM_BYTES = 32;

/**
 * Keys whose expansion a thread keeps: a slot is 38,912 bytes, so at most about 80 MB per
 * verifying thread, taken as distinct keys arrive. Room for the senders of several full blocks.
 */
export const VERIFY_KEY_CACHE_ENTRIES = 2048;

/** Where `npm run build` puts the compiled verifier (dist/wasm, beside dist/src). */
const WASM_URL = new URL('../../../wasm/mldsa65.wasm', import.meta.url);

let compiled: WebAssembly.Module | undefined;

function module(): WebAssembly.Module {
  if (compiled) return compiled;
  let bytes: Buffer;
  try {
    bytes = readFileSync(WASM_URL);
  } catch (err) {
    throw new CryptoError(`ML-DSA WebAssembly module not built (${(err as Error).message}); run npm run build`);
  }
  compiled = new WebAssembly.Module(bytes);
  return compiled;
}

/** Counters of a key cache (cumulative lookups, current size), for metrics and the benchmarks. */
export interface KeyCacheStats {
  hits: number;
  misses: number;
  entries: number;
  /** Bytes the entries' slots take, and the most the cache may take. */
  bytes: number;
  maxBytes: number;
}

/** One thread's instance of the module: a signer, and a verifier with its cache of expanded keys (least recently used out first). */
export class MlDsaWasm {
  private readonly x: ModuleExports;
  private heap: Uint8Array;
  private readonly pkAt: number;
  private readonly sigAt: number;
  private readonly msgAt: number;
  private readonly msgCapacity: number;
  private readonly skAt: number;
  private readonly rndAt: number;
  /** Slot by slotName(key); the slot itself holds the whole key and is checked against it. */
  private readonly slots = new Map<string, number>();
  private nextSlot = 0;
  private hits = 0;
  private misses = 0;

  constructor(private capacity: number = VERIFY_KEY_CACHE_ENTRIES) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new CryptoError(`key cache capacity must be a positive integer, got ${capacity}`);
    const instance = new WebAssembly.Instance(module(), {
      env: {
        abort: () => {
          throw new CryptoError('ML-DSA verifier aborted');
        },
      },
    });
    this.x = instance.exports as unknown as ModuleExports;
    this.heap = new Uint8Array(this.x.memory.buffer);
    this.pkAt = this.x.publicKeyAt();
    this.sigAt = this.x.signatureAt();
    this.msgAt = this.x.messageAt();
    this.msgCapacity = this.x.messageCapacity();
    this.skAt = this.x.signKeyAt();
    this.rndAt = this.x.signRandomAt();
  }

  /** FIPS 204 ML-DSA-65 signature of `message` (pure mode, empty context) with `rnd`: 32 zero bytes for the deterministic variant. */
  sign(secretKey: Uint8Array, message: Uint8Array, rnd: Uint8Array): Uint8Array {
    if (secretKey.length !== SECRET_KEY_BYTES) throw new CryptoError(`secret key must be ${SECRET_KEY_BYTES} bytes, got ${secretKey.length}`);
    if (rnd.length !== SIGN_RANDOM_BYTES) throw new CryptoError(`signing randomness must be ${SIGN_RANDOM_BYTES} bytes, got ${rnd.length}`);
    this.write(secretKey, this.skAt);
    this.write(rnd, this.rndAt);
    if (this.x.signBegin() !== 1) throw new CryptoError('malformed secret key: a coefficient of s1 or s2 is outside [-4, 4]');
    this.absorb(message);
    if (this.x.signEnd(this.sigAt) !== 1) throw new CryptoError('ML-DSA signing gave up: every attempt was rejected, so the secret key is malformed');
    return this.read(this.sigAt, SIGNATURE_BYTES);
  }

  /** True when `signature` is a valid ML-DSA-65 signature of `message` under `publicKey`; false for any malformed input. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (publicKey.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false;
    const key = slotName(publicKey);
    let slot = this.slots.get(key);
    if (slot !== undefined) {
      // Most recently used last: a Map iterates in insertion order, so the first key is the eviction candidate.
      this.slots.delete(key);
      this.slots.set(key, slot);
    }
    this.write(publicKey, this.pkAt);
    this.write(signature, this.sigAt);
    let begun = slot === undefined ? -1 : this.x.verifyBegin(slot);
    if (begun === -1) {
      // Not cached, or (a SHA-256 collision, never seen) the slot holds another key: expand this one there.
      this.misses++;
      slot ??= this.claimSlot(key);
      if (this.x.expand(slot) !== 1) slot = this.shrinkInto(key);
      begun = this.x.verifyBegin(slot);
    } else {
      this.hits++;
    }
    if (begun !== 1) return false;
    this.absorb(message);
    return this.x.verifyEnd(slot!) === 1;
  }

  /** Absorbs `message` into the sponge a signBegin or verifyBegin started. */
  private absorb(message: Uint8Array): void {
    // The protocol signs 32-byte digests (one call); longer messages go through in buffer-sized parts.
    for (let at = 0; at < message.length; at += this.msgCapacity) {
      const part = message.subarray(at, at + this.msgCapacity);
      this.write(part, this.msgAt);
      this.x.absorbMessage(part.length);
    }
  }

  /** SHAKE128 (`rate` 168) or SHAKE256 (136) by the verifier's own Keccak; for the tests that check it against node:crypto. */
  shake(rate: 136 | 168, data: Uint8Array, outLength: number): Uint8Array {
    if (data.length + outLength > this.msgCapacity) throw new CryptoError('shake: input and output must fit the message buffer');
    this.write(data, this.msgAt);
    this.x.shake(rate, this.msgAt, data.length, this.msgAt + data.length, outLength);
    return this.read(this.msgAt + data.length, outLength);
  }

  /** Cache counters. */
  stats(): KeyCacheStats {
    const slot = this.x.slotBytes();
    return { hits: this.hits, misses: this.misses, entries: this.slots.size, bytes: this.slots.size * slot, maxBytes: this.capacity * slot };
  }

  private claimSlot(key: string): number {
    let slot: number;
    if (this.nextSlot < this.capacity) {
      slot = this.nextSlot++;
    } else {
      const oldest = this.slots.keys().next().value!;
      slot = this.slots.get(oldest)!;
      this.slots.delete(oldest);
    }
    this.slots.set(key, slot);
    return slot;
  }

  /**
   * Memory could not grow for a new slot: the cache keeps the slots it has (its capacity drops to
   * them) and `key` takes the least recently used one. Throws only when not one slot fits.
   */
  private shrinkInto(key: string): number {
    this.slots.delete(key);
    this.nextSlot--;
    this.capacity = this.nextSlot;
    if (this.capacity === 0) throw new CryptoError('ML-DSA verifier: no memory for a single key expansion');
    const slot = this.claimSlot(key);
    if (this.x.expand(slot) !== 1) throw new CryptoError('ML-DSA verifier: a mapped slot failed to expand');
    return slot;
  }

  private write(bytes: Uint8Array, at: number): void {
    this.view().set(bytes, at);
  }

  private read(at: number, length: number): Uint8Array {
    return this.view().slice(at, at + length);
  }

  /** The module's memory (a new view once memory has grown). */
  private view(): Uint8Array {
    if (this.heap.buffer !== this.x.memory.buffer) this.heap = new Uint8Array(this.x.memory.buffer);
    return this.heap;
  }
}

/**
 * The name of a key's cache slot: SHA-256 of the whole key, as a latin1 string (a cheap Map key).
 * Not a prefix of the key: keys anyone can make with a target key's first bytes would share its
 * slot and evict its expansion at each use. A collision-resistant hash, so no one can make keys
 * that share a name either; SHA-256 rather than the protocol's SHA3-256 because this is no protocol
 * hash and OpenSSL's SHA-256 is about 3.5× faster here (6 µs against 21 µs for 1,952 bytes on a
 * loaded 2-core machine, next to 0.2–0.5 ms for a verification).
 */
function slotName(publicKey: Uint8Array): string {
  return hash('sha256', publicKey, 'binary');
}
