/**
 * The state the VM runs against, as it reads and writes it, synchronously, while a block or a
 * read-only call runs (execution's state trie implements it: src/node/execution/state/view.ts).
 * Addresses are lowercase 0x strings; storage keys and values are 32 bytes.
 */

/** An account as the state trie commits to it. */
export interface Account {
  balance: bigint;
  nonce: bigint;
  /** SHA3-256 of the deployed (original) code; SHA3-256 of nothing for an account without code. */
  codeHash: Uint8Array;
  /** Root of the account's own storage trie; the empty-trie root when it has no storage. */
  storageRoot: Uint8Array;
}

/**
 * A journaled, synchronous view of one state: a block's parent state plus what the block (or a
 * read-only call) has done so far. Reads never fail and never return a promise: a value not in
 * memory is read from the database synchronously.
 */
export interface StateView {
  /** The account at `address` (an absent account is zero balance, zero nonce, no code, no storage). */
  account(address: string): Account;
  /** Adds `delta` (may be negative; the caller checks the balance first) to a balance. */
  addBalance(address: string, delta: bigint): void;
  /** Increments an account's nonce. */
  incrementNonce(address: string): void;
  /** A 32-byte storage value; all zero when the slot is unset. */
  storage(address: string, key: Uint8Array): Uint8Array;
  /** Sets a 32-byte slot; an all-zero value removes it. */
  setStorage(address: string, key: Uint8Array, value: Uint8Array): void;
  /** The deployed (original) code of an account, undefined when it has none. */
  code(address: string): Uint8Array | undefined;
  /** The instrumented module stored under `codeHash` (the hash of the original code). */
  instrumented(codeHash: Uint8Array): Uint8Array | undefined;
  /** Installs code at `address`: its codeHash becomes SHA3-256(original); both forms are stored. */
  setCode(address: string, original: Uint8Array, instrumented: Uint8Array): void;
  /** A point in the journal to come back to. */
  checkpoint(): number;
  /** Undoes every change made after `checkpoint` (and forgets later checkpoints). */
  revertTo(checkpoint: number): void;
}
