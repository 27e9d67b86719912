/**
 * Attestations through the beacon: the vote a validator should cast, received votes (verified,
 * counted, pooled, journaled before they are acknowledged), votes included in blocks, and the
 * journal's replay at start.
 */
import { parseHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { epochOfSlot, type Genesis } from '../../core/genesis/genesis.js';
import { type Attestation, verifyAttestation } from '../../core/types/attestation.js';
import type { AttestationDataView } from '../../api/beacon.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { Logger } from '../../util/log.js';
import type { AttestationJournal } from './attestation-journal.js';
import type { AttestationPool } from './attestation-pool.js';
import { BeaconError } from './errors.js';
import { type CheckpointHex, type ForkChoice, toForkChoiceAttestation } from './forkchoice/fork-choice.js';
import type { LightStore } from './light.js';
import type { BeaconMetrics } from './metrics.js';
import type { SlashingMonitor } from './slashing.js';

/** What attestation handling reads and feeds; `registry` and `light` are read at each use. */
export interface AttestationDeps {
  genesis: Genesis;
  forkChoice: ForkChoice;
  slashing: SlashingMonitor;
  pool: AttestationPool;
  journal: AttestationJournal;
  metrics: BeaconMetrics;
  log: Logger;
  registry(): readonly RegistryEntry[];
  light(): LightStore;
  currentSlot(): number;
}

/** A received attestation's outcome: applied ones are durable once `durable` resolves. */
export type ReceivedAttestation = { status: 'applied'; durable: Promise<void>; validator: string } | { status: 'duplicate' };

/** Verifies, counts and journals attestations; builds the data validators vote for. */
export class Attestations {
  /** Handling over the chain's fork choice, pool and journal. */
  constructor(private readonly deps: AttestationDeps) {}

  /**
   * What a validator attesting at `slot` votes for: the head as of that slot, and the FFG source
   * and target. A validator that runs late (a loaded machine) may ask after a later slot's block
   * arrived; a vote for a block after its own slot is invalid, so it gets the head's latest
   * ancestor at or before `slot`, as Ethereum's produceAttestationData does.
   */
  data(slot: number): AttestationDataView {
    const fc = this.deps.forkChoice;
    if (slot > this.deps.currentSlot()) throw new BeaconError('FUTURE_SLOT', `slot ${slot} has not started yet`);
    const head = fc.blockAtSlot(fc.head(), slot);
    const epoch = epochOfSlot(this.deps.genesis, slot);
    return { slot, beacon_block_root: head, source: this.sourceFor(head, epoch), target: { epoch, root: fc.checkpointFor(head, epoch) } };
  }

  /**
   * Verifies and counts a received attestation, pools it and queues its journal entry; the
   * caller holds the chain's lock, so journal order is acceptance order. Throws BeaconError
   * (UNKNOWN_VALIDATOR, FUTURE_SLOT, INVALID_SIGNATURE, SLASHABLE_ATTESTATION).
   */
  async receive(att: Attestation): Promise<ReceivedAttestation> {
    const { forkChoice, metrics } = this.deps;
    const v = this.deps.registry()[att.validatorIndex];
    if (!v || !v.active) throw new BeaconError('UNKNOWN_VALIDATOR', `no active validator with index ${att.validatorIndex}`);
    if (att.data.slot > this.deps.currentSlot()) throw new BeaconError('FUTURE_SLOT', `attestation slot ${att.data.slot} has not started yet`);
    const t = performance.now();
    const ok = verifyAttestation(att, parseHex(v.public_key, 'public_key'), this.deps.genesis.chain_id);
    metrics.signature(performance.now() - t, ok);
    if (!ok) throw new BeaconError('INVALID_SIGNATURE', 'attestation signature verification failed');
    // The detector holds the signed votes fork choice does not: it builds (and announces) the evidence.
    await this.deps.slashing.observeAttestation(att);
    const outcome = forkChoice.onAttestation(toForkChoiceAttestation(att));
    metrics.attestationsReceived.inc();
    if (outcome.status === 'slashable') {
      throw new BeaconError('SLASHABLE_ATTESTATION', `attestation is a ${outcome.evidence.kind.replace('_', ' ')} by validator ${att.validatorIndex}`);
    }
    if (outcome.status === 'applied' || outcome.status === 'duplicate') this.deps.light().observe(att, forkChoice.finalized().epoch);
    if (outcome.status !== 'applied') return { status: outcome.status };
    this.deps.pool.add(att);
    // Queued under the lock, so journal order is acceptance order; awaited outside it, so
    // attestations arriving together share one synced write instead of one each.
    const durable = this.deps.journal.append(att);
    return { status: outcome.status, durable, validator: v.address };
  }

  /**
   * Counts the votes a block includes. Included votes count in fork choice like received ones;
   * one that fork choice cannot use (names a block not held, conflicts with a recorded vote) is
   * still validly included, since inclusion rules do not depend on any node's fork-choice state.
   */
  applyIncluded(atts: readonly Attestation[]): void {
    const { forkChoice, log } = this.deps;
    for (const att of atts) {
      try {
        const outcome = forkChoice.onAttestation(toForkChoiceAttestation(att));
        if (outcome.status === 'applied' || outcome.status === 'duplicate') this.deps.light().observe(att, forkChoice.finalized().epoch);
        // The detector (which holds the signed votes) turns it into evidence and announces it.
        if (outcome.status === 'slashable') log.warn('slashable attestation included in a block', { validator: att.validatorIndex, kind: outcome.evidence.kind });
      } catch (err) {
        if (!(err instanceof SvcError)) throw err;
        log.debug('included attestation not counted by fork choice', { validator: att.validatorIndex, code: err.code, error: err.message });
      }
    }
  }

  /**
   * Re-applies the journal at start. The journal holds every acknowledged attestation that can
   * still be included: re-applied in acceptance order, those after the last snapshot get their
   * fork-choice votes back, and all go back into the proposer's pool. It holds two epochs' votes
   * at most (the chain's snapshot retires older entries), so this is cheap at any chain length.
   */
  async replayJournal(): Promise<void> {
    const { forkChoice, log } = this.deps;
    const entries = await this.deps.journal.load();
    let applied = 0;
    for (const e of entries) {
      try {
        if ('error' in e) throw e.error;
        const att = e.attestation;
        const v = this.deps.registry()[att.validatorIndex];
        if (!v) throw new BeaconError('UNKNOWN_VALIDATOR', `no validator with index ${att.validatorIndex}`);
        // Its signature was checked before it was journaled; only the effects are redone (the
        // slashing index included: its entries since the last snapshot were not written yet).
        await this.deps.slashing.observeAttestation(att);
        const status = forkChoice.onAttestation(toForkChoiceAttestation(att)).status;
        // A duplicate was already in the snapshot; either way it is includable again.
        if (status === 'applied' || status === 'duplicate') {
          this.deps.pool.add(att);
          this.deps.light().observe(att, forkChoice.finalized().epoch);
        }
        if (status === 'applied') applied++;
      } catch (err) {
        log.warn('journaled attestation could not be re-applied; dropped', { key: e.key, error: (err as Error).message });
      }
    }
    if (entries.length > 0) log.info('attestations re-applied from the journal', { journaled: entries.length, applied });
  }

  /**
   * FFG source for a vote with target `epoch`: the latest justified checkpoint before `epoch` on
   * `head`'s branch. Justification takes effect as soon as the votes arrive (no epoch-boundary
   * processing), so late in an epoch the best justified checkpoint may be that epoch itself, and a
   * vote whose source equals its target is invalid; step back to the previous justified one (the
   * finalized checkpoint is justified, so this ends there at the latest).
   */
  private sourceFor(head: string, epoch: number): CheckpointHex {
    const fc = this.deps.forkChoice;
    const best = fc.justified();
    if (best.epoch < epoch || epoch === 0) return best;
    const fin = fc.finalized();
    for (let e = epoch - 1; e > fin.epoch; e--) {
      const cp = { epoch: e, root: fc.checkpointFor(head, e) };
      if (fc.isJustified(cp)) return cp;
    }
    return fin;
  }
}
