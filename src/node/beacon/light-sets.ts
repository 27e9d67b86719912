/**
 * The validator-set changes light clients and bridges follow (docs/light-client.md "Set changes").
 * At each finalized checkpoint the beacon compares the registry in the checkpoint header's
 * state_root (execution's post-state of its parent) with the set it last recorded: the registry
 * account's storage root first (one account proof, no entries), the whole registry only when
 * that moved. When the weighed set (keys, stakes, activity) changed, it records a set change under
 * `S:<epoch>`, kept for good: the checkpoint's finality update framed on the previous set, and
 * the new registry's proof. Every finality update the beacon serves is framed on the set recorded
 * last, so a client that walked the set changes verifies it.
 */
import { toHex } from '../../core/codec/bytes.js';
import { MAX_SET_CHANGE_PAGE_BYTES } from '../../core/constants.js';
import { genesisRegistry, registryStorage } from '../../core/consensus/registry.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type RegistryProofWire, verifyRegistryProof } from '../../core/light/registry.js';
import { type TrustedValidator, sameValidatorSet } from '../../core/light/types.js';
import { storageRootOf } from '../../core/state/genesis-root.js';
import type { BlockHeader } from '../../core/types/block.js';
import type { SetChangeJson, SetChangesView } from '../../api/light.js';
import type { Logger } from '../../util/log.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import type { CheckpointHex } from './forkchoice/fork-choice.js';
import { type FinalizingLink, type StakeView, frameUpdate } from './light.js';

const PREFIX = 'S:';
const key = (epoch: number) => `${PREFIX}${String(epoch).padStart(16, '0')}`;
const CURRENT = 'm:light_set';

/** What the recorder reads from execution: the registry account's storage root, and the whole registry, at a block's post-state. */
export interface RegistrySource {
  registryStorageHash(blockHash: string): Promise<string>;
  registryProof(blockHash: string): Promise<RegistryProofWire>;
}

/** The set recorded last: the checkpoint it was proven at (epoch 0: genesis), its registry's storage root and its weights. */
interface CurrentSet {
  epoch: number;
  storage_hash: string;
  validators: Array<{ index: number; stake: string; active: boolean; public_key: string }>;
}

function weights(set: ReadonlyMap<number, TrustedValidator>): CurrentSet['validators'] {
  return [...set.values()].map((v) => ({ index: v.index, stake: v.stake.toString(), active: v.active, public_key: toHex(v.publicKey) }));
}

function toSet(c: CurrentSet): Map<number, TrustedValidator> {
  return new Map(c.validators.map((v) => [v.index, { index: v.index, stake: BigInt(v.stake), active: v.active, publicKey: Buffer.from(v.public_key.slice(2), 'hex') }]));
}

export class SetChangeStore {
  private current: CurrentSet;
  private set: Map<number, TrustedValidator>;
  private stakeView: StakeView;
  /** The registry of the last checkpoint that moved the set, by the block it is proven at. */
  private lastFetched: { at: string; storageHash: string; registry: RegistryProofWire; next: Map<number, TrustedValidator> } | undefined;

  private constructor(
    private readonly store: ChainStore,
    private readonly log: Logger,
    current: CurrentSet,
  ) {
    this.current = current;
    this.set = toSet(current);
    this.stakeView = stakesOf(this.set);
  }

  /** Opens the store: the set recorded last, or genesis's. */
  static async open(store: ChainStore, genesis: Genesis, log: Logger): Promise<SetChangeStore> {
    const stored = await store.get<CurrentSet>(CURRENT);
    if (stored) return new SetChangeStore(store, log, stored);
    const entries = genesisRegistry(genesis);
    const storageHash = toHex(storageRootOf(registryStorage(entries)));
    return new SetChangeStore(store, log, { epoch: 0, storage_hash: storageHash, validators: entries.map((e) => ({ index: e.index, stake: e.stake, active: e.active && !e.slashed, public_key: e.public_key })) });
  }

  /** The set recorded last, as the stake view finality updates are framed on. */
  stakes(): StakeView {
    return this.stakeView;
  }

  /**
   * Checks a newly finalized checkpoint for a set change and records one when the weighed set
   * moved. The set moves only when the update framed on the previous set reaches 2/3 of its
   * stake: otherwise it answers `short`, and the caller tries again as late votes for the link
   * arrive (fork choice may finalize on 2/3 of a set that shrank, before 2/3 of the previous one
   * voted), as the next checkpoint is compared with the same previous set. Throws on
   * execution's failures (the caller logs them; the next checkpoint catches up).
   */
  async observe(cp: CheckpointHex, header: BlockHeader, links: readonly FinalizingLink[], source: RegistrySource, o: { quiet?: boolean } = {}): Promise<{ change?: SetChangeJson; short: boolean }> {
    if (cp.epoch <= this.current.epoch) return { short: false };
    // The header's state_root is its parent's post-state: execution proves at that block.
    const at = toHex(header.parentHash);
    // A short change is framed again each slot: its registry is fetched and verified once.
    let fetched = this.lastFetched?.at === at ? this.lastFetched : undefined;
    if (!fetched) {
      const storageHash = await source.registryStorageHash(at);
      if (storageHash === this.current.storage_hash) return { short: false };
      const registry = await source.registryProof(at);
      // Checked as a client will check it: a record must never be one it refuses.
      fetched = { at, storageHash, registry, next: verifyRegistryProof(header.stateRoot, registry) };
      this.lastFetched = fetched;
    }
    const { storageHash, registry, next } = fetched;
    if (sameValidatorSet(next, this.set)) {
      // Only RANDAO commitments moved: nothing a verifier weighs.
      await this.moveTo({ ...this.current, storage_hash: storageHash }, new WriteBatch());
      return { short: false };
    }
    const { update, signed } = frameUpdate(cp, header, links, this.stakeView);
    if (!update) {
      if (!o.quiet) this.log.warn('validator set changed at a finalized checkpoint without 2/3 of the previous set\'s stake signed at hand: no set change recorded yet', { epoch: cp.epoch, root: cp.root, signed_stake: signed.toString(), active_stake: this.stakeView.totalActive.toString() });
      return { short: true };
    }
    const next_stakes = stakesOf(next);
    const change: SetChangeJson = { finality: update, registry, validators: next.size, active_stake: next_stakes.totalActive.toString() };
    const current: CurrentSet = { epoch: cp.epoch, storage_hash: storageHash, validators: weights(next) };
    await this.moveTo(current, new WriteBatch().put(key(cp.epoch), change));
    this.lastFetched = undefined;
    this.log.info('validator set change recorded for light clients', { epoch: cp.epoch, validators: next.size, active_stake: change.active_stake });
    return { change, short: false };
  }

  private async moveTo(current: CurrentSet, batch: WriteBatch): Promise<void> {
    await this.store.write(batch.put(CURRENT, current));
    this.current = current;
    this.set = toSet(current);
    this.stakeView = stakesOf(this.set);
  }

  /** Set changes at checkpoints from `fromEpoch` on, oldest first: at most `limit`, and stopping past MAX_SET_CHANGE_PAGE_BYTES. */
  async page(fromEpoch: number, limit: number): Promise<SetChangesView> {
    const out: SetChangeJson[] = [];
    let bytes = 0;
    for await (const [k, v] of this.store.db.iterator<string, string>({ gte: key(fromEpoch), lt: PREFIX + '\xff', valueEncoding: 'utf8' })) {
      const epoch = Number(k.slice(PREFIX.length));
      if (out.length >= limit || (out.length > 0 && bytes + v.length > MAX_SET_CHANGE_PAGE_BYTES)) return { set_changes: out, next_from_epoch: epoch };
      out.push(JSON.parse(v) as SetChangeJson);
      bytes += v.length;
    }
    return { set_changes: out, next_from_epoch: null };
  }
}

/** The stake view of a set: its size in bits, its active validators' stakes. */
function stakesOf(set: ReadonlyMap<number, TrustedValidator>): StakeView {
  const active = new Map<number, bigint>();
  let size = 0;
  for (const v of set.values()) {
    size = Math.max(size, v.index + 1);
    if (v.active) active.set(v.index, v.stake);
  }
  let totalActive = 0n;
  for (const s of active.values()) totalActive += s;
  return { size, activeStake: (i) => active.get(i), totalActive };
}

