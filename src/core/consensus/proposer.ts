/**
 * Proposer selection: a stake-weighted draw among active validators, seeded by the slot's
 * `vrf_seed`. Pure functions of (validator set, RANDAO mix, slot), so every node that holds the
 * same beacon state names the same proposer.
 */
import { bytesToBigintBE, utf8 } from '../codec/bytes.js';
import { HASH_BYTES } from '../constants.js';
import { sha3 } from '../crypto/hash.js';
import { vrfSeed } from '../crypto/vrf.js';
import { SvcError } from '../errors.js';

/** What the draw reads from a validator: registry index, effective stake (wei), activity. */
export interface ProposerCandidate {
  index: number;
  stake: bigint;
  active: boolean;
}

/** One slot's proposer. */
export interface ProposerDuty {
  slot: number;
  index: number;
}

export type ProposerErrorCode = 'NO_ACTIVE_VALIDATORS' | 'INVALID_VALIDATOR_SET' | 'INVALID_SLOT' | 'INVALID_SEED';

/** Proposer selection cannot run on its inputs; `code` is a ProposerErrorCode. */
export class ProposerError extends SvcError<ProposerErrorCode> {
  constructor(code: ProposerErrorCode, message: string) {
    super(code, message);
  }
}

/** Domain prefix of the draw: the 8 ASCII bytes "proposer". */
const PROPOSER_PREFIX = utf8('proposer');

/** Eligible validators in index order with running stake totals: the draw's lookup table. */
interface DrawTable {
  indices: number[];
  /** cumulative[i] = sum of the stakes of indices[0..i]. */
  cumulative: bigint[];
  total: bigint;
}

function buildTable(validators: ReadonlyArray<ProposerCandidate>): DrawTable {
  for (const v of validators) {
    if (!Number.isSafeInteger(v.index) || v.index < 0) throw new ProposerError('INVALID_VALIDATOR_SET', `validator index must be a non-negative integer, got ${v.index}`);
    if (typeof v.stake !== 'bigint' || v.stake < 0n) throw new ProposerError('INVALID_VALIDATOR_SET', `validator ${v.index} has a negative or non-bigint stake`);
  }
  // The walk order is part of consensus, so it is fixed to index order whatever order the
  // caller's array is in; the copy keeps the input untouched.
  const sorted = [...validators].sort((a, b) => a.index - b.index);
  const indices: number[] = [];
  const cumulative: bigint[] = [];
  let total = 0n;
  for (let i = 0; i < sorted.length; i++) {
    const v = sorted[i]!;
    // A repeated index would make "the validator at index i" ambiguous between nodes.
    if (i > 0 && sorted[i - 1]!.index === v.index) throw new ProposerError('INVALID_VALIDATOR_SET', `validator index ${v.index} appears twice`);
    if (!v.active || v.stake === 0n) continue;
    total += v.stake;
    indices.push(v.index);
    cumulative.push(total);
  }
  if (total === 0n) throw new ProposerError('NO_ACTIVE_VALIDATORS', 'no active validator with positive stake: no proposer can be selected');
  return { indices, cumulative, total };
}

function draw(table: DrawTable, seed: Uint8Array): number {
  if (seed.length !== HASH_BYTES) throw new ProposerError('INVALID_SEED', `proposer seed must be ${HASH_BYTES} bytes, got ${seed.length}`);
  // r is uniform on [0, 2^256); reducing it modulo the total stake favours the low residues by
  // at most total / 2^256 in probability (about 2^-166 even for 10^9 tokens of 10^18 wei), far
  // below anything observable, so no rejection sampling is needed.
  const r = bytesToBigintBE(sha3(PROPOSER_PREFIX, seed)) % table.total;
  // Walking in index order and picking the first validator whose running total exceeds r is
  // the same as the smallest i with r < cumulative[i]; a binary search finds it in O(log n).
  let lo = 0;
  let hi = table.cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (r < table.cumulative[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return table.indices[lo]!;
}

function checkSlot(slot: number, what = 'slot'): void {
  // vrfSeed encodes the slot as uint64; safe integers keep the arithmetic exact.
  if (!Number.isSafeInteger(slot) || slot < 0) throw new ProposerError('INVALID_SLOT', `${what} must be a non-negative integer, got ${slot}`);
}

function checkMix(randaoMix: Uint8Array): void {
  if (randaoMix.length !== HASH_BYTES) throw new ProposerError('INVALID_SEED', `RANDAO mix must be ${HASH_BYTES} bytes, got ${randaoMix.length}`);
}

/**
 * Registry index of the proposer for `seed`: r = uint256_be(SHA3-256("proposer" ‖ seed)) mod
 * total active stake, then the first active, positively staked validator in index order whose
 * running stake total exceeds r.
 */
export function selectProposer(validators: ReadonlyArray<ProposerCandidate>, seed: Uint8Array): number {
  return draw(buildTable(validators), seed);
}

/** The proposer of `slot` and its vrf_seed; `randaoMix` is the seed mix of the slot's epoch (see consensus/randao.ts). */
export function proposerForSlot(validators: ReadonlyArray<ProposerCandidate>, randaoMix: Uint8Array, slot: number): { index: number; seed: Uint8Array } {
  checkMix(randaoMix);
  checkSlot(slot);
  const seed = vrfSeed(randaoMix, slot);
  return { index: selectProposer(validators, seed), seed };
}

/** Proposers of every slot of `epoch`, in slot order; `randaoMix` is that epoch's seed mix. */
export function proposerDuties(validators: ReadonlyArray<ProposerCandidate>, randaoMix: Uint8Array, epoch: number, slotsPerEpoch: number): ProposerDuty[] {
  checkMix(randaoMix);
  checkSlot(epoch, 'epoch');
  if (!Number.isSafeInteger(slotsPerEpoch) || slotsPerEpoch < 1) throw new ProposerError('INVALID_SLOT', `slots per epoch must be a positive integer, got ${slotsPerEpoch}`);
  const first = epoch * slotsPerEpoch;
  checkSlot(first + slotsPerEpoch - 1, 'last slot of the epoch');
  // One table for the whole epoch: the validator set does not change within the draw.
  const table = buildTable(validators);
  const duties: ProposerDuty[] = [];
  for (let slot = first; slot < first + slotsPerEpoch; slot++) duties.push({ slot, index: draw(table, vrfSeed(randaoMix, slot)) });
  return duties;
}
