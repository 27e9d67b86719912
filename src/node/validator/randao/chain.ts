/**
 * The validator's side of its RANDAO hash chain: chain values v_j = H^j(secret) for j = 0..n,
 * commitment v_n, k-th reveal v_(n-k). Recomputing a reveal from the secret costs up to n
 * hashes (2^20 on mainnet, about 2 s), so the chain keeps every 2^c-th value and walks at most
 * 2^c - 1 hashes from the nearest one below.
 *
 * Resuming: the client does not store its own position. `next(lastAccepted)` takes the value
 * the beacon holds for this validator and finds its position by hashing it forward until it
 * meets a checkpoint (at most 2^c - 1 hashes). The beacon's value is the one that counts, so a
 * restart, a lost local file or a block that never made it on chain cannot put the client out
 * of step with it.
 */
import { toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import { randaoSecretAt } from '../../../core/crypto/randao.js';
import { SvcError } from '../../../core/errors.js';

export type RandaoChainErrorCode = 'RANDAO_CHAIN_EXHAUSTED' | 'RANDAO_VALUE_NOT_ON_CHAIN' | 'INVALID_RANDAO_CHAIN_ARGUMENT';

/** A reveal the chain cannot produce; `code` is a RandaoChainErrorCode. */
export class RandaoChainError extends SvcError<RandaoChainErrorCode> {
  constructor(code: RandaoChainErrorCode, message: string) {
    super(code, message);
  }
}

/** Default checkpoint spacing exponent: 1,025 stored values and at most 1,023 hashes per reveal for n = 2^20. */
export const DEFAULT_CHECKPOINT_BITS = 10;

/** "RDC1": the checkpoint file format of `serialize`. */
const SERIAL_MAGIC = 0x31434452;
/** Magic, length, checkpoint bits, generation: four little-endian u32. */
const SERIAL_HEADER = 16;

function checkArguments(length: number, checkpointBits: number, generation: number): void {
  if (!Number.isSafeInteger(length) || length < 1) throw new RandaoChainError('INVALID_RANDAO_CHAIN_ARGUMENT', `RANDAO chain length must be a positive integer, got ${length}`);
  // The checkpoint file stores it in 32 bits; genesis lengths are 2^16 to 2^20.
  if (length > 0xffffffff) throw new RandaoChainError('INVALID_RANDAO_CHAIN_ARGUMENT', `RANDAO chain length must be below 2^32, got ${length}`);
  if (!Number.isInteger(checkpointBits) || checkpointBits < 0 || checkpointBits > 30) {
    throw new RandaoChainError('INVALID_RANDAO_CHAIN_ARGUMENT', `checkpoint bits must be an integer in 0..30, got ${checkpointBits}`);
  }
  if (!Number.isSafeInteger(generation) || generation < 0 || generation > 0xffffffff) throw new RandaoChainError('INVALID_RANDAO_CHAIN_ARGUMENT', `RANDAO generation must be a non-negative integer, got ${generation}`);
}

/** The one pass of n hashes that yields the checkpoints, resumable so it can run in slices. */
class ChainPass {
  readonly checkpoints: Uint8Array[] = [];
  value: Uint8Array;
  private j = 0;

  constructor(keySeed: Uint8Array, private readonly length: number, private readonly step: number, generation: number) {
    this.value = randaoSecretAt(keySeed, generation);
  }

  /** Walks up to `hashes` more positions; true once the commitment v_n is reached. */
  advance(hashes: number): boolean {
    for (let m = 0; m < hashes; m++) {
      if (this.j % this.step === 0) this.checkpoints.push(this.value);
      if (this.j === this.length) return true;
      this.value = sha3(this.value);
      this.j++;
    }
    // Position j itself (a checkpoint, or the commitment) is taken by the next call.
    return false;
  }
}

/** One validator's RANDAO hash chain with checkpoints for fast reveals. */
export class RandaoChain {
  /** Chain length n (genesis `randao_chain_length`). */
  readonly length: number;
  /** Which of the key's chains this is: 0 at genesis or deposit, +1 per re-commitment (randaoSecretAt). */
  readonly generation: number;
  private readonly step: number;
  /** checkpoints[i] = v_(i * step); the commitment v_n is kept separately when n is not a multiple. */
  private readonly checkpoints: Uint8Array[];
  private readonly commitmentValue: Uint8Array;
  /** Hex of every stored value (the commitment included) to its position j. */
  private readonly positions = new Map<string, number>();

  /**
   * Builds the chain from the 32-byte ML-DSA key seed: one pass of n hashes (about 70 ms for
   * n = 2^16, 1 s for 2^20), which is why a client builds it once and keeps its checkpoints
   * (`RandaoChain.build` does the same pass without holding the event loop).
   */
  constructor(keySeed: Uint8Array, length: number, checkpointBits = DEFAULT_CHECKPOINT_BITS, generation = 0, built?: { checkpoints: Uint8Array[]; commitment: Uint8Array }) {
    checkArguments(length, checkpointBits, generation);
    this.length = length;
    this.generation = generation;
    this.step = 2 ** checkpointBits;
    if (built) {
      this.checkpoints = built.checkpoints;
      this.commitmentValue = built.commitment;
    } else {
      const pass = new ChainPass(keySeed, length, this.step, generation);
      while (!pass.advance(length + 1));
      this.checkpoints = pass.checkpoints;
      this.commitmentValue = pass.value;
    }
    this.checkpoints.forEach((v, i) => this.positions.set(toHex(v), i * this.step));
    this.positions.set(toHex(this.commitmentValue), length);
  }

  /**
   * Builds the chain in slices of `sliceHashes` hashes with the event loop free between them, so a
   * client building many keys' chains never delays a proposal by more than one slice (~5 ms).
   */
  static async build(keySeed: Uint8Array, length: number, checkpointBits = DEFAULT_CHECKPOINT_BITS, generation = 0, sliceHashes = 4096): Promise<RandaoChain> {
    checkArguments(length, checkpointBits, generation);
    const pass = new ChainPass(keySeed, length, 2 ** checkpointBits, generation);
    while (!pass.advance(sliceHashes)) await new Promise<void>((ok) => setImmediate(ok));
    return new RandaoChain(keySeed, length, checkpointBits, generation, { checkpoints: pass.checkpoints, commitment: pass.value });
  }

  /**
   * The chain from checkpoints saved by `serialize` (no hashing but one: the first checkpoint
   * must be this key's secret of `generation`); undefined when the bytes are not such a chain
   * (another key, length, spacing or generation, or a damaged file), which callers rebuild.
   */
  static restore(keySeed: Uint8Array, length: number, checkpointBits: number, generation: number, bytes: Uint8Array): RandaoChain | undefined {
    checkArguments(length, checkpointBits, generation);
    const step = 2 ** checkpointBits;
    const count = Math.floor(length / step) + 1;
    const body = 32 * (count + 1);
    if (bytes.length !== SERIAL_HEADER + body + 32) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(0, true) !== SERIAL_MAGIC || view.getUint32(4, true) !== length || view.getUint32(8, true) !== checkpointBits || view.getUint32(12, true) !== generation) return undefined;
    const sum = sha3(bytes.subarray(0, SERIAL_HEADER + body));
    if (toHex(sum) !== toHex(bytes.subarray(SERIAL_HEADER + body))) return undefined;
    const checkpoints: Uint8Array[] = [];
    for (let i = 0; i < count; i++) checkpoints.push(bytes.slice(SERIAL_HEADER + 32 * i, SERIAL_HEADER + 32 * (i + 1)));
    if (toHex(checkpoints[0]!) !== toHex(randaoSecretAt(keySeed, generation))) return undefined;
    const commitment = bytes.slice(SERIAL_HEADER + 32 * count, SERIAL_HEADER + body);
    return new RandaoChain(keySeed, length, checkpointBits, generation, { checkpoints, commitment });
  }

  /** The checkpoints and commitment as bytes for `restore` (header, values, SHA3-256 of both). */
  serialize(): Uint8Array {
    const count = this.checkpoints.length;
    const body = 32 * (count + 1);
    const out = new Uint8Array(SERIAL_HEADER + body + 32);
    const view = new DataView(out.buffer);
    view.setUint32(0, SERIAL_MAGIC, true);
    view.setUint32(4, this.length, true);
    view.setUint32(8, Math.log2(this.step), true);
    view.setUint32(12, this.generation, true);
    this.checkpoints.forEach((v, i) => out.set(v, SERIAL_HEADER + 32 * i));
    out.set(this.commitmentValue, SERIAL_HEADER + 32 * count);
    out.set(sha3(out.subarray(0, SERIAL_HEADER + body)), SERIAL_HEADER + body);
    return out;
  }

  /** H^n(secret): the value registered at genesis or deposit. */
  commitment(): Uint8Array {
    return this.commitmentValue.slice();
  }

  /** The k-th reveal (k = 1 for the first proposal): H^(n-k)(secret), in at most 2^c - 1 hashes. */
  reveal(k: number): Uint8Array {
    if (!Number.isSafeInteger(k) || k < 1) throw new RandaoChainError('INVALID_RANDAO_CHAIN_ARGUMENT', `reveal number must be a positive integer, got ${k}`);
    if (k > this.length) throw new RandaoChainError('RANDAO_CHAIN_EXHAUSTED', `RANDAO chain exhausted: reveal ${k} asked of a chain of length ${this.length}; register a new commitment`);
    return this.valueAt(this.length - k);
  }

  /**
   * How many reveals the beacon has accepted, given the value it last accepted (0 for the
   * commitment). Throws RANDAO_VALUE_NOT_ON_CHAIN when the value is not on this chain.
   */
  revealsUsed(lastAccepted: Uint8Array): number {
    let v = lastAccepted;
    // Position p reaches the next multiple of step (or n) after fewer than step hashes, so
    // step - 1 hashes without a hit prove the value is not on this chain.
    for (let m = 0; m < this.step; m++) {
      // The key is the full 32-byte value, so a hit means H^m(lastAccepted) = v_j, hence
      // lastAccepted = v_(j-m): anything else (j < m included) needs a SHA3-256 collision or a
      // preimage of the secret.
      const j = this.positions.get(toHex(v));
      if (j !== undefined) return this.length - (j - m);
      v = sha3(v);
    }
    throw new RandaoChainError('RANDAO_VALUE_NOT_ON_CHAIN', `value ${toHex(lastAccepted)} is not on this validator's RANDAO chain (another key, or a replaced commitment?)`);
  }

  /** The reveal that follows `lastAccepted` (the beacon's stored value for this validator). */
  next(lastAccepted: Uint8Array): Uint8Array {
    const used = this.revealsUsed(lastAccepted);
    if (used >= this.length) throw new RandaoChainError('RANDAO_CHAIN_EXHAUSTED', `RANDAO chain exhausted: all ${this.length} reveals used; register a new commitment`);
    return this.reveal(used + 1);
  }

  /** True when `value` is on this chain (the commitment or a reveal of it). */
  holds(value: Uint8Array): boolean {
    try {
      this.revealsUsed(value);
      return true;
    } catch (err) {
      if (err instanceof RandaoChainError && err.code === 'RANDAO_VALUE_NOT_ON_CHAIN') return false;
      throw err;
    }
  }

  /** Reveals left after `lastAccepted`. */
  remaining(lastAccepted: Uint8Array): number {
    return this.length - this.revealsUsed(lastAccepted);
  }

  private valueAt(j: number): Uint8Array {
    const base = Math.floor(j / this.step);
    let v = this.checkpoints[base]!;
    for (let i = base * this.step; i < j; i++) v = sha3(v);
    // A checkpoint itself is returned as a copy so callers cannot alter the stored chain.
    return v === this.checkpoints[base] ? v.slice() : v;
  }
}
