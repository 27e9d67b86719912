/**
 * The execution state on disk: the account trie, one storage trie per contract, and code by hash,
 * in the state's own LevelDB (keys in ./trie.ts and ../store.ts), apart from the chain's. Commits
 * turn a view's changes into trie updates queued into a state batch, written (synced) before the
 * chain batch that names the new version, so a chain record never names a state that is not
 * durable; versions a crash left above the chain's are deleted on open (`recover`). Pruning follows
 * finality: see `pruneTo`.
 */
import { bytesEqual, toHex } from '../../../core/codec/bytes.js';
import {
  ACCOUNT_VALUE_BYTES,
  EMPTY_CODE_HASH,
  EMPTY_TRIE_ROOT,
  STORAGE_VALUE_BYTES,
  accountKey,
  decodeAccountValue,
  encodeAccountValue,
  storageKey,
} from '../../../core/state/trie.js';
import { parseHex } from '../../../core/codec/bytes.js';
import { type ChainStore, WriteBatch } from '../../shared/store.js';
import { Keys } from '../store.js';
import { detached } from '../../../util/byte-arena.js';
import { DEFAULT_NODE_CACHE_BYTES, DEFAULT_TOP_LEVEL_BYTES, NodeStore } from './node-store.js';
import { MemorySyncReader, type SyncReader, WorkerSyncReader } from './sync-reader.js';
import { HASHLESS_MAX_DEPTH, type HashlessNode, storedForm } from './hashless.js';
import { ACCOUNT_TREE, EMPTY_REF, NODES_END, type NodeRef, type PathCursor, STATE_PREFIXES, Trie, type TrieUpdate, aboveVersion, accountNodeAt, decodeVersion, encodeVersion, nodeKey, staleKey, versionPrefix } from './trie.js';
import type { AccountProofJson } from './types.js';
import { type AccountEntry, type StateSource, View, isEmptyAccount } from './view.js';

const HEX_DIGITS = '0123456789abcdef';

const ZERO_ENTRY: AccountEntry = Object.freeze({
  account: Object.freeze({ balance: 0n, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT }),
  storageVersion: 0,
});

/** A view's changes as trie writes, ready to go into a batch. */
export interface StateCommit {
  /** The version it writes as (the import's sequence number). */
  version: number;
  root: NodeRef;
  /** Accounts created minus accounts removed. */
  accountsDelta: number;
  puts: Map<string, Uint8Array>;
  /** Node keys the new state no longer uses (its parent state still does). */
  stale: string[];
  /** Those of `stale` the node cache's generations may hold (see TrieWrite.evict). */
  evict: string[];
}

/** What a warm-up of the account trie's upper levels read. */
export interface WarmResult {
  /** Levels read whole (the root is level 0); a level the budget cut short is not counted. */
  levels: number;
  nodes: number;
  bytes: number;
  ms: number;
}

/**
 * Addresses whose trie key is remembered: a block asks for each touched account's key three times
 * (prefetch, first read, commit), each a SHA3-256 and a hex parse; a few blocks' worth suffices.
 */
const ACCOUNT_KEY_MEMO = 16_384;

/** Deletes per batch of `recover`: a crash leaves at most one import's keys, but nothing bounds a damaged directory's. */
const RECOVER_BATCH = 10_000;

/**
 * Cursors a prefetch walks before it starts their chunk's batched read: at 256, a block of 1,428
 * has its first read under way after a sixth of the walk, and each read is still long enough
 * (about 250 keys) that handing it to the thread pool costs little beside it.
 */
const PREFETCH_CHUNK = 256;

/** Keys per batched read of a warm-up: small enough that a block import waiting behind it is not held up for long. */
const WARM_CHUNK = 2048;

/** Reads, commits, proves and prunes the state trie. */
export class StateDb implements StateSource {
  readonly accountTrie: Trie;
  private warming: Promise<WarmResult> | undefined;
  private closing = false;
  private readonly keys = new Map<string, Uint8Array>();

  private constructor(
    private readonly store: ChainStore,
    readonly nodes: NodeStore,
  ) {
    this.accountTrie = new Trie(nodes, ACCOUNT_TREE, ACCOUNT_VALUE_BYTES);
  }

  /**
   * Opens the state on `store` (the state's own database). A classic-level database (one with a
   * location on disk) is read synchronously through a reader thread; an in-memory one through a
   * map of its state keys.
   */
  static async open(store: ChainStore, cacheBytes = DEFAULT_NODE_CACHE_BYTES, topBytes = DEFAULT_TOP_LEVEL_BYTES): Promise<StateDb> {
    const location = (store.db as unknown as { location?: unknown }).location;
    let reader: SyncReader;
    if (typeof location === 'string') reader = await WorkerSyncReader.start(location);
    else {
      const mem = new MemorySyncReader();
      for (const prefix of STATE_PREFIXES) {
        for await (const [k, v] of store.db.iterator<string, Uint8Array>({ gte: prefix, lt: prefix + '\xff', valueEncoding: 'view' })) mem.load([[k, v as Uint8Array]]);
      }
      reader = mem;
    }
    return new StateDb(store, new NodeStore(store, reader, cacheBytes, topBytes));
  }

  /**
   * Reads the upper levels of the account trie at `root` (the head's) into the node store, level
   * by level, with batched reads, while the next level fits the byte budget. Runs beside block
   * import (callers do not await it to start serving): a block that comes first reads its paths
   * itself, as before. Without it a restarted million-account node misses the cache twice per
   * touched account (the level-4 node and the leaf) until hundreds of blocks have passed.
   */
  warm(root: NodeRef): Promise<WarmResult> {
    this.warming ??= this.readTopLevels(root);
    return this.warming;
  }

  private async readTopLevels(root: NodeRef): Promise<WarmResult> {
    const t0 = performance.now();
    const out: WarmResult = { levels: 0, nodes: 0, bytes: 0, ms: 0 };
    if (bytesEqual(root.hash, EMPTY_TRIE_ROOT)) return out;
    let level: Array<{ version: number; path: string }> = [{ version: root.version, path: '' }];
    // Hashless upper nodes (hashless.ts) by level: expanded once the level below is read.
    const hashless: Array<Array<{ key: string; node: HashlessNode }>> = [];
    let above = 1;
    for (let depth = 0; level.length > 0 && !this.closing; depth++) {
      // A level the budget cannot hold whole is read as far as it goes: each node held saves a read.
      if (!this.nodes.top.admitLevel(depth, above)) break;
      const next: Array<{ version: number; path: string }> = [];
      const held: Array<{ key: string; node: HashlessNode }> = [];
      hashless.push(held);
      let whole = true;
      for (let from = 0; from < level.length; from += WARM_CHUNK) {
        if (this.closing || this.nodes.top.full()) {
          whole = false;
          break;
        }
        const chunk = level.slice(from, from + WARM_CHUNK);
        const keys = chunk.map((p) => nodeKey(p.version, ACCOUNT_TREE, p.path));
        const nodes = await this.nodes.warmRead(keys, ACCOUNT_VALUE_BYTES);
        chunk.forEach((p, k) => {
          const n = nodes[k];
          if (!n || n.kind === 'leaf') return;
          if (n.kind === 'hashless') {
            // Held once expanded, after the level below: its bytes count from now.
            this.nodes.top.reserve(depth, n.count);
            held.push({ key: keys[k]!, node: n });
          }
          // One a block cached before the warm-up reached it moves up too.
          else this.nodes.place(keys[k]!, n);
          for (let i = 0; i < 16; i++) {
            if (n.has(i) && !n.childIsLeaf(i)) next.push({ version: n.childVersion(i), path: p.path + HEX_DIGITS[i] });
          }
        });
      }
      if (!whole) break;
      out.levels = depth + 1;
      above = level.length;
      level = next;
    }
    await this.expandHashless(hashless);
    const held = this.nodes.top.stats();
    out.nodes = held.entries;
    out.bytes = held.bytes;
    out.ms = performance.now() - t0;
    return out;
  }

  /**
   * Expands the hashless nodes a warm-up read, deepest level first (a node's hashless children are
   * expanded and held before it), after batched reads of the internal children not held (a level the
   * budget cut short).
   */
  private async expandHashless(levels: ReadonlyArray<ReadonlyArray<{ key: string; node: HashlessNode }>>): Promise<void> {
    const hashlessKeys = new Set(levels.flatMap((lv) => lv.map((h) => h.key)));
    const want: string[] = [];
    for (const lv of levels) {
      for (const { key, node } of lv) {
        const path = accountNodeAt(key, HASHLESS_MAX_DEPTH)!.path;
        for (let i = 0; i < 16; i++) {
          // A leaf child's hash is stored in its parent.
          if (!node.has(i) || node.childIsLeaf(i)) continue;
          const child = nodeKey(node.childVersion(i), ACCOUNT_TREE, path + HEX_DIGITS[i]);
          if (!hashlessKeys.has(child) && !this.nodes.cached(child)) want.push(child);
        }
      }
    }
    for (let from = 0; from < want.length && !this.closing; from += WARM_CHUNK) await this.nodes.prefetch(want.slice(from, from + WARM_CHUNK), ACCOUNT_VALUE_BYTES);
    this.nodes.top.unreserve();
    for (let d = levels.length - 1; d >= 0 && !this.closing; d--) for (const { key, node } of levels[d]!) this.nodes.placeHashless(key, node);
  }

  /** Stops a warm-up in progress, then the reader thread. */
  async close(): Promise<void> {
    this.closing = true;
    await this.warming?.catch(() => undefined);
    return this.nodes.reader.close();
  }

  /** A throwaway (or to-be-committed) view of the state at `root`. */
  view(root: NodeRef): View {
    return new View(this, root);
  }

  /** The account-trie key of `address` (remembered: see ACCOUNT_KEY_MEMO); callers must not modify it. */
  private keyOf(address: string): Uint8Array {
    let k = this.keys.get(address);
    if (k === undefined) {
      // Cleared whole when full: a map reordered per hit would cost more than the hashes it saves.
      if (this.keys.size >= ACCOUNT_KEY_MEMO) this.keys.clear();
      this.keys.set(address, (k = accountKey(address)));
    }
    return k;
  }

  private storageTrie(address: string): Trie {
    return new Trie(this.nodes, 's' + toHex(this.keyOf(address)).slice(2), STORAGE_VALUE_BYTES);
  }

  account(root: NodeRef, address: string): AccountEntry {
    const leaf = this.accountTrie.get(root, this.keyOf(address));
    if (!leaf) return ZERO_ENTRY;
    return { account: decodeAccountValue(leaf.value), storageVersion: decodeVersion(leaf.extra) };
  }

  storage(address: string, storageRoot: NodeRef, key: Uint8Array): Uint8Array | undefined {
    return this.storageTrie(address).get(storageRoot, storageKey(key))?.value;
  }

  code(codeHash: Uint8Array): Uint8Array | undefined {
    return this.nodes.bytes(Keys.code(toHex(codeHash)));
  }

  instrumented(codeHash: Uint8Array): Uint8Array | undefined {
    return this.nodes.bytes(Keys.instrumentedCode(toHex(codeHash)));
  }

  /**
   * Reads into the cache, level by level, the account-trie paths of `addresses`. Within a level the
   * cursors walk the cached nodes PREFETCH_CHUNK at a time and each chunk's batched read starts at
   * once, so LevelDB reads the first chunks' nodes on the thread pool while the main thread is
   * still walking the rest: at a million accounts the walk through the held upper levels and the
   * read of ~1,400 leaves each take about 10 ms, and one after the other they made the prefetch
   * about twice the longer of the two.
   */
  async prefetch(root: NodeRef, addresses: Iterable<string>): Promise<void> {
    let cursors = this.accountTrie.cursors(root, [...new Set(addresses)].map((a) => this.keyOf(a)));
    // Bounded by the key length in nibbles; a node missing from disk stops its cursor there.
    for (let level = 0; level <= 64 && cursors.length > 0; level++) {
      const pending: PathCursor[] = [];
      const reads: Array<Promise<unknown>> = [];
      // Two cursors can stop at the same uncached node (a branch both paths cross): read it once.
      const requested = new Set<string>();
      for (let from = 0; from < cursors.length; from += PREFETCH_CHUNK) {
        const step = this.accountTrie.advance(cursors.slice(from, from + PREFETCH_CHUNK));
        for (const c of step.pending) pending.push(c);
        const want = step.want.filter((k) => !requested.has(k));
        if (want.length === 0) continue;
        for (const k of want) requested.add(k);
        reads.push(this.nodes.prefetch(want, ACCOUNT_VALUE_BYTES));
      }
      if (reads.length === 0) return;
      await Promise.all(reads);
      cursors = pending;
    }
  }

  /**
   * Turns `view`'s changes into trie writes as `version`: storage tries first (their roots go
   * into the account leaves), then the account trie. Nothing is written here; `queue` puts the
   * result into a batch and `committed` caches it once the batch is durable.
   */
  commit(view: View, version: number): StateCommit {
    const out: StateCommit = { version, root: view.root, accountsDelta: 0, puts: new Map(), stale: [], evict: [] };
    const updates: TrieUpdate[] = [];
    for (const address of view.touched()) {
      const base = view.baseEntry(address);
      const entry = view.accounts.get(address) ?? base;
      let account = entry.account;
      let storageVersion = base.storageVersion;
      const slots = view.storageChanges.get(address);
      if (slots && slots.size > 0) {
        const w = this.storageTrie(address).update(
          { version: base.storageVersion, hash: base.account.storageRoot },
          [...slots].map(([k, v]) => ({ key: storageKey(parseHex(k, 'key', 32)), value: v.every((b) => b === 0) ? null : v })),
          version,
          out.puts,
        );
        out.stale.push(...w.stale);
        out.evict.push(...w.evict);
        account = { ...account, storageRoot: w.root.hash };
        storageVersion = w.root.version;
      }
      updates.push({ key: this.keyOf(address), value: isEmptyAccount(account) ? null : encodeAccountValue(account), extra: encodeVersion(storageVersion) });
    }
    const w = this.accountTrie.update(view.root, updates, version, out.puts);
    out.stale.push(...w.stale);
    out.evict.push(...w.evict);
    out.root = w.root;
    out.accountsDelta = w.inserted - w.deleted;
    for (const [h, c] of view.codes) {
      out.puts.set(Keys.code(h), c.original);
      out.puts.set(Keys.instrumentedCode(h), c.instrumented);
    }
    return out;
  }

  /**
   * Queues a commit into `batch`, a batch of the state's database (upper account-trie nodes in
   * their hashless stored form); its replaced nodes are listed under its version for pruning at
   * finality. Returns the bytes of the nodes and code queued.
   */
  queue(batch: WriteBatch, c: StateCommit): number {
    let bytes = 0;
    // A database in memory keeps the very bytes it is given: there, a node built in the commit
    // arena (trie.ts) is copied, or each one stored would keep its whole arena chunk alive.
    const inMemory = this.nodes.reader instanceof MemorySyncReader;
    for (const [k, v] of c.puts) {
      const stored = storedForm(k, v);
      batch.putBytes(k, inMemory ? detached(stored) : stored);
      bytes += stored.length;
    }
    if (c.stale.length > 0) batch.put(staleKey(c.version), c.stale);
    return bytes;
  }

  /** Writes a batch of queued commits or prunings to the state's database, synced. */
  write(batch: WriteBatch): Promise<void> {
    return this.store.write(batch);
  }

  /**
   * Deletes what versions above `version` wrote (nodes, stale lists): a crash between a state
   * batch and the chain batch naming its version leaves them, and the next import reuses the
   * version numbers. Call before reading the state; reads only the keys it deletes.
   */
  async recover(version: number): Promise<number> {
    let batch = new WriteBatch();
    const deleted: string[] = [];
    for await (const key of this.store.db.keys({ gte: aboveVersion(version), lt: NODES_END })) {
      batch.del(key);
      deleted.push(key);
      if (batch.ops.length >= RECOVER_BATCH) {
        await this.store.write(batch);
        batch = new WriteBatch();
      }
    }
    if (batch.ops.length > 0) await this.store.write(batch);
    this.nodes.committed(new Map(), deleted);
    return deleted.length;
  }

  /** Caches a commit whose batch is durable, and drops from the cache the nodes it replaced. */
  committed(c: StateCommit): void {
    this.nodes.committed(c.puts, []);
    this.nodes.forget(c.evict);
  }

  /** An account proof with storage proofs against the state at `root` (absence proofs for absent account or slots). */
  async proof(root: NodeRef, address: string, keys: Uint8Array[]): Promise<AccountProofJson> {
    await this.prefetch(root, [address]);
    const entry = this.account(root, address);
    const a = entry.account;
    const storageRoot: NodeRef = { version: entry.storageVersion, hash: a.storageRoot };
    const trie = this.storageTrie(address);
    return {
      address,
      stateRoot: toHex(root.hash),
      balance: a.balance.toString(),
      nonce: Number(a.nonce),
      codeHash: toHex(a.codeHash),
      storageHash: toHex(a.storageRoot),
      accountProof: this.accountTrie.proof(root, this.keyOf(address)).map(toHex),
      storageProof: keys.map((k) => ({
        key: toHex(k),
        value: toHex(this.storage(address, storageRoot, k) ?? new Uint8Array(32)),
        proof: trie.proof(storageRoot, storageKey(k)).map(toHex),
      })),
    };
  }

  /**
   * Queues into `batch` (of the state's database) the pruning that finalising the blocks that
   * wrote versions `canonical` (oldest first) and orphaning those that wrote `orphans` (blocks at
   * those heights off the finalised chain) allows: the nodes each finalised block replaced (no
   * state from the finalised block on uses them) and every key an orphan wrote (only its own branch
   * could use them; its stale list, which names its parent's nodes, goes with them). Reads only
   * the pruned keys. Returns the deleted node keys, to drop from the cache once the batch is durable.
   */
  async pruneTo(batch: WriteBatch, canonical: readonly number[], orphans: readonly number[]): Promise<string[]> {
    const deleted: string[] = [];
    const stale = await Promise.all(canonical.map((v) => this.store.get<string[]>(staleKey(v))));
    canonical.forEach((v, i) => {
      batch.del(staleKey(v));
      for (const node of stale[i] ?? []) {
        batch.del(node);
        deleted.push(node);
      }
    });
    for (const version of orphans) {
      if (version === 0) continue;
      const prefix = versionPrefix(version);
      for await (const key of this.store.db.keys({ gte: prefix, lt: prefix + '\xff' })) {
        batch.del(key);
        deleted.push(key);
      }
    }
    return deleted;
  }

  /** Drops pruned nodes from the cache and the reader once their batch is durable. */
  pruned(deleted: readonly string[]): void {
    this.nodes.committed(new Map(), deleted);
  }
}

export { EMPTY_REF };
