/**
 * Account state. The head state lives in memory (loaded once at start) and on disk; a block is
 * executed against an Overlay whose signed deltas become the block's diff, so reverting a block
 * subtracts exactly what it added even when reward credits happened in between.
 */
import { HASH_BYTES } from '../../core/constants.js';
import { bigintToBytesBE, parseHex, toHex, u64LE } from '../../core/codec/bytes.js';
import { sha3 } from '../../core/crypto/hash.js';
import { merkleProof, merkleRoot, verifyMerkleProof } from '../../core/types/merkle.js';

/** An account as the state root commits to it. Code and storage arrive with the contract VM. */
export interface Account {
  balance: bigint;
  nonce: bigint;
}

/** Code hash and storage root of an account without code (SHA3-256 of nothing / empty tree). */
export const EMPTY_CODE_HASH = sha3(new Uint8Array(0));
export const EMPTY_STORAGE_ROOT = merkleRoot([]);

const ZERO: Account = Object.freeze({ balance: 0n, nonce: 0n });

/** Read access to some state. */
export interface StateReader {
  account(address: string): Account;
}

/** A change to one account: signed balance delta, nonce delta. */
export interface AccountDelta {
  balance: bigint;
  nonce: bigint;
}

/** Per-account deltas of a block (or of a reward credit). */
export type StateDiff = Map<string, AccountDelta>;

/** JSON form of a diff: address → [balance delta (base-10, signed), nonce delta]. */
export type StateDiffJson = Record<string, [string, number]>;

/** Serialises a diff. */
export function diffToJson(diff: StateDiff): StateDiffJson {
  const out: StateDiffJson = {};
  for (const [a, d] of diff) out[a] = [d.balance.toString(), Number(d.nonce)];
  return out;
}

/** Parses a diff. */
export function diffFromJson(json: StateDiffJson): StateDiff {
  return new Map(Object.entries(json).map(([a, [b, n]]) => [a, { balance: BigInt(b), nonce: BigInt(n) }]));
}

/** Adds `sign` × `diff` to an account value. */
function applyDelta(acc: Account, d: AccountDelta, sign: 1n | -1n): Account {
  return { balance: acc.balance + sign * d.balance, nonce: acc.nonce + sign * d.nonce };
}

/** Writable view over a reader: accumulates deltas without touching the base. */
export class Overlay implements StateReader {
  readonly diff: StateDiff = new Map();

  constructor(private readonly base: StateReader) {}

  account(address: string): Account {
    const d = this.diff.get(address);
    const acc = this.base.account(address);
    return d ? applyDelta(acc, d, 1n) : acc;
  }

  private delta(address: string): AccountDelta {
    let d = this.diff.get(address);
    if (!d) this.diff.set(address, (d = { balance: 0n, nonce: 0n }));
    return d;
  }

  /** Adds `amount` (may be negative) to a balance. */
  addBalance(address: string, amount: bigint): void {
    this.delta(address).balance += amount;
  }

  /** Increments a nonce. */
  incrementNonce(address: string): void {
    this.delta(address).nonce += 1n;
  }

  /** Applies another diff on top (used to walk to a side branch's parent). */
  applyDiff(diff: StateDiff, sign: 1n | -1n): void {
    for (const [a, d] of diff) {
      const mine = this.delta(a);
      mine.balance += sign * d.balance;
      mine.nonce += sign * d.nonce;
    }
  }
}

/** Leaf of the state tree: H(address ‖ balance32 ‖ nonce8 ‖ code_hash ‖ storage_root). */
export function accountLeaf(address: string, acc: Account): Uint8Array {
  return sha3(parseHex(address, 'address', 20), bigintToBytesBE(acc.balance, 32), u64LE(acc.nonce), EMPTY_CODE_HASH, EMPTY_STORAGE_ROOT);
}

/** The in-memory head state: every non-empty account. */
export class WorldState implements StateReader {
  private readonly accounts = new Map<string, Account>();

  /** Replaces the whole state (start-up). */
  load(entries: Iterable<[string, Account]>): void {
    this.accounts.clear();
    for (const [a, acc] of entries) if (!isEmpty(acc)) this.accounts.set(a, acc);
  }

  account(address: string): Account {
    return this.accounts.get(address) ?? ZERO;
  }

  /** Number of non-empty accounts. */
  get size(): number {
    return this.accounts.size;
  }

  /** Accounts a diff would produce, without applying it: what to persist. */
  preview(diff: StateDiff, sign: 1n | -1n = 1n): Map<string, Account> {
    const out = new Map<string, Account>();
    for (const [a, d] of diff) out.set(a, applyDelta(this.account(a), d, sign));
    return out;
  }

  /** Applies persisted results of `preview` to memory (after the batch committed). */
  commit(updated: Map<string, Account>): void {
    for (const [a, acc] of updated) {
      if (isEmpty(acc)) this.accounts.delete(a);
      else this.accounts.set(a, acc);
    }
  }

  /** Sorted (address, account) pairs of the state with `overrides` applied. */
  private sortedWith(overrides?: Map<string, Account>): Array<[string, Account]> {
    const merged = new Map(this.accounts);
    if (overrides) for (const [a, acc] of overrides) isEmpty(acc) ? merged.delete(a) : merged.set(a, acc);
    return [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** State root of this state with `overrides` applied (a block's post-state before commit). */
  root(overrides?: Map<string, Account>): Uint8Array {
    return merkleRoot(this.sortedWith(overrides).map(([a, acc]) => accountLeaf(a, acc)));
  }

  /** Inclusion proof of an account, or the neighbours that prove its absence. */
  proof(address: string): AccountProof {
    const sorted = this.sortedWith();
    const leaves = sorted.map(([a, acc]) => accountLeaf(a, acc));
    const root = toHex(merkleRoot(leaves));
    const entry = (i: number): ProofEntry => ({
      address: sorted[i]![0],
      balance: sorted[i]![1].balance.toString(),
      nonce: Number(sorted[i]![1].nonce),
      index: i,
      siblings: merkleProof(leaves, i).map(toHex),
    });
    const i = sorted.findIndex(([a]) => a >= address);
    if (i >= 0 && sorted[i]![0] === address) return { root, leaf_count: leaves.length, exists: true, account: entry(i), neighbours: [] };
    const neighbours: ProofEntry[] = [];
    const after = i < 0 ? sorted.length : i;
    if (after > 0) neighbours.push(entry(after - 1));
    if (after < sorted.length) neighbours.push(entry(after));
    return { root, leaf_count: leaves.length, exists: false, account: null, neighbours };
  }
}

function isEmpty(acc: Account): boolean {
  return acc.balance === 0n && acc.nonce === 0n;
}

/** One proven leaf. */
export interface ProofEntry {
  address: string;
  balance: string;
  nonce: number;
  index: number;
  siblings: string[];
}

/** Account proof against a state root (addresses sorted ascending, leaf = accountLeaf). */
export interface AccountProof {
  root: string;
  leaf_count: number;
  exists: boolean;
  account: ProofEntry | null;
  /** For absence: the adjacent leaves (indices i-1, i) bracketing where the address would sit. */
  neighbours: ProofEntry[];
}

function entryValid(e: ProofEntry, count: number, root: Uint8Array): boolean {
  const leaf = accountLeaf(e.address, { balance: BigInt(e.balance), nonce: BigInt(e.nonce) });
  return verifyMerkleProof(leaf, e.index, count, e.siblings.map((s) => parseHex(s, 'sibling', HASH_BYTES)), root);
}

/** Verifies an account proof for `address` against `root`; a light client needs nothing else. */
export function verifyAccountProof(address: string, proof: AccountProof, root: Uint8Array): boolean {
  if (proof.exists) return proof.account !== null && proof.account.address === address && entryValid(proof.account, proof.leaf_count, root);
  const [a, b] = proof.neighbours;
  if (proof.leaf_count === 0) return proof.neighbours.length === 0 && toHex(root) === toHex(merkleRoot([]));
  if (!a || !entryValid(a, proof.leaf_count, root)) return false;
  if (!b) {
    // Only a lower neighbour: it must be the last leaf and below the address (or the first and above it).
    return (a.index === proof.leaf_count - 1 && a.address < address) || (a.index === 0 && a.address > address);
  }
  return entryValid(b, proof.leaf_count, root) && b.index === a.index + 1 && a.address < address && address < b.address;
}
