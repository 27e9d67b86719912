/**
 * RANDAO protocol rules shared by the beacon and execution: the running mix and, per validator,
 * the last accepted link of its hash chain. Every operation returns a new state and leaves its
 * input alone, so fork choice can keep one state per block and switch branches without undoing
 * anything.
 *
 * Seed rule (one epoch of lookahead, as Ethereum's MIN_SEED_LOOKAHEAD): the mix that seeds the
 * proposer draws of epoch e (`proposerDuties`, `proposerForSlot` in consensus/proposer.ts) is the mix
 * of the state after the last block of epoch e-2 on the branch being extended (empty trailing
 * slots change nothing, so it is the mix after the latest block whose slot is below
 * (e-1) * slots_per_epoch); for epochs 0 and 1 it is the genesis mix. Duties are thus known a
 * whole epoch ahead, and the last proposer of an epoch cannot steer the very next epoch's draw by
 * withholding its block. `seedMixFor` and `nextEpochMixes` apply the rule in O(1) per block from
 * three mixes carried by the parent (EpochMixes), so nobody has to walk back along the branch.
 */
import { bytesEqual, parseHex, toHex, utf8 } from '../codec/bytes.js';
import { parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { HASH_BYTES } from '../constants.js';
import { sha3 } from '../crypto/hash.js';
import { mixRandao, verifyRandaoReveal } from '../crypto/randao.js';
import { MalformedError, SvcError } from '../errors.js';

/** RANDAO state after some block. Treat as immutable: the functions here never modify one. */
export interface RandaoState {
  readonly mix: Uint8Array;
  /** Per validator index, the last accepted value of its hash chain (initially its commitment). */
  readonly last: ReadonlyMap<number, Uint8Array>;
}

/** JSON form of RandaoState: 0x hex, entries sorted by index. */
export interface RandaoJson {
  mix: string;
  last: Array<{ index: number; value: string }>;
}

export type RandaoErrorCode = 'INVALID_RANDAO_REVEAL' | 'UNKNOWN_RANDAO_VALIDATOR' | 'RANDAO_COMMITMENT_EXISTS' | 'INVALID_RANDAO_COMMITMENT';

/** A RANDAO update that the beacon refuses; `code` is a RandaoErrorCode. */
export class RandaoError extends SvcError<RandaoErrorCode> {
  constructor(code: RandaoErrorCode, message: string) {
    super(code, message);
  }
}

const GENESIS_TAG = utf8('svc/randao-genesis');

function checkIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0) throw new RandaoError('UNKNOWN_RANDAO_VALIDATOR', `validator index must be a non-negative integer, got ${index}`);
}

/** The mix before any block: SHA3-256("svc/randao-genesis" ‖ genesis hash). */
export function genesisMix(genesisHash: Uint8Array): Uint8Array {
  if (genesisHash.length !== HASH_BYTES) throw new MalformedError('genesisHash', `expected ${HASH_BYTES} bytes, got ${genesisHash.length}`);
  return sha3(GENESIS_TAG, genesisHash);
}

/** The genesis state: mix = SHA3-256("svc/randao-genesis" ‖ genesis hash), last = each registered commitment. */
export function genesisRandao(genesisHash: Uint8Array, validators: ReadonlyArray<{ index: number; randao_commitment: string }>): RandaoState {
  if (genesisHash.length !== HASH_BYTES) throw new MalformedError('genesisHash', `expected ${HASH_BYTES} bytes, got ${genesisHash.length}`);
  const last = new Map<number, Uint8Array>();
  for (const v of validators) {
    checkIndex(v.index);
    if (last.has(v.index)) throw new RandaoError('RANDAO_COMMITMENT_EXISTS', `validator ${v.index} is listed twice`);
    last.set(v.index, parseHex(v.randao_commitment, `validators[${v.index}].randao_commitment`, HASH_BYTES));
  }
  return { mix: genesisMix(genesisHash), last };
}

/**
 * The state after `validatorIndex` reveals `reveal` in a block: SHA3-256(reveal) must equal its
 * last accepted value; the reveal becomes that value and mix' = SHA3-256(mix ‖ reveal).
 */
export function applyReveal(state: RandaoState, validatorIndex: number, reveal: Uint8Array): RandaoState {
  checkIndex(validatorIndex);
  const last = state.last.get(validatorIndex);
  if (!last) throw new RandaoError('UNKNOWN_RANDAO_VALIDATOR', `validator ${validatorIndex} has no registered RANDAO commitment`);
  if (reveal.length !== HASH_BYTES) {
    throw new RandaoError('INVALID_RANDAO_REVEAL', `RANDAO reveal of validator ${validatorIndex} must be ${HASH_BYTES} bytes, got ${reveal.length}`);
  }
  // Named separately because a replay is the likeliest fault (a block re-proposed, or a
  // validator that restarted and lost track) and the operator should see it as such.
  if (bytesEqual(reveal, last)) throw new RandaoError('INVALID_RANDAO_REVEAL', `RANDAO reveal of validator ${validatorIndex} replayed: it equals the last accepted value`);
  if (!verifyRandaoReveal(reveal, last)) {
    throw new RandaoError('INVALID_RANDAO_REVEAL', `RANDAO reveal of validator ${validatorIndex} is not the preimage of its last accepted value`);
  }
  // Copying the map costs O(validators) per block (32-byte references only), cheap next to
  // the block's signature checks, and is what keeps every fork-choice node's state intact.
  // The reveal is copied too, so a caller reusing its buffer cannot rewrite accepted history.
  const next = new Map(state.last);
  next.set(validatorIndex, reveal.slice());
  return { mix: mixRandao(state.mix, reveal), last: next };
}

/**
 * The state with a commitment for a validator added by a deposit. An index that already has a
 * chain is refused: replacing a live chain lets its owner pick new reveals, which the protocol
 * allows only through its capped re-commitment operation (recommit.ts, applyRecommitments).
 */
export function registerCommitment(state: RandaoState, index: number, commitment: Uint8Array): RandaoState {
  checkIndex(index);
  if (commitment.length !== HASH_BYTES) throw new RandaoError('INVALID_RANDAO_COMMITMENT', `RANDAO commitment must be ${HASH_BYTES} bytes, got ${commitment.length}`);
  if (state.last.has(index)) throw new RandaoError('RANDAO_COMMITMENT_EXISTS', `validator ${index} already has a RANDAO commitment`);
  const next = new Map(state.last);
  next.set(index, commitment.slice());
  return { mix: state.mix, last: next };
}

/** JSON (hex) form for persistence; entries sorted by index so equal states serialise equally. */
export function randaoToJson(state: RandaoState): RandaoJson {
  return {
    mix: toHex(state.mix),
    last: [...state.last.entries()].sort(([a], [b]) => a - b).map(([index, value]) => ({ index, value: toHex(value) })),
  };
}

/** Parses randaoToJson's output strictly: unknown keys, bad hex, wrong lengths and unsorted or repeated indices are refused. */
export function randaoFromJson(input: unknown): RandaoState {
  const o = requireObject(input, 'randao');
  rejectUnknownKeys(o, ['mix', 'last'], 'randao');
  const mix = parseHex(o.mix, 'randao.mix', HASH_BYTES);
  if (!Array.isArray(o.last)) throw new MalformedError('randao.last', 'expected an array');
  const last = new Map<number, Uint8Array>();
  let previous = -1;
  o.last.forEach((raw, i) => {
    const field = `randao.last[${i}]`;
    const e = requireObject(raw, field);
    rejectUnknownKeys(e, ['index', 'value'], field);
    const index = parseUint(e.index, `${field}.index`);
    // Strictly increasing: one canonical form, and no silent overwrite by a duplicate.
    if (index <= previous) throw new MalformedError(`${field}.index`, 'indices must be strictly increasing');
    previous = index;
    last.set(index, parseHex(e.value, `${field}.value`, HASH_BYTES));
  });
  return { mix, last };
}

/**
 * The mixes a block carries so that its children can find their seed mix without walking back:
 * with M(k) = the mix after the latest block of the branch whose slot is below k × slots_per_epoch
 * (the genesis mix when there is none), a block of epoch e holds its own mix, M(e) and M(e-1).
 */
export interface EpochMixes {
  /** The mix after this block. */
  readonly mix: Uint8Array;
  /** M(e): the mix at the start of this block's epoch. */
  readonly epochStart: Uint8Array;
  /** M(e-1): the mix at the start of the epoch before. */
  readonly previousEpochStart: Uint8Array;
}

/** EpochMixes of the genesis block (slot 0): every field is the genesis mix. */
export function genesisEpochMixes(mix: Uint8Array): EpochMixes {
  return { mix, epochStart: mix, previousEpochStart: mix };
}

function epochOf(slot: number, slotsPerEpoch: number): number {
  if (!Number.isSafeInteger(slot) || slot < 0) throw new MalformedError('slot', `expected a non-negative integer, got ${slot}`);
  if (!Number.isSafeInteger(slotsPerEpoch) || slotsPerEpoch < 1) throw new MalformedError('slots_per_epoch', `expected a positive integer, got ${slotsPerEpoch}`);
  return Math.floor(slot / slotsPerEpoch);
}

/**
 * The seed mix of `slot` (epoch e: M(e-1), the rule in this file's header) for a block whose parent
 * sits at `parentSlot` with mixes `parent`. The slot must be after the parent's.
 */
export function seedMixFor(parent: EpochMixes, parentSlot: number, slot: number, slotsPerEpoch: number): Uint8Array {
  if (slot <= parentSlot) throw new MalformedError('slot', `slot ${slot} is not after the parent's slot ${parentSlot}`);
  const e = epochOf(slot, slotsPerEpoch);
  const ep = epochOf(parentSlot, slotsPerEpoch);
  // Every block of the branch up to the parent is below (ep + 1) × slots_per_epoch, so for
  // e - 1 > ep the parent itself is the latest block before the boundary.
  if (e - 1 > ep) return parent.mix;
  return e - 1 === ep ? parent.epochStart : parent.previousEpochStart;
}

/** The EpochMixes of a block at `slot` whose reveal moved the mix to `mix`, given its parent's. */
export function nextEpochMixes(parent: EpochMixes, parentSlot: number, slot: number, slotsPerEpoch: number, mix: Uint8Array): EpochMixes {
  if (slot <= parentSlot) throw new MalformedError('slot', `slot ${slot} is not after the parent's slot ${parentSlot}`);
  const e = epochOf(slot, slotsPerEpoch);
  const ep = epochOf(parentSlot, slotsPerEpoch);
  if (e === ep) return { mix, epochStart: parent.epochStart, previousEpochStart: parent.previousEpochStart };
  // A new epoch: the parent is the latest block before its boundary, and before the previous
  // boundary too when whole epochs were skipped.
  return { mix, epochStart: parent.mix, previousEpochStart: e === ep + 1 ? parent.epochStart : parent.mix };
}
