/**
 * One validator key's slashing-protection history in memory, and its horizon.
 *
 * A key keeps its votes for SLASHING_PROTECTION_HISTORY_EPOCHS (N) behind its newest target n,
 * and its blocks for SLASHING_PROTECTION_HISTORY_SLOTS (N') behind its newest slot; older records
 * are deleted in the same batch that raises the watermarks over them (votes once
 * SLASHING_PROTECTION_PRUNE_EPOCHS are due), so memory, start-up and the surround scan of each
 * vote are bounded per key however long the chain runs.
 *
 * Why nothing slashable becomes signable: with H = n - N, the votes with target < H are dropped
 * while T becomes T' = max(T, H) and S becomes S' = the largest of S and the source of every vote
 * held with target <= T'. Take a vote (s, t) the pruned state accepts, so t > T' and s >= S'. For
 * any dropped record r: r.target < H <= T' < t, so it is not a double vote; r.source <= S' <= s,
 * so (s, t) cannot surround r (that needs s < r.source) and r cannot surround (s, t) (that needs
 * r.target > t). T' >= T and S' >= S, so the old watermarks hold too, and (S', T') keeps the
 * invariant "every vote with target <= T has source <= S". Blocks likewise: slots below
 * H = newest slot - N' are dropped and L rises to max(L, H), so an accepted block's slot is one
 * no dropped record holds. What pruning newly refuses is only votes (blocks) at least N epochs
 * (N' slots) behind the key's newest one, which an honest client never signs (its next vote has a
 * later target and a source no lower than any before), and exact repeats of dropped messages.
 */
import { SLASHING_PROTECTION_HISTORY_EPOCHS, SLASHING_PROTECTION_HISTORY_SLOTS } from '../../../core/constants.js';
import type { AttRecord, BlockRecord, ParsedKey } from './interchange.js';

/** One key's watermarks and held records. */
export interface KeyState {
  id: string;
  pubkey: string;
  address: string;
  slotMark: number | null;
  sourceMark: number | null;
  targetMark: number | null;
  /** slot → records (more than one only after importing conflicting history). */
  blocks: Map<number, BlockRecord[]>;
  /** target epoch → records. */
  atts: Map<number, AttRecord[]>;
  /** Newest slot / target ever recorded (-1: none): the horizons count back from these. */
  newestSlot: number;
  newestTarget: number;
  /** Oldest slot / target held (Infinity: none), so a prune scans only when something is due. */
  oldestSlot: number;
  oldestTarget: number;
  /**
   * Largest source ever recorded (-1: none), never lowered by a prune: at least every held
   * vote's source, which is all mayConflict needs.
   */
  maxSource: number;
}

/** What raising a key's vote watermarks to the horizon changes. */
export interface AttPrune {
  target: number;
  source: number;
  dropped: AttRecord[];
  oldest: number;
}

/** What raising a key's slot watermark to the horizon changes. */
export interface BlockPrune {
  slot: number;
  dropped: BlockRecord[];
  oldest: number;
}

/** A key that has signed nothing yet. */
export function emptyKeyState(key: ParsedKey): KeyState {
  return {
    id: key.id,
    pubkey: key.pubkey,
    address: key.address,
    slotMark: null,
    sourceMark: null,
    targetMark: null,
    blocks: new Map(),
    atts: new Map(),
    newestSlot: -1,
    newestTarget: -1,
    oldestSlot: Infinity,
    oldestTarget: Infinity,
    maxSource: -1,
  };
}

/** Holds a block record. */
export function addBlock(st: KeyState, r: BlockRecord): void {
  const list = st.blocks.get(r.slot);
  if (list) list.push(r);
  else st.blocks.set(r.slot, [r]);
  st.newestSlot = Math.max(st.newestSlot, r.slot);
  st.oldestSlot = Math.min(st.oldestSlot, r.slot);
}

/** Holds a vote record. */
export function addAtt(st: KeyState, r: AttRecord): void {
  const list = st.atts.get(r.target);
  if (list) list.push(r);
  else st.atts.set(r.target, [r]);
  st.newestTarget = Math.max(st.newestTarget, r.target);
  st.oldestTarget = Math.min(st.oldestTarget, r.target);
  st.maxSource = Math.max(st.maxSource, r.source);
}

/**
 * Whether a vote (s, t) could surround, or be surrounded by, a held vote: surrounding one needs
 * a held source above s, being surrounded a held target above t. An honest next vote (source no
 * lower than any before, target after all) has neither, so it skips the scan of held votes.
 */
export function mayConflict(st: KeyState, s: number, t: number): boolean {
  return s < st.maxSource || t <= st.newestTarget;
}

/**
 * The slot watermark's rise to the horizon behind the newest slot (counting `adding`, a record
 * about to be written) and the blocks it drops; null when there is nothing to do, so the scan
 * runs only when a record is due to go.
 */
export function planBlockPrune(st: KeyState, adding: BlockRecord | null): BlockPrune | null {
  if (st.slotMark === null) return null;
  const horizon = Math.max(st.newestSlot, adding?.slot ?? -1) - SLASHING_PROTECTION_HISTORY_SLOTS;
  if (horizon <= st.slotMark && horizon <= st.oldestSlot) return null;
  const dropped: BlockRecord[] = [];
  let oldest = adding?.slot ?? Infinity;
  for (const [slot, list] of st.blocks) {
    if (slot < horizon) dropped.push(...list);
    else oldest = Math.min(oldest, slot);
  }
  return { slot: Math.max(st.slotMark, horizon), dropped, oldest };
}

/** Applies a block prune to memory (after its batch is durable). */
export function applyBlockPrune(st: KeyState, p: BlockPrune): void {
  for (const r of p.dropped) st.blocks.delete(r.slot);
  st.slotMark = p.slot;
  st.oldestSlot = p.oldest;
}

/**
 * As planBlockPrune for votes: the target watermark rises to the horizon, the source watermark
 * over every vote at or below it. Only once `step` epochs are due (1 prunes whatever is due), so
 * a vote usually writes its record alone. The vote being added never falls under the new
 * watermark, so it needs no place in the source: a prune falls due only when the horizon moves,
 * i.e. when that vote is the newest (target n > n - N). A vote signed out of order under the
 * horizon is held until the next prune.
 */
export function planAttPrune(st: KeyState, adding: AttRecord | null, step: number): AttPrune | null {
  if (st.targetMark === null) return null;
  const horizon = Math.max(st.newestTarget, adding?.target ?? -1) - SLASHING_PROTECTION_HISTORY_EPOCHS;
  if (horizon < Math.min(st.targetMark, st.oldestTarget) + step) return null;
  const target = Math.max(st.targetMark, horizon);
  let source = st.sourceMark ?? 0;
  const dropped: AttRecord[] = [];
  let oldest = adding?.target ?? Infinity;
  for (const [t, list] of st.atts) {
    if (t <= target) for (const r of list) source = Math.max(source, r.source);
    if (t < horizon) dropped.push(...list);
    else oldest = Math.min(oldest, t);
  }
  return { target, source, dropped, oldest };
}

/** Applies a vote prune to memory (after its batch is durable). */
export function applyAttPrune(st: KeyState, p: AttPrune): void {
  for (const r of p.dropped) st.atts.delete(r.target);
  st.targetMark = p.target;
  st.sourceMark = p.source;
  st.oldestTarget = p.oldest;
}

/** A copy of a record map an import may change before its batch is durable. */
export function cloneRecords<T>(m: Map<number, T[]>): Map<number, T[]> {
  return new Map([...m].map(([k, v]) => [k, [...v]]));
}
