/**
 * The beacon's slashing detector and evidence pool (docs/beacon.md "Slashing").
 *
 * Detection: every signed header and attestation whose signature the beacon verified (blocks by
 * API, gossip or sync, attestations by API or gossip and those included in blocks) is indexed per
 * validator: headers by slot, votes by target epoch. A second, different header for a slot is a
 * double proposal; a second vote with the same target and other data is a double vote; a vote
 * that surrounds, or is surrounded by, a kept one is a surround vote. The index keeps the last
 * SLASHING_WINDOW_EPOCHS epochs (before the current one): memory holds only each vote's epochs and
 * data hash, and the signed messages are in LevelDB, read back when a conflict is found.
 *
 * Evidence (found here, submitted to POST /api/v1/slashing, gossiped on /service/slashings/v1 or
 * met in a block) is verified against the beacon's registry, persisted before it is acknowledged,
 * deduplicated by hash, announced once on /ws (`slashing`) and offered to proposers until a block
 * on the head's branch includes it or its validator is slashed.
 *
 * Keys (beacon LevelDB): `E:<hash>` evidence records, `P:<index>:<slot>` canonical signed headers
 * (hex), `A:<index>:<target epoch>` signed attestations (SSZ hex).
 */
import { bytesEqual, concatBytes, parseHex, toHex } from '../../core/codec/bytes.js';
import { sha3 } from '../../core/crypto/hash.js';
import { MAX_BLOCK_SLASHINGS, SLASHING_WINDOW_EPOCHS } from '../../core/constants.js';
import { type Genesis, epochOfSlot } from '../../core/genesis/genesis.js';
import {
  type SignedBlockHeader,
  PROPOSER_SLASHING_TYPE,
  type SlashingEvidence,
  type SlashingKind,
  SlashingError,
  type AccusedValidator,
  accusedIndex,
  attesterSlashing,
  checkBlockEvidence,
  checkConflict,
  decodeEvidence,
  encodeEvidence,
  evidenceHash,
  evidenceToJson,
  verifyEvidence,
} from '../../core/consensus/slashing.js';
import { type Attestation, decodeAttestation, encodeAttestation } from '../../core/types/attestation.js';
import { encodeSignedHeader } from '../../core/types/block.js';
import { AttestationDataSsz } from '../../core/types/ssz.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { SlashingEvidenceView, SlashingStatus } from '../../api/beacon.js';
import type { Logger } from '../../util/log.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import type { EventHub } from './events.js';
import type { BeaconMetrics } from './metrics.js';

/** Most evidence records kept per validator: one offence proves enough, a few cover reorgs. */
export const MAX_EVIDENCE_PER_VALIDATOR = 4;

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const K = {
  evidence: (hash: string) => `E:${hash}`,
  header: (v: number, slot: number) => `P:${pad(v, 8)}:${pad(slot, 16)}`,
  vote: (v: number, epoch: number) => `A:${pad(v, 8)}:${pad(epoch, 16)}`,
} as const;

/** What the pool stores per evidence. */
interface EvidenceRecord {
  hash: string;
  kind: SlashingKind;
  validator_index: number;
  /** Wire encoding (hex). */
  evidence: string;
  slot: number;
  epoch: number;
  /** Blocks that included it (any branch), oldest first. */
  included_in: string[];
  /** ISO 8601, when this node first had it. */
  received_at: string;
  /** Arrival order on this node (keys are hashes, so the store does not keep it). */
  seq: number;
}

/** Where new evidence came from (log field; gossip is not re-published by us). */
export type EvidenceSource = 'block_header' | 'attestation' | 'api' | 'gossip' | 'block';

/** What the chain gives the monitor. */
export interface SlashingContext {
  genesis: Genesis;
  store: ChainStore;
  metrics: BeaconMetrics;
  log: Logger;
  events?: EventHub | undefined;
  registry: () => readonly RegistryEntry[];
  /** Whether a block root is the head or one of its ancestors. */
  onHeadBranch: (root: string) => boolean;
  /** Current slot by the wall clock. */
  currentSlot: () => number;
}

interface VoteEntry {
  source: number;
  target: number;
  dataHash: Uint8Array;
}

export class SlashingMonitor {
  private readonly records = new Map<string, EvidenceRecord>();
  private seq = 0;
  private readonly byValidator = new Map<number, string[]>();
  /** Per validator: slot → canonical header bytes (the few per validator a window holds). */
  private readonly headers = new Map<number, Map<number, Uint8Array>>();
  /** Per validator: target epoch → the kept vote's epochs and data hash. */
  private readonly votes = new Map<number, Map<number, VoteEntry>>();
  /**
   * Index writes not yet in the store (key → hex value, null to delete). They ride on the chain's
   * next batch (each block, each slot's snapshot) instead of one synced write per vote inside
   * the lock; what a crash loses is rebuilt from the attestation journal on start-up.
   */
  private readonly unwritten = new Map<string, string | null>();
  /** Called with new evidence not received by gossip (the network publishes it). */
  onNew: ((ev: SlashingEvidence) => void) | undefined;

  constructor(private readonly c: SlashingContext) {
    for (const kind of ['double_proposal', 'double_vote', 'surround_vote'] as const) c.metrics.slashingsDetected.inc({ kind }, 0);
  }

  /** Loads the pool and the detection index from the store. */
  async load(): Promise<void> {
    // Keys are hashes: arrival order (what the pool and the listing keep) is `seq`.
    const stored = (await this.c.store.scan<EvidenceRecord>('E:')).map((e) => e.value);
    for (const r of stored.sort((x, y) => x.seq - y.seq)) this.remember(r);
    for (const { key, value } of await this.c.store.scan<string>('P:')) {
      const [v, slot] = key.slice(2).split(':').map(Number) as [number, number];
      this.headersOf(v).set(slot, parseHex(value, 'stored header'));
    }
    for (const { key, value } of await this.c.store.scan<string>('A:')) {
      const v = Number(key.slice(2, 10));
      const att = decodeAttestation(parseHex(value, 'stored vote'));
      this.votesOf(v).set(att.data.target.epoch, voteEntry(att));
    }
  }

  private remember(r: EvidenceRecord): void {
    this.records.set(r.hash, r);
    this.seq = Math.max(this.seq, r.seq);
    const list = this.byValidator.get(r.validator_index) ?? [];
    if (!list.includes(r.hash)) list.push(r.hash);
    this.byValidator.set(r.validator_index, list);
  }

  private headersOf(v: number): Map<number, Uint8Array> {
    let m = this.headers.get(v);
    if (!m) this.headers.set(v, (m = new Map()));
    return m;
  }

  private votesOf(v: number): Map<number, VoteEntry> {
    let m = this.votes.get(v);
    if (!m) this.votes.set(v, (m = new Map()));
    return m;
  }

  private slotOfTimestamp(seconds: number): number {
    return Math.floor((seconds - this.c.genesis.genesis_time) / this.c.genesis.config.slot_seconds);
  }

  private oldestKeptEpoch(): number {
    return epochOfSlot(this.c.genesis, this.c.currentSlot()) - SLASHING_WINDOW_EPOCHS;
  }

  /** Indexes a header whose signature verified; a different one already held for its slot is a double proposal. */
  async observeHeader(signed: SignedBlockHeader): Promise<void> {
    const v = signed.header.validatorIndex;
    const slot = this.slotOfTimestamp(signed.header.timestamp);
    if (epochOfSlot(this.c.genesis, Math.max(0, slot)) < this.oldestKeptEpoch()) return;
    const bytes = encodeSignedHeader(signed.header);
    const canonical = concatBytes(bytes, signed.signature);
    const held = this.headersOf(v).get(slot);
    if (held) {
      if (bytesEqual(held.subarray(0, bytes.length), bytes)) return;
      // The held header was verified when it arrived: the two canonical encodings are the evidence.
      await this.add(decodeEvidence(concatBytes(Uint8Array.of(PROPOSER_SLASHING_TYPE), held, canonical)), 'block_header');
      return;
    }
    this.headersOf(v).set(slot, canonical);
    this.unwritten.set(K.header(v, slot), toHex(canonical));
  }

  /** Indexes a vote whose signature verified; returns evidence when it conflicts with a kept vote. */
  async observeAttestation(att: Attestation): Promise<SlashingEvidence | undefined> {
    const v = att.validatorIndex;
    const t = att.data.target.epoch;
    if (t < this.oldestKeptEpoch()) return undefined;
    const mine = this.votesOf(v);
    const entry = voteEntry(att);
    const same = mine.get(t);
    if (same) {
      if (bytesEqual(same.dataHash, entry.dataHash)) return undefined;
      return this.conflict(att, t);
    }
    for (const [epoch, e] of mine) {
      if ((e.source < entry.source && entry.target < e.target) || (entry.source < e.source && e.target < entry.target)) return this.conflict(att, epoch);
    }
    mine.set(t, entry);
    this.unwritten.set(K.vote(v, t), toHex(encodeAttestation(att)));
    return undefined;
  }

  private async conflict(att: Attestation, keptEpoch: number): Promise<SlashingEvidence | undefined> {
    const key = K.vote(att.validatorIndex, keptEpoch);
    const stored = this.unwritten.has(key) ? this.unwritten.get(key) : await this.c.store.get<string>(key);
    if (!stored) return undefined;
    const ev = attesterSlashing(decodeAttestation(parseHex(stored, 'stored vote')), att);
    await this.add(ev, 'attestation');
    return ev;
  }

  /**
   * Verifies submitted evidence (API or gossip) against the registry and pools it. Returns
   * whether it was new; throws SlashingError for evidence that proves nothing or names a
   * validator that is unknown or already slashed.
   */
  async submit(ev: SlashingEvidence, source: 'api' | 'gossip'): Promise<{ status: 'added' | 'known' | 'redundant'; hash: string; kind: SlashingKind }> {
    const hash = toHex(evidenceHash(ev));
    const known = this.records.get(hash);
    if (known) return { status: 'known', hash, kind: known.kind };
    const index = accusedIndex(ev);
    const v = this.c.registry()[index];
    const kind = checkConflict(ev);
    if (!v) throw new SlashingError('UNKNOWN_VALIDATOR', `no validator with index ${index}`);
    verifyEvidence(ev, parseHex(v.public_key, 'public_key'), this.c.genesis.chain_id);
    if (v.slashed) throw new SlashingError('ALREADY_SLASHED', `validator ${index} is already slashed`);
    return { status: (await this.add(ev, source)) ? 'added' : 'redundant', hash, kind };
  }

  /**
   * Checks a block's evidence against the registry before the block is accepted (execution
   * checks it again against its own): registered, not slashed, not accused twice, verified.
   */
  checkBlock(evidence: readonly SlashingEvidence[]): void {
    const registry = this.c.registry();
    const lookup = (index: number): AccusedValidator | undefined => {
      const v = registry[index];
      return v && { slashed: v.slashed, publicKey: () => parseHex(v.public_key, 'public_key') };
    };
    // Pooled evidence was verified on arrival, and its hash commits to both signatures.
    checkBlockEvidence(evidence, lookup, this.c.genesis.chain_id, (ev) => this.records.has(toHex(evidenceHash(ev))));
  }

  /** Records the inclusion of a block's evidence (pooling what this node had not seen). */
  async onIncluded(evidence: readonly SlashingEvidence[], root: string): Promise<void> {
    for (const ev of evidence) {
      const hash = toHex(evidenceHash(ev));
      if (!this.records.has(hash)) await this.add(ev, 'block');
      const r = this.records.get(hash);
      if (!r || r.included_in.includes(root)) continue;
      r.included_in.push(root);
      await this.c.store.write(new WriteBatch().put(K.evidence(hash), r));
    }
  }

  /** Pools new evidence; false when it is not kept because the validator has enough already. */
  private async add(ev: SlashingEvidence, source: EvidenceSource): Promise<boolean> {
    const hash = toHex(evidenceHash(ev));
    if (this.records.has(hash)) return true;
    const index = accusedIndex(ev);
    if ((this.byValidator.get(index)?.length ?? 0) >= MAX_EVIDENCE_PER_VALIDATOR) {
      this.c.log.debug('slashing evidence not kept: the validator has enough already', { validator: index, hash });
      return false;
    }
    const kind = checkConflict(ev);
    const { slot, epoch } = this.when(ev);
    const record: EvidenceRecord = { hash, kind, validator_index: index, evidence: toHex(encodeEvidence(ev)), slot, epoch, included_in: [], received_at: new Date().toISOString(), seq: this.seq + 1 };
    // Durable before anyone hears of it.
    await this.c.store.write(new WriteBatch().put(K.evidence(hash), record));
    this.remember(record);
    this.c.metrics.slashingsDetected.inc({ kind });
    const address = this.c.registry()[index]?.address ?? null;
    this.c.log.warn('slashable offence', { kind, validator: index, hash, source });
    this.c.events?.publish('slashing', { kind, validator_index: index, validator: address, evidence_hash: hash, slot, epoch, evidence: evidenceToJson(ev) });
    if (source !== 'gossip') this.onNew?.(ev);
    return true;
  }

  // Proposals: the headers' slot; votes: the later target's vote (the double vote's common one).
  private when(ev: SlashingEvidence): { slot: number; epoch: number } {
    if (ev.type === 'proposer') {
      const slot = this.slotOfTimestamp(ev.header1.header.timestamp);
      return { slot, epoch: epochOfSlot(this.c.genesis, Math.max(0, slot)) };
    }
    const later = ev.attestation1.data.target.epoch >= ev.attestation2.data.target.epoch ? ev.attestation1 : ev.attestation2;
    return { slot: later.data.slot, epoch: later.data.target.epoch };
  }

  private status(r: EvidenceRecord): { status: SlashingStatus; block_hash: string | null } {
    const including = r.included_in.find((root) => this.c.onHeadBranch(root));
    if (including) return { status: 'included', block_hash: including };
    if (this.c.registry()[r.validator_index]?.slashed) return { status: 'superseded', block_hash: null };
    return { status: 'pending', block_hash: null };
  }

  private view(r: EvidenceRecord): SlashingEvidenceView {
    const ev = decodeEvidence(parseHex(r.evidence, 'stored evidence'));
    return { hash: r.hash, kind: r.kind, validator_index: r.validator_index, validator: this.c.registry()[r.validator_index]?.address ?? null, slot: r.slot, epoch: r.epoch, received_at: r.received_at, ...this.status(r), evidence: evidenceToJson(ev) };
  }

  /** Every evidence (oldest first), optionally only those with `status`. */
  list(status?: SlashingStatus): SlashingEvidenceView[] {
    const out = [...this.records.values()].map((r) => this.view(r));
    return status ? out.filter((v) => v.status === status) : out;
  }

  /** Evidence against one validator. */
  ofValidator(index: number): SlashingEvidenceView[] {
    return (this.byValidator.get(index) ?? []).map((h) => this.view(this.records.get(h)!));
  }

  /** One evidence by hash. */
  get(hash: string): SlashingEvidenceView | undefined {
    const r = this.records.get(hash);
    return r && this.view(r);
  }

  /** Pending evidence a proposer on the head's branch should include: one per validator, at most MAX_BLOCK_SLASHINGS. */
  forBlock(): SlashingEvidence[] {
    const out: SlashingEvidence[] = [];
    const accused = new Set<number>();
    for (const r of this.records.values()) {
      if (out.length >= MAX_BLOCK_SLASHINGS) break;
      if (accused.has(r.validator_index) || this.status(r).status !== 'pending') continue;
      // Already included on the head's branch by other evidence of the same validator is covered by `slashed`.
      accused.add(r.validator_index);
      out.push(decodeEvidence(parseHex(r.evidence, 'stored evidence')));
    }
    return out;
  }

  /** Slashed validators in the registry (the gauge). */
  registryChanged(registry: readonly RegistryEntry[]): void {
    this.c.metrics.slashedValidators.set(registry.filter((v) => v.slashed).length);
  }

  /** Drops index entries older than the window (costs the entries dropped plus one pass over the validators); written with the next flush. */
  prune(): void {
    const oldest = this.oldestKeptEpoch();
    if (oldest <= 0) return;
    const batch = { del: (key: string) => this.unwritten.set(key, null) };
    const spe = this.c.genesis.config.slots_per_epoch;
    for (const [v, m] of this.headers) {
      for (const slot of m.keys()) {
        if (Math.floor(slot / spe) >= oldest) continue;
        m.delete(slot);
        batch.del(K.header(v, slot));
      }
    }
    for (const [v, m] of this.votes) {
      for (const epoch of m.keys()) {
        if (epoch >= oldest) continue;
        m.delete(epoch);
        batch.del(K.vote(v, epoch));
      }
    }
  }

  /** Moves the index writes made since the last call into `batch` (written by the caller). */
  flush(batch: WriteBatch): WriteBatch {
    for (const [key, value] of this.unwritten) {
      if (value === null) batch.del(key);
      else batch.put(key, value);
    }
    this.unwritten.clear();
    return batch;
  }
}

function voteEntry(att: Attestation): VoteEntry {
  return { source: att.data.source.epoch, target: att.data.target.epoch, dataHash: sha3(AttestationDataSsz.serialize(att.data)) };
}
