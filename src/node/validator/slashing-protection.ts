/**
 * Slashing protection for the validator client (EIP-3076 semantics, interchange format v5).
 *
 * Before the client signs a block header or an attestation it asks this database; an accepted
 * message is written to LevelDB with `sync` before the call returns, so a signature can only exist
 * once its record is durable, and a crash right after signing never forgets it.
 *
 * Model, per validator key:
 * - the signed messages themselves (block: slot + signing root; attestation: source, target and
 *   signing root; a root may be unknown when imported without one), never deleted;
 * - three low watermarks: slot L, source S, target T. A block needs `slot > L`, an attestation
 *   `source >= S` and `target > T`, unless it repeats a recorded message exactly. Signing sets them
 *   from the first message; imports raise them to the file's maxima (EIP-3076's "minimal" import),
 *   so an import never leaves a gap of unknown history the client could sign into.
 * - invariant: every recorded attestation with `target <= T` has `source <= S`. Records under the
 *   watermarks therefore can no longer decide anything except exact repeats, which is what lets
 *   `exportInterchange` write only the records above the watermarks plus one entry at them.
 *
 * Keys are stored by SHA3-256 of the 1,952-byte ML-DSA-65 public key (whose last 20 bytes are the
 * validator's address, used in messages); the interchange carries the full key.
 */
import type { AbstractLevel } from 'abstract-level';
import { ClassicLevel } from 'classic-level';
import { mkdir } from 'node:fs/promises';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { rejectUnknownKeys, requireObject } from '../../core/codec/json.js';
import { HASH_BYTES, PUBLIC_KEY_BYTES } from '../../core/constants.js';
import { sha3 } from '../../core/crypto/hash.js';
import { MalformedError, SvcError } from '../../core/errors.js';

/** The only interchange version this database reads and writes. */
export const INTERCHANGE_FORMAT_VERSION = '5';

/** Which rule refused a signature. */
export type SlashingRule =
  | 'DOUBLE_PROPOSAL'
  | 'BLOCK_BELOW_WATERMARK'
  | 'SOURCE_AFTER_TARGET'
  | 'DOUBLE_VOTE'
  | 'SURROUNDING_VOTE'
  | 'SURROUNDED_VOTE'
  | 'SOURCE_BELOW_WATERMARK'
  | 'TARGET_BELOW_WATERMARK';

/** The database refused to let a message be signed; `code` is always SLASHING_PROTECTION. */
export class SlashingProtectionError extends SvcError {
  declare readonly code: 'SLASHING_PROTECTION';
  /** The rule that refused. */
  readonly rule: SlashingRule;

  constructor(rule: SlashingRule, message: string) {
    // 409: the request conflicts with what this key already signed.
    super('SLASHING_PROTECTION', message, 409);
    this.rule = rule;
  }
}

/** Where the database lives: a LevelDB directory, or memory (unit tests only). */
export type SlashingProtectionOptions = { dir: string } | { memory: true };

/** `recorded`: a new message, now durable; `repeat`: exactly this message was already signed. */
export type ProtectionOutcome = 'recorded' | 'repeat';

/** What a key signed where another message is about to be: nothing, exactly that message, or another one. */
export type SignedBefore = 'none' | 'same' | 'other';

/** A key's current low watermarks (undefined fields: nothing of that kind signed yet). */
export interface Watermarks {
  slot?: number;
  sourceEpoch?: number;
  targetEpoch?: number;
}

/** EIP-3076 interchange, version 5 (numbers are base-10 strings, as the EIP requires). */
export interface InterchangeV5 {
  metadata: { interchange_format_version: '5'; genesis_validators_root: string };
  data: InterchangeRecord[];
}

/** One validator's history in an interchange file. */
export interface InterchangeRecord {
  pubkey: string;
  signed_blocks: Array<{ slot: string; signing_root?: string }>;
  signed_attestations: Array<{ source_epoch: string; target_epoch: string; signing_root?: string }>;
}

/** What an import changed. */
export interface ImportSummary {
  /** Distinct validator keys in the file. */
  validators: number;
  /** Block and attestation records that were not in the database yet. */
  blocksAdded: number;
  attestationsAdded: number;
}

type Db = AbstractLevel<string | Uint8Array | Buffer, string, string>;

interface BlockRecord {
  slot: number;
  /** Lowercase 0x hex, or null when unknown (imported without a root). */
  root: string | null;
}

interface AttRecord {
  source: number;
  target: number;
  root: string | null;
}

interface KeyState {
  id: string;
  pubkey: string;
  address: string;
  slotMark: number | null;
  sourceMark: number | null;
  targetMark: number | null;
  /** slot → records (more than one only after importing conflicting history). */
  blocks: Map<number, BlockRecord[]>;
  /** target epoch → records. */
  atts: Map<number, AttRecord[]>;
}

interface KeyJson {
  pubkey: string;
  slot_watermark: number | null;
  source_watermark: number | null;
  target_watermark: number | null;
}

const pad = (n: number): string => String(n).padStart(16, '0');
const rootPart = (root: string | null): string => (root === null ? 'none' : root.slice(2));

/** Key layout: `k:` key state, `b:` blocks, `a:` attestations (ids and numbers fixed-width). */
const DbKeys = {
  format: 'm:format',
  key: (id: string) => `k:${id}`,
  block: (id: string, r: BlockRecord) => `b:${id}:${pad(r.slot)}:${rootPart(r.root)}`,
  att: (id: string, r: AttRecord) => `a:${id}:${pad(r.target)}:${pad(r.source)}:${rootPart(r.root)}`,
} as const;

const STORAGE_FORMAT = 1;
const ZERO_ROOT = '0x' + '00'.repeat(HASH_BYTES);
const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;

type Op = { type: 'put'; key: string; value: string };

/** The validator client's slashing-protection database. */
export class SlashingProtectionDb {
  private readonly keys = new Map<string, KeyState>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly db: Db) {}

  /** Opens (creating if needed) the database and loads every key's history into memory. */
  static async open(opts: SlashingProtectionOptions): Promise<SlashingProtectionDb> {
    let db: Db;
    const where = 'dir' in opts ? opts.dir : 'memory';
    if ('dir' in opts) {
      await mkdir(opts.dir, { recursive: true, mode: 0o700 });
      db = new ClassicLevel<string, string>(opts.dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
    } else {
      // memory-level is a development dependency: loaded only when a test asks for it.
      const { MemoryLevel } = await import('memory-level');
      db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
    }
    try {
      await db.open();
    } catch (err) {
      const cause = (err as { cause?: Error }).cause?.message ?? (err as Error).message;
      // LevelDB's LOCK file is what stops two validator clients sharing one history.
      throw new SvcError('DB_OPEN_FAILED', `cannot open the slashing protection database in ${where}: ${cause} (is another validator client using it?)`, 500);
    }
    const sp = new SlashingProtectionDb(db);
    try {
      await sp.load();
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return sp;
  }

  /** Closes the database after the operations already queued. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.exclusive(async () => {
      this.closed = true;
      await this.db.close();
    });
  }

  /**
   * Records a block signature about to be made, or refuses it. Resolves only once the record is
   * durable; sign only after it resolves.
   */
  async checkAndRecordBlock(pubkeyHex: string, slot: number, signingRoot: Uint8Array | string): Promise<ProtectionOutcome> {
    const key = parsePubkey(pubkeyHex, 'pubkey');
    checkNumber(slot, 'slot');
    const root = parseRoot(signingRoot, 'signingRoot');
    return this.exclusive(async () => {
      const st = this.keys.get(key.id);
      const refuse = (rule: SlashingRule, why: string): never => {
        throw new SlashingProtectionError(rule, `slashing protection: refusing to sign the block at slot ${slot} for validator ${key.address}: ${why}`);
      };
      const atSlot = st?.blocks.get(slot) ?? [];
      if (atSlot.some((r) => r.root === root)) return 'repeat';
      if (atSlot.length > 0) refuse('DOUBLE_PROPOSAL', 'a different block was already signed at this slot (double proposal)');
      if (st && st.slotMark !== null && slot < st.slotMark) refuse('BLOCK_BELOW_WATERMARK', `the slot is below the low watermark, slot ${st.slotMark}`);

      const next = st ? { ...st } : this.emptyState(key);
      const rec: BlockRecord = { slot, root };
      const ops: Op[] = [{ type: 'put', key: DbKeys.block(key.id, rec), value: JSON.stringify(rec) }];
      if (next.slotMark === null) {
        next.slotMark = slot;
        ops.push(putKey(next));
      }
      await this.write(ops);
      // Memory changes only after the write succeeded (the copy shares the record maps).
      addBlock(next, rec);
      this.keys.set(key.id, next);
      return 'recorded';
    });
  }

  /**
   * Records an attestation signature about to be made, or refuses it (double vote, surround vote
   * either way, source after target, below the watermarks). Resolves once the record is durable.
   */
  async checkAndRecordAttestation(pubkeyHex: string, sourceEpoch: number, targetEpoch: number, signingRoot: Uint8Array | string): Promise<ProtectionOutcome> {
    const key = parsePubkey(pubkeyHex, 'pubkey');
    checkNumber(sourceEpoch, 'sourceEpoch');
    checkNumber(targetEpoch, 'targetEpoch');
    const root = parseRoot(signingRoot, 'signingRoot');
    const s = sourceEpoch;
    const t = targetEpoch;
    return this.exclusive(async () => {
      const st = this.keys.get(key.id);
      const refuse = (rule: SlashingRule, why: string): never => {
        throw new SlashingProtectionError(rule, `slashing protection: refusing to sign the attestation with source ${s} and target ${t} for validator ${key.address}: ${why}`);
      };
      if (s > t) refuse('SOURCE_AFTER_TARGET', 'the source epoch is after the target epoch');
      const atTarget = st?.atts.get(t) ?? [];
      // Signing exactly the same message again adds no evidence, so it is always allowed.
      if (atTarget.some((r) => r.source === s && r.root === root)) return 'repeat';
      if (atTarget.length > 0) refuse('DOUBLE_VOTE', `a different attestation was already signed for target epoch ${t} (double vote)`);
      if (st) {
        for (const list of st.atts.values()) {
          for (const r of list) {
            if (s < r.source && r.target < t) refuse('SURROUNDING_VOTE', `it surrounds the signed attestation with source ${r.source} and target ${r.target} (surround vote)`);
            if (r.source < s && t < r.target) refuse('SURROUNDED_VOTE', `it is surrounded by the signed attestation with source ${r.source} and target ${r.target} (surround vote)`);
          }
        }
        if (st.sourceMark !== null && s < st.sourceMark) refuse('SOURCE_BELOW_WATERMARK', `the source epoch is below the low watermark, source epoch ${st.sourceMark}`);
        if (st.targetMark !== null && t <= st.targetMark) refuse('TARGET_BELOW_WATERMARK', `the target epoch is at or below the low watermark, target epoch ${st.targetMark}`);
      }

      const next = st ? { ...st } : this.emptyState(key);
      const rec: AttRecord = { source: s, target: t, root };
      const ops: Op[] = [{ type: 'put', key: DbKeys.att(key.id, rec), value: JSON.stringify(rec) }];
      if (next.targetMark === null) {
        next.sourceMark = s;
        next.targetMark = t;
        ops.push(putKey(next));
      }
      await this.write(ops);
      addAtt(next, rec);
      this.keys.set(key.id, next);
      return 'recorded';
    });
  }

  /**
   * What `pubkeyHex` signed at `slot` compared with the block of `signingRoot`: a read of memory
   * (no write, no queue). A client asks before signing so that a duty it already did (before a
   * restart, which forgets what was signed) is skipped quietly rather than refused as a double
   * proposal; checkAndRecordBlock stays the guard. A record without a root (imported) is `other`.
   */
  blockAt(pubkeyHex: string, slot: number, signingRoot: Uint8Array | string): SignedBefore {
    const root = parseRoot(signingRoot, 'signingRoot');
    const atSlot = this.keys.get(parsePubkey(pubkeyHex, 'pubkey').id)?.blocks.get(slot) ?? [];
    if (atSlot.length === 0) return 'none';
    return atSlot.some((r) => r.root === root) ? 'same' : 'other';
  }

  /** As blockAt, for the attestation with `sourceEpoch`, `targetEpoch` and `signingRoot` (records of the same target epoch). */
  attestationAt(pubkeyHex: string, sourceEpoch: number, targetEpoch: number, signingRoot: Uint8Array | string): SignedBefore {
    const root = parseRoot(signingRoot, 'signingRoot');
    const atTarget = this.keys.get(parsePubkey(pubkeyHex, 'pubkey').id)?.atts.get(targetEpoch) ?? [];
    if (atTarget.length === 0) return 'none';
    return atTarget.some((r) => r.source === sourceEpoch && r.root === root) ? 'same' : 'other';
  }

  /** A key's low watermarks, or undefined if it never signed or imported anything. */
  watermarks(pubkeyHex: string): Watermarks | undefined {
    const st = this.keys.get(parsePubkey(pubkeyHex, 'pubkey').id);
    if (!st) return undefined;
    const w: Watermarks = {};
    if (st.slotMark !== null) w.slot = st.slotMark;
    if (st.sourceMark !== null) w.sourceEpoch = st.sourceMark;
    if (st.targetMark !== null) w.targetEpoch = st.targetMark;
    return w;
  }

  /**
   * The history as an EIP-3076 v5 interchange. Per key: one entry at each watermark (with its
   * signing root when exactly that message is known, else without, which EIP-3076 treats as
   * "something was signed here"), then every message above the watermarks. Any conforming
   * importer, minimal or complete, is then at least as strict as this database. Export while the
   * validator client is stopped, as EIP-3076 advises.
   */
  async exportInterchange(genesisValidatorsRoot: Uint8Array | string): Promise<InterchangeV5> {
    const gvr = parseRoot(genesisValidatorsRoot, 'genesisValidatorsRoot');
    return this.exclusive(async () => {
      const data: InterchangeRecord[] = [];
      for (const st of this.keys.values()) data.push(exportKey(st));
      data.sort((a, b) => (a.pubkey < b.pubkey ? -1 : a.pubkey > b.pubkey ? 1 : 0));
      return { metadata: { interchange_format_version: INTERCHANGE_FORMAT_VERSION, genesis_validators_root: gvr }, data };
    });
  }

  /**
   * Merges an EIP-3076 v5 interchange (object or JSON text). The whole file is validated first and
   * written in one batch, so a bad file changes nothing. Merge rule ("minimal" import): records
   * are added; each key's slot and target watermarks rise to the file's maxima and its source
   * watermark to the largest source of any record at or below the new target watermark. Importing
   * the same file twice changes nothing the second time. Import while the client is stopped.
   */
  async importInterchange(json: unknown, genesisValidatorsRoot: Uint8Array | string): Promise<ImportSummary> {
    const gvr = parseRoot(genesisValidatorsRoot, 'genesisValidatorsRoot');
    const parsed = parseInterchange(json, gvr);
    return this.exclusive(async () => {
      const ops: Op[] = [];
      const updated: KeyState[] = [];
      let blocksAdded = 0;
      let attestationsAdded = 0;
      for (const entry of parsed.values()) {
        const st = this.keys.get(entry.key.id);
        const next: KeyState = st
          ? { ...st, blocks: cloneRecords(st.blocks), atts: cloneRecords(st.atts) }
          : this.emptyState(entry.key);
        let changed = false;
        for (const b of entry.blocks) {
          if (next.blocks.get(b.slot)?.some((r) => r.root === b.root)) continue;
          addBlock(next, b);
          ops.push({ type: 'put', key: DbKeys.block(next.id, b), value: JSON.stringify(b) });
          blocksAdded++;
          changed = true;
        }
        for (const a of entry.atts) {
          if (next.atts.get(a.target)?.some((r) => r.source === a.source && r.root === a.root)) continue;
          addAtt(next, a);
          ops.push({ type: 'put', key: DbKeys.att(next.id, a), value: JSON.stringify(a) });
          attestationsAdded++;
          changed = true;
        }
        if (entry.blocks.length > 0) {
          const maxSlot = entry.blocks.reduce((m, b) => Math.max(m, b.slot), 0);
          if (next.slotMark === null || maxSlot > next.slotMark) {
            next.slotMark = maxSlot;
            changed = true;
          }
        }
        if (entry.atts.length > 0) {
          const maxTarget = entry.atts.reduce((m, a) => Math.max(m, a.target), 0);
          const target = next.targetMark === null ? maxTarget : Math.max(next.targetMark, maxTarget);
          // Keep the invariant: nothing at or below the target watermark has a larger source.
          let source = next.sourceMark ?? 0;
          for (const [t, list] of next.atts) if (t <= target) for (const r of list) source = Math.max(source, r.source);
          if (target !== next.targetMark || source !== next.sourceMark) {
            next.targetMark = target;
            next.sourceMark = source;
            changed = true;
          }
        }
        if (changed) {
          ops.push(putKey(next));
          updated.push(next);
        }
      }
      await this.write(ops);
      for (const st of updated) this.keys.set(st.id, st);
      return { validators: parsed.size, blocksAdded, attestationsAdded };
    });
  }

  private emptyState(key: ParsedKey): KeyState {
    return { id: key.id, pubkey: key.pubkey, address: key.address, slotMark: null, sourceMark: null, targetMark: null, blocks: new Map(), atts: new Map() };
  }

  /** Runs `fn` after every earlier operation: check-then-record must not interleave. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new SvcError('SLASHING_DB_CLOSED', 'the slashing protection database is closed', 500);
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** One atomic batch with sync, so an acknowledged record survives a crash or power loss. */
  private async write(ops: Op[]): Promise<void> {
    if (ops.length === 0) return;
    try {
      await this.db.batch(ops, { sync: true } as never);
    } catch (err) {
      throw new SvcError('SLASHING_DB_WRITE_FAILED', `cannot write the slashing protection database: ${(err as Error).message}`, 500, { cause: err });
    }
  }

  private async load(): Promise<void> {
    const format = await this.db.get(DbKeys.format);
    if (format === undefined) {
      await this.db.put(DbKeys.format, String(STORAGE_FORMAT), { sync: true } as never);
    } else if (format !== String(STORAGE_FORMAT)) {
      throw new SvcError('CORRUPT_DB', `slashing protection database has storage format ${format}, expected ${STORAGE_FORMAT}`, 500);
    }
    const corrupt = (key: string): SvcError => new SvcError('CORRUPT_DB', `slashing protection database value at ${key} is invalid`, 500);
    for await (const [k, v] of this.db.iterator({ gte: 'k:', lt: 'k:\xff' })) {
      const j = parseJson<KeyJson>(v, k);
      let key: ParsedKey;
      try {
        key = parsePubkey(j.pubkey, 'pubkey');
      } catch {
        throw corrupt(k);
      }
      if (DbKeys.key(key.id) !== k) throw corrupt(k);
      this.keys.set(key.id, { ...this.emptyState(key), slotMark: j.slot_watermark, sourceMark: j.source_watermark, targetMark: j.target_watermark });
    }
    for await (const [k, v] of this.db.iterator({ gte: 'b:', lt: 'b:\xff' })) {
      const st = this.keys.get(k.slice(2, 2 + 64));
      if (!st) throw corrupt(k);
      addBlock(st, parseJson<BlockRecord>(v, k));
    }
    for await (const [k, v] of this.db.iterator({ gte: 'a:', lt: 'a:\xff' })) {
      const st = this.keys.get(k.slice(2, 2 + 64));
      if (!st) throw corrupt(k);
      addAtt(st, parseJson<AttRecord>(v, k));
    }
  }
}

interface ParsedKey {
  /** SHA3-256 of the key, hex without 0x: the storage id. */
  id: string;
  pubkey: string;
  address: string;
}

function parsePubkey(value: unknown, field: string): ParsedKey {
  const bytes = parseHex(value, field, PUBLIC_KEY_BYTES);
  const id = sha3(bytes);
  return { id: toHex(id).slice(2), pubkey: toHex(bytes), address: toHex(id.slice(HASH_BYTES - 20)) };
}

function parseRoot(value: Uint8Array | string, field: string): string {
  if (value instanceof Uint8Array) {
    if (value.length !== HASH_BYTES) throw new MalformedError(field, `expected ${HASH_BYTES} bytes, got ${value.length}`);
    return toHex(value);
  }
  return toHex(parseHex(value, field, HASH_BYTES));
}

function checkNumber(n: number, field: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new MalformedError(field, 'expected a non-negative integer');
}

function parseJson<T>(raw: string, key: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new SvcError('CORRUPT_DB', `slashing protection database value at ${key} is not valid JSON`, 500);
  }
}

function putKey(st: KeyState): Op {
  const j: KeyJson = { pubkey: st.pubkey, slot_watermark: st.slotMark, source_watermark: st.sourceMark, target_watermark: st.targetMark };
  return { type: 'put', key: DbKeys.key(st.id), value: JSON.stringify(j) };
}

function addBlock(st: KeyState, r: BlockRecord): void {
  const list = st.blocks.get(r.slot);
  if (list) list.push(r);
  else st.blocks.set(r.slot, [r]);
}

function addAtt(st: KeyState, r: AttRecord): void {
  const list = st.atts.get(r.target);
  if (list) list.push(r);
  else st.atts.set(r.target, [r]);
}

function cloneRecords<T>(m: Map<number, T[]>): Map<number, T[]> {
  return new Map([...m].map(([k, v]) => [k, [...v]]));
}

function exportKey(st: KeyState): InterchangeRecord {
  const withRoot = <T extends object>(entry: T, root: string | null): T & { signing_root?: string } => (root === null ? entry : { ...entry, signing_root: root });
  const signed_blocks: InterchangeRecord['signed_blocks'] = [];
  if (st.slotMark !== null) {
    const L = st.slotMark;
    const atMark = st.blocks.get(L) ?? [];
    // Several or rootless records at the watermark (conflicting imports) become one rootless entry.
    signed_blocks.push(withRoot({ slot: String(L) }, atMark.length === 1 ? atMark[0]!.root : null));
    const above = [...st.blocks.keys()].filter((s) => s > L).sort((a, b) => a - b);
    for (const s of above) for (const r of st.blocks.get(s)!) signed_blocks.push(withRoot({ slot: String(s) }, r.root));
  }
  const signed_attestations: InterchangeRecord['signed_attestations'] = [];
  if (st.targetMark !== null && st.sourceMark !== null) {
    const S = st.sourceMark;
    const T = st.targetMark;
    const atMark = st.atts.get(T) ?? [];
    const exact = atMark.length === 1 && atMark[0]!.source === S ? atMark[0]!.root : null;
    // The entry at (S, T) carries both watermarks: an importer refuses targets <= T, and any
    // source < S with a target > T would surround it.
    signed_attestations.push(withRoot({ source_epoch: String(S), target_epoch: String(T) }, exact));
    const above = [...st.atts.keys()].filter((t) => t > T).sort((a, b) => a - b);
    for (const t of above) {
      for (const r of st.atts.get(t)!) signed_attestations.push(withRoot({ source_epoch: String(r.source), target_epoch: String(r.target) }, r.root));
    }
  }
  return { pubkey: st.pubkey, signed_blocks, signed_attestations };
}

interface ParsedEntry {
  key: ParsedKey;
  blocks: BlockRecord[];
  atts: AttRecord[];
}

function decimalField(value: unknown, field: string): number {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) throw new MalformedError(field, 'expected a base-10 integer string');
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new MalformedError(field, 'exceeds 2^53 - 1');
  return n;
}

function rootField(value: unknown, field: string): string | null {
  if (value === undefined) return null;
  const root = toHex(parseHex(value, field, HASH_BYTES));
  // EIP-3076 suggests the zero root as the "unknown" placeholder; no real signing root is zero.
  return root === ZERO_ROOT ? null : root;
}

/** Strictly validates a whole interchange document; duplicate pubkeys are merged. */
function parseInterchange(json: unknown, gvr: string): Map<string, ParsedEntry> {
  let doc = json;
  if (typeof json === 'string') {
    try {
      doc = JSON.parse(json);
    } catch {
      throw new MalformedError('interchange', 'not valid JSON');
    }
  }
  const o = requireObject(doc, 'interchange');
  rejectUnknownKeys(o, ['metadata', 'data'], 'interchange');
  const meta = requireObject(o.metadata, 'interchange.metadata');
  rejectUnknownKeys(meta, ['interchange_format_version', 'genesis_validators_root'], 'interchange.metadata');
  if (meta.interchange_format_version !== INTERCHANGE_FORMAT_VERSION) {
    throw new MalformedError('interchange.metadata.interchange_format_version', `expected "${INTERCHANGE_FORMAT_VERSION}", got ${JSON.stringify(meta.interchange_format_version) ?? 'nothing'}`);
  }
  const fileRoot = toHex(parseHex(meta.genesis_validators_root, 'interchange.metadata.genesis_validators_root', HASH_BYTES));
  if (fileRoot !== gvr) throw new SvcError('GENESIS_MISMATCH', `interchange is for genesis validators root ${fileRoot}, not ${gvr}`, 409);
  if (!Array.isArray(o.data)) throw new MalformedError('interchange.data', 'expected an array');
  const out = new Map<string, ParsedEntry>();
  o.data.forEach((item, i) => {
    const f = `interchange.data[${i}]`;
    const e = requireObject(item, f);
    rejectUnknownKeys(e, ['pubkey', 'signed_blocks', 'signed_attestations'], f);
    const key = parsePubkey(e.pubkey, `${f}.pubkey`);
    if (!Array.isArray(e.signed_blocks)) throw new MalformedError(`${f}.signed_blocks`, 'expected an array');
    if (!Array.isArray(e.signed_attestations)) throw new MalformedError(`${f}.signed_attestations`, 'expected an array');
    const entry = out.get(key.id) ?? { key, blocks: [], atts: [] };
    e.signed_blocks.forEach((b, j) => {
      const bf = `${f}.signed_blocks[${j}]`;
      const bo = requireObject(b, bf);
      rejectUnknownKeys(bo, ['slot', 'signing_root'], bf);
      entry.blocks.push({ slot: decimalField(bo.slot, `${bf}.slot`), root: rootField(bo.signing_root, `${bf}.signing_root`) });
    });
    e.signed_attestations.forEach((a, j) => {
      const af = `${f}.signed_attestations[${j}]`;
      const ao = requireObject(a, af);
      rejectUnknownKeys(ao, ['source_epoch', 'target_epoch', 'signing_root'], af);
      entry.atts.push({
        source: decimalField(ao.source_epoch, `${af}.source_epoch`),
        target: decimalField(ao.target_epoch, `${af}.target_epoch`),
        root: rootField(ao.signing_root, `${af}.signing_root`),
      });
    });
    out.set(key.id, entry);
  });
  return out;
}
