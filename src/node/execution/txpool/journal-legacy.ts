/**
 * The pool journal of earlier versions: one `p:<tx hash>` key per transaction in the chain
 * database, valued as the admission time then the signed envelope. PoolJournal.open moves any
 * such keys into the journal file and deletes them, so an older data directory keeps its
 * pending transactions.
 */
import { toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import type { Logger } from '../../../util/log.js';
import { type BatchOp, type ChainStore } from '../../shared/store.js';
import { isRecordableHash, type JournalEntry } from './journal-file.js';
import { Keys } from '../store.js';

/** Bytes before the envelope in a legacy `p:` value: the admission time, u64 little-endian Unix ms. */
const AT_BYTES = 8;

/**
 * Stored value of a legacy `p:` journal key (before the journal file): the admission time, then
 * the signed envelope. Kept to read data directories written by earlier versions, and for tests.
 */
export function encodeJournalValue(envelope: Uint8Array, receivedAt: number): Uint8Array {
  const out = new Uint8Array(AT_BYTES + envelope.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(Math.max(0, Math.trunc(receivedAt))), true);
  out.set(envelope, AT_BYTES);
  return out;
}

/** The journal the legacy keys move into. */
export interface LegacyUpgradeTarget {
  /** Whether the journal already holds `hash`. */
  has(hash: string): boolean;
  /** Appends `entry` and resolves once it is synced. */
  add(entry: JournalEntry): Promise<void>;
}

/**
 * Moves the legacy `p:` keys into the journal (durably) and then deletes them: a crash in
 * between only makes the next start move them again. Runs once per data directory in effect;
 * afterwards the scan finds no key. Returns the entries the file cannot hold (not the envelope
 * of their hash), which the journal hands to the replay.
 */
export async function upgradeLegacyKeys(store: ChainStore, log: Logger, journal: LegacyUpgradeTarget): Promise<JournalEntry[]> {
  const prefix = Keys.poolTx('');
  const found: Array<{ key: string; entry?: JournalEntry }> = [];
  const rows = store.db.iterator({ gte: prefix, lt: prefix + '\xff', valueEncoding: 'view' } as never) as AsyncIterable<[string, Uint8Array]>;
  for await (const [key, value] of rows) {
    const hash = key.slice(prefix.length);
    // A hash no record can hold was never written by admission: there is nothing to keep.
    if (!isRecordableHash(hash)) {
      found.push({ key });
      continue;
    }
    // A value too short to hold a time keeps an empty envelope: the replay drops it as malformed, with a log line.
    const at = value.length < AT_BYTES ? 0 : Number(new DataView(value.buffer, value.byteOffset, value.byteLength).getBigUint64(0, true));
    found.push({ key, entry: { hash, receivedAt: at, envelope: value.length < AT_BYTES ? new Uint8Array(0) : value.slice(AT_BYTES) } });
  }
  if (found.length === 0) return [];
  const moved = found.flatMap((f) => (f.entry && !journal.has(f.entry.hash) ? [f.entry] : []));
  const whole: JournalEntry[] = [];
  const broken: JournalEntry[] = [];
  for (const e of moved) (toHex(sha3(e.envelope)) === e.hash ? whole : broken).push(e);
  if (whole.length > 0) await Promise.all(whole.map((e) => journal.add(e)));
  await store.db.batch(found.map(({ key }): BatchOp => ({ type: 'del', key })) as never, { sync: true } as never);
  log.info('pool journal upgraded from database keys', { keys: found.length, moved: whole.length, not_envelopes: broken.length });
  // Not the envelope of its hash, so the file would skip it: handed to the replay alone, which
  // drops it with a log line and a count, as it did any undecodable key.
  return broken;
}
