// Logs: an event name (topic 0 = SHA3-256 of the name), up to 3 indexed topics, and data as
// tagged values. They appear in the receipt and in eth_getLogs.
import { Address } from "./address";
import { sha3String } from "./crypto";
import { Encoder } from "./codec";
import { revert } from "./env";
import { svc_emit_log } from "./host";
import { U256 } from "./u256";

/** Topics per log, topic 0 (the event name) included. */
export const MAX_TOPICS: i32 = 4;

export class Event {
  private topics: Array<Uint8Array> = new Array<Uint8Array>();

  /** Starts an event; its topic 0 is SHA3-256 of `name`'s UTF-8 bytes. */
  constructor(name: string) {
    this.topics.push(sha3String(name));
  }

  /** Adds a 32-byte indexed topic. */
  index(topic: Uint8Array): Event {
    if (topic.length != 32) revert("Event: a topic is 32 bytes, got " + topic.length.toString());
    if (this.topics.length >= MAX_TOPICS) revert("Event: at most 3 indexed topics");
    this.topics.push(topic);
    return this;
  }

  /** Adds an address as an indexed topic (12 zero bytes ‖ address), so logs can be filtered by it. */
  indexAddress(a: Address): Event {
    return this.index(a.toWord());
  }

  /** Adds a U256 as an indexed topic (32 bytes big-endian). */
  indexU256(v: U256): Event {
    return this.index(v.toBytes());
  }

  /** Emits the log with `data` (tagged values) as its data. */
  emit(data: Encoder | null = null): void {
    const n = this.topics.length;
    const flat = new Uint8Array(n * 32);
    for (let i = 0; i < n; i++) flat.set(this.topics[i], i * 32);
    const bytes = data !== null ? data.toBytes() : new Uint8Array(0);
    svc_emit_log(flat.dataStart, n, bytes.dataStart, bytes.length);
  }
}
