/**
 * The beacon's attestation journal: every attestation it accepts is stored here, one small key
 * each, synced before it is acknowledged; the fork-choice snapshot (written whole once per
 * slot and with every block) retires the entries it covers in the same atomic batch. So what was
 * acknowledged survives a SIGKILL, and the journal never holds more than one slot's votes.
 *
 * Appends and snapshots share one group-commit queue: concurrent attestations share a sync, and a
 * snapshot is written after every append queued before it, so it never deletes an entry that a
 * later write would bring back.
 */
import { type Attestation, attestationFromJson, attestationToJson } from '../../core/types/attestation.js';
import { GroupCommit } from '../../util/group-commit.js';
import { type BatchOp, type ChainStore, WriteBatch } from '../shared/store.js';
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
  private readonly commits: GroupCommit<BatchOp>;

  constructor(
    private readonly store: ChainStore,
    private readonly metrics: BeaconMetrics,
  ) {
    this.commits = new GroupCommit((ops) => store.db.batch(ops as never, { sync: true } as never));
  }

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

  /**
   * Queues an accepted attestation (call in acceptance order); resolves once it is synced, so the
   * caller can acknowledge it. Attestations accepted meanwhile share the sync.
   */
  append(att: Attestation): Promise<void> {
    const key = keyOf(this.nextSeq++);
    this.keys.push(key);
    this.metrics.attestationJournal.set(this.keys.length);
    return this.commits.submit(new WriteBatch().put(key, attestationToJson(att)).ops);
  }

  /**
   * Writes `batch`, which must carry the snapshot covering every attestation appended so far,
   * with those entries retired, after every append queued before it.
   */
  writeSnapshot(batch: WriteBatch): Promise<void> {
    for (const key of this.keys) batch.del(key);
    this.keys = [];
    this.metrics.attestationJournal.set(0);
    return this.commits.submit(batch.ops);
  }
}
