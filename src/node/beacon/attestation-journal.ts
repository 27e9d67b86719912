/**
 * The beacon's attestation journal: every attestation it accepts is stored here, one small key
 * each, synced before it is acknowledged; the fork-choice snapshot (written whole once per
 * slot and with every block) retires, in the same atomic batch, the entries that can no longer
 * be included in a block (target epoch + 1 has passed). So what was acknowledged survives a
 * SIGKILL, both in fork choice and in the pool a proposer packs, and the journal never holds more
 * than two epochs' votes.
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
  /** Entries not yet retired, with the target epoch that decides when they may be. */
  private entries: Array<{ key: string; epoch: number }> = [];
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
    // An unreadable entry gets epoch -1: the next snapshot retires it.
    this.entries = out.map((e) => ({ key: e.key, epoch: 'attestation' in e ? e.attestation.data.target.epoch : -1 }));
    const last = stored[stored.length - 1];
    if (last) this.nextSeq = Number(last.key.slice(PREFIX.length)) + 1;
    this.metrics.attestationJournal.set(this.entries.length);
    return out;
  }

  /**
   * Queues an accepted attestation (call in acceptance order); resolves once it is synced, so the
   * caller can acknowledge it. Attestations accepted meanwhile share the sync.
   */
  append(att: Attestation): Promise<void> {
    const key = keyOf(this.nextSeq++);
    this.entries.push({ key, epoch: att.data.target.epoch });
    this.metrics.attestationJournal.set(this.entries.length);
    return this.commits.submit(new WriteBatch().put(key, attestationToJson(att)).ops);
  }

  /**
   * Writes `batch`, which must carry the snapshot covering every attestation appended so far,
   * after every append queued before it, retiring the entries whose target epoch is below
   * `keepFromEpoch`. The others stay: the snapshot holds their fork-choice effect, but only the
   * journal holds them signed, as a proposer must include them.
   */
  writeSnapshot(batch: WriteBatch, keepFromEpoch: number): Promise<void> {
    const kept: Array<{ key: string; epoch: number }> = [];
    for (const e of this.entries) {
      if (e.epoch < keepFromEpoch) batch.del(e.key);
      else kept.push(e);
    }
    this.entries = kept;
    this.metrics.attestationJournal.set(kept.length);
    return this.commits.submit(batch.ops);
  }
}
