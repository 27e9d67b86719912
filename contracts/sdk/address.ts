// A 20-byte account or contract address.
import { revert } from "./env";

/** Address size in bytes. */
export const ADDRESS_SIZE: i32 = 20;

export class Address {
  /** Wraps 20 bytes; reverts on any other length. */
  constructor(public readonly bytes: Uint8Array) {
    if (bytes.length != ADDRESS_SIZE) revert("Address: expected 20 bytes, got " + bytes.length.toString());
  }

  /** The zero address (0x00…00). */
  static zero(): Address {
    return new Address(new Uint8Array(ADDRESS_SIZE));
  }

  /** Equality by bytes. */
  equals(other: Address): bool {
    for (let i = 0; i < ADDRESS_SIZE; i++) if (this.bytes[i] != other.bytes[i]) return false;
    return true;
  }

  /** Whether this is the zero address. */
  isZero(): bool {
    for (let i = 0; i < ADDRESS_SIZE; i++) if (this.bytes[i] != 0) return false;
    return true;
  }

  /** As a 32-byte event topic or storage value: 12 zero bytes, then the address. */
  toWord(): Uint8Array {
    const out = new Uint8Array(32);
    out.set(this.bytes, 12);
    return out;
  }

  /** Lower-case 0x-prefixed hex, for revert reasons. */
  toHex(): string {
    const digits = "0123456789abcdef";
    let s = "0x";
    for (let i = 0; i < ADDRESS_SIZE; i++) {
      const b = this.bytes[i];
      s += digits.charAt(b >> 4) + digits.charAt(b & 15);
    }
    return s;
  }
}
