// The contract's persistent storage: 32-byte slots addressed by 32-byte keys. Keys come from
// names so that layouts read like field declarations:
//   slot(name)              = SHA3-256(UTF-8 name)
//   mapSlot(name, k)        = SHA3-256(UTF-8 name ‖ 0x00 ‖ k)
//   mapSlot2(name, k1, k2)  = SHA3-256(UTF-8 name ‖ 0x00 ‖ k1 ‖ k2)
// Numbers are stored as 32-byte big-endian integers (so u64 and U256 slots read alike through
// eth_getStorageAt), a bool as the number 0 or 1, an address as 12 zero bytes ‖ 20 bytes.
// Storing zero (0, false, the zero address, empty bytes) removes the slot: an unset slot reads as
// zero anyway, and the state stays small. Every written slot costs gas (20,000 per slot).
import { Address } from "./address";
import { sha3 } from "./crypto";
import { revert } from "./env";
import { svc_storage_read, svc_storage_remove, svc_storage_write } from "./host";
import { U256, writeU64BE } from "./u256";

/** Slot and value size in bytes. */
export const SLOT_SIZE: i32 = 32;

export class Storage {
  /** The key of a named value. */
  static slot(name: string): Uint8Array {
    return sha3(Uint8Array.wrap(String.UTF8.encode(name)));
  }

  /** The key of entry `key` in the map `name` (hash variable-length keys first so two keys never concatenate alike). */
  static mapSlot(name: string, key: Uint8Array): Uint8Array {
    return sha3(concat3(mapPrefix(name), key, new Uint8Array(0)));
  }

  /** The key of entry (`k1`, `k2`) in the two-level map `name`, e.g. allowances[owner][spender]. */
  static mapSlot2(name: string, k1: Uint8Array, k2: Uint8Array): Uint8Array {
    return sha3(concat3(mapPrefix(name), k1, k2));
  }

  /** The raw 32-byte value at `key`, or null if the slot is unset. */
  static read(key: Uint8Array): Uint8Array | null {
    checkKey(key);
    const out = new Uint8Array(SLOT_SIZE);
    return svc_storage_read(key.dataStart, out.dataStart) == 1 ? out : null;
  }

  /** Writes a raw 32-byte value. */
  static write(key: Uint8Array, value: Uint8Array): void {
    checkKey(key);
    if (value.length != SLOT_SIZE) revert("Storage: a slot value is 32 bytes, got " + value.length.toString());
    svc_storage_write(key.dataStart, value.dataStart);
  }

  /** Unsets the slot. */
  static remove(key: Uint8Array): void {
    checkKey(key);
    svc_storage_remove(key.dataStart);
  }

  /** Whether the slot is set. */
  static has(key: Uint8Array): bool {
    return Storage.read(key) !== null;
  }

  /** A u64 (0 if unset); reverts if the slot holds a larger number. */
  static getU64(key: Uint8Array): u64 {
    return Storage.getU256(key).toU64();
  }

  /** Stores a u64 (0 removes the slot). */
  static setU64(key: Uint8Array, v: u64): void {
    Storage.setU256(key, U256.fromU64(v));
  }

  /** A U256 (0 if unset). */
  static getU256(key: Uint8Array): U256 {
    const v = Storage.read(key);
    return v === null ? U256.zero() : U256.fromBytes(v);
  }

  /** Stores a U256 (0 removes the slot). */
  static setU256(key: Uint8Array, v: U256): void {
    if (v.isZero()) Storage.remove(key);
    else Storage.write(key, v.toBytes());
  }

  /** A bool (false if unset). */
  static getBool(key: Uint8Array): bool {
    return !Storage.getU256(key).isZero();
  }

  /** Stores a bool (false removes the slot). */
  static setBool(key: Uint8Array, v: bool): void {
    Storage.setU64(key, v ? 1 : 0);
  }

  /** An address (the zero address if unset). */
  static getAddress(key: Uint8Array): Address {
    const v = Storage.read(key);
    return v === null ? Address.zero() : new Address(v.slice(12, 32));
  }

  /** Stores an address (the zero address removes the slot). */
  static setAddress(key: Uint8Array, a: Address): void {
    if (a.isZero()) Storage.remove(key);
    else Storage.write(key, a.toWord());
  }

  /**
   * Bytes of any length (empty if unset). Layout: the slot at `key` holds the length as a number;
   * chunk i (32 bytes, the last zero-padded) is at SHA3-256(key ‖ u32 BE i). A value of n bytes
   * costs 1 + ceil(n / 32) slot writes.
   */
  static getBytes(key: Uint8Array): Uint8Array {
    const n = <i32>Storage.getU64(key);
    const out = new Uint8Array(n);
    for (let i = 0; i * SLOT_SIZE < n; i++) {
      const chunk = Storage.read(chunkKey(key, i));
      if (chunk === null) continue; // an all-zero chunk is never stored
      const take = min(SLOT_SIZE, n - i * SLOT_SIZE);
      out.set(chunk.subarray(0, take), i * SLOT_SIZE);
    }
    return out;
  }

  /** Stores bytes (see getBytes); chunks of a longer previous value are removed. */
  static setBytes(key: Uint8Array, value: Uint8Array): void {
    const old = <i32>Storage.getU64(key);
    const chunks = (value.length + SLOT_SIZE - 1) / SLOT_SIZE;
    for (let i = 0; i < chunks; i++) {
      const chunk = new Uint8Array(SLOT_SIZE);
      chunk.set(value.subarray(i * SLOT_SIZE, min(value.length, (i + 1) * SLOT_SIZE)));
      if (isZero(chunk)) Storage.remove(chunkKey(key, i));
      else Storage.write(chunkKey(key, i), chunk);
    }
    const oldChunks = (old + SLOT_SIZE - 1) / SLOT_SIZE;
    for (let i = chunks; i < oldChunks; i++) Storage.remove(chunkKey(key, i));
    Storage.setU64(key, <u64>value.length);
  }

  /** A UTF-8 string (empty if unset), stored as getBytes/setBytes. */
  static getString(key: Uint8Array): string {
    return String.UTF8.decode(Storage.getBytes(key).buffer);
  }

  /** Stores a UTF-8 string. */
  static setString(key: Uint8Array, s: string): void {
    Storage.setBytes(key, Uint8Array.wrap(String.UTF8.encode(s)));
  }
}

function checkKey(key: Uint8Array): void {
  if (key.length != SLOT_SIZE) revert("Storage: a key is 32 bytes, got " + key.length.toString());
}

// UTF-8 name ‖ 0x00: the separator keeps map "a" with key "b…" apart from a map named "ab".
function mapPrefix(name: string): Uint8Array {
  const utf8 = Uint8Array.wrap(String.UTF8.encode(name));
  const out = new Uint8Array(utf8.length + 1);
  out.set(utf8);
  return out;
}

function chunkKey(key: Uint8Array, i: i32): Uint8Array {
  const buf = new Uint8Array(SLOT_SIZE + 4);
  buf.set(key);
  const idx = new Uint8Array(8);
  writeU64BE(idx, 0, <u64>i);
  buf.set(idx.subarray(4, 8), SLOT_SIZE);
  return sha3(buf);
}

function concat3(a: Uint8Array, b: Uint8Array, c: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length + c.length);
  out.set(a);
  out.set(b, a.length);
  out.set(c, a.length + b.length);
  return out;
}

function isZero(b: Uint8Array): bool {
  for (let i = 0; i < b.length; i++) if (b[i] != 0) return false;
  return true;
}
