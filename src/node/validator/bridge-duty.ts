/**
 * The validator's bridge duty (docs/bridge.md "Validator duty"): sign every BID this chain's
 * beacon registered, with every key of the process that has a registry index (one listing per
 * pass for all of them). A `bridge_bid_registered` event on the beacon's `/ws` starts a pass at once;
 * a pass also runs once per epoch (half a slot into it, off the proposal's start), so a lost event
 * or a stream that is down costs at most an epoch.
 *
 * A pass lists the beacon's outgoing PENDING and ATTESTED BIDs (the newest BRIDGE_LIST_MAX of
 * each), recomputes each id from its fields and refuses (and logs, once) one whose id does not
 * match or whose source is not this chain, signs the others it has not signed and posts the
 * signature. The beacon answers a signature it holds with 200 (known), so what this process
 * forgets on restart is merely posted again; the sets it keeps are pruned to the BIDs of the
 * last listing, so memory follows the open BIDs, not the chain's history. Signing a BID is not
 * slashable (it repeats what the chain's state says), so there is no protection database.
 * The same pass signs the counterpart registrations an operator's policy accepts
 * (bridge-registration-duty.ts).
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { bidId, signBid } from '../../core/bridge/types.js';
import { type Genesis, genesisHash, slotStartMs, slotAt } from '../../core/genesis/genesis.js';
import type { BidStatus } from '../../api/bridge.js';
import type { BeaconClient } from '../../client/beacon.js';
import type { Logger } from '../../util/log.js';
import type { MlDsaKeyPair } from '../../core/crypto/mldsa.js';
import type { ValidatorMetrics } from './metrics.js';
import type { Timers } from '../../util/timers.js';
import type { RegistrationSigning } from './bridge-registration-duty.js';

/** Most BIDs of one status a pass lists (the beacon's listing cap). */
const LIST_LIMIT = 1_000;
/** Statuses still worth a signature: a relayer gathers them until the BID is relayed. */
const SIGNABLE: readonly BidStatus[] = ['PENDING', 'ATTESTED'];

/** What the duty needs from the validator client. */
export interface BridgeDutyOptions {
  genesis: Genesis;
  beacon: BeaconClient;
  log: Logger;
  metrics: ValidatorMetrics;
  /** The keys to sign with: those whose registry index the beacon already named. */
  signers: () => ReadonlyArray<{ index: number; key: MlDsaKeyPair }>;
  clock: () => number;
  timers: Timers;
  /** Signs the counterpart registrations the operator's policy accepts (absent: none). */
  registrations?: RegistrationSigning;
}

/** Signs the BIDs of this validator's chain. */
export class BridgeDuty {
  /** `bid/index` of every signature the beacon took. */
  private readonly signed = new Set<string>();
  private readonly refused = new Set<string>();
  private readonly source: string;
  private running = false;
  private pass: Promise<void> | undefined;
  private again = false;
  private timer: unknown;

  constructor(private readonly opts: BridgeDutyOptions) {
    this.source = toHex(genesisHash(opts.genesis));
  }

  /** Starts the epoch poll and runs a first pass. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
    this.trigger();
  }

  /** Stops the poll and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.opts.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.idle();
  }

  /** Resolves once no pass runs (tests). */
  async idle(): Promise<void> {
    while (this.pass) await this.pass;
  }

  /** A `bridge_bid_registered` event: sign now rather than at the next poll. */
  onRegistered(e: { bid: string }): void {
    this.opts.log.debug('bridge BID registered: signing pending BIDs', { bid: e.bid });
    this.trigger();
  }

  /** BID signatures (one per BID and key) this process made and the beacon took (tests and logs). */
  get signedCount(): number {
    return this.signed.size;
  }

  // Passes never overlap: an event during a pass asks for one more pass after it.
  private trigger(): void {
    if (!this.running) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = (async () => {
      do {
        this.again = false;
        await this.run().catch((err: Error) => this.opts.log.warn('bridge duty pass failed', { error: err.message }));
      } while (this.again && this.running);
    })().finally(() => {
      this.pass = undefined;
    });
  }

  private arm(): void {
    if (!this.running) return;
    const g = this.opts.genesis;
    const spe = g.config.slots_per_epoch;
    const now = this.opts.clock();
    const nextEpochSlot = (Math.floor(slotAt(g, now) / spe) + 1) * spe;
    const at = slotStartMs(g, nextEpochSlot) + (g.config.slot_seconds * 1000) / 2;
    this.timer = this.opts.timers.setTimeout(() => {
      this.timer = undefined;
      this.trigger();
      this.arm();
    }, Math.max(0, at - now));
  }

  private async run(): Promise<void> {
    const signers = this.opts.signers();
    if (signers.length === 0) return;
    // Apart from the BIDs: a registration the beacon cannot list must not hold up BID signatures.
    await this.opts.registrations?.run(signers).catch((err: Error) => this.opts.log.warn('registration signing pass failed', { error: err.message }));
    const bids = (await Promise.all(SIGNABLE.map((status) => this.opts.beacon.bridgeBids({ status, direction: 'outgoing', limit: LIST_LIMIT })))).flat();
    const listed = new Set(bids.map((b) => b.bid));
    for (const id of [...this.signed]) if (!listed.has(id.slice(0, id.indexOf('/')))) this.signed.delete(id);
    for (const id of [...this.refused]) if (!listed.has(id)) this.refused.delete(id);
    for (const b of bids) {
      if (!this.running) return;
      if (this.refused.has(b.bid)) continue;
      const computed = toHex(bidId(b.fields));
      const wrongSource = toHex(b.fields.source) !== this.source;
      if (computed !== b.bid || wrongSource) {
        this.refused.add(b.bid);
        // A refusal is about the BID, not a key: counted once, in the process total.
        this.opts.metrics.bridgeSignatures.inc({ result: 'refused' });
        this.opts.log.warn('refusing to sign a BID the beacon listed', { bid: b.bid, reason: wrongSource ? `its source ${toHex(b.fields.source)} is not this chain ${this.source}` : `its fields hash to ${computed}` });
        continue;
      }
      for (const { index, key } of signers) {
        if (!this.running) return;
        const id = `${b.bid}/${index}`;
        if (this.signed.has(id)) continue;
        const s = signBid(parseHex(b.bid, 'bid', 32), index, key, this.opts.genesis.chain_id);
        this.opts.metrics.signed('bridge_bid');
        try {
          const r = await this.opts.beacon.submitBidSignature(b.bid, { validator_index: index, signature: toHex(s.signature) });
          this.signed.add(id);
          this.opts.metrics.bridgeSigned(index, r.added ? 'added' : 'known');
          this.opts.log.info('bridge BID signed', { bid: b.bid, validator_index: index, added: r.added, status: r.status, signers: r.signers });
        } catch (err) {
          // Left unsigned in memory: the next pass (event or epoch) posts it again.
          this.opts.metrics.bridgeSigned(index, 'failed');
          this.opts.log.warn('bridge BID signature not accepted', { bid: b.bid, validator_index: index, code: (err as { code?: string }).code ?? null, error: (err as Error).message });
        }
      }
    }
  }
}
