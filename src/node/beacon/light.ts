/**
 * The beacon's light-client memory (docs/light-client.md): the signed votes of each link that can
 * finalize a checkpoint (source epoch e → target epoch e + 1, as fork choice finalizes), held while
 * they wait, and once a checkpoint is finalized the finality update made of them, persisted under
 * `L:<epoch>` (the newest LIGHT_UPDATES_KEPT). ML-DSA signatures do not aggregate, so an update
 * carries one signed attestation per signer. Bounded: LIGHT_PENDING_LINKS links, one vote per
 * validator each; links whose source is older than the finalized epoch are dropped.
 */
import { toHex } from '../../core/codec/bytes.js';
import { LIGHT_PENDING_LINKS, LIGHT_UPDATES_KEPT } from '../../core/constants.js';
import { participationBits } from '../../core/light/verify.js';
import { type Attestation, attestationToJson, encodeAttestation } from '../../core/types/attestation.js';
import { type BlockHeader, headerToJson } from '../../core/types/block.js';
import { BlockHeaderSsz } from '../../core/types/ssz.js';
import type { Logger } from '../../util/log.js';
import type { FinalityUpdateJson } from '../../api/light.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import type { CheckpointHex } from './forkchoice/fork-choice.js';

const PREFIX = 'L:';
const key = (epoch: number) => `${PREFIX}${String(epoch).padStart(16, '0')}`;

interface PendingLink {
  source: CheckpointHex;
  target: CheckpointHex;
  votes: Map<number, Attestation>;
}

/** Stake lookups the update needs from the registry of the moment. */
export interface StakeView {
  /** Registry size (the bitfield's length in bits). */
  size: number;
  /** Stake of an active validator; undefined when unknown or inactive. */
  activeStake(index: number): bigint | undefined;
  /** Sum of active stake. */
  totalActive: bigint;
}

export class LightStore {
  private readonly pending = new Map<string, PendingLink>();
  private latestEpoch: number | undefined;

  private constructor(
    private readonly store: ChainStore,
    private readonly log: Logger,
  ) {}

  /** Opens the store: finds the newest persisted update (at most LIGHT_UPDATES_KEPT keys are read). */
  static async open(store: ChainStore, log: Logger): Promise<LightStore> {
    const s = new LightStore(store, log);
    for await (const k of store.db.keys({ gte: PREFIX, lt: PREFIX + '\xff', reverse: true, limit: 1 })) s.latestEpoch = Number(k.slice(PREFIX.length));
    return s;
  }

  /**
   * Keeps a verified vote if its link can finalize a checkpoint from `finalizedEpoch` on (target
   * one epoch after source). Called for every vote fork choice accepted, received or included.
   */
  observe(att: Attestation, finalizedEpoch: number): void {
    const { source, target } = att.data;
    // `<`, not `<=`: the vote that finalizes its source is observed after fork choice finalized it.
    if (target.epoch !== source.epoch + 1 || source.epoch < finalizedEpoch) return;
    const id = `${source.epoch}:${toHex(source.root)}>${toHex(target.root)}`;
    let link = this.pending.get(id);
    if (!link) {
      link = { source: { epoch: source.epoch, root: toHex(source.root) }, target: { epoch: target.epoch, root: toHex(target.root) }, votes: new Map() };
      this.pending.set(id, link);
      // Map order is insertion order: the oldest link goes first.
      for (const k of this.pending.keys()) {
        if (this.pending.size <= LIGHT_PENDING_LINKS) break;
        this.pending.delete(k);
      }
    }
    if (!link.votes.has(att.validatorIndex)) link.votes.set(att.validatorIndex, att);
  }

  /**
   * The signed links of a newly finalized checkpoint (source = it), as they stand now; every link
   * finality made useless is dropped. The checkpoint's own links stay until the next finality
   * and keep collecting votes (observe), so a record that needs more of them can be framed again.
   */
  finalizedLinks(cp: CheckpointHex): FinalizingLink[] {
    const out: FinalizingLink[] = [];
    for (const [k, link] of this.pending) {
      const own = link.source.epoch === cp.epoch && link.source.root === cp.root;
      if (own) out.push({ target: link.target, votes: [...link.votes.values()] });
      else if (link.source.epoch <= cp.epoch) this.pending.delete(k);
    }
    return out;
  }

  /** Records the finality update of a newly finalized checkpoint, framed on `stakes` (see frameUpdate). */
  finalized(cp: CheckpointHex, header: BlockHeader, stakes: StakeView): Promise<FinalityUpdateJson | undefined> {
    return this.finalizedWith(cp, header, this.finalizedLinks(cp), stakes);
  }

  /** finalized, with the links already taken (finalizedLinks). */
  async finalizedWith(cp: CheckpointHex, header: BlockHeader, links: readonly FinalizingLink[], stakes: StakeView): Promise<FinalityUpdateJson | undefined> {
    const { update, signed } = frameUpdate(cp, header, links, stakes);
    if (!update) {
      this.log.warn('finalized checkpoint without 2/3 of its signed votes at hand: no light-client finality update for it', { epoch: cp.epoch, root: cp.root, signed_stake: signed.toString(), active_stake: stakes.totalActive.toString() });
      return undefined;
    }
    await this.record(update);
    return update;
  }

  // Persists an update, keeping the newest LIGHT_UPDATES_KEPT.
  private async record(update: FinalityUpdateJson): Promise<void> {
    const epoch = update.finalized.epoch;
    const batch = new WriteBatch().put(key(epoch), update);
    // Finalized epochs only grow, so the one LIGHT_UPDATES_KEPT epochs back (if any) is the oldest kept.
    for await (const k of this.store.db.keys({ gte: PREFIX, lt: key(Math.max(0, epoch - LIGHT_UPDATES_KEPT + 1)) })) batch.del(k);
    await this.store.write(batch);
    this.latestEpoch = epoch;
  }

  /** The newest finality update, or the one of `epoch`. */
  async update(epoch?: number): Promise<FinalityUpdateJson | undefined> {
    const e = epoch ?? this.latestEpoch;
    return e === undefined ? undefined : this.store.get<FinalityUpdateJson>(key(e));
  }
}

/** A finalizing link's target and every signed vote seen for it. */
export interface FinalizingLink {
  target: CheckpointHex;
  votes: Attestation[];
}

/**
 * The finality update of `cp` framed on a validator set (`stakes`): the votes of its link with the
 * most stake in that set, only those of the set's active validators, its bitfield over the set's
 * size. Undefined below 2/3 of the set's active stake (the votes were not all seen here, e.g.
 * across a restart, or the set lost more than a third of its stake): no update rather than one a
 * client would refuse. Returns the signed stake too, for the caller's log.
 */
export function frameUpdate(cp: CheckpointHex, header: BlockHeader, links: readonly FinalizingLink[], stakes: StakeView): { update?: FinalityUpdateJson; signed: bigint } {
  let best: { link: FinalizingLink; votes: Attestation[]; stake: bigint } | undefined;
  for (const link of links) {
    const votes = link.votes.filter((a) => a.validatorIndex < stakes.size && stakes.activeStake(a.validatorIndex) !== undefined).sort((a, b) => a.validatorIndex - b.validatorIndex);
    const stake = votes.reduce((s, a) => s + stakes.activeStake(a.validatorIndex)!, 0n);
    if (!best || stake > best.stake) best = { link, votes, stake };
  }
  if (!best || 3n * best.stake < 2n * stakes.totalActive) return { signed: best?.stake ?? 0n };
  return {
    signed: best.stake,
    update: {
      finalized: { epoch: cp.epoch, root: cp.root },
      target: best.link.target,
      header: headerToJson(header),
      attestations: best.votes.map(attestationToJson),
      participation: toHex(participationBits(best.votes.map((a) => a.validatorIndex), stakes.size)),
      signers: best.votes.length,
      signed_stake: best.stake.toString(),
      active_stake: stakes.totalActive.toString(),
      size_bytes: updateSize(header, best.votes),
    },
  };
}

/** SSZ bytes of an update's substance: the header plus each signed attestation (the bitfield and checkpoints add under 100 bytes). */
export function updateSize(header: BlockHeader, votes: readonly Attestation[]): number {
  return BlockHeaderSsz.serialize(header).length + votes.reduce((n, a) => n + encodeAttestation(a).length, 0);
}
