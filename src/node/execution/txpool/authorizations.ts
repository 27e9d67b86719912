/**
 * Companion ECDSA keys each account has authorised (transaction types 1 and 2); a type-3
 * transaction for an account is valid only when signed by one of them. Kept beside the
 * account state: the state root does not commit to them yet.
 */
import { Keys } from '../store.js';
import { type WriteBatch } from '../../shared/store.js';

/** Authorisation changes of one block, in order (1 = add, -1 = remove): enough to undo them. */
export type AuthChanges = Array<[op: 1 | -1, account: string, ecdsa: string]>;

/** Read access used while executing a block. */
export interface AuthReader {
  has(account: string, ecdsa: string): boolean;
}

export class Authorizations implements AuthReader {
  private readonly map = new Map<string, Set<string>>();

  /** Replaces the contents (start-up). */
  load(entries: Array<{ account: string; keys: string[] }>): void {
    this.map.clear();
    for (const e of entries) if (e.keys.length) this.map.set(e.account, new Set(e.keys));
  }

  has(account: string, ecdsa: string): boolean {
    return this.map.get(account)?.has(ecdsa) ?? false;
  }

  /** Keys authorised by `account`, sorted. */
  keys(account: string): string[] {
    return [...(this.map.get(account) ?? [])].sort();
  }

  /** Applies (1) or undoes (-1) a block's changes and queues the touched accounts' new sets. */
  apply(changes: AuthChanges, sign: 1 | -1, batch: WriteBatch): void {
    const touched = new Set<string>();
    // Undo walks the changes backwards with each operation inverted.
    for (const [op, a, e] of sign === 1 ? changes : [...changes].reverse()) {
      let set = this.map.get(a);
      if (!set) this.map.set(a, (set = new Set()));
      if (op * sign === 1) set.add(e);
      else set.delete(e);
      touched.add(a);
    }
    for (const a of touched) {
      const keys = this.keys(a);
      if (keys.length === 0) {
        this.map.delete(a);
        batch.del(Keys.authorizations(a));
      } else batch.put(Keys.authorizations(a), keys);
    }
  }
}

/** A block's working view: the base set plus this block's changes so far. */
export class AuthOverlay implements AuthReader {
  readonly changes: AuthChanges = [];
  private readonly local = new Map<string, boolean>();

  constructor(private readonly base: AuthReader) {}

  has(account: string, ecdsa: string): boolean {
    return this.local.get(`${account}/${ecdsa}`) ?? this.base.has(account, ecdsa);
  }

  /** Authorises; false when already authorised. */
  add(account: string, ecdsa: string): boolean {
    if (this.has(account, ecdsa)) return false;
    this.local.set(`${account}/${ecdsa}`, true);
    this.changes.push([1, account, ecdsa]);
    return true;
  }

  /** Revokes; false when not authorised. */
  remove(account: string, ecdsa: string): boolean {
    if (!this.has(account, ecdsa)) return false;
    this.local.set(`${account}/${ecdsa}`, false);
    this.changes.push([-1, account, ecdsa]);
    return true;
  }
}
