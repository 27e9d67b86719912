/**
 * An in-memory StateView for VM unit tests (not a test file itself): it implements the
 * src/node/execution/state/types.ts contract faithfully, journal included, over plain maps. Its
 * storage root and `digest()` are plain hashes over sorted entries, not the trie's encoding:
 * enough to compare two states for equality.
 */
import { bytesEqual, concatBytes, toHex, u64LE } from '../../src/core/codec/bytes.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import type { Account, StateView } from '../../src/node/execution/state/types.js';

const EMPTY = sha3(new Uint8Array(0));
const ZERO32 = new Uint8Array(32);

interface Entry {
  balance: bigint;
  nonce: bigint;
  codeHash: Uint8Array;
}

/** A journaled in-memory state. */
export class MemoryState implements StateView {
  private readonly accounts = new Map<string, Entry>();
  private readonly slots = new Map<string, Map<string, Uint8Array>>();
  private readonly codes = new Map<string, Uint8Array>();
  private readonly instrumentedCodes = new Map<string, Uint8Array>();
  private readonly journal: Array<() => void> = [];

  /** Seeds a balance without journaling (test set-up). */
  fund(address: string, balance: bigint): this {
    this.entry(address).balance = balance;
    this.journal.length = 0;
    return this;
  }

  private entry(address: string): Entry {
    let e = this.accounts.get(address);
    if (!e) {
      e = { balance: 0n, nonce: 0n, codeHash: EMPTY };
      this.accounts.set(address, e);
      const fresh = e;
      this.journal.push(() => {
        if (this.accounts.get(address) === fresh) this.accounts.delete(address);
      });
    }
    return e;
  }

  private storageRoot(address: string): Uint8Array {
    const slots = this.slots.get(address);
    if (!slots || slots.size === 0) return EMPTY;
    const keys = [...slots.keys()].sort();
    return sha3(...keys.flatMap((k) => [Buffer.from(k.slice(2), 'hex'), slots.get(k)!]));
  }

  account(address: string): Account {
    const e = this.accounts.get(address);
    return { balance: e?.balance ?? 0n, nonce: e?.nonce ?? 0n, codeHash: e?.codeHash ?? EMPTY, storageRoot: this.storageRoot(address) };
  }

  addBalance(address: string, delta: bigint): void {
    const e = this.entry(address);
    const before = e.balance;
    if (before + delta < 0n) throw new Error(`balance of ${address} would go negative`);
    e.balance = before + delta;
    this.journal.push(() => {
      e.balance = before;
    });
  }

  incrementNonce(address: string): void {
    const e = this.entry(address);
    const before = e.nonce;
    e.nonce = before + 1n;
    this.journal.push(() => {
      e.nonce = before;
    });
  }

  storage(address: string, key: Uint8Array): Uint8Array {
    if (key.length !== 32) throw new Error('storage keys are 32 bytes');
    return (this.slots.get(address)?.get(toHex(key)) ?? ZERO32).slice();
  }

  setStorage(address: string, key: Uint8Array, value: Uint8Array): void {
    if (key.length !== 32 || value.length !== 32) throw new Error('storage keys and values are 32 bytes');
    this.entry(address);
    let slots = this.slots.get(address);
    if (!slots) {
      slots = new Map();
      this.slots.set(address, slots);
    }
    const k = toHex(key);
    const before = slots.get(k);
    if (bytesEqual(value, ZERO32)) slots.delete(k);
    else slots.set(k, value.slice());
    const map = slots;
    this.journal.push(() => {
      if (before === undefined) map.delete(k);
      else map.set(k, before);
    });
  }

  code(address: string): Uint8Array | undefined {
    const e = this.accounts.get(address);
    return e && !bytesEqual(e.codeHash, EMPTY) ? this.codes.get(toHex(e.codeHash)) : undefined;
  }

  instrumented(codeHash: Uint8Array): Uint8Array | undefined {
    return this.instrumentedCodes.get(toHex(codeHash));
  }

  setCode(address: string, original: Uint8Array, instrumented: Uint8Array): void {
    const e = this.entry(address);
    const before = e.codeHash;
    const hash = sha3(original);
    // Code is content-addressed: leaving it stored after a revert changes no account.
    this.codes.set(toHex(hash), original.slice());
    this.instrumentedCodes.set(toHex(hash), instrumented.slice());
    e.codeHash = hash;
    this.journal.push(() => {
      e.codeHash = before;
    });
  }

  checkpoint(): number {
    return this.journal.length;
  }

  revertTo(checkpoint: number): void {
    if (checkpoint > this.journal.length) throw new Error(`checkpoint ${checkpoint} is beyond the journal (${this.journal.length})`);
    while (this.journal.length > checkpoint) this.journal.pop()!();
  }

  /** A hash of every account and slot (empty accounts excluded), for comparing two states. */
  digest(): string {
    const parts: Uint8Array[] = [];
    for (const address of [...this.accounts.keys()].sort()) {
      const a = this.account(address);
      if (a.balance === 0n && a.nonce === 0n && bytesEqual(a.codeHash, EMPTY) && bytesEqual(a.storageRoot, EMPTY)) continue;
      parts.push(Buffer.from(address.slice(2), 'hex'), u64LE(a.nonce), Buffer.from(a.balance.toString(16).padStart(64, '0'), 'hex'), a.codeHash, a.storageRoot);
    }
    return toHex(sha3(concatBytes(...parts)));
  }
}
