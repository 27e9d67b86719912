/**
 * Consensus reward accounting for the beacon (pure: no I/O).
 *
 * Rewards accumulate per epoch and are paid at an epoch boundary through execution's
 * `POST /api/v1/engine/creditRewards {epoch, credits}`, which applies each epoch at most once. The
 * ledger clears an epoch only after execution acknowledged it (`markPaid`), so whenever the
 * beacon persists it (`toJson`), a restart before the acknowledgement retries the epoch (execution
 * answers `already_applied` if the first attempt had landed: never paid twice), and nothing that
 * was recorded and persisted is lost.
 */
import { normalizeAddress } from '../../core/crypto/address.js';
import { MalformedError, SvcError } from '../../core/errors.js';
import { parseUint, rejectUnknownKeys, requireObject } from '../../core/codec/json.js';

/**
 * Reward amounts in wei. They will come from the genesis config (`config.*` of genesis.json), never
 * from code, like every other consensus constant; until genesis carries them the node passes them in.
 */
export interface RewardParams {
  /** Paid to the proposer for each block it proposed (and that was not reverted) in the epoch. */
  proposerReward: bigint;
  /** Paid once per validator per epoch in which at least one of its timely attestations for that epoch was included or received. */
  attesterReward: bigint;
}

/** One account's credit for an epoch. */
export interface RewardCredit {
  address: string;
  amount: bigint;
}

/** The body of `POST /api/v1/engine/creditRewards` (amounts as base-10 strings). */
export interface CreditRewardsRequest {
  epoch: number;
  credits: Array<{ address: string; amount: string }>;
}

/** What `forgetProposal` did. */
export type ForgetOutcome = 'removed' | 'not-found' | 'already-paid';

/** Persisted form of the ledger (version 1). */
export interface RewardLedgerJson {
  version: 1;
  /** Every epoch below this one is closed: paid, or had nothing recorded and lies below a paid epoch. */
  closed_below: number;
  /** Paid epochs at or above `closed_below`. */
  paid: number[];
  epochs: Array<{ epoch: number; proposals: Array<{ address: string; count: number }>; attesters: string[] }>;
}

interface EpochEntry {
  /** proposer address → blocks proposed in the epoch. */
  proposals: Map<string, number>;
  attesters: Set<string>;
}

/** Per-epoch proposer and attester rewards, with paid-once bookkeeping. */
export class RewardLedger {
  private readonly epochs = new Map<number, EpochEntry>();
  private readonly paid = new Set<number>();
  private closedBelow = 0;

  constructor(readonly params: RewardParams) {
    if (typeof params.proposerReward !== 'bigint' || params.proposerReward < 0n) throw new SvcError('INVALID_REWARD_PARAMS', 'proposerReward must be a non-negative bigint', 500);
    if (typeof params.attesterReward !== 'bigint' || params.attesterReward < 0n) throw new SvcError('INVALID_REWARD_PARAMS', 'attesterReward must be a non-negative bigint', 500);
  }

  /**
   * Counts one proposed block (call once per applied block). False when the epoch is already
   * closed: execution applies an epoch's credits once, so a late record could never be paid.
   */
  recordProposal(epoch: number, proposerAddress: string): boolean {
    checkEpoch(epoch);
    const address = normalizeAddress(proposerAddress, 'proposerAddress');
    if (this.isPaid(epoch)) return false;
    const e = this.entry(epoch);
    e.proposals.set(address, (e.proposals.get(address) ?? 0) + 1);
    return true;
  }

  /** Removes one proposal of a reverted block (reorg) before its epoch is paid. */
  forgetProposal(epoch: number, proposerAddress: string): ForgetOutcome {
    checkEpoch(epoch);
    const address = normalizeAddress(proposerAddress, 'proposerAddress');
    if (this.isPaid(epoch)) return 'already-paid';
    const e = this.epochs.get(epoch);
    const n = e?.proposals.get(address);
    if (!e || n === undefined) return 'not-found';
    if (n > 1) e.proposals.set(address, n - 1);
    else e.proposals.delete(address);
    if (e.proposals.size === 0 && e.attesters.size === 0) this.epochs.delete(epoch);
    return 'removed';
  }

  /** Notes a timely attestation for `epoch`; a validator counts once per epoch. True if newly counted. */
  recordAttestation(epoch: number, validatorAddress: string): boolean {
    checkEpoch(epoch);
    const address = normalizeAddress(validatorAddress, 'validatorAddress');
    if (this.isPaid(epoch)) return false;
    const e = this.entry(epoch);
    if (e.attesters.has(address)) return false;
    e.attesters.add(address);
    return true;
  }

  /** Credits owed for `epoch`, one per address, sorted by address (deterministic); empty once paid. */
  due(epoch: number): RewardCredit[] {
    checkEpoch(epoch);
    const e = this.epochs.get(epoch);
    if (!e) return [];
    const totals = new Map<string, bigint>();
    for (const [address, count] of e.proposals) totals.set(address, (totals.get(address) ?? 0n) + BigInt(count) * this.params.proposerReward);
    for (const address of e.attesters) totals.set(address, (totals.get(address) ?? 0n) + this.params.attesterReward);
    return [...totals]
      .filter(([, amount]) => amount > 0n)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([address, amount]) => ({ address, amount }));
  }

  /** `due(epoch)` as the engine's creditRewards request body. */
  creditRequest(epoch: number): CreditRewardsRequest {
    return { epoch, credits: this.due(epoch).map((c) => ({ address: c.address, amount: c.amount.toString() })) };
  }

  /**
   * Clears `epoch` after execution acknowledged its credits (idempotent). An epoch with nothing
   * recorded is closed too once a later epoch is paid and no earlier epoch still waits, so the
   * paid set stays small while epochs are paid in order.
   */
  markPaid(epoch: number): void {
    checkEpoch(epoch);
    if (this.isPaid(epoch)) return;
    this.epochs.delete(epoch);
    this.paid.add(epoch);
    let firstOpen = Math.max(this.closedBelow - 1, ...this.paid) + 1;
    for (const e of this.epochs.keys()) if (e < firstOpen) firstOpen = e;
    if (firstOpen > this.closedBelow) this.closedBelow = firstOpen;
    for (const e of this.paid) if (e < this.closedBelow) this.paid.delete(e);
  }

  /** True once `epoch` is paid or closed (late records for it are refused). */
  isPaid(epoch: number): boolean {
    return epoch < this.closedBelow || this.paid.has(epoch);
  }

  /** Epochs below `before` with something recorded and not yet paid, ascending: what to (re)try. */
  unpaidEpochs(before: number): number[] {
    return [...this.epochs.keys()].filter((e) => e < before).sort((a, b) => a - b);
  }

  /** The ledger as JSON for persistence (deterministic: sorted epochs and addresses). */
  toJson(): RewardLedgerJson {
    const sortStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    return {
      version: 1,
      closed_below: this.closedBelow,
      paid: [...this.paid].sort((a, b) => a - b),
      epochs: [...this.epochs]
        .sort(([a], [b]) => a - b)
        .map(([epoch, e]) => ({
          epoch,
          proposals: [...e.proposals].sort(([a], [b]) => sortStr(a, b)).map(([address, count]) => ({ address, count })),
          attesters: [...e.attesters].sort(sortStr),
        })),
    };
  }

  /** Restores a ledger saved by `toJson`; strict (a corrupt file must not pay or lose rewards silently). */
  static fromJson(json: unknown, params: RewardParams): RewardLedger {
    const o = requireObject(json, 'rewardLedger');
    rejectUnknownKeys(o, ['version', 'closed_below', 'paid', 'epochs'], 'rewardLedger');
    if (o.version !== 1) throw new MalformedError('rewardLedger.version', `expected 1, got ${JSON.stringify(o.version) ?? 'nothing'}`);
    const ledger = new RewardLedger(params);
    ledger.closedBelow = parseUint(o.closed_below, 'rewardLedger.closed_below');
    if (!Array.isArray(o.paid)) throw new MalformedError('rewardLedger.paid', 'expected an array');
    o.paid.forEach((p, i) => {
      const e = parseUint(p, `rewardLedger.paid[${i}]`);
      if (e < ledger.closedBelow) throw new MalformedError(`rewardLedger.paid[${i}]`, 'below closed_below');
      ledger.paid.add(e);
    });
    if (!Array.isArray(o.epochs)) throw new MalformedError('rewardLedger.epochs', 'expected an array');
    o.epochs.forEach((item, i) => {
      const f = `rewardLedger.epochs[${i}]`;
      const eo = requireObject(item, f);
      rejectUnknownKeys(eo, ['epoch', 'proposals', 'attesters'], f);
      const epoch = parseUint(eo.epoch, `${f}.epoch`);
      if (ledger.isPaid(epoch)) throw new MalformedError(`${f}.epoch`, `epoch ${epoch} is recorded as both paid and unpaid`);
      if (ledger.epochs.has(epoch)) throw new MalformedError(`${f}.epoch`, `duplicate epoch ${epoch}`);
      if (!Array.isArray(eo.proposals)) throw new MalformedError(`${f}.proposals`, 'expected an array');
      if (!Array.isArray(eo.attesters)) throw new MalformedError(`${f}.attesters`, 'expected an array');
      const entry: EpochEntry = { proposals: new Map(), attesters: new Set() };
      eo.proposals.forEach((p, j) => {
        const pf = `${f}.proposals[${j}]`;
        const po = requireObject(p, pf);
        rejectUnknownKeys(po, ['address', 'count'], pf);
        const address = normalizeAddress(po.address, `${pf}.address`);
        const count = parseUint(po.count, `${pf}.count`);
        if (count === 0 || entry.proposals.has(address)) throw new MalformedError(pf, 'zero count or duplicate address');
        entry.proposals.set(address, count);
      });
      eo.attesters.forEach((a, j) => {
        const address = normalizeAddress(a, `${f}.attesters[${j}]`);
        if (entry.attesters.has(address)) throw new MalformedError(`${f}.attesters[${j}]`, 'duplicate address');
        entry.attesters.add(address);
      });
      if (entry.proposals.size > 0 || entry.attesters.size > 0) ledger.epochs.set(epoch, entry);
    });
    return ledger;
  }

  private entry(epoch: number): EpochEntry {
    let e = this.epochs.get(epoch);
    if (!e) {
      e = { proposals: new Map(), attesters: new Set() };
      this.epochs.set(epoch, e);
    }
    return e;
  }
}

function checkEpoch(epoch: number): void {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new MalformedError('epoch', 'expected a non-negative integer');
}

