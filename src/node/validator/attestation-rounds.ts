/**
 * The validator process's attestation rounds: at a slot's head poll, its attestation deadline, a
 * `new_block` of the slot or the process's own accepted block, the keys due at the slot vote. A
 * round asks the beacon once for the head and once for the slot's attestation data, whatever the
 * number of keys due, then hands each key its vote on the key's own lane, so one slow key (a
 * beacon call that hangs) holds up only its own next vote, and no round ever queues in front of
 * a proposal (proposals have their own lane in client.ts).
 */
import { epochOfSlot, type Genesis, slotAt } from '../../core/genesis/genesis.js';
import type { BeaconClient } from '../../client/beacon.js';
import type { AttestationDataView } from '../../api/beacon.js';
import type { AttestTrigger, ValidatorKey } from './validator-key.js';

/** What the rounds need from the process. */
export interface AttestationRoundsOptions {
  genesis: Genesis;
  beacon: BeaconClient;
  clock: () => number;
  /** Awaits a beacon call (the process logs the first success after an outage). */
  call: <T>(p: Promise<T>) => Promise<T>;
  failure: (what: string, err: unknown) => void;
  keys: () => readonly ValidatorKey[];
  running: () => boolean;
}

/** Attestation data asked of the beacon for one slot, shared by every key due at it. */
interface SlotData {
  slot: number;
  data: Promise<AttestationDataView>;
}

/** Runs the attestation rounds of a validator process, one at a time. */
export class AttestationRounds {
  private work: Promise<void> = Promise.resolve();
  private slotData: SlotData | undefined;

  constructor(private readonly opts: AttestationRoundsOptions) {}

  /** The promise of the rounds queued so far (the keys' own lanes not included). */
  get lane(): Promise<void> {
    return this.work;
  }

  /**
   * Queues a round at `slot`: finds the keys due, checks the head once (`head-at-slot`: only
   * when it already holds a block for the slot), fetches the slot's attestation data once, and
   * hands each due key its vote. A round whose slot has passed when its turn comes does nothing.
   */
  run(slot: number, when: 'head-at-slot' | 'always', trigger: AttestTrigger): void {
    this.work = this.work.then(async () => {
      if (!this.opts.running() || slotAt(this.opts.genesis, this.opts.clock()) > slot) return;
      const due = this.opts.keys().filter((k) => k.due(slot) !== undefined);
      if (due.length === 0) return;
      // A key re-sending a vote it already signed needs neither the head nor new data.
      for (const k of due) if (k.due(slot) === 'resend') k.enqueue(`attest at slot ${slot}`, () => k.attest(slot, undefined, trigger));
      const fresh = due.filter((k) => k.due(slot) === 'fresh');
      if (fresh.length === 0) return;
      let data: AttestationDataView;
      try {
        if (when === 'head-at-slot') {
          const head = await this.opts.call(this.opts.beacon.head());
          if (head.slot < slot) return;
        }
        data = await this.attestationData(slot);
      } catch (err) {
        this.opts.failure(`attest at slot ${slot}`, err);
        return;
      }
      for (const k of fresh) k.enqueue(`attest at slot ${slot}`, () => k.attest(slot, data, trigger));
    });
  }

  /** The beacon's attestation data for `slot`, asked once per slot (a failed answer is asked again). */
  private attestationData(slot: number): Promise<AttestationDataView> {
    if (this.slotData?.slot === slot) return this.slotData.data;
    const epoch = epochOfSlot(this.opts.genesis, slot);
    const what = `GET /api/v1/validator/attestation_data?slot=${slot}`;
    const data = this.opts.call(this.opts.beacon.attestationData(slot)).then((d) => {
      if (d.slot !== slot) throw this.opts.beacon.badResponse(what, `it answered slot ${d.slot}`);
      if (d.target.epoch !== epoch) throw this.opts.beacon.badResponse(what, `target epoch ${d.target.epoch} is not the slot's epoch ${epoch}`);
      return d;
    });
    const entry = { slot, data };
    this.slotData = entry;
    data.catch(() => {
      if (this.slotData === entry) this.slotData = undefined;
    });
    return data;
  }
}
