/**
 * The fork-choice store's persisted form (the beacon's `m:forkchoice` record): a plain snapshot
 * of the store, its JSON (snake_case, like every wire format of the project) and the strict
 * parser that refuses anything `forkChoiceToJson` would not write.
 */
import { parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { MalformedError } from '../../../core/errors.js';
import { type CheckpointHex, copyCheckpoint, cpKey, type ForkChoiceBlock, parseCheckpoint, parseRoot, type Root, type SlashingEvidence, type VoteData } from './types.js';

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

/** A validator's latest message: the root it votes for and its target epoch. */
export interface LatestMessage {
  root: Root;
  epoch: number;
}

/**
 * Everything the store needs to resume, in plain data. Lists are in the order the store holds
 * them when written, and in the JSON's order when parsed (the store re-inserts in that order).
 */
export interface ForkChoiceSnapshot {
  slotsPerEpoch: number;
  /** Parent-first; the first entry is the anchor. */
  blocks: ForkChoiceBlock[];
  justified: CheckpointHex;
  finalized: CheckpointHex;
  justifiedCheckpoints: CheckpointHex[];
  balances: [number, bigint][];
  latestMessages: [number, LatestMessage][];
  /** Every recorded vote with its validator index. */
  votes: [number, VoteData][];
  slashable: SlashingEvidence[];
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

/** The snapshot's JSON; deterministic (sorted) so equal stores give equal JSON. */
export function forkChoiceToJson(s: ForkChoiceSnapshot): ForkChoiceJson {
  const byIndex = <T>(entries: [number, T][]): [number, T][] => [...entries].sort((a, b) => a[0] - b[0]);
  // Stable sort: one validator's votes (one per target epoch) end up by target epoch.
  const votes = [...s.votes].sort((a, b) => a[0] - b[0] || a[1].target.epoch - b[1].target.epoch).map(([v, vote]): VoteJson => ({ validator_index: v, ...voteToJson(vote) }));
  return {
    version: 1,
    slots_per_epoch: s.slotsPerEpoch,
    blocks: s.blocks.map((n) => ({ root: n.root, parent_root: n.parentRoot, slot: n.slot })),
    justified: copyCheckpoint(s.justified),
    finalized: copyCheckpoint(s.finalized),
    justified_checkpoints: [...s.justifiedCheckpoints].sort((a, b) => a.epoch - b.epoch || (a.root < b.root ? -1 : a.root > b.root ? 1 : 0)).map(copyCheckpoint),
    balances: byIndex(s.balances).map(([v, stake]) => ({ validator_index: v, stake: stake.toString() })),
    latest_messages: byIndex(s.latestMessages).map(([v, m]) => ({ validator_index: v, root: m.root, epoch: m.epoch })),
    votes,
    slashable: [...s.slashable].sort((a, b) => a.validatorIndex - b.validatorIndex).map((e) => ({ kind: e.kind, validator_index: e.validatorIndex, previous: voteToJson(e.previous), conflicting: voteToJson(e.conflicting) })),
  };
}

/** Strictly parses `forkChoiceToJson` output (unknown keys, bad roots, orphan blocks are MALFORMED_INPUT). */
export function parseForkChoiceJson(input: unknown): ForkChoiceSnapshot {
  const o = requireObject(input, 'forkchoice');
  const keys = ['version', 'slots_per_epoch', 'blocks', 'justified', 'finalized', 'justified_checkpoints', 'balances', 'latest_messages', 'votes', 'slashable'];
  rejectUnknownKeys(o, keys, 'forkchoice');
  for (const k of keys) if (!(k in o)) throw new MalformedError(`forkchoice.${k}`, 'missing');
  if (o.version !== 1) throw new MalformedError('forkchoice.version', 'expected 1');
  const spe = parseUint(o.slots_per_epoch, 'forkchoice.slots_per_epoch');
  if (spe < 1) throw new MalformedError('forkchoice.slots_per_epoch', 'must be at least 1');

  const blocks = requireArray(o.blocks, 'forkchoice.blocks').map((b, i): ForkChoiceBlock => {
    const f = `forkchoice.blocks[${i}]`;
    const bo = requireObject(b, f);
    rejectUnknownKeys(bo, ['root', 'parent_root', 'slot'], f);
    if (!('parent_root' in bo)) throw new MalformedError(`${f}.parent_root`, 'missing');
    return { root: parseRoot(bo.root, `${f}.root`), parentRoot: bo.parent_root === null ? null : parseRoot(bo.parent_root, `${f}.parent_root`), slot: parseUint(bo.slot, `${f}.slot`) };
  });
  const anchor = blocks[0];
  if (!anchor) throw new MalformedError('forkchoice.blocks', 'expected at least the anchor block');
  if (anchor.parentRoot === null && anchor.slot !== 0) throw new MalformedError('forkchoice.blocks[0].slot', 'a block without parent is genesis, at slot 0');
  // Slot of each block seen so far: parents must come first, as the tree needs them.
  const slots = new Map<Root, number>([[anchor.root, anchor.slot]]);
  for (let i = 1; i < blocks.length; i++) {
    const b = blocks[i]!;
    const f = `forkchoice.blocks[${i}]`;
    if (slots.has(b.root)) throw new MalformedError(`${f}.root`, 'duplicate block');
    const parentSlot = b.parentRoot === null ? undefined : slots.get(b.parentRoot);
    if (parentSlot === undefined) throw new MalformedError(`${f}.parent_root`, 'parent must appear earlier in the list');
    if (b.slot <= parentSlot) throw new MalformedError(`${f}.slot`, 'must exceed the parent slot');
    slots.set(b.root, b.slot);
  }

  const heldCheckpoint = (value: unknown, field: string): CheckpointHex => {
    const cp = parseCheckpoint(value, field);
    if (!slots.has(cp.root)) throw new MalformedError(`${field}.root`, 'not a block in the store');
    return cp;
  };
  const justifiedKeys = new Set<string>();
  const justifiedCheckpoints = requireArray(o.justified_checkpoints, 'forkchoice.justified_checkpoints').map((c, i) => {
    const cp = heldCheckpoint(c, `forkchoice.justified_checkpoints[${i}]`);
    if (justifiedKeys.has(cpKey(cp))) throw new MalformedError(`forkchoice.justified_checkpoints[${i}]`, 'duplicate checkpoint');
    justifiedKeys.add(cpKey(cp));
    return cp;
  });
  const finalized = heldCheckpoint(o.finalized, 'forkchoice.finalized');
  const justified = heldCheckpoint(o.justified, 'forkchoice.justified');
  if (!justifiedKeys.has(cpKey(finalized))) throw new MalformedError('forkchoice.finalized', 'not among justified_checkpoints');
  if (!justifiedKeys.has(cpKey(justified))) throw new MalformedError('forkchoice.justified', 'not among justified_checkpoints');
  if (justified.epoch < finalized.epoch) throw new MalformedError('forkchoice.justified', 'older than the finalized checkpoint');

  const balanceSeen = new Set<number>();
  const balances = requireArray(o.balances, 'forkchoice.balances').map((b, i): [number, bigint] => {
    const f = `forkchoice.balances[${i}]`;
    const bo = requireObject(b, f);
    rejectUnknownKeys(bo, ['validator_index', 'stake'], f);
    const v = parseUint(bo.validator_index, `${f}.validator_index`);
    if (balanceSeen.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
    balanceSeen.add(v);
    return [v, parseDecimal(bo.stake, `${f}.stake`, 256)];
  });

  const slashableSeen = new Set<number>();
  const slashable = requireArray(o.slashable, 'forkchoice.slashable').map((e, i): SlashingEvidence => {
    const f = `forkchoice.slashable[${i}]`;
    const eo = requireObject(e, f);
    rejectUnknownKeys(eo, ['kind', 'validator_index', 'previous', 'conflicting'], f);
    if (eo.kind !== 'double_vote' && eo.kind !== 'surround_vote') throw new MalformedError(`${f}.kind`, 'expected double_vote or surround_vote');
    const v = parseUint(eo.validator_index, `${f}.validator_index`);
    if (slashableSeen.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
    slashableSeen.add(v);
    const strip = ({ validatorIndex: _, ...rest }: VoteData & { validatorIndex: number }): VoteData => rest;
    return { kind: eo.kind, validatorIndex: v, previous: strip(voteFromJson(eo.previous, `${f}.previous`, false)), conflicting: strip(voteFromJson(eo.conflicting, `${f}.conflicting`, false)) };
  });

  const latestSeen = new Set<number>();
  const latestMessages = requireArray(o.latest_messages, 'forkchoice.latest_messages').map((m, i): [number, LatestMessage] => {
    const f = `forkchoice.latest_messages[${i}]`;
    const mo = requireObject(m, f);
    rejectUnknownKeys(mo, ['validator_index', 'root', 'epoch'], f);
    const v = parseUint(mo.validator_index, `${f}.validator_index`);
    if (latestSeen.has(v)) throw new MalformedError(`${f}.validator_index`, 'duplicate validator');
    latestSeen.add(v);
    return [v, { root: parseRoot(mo.root, `${f}.root`), epoch: parseUint(mo.epoch, `${f}.epoch`) }];
  });

  const voteEpochs = new Map<number, Set<number>>();
  const votes = requireArray(o.votes, 'forkchoice.votes').map((x, i): [number, VoteData] => {
    const f = `forkchoice.votes[${i}]`;
    const { validatorIndex: v, ...vote } = voteFromJson(x, f, true);
    let epochs = voteEpochs.get(v);
    if (!epochs) voteEpochs.set(v, (epochs = new Set()));
    if (epochs.has(vote.target.epoch)) throw new MalformedError(f, 'two votes of one validator for one target epoch');
    epochs.add(vote.target.epoch);
    return [v, vote];
  });

  return { slotsPerEpoch: spe, blocks, justified, finalized, justifiedCheckpoints, balances, latestMessages, votes, slashable };
}
