/**
 * Beacon fork choice: LMD-GHOST over validators' latest messages weighted by stake, rooted at the
 * Casper-FFG justified checkpoint; FFG justification (≥ 2/3 of active stake) and k = 1
 * finalization; detection of slashable double and surround votes.
 *
 * Pure and synchronous: no clock, no I/O, no signature checks. The caller verifies signatures,
 * drops attestations from future slots, and feeds blocks parent-first.
 *
 * This store ties the parts together and keeps the votes: the block tree and its weights are
 * proto-array.ts, justification and finality justification.ts, the persisted form
 * json.ts, the shared types types.ts (re-exported here for importers).
 *
 * Rules worth knowing (the integrator should copy them into docs/protocol.md, with the FFG rules
 * in justification.ts):
 * - Ties between siblings of equal subtree weight go to the lexicographically greater root (the
 *   0x lowercase hex, i.e. the greater big-endian byte string), as in Ethereum's `get_head`.
 * - A validator's latest message is keyed by target epoch: a newer target epoch replaces it, an
 *   equal or older one is ignored for LMD (it may still count for FFG and slashing detection).
 * - Once a validator is caught equivocating (double or surround vote) its LMD weight is dropped
 *   entirely, as Ethereum does for `equivocating_indices`; the conflicting vote never counts for
 *   LMD or FFG. Its earlier, non-conflicting FFG votes stay counted (justification is monotone).
 * - Which FFG votes count toward justification, and when votes from a source justify it: see
 *   justification.ts. Stake is read from the latest `setBalances` at the time of evaluation.
 */
import { parseUint } from '../../../core/codec/json.js';
import { MalformedError } from '../../../core/errors.js';
import { type ForkChoiceJson, forkChoiceToJson, type LatestMessage, parseForkChoiceJson } from './json.js';
import {
  type AttestationOutcome,
  type CheckpointHex,
  copyEvidence,
  copyVote,
  type ForkChoiceAttestation,
  type ForkChoiceBlock,
  ForkChoiceError,
  parseRoot,
  type Root,
  sameVote,
  type SlashingEvidence,
  surrounds,
  type VoteData,
} from './types.js';
import { Justification, StakeTable } from './justification.js';
import { ProtoArray } from './proto-array.js';

export {
  type AttestationOutcome,
  type CheckpointHex,
  FORK_CHOICE_ERROR_CODES,
  type ForkChoiceAttestation,
  type ForkChoiceBlock,
  ForkChoiceError,
  type ForkChoiceErrorCode,
  type Root,
  type SlashingEvidence,
  toForkChoiceAttestation,
  type VoteData,
} from './types.js';
export type { ForkChoiceJson } from './json.js';

/** LMD-GHOST + Casper-FFG store for one chain. See the file comment for the exact rules. */
export class ForkChoice {
  /** Slots per epoch, from genesis. */
  readonly slotsPerEpoch: number;

  private tree: ProtoArray;
  private stakes = new StakeTable();
  private ffg: Justification;
  private latest = new Map<number, LatestMessage>();
  /** Every validator's recorded (counted or not) FFG votes by target epoch, for slashing checks. */
  private votes = new Map<number, Map<number, VoteData>>();
  /** First evidence per equivocating validator; membership also removes its LMD weight. */
  private equivocations = new Map<number, SlashingEvidence>();

  /** A store whose only block is genesis (slot 0); checkpoint {0, genesis} is justified and finalized. */
  constructor(genesisRoot: Root, slotsPerEpoch: number) {
    const root = parseRoot(genesisRoot, 'genesisRoot');
    this.slotsPerEpoch = parseUint(slotsPerEpoch, 'slotsPerEpoch');
    if (this.slotsPerEpoch < 1) throw new MalformedError('slotsPerEpoch', 'must be at least 1');
    this.tree = new ProtoArray(this.slotsPerEpoch);
    this.tree.push(root, null, 0, -1);
    const genesisCp = { epoch: 0, root };
    this.ffg = new Justification(this.tree, this.stakes, genesisCp, genesisCp, [genesisCp]);
  }

  // -------------------------------------------------------------------------------- queries

  /** Number of blocks held. */
  get size(): number {
    return this.tree.size;
  }

  /** Total active stake (sum of the last `setBalances`). */
  get totalActiveStake(): bigint {
    return this.stakes.total;
  }

  /** The block with this root, if held. */
  getBlock(root: Root): ForkChoiceBlock | undefined {
    const i = this.tree.indexOf(parseRoot(root, 'root'));
    if (i === undefined) return undefined;
    const n = this.tree.node(i);
    return { root: n.root, parentRoot: n.parentRoot, slot: n.slot };
  }

  /** True when `root` is `ancestor` or descends from it; both must be held (UNKNOWN_BLOCK). */
  isDescendant(ancestor: Root, root: Root): boolean {
    const a = this.mustIndex(ancestor, 'ancestor');
    return this.tree.ancestorAtSlot(this.mustIndex(root, 'root'), this.tree.node(a).slot) === a;
  }

  /** The latest block at or before `slot` on `headRoot`'s branch (the head itself when it is not after `slot`). */
  blockAtSlot(headRoot: Root, slot: number): Root {
    const a = this.tree.ancestorAtSlot(this.mustIndex(headRoot, 'headRoot'), parseUint(slot, 'slot'));
    if (a < 0) throw new ForkChoiceError('CHECKPOINT_UNAVAILABLE', `the block at slot ${slot} of ${headRoot} lies before the oldest block held`);
    return this.tree.node(a).root;
  }

  /** Epoch-`epoch` checkpoint root on `headRoot`'s branch: the block at the epoch's start slot or the latest before it. */
  checkpointFor(headRoot: Root, epoch: number): Root {
    const i = this.mustIndex(headRoot, 'headRoot');
    const a = this.tree.ancestorAtSlot(i, this.tree.startSlot(parseUint(epoch, 'epoch')));
    if (a < 0) throw new ForkChoiceError('CHECKPOINT_UNAVAILABLE', `the epoch ${epoch} checkpoint of ${headRoot} lies before the oldest block held`);
    return this.tree.node(a).root;
  }

  /** Highest justified checkpoint that agrees with the finalized one. */
  justified(): CheckpointHex {
    return this.ffg.justified();
  }

  /** Highest finalized checkpoint; never moves backwards. */
  finalized(): CheckpointHex {
    return this.ffg.finalized();
  }

  /** True when this exact checkpoint has been justified (and not pruned away). */
  isJustified(cp: CheckpointHex): boolean {
    return this.ffg.isJustified({ epoch: cp.epoch, root: parseRoot(cp.root, 'checkpoint.root') });
  }

  /** A validator's latest message (the root it votes for and its target epoch). */
  latestMessage(validatorIndex: number): { root: Root; epoch: number } | undefined {
    const m = this.latest.get(validatorIndex);
    return m && { root: m.root, epoch: m.epoch };
  }

  /** First slashing evidence found for each equivocating validator, by validator index. */
  slashable(): SlashingEvidence[] {
    return [...this.equivocations.values()].sort((a, b) => a.validatorIndex - b.validatorIndex).map(copyEvidence);
  }

  /** LMD weight of the subtree rooted at `root` (UNKNOWN_BLOCK if not held). */
  weight(root: Root): bigint {
    const i = this.mustIndex(root, 'root');
    return this.tree.weights()[i]!;
  }

  /**
   * LMD-GHOST head: from the justified checkpoint's block, repeatedly step to the child whose
   * subtree is heaviest; equal weights go to the lexicographically greater root.
   */
  head(): Root {
    const justified = this.ffg.justified();
    const finalized = this.ffg.finalized();
    // The justified block is held unless a conflicting finalization was forced (≥ 1/3 slashable);
    // then the finalized block, which always is, is the only safe start.
    const j = this.tree.indexOf(justified.root);
    const start = j !== undefined ? justified : finalized;
    const i = j ?? this.tree.indexOf(finalized.root) ?? 0;
    // A block at or before the start checkpoint's epoch start slot that is not the checkpoint
    // block itself makes its branch disagree with that checkpoint (Ethereum filters such
    // branches too); only children of the start block can be such blocks, since slots increase.
    return this.tree.head(i, this.tree.startSlot(start.epoch));
  }

  // -------------------------------------------------------------------------------- updates

  /**
   * Imports a block. The parent must be held (UNKNOWN_PARENT), the slot must follow the
   * parent's (INVALID_SLOT), and the block must agree with the finalized checkpoint
   * (FINALIZED_CONFLICT). Re-importing the same block is a no-op.
   */
  onBlock(block: { root: Root; parentRoot: Root; slot: number }): void {
    const checked = this.checkBlock(block);
    if (checked) this.tree.push(checked.root, checked.parentRoot, checked.slot, checked.parent);
  }

  /**
   * The checks of `onBlock` without importing: throws what onBlock would throw; returns undefined
   * for a block already held, else what onBlock pushes. Lets the beacon refuse a block on a branch
   * finality ruled out before execution spends a state transition on it.
   */
  checkBlock(block: { root: Root; parentRoot: Root; slot: number }): { root: Root; parentRoot: Root; slot: number; parent: number } | undefined {
    const root = parseRoot(block.root, 'block.root');
    const parentRoot = parseRoot(block.parentRoot, 'block.parentRoot');
    const slot = parseUint(block.slot, 'block.slot');
    const known = this.tree.indexOf(root);
    if (known !== undefined) {
      const n = this.tree.node(known);
      if (n.parentRoot === parentRoot && n.slot === slot) return undefined;
      throw new ForkChoiceError('BLOCK_CONFLICT', `block ${root} is already known with parent ${n.parentRoot} at slot ${n.slot}`);
    }
    const p = this.tree.indexOf(parentRoot);
    if (p === undefined) throw new ForkChoiceError('UNKNOWN_PARENT', `unknown parent ${parentRoot} of block ${root}`);
    const parent = this.tree.node(p);
    if (slot <= parent.slot) throw new ForkChoiceError('INVALID_SLOT', `block slot ${slot} does not follow its parent's slot ${parent.slot}`);
    // The branch's checkpoint at the finalized epoch must be the finalized block: a new block at
    // or before that epoch's start slot would itself be a different checkpoint.
    const fin = this.ffg.finalized();
    const fStart = this.tree.startSlot(fin.epoch);
    const a = slot <= fStart ? -1 : this.tree.ancestorAtSlot(p, fStart);
    if (a < 0 || this.tree.node(a).root !== fin.root) {
      throw new ForkChoiceError('FINALIZED_CONFLICT', `block ${root} does not descend from the finalized checkpoint (epoch ${fin.epoch}, ${fin.root})`);
    }
    return { root, parentRoot, slot, parent: p };
  }

  /**
   * Replaces the active validators' effective stakes (validator index → stake). Moves LMD weight
   * accordingly and re-evaluates justification, which may only advance.
   */
  setBalances(stakes: ReadonlyMap<number, bigint>): void {
    const next = new Map<number, bigint>();
    let total = 0n;
    for (const [index, stake] of stakes) {
      parseUint(index, `stakes[${index}]`);
      if (typeof stake !== 'bigint' || stake < 0n) throw new MalformedError(`stakes[${index}]`, 'expected a non-negative bigint');
      next.set(index, stake);
      total += stake;
    }
    for (const [v, msg] of this.latest) {
      if (this.equivocations.has(v)) continue;
      const delta = (next.get(v) ?? 0n) - this.stakes.of(v);
      const i = this.tree.indexOf(msg.root);
      if (delta !== 0n && i !== undefined) this.tree.addWeight(i, delta);
    }
    this.stakes.replace(next, total);
    this.ffg.onStakesChanged();
  }

  /**
   * Applies one verified attestation: slashing check against the validator's recorded votes,
   * then LMD latest-message update and FFG link counting. Throws UNKNOWN_BLOCK when it names a
   * block not held (the caller may retry after importing it) and INVALID_ATTESTATION when its
   * fields are inconsistent with each other or with the tree.
   */
  onAttestation(att: ForkChoiceAttestation): AttestationOutcome {
    const v = parseUint(att.validatorIndex, 'attestation.validatorIndex');
    const vote: VoteData = {
      slot: parseUint(att.slot, 'attestation.slot'),
      beaconBlockRoot: parseRoot(att.beaconBlockRoot, 'attestation.beaconBlockRoot'),
      source: { epoch: parseUint(att.source.epoch, 'attestation.source.epoch'), root: parseRoot(att.source.root, 'attestation.source.root') },
      target: { epoch: parseUint(att.target.epoch, 'attestation.target.epoch'), root: parseRoot(att.target.root, 'attestation.target.root') },
    };

    // Slashability depends on the two votes alone (as Ethereum's is_slashable_attestation_data),
    // so it is checked before anything about the tree.
    const history = this.votes.get(v);
    if (history) {
      const same = history.get(vote.target.epoch);
      if (same) {
        if (sameVote(same, vote)) return { status: 'duplicate' };
        return { status: 'slashable', evidence: this.recordEquivocation('double_vote', v, same, vote) };
      }
      for (const prev of history.values()) {
        if (surrounds(prev, vote) || surrounds(vote, prev)) {
          return { status: 'slashable', evidence: this.recordEquivocation('surround_vote', v, prev, vote) };
        }
      }
    }

    const countable = this.ffg.validateVote(vote);

    let h = history;
    if (!h) this.votes.set(v, (h = new Map()));
    h.set(vote.target.epoch, vote);

    let lmd = false;
    if (!this.equivocations.has(v)) {
      const cur = this.latest.get(v);
      if (!cur || vote.target.epoch > cur.epoch) {
        const stake = this.stakes.of(v);
        const from = cur && this.tree.indexOf(cur.root);
        if (from !== undefined) this.tree.addWeight(from, -stake);
        this.tree.addWeight(this.tree.indexOf(vote.beaconBlockRoot)!, stake);
        this.latest.set(v, { root: vote.beaconBlockRoot, epoch: vote.target.epoch });
        lmd = true;
      }
    }

    if (countable) this.ffg.countVote(v, vote);
    return { status: 'applied', lmd, ffg: countable };
  }

  /**
   * Drops every block that does not descend from the finalized block (the finalized block's
   * ancestors included), and FFG bookkeeping older than the finalized epoch. Latest messages
   * are kept (one per validator), so a stale message still loses to newer ones.
   */
  prune(): void {
    const fin = this.ffg.finalized();
    const f = this.tree.indexOf(fin.root);
    if (f === undefined) return;
    this.tree.prune(f, this.tree.startSlot(fin.epoch));
    const fe = fin.epoch;
    for (const [v, h] of this.votes) {
      for (const epoch of h.keys()) if (epoch < fe) h.delete(epoch);
      if (h.size === 0) this.votes.delete(v);
    }
    this.ffg.prune(this.votes);
  }

  // -------------------------------------------------------------------------------- persistence

  /** Everything needed to resume; deterministic (sorted) so equal stores give equal JSON. */
  toJson(): ForkChoiceJson {
    const votes: [number, VoteData][] = [];
    for (const [v, h] of this.votes) for (const vote of h.values()) votes.push([v, vote]);
    return forkChoiceToJson({
      slotsPerEpoch: this.slotsPerEpoch,
      blocks: this.tree.blocks(),
      justified: this.ffg.justified(),
      finalized: this.ffg.finalized(),
      justifiedCheckpoints: this.ffg.justifiedCheckpoints(),
      balances: this.stakes.entries(),
      latestMessages: [...this.latest],
      votes,
      slashable: [...this.equivocations.values()],
    });
  }

  /** Strictly parses `toJson` output (unknown keys, bad roots, orphan blocks are MALFORMED_INPUT). */
  static fromJson(input: unknown): ForkChoice {
    const s = parseForkChoiceJson(input);
    const fc = new ForkChoice(s.blocks[0]!.root, s.slotsPerEpoch);
    fc.tree = ProtoArray.fromBlocks(s.slotsPerEpoch, s.blocks);
    let total = 0n;
    for (const [, stake] of s.balances) total += stake;
    fc.stakes.replace(new Map(s.balances), total);
    fc.ffg = new Justification(fc.tree, fc.stakes, s.justified, s.finalized, s.justifiedCheckpoints);
    for (const e of s.slashable) fc.equivocations.set(e.validatorIndex, e);
    for (const [v, msg] of s.latestMessages) {
      fc.latest.set(v, msg);
      // Messages for pruned blocks are kept but weigh nothing, exactly as before the restart.
      const idx = fc.tree.indexOf(msg.root);
      if (idx !== undefined && !fc.equivocations.has(v)) fc.tree.addWeight(idx, fc.stakes.of(v));
    }
    for (const [v, vote] of s.votes) {
      let h = fc.votes.get(v);
      if (!h) fc.votes.set(v, (h = new Map()));
      h.set(vote.target.epoch, vote);
    }
    fc.ffg.rebuildLinks(fc.votes);
    // No re-evaluation: the saved store was a fixed point, so it resumes exactly where it stopped.
    return fc;
  }

  // -------------------------------------------------------------------------------- internals

  private mustIndex(root: Root, field: string): number {
    const r = parseRoot(root, field);
    const i = this.tree.indexOf(r);
    if (i === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown block ${r}`);
    return i;
  }

  private recordEquivocation(kind: SlashingEvidence['kind'], v: number, previous: VoteData, conflicting: VoteData): SlashingEvidence {
    const evidence: SlashingEvidence = { kind, validatorIndex: v, previous: copyVote(previous), conflicting: copyVote(conflicting) };
    if (!this.equivocations.has(v)) {
      this.equivocations.set(v, copyEvidence(evidence));
      // As Ethereum's equivocating_indices: an equivocator's LMD vote no longer weighs anything.
      const msg = this.latest.get(v);
      const i = msg && this.tree.indexOf(msg.root);
      if (i !== undefined) this.tree.addWeight(i, -this.stakes.of(v));
    }
    return evidence;
  }
}
