/**
 * Casper-FFG bookkeeping of the fork-choice store: supermajority links between checkpoints,
 * justification (≥ 2/3 of active stake) and k = 1 finalization, over the block tree of
 * proto-array.ts and the stakes of the last `setBalances`.
 *
 * Rules worth knowing (the integrator should copy them into docs/protocol.md, with the LMD rules
 * in fork-choice.ts):
 * - An FFG vote counts toward justification only when its source is justified, its source epoch
 *   is ≥ the finalized epoch, its target epoch is > the finalized epoch, and its target agrees
 *   with the finalized checkpoint. Honest votes always satisfy this; the rule keeps pruning and
 *   restoring from JSON from changing what counts.
 * - Counted votes of more than 1/3 of stake from one source (any targets) justify that source
 *   even when this node never saw the votes that justified it. Justification here counts votes
 *   received directly as well as those in blocks, so a node that was partitioned or offline when
 *   an epoch's votes were gossiped, and whose blocks never carried them, would otherwise hold that
 *   epoch unjustified; its validators would keep voting from an older source than everyone else's,
 *   splitting every later link below 2/3, and finality would stop for good on every node. The
 *   inference is sound while less than 1/3 of stake is faulty (the bound FFG's safety assumes):
 *   an honest validator votes from a source only once its beacon holds it justified, so more than
 *   1/3 of voters includes an honest one and the source's justifying votes exist. A faulty third
 *   could make nodes take an unjustified source as justified, which weakens FFG's accountability
 *   (not its safety below 1/3); counting only the votes each branch includes, as Ethereum does,
 *   would avoid the inference altogether.
 * - Stake is read from the latest `setBalances` at the time of evaluation (not at vote time);
 *   a balance change re-evaluates every pending link.
 */
import { type CheckpointHex, copyCheckpoint, cpKey, ForkChoiceError, type Root, type VoteData } from './types.js';
import type { ProtoArray } from './proto-array.js';

/** Active validators' effective stakes (validator index → stake) and their sum. */
export class StakeTable {
  private stakes = new Map<number, bigint>();
  private sum = 0n;

  /** Sum of every stake held. */
  get total(): bigint {
    return this.sum;
  }

  /** A validator's stake; 0 when it is not active. */
  of(validator: number): bigint {
    return this.stakes.get(validator) ?? 0n;
  }

  /** Sum of the stakes of `voters`. */
  sumOf(voters: Iterable<number>): bigint {
    let s = 0n;
    for (const v of voters) s += this.of(v);
    return s;
  }

  /** Every stake held, by validator index. */
  entries(): [number, bigint][] {
    return [...this.stakes];
  }

  /** Replaces every stake; `total` is their sum, computed by the caller while checking them. */
  replace(next: Map<number, bigint>, total: bigint): void {
    this.stakes = next;
    this.sum = total;
  }
}

interface Link {
  source: CheckpointHex;
  target: CheckpointHex;
  voters: Set<number>;
  /** Sum of the voters' current stakes. */
  stake: bigint;
}

/** Justified and finalized checkpoints and the counted links that justify them. */
export class Justification {
  private justifiedSet = new Map<string, CheckpointHex>();
  private bestJustified: CheckpointHex;
  private finalizedCp: CheckpointHex;
  private links = new Map<string, Link>();
  private linksByTarget = new Map<string, Link[]>();
  private linksBySource = new Map<string, Link[]>();

  /**
   * Justification over `tree` and `stakes` (both owned by the caller, read at evaluation time).
   * `justifiedCheckpoints` must include `justified` and `finalized`, all held in `tree`.
   */
  constructor(
    private readonly tree: ProtoArray,
    private readonly stakes: StakeTable,
    justified: CheckpointHex,
    finalized: CheckpointHex,
    justifiedCheckpoints: readonly CheckpointHex[],
  ) {
    for (const cp of justifiedCheckpoints) this.justifiedSet.set(cpKey(cp), copyCheckpoint(cp));
    this.bestJustified = copyCheckpoint(justified);
    this.finalizedCp = copyCheckpoint(finalized);
  }

  /** Highest justified checkpoint that agrees with the finalized one (the caller's copy). */
  justified(): CheckpointHex {
    return copyCheckpoint(this.bestJustified);
  }

  /** Highest finalized checkpoint (the caller's copy); never moves backwards. */
  finalized(): CheckpointHex {
    return copyCheckpoint(this.finalizedCp);
  }

  /** True when this exact (lowercase-root) checkpoint has been justified and not pruned away. */
  isJustified(cp: CheckpointHex): boolean {
    return this.justifiedSet.has(cpKey(cp));
  }

  /** Every justified checkpoint held, sorted by epoch then root (the persisted order). */
  justifiedCheckpoints(): CheckpointHex[] {
    return [...this.justifiedSet.values()].sort((a, b) => a.epoch - b.epoch || (a.root < b.root ? -1 : a.root > b.root ? 1 : 0)).map(copyCheckpoint);
  }

  /** The branch through `root` has the finalized block as its checkpoint at the finalized epoch. */
  agreesWithFinalized(root: Root): boolean {
    const i = this.tree.indexOf(root);
    if (i === undefined) return false;
    const a = this.tree.ancestorAtSlot(i, this.tree.startSlot(this.finalizedCp.epoch));
    return a >= 0 && this.tree.node(a).root === this.finalizedCp.root;
  }

  /**
   * Checks an attestation against the tree; returns whether its FFG link may count toward
   * justification (see the file comment), throws when it is unusable.
   */
  validateVote(vote: VoteData): boolean {
    const { source, target } = vote;
    const tree = this.tree;
    if (target.epoch !== Math.floor(vote.slot / tree.slotsPerEpoch)) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `target epoch ${target.epoch} is not the epoch of slot ${vote.slot}`);
    }
    // Only genesis votes have source = target ({0, genesis} → {0, genesis}); they carry no link.
    if (source.epoch > target.epoch || (source.epoch === target.epoch && (target.epoch !== 0 || source.root !== target.root))) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `source (epoch ${source.epoch}) must precede target (epoch ${target.epoch})`);
    }
    const head = tree.indexOf(vote.beaconBlockRoot);
    if (head === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown beacon block ${vote.beaconBlockRoot}`);
    if (tree.node(head).slot > vote.slot) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `beacon block slot ${tree.node(head).slot} is after the attestation slot ${vote.slot}`);
    }
    const t = tree.indexOf(target.root);
    if (t === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown target block ${target.root}`);
    const tc = tree.ancestorAtSlot(head, tree.startSlot(target.epoch));
    if (tc !== t) throw new ForkChoiceError('INVALID_ATTESTATION', `target ${target.root} is not the epoch ${target.epoch} checkpoint of beacon block ${vote.beaconBlockRoot}`);

    const fe = this.finalizedCp.epoch;
    // A source before the finalized epoch may lie in pruned history, so it cannot be checked;
    // such a vote counts for LMD and slashing but never for justification.
    if (source.epoch < fe || target.epoch <= fe) return false;
    const sc = tree.ancestorAtSlot(t, tree.startSlot(source.epoch));
    if (sc < 0 || tree.node(sc).root !== source.root) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `source ${source.root} is not the epoch ${source.epoch} checkpoint of target ${target.root}`);
    }
    return this.agreesWithFinalized(target.root);
  }

  /** Counts validator `v`'s vote, which `validateVote` found countable, and applies what it justifies or finalizes. */
  countVote(v: number, vote: VoteData): void {
    const link = this.addToLink(v, vote);
    link.stake += this.stakes.of(v);
    this.processLinks([link]);
  }

  /** Re-reads every link's stake after the stakes changed and applies what now reaches a threshold (justification may only advance). */
  onStakesChanged(): void {
    for (const link of this.links.values()) link.stake = this.stakes.sumOf(link.voters);
    // Lower source epochs first, so a justification cascade is found in one pass.
    this.processLinks([...this.links.values()].sort((x, y) => x.source.epoch - y.source.epoch || x.target.epoch - y.target.epoch));
  }

  /**
   * Drops justified checkpoints older than the finalized epoch or whose block was pruned, and
   * recreates the links from `votes` (each validator's recorded votes), which the caller has
   * pruned to the finalized epoch.
   */
  prune(votes: ReadonlyMap<number, ReadonlyMap<number, VoteData>>): void {
    const fe = this.finalizedCp.epoch;
    for (const [key, cp] of this.justifiedSet) {
      if (cp.epoch < fe || !this.tree.has(cp.root)) this.justifiedSet.delete(key);
    }
    this.rebuildLinks(votes);
  }

  /** Recreates the link tables from the recorded votes (after pruning or restoring). */
  rebuildLinks(votes: ReadonlyMap<number, ReadonlyMap<number, VoteData>>): void {
    this.links.clear();
    this.linksByTarget.clear();
    this.linksBySource.clear();
    const fe = this.finalizedCp.epoch;
    for (const [v, h] of votes) {
      for (const vote of h.values()) {
        // Same condition as validateVote's result; an equivocation's conflicting vote is never recorded.
        if (vote.source.epoch < fe || vote.target.epoch <= fe || !this.agreesWithFinalized(vote.target.root)) continue;
        this.addToLink(v, vote);
      }
    }
    for (const link of this.links.values()) link.stake = this.stakes.sumOf(link.voters);
  }

  /** Validators with a counted vote from the source `sk`, whatever its target. */
  private sourceVoters(sk: string): Set<number> {
    const voters = new Set<number>();
    for (const l of this.linksBySource.get(sk) ?? []) for (const v of l.voters) voters.add(v);
    return voters;
  }

  private beyondOneThird(stake: bigint): boolean {
    const total = this.stakes.total;
    return total > 0n && 3n * stake > total;
  }

  private supermajority(stake: bigint): boolean {
    const total = this.stakes.total;
    // Exact: 3 × votes ≥ 2 × total. An empty validator set justifies nothing.
    return total > 0n && 3n * stake >= 2n * total;
  }

  private addToLink(v: number, vote: VoteData): Link {
    const key = `${cpKey(vote.source)}>${cpKey(vote.target)}`;
    let link = this.links.get(key);
    if (!link) {
      link = { source: copyCheckpoint(vote.source), target: copyCheckpoint(vote.target), voters: new Set(), stake: 0n };
      this.links.set(key, link);
      const tk = cpKey(vote.target);
      const sk = cpKey(vote.source);
      this.linksByTarget.set(tk, [...(this.linksByTarget.get(tk) ?? []), link]);
      this.linksBySource.set(sk, [...(this.linksBySource.get(sk) ?? []), link]);
    }
    link.voters.add(v);
    return link;
  }

  /**
   * Justifies targets whose justified-source links reach a supermajority, and finalizes a
   * source whose supermajority link reaches the very next epoch (k = 1). Newly justified
   * checkpoints enqueue the links leaving them, so cascades resolve in one call.
   */
  private processLinks(queue: Link[]): void {
    for (let q = 0; q < queue.length; q++) {
      const link = queue[q]!;
      const fe = this.finalizedCp.epoch;
      if (link.source.epoch < fe || link.target.epoch <= fe) continue;
      const sk = cpKey(link.source);
      if (!this.justifiedSet.has(sk)) {
        // Votes of more than 1/3 of stake from a source prove it justified (see the file comment):
        // how a node that missed the votes justifying it, which no block carried, catches up.
        // The target agreeing with the finalized checkpoint implies its ancestor, the source, does.
        if (!this.beyondOneThird(this.stakes.sumOf(this.sourceVoters(sk))) || !this.agreesWithFinalized(link.target.root)) continue;
        this.justify(link.source);
        queue.push(...(this.linksBySource.get(sk) ?? []).filter((l) => l !== link));
      }
      const tk = cpKey(link.target);
      if (!this.justifiedSet.has(tk)) {
        if (!this.agreesWithFinalized(link.target.root)) continue;
        // A validator votes once per target epoch, so summing links into one target never
        // counts anyone twice.
        let sum = 0n;
        for (const l of this.linksByTarget.get(tk) ?? []) {
          if (l.source.epoch >= fe && this.justifiedSet.has(cpKey(l.source))) sum += l.stake;
        }
        if (!this.supermajority(sum)) continue;
        this.justify(link.target);
        queue.push(...(this.linksBySource.get(tk) ?? []));
      }
      if (link.target.epoch === link.source.epoch + 1 && link.source.epoch > fe && this.supermajority(link.stake)) {
        this.finalize(link.source);
      }
    }
  }

  private justify(cp: CheckpointHex): void {
    this.justifiedSet.set(cpKey(cp), copyCheckpoint(cp));
    if (cp.epoch > this.bestJustified.epoch) this.bestJustified = copyCheckpoint(cp);
  }

  private finalize(cp: CheckpointHex): void {
    if (cp.epoch <= this.finalizedCp.epoch) return; // never backwards
    this.finalizedCp = copyCheckpoint(cp);
    if (!this.agreesWithFinalized(this.bestJustified.root) || this.bestJustified.epoch < cp.epoch) {
      // Only reachable when ≥ 1/3 of stake equivocated: fall back to the best justified
      // checkpoint on the finalized branch (the finalized checkpoint itself at worst).
      let best = copyCheckpoint(cp);
      for (const j of this.justifiedSet.values()) {
        if (j.epoch > best.epoch && this.agreesWithFinalized(j.root)) best = copyCheckpoint(j);
      }
      this.bestJustified = best;
    }
  }
}
