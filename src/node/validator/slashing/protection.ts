/**
 * Slashing protection for the validator client (EIP-3076 semantics, interchange format v5).
 *
 * Before the client signs a block header or an attestation it asks this database; an accepted
 * message is written to LevelDB with `sync` before the call returns, so a signature can only exist
 * once its record is durable, and a crash right after signing never forgets it.
 *
 * Model, per validator key:
 * - the signed messages themselves (block: slot + signing root; attestation: source, target and
 *   signing root; a root may be unknown when imported without one), kept for a horizon (below);
 * - three low watermarks: slot L, source S, target T. A block needs `slot >= L` and no other
 *   block at its slot, an attestation `source >= S` and `target > T`, unless it repeats a
 *   recorded message exactly. Signing sets them from the first message; imports raise them to the
 *   file's maxima (EIP-3076's "minimal" import), so an import never leaves a gap of unknown
 *   history the client could sign into.
 * - invariant: every recorded attestation with `target <= T` has `source <= S`. Records under the
 *   watermarks therefore can no longer decide anything except exact repeats, which is what lets
 *   `exportInterchange` write only the records above the watermarks plus one entry at them.
 *
 * Horizon: a key keeps only its last SLASHING_PROTECTION_HISTORY_EPOCHS of votes and
 * SLASHING_PROTECTION_HISTORY_SLOTS of blocks, older records deleted in the batch that raises the
 * watermarks over them; history.ts holds that logic and the proof that it weakens no
 * refusal. Memory, start-up and each vote's surround scan are bounded per key.
 *
 * Keys are stored by SHA3-256 of the 1,952-byte ML-DSA-65 public key (whose last 20 bytes are the
 * validator's address, used in messages); the interchange carries the full key.
 */
import type { AbstractLevel } from 'abstract-level';
import { ClassicLevel } from 'classic-level';
import { mkdir } from 'node:fs/promises';
import { SLASHING_PROTECTION_HISTORY_EPOCHS, SLASHING_PROTECTION_HISTORY_SLOTS, SLASHING_PROTECTION_PRUNE_EPOCHS } from '../../../core/constants.js';
import { MalformedError, SvcError } from '../../../core/errors.js';
import { ValidatorError } from '../errors.js';
import {
  type AttRecord,
  type BlockRecord,
  type InterchangeRecord,
  type InterchangeV5,
  INTERCHANGE_FORMAT_VERSION,
  type ParsedKey,
  exportKey,
  parseInterchange,
  parsePubkey,
  parseRoot,
} from './interchange.js';
import {
  type KeyState,
  addAtt,
  addBlock,
  applyAttPrune,
  applyBlockPrune,
  cloneRecords,
  emptyKeyState,
  mayConflict,
  planAttPrune,
  planBlockPrune,
} from './history.js';

export { INTERCHANGE_FORMAT_VERSION, type InterchangeRecord, type InterchangeV5 } from './interchange.js';

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
export class SlashingProtectionError extends SvcError<'SLASHING_PROTECTION'> {
  /** The rule that refused. */
  readonly rule: SlashingRule;

  constructor(rule: SlashingRule, message: string) {
    // 409: the request conflicts with what this key already signed.
    super('SLASHING_PROTECTION', message);
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

/** What an import changed. */
export interface ImportSummary {
  /** Distinct validator keys in the file. */
  validators: number;
  /** Block and attestation records that were not in the database yet (and not below the horizon). */
  blocksAdded: number;
  attestationsAdded: number;
}

/** Records held in memory (and on disk) over every key. */
export interface HeldRecords {
  keys: number;
  blocks: number;
  attestations: number;
}

type Db = AbstractLevel<string | Uint8Array | Buffer, string, string>;

interface KeyJson {
  pubkey: string;
  slot_watermark: number | null;
  source_watermark: number | null;
  target_watermark: number | null;
}

const NUMBER_WIDTH = 16;
const pad = (n: number): string => String(n).padStart(NUMBER_WIDTH, '0');
const rootPart = (root: string | null): string => (root === null ? 'none' : root.slice(2));

/**
 * Key layout: `k:` key state, `b:` blocks, `a:` attestations (ids and numbers fixed-width, so a
 * key's records sort by slot, or by target then source, and a horizon is one key range).
 */
const DbKeys = {
  format: 'm:format',
  key: (id: string) => `k:${id}`,
  blockPrefix: (id: string) => `b:${id}:`,
  attPrefix: (id: string) => `a:${id}:`,
  block: (id: string, r: BlockRecord) => `b:${id}:${pad(r.slot)}:${rootPart(r.root)}`,
  att: (id: string, r: AttRecord) => `a:${id}:${pad(r.target)}:${pad(r.source)}:${rootPart(r.root)}`,
} as const;

const STORAGE_FORMAT = 1;

type Op = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };

/** The validator client's slashing-protection database. */
export class SlashingProtectionDb {
  private readonly keys = new Map<string, KeyState>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly db: Db) {}

  /** Opens (creating if needed) the database and loads each key's history within the horizons, pruning older records. */
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
      throw new ValidatorError('DB_OPEN_FAILED', `cannot open the slashing protection database in ${where}: ${cause} (is another validator client using it?)`);
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

      const next = st ? { ...st } : emptyKeyState(key);
      const rec: BlockRecord = { slot, root };
      if (next.slotMark === null) next.slotMark = slot;
      const prune = planBlockPrune(next, rec);
      if (prune) next.slotMark = prune.slot;
      const ops: Op[] = [{ type: 'put', key: DbKeys.block(key.id, rec), value: JSON.stringify(rec) }];
      for (const r of prune?.dropped ?? []) ops.push({ type: 'del', key: DbKeys.block(key.id, r) });
      if (next.slotMark !== st?.slotMark) ops.push(putKey(next));
      await this.write(ops);
      // Memory changes only after the write succeeded (the copy shares the record maps).
      addBlock(next, rec);
      if (prune) applyBlockPrune(next, prune);
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
      // The scan is bounded by the horizon (at most 512 + 32 targets held per key; more records
      // per target only after importing conflicting history) and skipped for an honest next vote.
      if (st && mayConflict(st, s, t)) {
        for (const list of st.atts.values()) {
          for (const r of list) {
            if (s < r.source && r.target < t) refuse('SURROUNDING_VOTE', `it surrounds the signed attestation with source ${r.source} and target ${r.target} (surround vote)`);
            if (r.source < s && t < r.target) refuse('SURROUNDED_VOTE', `it is surrounded by the signed attestation with source ${r.source} and target ${r.target} (surround vote)`);
          }
        }
      }
      if (st) {
        if (st.sourceMark !== null && s < st.sourceMark) refuse('SOURCE_BELOW_WATERMARK', `the source epoch is below the low watermark, source epoch ${st.sourceMark}`);
        if (st.targetMark !== null && t <= st.targetMark) refuse('TARGET_BELOW_WATERMARK', `the target epoch is at or below the low watermark, target epoch ${st.targetMark}`);
      }

      const next = st ? { ...st } : emptyKeyState(key);
      const rec: AttRecord = { source: s, target: t, root };
      if (next.targetMark === null) {
        next.sourceMark = s;
        next.targetMark = t;
      }
      const prune = planAttPrune(next, rec, SLASHING_PROTECTION_PRUNE_EPOCHS);
      if (prune) {
        next.targetMark = prune.target;
        next.sourceMark = prune.source;
      }
      const ops: Op[] = [{ type: 'put', key: DbKeys.att(key.id, rec), value: JSON.stringify(rec) }];
      for (const r of prune?.dropped ?? []) ops.push({ type: 'del', key: DbKeys.att(key.id, r) });
      if (next.targetMark !== st?.targetMark || next.sourceMark !== st?.sourceMark) ops.push(putKey(next));
      await this.write(ops);
      addAtt(next, rec);
      if (prune) applyAttPrune(next, prune);
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

  /** How many keys and records the database holds: bounded by the horizons, whatever the chain's length. */
  held(): HeldRecords {
    const out: HeldRecords = { keys: this.keys.size, blocks: 0, attestations: 0 };
    for (const st of this.keys.values()) {
      for (const list of st.blocks.values()) out.blocks += list.length;
      for (const list of st.atts.values()) out.attestations += list.length;
    }
    return out;
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
   * watermark to the largest source of any record at or below the new target watermark; then the
   * horizons prune as signing does, so a long file leaves only its last epochs. Importing the
   * same file twice changes nothing the second time. Import while the client is stopped.
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
          : emptyKeyState(entry.key);
        const newBlocks = new Set<BlockRecord>();
        const newAtts = new Set<AttRecord>();
        for (const b of entry.blocks) {
          if (next.blocks.get(b.slot)?.some((r) => r.root === b.root)) continue;
          addBlock(next, b);
          newBlocks.add(b);
        }
        for (const a of entry.atts) {
          if (next.atts.get(a.target)?.some((r) => r.source === a.source && r.root === a.root)) continue;
          addAtt(next, a);
          newAtts.add(a);
        }
        if (entry.blocks.length > 0) {
          const maxSlot = entry.blocks.reduce((m, b) => Math.max(m, b.slot), 0);
          if (next.slotMark === null || maxSlot > next.slotMark) next.slotMark = maxSlot;
        }
        if (entry.atts.length > 0) {
          const maxTarget = entry.atts.reduce((m, a) => Math.max(m, a.target), 0);
          const target = next.targetMark === null ? maxTarget : Math.max(next.targetMark, maxTarget);
          // Keep the invariant: nothing at or below the target watermark has a larger source.
          let source = next.sourceMark ?? 0;
          for (const [t, list] of next.atts) if (t <= target) for (const r of list) source = Math.max(source, r.source);
          next.targetMark = target;
          next.sourceMark = source;
        }
        const blockPrune = planBlockPrune(next, null);
        if (blockPrune) applyBlockPrune(next, blockPrune);
        // An import is rare and may bring a long history: prune all that is due at once.
        const attPrune = planAttPrune(next, null, 1);
        if (attPrune) applyAttPrune(next, attPrune);
        // A record of the file already below the horizon is neither written nor counted.
        const keyOps: Op[] = [];
        for (const r of blockPrune?.dropped ?? []) {
          if (!newBlocks.delete(r)) keyOps.push({ type: 'del', key: DbKeys.block(next.id, r) });
        }
        for (const r of attPrune?.dropped ?? []) {
          if (!newAtts.delete(r)) keyOps.push({ type: 'del', key: DbKeys.att(next.id, r) });
        }
        for (const r of newBlocks) keyOps.push({ type: 'put', key: DbKeys.block(next.id, r), value: JSON.stringify(r) });
        for (const r of newAtts) keyOps.push({ type: 'put', key: DbKeys.att(next.id, r), value: JSON.stringify(r) });
        blocksAdded += newBlocks.size;
        attestationsAdded += newAtts.size;
        const marksMoved = next.slotMark !== (st?.slotMark ?? null) || next.targetMark !== (st?.targetMark ?? null) || next.sourceMark !== (st?.sourceMark ?? null);
        if (keyOps.length > 0 || marksMoved) {
          ops.push(...keyOps, putKey(next));
          updated.push(next);
        }
      }
      await this.write(ops);
      for (const st of updated) this.keys.set(st.id, st);
      return { validators: parsed.size, blocksAdded, attestationsAdded };
    });
  }

  /** Runs `fn` after every earlier operation: check-then-record must not interleave. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new ValidatorError('SLASHING_DB_CLOSED', 'the slashing protection database is closed');
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
      throw new ValidatorError('SLASHING_DB_WRITE_FAILED', `cannot write the slashing protection database: ${(err as Error).message}`, { cause: err });
    }
  }

  private async load(): Promise<void> {
    const format = await this.db.get(DbKeys.format);
    if (format === undefined) {
      await this.db.put(DbKeys.format, String(STORAGE_FORMAT), { sync: true } as never);
    } else if (format !== String(STORAGE_FORMAT)) {
      throw new ValidatorError('CORRUPT_DB', `slashing protection database has storage format ${format}, expected ${STORAGE_FORMAT}`);
    }
    for await (const [k, v] of this.db.iterator({ gte: 'k:', lt: 'k:\xff' })) {
      const j = parseJson<KeyJson>(v, k);
      let key: ParsedKey;
      try {
        key = parsePubkey(j.pubkey, 'pubkey');
      } catch {
        throw corrupt(k);
      }
      if (DbKeys.key(key.id) !== k) throw corrupt(k);
      this.keys.set(key.id, { ...emptyKeyState(key), slotMark: j.slot_watermark, sourceMark: j.source_watermark, targetMark: j.target_watermark });
    }
    // Records of a key without its state would be history nobody checks against: refuse to start.
    await this.checkOwners('b:');
    await this.checkOwners('a:');
    for (const st of this.keys.values()) {
      await this.loadBlocks(st);
      await this.loadAtts(st);
    }
  }

  /** Every record under `kind` belongs to a known key: one seek per key id, not a scan of the records. */
  private async checkOwners(kind: 'a:' | 'b:'): Promise<void> {
    let from: string = kind;
    for (;;) {
      const [k] = await this.db.keys({ gte: from, lt: kind + '\xff', limit: 1 }).all();
      if (k === undefined) return;
      const id = k.slice(kind.length, kind.length + 64);
      if (!this.keys.has(id)) throw corrupt(k);
      // ';' sorts right after ':', so this skips every record of the key.
      from = `${kind}${id};`;
    }
  }

  /**
   * Reads a key's blocks within the slot horizon and deletes older ones under a raised watermark.
   * A database written before the horizon existed (every block since genesis) is pruned here
   * once: the old records are only counted, never held.
   */
  private async loadBlocks(st: KeyState): Promise<void> {
    const prefix = DbKeys.blockPrefix(st.id);
    const newest = await this.lastNumber(prefix);
    if (newest === undefined) return;
    const horizon = Math.max(0, newest - SLASHING_PROTECTION_HISTORY_SLOTS);
    for await (const [k, v] of this.db.iterator({ gte: prefix + pad(horizon), lt: prefix + '\xff' })) addBlock(st, parseJson<BlockRecord>(v, k));
    const below = { gte: prefix, lt: prefix + pad(horizon) };
    const stale = (await this.db.keys({ ...below, limit: 1 }).all()).length > 0;
    const slot = Math.max(st.slotMark ?? horizon, horizon);
    // The raised watermark is durable before the records under it go.
    if (slot !== st.slotMark) {
      st.slotMark = slot;
      await this.db.put(DbKeys.key(st.id), putKey(st).value, { sync: true } as never);
    }
    if (stale) await this.db.clear(below);
  }

  /** As loadBlocks for votes; the source watermark rises to the largest source of any vote at or below the new target watermark. */
  private async loadAtts(st: KeyState): Promise<void> {
    const prefix = DbKeys.attPrefix(st.id);
    const newest = await this.lastNumber(prefix);
    if (newest === undefined) return;
    const horizon = Math.max(0, newest - SLASHING_PROTECTION_HISTORY_EPOCHS);
    for await (const [k, v] of this.db.iterator({ gte: prefix + pad(horizon), lt: prefix + '\xff' })) addAtt(st, parseJson<AttRecord>(v, k));
    const below = { gte: prefix, lt: prefix + pad(horizon) };
    const target = Math.max(st.targetMark ?? horizon, horizon);
    let source = st.sourceMark ?? 0;
    let stale = false;
    // Streamed from the keys (target, then source): a long old history is read once, not held.
    for await (const k of this.db.keys(below)) {
      stale = true;
      source = Math.max(source, keyNumber(k, prefix.length + NUMBER_WIDTH + 1));
    }
    for (const [t, list] of st.atts) if (t <= target) for (const r of list) source = Math.max(source, r.source);
    if (target !== st.targetMark || source !== st.sourceMark) {
      st.targetMark = target;
      st.sourceMark = source;
      await this.db.put(DbKeys.key(st.id), putKey(st).value, { sync: true } as never);
    }
    if (stale) await this.db.clear(below);
  }

  /** The slot (or target) in the last record key under `prefix`, if any. */
  private async lastNumber(prefix: string): Promise<number | undefined> {
    const [last] = await this.db.keys({ gte: prefix, lt: prefix + '\xff', reverse: true, limit: 1 }).all();
    return last === undefined ? undefined : keyNumber(last, prefix.length);
  }
}

function corrupt(key: string): SvcError {
  return new ValidatorError('CORRUPT_DB', `slashing protection database value at ${key} is invalid`);
}

/** The fixed-width number at `offset` of a record key. */
function keyNumber(key: string, offset: number): number {
  const digits = key.slice(offset, offset + NUMBER_WIDTH);
  if (!/^[0-9]{16}$/.test(digits)) throw corrupt(key);
  return Number(digits);
}

function checkNumber(n: number, field: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new MalformedError(field, 'expected a non-negative integer');
}

function parseJson<T>(raw: string, key: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new ValidatorError('CORRUPT_DB', `slashing protection database value at ${key} is not valid JSON`);
  }
}

function putKey(st: KeyState): { type: 'put'; key: string; value: string } {
  const j: KeyJson = { pubkey: st.pubkey, slot_watermark: st.slotMark, source_watermark: st.sourceMark, target_watermark: st.targetMark };
  return { type: 'put', key: DbKeys.key(st.id), value: JSON.stringify(j) };
}
