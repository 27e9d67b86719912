/**
 * The validator registry as execution sees it: genesis validators plus deposit and exit
 * transactions to the system addresses. Execution keeps its own copy so it never has to trust
 * the beacon for a proposer's key.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { REGISTRY_ADDRESS, registryCountSlot, registryCountWord, registryEntrySlot, registryEntryWord } from '../../core/consensus/registry.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { StateView } from './state/types.js';

/** A validator's RANDAO commitment replaced by a re-commitment, with the one it replaced (for undo). */
export interface RecommitChange {
  index: number;
  previous: string;
  commitment: string;
}

/** A validator a block slashed: what applying cuts, and what undoing restores. */
export interface SlashedChange {
  index: number;
  /** Wei cut from the registry stake (base-10). */
  penalty: string;
  /** Whether it was active before (an exited validator can still be slashed). */
  was_active: boolean;
}

/** Registry changes made by one block, enough to undo them. */
export interface RegistryChanges {
  added: RegistryEntry[];
  exited: number[];
  /** RANDAO re-commitments, in block order (absent in blocks stored before they existed: none). */
  recommitted?: RecommitChange[];
  /** Validators slashed by the block's evidence (absent in blocks stored before slashing). */
  slashed?: SlashedChange[];
}

export class Registry {
  private readonly entries: RegistryEntry[] = [];
  private readonly byAddress = new Map<string, RegistryEntry>();
  private readonly keys = new Map<number, Uint8Array>();

  /** Replaces the contents (start-up). */
  load(entries: RegistryEntry[]): void {
    this.entries.length = 0;
    this.byAddress.clear();
    this.keys.clear();
    // Entries stored before slashing existed have no `slashed` field: they were never slashed.
    for (const e of [...entries].sort((a, b) => a.index - b.index)) this.put({ ...e, slashed: e.slashed ?? false });
  }

  private put(e: RegistryEntry): void {
    this.entries[e.index] = e;
    this.byAddress.set(e.address, e);
  }

  get size(): number {
    return this.entries.length;
  }

  /** All validators in index order. */
  all(): readonly RegistryEntry[] {
    return this.entries;
  }

  /** The validator with this address, if registered. */
  get(address: string): RegistryEntry | undefined {
    return this.byAddress.get(address);
  }

  /** Decoded public key of a validator (cached). */
  publicKey(e: RegistryEntry): Uint8Array {
    let k = this.keys.get(e.index);
    if (!k) this.keys.set(e.index, (k = parseHex(e.public_key, 'public_key')));
    return k;
  }

  /**
   * The entries `changes` leave, in the order a later change to the same validator wins, without
   * applying them: what the block's state commits (commitRegistry) before it is imported.
   */
  after(changes: RegistryChanges): RegistryEntry[] {
    const next = new Map<number, RegistryEntry>();
    const at = (i: number): RegistryEntry => next.get(i) ?? this.entries[i]!;
    for (const e of changes.added) next.set(e.index, e);
    for (const i of changes.exited) next.set(i, { ...at(i), active: false });
    for (const r of changes.recommitted ?? []) next.set(r.index, { ...at(r.index), randao_commitment: r.commitment });
    for (const c of changes.slashed ?? []) next.set(c.index, { ...at(c.index), stake: (BigInt(at(c.index).stake) - BigInt(c.penalty)).toString(), active: false, slashed: true });
    return [...next.values()];
  }

  /** Applies (sign 1) or undoes (sign -1) a block's registry changes; returns the entries to persist. */
  apply(changes: RegistryChanges, sign: 1 | -1): RegistryEntry[] {
    const touched: RegistryEntry[] = [];
    if (sign === 1) {
      for (const e of changes.added) {
        this.put(e);
        touched.push(e);
      }
      for (const i of changes.exited) touched.push(this.setActive(i, false));
      for (const r of changes.recommitted ?? []) touched.push(this.setCommitment(r.index, r.commitment));
      for (const c of changes.slashed ?? []) touched.push(this.slash(c, 1));
    } else {
      for (const c of [...(changes.slashed ?? [])].reverse()) touched.push(this.slash(c, -1));
      for (const r of [...(changes.recommitted ?? [])].reverse()) touched.push(this.setCommitment(r.index, r.previous));
      for (const i of changes.exited) touched.push(this.setActive(i, true));
      for (const e of [...changes.added].reverse()) {
        this.entries.length = e.index;
        this.byAddress.delete(e.address);
        this.keys.delete(e.index);
      }
    }
    return touched;
  }

  private setCommitment(index: number, commitment: string): RegistryEntry {
    const e = { ...this.entries[index]!, randao_commitment: commitment };
    this.put(e);
    return e;
  }

  // Applying cuts the stake and deactivates for good; undoing restores both exactly.
  private slash(c: SlashedChange, sign: 1 | -1): RegistryEntry {
    const prev = this.entries[c.index]!;
    const stake = BigInt(prev.stake) - BigInt(sign) * BigInt(c.penalty);
    const e = sign === 1 ? { ...prev, stake: stake.toString(), active: false, slashed: true } : { ...prev, stake: stake.toString(), active: c.was_active, slashed: false };
    this.put(e);
    return e;
  }

  private setActive(index: number, active: boolean): RegistryEntry {
    const e = { ...this.entries[index]!, active };
    this.put(e);
    return e;
  }
}

/**
 * Writes the registry words a block's changes leave into its state (docs/protocol.md "The
 * registry in the state"): one word per touched entry, and the count when validators joined.
 * Returns the entries by word, for the preimage store (the words are hashes of them).
 */
export function commitRegistry(state: StateView, registry: Registry, changes: RegistryChanges): Map<string, RegistryEntry> {
  const words = new Map<string, RegistryEntry>();
  for (const e of registry.after(changes)) {
    const word = registryEntryWord(e);
    state.setStorage(REGISTRY_ADDRESS, registryEntrySlot(e.index), word);
    words.set(toHex(word), e);
  }
  if (changes.added.length > 0) state.setStorage(REGISTRY_ADDRESS, registryCountSlot(), registryCountWord(registry.size + changes.added.length));
  return words;
}
