/**
 * Header fields that enter the block hash but not the proposer's SignedHeader: the sub-second
 * part of `timestamp`, `vrf_seed`, `vrf_proof` and `randao_reveal`. Anyone holding a valid block
 * could change them and get a copy with another hash that still carries a valid signature, so
 * execution checks each one exactly as the beacon does (the rules live in src/core/consensus/):
 * the timestamp is a slot start after the parent's slot, `vrf_seed` is the seed of that slot on
 * the block's branch, the proposer is the one the stake-weighted draw names for it, and
 * `randao_reveal` is the preimage of the proposer's last accepted hash-chain value on the branch.
 * (`vrf_proof` is verified over the seed by the importer's step 5.)
 *
 * Cost per block is constant: each block record carries its slot, the RANDAO mix after it and
 * the two epoch-start mixes its children may need (core EpochMixes), and the canonical chain keeps
 * every validator's last accepted value under `q:<index>`, with the value it replaced stored in
 * the block record so a reorg can undo it. A side-branch block resolves its proposer's value
 * through the same head-to-parent path the importer walks for account state.
 *
 * RANDAO re-commitments (core/consensus/recommit.ts) change last values too: after the block's
 * own reveal, each one sets its validator's last value to the new commitment, recorded in the
 * block record's `commits` with the value it replaced. Replaced values are stored explicitly,
 * never as "the registry's commitment", because the registry follows the canonical head and a
 * re-commitment there changes its commitment for every branch.
 */
import { bytesEqual, parseHex, toHex } from '../../core/codec/bytes.js';
import { proposerForSlot, ProposerError, type ProposerCandidate } from '../../core/consensus/proposer.js';
import { applyReveal, type EpochMixes, genesisMix, nextEpochMixes, RandaoError, seedMixFor } from '../../core/consensus/randao.js';
import { HASH_BYTES } from '../../core/constants.js';
import { BlockError } from '../../core/errors.js';
import { ExecutionError } from './errors.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import type { BlockHeader } from '../../core/types/block.js';
import type { Registry } from './registry.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { ChainStore, WriteBatch } from '../shared/store.js';

/** What a block record keeps of its consensus fields: enough to check its children and to undo it. */
export interface ConsensusRecord {
  slot: number;
  /** Registry index of the proposer; -1 for genesis. */
  proposer_index: number;
  /** The proposer's reveal in this block (its new last value). */
  reveal: string;
  /** The proposer's last value before this block (null only in records written before re-commitments existed: its registry commitment). */
  previous: string | null;
  /** RANDAO mix after this block. */
  mix: string;
  /** Mix at the start of this block's epoch (EpochMixes.epochStart). */
  epoch_mix: string;
  /** Mix at the start of the epoch before (EpochMixes.previousEpochStart). */
  previous_epoch_mix: string;
  /** RANDAO re-commitments the block applies after its reveal, in block order (absent: none). */
  commits?: CommitRecord[];
}

/** A re-commitment in a block record: the validator's new last value and the one it replaced. */
export interface CommitRecord {
  index: number;
  value: string;
  previous: string;
}

/** The part of a block record these checks read. */
export interface ConsensusCarrier {
  hash: string;
  index: number;
  timestamp: number;
  consensus?: ConsensusRecord;
}

/** Blocks between the canonical head and a block's parent: reverted newest first, applied oldest first. */
export interface BranchPath {
  reverted: readonly ConsensusCarrier[];
  applied: readonly ConsensusCarrier[];
}

/** Key of a validator's last accepted RANDAO value on the canonical chain (absent: its commitment). */
export const revealKey = (index: number): string => `q:${String(index).padStart(8, '0')}`;

/** Execution's checks of the hash-covered, unsigned header fields, and their canonical state. */
export class ConsensusFields {
  private readonly genesisRecord: ConsensusRecord;
  private readonly slotMs: number;
  private readonly genesisMs: number;
  private readonly minStake: bigint;

  constructor(
    private readonly genesis: Genesis,
    genesisHashHex: string,
    private readonly store: ChainStore,
    private readonly registry: Registry,
  ) {
    const mix = toHex(genesisMix(parseHex(genesisHashHex, 'genesis hash', HASH_BYTES)));
    const zero = '0x' + '00'.repeat(HASH_BYTES);
    this.genesisRecord = { slot: 0, proposer_index: -1, reveal: zero, previous: null, mix, epoch_mix: mix, previous_epoch_mix: mix };
    this.slotMs = genesis.config.slot_seconds * 1000;
    this.genesisMs = genesis.genesis_time * 1000;
    this.minStake = BigInt(genesis.config.min_validator_stake);
  }

  /** The consensus fields of a stored block (computed for genesis, whose record predates them). */
  of(r: ConsensusCarrier): ConsensusRecord {
    if (r.index === 0) return this.genesisRecord;
    if (!r.consensus) {
      throw new ExecutionError('CORRUPT_DB', `block ${r.hash} (${r.index}) has no consensus fields: the data directory predates them; start from a fresh one`);
    }
    return r.consensus;
  }

  /** The slot of a block's timestamp; INVALID_TIMESTAMP unless it is exactly a slot start after the parent's slot. */
  slotOf(timestampMs: number, parent: ConsensusCarrier): number {
    const sinceGenesis = timestampMs - this.genesisMs;
    if (sinceGenesis <= 0 || sinceGenesis % this.slotMs !== 0) {
      throw new BlockError('INVALID_TIMESTAMP', `timestamp ${timestampMs} is not the start of a slot after genesis (slots of ${this.slotMs} ms from ${this.genesisMs})`);
    }
    const slot = sinceGenesis / this.slotMs;
    const parentSlot = this.of(parent).slot;
    if (slot <= parentSlot) throw new BlockError('INVALID_TIMESTAMP', `slot ${slot} (timestamp ${timestampMs}) is not after the parent's slot ${parentSlot}`);
    return slot;
  }

  /**
   * Checks that `vrf_seed` is the seed of `slot` (from slotOf) on `parent`'s branch and that the
   * draw names `proposer` for it. Runs before the VRF proof is verified, so the proof is checked
   * over the one seed that counts.
   */
  checkSeed(h: BlockHeader, slot: number, parent: ConsensusCarrier, proposer: RegistryEntry): void {
    const p = this.of(parent);
    let expected: { index: number; seed: Uint8Array };
    try {
      expected = proposerForSlot(this.candidates(), seedMixFor(mixesOf(p), p.slot, slot, this.genesis.config.slots_per_epoch), slot);
    } catch (err) {
      // No active stake left: no block can be valid, which is the block's problem to report.
      if (err instanceof ProposerError) throw new BlockError('WRONG_PROPOSER', err.message);
      throw err;
    }
    if (!bytesEqual(h.vrfSeed, expected.seed)) throw new BlockError('INVALID_VRF_SEED', `vrf_seed ${toHex(h.vrfSeed)} is not the seed of slot ${slot} (${toHex(expected.seed)})`);
    if (expected.index !== proposer.index) throw new BlockError('WRONG_PROPOSER', `validator ${proposer.index} is not the proposer of slot ${slot} (validator ${expected.index} is)`);
  }

  /**
   * Checks `randao_reveal` against the proposer's last value on `parent`'s branch (`path` leads
   * from the canonical head to `parent`) and returns the block record's consensus field.
   */
  async checkReveal(h: BlockHeader, slot: number, parent: ConsensusCarrier, proposer: RegistryEntry, path: BranchPath): Promise<ConsensusRecord> {
    const p = this.of(parent);
    const mixes = mixesOf(p);
    // Resolved to the registry's commitment here, while it is still the one this branch uses
    // (lastValue returns null only when no block on the canonical chain or the path touched it).
    const previous = (await this.lastValue(proposer.index, path)) ?? proposer.randao_commitment;
    const last = parseHex(previous, 'randao value', HASH_BYTES);
    let mix: Uint8Array;
    try {
      // The beacon's own rule, on a one-entry state: same replay and preimage checks, same mix.
      mix = applyReveal({ mix: mixes.mix, last: new Map([[proposer.index, last]]) }, proposer.index, h.randaoReveal).mix;
    } catch (err) {
      if (err instanceof RandaoError) throw new BlockError('INVALID_RANDAO_REVEAL', err.message);
      throw err;
    }
    const next = nextEpochMixes(mixes, p.slot, slot, this.genesis.config.slots_per_epoch, mix);
    return {
      slot,
      proposer_index: proposer.index,
      reveal: toHex(h.randaoReveal),
      previous,
      mix: toHex(next.mix),
      epoch_mix: toHex(next.epochStart),
      previous_epoch_mix: toHex(next.previousEpochStart),
    };
  }

  /**
   * The block record's consensus field with the block's applied re-commitments added: each one's
   * replaced value is its validator's last value after the block's reveal on this branch.
   */
  async withCommits(record: ConsensusRecord, commits: ReadonlyArray<{ validatorIndex: number; commitment: Uint8Array }>, path: BranchPath): Promise<ConsensusRecord> {
    if (commits.length === 0) return record;
    const out: CommitRecord[] = [];
    for (const c of commits) {
      // blockRecommitments allows one per validator, so only the block's own reveal can precede it.
      const previous = c.validatorIndex === record.proposer_index ? record.reveal : ((await this.lastValue(c.validatorIndex, path)) ?? this.registry.all()[c.validatorIndex]!.randao_commitment);
      out.push({ index: c.validatorIndex, value: toHex(c.commitment), previous });
    }
    return { ...record, commits: out };
  }

  /** Queues the canonical last-value changes of applying (1) or reverting (-1) a block. */
  persist(batch: WriteBatch, r: ConsensusCarrier, sign: 1 | -1): void {
    const c = this.of(r);
    if (c.proposer_index < 0) return;
    const key = revealKey(c.proposer_index);
    // Batch operations apply in order: undo runs the block's changes backwards.
    if (sign === 1) {
      batch.put(key, c.reveal);
      for (const m of c.commits ?? []) batch.put(revealKey(m.index), m.value);
      return;
    }
    for (const m of [...(c.commits ?? [])].reverse()) batch.put(revealKey(m.index), m.previous);
    if (c.previous === null) batch.del(key);
    else batch.put(key, c.previous);
  }

  /** A validator's last accepted value at the end of `path` (null: still its registry commitment). */
  private async lastValue(index: number, path: BranchPath): Promise<string | null> {
    let value = (await this.store.get<string>(revealKey(index))) ?? null;
    // Undo the head side newest first (ending at the oldest block's predecessor value), then
    // replay the parent's side oldest first: the same walk replayPath (ancestry.ts) does for accounts. Within a
    // block the reveal comes before the re-commitments.
    for (const r of path.reverted) {
      const c = this.of(r);
      for (const m of [...(c.commits ?? [])].reverse()) if (m.index === index) value = m.previous;
      if (c.proposer_index === index) value = c.previous;
    }
    for (const a of path.applied) {
      const c = this.of(a);
      if (c.proposer_index === index) value = c.reveal;
      for (const m of c.commits ?? []) if (m.index === index) value = m.value;
    }
    return value;
  }

  /** Validators the proposer draw considers (active and staked). */
  activeCount(): number {
    return this.candidates().filter((c) => c.active).length;
  }

  // The beacon draws from execution's registry (GET /engine/registry) with the same filter, so
  // both layers name the same proposer for the same branch.
  private candidates(): ProposerCandidate[] {
    return this.registry.all().map((v) => ({ index: v.index, stake: BigInt(v.stake), active: v.active && BigInt(v.stake) >= this.minStake }));
  }
}

function mixesOf(c: ConsensusRecord): EpochMixes {
  return {
    mix: parseHex(c.mix, 'consensus.mix', HASH_BYTES),
    epochStart: parseHex(c.epoch_mix, 'consensus.epoch_mix', HASH_BYTES),
    previousEpochStart: parseHex(c.previous_epoch_mix, 'consensus.previous_epoch_mix', HASH_BYTES),
  };
}
