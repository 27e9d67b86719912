/**
 * The relayer of one direction, source → destination (docs/bridge.md, "CLI"): releases every
 * FINALIZED BID of the source bound for the destination, completes it on the source once the
 * release is final on the destination, and refunds EXPIRED ones once the destination has
 * finalised past their timeout without a release. It is trusted with nothing: every step carries
 * its own proof, and the chains refuse a wrong one.
 *
 * The chains' state decides what to do, so a restarted relayer picks up where it was; it keeps
 * only a small in-flight set (transactions it submitted and waits on) and a back-off for
 * operations a chain refused, so a refusal is logged once per back-off, never retried hot.
 */
import { BRIDGE_ADDRESS } from '../core/constants.js';
import { bytesEqual, toHex } from '../core/codec/bytes.js';
import { SvcError } from '../core/errors.js';
import { BridgeOp, LockState, RELEASED_WORD, releaseSlot, stateWord, wordState } from '../core/bridge/types.js';
import type { BidView } from '../api/bridge.js';
import { bidFieldsFromJson } from '../core/bridge/types.js';
import { type BridgeChain, type BridgeSigner, buildRelease, buildSettle, submitBridgeOp } from './bridge-ops.js';

/** One line of the relayer's log (`--json` prints each as it happens). */
export interface RelayAction {
  time: string;
  /** submitted: a transaction was accepted by the pool; included: it is in a block (ok says its receipt status); refused: admission said no (code); waiting: not yet provable; error: anything else. */
  action: 'submitted' | 'included' | 'refused' | 'waiting' | 'error' | 'started' | 'stopped';
  op?: 'release' | 'complete' | 'refund';
  bid?: string;
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
  private readonly inFlight = new Map<string, { chain: BridgeChain; hash: string; until: number }>();
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
    for (const status of ['FINALIZED', 'EXPIRED'] as const) {
      const list = await source.beacon.bids({ status, direction: 'outgoing', limit: PASS_LIMIT });
      for (const view of list.bids) {
        if (view.fields.destination.toLowerCase() !== dest.genesisHash) continue;
        seen.add(view.bid.toLowerCase());
        try {
          await this.handle(view);
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

  /** What one BID needs now, decided by the destination's state: release it, complete it, or refund it. */
  private async handle(view: BidView): Promise<void> {
    const { source, dest } = this.opts;
    const bid = Buffer.from(view.bid.slice(2), 'hex');
    const id = view.bid.toLowerCase();
    const released = bytesEqual(hexWord((await dest.execution.storage(BRIDGE_ADDRESS, toHex(releaseSlot(bid)))).value), RELEASED_WORD);
    if (!released) {
      if (view.status === 'FINALIZED') {
        if (this.busy(id, 'release')) return;
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

  private async submit(bid: string, op: Op, chain: BridgeChain, send: () => Promise<{ hash: string }>): Promise<void> {
    const key = `${op}:${bid}`;
    try {
      const sent = await send();
      this.inFlight.set(key, { chain, hash: sent.hash, until: Date.now() + (this.opts.inFlightMs ?? 20 * this.opts.intervalMs) });
      this.opts.log({ time: now(), action: 'submitted', op, bid, chain: chain.chainId, tx_hash: sent.hash });
    } catch (err) {
      const e = err as SvcError & { httpStatus?: number };
      // A 4xx is the chain's verdict on this operation: back off instead of asking again at once.
      if (typeof e.httpStatus === 'number' && e.httpStatus >= 400 && e.httpStatus < 500) {
        this.refused.set(key, this.passes + (this.opts.backoffPasses ?? 8));
        this.opts.log({ time: now(), action: 'refused', op, bid, chain: chain.chainId, code: e.code, message: e.message });
        return;
      }
      throw err;
    }
  }

  /** Drops in-flight entries whose transaction is in a block (logging its receipt) or whose wait ran out. */
  private async checkInFlight(): Promise<void> {
    for (const [key, f] of [...this.inFlight]) {
      const [op, bid] = key.split(':') as [Op, string];
      try {
        const s = await f.chain.execution.txStatus(f.hash);
        if ((s.state === 'Confirmed' || s.state === 'Finalized') && s.receipt) {
          this.inFlight.delete(key);
          const ok = s.receipt.status === 1;
          this.opts.log({ time: now(), action: 'included', op, bid, chain: f.chain.chainId, tx_hash: f.hash, ok, ...(ok ? {} : { message: s.receipt.error ?? 'failed' }) });
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
