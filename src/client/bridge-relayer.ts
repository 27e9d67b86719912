/**
 * The relayer of one direction, source → destination (docs/bridge.md, "CLI"): releases every
 * FINALIZED BID of the source bound for the destination, completes it on the source once the
 * release is final on the destination, and refunds EXPIRED ones once the destination has
 * finalised past their timeout without a release. Before any of them it brings the validator
 * set each chain holds for the other up to date with set updates, one change at a time, in
 * order. It is trusted with nothing: every step carries its own proof, and the chains refuse a
 * wrong one.
 *
 * The chains' state decides what to do, so a restarted relayer picks up where it was; it keeps
 * only a small in-flight set (transactions it submitted and waits on) and a back-off for
 * operations a chain refused, so a refusal is logged once per back-off, never retried hot.
 */
import { BRIDGE_ADDRESS } from '../core/constants.js';
import { bytesEqual, parseHex, toHex } from '../core/codec/bytes.js';
import { SvcError } from '../core/errors.js';
import { BridgeOp, LockState, RELEASED_WORD, releaseSlot, stateWord, wordState } from '../core/bridge/types.js';
import { setUpdateFromChange } from '../core/bridge/set-update.js';
import { setChangeFromJson } from '../core/light/set-change.js';
import type { BidView } from '../api/bridge.js';
import { bidFieldsFromJson } from '../core/bridge/types.js';
import { type BridgeChain, type BridgeSigner, buildRelease, buildSettle, submitBridgeOp } from './bridge-ops.js';

/** One line of the relayer's log (`--json` prints each as it happens). */
export interface RelayAction {
  time: string;
  /** submitted: a transaction was accepted by the pool; included: it is in a block (ok says its receipt status); refused: admission said no (code); waiting: not yet provable; error: anything else. */
  action: 'submitted' | 'included' | 'refused' | 'waiting' | 'error' | 'started' | 'stopped';
  op?: 'release' | 'complete' | 'refund' | 'update_set';
  bid?: string;
  /** update_set: the checkpoint epoch of the set change submitted. */
  epoch?: number;
  chain?: string;
  tx_hash?: string;
  ok?: boolean;
  code?: string;
  message?: string;
}

export interface RelayerOptions {
  source: BridgeChain;
  dest: BridgeChain;
  /** Signs releases on the destination. */
  destSigner: BridgeSigner;
  /** Signs completions and refunds on the source; without it the relayer only releases. */
  sourceSigner?: BridgeSigner;
  /** Pause between passes (ms). */
  intervalMs: number;
  /** Called for every action. */
  log: (a: RelayAction) => void;
  /** Passes an operation refused by a chain is not tried again (default 8). */
  backoffPasses?: number;
  /** Submitted transactions are waited on for this long before they may be submitted again (ms; default 20 intervals). */
  inFlightMs?: number;
}

type Op = NonNullable<RelayAction['op']>;

/** BIDs one pass asks the source about (newest first; a backlog drains over several passes). */
const PASS_LIMIT = 100;

/** The relayer of one direction. `pass()` does one round; `run()` loops until the signal aborts. */
export class Relayer {
  private readonly inFlight = new Map<string, { chain: BridgeChain; hash: string; until: number; subject: { bid?: string; epoch?: number } }>();
  private readonly refused = new Map<string, number>();
  /** Last 'waiting' message per operation, so a wait is logged when it changes, not every pass. */
  private readonly waits = new Map<string, string>();
  private passes = 0;

  constructor(private readonly opts: RelayerOptions) {}

  /** Loops pass after pass, `intervalMs` apart, until `signal` aborts; a failed pass is logged and the loop goes on. */
  async run(signal: AbortSignal): Promise<void> {
    this.opts.log({ time: now(), action: 'started', message: `relaying ${this.opts.source.chainId} → ${this.opts.dest.chainId} every ${this.opts.intervalMs} ms` });
    while (!signal.aborted) {
      try {
        await this.pass();
      } catch (err) {
        this.opts.log({ time: now(), action: 'error', code: (err as SvcError).code ?? 'ERROR', message: (err as Error).message });
      }
      await sleep(this.opts.intervalMs, signal);
    }
    this.opts.log({ time: now(), action: 'stopped' });
  }

  /** One round: settle what was in flight, then every actionable BID of the source for the destination. */
  async pass(): Promise<void> {
    this.passes += 1;
    await this.checkInFlight();
    const { source, dest } = this.opts;
    const seen = new Set<string>();
    // Each chain must hold the other's current set before a proof about it can verify there.
    const current = {
      dest: await this.syncSet(source, dest, this.opts.destSigner, seen),
      source: this.opts.sourceSigner ? await this.syncSet(dest, source, this.opts.sourceSigner, seen) : true,
    };
    for (const status of ['FINALIZED', 'EXPIRED'] as const) {
      const list = await source.beacon.bids({ status, direction: 'outgoing', limit: PASS_LIMIT });
      for (const view of list.bids) {
        if (view.fields.destination.toLowerCase() !== dest.genesisHash) continue;
        seen.add(view.bid.toLowerCase());
        try {
          await this.handle(view, current);
        } catch (err) {
          this.opts.log({ time: now(), action: 'error', bid: view.bid, code: (err as SvcError).code ?? 'ERROR', message: (err as Error).message });
        }
      }
    }
    // Memory stays bounded by what is actionable now: settled BIDs leave the lists, and their entries go.
    for (const map of [this.refused, this.waits] as Map<string, unknown>[]) {
      for (const key of map.keys()) if (!seen.has(key.slice(key.indexOf(':') + 1))) map.delete(key);
    }
  }

  /** Logs that an operation waits for a chain, once per distinct reason. */
  private waiting(op: Op, bid: string, message: string): void {
    const key = `${op}:${bid}`;
    if (this.waits.get(key) === message) return;
    this.waits.set(key, message);
    this.opts.log({ time: now(), action: 'waiting', op, bid, message });
  }

  /**
   * Brings the set `to` holds for `from` up to `from`'s set changes: submits the first change
   * past the held set's checkpoint (one per pass, since each is judged against the set the one
   * before stored). True when `to` already holds `from`'s newest set.
   */
  private async syncSet(from: BridgeChain, to: BridgeChain, signer: BridgeSigner, seen: Set<string>): Promise<boolean> {
    const held = (await to.beacon.counterparts()).counterparts.find((c) => c.genesis_hash.toLowerCase() === from.genesisHash);
    // Not a counterpart there: the operations themselves are refused with their code.
    if (!held) return true;
    const heldEpoch = held.set_epoch ?? 0;
    const page = await from.beacon.setChanges(heldEpoch + 1, 1);
    const list = Array.isArray(page.set_changes) ? page.set_changes : [];
    if (list.length === 0) return true;
    const change = setChangeFromJson(list[0], 'set_changes[0]');
    const epoch = change.finality.finalized.epoch;
    const id = `${from.chainId}@${epoch}`;
    seen.add(id);
    if (this.busy(id, 'update_set')) return false;
    const body = setUpdateFromChange(parseHex(from.genesisHash, 'genesis hash', 32), change);
    await this.submit(id, 'update_set', to, () => submitBridgeOp(to, signer, { op: BridgeOp.UpdateSet, body }), { epoch });
    return false;
  }

  /** What one BID needs now, decided by the destination's state: release it, complete it, or refund it. */
  private async handle(view: BidView, current: { dest: boolean; source: boolean }): Promise<void> {
    const { source, dest } = this.opts;
    const bid = Buffer.from(view.bid.slice(2), 'hex');
    const id = view.bid.toLowerCase();
    const released = bytesEqual(hexWord((await dest.execution.storage(BRIDGE_ADDRESS, toHex(releaseSlot(bid)))).value), RELEASED_WORD);
    if (!released) {
      if (view.status === 'FINALIZED') {
        if (this.busy(id, 'release')) return;
        if (!current.dest) return this.waiting('release', id, `${dest.chainId} does not hold ${source.chainId}'s current validator set yet (set update pending)`);
        const { body, proven } = await buildRelease(source.beacon, view);
        if (wordState(proven.value) !== LockState.Locked) {
          this.waiting('release', id, `the source's finalised header ${proven.header.index} does not prove the lock yet`);
          return;
        }
        await this.submit(id, 'release', dest, () => submitBridgeOp(dest, this.opts.destSigner, { op: BridgeOp.Release, body }));
        return;
      }
      // EXPIRED and never released: refund once the destination finalised a header at or past the timeout.
      if (!this.opts.sourceSigner || this.busy(id, 'refund')) return;
      if (!current.source) return this.waiting('refund', id, `${source.chainId} does not hold ${dest.chainId}'s current validator set yet (set update pending)`);
      const fields = bidFieldsFromJson(view.fields);
      const { body, proven } = await buildSettle(dest.beacon, fields, bid);
      if (proven.header.timestampMs < fields.timeout * 1000 || !bytesEqual(proven.value, stateWord(0))) {
        this.waiting('refund', id, `the destination's finalised header ${proven.header.index} (${proven.header.timestampMs} ms) is before the timeout ${fields.timeout} s or shows a release`);
        return;
      }
      const signer = this.opts.sourceSigner;
      await this.submit(id, 'refund', source, () => submitBridgeOp(source, signer, { op: BridgeOp.Refund, body }));
      return;
    }
    // Released on the destination: complete on the source once that release is final there.
    if (!this.opts.sourceSigner || this.busy(id, 'complete')) return;
    if (!current.source) return this.waiting('complete', id, `${source.chainId} does not hold ${dest.chainId}'s current validator set yet (set update pending)`);
    const fields = bidFieldsFromJson(view.fields);
    const { body, proven } = await buildSettle(dest.beacon, fields, bid);
    if (!bytesEqual(proven.value, RELEASED_WORD)) {
      this.waiting('complete', id, `the release is not final on ${dest.chainId} yet (finalised header ${proven.header.index})`);
      return;
    }
    const signer = this.opts.sourceSigner;
    await this.submit(id, 'complete', source, () => submitBridgeOp(source, signer, { op: BridgeOp.Complete, body }));
  }

  /** True while an operation is in flight or backing off after a refusal. */
  private busy(bid: string, op: Op): boolean {
    const key = `${op}:${bid}`;
    if (this.inFlight.has(key)) return true;
    const until = this.refused.get(key);
    if (until !== undefined && this.passes < until) return true;
    this.refused.delete(key);
    return false;
  }

  private async submit(bid: string, op: Op, chain: BridgeChain, send: () => Promise<{ hash: string }>, about: { epoch?: number } = {}): Promise<void> {
    const key = `${op}:${bid}`;
    const subject = op === 'update_set' ? about : { bid };
    try {
      const sent = await send();
      this.inFlight.set(key, { chain, hash: sent.hash, until: Date.now() + (this.opts.inFlightMs ?? 20 * this.opts.intervalMs), subject });
      this.opts.log({ time: now(), action: 'submitted', op, ...subject, chain: chain.chainId, tx_hash: sent.hash });
    } catch (err) {
      const e = err as SvcError & { httpStatus?: number };
      // A 4xx is the chain's verdict on this operation: back off instead of asking again at once.
      if (typeof e.httpStatus === 'number' && e.httpStatus >= 400 && e.httpStatus < 500) {
        this.refused.set(key, this.passes + (this.opts.backoffPasses ?? 8));
        this.opts.log({ time: now(), action: 'refused', op, ...subject, chain: chain.chainId, code: e.code, message: e.message });
        return;
      }
      throw err;
    }
  }

  /** Drops in-flight entries whose transaction is in a block (logging its receipt) or whose wait ran out. */
  private async checkInFlight(): Promise<void> {
    for (const [key, f] of [...this.inFlight]) {
      const op = key.slice(0, key.indexOf(':')) as Op;
      try {
        const s = await f.chain.execution.txStatus(f.hash);
        if ((s.state === 'Confirmed' || s.state === 'Finalized') && s.receipt) {
          this.inFlight.delete(key);
          const ok = s.receipt.status === 1;
          this.opts.log({ time: now(), action: 'included', op, ...f.subject, chain: f.chain.chainId, tx_hash: f.hash, ok, ...(ok ? {} : { message: s.receipt.error ?? 'failed' }) });
          if (!ok) this.refused.set(key, this.passes + (this.opts.backoffPasses ?? 8));
          continue;
        }
      } catch {
        // Unknown to the node (dropped from the pool): the deadline below lets it be tried again.
      }
      if (Date.now() > f.until) this.inFlight.delete(key);
    }
  }
}

function hexWord(v: string): Uint8Array {
  const h = v.startsWith('0x') ? v.slice(2) : v;
  return Uint8Array.from(Buffer.from(h.padStart(64, '0'), 'hex'));
}

function now(): string {
  return new Date().toISOString();
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
