/**
 * The address book: every peer this host knows how to reach and when to dial it next. Peers that
 * passed the chain check are kept across restarts in `<dataDir>/p2p/address-book.json` (written
 * atomically, bounded); candidates learned from peer exchange or bootnodes live in memory until
 * they pass it too. Redials back off per peer, from a quarter slot up to one slot for peers seen
 * recently, longer for the long gone; a recent peer that cannot even be reached by TCP (a cut
 * link) is tried every quarter slot, so a healed link is found again within a fraction of a slot.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../util/fs.js';
import type { Logger } from '../../util/log.js';

/** Confirmed peers kept (and persisted); the least recently seen go first. */
export const MAX_BOOK_PEERS = 256;
/** Unconfirmed candidates held at once; beyond it new ones are dropped until some are tried. */
export const MAX_CANDIDATES = 256;
/** Failed dials after which an unconfirmed candidate is forgotten. */
export const CANDIDATE_MAX_FAILURES = 3;
/** A confirmed peer seen within this many slots is redialled at least once a slot. */
export const RECENT_SLOTS = 300;
/** Longest redial interval, in slots, of a peer not seen recently. */
export const LONG_BACKOFF_SLOTS = 32;
/** Addresses kept per peer. */
export const MAX_ADDRS_PER_PEER = 4;
/** Format version of the persisted file. */
const BOOK_VERSION = 1;

/** One known peer. */
export interface BookEntry {
  peerId: string;
  /** Dialable multiaddrs without `/p2p/`, most useful first. */
  addrs: string[];
  /** Passed the chain check on this chain (persisted, shared with others). */
  confirmed: boolean;
  /** Named by `--bootnodes`: never forgotten. */
  bootnode: boolean;
  /** Last time connected (ms since the epoch; 0: never). */
  lastSeen: number;
  failures: number;
  nextDialAt: number;
  dialing: boolean;
}

/** The persisted form. */
interface BookFile {
  version: number;
  genesis_hash: string;
  peers: Array<{ peer_id: string; addrs: string[]; last_seen: number }>;
}

/** Known peers, their addresses and redial schedule. */
export class AddressBook {
  private readonly entries = new Map<string, BookEntry>();
  private dirty = false;
  private saving: Promise<void> | undefined;
  readonly path: string;

  constructor(
    dataDir: string,
    private readonly genesisHash: string,
    private readonly slotMs: number,
    private readonly log: Logger,
  ) {
    this.path = join(dataDir, 'p2p', 'address-book.json');
  }

  /** First redial delay after a disconnect or a failed dial: well within a slot. */
  get firstRetryMs(): number {
    return Math.max(250, Math.floor(this.slotMs / 4));
  }

  /**
   * Loads the persisted book; returns the peers read. A missing file is an empty book; an unreadable
   * one, or one for another genesis, is logged and ignored (rewritten at the next save), never fatal.
   */
  async load(): Promise<BookEntry[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn('p2p address book unreadable; starting empty', { path: this.path, error: (err as Error).message });
      return [];
    }
    let doc: BookFile;
    try {
      doc = JSON.parse(text) as BookFile;
      if (doc.version !== BOOK_VERSION || !Array.isArray(doc.peers)) throw new Error(`not an address book of version ${BOOK_VERSION}`);
    } catch (err) {
      this.log.warn('p2p address book malformed; starting empty', { path: this.path, error: (err as Error).message });
      return [];
    }
    if (doc.genesis_hash !== this.genesisHash) {
      this.log.warn('p2p address book is for another chain; ignored', { path: this.path, genesis: doc.genesis_hash });
      return [];
    }
    const loaded: BookEntry[] = [];
    for (const p of doc.peers.slice(0, MAX_BOOK_PEERS)) {
      if (typeof p?.peer_id !== 'string' || !Array.isArray(p.addrs) || this.entries.has(p.peer_id)) continue;
      const addrs = p.addrs.filter((a): a is string => typeof a === 'string').slice(0, MAX_ADDRS_PER_PEER);
      if (addrs.length === 0) continue;
      const e: BookEntry = { peerId: p.peer_id, addrs, confirmed: true, bootnode: false, lastSeen: Number.isSafeInteger(p.last_seen) ? p.last_seen : 0, failures: 0, nextDialAt: 0, dialing: false };
      this.entries.set(e.peerId, e);
      loaded.push(e);
    }
    return loaded;
  }

  get(peerId: string): BookEntry | undefined {
    return this.entries.get(peerId);
  }

  /** Every entry (for the dialer). */
  all(): IterableIterator<BookEntry> {
    return this.entries.values();
  }

  /** Confirmed peers in the book. */
  get confirmedCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.confirmed) n++;
    return n;
  }

  /** Adds a `--bootnodes` entry (dialled from the start, never forgotten). */
  addBootnode(peerId: string, addr: string): void {
    const e = this.entries.get(peerId);
    if (e) {
      e.bootnode = true;
      e.addrs = mergeAddrs([addr], e.addrs);
      return;
    }
    this.entries.set(peerId, { peerId, addrs: [addr], confirmed: false, bootnode: true, lastSeen: 0, failures: 0, nextDialAt: 0, dialing: false });
  }

  /**
   * Learns a candidate from peer exchange; returns true when the peer was unknown (a discovery).
   * Known peers keep their addresses (what they said themselves beats what a third party says).
   */
  learn(peerId: string, addrs: readonly string[]): boolean {
    if (this.entries.has(peerId) || addrs.length === 0) return false;
    let candidates = 0;
    for (const e of this.entries.values()) if (!e.confirmed && !e.bootnode) candidates++;
    if (candidates >= MAX_CANDIDATES) return false;
    this.entries.set(peerId, { peerId, addrs: addrs.slice(0, MAX_ADDRS_PER_PEER), confirmed: false, bootnode: false, lastSeen: 0, failures: 0, nextDialAt: 0, dialing: false });
    return true;
  }

  /** A connection to the peer opened: its schedule resets. */
  connected(peerId: string): void {
    const e = this.entries.get(peerId);
    if (!e) return;
    e.lastSeen = Date.now();
    e.failures = 0;
  }

  /**
   * The peer passed the chain check; `addrs` are its dialable listen addresses (from identify, or
   * the address we dialled). Returns true when it was not confirmed before.
   */
  confirm(peerId: string, addrs: readonly string[]): boolean {
    let e = this.entries.get(peerId);
    const fresh = !e?.confirmed;
    if (!e) {
      e = { peerId, addrs: [], confirmed: true, bootnode: false, lastSeen: Date.now(), failures: 0, nextDialAt: 0, dialing: false };
      this.entries.set(peerId, e);
    }
    e.confirmed = true;
    e.lastSeen = Date.now();
    e.failures = 0;
    const before = e.addrs.join();
    if (addrs.length > 0) e.addrs = mergeAddrs(addrs, e.addrs);
    // The beacon confirms every peer once a slot: only news is worth a write (last_seen is
    // written at disconnect and shutdown).
    if (fresh || e.addrs.join() !== before) {
      this.evictBeyondBound();
      this.dirty = true;
    }
    return fresh;
  }

  /** New listen addresses of a peer (identify ran again); only kept for confirmed peers. */
  updateAddrs(peerId: string, addrs: readonly string[]): void {
    const e = this.entries.get(peerId);
    if (!e?.confirmed || addrs.length === 0) return;
    const merged = mergeAddrs(addrs, e.addrs);
    if (merged.join() !== e.addrs.join()) {
      e.addrs = merged;
      this.dirty = true;
    }
  }

  /** The peer's last connection closed: first redial within a slot. */
  disconnected(peerId: string): void {
    const e = this.entries.get(peerId);
    if (!e) return;
    e.lastSeen = Date.now();
    e.failures = 0;
    e.nextDialAt = Date.now() + this.firstRetryMs;
    this.dirty ||= e.confirmed;
  }

  /**
   * A dial ended in failure: back off, or forget a candidate that kept failing. `reached` says the
   * TCP connection opened (the failure was in the handshake or after: each retry costs both sides a
   * handshake, so it backs off). A recent peer that could not be reached at all (a cut link, a
   * restarting process) costs a SYN per retry: it is tried again every `firstRetryMs`, so a healed
   * link is found within a fraction of a slot rather than at the end of a grown backoff.
   */
  dialFailed(peerId: string, reached = true): void {
    const e = this.entries.get(peerId);
    if (!e) return;
    e.failures++;
    if (!e.confirmed && !e.bootnode && e.failures >= CANDIDATE_MAX_FAILURES) {
      this.entries.delete(peerId);
      return;
    }
    const now = Date.now();
    e.nextDialAt = now + (!reached && this.isRecent(e, now) ? this.firstRetryMs : this.backoffMs(e, now));
  }

  /** A bootnode, or a confirmed peer seen within RECENT_SLOTS. */
  private isRecent(e: BookEntry, now: number): boolean {
    return e.bootnode || (e.confirmed && now - e.lastSeen < RECENT_SLOTS * this.slotMs);
  }

  /** Forgets a peer outright (it proved to be on another chain). Bootnodes stay, backed off to the long cap. */
  forget(peerId: string): void {
    const e = this.entries.get(peerId);
    if (!e) return;
    if (e.bootnode) {
      e.confirmed = false;
      e.nextDialAt = Date.now() + LONG_BACKOFF_SLOTS * this.slotMs;
    } else this.entries.delete(peerId);
    this.dirty = true;
  }

  /** Delay before the next dial of `e` after its latest failure. */
  backoffMs(e: BookEntry, now = Date.now()): number {
    const cap = this.isRecent(e, now) ? this.slotMs : LONG_BACKOFF_SLOTS * this.slotMs;
    return Math.min(cap, this.firstRetryMs * 2 ** Math.min(20, e.failures - 1));
  }

  /** Confirmed peers to share, most recently seen first, leaving out `except`. */
  shareable(except: ReadonlySet<string>, max: number): Array<{ peerId: string; addrs: string[] }> {
    return [...this.entries.values()]
      .filter((e) => e.confirmed && e.addrs.length > 0 && !except.has(e.peerId))
      .sort((a, b) => b.lastSeen - a.lastSeen)
      .slice(0, max)
      .map((e) => ({ peerId: e.peerId, addrs: e.addrs }));
  }

  private evictBeyondBound(): void {
    const confirmed = [...this.entries.values()].filter((e) => e.confirmed && !e.bootnode);
    if (confirmed.length <= MAX_BOOK_PEERS) return;
    confirmed.sort((a, b) => a.lastSeen - b.lastSeen);
    for (const e of confirmed.slice(0, confirmed.length - MAX_BOOK_PEERS)) this.entries.delete(e.peerId);
  }

  /** Writes the confirmed peers if anything changed, or always with `force` (temp file + rename); errors are logged, never thrown. */
  async save(force = false): Promise<void> {
    if (this.saving) await this.saving;
    if (!this.dirty && !(force && this.confirmedCount > 0)) return;
    this.dirty = false;
    const doc: BookFile = {
      version: BOOK_VERSION,
      genesis_hash: this.genesisHash,
      peers: [...this.entries.values()].filter((e) => e.confirmed && e.addrs.length > 0).map((e) => ({ peer_id: e.peerId, addrs: e.addrs, last_seen: e.lastSeen })),
    };
    this.saving = writeFileAtomic(this.path, JSON.stringify(doc, null, 1) + '\n', { force: true }).catch((err: unknown) => {
      this.dirty = true;
      this.log.warn('p2p address book not saved', { path: this.path, error: (err as Error).message });
    });
    try {
      await this.saving;
    } finally {
      this.saving = undefined;
    }
  }
}

/** `first` then the rest of `others`, without repeats, bounded. */
function mergeAddrs(first: readonly string[], others: readonly string[]): string[] {
  return [...new Set([...first, ...others])].slice(0, MAX_ADDRS_PER_PEER);
}
