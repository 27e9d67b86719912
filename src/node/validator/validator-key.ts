/**
 * The per-key half of the validator client (client.ts is the process half): one key's registry
 * index, RANDAO keeper and attestation state, and its own lane of work, so a key whose beacon
 * call is slow delays only its own next duty, never another key's or a proposal.
 *
 * Attestations: one per epoch, not one per slot. Two different votes with the same target epoch
 * are a double vote (slashable; the beacon refuses the second with SLASHABLE_ATTESTATION and
 * slashing protection refuses to sign it), and the beacon's fork choice keeps one latest message
 * per target epoch anyway. A key attests at its attestation slot of each epoch (`epoch start +
 * index mod slots_per_epoch`, which spreads keys over the epoch), or at the first later slot of
 * the epoch where that works (beacon down, client started late). A vote signed but not delivered
 * (beacon unreachable) is re-sent unchanged, never re-signed.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { epochOfSlot, type Genesis, slotAt } from '../../core/genesis/genesis.js';
import { type AttestationData, attestationSigningHash, type AttestationJson, attestationToJson, signAttestation } from '../../core/types/attestation.js';
import { type BeaconClient, BeaconClientError } from '../../client/beacon.js';
import type { AttestationDataView } from '../../api/beacon.js';
import type { Logger } from '../../util/log.js';
import type { WalletKeys } from '../../wallet/derivation.js';
import type { ValidatorMetrics } from './metrics.js';
import type { RandaoKeeper } from './randao/recommit.js';
import { type SlashingProtectionDb, SlashingProtectionError } from './slashing/protection.js';
import { hasCode } from '../../api/errors.js';

/** The key material the client needs from a wallet. */
export type ValidatorKeys = Pick<WalletKeys, 'address' | 'mldsa' | 'mldsaSeed'>;

/** What made a key attest (the `trigger` field of "attestation sent"). */
export type AttestTrigger = 'own_block' | 'head_poll' | 'new_block' | 'deadline';

/** What every key shares with the process. */
export interface KeyContext {
  genesis: Genesis;
  beacon: BeaconClient;
  sp: SlashingProtectionDb;
  metrics: ValidatorMetrics;
  clock: () => number;
  /** Awaits a beacon call (the process logs the first success after an outage). */
  call: <T>(p: Promise<T>) => Promise<T>;
  /** Logs a failed duty (an unreachable beacon once per outage). */
  failure: (what: string, err: unknown) => void;
}

/** An attestation signed (so recorded by slashing protection) but not yet acknowledged. */
interface PendingAttestation {
  epoch: number;
  slot: number;
  json: AttestationJson;
}

/** One validator key of the process. */
export class ValidatorKey {
  readonly address: string;
  readonly pubkeyHex: string;
  private idx: number | undefined;
  /** Highest epoch whose attestation is settled (accepted, refused, or given up). */
  private attestedEpoch = -1;
  private pendingAtt: PendingAttestation | undefined;
  private lane: Promise<void> = Promise.resolve();
  private lastIndexProblem = '';

  constructor(
    private readonly ctx: KeyContext,
    readonly keys: ValidatorKeys,
    readonly randao: RandaoKeeper,
    /** This key's log lines (with its address when the process holds several keys). */
    readonly log: Logger,
  ) {
    this.address = keys.address;
    this.pubkeyHex = toHex(keys.mldsa.publicKey);
  }

  /** Registry index, once the beacon named it. */
  get index(): number | undefined {
    return this.idx;
  }

  /** Runs `job` after this key's earlier work (failures are logged by the job's owner). */
  enqueue(what: string, job: () => Promise<void>): void {
    this.lane = this.lane.then(job).catch((err: unknown) => this.ctx.failure(what, err));
  }

  /** Resolves once nothing is queued on this key's lane. */
  async idle(): Promise<void> {
    for (;;) {
      const l = this.lane;
      await l;
      if (l === this.lane) return;
    }
  }

  /** The registry index from the beacon (by address); undefined while it cannot say. */
  async ensureIndex(): Promise<number | undefined> {
    if (this.idx !== undefined) return this.idx;
    const { beacon, call } = this.ctx;
    try {
      const v = await call(beacon.validator(this.address));
      if (v.address !== this.address) throw beacon.badResponse(`GET /api/v1/validators/${this.address}`, `it answered validator ${v.address}`);
      this.idx = v.index;
      this.ctx.metrics.registerKey(v.index);
      this.log.info('validator registered on the beacon', { index: v.index, address: v.address, active: v.active, stake: v.stake });
      if (!v.active) this.log.warn('validator is not active: the beacon will give it no duties', { index: v.index });
      // A chain still being built is checked once it is there; duties do not wait for it.
      if (this.randao.isReady) this.checkRandao(v.randao_last);
      else void this.randao.ready().then(() => this.checkRandao(v.randao_last), () => undefined);
      return v.index;
    } catch (err) {
      if (err instanceof BeaconClientError && hasCode(err, 'NOT_FOUND')) {
        const problem = `not registered: ${err.message}`;
        if (problem !== this.lastIndexProblem) this.log.warn('validator is not in the beacon registry (deposit not yet included?); asking again each slot', { address: this.address });
        this.lastIndexProblem = problem;
        return undefined;
      }
      this.ctx.failure('looking up the validator index', err);
      return undefined;
    }
  }

  /**
   * Takes the index from the beacon's registry listing (a many-key process asks once for all keys
   * instead of once per key); the RANDAO check `ensureIndex` makes comes later, with `checkRandaoNow`.
   */
  adoptIndex(v: { index: number; address: string; active: boolean; stake: string }): void {
    if (this.idx !== undefined || v.address !== this.address) return;
    this.idx = v.index;
    this.ctx.metrics.registerKey(v.index);
    this.log.info('validator registered on the beacon', { index: v.index, address: v.address, active: v.active, stake: v.stake });
    if (!v.active) this.log.warn('validator is not active: the beacon will give it no duties', { index: v.index });
  }

  /** Asks the beacon for this key's RANDAO value and checks it against the key's chains (re-committing when low). */
  async checkRandaoNow(): Promise<void> {
    if (this.idx === undefined) return;
    await this.randao.ready();
    const v = await this.ctx.call(this.ctx.beacon.validator(this.idx));
    if (v.address !== this.address) throw this.ctx.beacon.badResponse(`GET /api/v1/validators/${this.idx}`, `it answered address ${v.address}`);
    this.checkRandao(v.randao_last);
  }

  /** Says early when the beacon's RANDAO value is on none of this key's chains; re-commits when the chain runs low. */
  private checkRandao(randaoLast: string | null): void {
    const last = randaoLast === null ? this.randao.firstCommitment() : parseHex(randaoLast, 'randao_last', 32);
    if (this.randao.remaining(last) === undefined) {
      this.log.error('the beacon\'s RANDAO value for this validator is on none of this key\'s chains: proposals will fail (wrong keystore, or a lost randao-generation.json?)', { randao_last: randaoLast, generation: this.randao.generation });
      return;
    }
    this.recommitCheck(last);
  }

  /** Runs the re-commitment check in the background: it talks to execution and must not hold up the slot's duties. */
  recommitCheck(last: Uint8Array): void {
    void this.randao.check(last, slotAt(this.ctx.genesis, this.ctx.clock()));
  }

  /** The slot of `epoch` at which this key attests (it may attest later in the epoch). */
  attestationSlot(epoch: number): number {
    const spe = this.ctx.genesis.config.slots_per_epoch;
    return epoch * spe + ((this.idx ?? 0) % spe);
  }

  /**
   * Whether this key has a vote to make at `slot`: `fresh` (sign one) or `resend` (a signed vote
   * the beacon never acknowledged), or nothing. A vote left from an earlier epoch is given up.
   */
  due(slot: number): 'fresh' | 'resend' | undefined {
    if (this.idx === undefined) return undefined;
    const epoch = epochOfSlot(this.ctx.genesis, slot);
    if (this.pendingAtt && this.pendingAtt.epoch < epoch) {
      this.log.warn('attestation never delivered: its epoch is over', { slot: this.pendingAtt.slot, epoch: this.pendingAtt.epoch });
      this.pendingAtt = undefined;
    }
    if (this.attestedEpoch >= epoch || slot < this.attestationSlot(epoch)) return undefined;
    return this.pendingAtt ? 'resend' : 'fresh';
  }

  /**
   * Attests at `slot` with the beacon's attestation data for it (shared by every key due at the
   * slot), or re-sends this key's pending vote; does nothing when `due` says so.
   */
  async attest(slot: number, d: AttestationDataView | undefined, trigger: AttestTrigger): Promise<void> {
    const what = this.due(slot);
    if (what === undefined) return;
    if (what === 'resend') {
      // Signed and recorded already: send the same bytes again, never a second vote.
      await this.sendAttestation(this.pendingAtt!, trigger);
      return;
    }
    if (!d) return;
    const index = this.idx!;
    const epoch = epochOfSlot(this.ctx.genesis, slot);
    const data: AttestationData = {
      slot,
      beaconBlockRoot: parseHex(d.beacon_block_root, 'beacon_block_root', 32),
      source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source.root', 32) },
      target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target.root', 32) },
    };
    const chainId = this.ctx.genesis.chain_id;
    const signingRoot = attestationSigningHash(index, data, chainId);
    // Another vote for this target is already on record (signed before a restart): the epoch's
    // vote is done, and asking to sign a second one would only be refused as a double vote.
    if (this.ctx.sp.attestationAt(this.pubkeyHex, data.source.epoch, data.target.epoch, signingRoot) === 'other') {
      this.attestedEpoch = epoch;
      this.ctx.metrics.skippedAlreadySigned('attestation');
      this.log.debug('attestation skipped: this key already signed one for the target epoch', { slot, source: d.source.epoch, target: d.target.epoch });
      return;
    }
    try {
      await this.ctx.sp.checkAndRecordAttestation(this.pubkeyHex, data.source.epoch, data.target.epoch, signingRoot);
    } catch (err) {
      if (!(err instanceof SlashingProtectionError)) throw err;
      this.ctx.metrics.slashingRefused(index);
      this.attestedEpoch = epoch;
      this.log.warn('slashing protection refused to sign an attestation', { slot, source: d.source.epoch, target: d.target.epoch, rule: err.rule, reason: err.message });
      return;
    }
    const att = signAttestation(index, data, this.keys.mldsa, chainId);
    this.ctx.metrics.signed('attestation');
    this.pendingAtt = { epoch, slot, json: attestationToJson(att) };
    await this.sendAttestation(this.pendingAtt, trigger);
  }

  private async sendAttestation(p: PendingAttestation, trigger: AttestTrigger): Promise<void> {
    let res;
    try {
      res = await this.ctx.call(this.ctx.beacon.submitAttestation(p.json));
    } catch (err) {
      if (!(err instanceof BeaconClientError) || err.transport) throw err; // kept pending: re-sent next phase
      // A beacon whose clock runs behind may find the slot in its future: the same vote later is fine.
      if (hasCode(err, 'FUTURE_SLOT')) {
        this.log.warn('the beacon refused the attestation as early: sending it again next phase', { slot: p.slot, reason: err.message });
        return;
      }
      this.pendingAtt = undefined;
      this.attestedEpoch = Math.max(this.attestedEpoch, p.epoch);
      const hint = hasCode(err, 'UNAUTHORIZED') ? ' (check --token-file: it must hold the token the beacon was started with)' : '';
      this.log.warn(`the beacon refused the attestation${hint}`, { slot: p.slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      return;
    }
    this.pendingAtt = undefined;
    this.attestedEpoch = Math.max(this.attestedEpoch, p.epoch);
    this.ctx.metrics.attested(this.idx!);
    this.log.info('attestation sent', { slot: p.slot, epoch: p.epoch, head: p.json.data.beacon_block_root, source: p.json.data.source.epoch, target: p.json.data.target.epoch, target_root: p.json.data.target.root, status: res.status, trigger });
  }
}

/** `log` with `fields` added to every line. */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (msg, f) => log.debug(msg, { ...fields, ...f }),
    info: (msg, f) => log.info(msg, { ...fields, ...f }),
    warn: (msg, f) => log.warn(msg, { ...fields, ...f }),
    error: (msg, f) => log.error(msg, { ...fields, ...f }),
  };
}
