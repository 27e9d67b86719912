/**
 * The beacon's attestation journal: every attestation it accepts is stored here, one small synced
 * key each, before it is acknowledged; the fork-choice/ledger snapshot (written whole once per
 * slot and with every block) retires the entries it covers in the same atomic batch. So what was
 * acknowledged survives a SIGKILL, and the journal never holds more than one slot's votes.
 */
import { type Attestation, attestationFromJson, attestationToJson } from '../../core/types/attestation.js';
import { type ChainStore, WriteBatch } from '../execution/store.js';
import type { BeaconMetrics } from './metrics.js';

const PREFIX = 'a:';
/** Keys sort in acceptance order: a zero-padded sequence number. */
const keyOf = (seq: number): string => `${PREFIX}${String(seq).padStart(16, '0')}`;

/** One journaled attestation, or why its stored form could not be read back. */
export type JournalEntry = { key: string; attestation: Attestation } | { key: string; error: Error };

export class AttestationJournal {
  /** Keys not yet retired by a snapshot. */
  private keys: string[] = [];
  private nextSeq = 0;

  constructor(
    private readonly store: ChainStore,
    private readonly metrics: BeaconMetrics,
  ) {}

  /** Reads what a previous run journaled and did not retire, in acceptance order (call once, at open). */
  async load(): Promise<JournalEntry[]> {
    const stored = await this.store.scan<unknown>(PREFIX);
    const out: JournalEntry[] = stored.map(({ key, value }) => {
      try {
        return { key, attestation: attestationFromJson(value) };
      } catch (err) {
        return { key, error: err as Error };
      }
    });
    this.keys = stored.map((e) => e.key);
    const last = stored[stored.length - 1];
    if (last) this.nextSeq = Number(last.key.slice(PREFIX.length)) + 1;
    this.metrics.attestationJournal.set(this.keys.length);
    return out;
  }

  /** Stores an accepted attestation durably (synced) before the caller acknowledges it. */
  async append(att: Attestation): Promise<void> {
    const key = keyOf(this.nextSeq++);
    await this.store.write(new WriteBatch().put(key, attestationToJson(att)));
    this.keys.push(key);
    this.metrics.attestationJournal.set(this.keys.length);
  }

  /** Adds the deletion of every journaled key to `batch`, which must also carry the snapshot that covers them. */
  retireInto(batch: WriteBatch): WriteBatch {
    for (const key of this.keys) batch.del(key);
    this.keys = [];
    this.metrics.attestationJournal.set(0);
    return batch;
  }
}
