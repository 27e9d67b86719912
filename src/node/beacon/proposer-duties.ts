/**
 * Proposer draws on a branch: the candidates execution's registry gives, the block whose RANDAO
 * mix seeds an epoch (the duties' dependent root), and the duties drawn from that mix.
 */
import { toHex } from '../../core/codec/bytes.js';
import type { RandaoState } from '../../core/consensus/randao.js';
import { proposerDuties, proposerForSlot, type ProposerCandidate } from '../../core/consensus/proposer.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { BeaconBlockRecord } from './chain-storage.js';

/** A block record with its RANDAO state decoded, as the chain holds it in memory. */
export type RandaoBlock = BeaconBlockRecord & { randaoState: RandaoState };

/** A proposer duty with the seed the proposer must use. */
export interface DutyView {
  slot: number;
  validator_index: number;
  address: string;
  vrf_seed: string;
}

/** The registry as proposer candidates: active only when staked at least the minimum. */
export function proposerCandidates(genesis: Genesis, registry: readonly RegistryEntry[]): ProposerCandidate[] {
  const min = BigInt(genesis.config.min_validator_stake);
  return registry.map((v) => ({ index: v.index, stake: BigInt(v.stake), active: v.active && BigInt(v.stake) >= min }));
}

/**
 * The block whose RANDAO mix seeds epoch `epoch` on the branch ending at `tipRoot`: the last
 * block before epoch e-1 starts, i.e. the last block of epoch e-2 or earlier (genesis when
 * there is none). Its root is the proposer duties' dependent root.
 */
export function seedBlock(genesis: Genesis, records: (root: string) => RandaoBlock | undefined, tipRoot: string, epoch: number): RandaoBlock {
  const limit = (epoch - 1) * genesis.config.slots_per_epoch;
  let r = records(tipRoot)!;
  while (r.slot >= limit && r.index > 0) r = records(r.parent)!;
  return r;
}

/** Proposer duties of `epoch` drawn from `seed`'s mix, with the seed each proposer must use. */
export function dutiesFromSeed(genesis: Genesis, registry: readonly RegistryEntry[], seed: RandaoBlock, epoch: number): { dependent_root: string; duties: DutyView[] } {
  const mix = seed.randaoState.mix;
  const candidates = proposerCandidates(genesis, registry);
  const duties = proposerDuties(candidates, mix, epoch, genesis.config.slots_per_epoch).map((d) => {
    const { seed: vrfSeed } = proposerForSlot(candidates, mix, d.slot);
    return { slot: d.slot, validator_index: d.index, address: registry[d.index]!.address, vrf_seed: toHex(vrfSeed) };
  });
  return { dependent_root: seed.root, duties };
}
