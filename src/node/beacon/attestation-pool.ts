/**
 * The verified attestations a proposer packs, and the inclusion rules' view of a branch that
 * both packing and checking a block's included attestations read.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import type { InclusionView } from '../../core/consensus/inclusion.js';
import { MAX_BLOCK_ATTESTATIONS } from '../../core/constants.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type Attestation, attestationHash, verifyAttestation } from '../../core/types/attestation.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { BeaconBlockRecord } from './chain-storage.js';
import type { BeaconMetrics } from './metrics.js';

/** Attestations the pool keeps for proposers (two epochs of 1,024 validators fit). */
export const ATTESTATION_POOL_MAX = 4 * MAX_BLOCK_ATTESTATIONS;

/** Verified attestations by hash, oldest first (Map order): the proposer's candidates. */
export class AttestationPool {
  private readonly pool = new Map<string, Attestation>();

  /** Whether this very attestation (signature included: the hash commits to it) is pooled, hence verified. */
  holds(att: Attestation): boolean {
    return this.pool.has(toHex(attestationHash(att)));
  }

  /** Pools a verified attestation, dropping the oldest beyond ATTESTATION_POOL_MAX. */
  add(att: Attestation): void {
    this.pool.set(toHex(attestationHash(att)), att);
    // Map order is insertion order: the oldest go first.
    for (const key of this.pool.keys()) {
      if (this.pool.size <= ATTESTATION_POOL_MAX) break;
      this.pool.delete(key);
    }
  }

  /** Drops the votes no block of `epoch` or later can include. */
  prune(epoch: number): void {
    // A vote is includable up to the epoch after its target: older ones can never be packed.
    for (const [key, att] of this.pool) if (att.data.target.epoch + 1 < epoch) this.pool.delete(key);
  }

  /** Every pooled attestation, oldest first. */
  all(): Attestation[] {
    return [...this.pool.values()];
  }
}

/** What `inclusionView` reads: the chain's block records, registry, pool and metrics. */
export interface InclusionSources {
  genesis: Genesis;
  record(root: string): BeaconBlockRecord | undefined;
  registry: readonly RegistryEntry[];
  pool: AttestationPool;
  metrics: BeaconMetrics;
}

/**
 * The inclusion rules' view of the branch ending at `parentRoot`, for a block at `slot`. Only
 * votes with target epoch ≥ the block's epoch − 1 are includable, and a vote is included no
 * later than the epoch after its target, so the blocks from that epoch's start on hold every
 * inclusion that can matter: the walk is at most two epochs of blocks.
 */
export function inclusionView(s: InclusionSources, parentRoot: string, slot: number): InclusionView {
  const spe = s.genesis.config.slots_per_epoch;
  const from = Math.max(0, (Math.floor(slot / spe) - 1) * spe);
  const last = new Map<number, number>();
  for (let r = s.record(parentRoot); r && r.index > 0 && r.slot >= from; r = s.record(r.parent)) {
    for (const [v, e] of r.included ?? []) if ((last.get(v) ?? -1) < e) last.set(v, e);
  }
  return {
    blockSlot: slot,
    slotsPerEpoch: spe,
    validator: (index) => {
      const v = s.registry[index];
      return v && { active: v.active, publicKey: parseHex(v.public_key, 'public_key') };
    },
    lastIncluded: (index) => last.get(index),
    verify: (att, publicKey) => {
      // A vote from the pool was verified on arrival; its hash commits to the signature.
      if (s.pool.holds(att)) return true;
      const t = performance.now();
      const ok = verifyAttestation(att, publicKey, s.genesis.chain_id);
      s.metrics.signature(performance.now() - t, ok);
      return ok;
    },
  };
}
