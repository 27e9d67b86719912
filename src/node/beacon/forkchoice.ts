/**
 * Beacon fork choice: LMD-GHOST over validators' latest messages weighted by stake, rooted at the
 * Casper-FFG justified checkpoint; FFG justification (≥ 2/3 of active stake) and k = 1
 * finalization; detection of slashable double and surround votes.
 *
 * Pure and synchronous: no clock, no I/O, no signature checks. The caller verifies signatures,
 * drops attestations from future slots, and feeds blocks parent-first.
 *
 * Layout follows the proto-array idea (Lodestar, Lighthouse): blocks live in one array in import
 * order, which is a topological order because a parent is always imported before its children,
 * so one reverse pass turns per-block vote weight into subtree weight (O(blocks) per head
 * computation, O(1) per vote change).
 *
 * Rules worth knowing (the integrator should copy them into docs/protocol.md):
 * - Ties between siblings of equal subtree weight go to the lexicographically greater root (the
 *   0x lowercase hex, i.e. the greater big-endian byte string), as in Ethereum's `get_head`.
 * - A validator's latest message is keyed by target epoch: a newer target epoch replaces it, an
 *   equal or older one is ignored for LMD (it may still count for FFG and slashing detection).
 * - Once a validator is caught equivocating (double or surround vote) its LMD weight is dropped
 *   entirely, as Ethereum does for `equivocating_indices`; the conflicting vote never counts for
 *   LMD or FFG. Its earlier, non-conflicting FFG votes stay counted (justification is monotone).
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
import { toHex } from '../../core/codec/bytes.js';
import { parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../../core/codec/json.js';
import { MalformedError, SvcError } from '../../core/errors.js';
import type { Attestation } from '../../core/types/attestation.js';

/** A block root: `0x` + 64 lowercase hex digits. */
export type Root = string;

/** An FFG checkpoint with a hex root. */
export interface CheckpointHex {
  epoch: number;
  root: Root;
}

/** What fork choice knows about a block. `parentRoot` is null only for the genesis block. */
export interface ForkChoiceBlock {
  root: Root;
  parentRoot: Root | null;
  slot: number;
}

/** The attestation fields fork choice uses (signature already verified by the caller). */
export interface ForkChoiceAttestation {
  validatorIndex: number;
  slot: number;
  beaconBlockRoot: Root;
  source: CheckpointHex;
  target: CheckpointHex;
}

/** One validator's vote: AttestationData with hex roots. */
export type VoteData = Omit<ForkChoiceAttestation, 'validatorIndex'>;

/**
 * Two votes of one validator that are slashable together. Fork choice holds no signatures: the
 * caller pairs `previous` and `conflicting` with the signed attestations it received.
 */
export interface SlashingEvidence {
  kind: 'double_vote' | 'surround_vote';
  validatorIndex: number;
  /** The vote recorded earlier. */
  previous: VoteData;
  /** The vote just received, which was not counted. */
  conflicting: VoteData;
}

/** Result of `onAttestation`. */
export type AttestationOutcome =
  /** `lmd`: the latest message changed; `ffg`: the vote counts toward justification. */
  | { status: 'applied'; lmd: boolean; ffg: boolean }
  /** The identical vote was already recorded. */
  | { status: 'duplicate' }
  /** Conflicts with a recorded vote of the same validator; not counted. */
  | { status: 'slashable'; evidence: SlashingEvidence };

/** Machine codes of fork-choice errors, with the HTTP status an API should use. */
export const FORK_CHOICE_ERRORS = {
  UNKNOWN_PARENT: 400,
  INVALID_SLOT: 400,
  BLOCK_CONFLICT: 409,
  FINALIZED_CONFLICT: 409,
  UNKNOWN_BLOCK: 404,
  INVALID_ATTESTATION: 400,
  CHECKPOINT_UNAVAILABLE: 404,
} as const;

export type ForkChoiceErrorCode = keyof typeof FORK_CHOICE_ERRORS;

/** A block or attestation fork choice refuses, or a query about a block it does not hold. */
export class ForkChoiceError extends SvcError {
  declare readonly code: ForkChoiceErrorCode;

  constructor(code: ForkChoiceErrorCode, message: string) {
    super(code, message, FORK_CHOICE_ERRORS[code]);
  }
}

/** Converts a decoded (signature-checked) attestation into fork-choice input. */
export function toForkChoiceAttestation(att: Attestation): ForkChoiceAttestation {
  const d = att.data;
  return {
    validatorIndex: att.validatorIndex,
    slot: d.slot,
    beaconBlockRoot: toHex(d.beaconBlockRoot),
    source: { epoch: d.source.epoch, root: toHex(d.source.root) },
    target: { epoch: d.target.epoch, root: toHex(d.target.root) },
  };
}

// ---------------------------------------------------------------------------------------------
// JSON shapes (snake_case, like every wire format of the project)

interface CheckpointJson {
  epoch: number;
  root: string;
}

interface VoteJson {
  validator_index: number;
  slot: number;
  beacon_block_root: string;
  source: CheckpointJson;
  target: CheckpointJson;
}

/** Persisted fork-choice store; `blocks` is parent-first and its first entry is the anchor. */
export interface ForkChoiceJson {
  version: 1;
  slots_per_epoch: number;
  blocks: { root: string; parent_root: string | null; slot: number }[];
  justified: CheckpointJson;
  finalized: CheckpointJson;
  justified_checkpoints: CheckpointJson[];
  balances: { validator_index: number; stake: string }[];
  latest_messages: { validator_index: number; root: string; epoch: number }[];
  votes: VoteJson[];
  slashable: { kind: SlashingEvidence['kind']; validator_index: number; previous: Omit<VoteJson, 'validator_index'>; conflicting: Omit<VoteJson, 'validator_index'> }[];
}

// ---------------------------------------------------------------------------------------------

interface Node {
  root: Root;
  parentRoot: Root | null;
  slot: number;
  /** Index of the parent in `nodes`, -1 for the anchor (genesis, or the finalized block after pruning). */
  parent: number;
  children: number[];
  /**
   * Index of the latest ancestor-or-self at or before the start slot of this block's epoch
   * (its epoch checkpoint), -1 if pruned away. Lets ancestor look-ups jump an epoch per step.
   */
  epochAnchor: number;
}

interface Link {
  source: CheckpointHex;
  target: CheckpointHex;
  voters: Set<number>;
  /** Sum of the voters' current stakes. */
  stake: bigint;
}

const ROOT_RE = /^0x[0-9a-fA-F]{64}$/;

function parseRoot(value: unknown, field: string): Root {
  if (typeof value !== 'string' || !ROOT_RE.test(value)) throw new MalformedError(field, 'expected 0x and 64 hex digits');
  return value.toLowerCase();
}

function parseCheckpoint(value: unknown, field: string): CheckpointHex {
  const o = requireObject(value, field);
  rejectUnknownKeys(o, ['epoch', 'root'], field);
  return { epoch: parseUint(o.epoch, `${field}.epoch`), root: parseRoot(o.root, `${field}.root`) };
}

function cpKey(cp: CheckpointHex): string {
  return `${cp.epoch}:${cp.root}`;
}

function sameCheckpoint(a: CheckpointHex, b: CheckpointHex): boolean {
  return a.epoch === b.epoch && a.root === b.root;
}

function sameVote(a: VoteData, b: VoteData): boolean {
  return a.slot === b.slot && a.beaconBlockRoot === b.beaconBlockRoot && sameCheckpoint(a.source, b.source) && sameCheckpoint(a.target, b.target);
}

/** True when `outer` strictly surrounds `inner` (Casper's second slashing condition). */
function surrounds(outer: VoteData, inner: VoteData): boolean {
  return outer.source.epoch < inner.source.epoch && inner.target.epoch < outer.target.epoch;
}

function copyCheckpoint(cp: CheckpointHex): CheckpointHex {
  return { epoch: cp.epoch, root: cp.root };
}

function copyVote(v: VoteData): VoteData {
  return { slot: v.slot, beaconBlockRoot: v.beaconBlockRoot, source: copyCheckpoint(v.source), target: copyCheckpoint(v.target) };
}

function voteToJson(v: VoteData): Omit<VoteJson, 'validator_index'> {
  return { slot: v.slot, beacon_block_root: v.beaconBlockRoot, source: copyCheckpoint(v.source), target: copyCheckpoint(v.target) };
}

function voteFromJson(value: unknown, field: string, withIndex: boolean): VoteData & { validatorIndex: number } {
  const o = requireObject(value, field);
  const keys = ['slot', 'beacon_block_root', 'source', 'target'];
  rejectUnknownKeys(o, withIndex ? ['validator_index', ...keys] : keys, field);
  return {
    validatorIndex: withIndex ? parseUint(o.validator_index, `${field}.validator_index`) : -1,
    slot: parseUint(o.slot, `${field}.slot`),
    beaconBlockRoot: parseRoot(o.beacon_block_root, `${field}.beacon_block_root`),
    source: parseCheckpoint(o.source, `${field}.source`),
    target: parseCheckpoint(o.target, `${field}.target`),
  };
}

function requireArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new MalformedError(field, 'expected an array');
  return value;
}

/** LMD-GHOST + Casper-FFG store for one chain. See the file comment for the exact rules. */
export class ForkChoice {
  /** Slots per epoch, from genesis. */
  readonly slotsPerEpoch: number;

  private nodes: Node[] = [];
  private indices = new Map<Root, number>();
  /** Stake of the latest messages pointing directly at each node (same indexing as `nodes`). */
  private own: bigint[] = [];

  private balances = new Map<number, bigint>();
  private totalStake = 0n;
  private latest = new Map<number, { root: Root; epoch: number }>();
  /** Every validator's recorded (counted or not) FFG votes by target epoch, for slashing checks. */
  private votes = new Map<number, Map<number, VoteData>>();
  /** First evidence per equivocating validator; membership also removes its LMD weight. */
  private equivocations = new Map<number, SlashingEvidence>();

  private justifiedSet = new Map<string, CheckpointHex>();
  private bestJustified: CheckpointHex;
  private finalizedCp: CheckpointHex;
  private links = new Map<string, Link>();
  private linksByTarget = new Map<string, Link[]>();
  private linksBySource = new Map<string, Link[]>();

  /** Subtree weights and head, recomputed lazily after any change. */
  private subtree: bigint[] | undefined;
  private headCache: Root | undefined;

  /** A store whose only block is genesis (slot 0); checkpoint {0, genesis} is justified and finalized. */
  constructor(genesisRoot: Root, slotsPerEpoch: number) {
    const root = parseRoot(genesisRoot, 'genesisRoot');
    this.slotsPerEpoch = parseUint(slotsPerEpoch, 'slotsPerEpoch');
    if (this.slotsPerEpoch < 1) throw new MalformedError('slotsPerEpoch', 'must be at least 1');
    this.pushNode(root, null, 0, -1);
    const genesisCp = { epoch: 0, root };
    this.justifiedSet.set(cpKey(genesisCp), genesisCp);
    this.bestJustified = copyCheckpoint(genesisCp);
    this.finalizedCp = copyCheckpoint(genesisCp);
  }

  // -------------------------------------------------------------------------------- queries

  /** Number of blocks held. */
  get size(): number {
    return this.nodes.length;
  }

  /** Total active stake (sum of the last `setBalances`). */
  get totalActiveStake(): bigint {
    return this.totalStake;
  }

  /** The block with this root, if held. */
  getBlock(root: Root): ForkChoiceBlock | undefined {
    const i = this.indices.get(parseRoot(root, 'root'));
    if (i === undefined) return undefined;
    const n = this.nodes[i]!;
    return { root: n.root, parentRoot: n.parentRoot, slot: n.slot };
  }

  /** True when `root` is `ancestor` or descends from it; both must be held (UNKNOWN_BLOCK). */
  isDescendant(ancestor: Root, root: Root): boolean {
    const a = this.mustIndex(ancestor, 'ancestor');
    return this.ancestorAtSlot(this.mustIndex(root, 'root'), this.nodes[a]!.slot) === a;
  }

  /** The latest block at or before `slot` on `headRoot`'s branch (the head itself when it is not after `slot`). */
  blockAtSlot(headRoot: Root, slot: number): Root {
    const a = this.ancestorAtSlot(this.mustIndex(headRoot, 'headRoot'), parseUint(slot, 'slot'));
    if (a < 0) throw new ForkChoiceError('CHECKPOINT_UNAVAILABLE', `the block at slot ${slot} of ${headRoot} lies before the oldest block held`);
    return this.nodes[a]!.root;
  }

  /** Epoch-`epoch` checkpoint root on `headRoot`'s branch: the block at the epoch's start slot or the latest before it. */
  checkpointFor(headRoot: Root, epoch: number): Root {
    const i = this.mustIndex(headRoot, 'headRoot');
    const a = this.ancestorAtSlot(i, this.startSlot(parseUint(epoch, 'epoch')));
    if (a < 0) throw new ForkChoiceError('CHECKPOINT_UNAVAILABLE', `the epoch ${epoch} checkpoint of ${headRoot} lies before the oldest block held`);
    return this.nodes[a]!.root;
  }

  /** Highest justified checkpoint that agrees with the finalized one. */
  justified(): CheckpointHex {
    return copyCheckpoint(this.bestJustified);
  }

  /** Highest finalized checkpoint; never moves backwards. */
  finalized(): CheckpointHex {
    return copyCheckpoint(this.finalizedCp);
  }

  /** True when this exact checkpoint has been justified (and not pruned away). */
  isJustified(cp: CheckpointHex): boolean {
    return this.justifiedSet.has(cpKey({ epoch: cp.epoch, root: parseRoot(cp.root, 'checkpoint.root') }));
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
    return this.weights()[i]!;
  }

  /**
   * LMD-GHOST head: from the justified checkpoint's block, repeatedly step to the child whose
   * subtree is heaviest; equal weights go to the lexicographically greater root.
   */
  head(): Root {
    if (this.headCache !== undefined) return this.headCache;
    const w = this.weights();
    // The justified block is held unless a conflicting finalization was forced (≥ 1/3 slashable);
    // then the finalized block, which always is, is the only safe start.
    const j = this.indices.get(this.bestJustified.root);
    const start = j !== undefined ? this.bestJustified : this.finalizedCp;
    let i = j ?? this.indices.get(this.finalizedCp.root) ?? 0;
    // A block at or before the start checkpoint's epoch start slot that is not the checkpoint
    // block itself makes its branch disagree with that checkpoint (Ethereum filters such
    // branches too); only children of the start block can be such blocks, since slots increase.
    const minSlot = this.startSlot(start.epoch);
    for (;;) {
      let best = -1;
      for (const c of this.nodes[i]!.children) {
        const n = this.nodes[c]!;
        if (n.slot <= minSlot) continue;
        if (best < 0 || w[c]! > w[best]! || (w[c] === w[best] && n.root > this.nodes[best]!.root)) best = c;
      }
      if (best < 0) break;
      i = best;
    }
    this.headCache = this.nodes[i]!.root;
    return this.headCache;
  }

  // -------------------------------------------------------------------------------- updates

  /**
   * Imports a block. The parent must be held (UNKNOWN_PARENT), the slot must follow the
   * parent's (INVALID_SLOT), and the block must agree with the finalized checkpoint
   * (FINALIZED_CONFLICT). Re-importing the same block is a no-op.
   */
  onBlock(block: { root: Root; parentRoot: Root; slot: number }): void {
    const root = parseRoot(block.root, 'block.root');
    const parentRoot = parseRoot(block.parentRoot, 'block.parentRoot');
    const slot = parseUint(block.slot, 'block.slot');
    const known = this.indices.get(root);
    if (known !== undefined) {
      const n = this.nodes[known]!;
      if (n.parentRoot === parentRoot && n.slot === slot) return;
      throw new ForkChoiceError('BLOCK_CONFLICT', `block ${root} is already known with parent ${n.parentRoot} at slot ${n.slot}`);
    }
    const p = this.indices.get(parentRoot);
    if (p === undefined) throw new ForkChoiceError('UNKNOWN_PARENT', `unknown parent ${parentRoot} of block ${root}`);
    const parent = this.nodes[p]!;
    if (slot <= parent.slot) throw new ForkChoiceError('INVALID_SLOT', `block slot ${slot} does not follow its parent's slot ${parent.slot}`);
    // The branch's checkpoint at the finalized epoch must be the finalized block: a new block at
    // or before that epoch's start slot would itself be a different checkpoint.
    const fStart = this.startSlot(this.finalizedCp.epoch);
    const a = slot <= fStart ? -1 : this.ancestorAtSlot(p, fStart);
    if (a < 0 || this.nodes[a]!.root !== this.finalizedCp.root) {
      throw new ForkChoiceError('FINALIZED_CONFLICT', `block ${root} does not descend from the finalized checkpoint (epoch ${this.finalizedCp.epoch}, ${this.finalizedCp.root})`);
    }
    this.pushNode(root, parentRoot, slot, p);
    this.invalidate();
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
      const delta = (next.get(v) ?? 0n) - (this.balances.get(v) ?? 0n);
      const i = this.indices.get(msg.root);
      if (delta !== 0n && i !== undefined) this.own[i]! += delta;
    }
    this.balances = next;
    this.totalStake = total;
    for (const link of this.links.values()) link.stake = this.stakeOf(link.voters);
    this.invalidate();
    // Lower source epochs first, so a justification cascade is found in one pass.
    this.processLinks([...this.links.values()].sort((x, y) => x.source.epoch - y.source.epoch || x.target.epoch - y.target.epoch));
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

    const countable = this.validateVote(vote);

    let h = history;
    if (!h) this.votes.set(v, (h = new Map()));
    h.set(vote.target.epoch, vote);

    let lmd = false;
    if (!this.equivocations.has(v)) {
      const cur = this.latest.get(v);
      if (!cur || vote.target.epoch > cur.epoch) {
        const stake = this.balances.get(v) ?? 0n;
        const from = cur && this.indices.get(cur.root);
        if (from !== undefined) this.own[from]! -= stake;
        this.own[this.indices.get(vote.beaconBlockRoot)!]! += stake;
        this.latest.set(v, { root: vote.beaconBlockRoot, epoch: vote.target.epoch });
        this.invalidate();
        lmd = true;
      }
    }

    if (countable) {
      const link = this.addToLink(v, vote);
      link.stake += this.balances.get(v) ?? 0n;
      this.processLinks([link]);
    }
    return { status: 'applied', lmd, ffg: countable };
  }

  /**
   * Drops every block that does not descend from the finalized block (the finalized block's
   * ancestors included), and FFG bookkeeping older than the finalized epoch. Latest messages
   * are kept (one per validator), so a stale message still loses to newer ones.
   */
  prune(): void {
    const f = this.indices.get(this.finalizedCp.root);
    if (f === undefined) return;
    const fStart = this.startSlot(this.finalizedCp.epoch);
    // Parents precede children, so one forward pass decides membership; nodes before f cannot
    // descend from it. A child of f at or before the finalized epoch's start slot disagrees with
    // the finalized checkpoint (onBlock would refuse it now).
    const keep = new Array<boolean>(this.nodes.length).fill(false);
    keep[f] = true;
    for (let i = f + 1; i < this.nodes.length; i++) {
      const n = this.nodes[i]!;
      keep[i] = n.parent >= 0 && keep[n.parent]! && !(n.parent === f && n.slot <= fStart);
    }
    const oldNodes = this.nodes;
    const oldOwn = this.own;
    const remap = new Map<number, number>();
    this.nodes = [];
    this.own = [];
    this.indices = new Map();
    for (let i = 0; i < oldNodes.length; i++) {
      if (!keep[i]) continue;
      const n = oldNodes[i]!;
      const parent = i === f ? -1 : remap.get(n.parent)!;
      // Anchors point backwards, so they are already remapped (or gone: -1).
      remap.set(i, this.pushNode(n.root, n.parentRoot, n.slot, parent, n.epochAnchor === i ? undefined : remap.get(n.epochAnchor) ?? -1));
      this.own[this.own.length - 1] = oldOwn[i]!;
    }

    const fe = this.finalizedCp.epoch;
    for (const [v, h] of this.votes) {
      for (const epoch of h.keys()) if (epoch < fe) h.delete(epoch);
      if (h.size === 0) this.votes.delete(v);
    }
    for (const [key, cp] of this.justifiedSet) {
      if (cp.epoch < fe || !this.indices.has(cp.root)) this.justifiedSet.delete(key);
    }
    this.rebuildLinks();
    this.invalidate();
  }

  // -------------------------------------------------------------------------------- persistence

  /** Everything needed to resume; deterministic (sorted) so equal stores give equal JSON. */
  toJson(): ForkChoiceJson {
    const byIndex = <T>(m: Map<number, T>): [number, T][] => [...m].sort((a, b) => a[0] - b[0]);
    const votes: VoteJson[] = [];
    for (const [v, h] of byIndex(this.votes)) {
      for (const [, vote] of [...h].sort((a, b) => a[0] - b[0])) votes.push({ validator_index: v, ...voteToJson(vote) });
    }
    return {
      version: 1,
      slots_per_epoch: this.slotsPerEpoch,
      blocks: this.nodes.map((n) => ({ root: n.root, parent_root: n.parentRoot, slot: n.slot })),
      justified: copyCheckpoint(this.bestJustified),
      finalized: copyCheckpoint(this.finalizedCp),
      justified_checkpoints: [...this.justifiedSet.values()].sort((a, b) => a.epoch - b.epoch || (a.root < b.root ? -1 : a.root > b.root ? 1 : 0)).map(copyCheckpoint),
      balances: byIndex(this.balances).map(([v, s]) => ({ validator_index: v, stake: s.toString() })),
      latest_messages: byIndex(this.latest).map(([v, m]) => ({ validator_index: v, root: m.root, epoch: m.epoch })),
      votes,
      slashable: byIndex(this.equivocations).map(([v, e]) => ({ kind: e.kind, validator_index: v, previous: voteToJson(e.previous), conflicting: voteToJson(e.conflicting) })),
    };
  }

  /** Strictly parses `toJson` output (unknown keys, bad roots, orphan blocks are MALFORMED_INPUT). */
  static fromJson(input: unknown): ForkChoice {
    const o = requireObject(input, 'forkchoice');
    const keys = ['version', 'slots_per_epoch', 'blocks', 'justified', 'finalized', 'justified_checkpoints', 'balances', 'latest_messages', 'votes', 'slashable'];
    rejectUnknownKeys(o, keys, 'forkchoice');
    for (const k of keys) if (!(k in o)) throw new MalformedError(`forkchoice.${k}`, 'missing');
    if (o.version !== 1) throw new MalformedError('forkchoice.version', 'expected 1');
    const spe = parseUint(o.slots_per_epoch, 'forkchoice.slots_per_epoch');
    if (spe < 1) throw new MalformedError('forkchoice.slots_per_epoch', 'must be at least 1');

    const blocks = requireArray(o.blocks, 'forkchoice.blocks').map((b, i) => {
      const f = `forkchoice.blocks[${i}]`;
      const bo = requireObject(b, f);
      rejectUnknownKeys(bo, ['root', 'parent_root', 'slot'], f);
      if (!('parent_root' in bo)) throw new MalformedError(`${f}.parent_root`, 'missing');
      return { root: parseRoot(bo.root, `${f}.root`), parentRoot: bo.parent_root === null ? null : parseRoot(bo.parent_root, `${f}.parent_root`), slot: parseUint(bo.slot, `${f}.slot`) };
    });
    const anchor = blocks[0];
    if (!anchor) throw new MalformedError('forkchoice.blocks', 'expected at least the anchor block');
    if (anchor.parentRoot === null && anchor.slot !== 0) throw new MalformedError('forkchoice.blocks[0].slot', 'a block without parent is genesis, at slot 0');

    const fc = new ForkChoice(anchor.root, spe);
    fc.nodes[0]!.parentRoot = anchor.parentRoot;
    fc.nodes[0]!.slot = anchor.slot;
    // Anything before the anchor is gone, so only an anchor at an epoch start anchors its epoch.
    fc.nodes[0]!.epochAnchor = anchor.slot % spe === 0 ? 0 : -1;
    for (let i = 1; i < blocks.length; i++) {
      const b = blocks[i]!;
      const f = `forkchoice.blocks[${i}]`;
      if (fc.indices.has(b.root)) throw new MalformedError(`${f}.root`, 'duplicate block');
      const p = b.parentRoot === null ? undefined : fc.indices.get(b.parentRoot);
      if (p === undefined) throw new MalformedError(`${f}.parent_root`, 'parent must appear earlier in the list');
      if (b.slot <= fc.nodes[p]!.slot) throw new MalformedError(`${f}.slot`, 'must exceed the parent slot');
      fc.pushNode(b.root, b.parentRoot, b.slot, p);
    }

    const heldCheckpoint = (value: unknown, field: string): CheckpointHex => {
      const cp = parseCheckpoint(value, field);
      if (!fc.indices.has(cp.root)) throw new MalformedError(`${field}.root`, 'not a block in the store');
      return cp;
    };
    fc.justifiedSet.clear();
    requireArray(o.justified_checkpoints, 'forkchoice.justified_checkpoints').forEach((c, i) => {
      const cp = heldCheckpoint(c, `forkchoice.justified_checkpoints[${i}]`);
      if (fc.justifiedSet.has(cpKey(cp))) throw new MalformedError(`forkchoice.justified_checkpoints[${i}]`, 'duplicate checkpoint');
      fc.justifiedSet.set(cpKey(cp), cp);
    });
    fc.finalizedCp = heldCheckpoint(o.finalized, 'forkchoice.finalized');
    fc.bestJustified = heldCheckpoint(o.justified, 'forkchoice.justified');
    if (!fc.justifiedSet.has(cpKey(fc.finalizedCp))) throw new MalformedError('forkchoice.finalized', 'not among justified_checkpoints');
    if (!fc.justifiedSet.has(cpKey(fc.bestJustified))) throw new MalformedError('forkchoice.justified', 'not among justified_checkpoints');
    if (fc.bestJustified.epoch < fc.finalizedCp.epoch) throw new MalformedError('forkchoice.justified', 'older than the finalized checkpoint');

    requireArray(o.balances, 'forkchoice.balances').forEach((b, i) => {
      const f = `forkchoice.balances[${i}]`;
      const bo = requireObject(b, f);
      rejectUnknownKeys(bo, ['validator_index', 'stake'], f);
      const v = parseUint(bo.validator_index, `${f}.validator_index`);
      if (fc.balances.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
      const stake = parseDecimal(bo.stake, `${f}.stake`, 256);
      fc.balances.set(v, stake);
      fc.totalStake += stake;
    });

    requireArray(o.slashable, 'forkchoice.slashable').forEach((e, i) => {
      const f = `forkchoice.slashable[${i}]`;
      const eo = requireObject(e, f);
      rejectUnknownKeys(eo, ['kind', 'validator_index', 'previous', 'conflicting'], f);
      if (eo.kind !== 'double_vote' && eo.kind !== 'surround_vote') throw new MalformedError(`${f}.kind`, 'expected double_vote or surround_vote');
      const v = parseUint(eo.validator_index, `${f}.validator_index`);
      if (fc.equivocations.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
      const strip = ({ validatorIndex: _, ...rest }: VoteData & { validatorIndex: number }): VoteData => rest;
      fc.equivocations.set(v, { kind: eo.kind, validatorIndex: v, previous: strip(voteFromJson(eo.previous, `${f}.previous`, false)), conflicting: strip(voteFromJson(eo.conflicting, `${f}.conflicting`, false)) });
    });

    requireArray(o.latest_messages, 'forkchoice.latest_messages').forEach((m, i) => {
      const f = `forkchoice.latest_messages[${i}]`;
      const mo = requireObject(m, f);
      rejectUnknownKeys(mo, ['validator_index', 'root', 'epoch'], f);
      const v = parseUint(mo.validator_index, `${f}.validator_index`);
      if (fc.latest.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
      const msg = { root: parseRoot(mo.root, `${f}.root`), epoch: parseUint(mo.epoch, `${f}.epoch`) };
      fc.latest.set(v, msg);
      // Messages for pruned blocks are kept but weigh nothing, exactly as before the restart.
      const idx = fc.indices.get(msg.root);
      if (idx !== undefined && !fc.equivocations.has(v)) fc.own[idx]! += fc.balances.get(v) ?? 0n;
    });

    requireArray(o.votes, 'forkchoice.votes').forEach((x, i) => {
      const f = `forkchoice.votes[${i}]`;
      const { validatorIndex: v, ...vote } = voteFromJson(x, f, true);
      let h = fc.votes.get(v);
      if (!h) fc.votes.set(v, (h = new Map()));
      if (h.has(vote.target.epoch)) throw new MalformedError(f, 'two votes of one validator for one target epoch');
      h.set(vote.target.epoch, vote);
    });
    fc.rebuildLinks();
    // No re-evaluation: the saved store was a fixed point, so it resumes exactly where it stopped.
    return fc;
  }

  // -------------------------------------------------------------------------------- internals

  private startSlot(epoch: number): number {
    return epoch * this.slotsPerEpoch;
  }

  private pushNode(root: Root, parentRoot: Root | null, slot: number, parent: number, anchor?: number): number {
    const i = this.nodes.length;
    const start = this.startSlot(Math.floor(slot / this.slotsPerEpoch));
    let epochAnchor = anchor ?? -1;
    if (anchor === undefined && parent >= 0) {
      const p = this.nodes[parent]!;
      // A parent in an earlier epoch is the latest block before this epoch's start; a parent in
      // the same epoch already knows the answer.
      epochAnchor = p.slot <= start ? parent : p.epochAnchor;
    }
    if (slot === start) epochAnchor = i;
    this.nodes.push({ root, parentRoot, slot, parent, children: [], epochAnchor });
    this.own.push(0n);
    this.indices.set(root, i);
    if (parent >= 0) this.nodes[parent]!.children.push(i);
    return i;
  }

  private mustIndex(root: Root, field: string): number {
    const r = parseRoot(root, field);
    const i = this.indices.get(r);
    if (i === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown block ${r}`);
    return i;
  }

  /**
   * Index of the latest ancestor-or-self of node `i` at or before `slot`; -1 if pruned away.
   * O(epochs + slotsPerEpoch): whole epochs are skipped through `epochAnchor`, since every block
   * between a block and its epoch anchor lies after the epoch's start slot.
   */
  private ancestorAtSlot(i: number, slot: number): number {
    let j = i;
    while (j >= 0) {
      const n = this.nodes[j]!;
      if (n.slot <= slot) break;
      const a = n.epochAnchor;
      const epochStart = n.slot - (n.slot % this.slotsPerEpoch);
      j = epochStart <= slot || a === j || a < 0 ? n.parent : a;
    }
    return j;
  }

  /** The branch through `root` has the finalized block as its checkpoint at the finalized epoch. */
  private agreesWithFinalized(root: Root): boolean {
    const i = this.indices.get(root);
    if (i === undefined) return false;
    const a = this.ancestorAtSlot(i, this.startSlot(this.finalizedCp.epoch));
    return a >= 0 && this.nodes[a]!.root === this.finalizedCp.root;
  }

  private invalidate(): void {
    this.subtree = undefined;
    this.headCache = undefined;
  }

  private weights(): bigint[] {
    if (this.subtree) return this.subtree;
    const w = this.own.slice();
    // Children come after their parent, so a reverse pass sees every subtree complete.
    for (let i = w.length - 1; i > 0; i--) {
      const p = this.nodes[i]!.parent;
      if (p >= 0) w[p]! += w[i]!;
    }
    this.subtree = w;
    return w;
  }

  private stakeOf(voters: Iterable<number>): bigint {
    let s = 0n;
    for (const v of voters) s += this.balances.get(v) ?? 0n;
    return s;
  }

  /** Validators with a counted vote from the source `sk`, whatever its target. */
  private sourceVoters(sk: string): Set<number> {
    const voters = new Set<number>();
    for (const l of this.linksBySource.get(sk) ?? []) for (const v of l.voters) voters.add(v);
    return voters;
  }

  private beyondOneThird(stake: bigint): boolean {
    return this.totalStake > 0n && 3n * stake > this.totalStake;
  }

  private supermajority(stake: bigint): boolean {
    // Exact: 3 × votes ≥ 2 × total. An empty validator set justifies nothing.
    return this.totalStake > 0n && 3n * stake >= 2n * this.totalStake;
  }

  /**
   * Checks an attestation against the tree; returns whether its FFG link may count toward
   * justification (see the file comment), throws when it is unusable.
   */
  private validateVote(vote: VoteData): boolean {
    const { source, target } = vote;
    if (target.epoch !== Math.floor(vote.slot / this.slotsPerEpoch)) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `target epoch ${target.epoch} is not the epoch of slot ${vote.slot}`);
    }
    // Only genesis votes have source = target ({0, genesis} → {0, genesis}); they carry no link.
    if (source.epoch > target.epoch || (source.epoch === target.epoch && (target.epoch !== 0 || source.root !== target.root))) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `source (epoch ${source.epoch}) must precede target (epoch ${target.epoch})`);
    }
    const head = this.indices.get(vote.beaconBlockRoot);
    if (head === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown beacon block ${vote.beaconBlockRoot}`);
    if (this.nodes[head]!.slot > vote.slot) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `beacon block slot ${this.nodes[head]!.slot} is after the attestation slot ${vote.slot}`);
    }
    const t = this.indices.get(target.root);
    if (t === undefined) throw new ForkChoiceError('UNKNOWN_BLOCK', `unknown target block ${target.root}`);
    const tc = this.ancestorAtSlot(head, this.startSlot(target.epoch));
    if (tc !== t) throw new ForkChoiceError('INVALID_ATTESTATION', `target ${target.root} is not the epoch ${target.epoch} checkpoint of beacon block ${vote.beaconBlockRoot}`);

    const fe = this.finalizedCp.epoch;
    // A source before the finalized epoch may lie in pruned history, so it cannot be checked;
    // such a vote counts for LMD and slashing but never for justification.
    if (source.epoch < fe || target.epoch <= fe) return false;
    const sc = this.ancestorAtSlot(t, this.startSlot(source.epoch));
    if (sc < 0 || this.nodes[sc]!.root !== source.root) {
      throw new ForkChoiceError('INVALID_ATTESTATION', `source ${source.root} is not the epoch ${source.epoch} checkpoint of target ${target.root}`);
    }
    return this.agreesWithFinalized(target.root);
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

  /** Recreates the link tables from the recorded votes (after pruning or restoring). */
  private rebuildLinks(): void {
    this.links.clear();
    this.linksByTarget.clear();
    this.linksBySource.clear();
    const fe = this.finalizedCp.epoch;
    for (const [v, h] of this.votes) {
      for (const vote of h.values()) {
        // Same condition as validateVote's result; an equivocation's conflicting vote is never recorded.
        if (vote.source.epoch < fe || vote.target.epoch <= fe || !this.agreesWithFinalized(vote.target.root)) continue;
        this.addToLink(v, vote);
      }
    }
    for (const link of this.links.values()) link.stake = this.stakeOf(link.voters);
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
        if (!this.beyondOneThird(this.stakeOf(this.sourceVoters(sk))) || !this.agreesWithFinalized(link.target.root)) continue;
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
    if (cp.epoch > this.bestJustified.epoch) {
      this.bestJustified = copyCheckpoint(cp);
      this.headCache = undefined;
    }
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
    this.headCache = undefined;
  }

  private recordEquivocation(kind: SlashingEvidence['kind'], v: number, previous: VoteData, conflicting: VoteData): SlashingEvidence {
    const evidence: SlashingEvidence = { kind, validatorIndex: v, previous: copyVote(previous), conflicting: copyVote(conflicting) };
    if (!this.equivocations.has(v)) {
      this.equivocations.set(v, copyEvidence(evidence));
      // As Ethereum's equivocating_indices: an equivocator's LMD vote no longer weighs anything.
      const msg = this.latest.get(v);
      const i = msg && this.indices.get(msg.root);
      if (i !== undefined) {
        this.own[i]! -= this.balances.get(v) ?? 0n;
        this.invalidate();
      }
    }
    return evidence;
  }
}

function copyEvidence(e: SlashingEvidence): SlashingEvidence {
  return { kind: e.kind, validatorIndex: e.validatorIndex, previous: copyVote(e.previous), conflicting: copyVote(e.conflicting) };
}
