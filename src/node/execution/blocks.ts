/**
 * Stored blocks in storage layout 5 (see `Keys`): each block is split into a small record, its
 * state changes, a binary shell (header and signature), its transaction-hash list, and one entry
 * per transaction (its receipt and envelope together), so every read costs the size of what it
 * returns: a transaction's own bytes, never its block's. With a body file (a node with a data
 * directory), the entries go to the file instead and the database keeps their index (`j:`).
 * The record and state-change caches are bounded by bytes.
 */
import { HASH_BYTES } from '../../core/constants.js';
import { ExecutionError } from './errors.js';
import { concatBytes, toHex } from '../../core/codec/bytes.js';
import { type Block, type BlockHeader, decodeBlock, encodeBlock } from '../../core/types/block.js';
import type { Attestation } from '../../core/types/attestation.js';
import type { SlashingEvidence } from '../../core/consensus/slashing.js';
import { decodeTx, type Transaction } from '../../core/types/transaction.js';
import { ByteCache, type CacheStats } from '../../util/byte-cache.js';
import type { AuthChanges } from './txpool/authorizations.js';
import type { ConsensusRecord } from './consensus-fields.js';
import type { RegistryChanges } from './registry.js';
import type { IncludedVote } from './rewards.js';
import { type ChainStore, type WriteBatch } from '../shared/store.js';
import { Keys } from './store.js';
import type { Receipt } from '../../api/execution.js';
import { type BodyFile, type BodyIndex, type BodyWrite, bodyBytes, decodeBodyIndex, encodeBodyIndex } from './body-file.js';

/**
 * Metadata kept per block (canonical or not) under `b:`: only what traversal and block views
 * need, a few hundred bytes whatever the block's size. Receipts, envelopes, transaction hashes,
 * the header and the state changes each have keys of their own (see `Keys`), so a lookup reads
 * what it returns and not the block around it.
 */
export interface BlockRecord {
  hash: string;
  index: number;
  parent: string;
  timestamp: number;
  proposer: string;
  state_root: string;
  gas_used: number;
  fees: string;
  tx_count: number;
  /** Bytes of the block's SSZ encoding (header, transactions, signature); 0 for genesis. */
  size: number;
  /** The import sequence number that wrote this block's trie nodes (state/trie.ts). */
  state_version: number;
  /** Version of the state root node (an untouched root keeps an older one). */
  root_version: number;
  /** Non-empty accounts in the state after this block (kept per state, so the metric needs no scan). */
  accounts: number;
  /** Slot, RANDAO mixes and the proposer's reveal (with the value it replaced); absent on genesis. */
  consensus?: ConsensusRecord;
}

/** What a block changes when it becomes canonical (or stops being), stored under `d:`. */
export interface BlockChanges {
  /** Accounts whose nonce the block advanced: every transaction's sender (the pool re-queues theirs). */
  senders: string[];
  registry: RegistryChanges;
  /** ECDSA authorisation changes, in order. */
  authorizations: AuthChanges;
  /** First inclusions of the block's attestations, in order (absent: none). */
  votes?: IncludedVote[];
}

/** Parsed BlockChanges, as the changes cache holds them. */
export interface LoadedChanges {
  senders: string[];
  registry: RegistryChanges;
  authorizations: AuthChanges;
  votes: IncludedVote[];
}

/**
 * Byte bounds of the execution caches. Records are a few hundred bytes each; a full block's state
 * changes are tens of kilobytes parsed, and side-branch import and reorgs re-read those of every block
 * between the head and the branch.
 */
export interface ChainCacheOptions {
  recordBytes: number;
  changesBytes: number;
  /** Decoded state-trie nodes (state/node-store.ts): what bounds the state's memory, not the account count. */
  stateBytes: number;
}

/** Default cache bounds: about 16,000 block records, 128 full blocks' state changes, and the top levels of the state trie plus recent paths. */
export const DEFAULT_CHAIN_CACHE: ChainCacheOptions = { recordBytes: 8 * 1024 * 1024, changesBytes: 64 * 1024 * 1024, stateBytes: 64 * 1024 * 1024 };

/** Estimated resident bytes of one sender address string. */
const SENDER_BYTES = 120;
/** Estimated resident bytes of one registry or authorisation change. */
const CHANGE_ENTRY_BYTES = 600;
/** Estimated resident bytes of one included vote's record (three numbers and an object). */
const VOTE_ENTRY_BYTES = 64;

/** Estimated resident bytes of a block record: its JSON, doubled for UTF-16 strings and object slots. */
function recordBytes(r: BlockRecord): number {
  return 2 * JSON.stringify(r).length;
}

function changesBytes(c: LoadedChanges): number {
  return 64 + c.senders.length * SENDER_BYTES + (c.registry.added.length + c.registry.exited.length + (c.registry.recommitted?.length ?? 0) + c.authorizations.length) * CHANGE_ENTRY_BYTES + c.votes.length * VOTE_ENTRY_BYTES;
}

function loadChanges(c: BlockChanges): LoadedChanges {
  return { senders: c.senders, registry: c.registry, authorizations: c.authorizations, votes: c.votes ?? [] };
}

const HASH_HEX = (bytes: Uint8Array, i: number) => toHex(bytes.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES));

/** The header, signature, included attestations and slashings of a block as stored under `s:` (SSZ with an empty transaction list). */
export function encodeShell(block: Block): Uint8Array {
  return encodeBlock({ header: block.header, signature: block.signature, transactions: [], attestations: block.attestations, slashings: block.slashings }, []);
}

/** SSZ size of a block from its shell and envelopes: each transaction adds its bytes and a 4-byte offset. */
export function blockSize(shell: Uint8Array, envelopes: Uint8Array[]): number {
  return envelopes.reduce((n, e) => n + e.length + 4, shell.length);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** A new block's parts, as `put` stores them. */
export interface NewBlock {
  record: BlockRecord;
  changes: LoadedChanges;
  shell: Uint8Array;
  envelopes: Uint8Array[];
  txHashes: Uint8Array[];
  receipts: Receipt[];
  /** `receipts` already serialised (receiptJson of each), when the caller needs the strings too. */
  receiptsJson?: string[];
  /** Where the body file holds the envelopes and receipts (BlockStore.beginBody): indexed instead of stored as `u:` entries. */
  body?: BodyIndex;
}

/** A JSON string value or null; the fast path below only meets hex, decimal and kind strings, which need no escaping. */
const jsonOrNull = (v: string | null): string => (v === null ? 'null' : `"${v}"`);

/**
 * JSON.stringify(receipt), byte for byte, about twice as fast for the common receipt (no logs, no
 * error: every transfer), whose strings are hex, decimal or a kind name and need no escaping. A
 * block's 1,428 receipts are serialised on every import.
 */
export function receiptJson(r: Receipt): string {
  if (r.logs.length > 0 || r.error !== undefined) return JSON.stringify(r);
  return `{"transactionHash":"${r.transactionHash}","transactionIndex":${r.transactionIndex},"blockHash":"${r.blockHash}","blockNumber":${r.blockNumber},"from":"${r.from}","to":${jsonOrNull(r.to)},"kind":"${r.kind}","status":${r.status},"gasUsed":${r.gasUsed},"cumulativeGasUsed":${r.cumulativeGasUsed},"effectiveGasPrice":"${r.effectiveGasPrice}","fee":"${r.fee}","contractAddress":${jsonOrNull(r.contractAddress)},"logs":[]}`;
}

/** Bytes of the length prefix of a `u:` entry. */
const ENTRY_PREFIX_BYTES = 4;

/**
 * The `u:` values of a block's transactions: each a 4-byte big-endian receipt length, the
 * receipt's UTF-8 JSON and the envelope. All are views into one buffer: a full block's 1,428
 * entries cost one allocation and one copy of the envelopes, not one each.
 */
export function packEntries(receiptsJson: readonly string[], envelopes: readonly Uint8Array[]): Uint8Array[] {
  const lengths = receiptsJson.map((j) => Buffer.byteLength(j, 'utf8'));
  let total = 0;
  for (let i = 0; i < envelopes.length; i++) total += ENTRY_PREFIX_BYTES + lengths[i]! + envelopes[i]!.length;
  // Every byte is written below.
  const buf = Buffer.allocUnsafe(total);
  const out = new Array<Uint8Array>(envelopes.length);
  let off = 0;
  for (let i = 0; i < envelopes.length; i++) {
    const start = off;
    buf.writeUInt32BE(lengths[i]!, off);
    off += ENTRY_PREFIX_BYTES;
    off += buf.write(receiptsJson[i]!, off, 'utf8');
    buf.set(envelopes[i]!, off);
    off += envelopes[i]!.length;
    out[i] = new Uint8Array(buf.buffer, buf.byteOffset + start, off - start);
  }
  return out;
}

/** A `u:` value's receipt JSON and envelope (a view into `bytes`); a value that does not parse is a damaged database. */
export function unpackEntry(bytes: Uint8Array, key: string): { receiptJson: string; envelope: Uint8Array } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = b.length >= ENTRY_PREFIX_BYTES ? b.readUInt32BE(0) : -1;
  if (n < 0 || ENTRY_PREFIX_BYTES + n > b.length) throw new ExecutionError('CORRUPT_DB', `database value at ${key} is not a transaction entry`);
  return { receiptJson: b.toString('utf8', ENTRY_PREFIX_BYTES, ENTRY_PREFIX_BYTES + n), envelope: bytes.subarray(ENTRY_PREFIX_BYTES + n) };
}

function parseReceipt(json: string, key: string): Receipt {
  try {
    return JSON.parse(json) as Receipt;
  } catch {
    throw new ExecutionError('CORRUPT_DB', `receipt at ${key} is not valid JSON`);
  }
}

export class BlockStore {
  private readonly records: ByteCache<BlockRecord>;
  private readonly changeCache: ByteCache<LoadedChanges>;

  constructor(
    private readonly store: ChainStore,
    cache: ChainCacheOptions,
    /** Where bodies go when the node has a data directory; without one they are `u:` entries. */
    private readonly bodies?: BodyFile,
  ) {
    this.records = new ByteCache(cache.recordBytes, recordBytes);
    this.changeCache = new ByteCache(cache.changesBytes, changesBytes);
  }

  /** Starts writing a new block's envelopes to the body file, or undefined without one (put then stores `u:` entries). */
  beginBody(envelopes: readonly Uint8Array[]): BodyWrite | undefined {
    return this.bodies && envelopes.length > 0 ? this.bodies.begin(envelopes) : undefined;
  }

  /** Queues every key of a new block into `batch` and caches its record and changes (callers write the batch before anyone reads them). */
  put(batch: WriteBatch, b: NewBlock): void {
    const hash = b.record.hash;
    batch.put(Keys.block(hash), b.record).put(Keys.blockChanges(hash), { senders: b.changes.senders, registry: b.changes.registry, authorizations: b.changes.authorizations, votes: b.changes.votes } satisfies BlockChanges);
    if (b.shell.length > 0) batch.putBytes(Keys.blockShell(hash), b.shell).putBytes(Keys.blockTxHashes(hash), concatBytes(...b.txHashes));
    if (b.body) {
      batch.putBytes(Keys.blockBody(hash), encodeBodyIndex(b.body)).put(Keys.meta('body_end'), b.body.offset + bodyBytes(b.body));
      return;
    }
    const entries = packEntries(b.receiptsJson ?? b.receipts.map(receiptJson), b.envelopes);
    for (let i = 0; i < entries.length; i++) batch.putBytes(Keys.blockEntry(hash, i), entries[i]!);
  }

  /** After the batch that indexes `body` is written: the next body goes after it. */
  bodyCommitted(body: BodyIndex | undefined): void {
    if (body) this.bodies!.committed(body.offset + bodyBytes(body));
  }

  /** Closes the body file. */
  async close(): Promise<void> {
    await this.bodies?.close();
  }

  private async bodyIndex(hash: string): Promise<BodyIndex | undefined> {
    if (!this.bodies) return undefined;
    const key = Keys.blockBody(hash);
    const bytes = await this.store.getBytes(key);
    return bytes && decodeBodyIndex(bytes, key);
  }

  /** The envelopes (`which` 'envelopes') or receipt JSON strings ('receipts') of transactions [from, to) of an indexed body, from one read. */
  private async fromFile(ix: BodyIndex, which: 'envelopes' | 'receipts', from: number, to: number): Promise<Buffer[]> {
    const lengths = which === 'envelopes' ? ix.envelopeLengths : ix.receiptLengths;
    // Envelopes first, then receipts: a receipt's position is past every envelope.
    let start = ix.offset;
    if (which === 'receipts') for (const n of ix.envelopeLengths) start += n;
    for (let i = 0; i < from; i++) start += lengths[i]!;
    let length = 0;
    for (let i = from; i < to; i++) length += lengths[i]!;
    const buf = await this.bodies!.read(start, length);
    // Counted with the database's reads, so a lookup's cost (bench/flood.ts, store tests) includes the file.
    this.store.counted(length);
    const out = new Array<Buffer>(to - from);
    let at = 0;
    for (let i = from; i < to; i++) {
      out[i - from] = buf.subarray(at, at + lengths[i]!);
      at += lengths[i]!;
    }
    return out;
  }

  /** Caches a block just written. */
  remember(record: BlockRecord, changes?: LoadedChanges): void {
    this.records.set(record.hash, record);
    if (changes) this.changeCache.set(record.hash, changes);
  }

  /** A stored block record by hash (any branch). */
  async record(hash: string): Promise<BlockRecord | undefined> {
    const hit = this.records.get(hash);
    if (hit) return hit;
    const r = await this.store.get<BlockRecord>(Keys.block(hash));
    if (r) this.records.set(r.hash, r);
    return r;
  }

  /** Whether `block` is byte for byte the stored block `hash`: equal shells and equal transaction hashes (each the SHA3 of its envelope), without reading the transactions. */
  async isStoredCopy(hash: string, block: Block, txHashes: Uint8Array[]): Promise<boolean> {
    const [shell, stored] = await Promise.all([this.store.getBytes(Keys.blockShell(hash)), this.store.getBytes(Keys.blockTxHashes(hash))]);
    return !!shell && !!stored && sameBytes(shell, encodeShell(block)) && sameBytes(stored, concatBytes(...txHashes));
  }

  // Every stored block has its changes (same batch), so a missing value is a damaged database.
  async changes(hash: string): Promise<LoadedChanges> {
    const hit = this.changeCache.get(hash);
    if (hit) return hit;
    const c = await this.store.get<BlockChanges>(Keys.blockChanges(hash));
    if (!c) throw new ExecutionError('CORRUPT_DB', `block ${hash} has no stored state changes`);
    const loaded = loadChanges(c);
    this.changeCache.set(hash, loaded);
    return loaded;
  }

  /** Bytes and entries of the block caches, for metrics. */
  cacheStats(): Record<'records' | 'changes', CacheStats> {
    return { records: this.records.stats(), changes: this.changeCache.stats() };
  }

  /** Hashes of a stored block's transactions, in order (empty for genesis or an unknown block). */
  async txHashes(hash: string): Promise<string[]> {
    const bytes = await this.store.getBytes(Keys.blockTxHashes(hash));
    if (!bytes) return [];
    return Array.from({ length: bytes.length / HASH_BYTES }, (_, i) => HASH_HEX(bytes, i));
  }

  /** Header, signature and included attestations of a stored block (undefined for genesis, which has no body). */
  async header(hash: string): Promise<{ header: BlockHeader; signature: Uint8Array; attestations: Attestation[]; slashings: SlashingEvidence[] } | undefined> {
    const bytes = await this.store.getBytes(Keys.blockShell(hash));
    if (!bytes) return undefined;
    const { header, signature, attestations, slashings } = decodeBlock(bytes);
    return { header, signature, attestations, slashings };
  }

  /** The whole decoded block (undefined for genesis, which has no body). */
  async block(hash: string): Promise<Block | undefined> {
    const shell = await this.header(hash);
    if (!shell) return undefined;
    const ix = await this.bodyIndex(hash);
    if (ix) return { ...shell, transactions: (await this.fromFile(ix, 'envelopes', 0, ix.envelopeLengths.length)).map(decodeTx) };
    const prefix = Keys.blockEntryPrefix(hash);
    const entries = await this.store.scanBytes(prefix);
    // A block imported before `u:` entries keeps its envelopes under `x:`.
    const envelopes = entries.length > 0 ? entries.map((e) => unpackEntry(e, prefix).envelope) : await this.store.scanBytes(Keys.blockTxPrefix(hash));
    return { ...shell, transactions: envelopes.map(decodeTx) };
  }

  /** The `index`-th transaction of a stored block with its receipt: one read. */
  async entry(blockHashHex: string, index: number): Promise<{ tx: Transaction; receipt: Receipt } | undefined> {
    const ix = await this.bodyIndex(blockHashHex);
    if (ix) {
      if (index < 0 || index >= ix.envelopeLengths.length) return undefined;
      const [[envelope], [json]] = await Promise.all([this.fromFile(ix, 'envelopes', index, index + 1), this.fromFile(ix, 'receipts', index, index + 1)]);
      return { tx: decodeTx(envelope!), receipt: parseReceipt(json!.toString('utf8'), Keys.blockBody(blockHashHex)) };
    }
    const key = Keys.blockEntry(blockHashHex, index);
    const bytes = await this.store.getBytes(key);
    if (!bytes) {
      const [tx, receipt] = await Promise.all([this.store.getBytes(Keys.blockTx(blockHashHex, index)), this.store.get<Receipt>(Keys.receipt(blockHashHex, index))]);
      return tx && receipt ? { tx: decodeTx(tx), receipt } : undefined;
    }
    const e = unpackEntry(bytes, key);
    return { tx: decodeTx(e.envelope), receipt: parseReceipt(e.receiptJson, key) };
  }

  /** The `index`-th transaction of a stored block. */
  async transaction(blockHashHex: string, index: number): Promise<Transaction | undefined> {
    const ix = await this.bodyIndex(blockHashHex);
    if (ix) return index >= 0 && index < ix.envelopeLengths.length ? decodeTx((await this.fromFile(ix, 'envelopes', index, index + 1))[0]!) : undefined;
    const key = Keys.blockEntry(blockHashHex, index);
    const bytes = await this.store.getBytes(key);
    if (bytes) return decodeTx(unpackEntry(bytes, key).envelope);
    const legacy = await this.store.getBytes(Keys.blockTx(blockHashHex, index));
    return legacy ? decodeTx(legacy) : undefined;
  }

  /** The receipt of the `index`-th transaction of a stored block. */
  async receipt(blockHashHex: string, index: number): Promise<Receipt | undefined> {
    const ix = await this.bodyIndex(blockHashHex);
    if (ix) return index >= 0 && index < ix.receiptLengths.length ? parseReceipt((await this.fromFile(ix, 'receipts', index, index + 1))[0]!.toString('utf8'), Keys.blockBody(blockHashHex)) : undefined;
    const key = Keys.blockEntry(blockHashHex, index);
    const bytes = await this.store.getBytes(key);
    if (bytes) return parseReceipt(unpackEntry(bytes, key).receiptJson, key);
    return this.store.get<Receipt>(Keys.receipt(blockHashHex, index));
  }

  /** All receipts of a stored block, in order. */
  async receipts(blockHashHex: string): Promise<Receipt[]> {
    const ix = await this.bodyIndex(blockHashHex);
    if (ix) return (await this.fromFile(ix, 'receipts', 0, ix.receiptLengths.length)).map((j) => parseReceipt(j.toString('utf8'), Keys.blockBody(blockHashHex)));
    const prefix = Keys.blockEntryPrefix(blockHashHex);
    const entries = await this.store.scanBytes(prefix);
    if (entries.length > 0) return entries.map((e) => parseReceipt(unpackEntry(e, prefix).receiptJson, prefix));
    return (await this.store.scan<Receipt>(Keys.receiptPrefix(blockHashHex))).map((e) => e.value);
  }

}
