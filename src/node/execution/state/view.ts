/**
 * The journaled StateView (types.ts) over one committed state: reads fall through to the trie
 * (synchronously), writes stay in this view until db.ts commits them as trie updates. A view
 * that is dropped without a commit changed nothing, so eth_call and side-branch validation use
 * throwaway views.
 */
import { bytesEqual, toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT } from '../../../core/state/trie.js';
import type { Account, StateView } from './types.js';
import type { NodeRef } from './trie.js';

/** An account as a view holds it: the trie's fields, and where its storage root node is. */
export interface AccountEntry {
  account: Account;
  storageVersion: number;
}

/** What a view reads from committed state (db.ts). */
export interface StateSource {
  account(root: NodeRef, address: string): AccountEntry;
  storage(address: string, storageRoot: NodeRef, key: Uint8Array): Uint8Array | undefined;
  code(codeHash: Uint8Array): Uint8Array | undefined;
  instrumented(codeHash: Uint8Array): Uint8Array | undefined;
}

const ZERO_WORD = new Uint8Array(32);

type Undo =
  | { kind: 'account'; address: string; prev: AccountEntry | undefined }
  | { kind: 'storage'; address: string; key: string; prev: Uint8Array | undefined }
  | { kind: 'code'; hash: string; had: boolean };

/** Whether an account is empty: it is then absent from the trie. */
export function isEmptyAccount(a: Account): boolean {
  return a.balance === 0n && a.nonce === 0n && bytesEqual(a.codeHash, EMPTY_CODE_HASH) && bytesEqual(a.storageRoot, EMPTY_TRIE_ROOT);
}

/** A view of the state at `root` plus this view's own changes. */
export class View implements StateView {
  /** Accounts this view changed (current values). */
  readonly accounts = new Map<string, AccountEntry>();
  /** Storage this view changed: address → key hex → 32-byte value (all zero: removed). */
  readonly storageChanges = new Map<string, Map<string, Uint8Array>>();
  /** Code this view installed, by code hash hex. */
  readonly codes = new Map<string, { original: Uint8Array; instrumented: Uint8Array }>();
  private readonly base = new Map<string, AccountEntry>();
  private readonly journal: Undo[] = [];

  constructor(
    private readonly source: StateSource,
    readonly root: NodeRef,
  ) {}

  /** The committed entry of an account (read once per view). */
  baseEntry(address: string): AccountEntry {
    let e = this.base.get(address);
    if (!e) this.base.set(address, (e = this.source.account(this.root, address)));
    return e;
  }

  private entry(address: string): AccountEntry {
    return this.accounts.get(address) ?? this.baseEntry(address);
  }

  private setEntry(address: string, next: AccountEntry): void {
    this.journal.push({ kind: 'account', address, prev: this.accounts.get(address) });
    this.accounts.set(address, next);
  }

  account(address: string): Account {
    return this.entry(address).account;
  }

  addBalance(address: string, delta: bigint): void {
    const e = this.entry(address);
    this.setEntry(address, { ...e, account: { ...e.account, balance: e.account.balance + delta } });
  }

  incrementNonce(address: string): void {
    const e = this.entry(address);
    this.setEntry(address, { ...e, account: { ...e.account, nonce: e.account.nonce + 1n } });
  }

  storage(address: string, key: Uint8Array): Uint8Array {
    const changed = this.storageChanges.get(address)?.get(toHex(key));
    if (changed) return changed.slice();
    const b = this.baseEntry(address);
    if (bytesEqual(b.account.storageRoot, EMPTY_TRIE_ROOT)) return new Uint8Array(32);
    return this.source.storage(address, { version: b.storageVersion, hash: b.account.storageRoot }, key)?.slice() ?? new Uint8Array(32);
  }

  setStorage(address: string, key: Uint8Array, value: Uint8Array): void {
    if (key.length !== 32 || value.length !== 32) throw new RangeError('storage keys and values are 32 bytes');
    let slots = this.storageChanges.get(address);
    if (!slots) this.storageChanges.set(address, (slots = new Map()));
    const k = toHex(key);
    this.journal.push({ kind: 'storage', address, key: k, prev: slots.get(k) });
    slots.set(k, bytesEqual(value, ZERO_WORD) ? ZERO_WORD : value.slice());
  }

  code(address: string): Uint8Array | undefined {
    const hash = this.account(address).codeHash;
    if (bytesEqual(hash, EMPTY_CODE_HASH)) return undefined;
    return this.codes.get(toHex(hash))?.original ?? this.source.code(hash);
  }

  instrumented(codeHash: Uint8Array): Uint8Array | undefined {
    return this.codes.get(toHex(codeHash))?.instrumented ?? this.source.instrumented(codeHash);
  }

  setCode(address: string, original: Uint8Array, instrumented: Uint8Array): void {
    const codeHash = sha3(original);
    const h = toHex(codeHash);
    this.journal.push({ kind: 'code', hash: h, had: this.codes.has(h) });
    if (!this.codes.has(h)) this.codes.set(h, { original: original.slice(), instrumented: instrumented.slice() });
    const e = this.entry(address);
    this.setEntry(address, { ...e, account: { ...e.account, codeHash } });
  }

  checkpoint(): number {
    return this.journal.length;
  }

  revertTo(checkpoint: number): void {
    if (checkpoint < 0 || checkpoint > this.journal.length) throw new RangeError(`no checkpoint ${checkpoint}`);
    while (this.journal.length > checkpoint) {
      const u = this.journal.pop()!;
      if (u.kind === 'account') {
        if (u.prev) this.accounts.set(u.address, u.prev);
        else this.accounts.delete(u.address);
      } else if (u.kind === 'storage') {
        const slots = this.storageChanges.get(u.address)!;
        if (u.prev) slots.set(u.key, u.prev);
        else slots.delete(u.key);
      } else if (!u.had) this.codes.delete(u.hash);
    }
  }

  /** Addresses whose account or storage this view changed. */
  touched(): Set<string> {
    return new Set([...this.accounts.keys(), ...[...this.storageChanges].filter(([, s]) => s.size > 0).map(([a]) => a)]);
  }
}
