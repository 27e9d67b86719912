/**
 * Consensus accounting inside the block state transition: a block's included attestations are
 * checked against the inclusion rules (src/core/consensus/inclusion.ts) on the block's own
 * branch, and the block credits its rewards as part of its state transition, so balances and state
 * roots are a function of the chain alone: a producer, a follower and a node replaying the
 * chain a week later compute the same ones.
 *
 * - The proposer earns `genesis.config.proposer_reward` in its own block.
 * - Each included attestation is, by the inclusion rules, the first inclusion of that
 *   (validator, target epoch) on the branch, and earns its attester `genesis.config.attester_reward`
 *   in the including block.
 *
 * "Already included on the branch" needs one number per validator: the highest target epoch of
 * its included votes. The canonical chain keeps it under `l:<index>`; each block's state changes
 * record what it set and what it replaced (IncludedVote), so a reorg undoes it exactly, and a side-branch block resolves it through the same head-to-parent path the
 * importer walks for account state. Cost per block: O(its attestations + the path).
 */
import { checkInclusion, type IncludedVote, InclusionError } from '../../core/consensus/inclusion.js';
import { toHex } from '../../core/codec/bytes.js';
import { BlockError } from '../../core/errors.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type Attestation, attestationHash, verifyAttestation } from '../../core/types/attestation.js';
import { ByteCache } from '../../util/byte-cache.js';
import type { ChainStore, WriteBatch } from '../shared/store.js';
import type { Registry } from './registry.js';
import type { StateView } from './state/types.js';

export type { IncludedVote } from '../../core/consensus/inclusion.js';

/** Key of a validator's last included target epoch on the canonical chain (absent: none). */
export const lastIncludedKey = (index: number): string => `l:${String(index).padStart(8, '0')}`;

/** Included votes of the blocks between the canonical head and a block's parent. */
export interface VotePath {
  /** Newest first. */
  reverted: ReadonlyArray<readonly IncludedVote[]>;
  /** Oldest first. */
  applied: ReadonlyArray<readonly IncludedVote[]>;
}

/** Byte bound of the verified-attestation cache (hash key and map slot per entry). */
const VERIFIED_ATTESTATIONS_BYTES = 4 * 1024 * 1024;

/** Execution's check of included attestations, and the rewards a block credits. */
export class ConsensusAccounting {
  private readonly proposerReward: bigint;
  private readonly attesterReward: bigint;
  private readonly slotsPerEpoch: number;
  // A vote is re-checked when a block carrying it is re-imported on another branch: its hash
  // commits to the signature, so one verification per vote is enough.
  private readonly verified = new ByteCache<true>(VERIFIED_ATTESTATIONS_BYTES, () => 200);

  constructor(
    private readonly genesis: Genesis,
    private readonly store: ChainStore,
    private readonly registry: Registry,
  ) {
    this.proposerReward = BigInt(genesis.config.proposer_reward);
    this.attesterReward = BigInt(genesis.config.attester_reward);
    this.slotsPerEpoch = genesis.config.slots_per_epoch;
  }

  /**
   * Checks a block's attestations on its branch (`path` leads from the canonical head to its
   * parent); INVALID_ATTESTATION names the broken rule. Returns the first inclusions it records.
   */
  async check(attestations: readonly Attestation[], slot: number, path: VotePath): Promise<IncludedVote[]> {
    if (attestations.length === 0) return [];
    const last = await this.lastIncluded([...new Set(attestations.map((a) => a.validatorIndex))], path);
    try {
      return checkInclusion(attestations, {
        blockSlot: slot,
        slotsPerEpoch: this.slotsPerEpoch,
        validator: (index) => {
          const e = this.registry.all()[index];
          return e && { active: e.active, publicKey: this.registry.publicKey(e) };
        },
        lastIncluded: (index) => last.get(index),
        verify: (att, publicKey) => this.verify(att, publicKey),
      });
    } catch (err) {
      if (err instanceof InclusionError) throw new BlockError('INVALID_ATTESTATION', err.message);
      throw err;
    }
  }

  /** Credits the block's rewards into its state overlay: the proposer's, then each first inclusion's. */
  credit(overlay: Pick<StateView, 'addBalance'>, proposer: string, votes: readonly IncludedVote[]): void {
    if (this.proposerReward > 0n) overlay.addBalance(proposer, this.proposerReward);
    if (this.attesterReward === 0n) return;
    for (const v of votes) overlay.addBalance(this.registry.all()[v.validator]!.address, this.attesterReward);
  }

  /** Queues the canonical last-included changes of applying (1) or reverting (-1) a block's votes. */
  persist(batch: WriteBatch, votes: readonly IncludedVote[] | undefined, sign: 1 | -1): void {
    if (!votes || votes.length === 0) return;
    if (sign === 1) for (const v of votes) batch.put(lastIncludedKey(v.validator), v.epoch);
    else {
      for (let i = votes.length - 1; i >= 0; i--) {
        const v = votes[i]!;
        if (v.previous === null) batch.del(lastIncludedKey(v.validator));
        else batch.put(lastIncludedKey(v.validator), v.previous);
      }
    }
  }

  // The canonical value, then the path's blocks undone newest first and replayed oldest first.
  private async lastIncluded(indexes: number[], path: VotePath): Promise<Map<number, number | undefined>> {
    const out = new Map<number, number | undefined>();
    await Promise.all(indexes.map(async (i) => out.set(i, await this.store.get<number>(lastIncludedKey(i)))));
    for (const votes of path.reverted) {
      for (let k = votes.length - 1; k >= 0; k--) {
        const v = votes[k]!;
        if (out.has(v.validator)) out.set(v.validator, v.previous ?? undefined);
      }
    }
    for (const votes of path.applied) for (const v of votes) if (out.has(v.validator)) out.set(v.validator, v.epoch);
    return out;
  }

  private verify(att: Attestation, publicKey: Uint8Array): boolean {
    // The attestation hash commits to the index and signature, the address to the key.
    const key = `${this.registry.all()[att.validatorIndex]!.address}:${toHex(attestationHash(att))}`;
    if (this.verified.get(key)) return true;
    const ok = verifyAttestation(att, publicKey, this.genesis.chain_id);
    if (ok) this.verified.set(key, true);
    return ok;
  }
}
