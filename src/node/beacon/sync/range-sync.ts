/**
 * Range sync: when a peer's status names a head we do not hold, fetch its canonical blocks with
 * `blocks_by_range` and import them in order through the same checks as any proposal. One sync
 * runs at a time; a peer that serves invalid or out-of-range blocks is penalised, disconnected
 * and another peer is tried; a peer that cannot help (timeouts, nothing new) rests for an epoch.
 */
import { toHex } from '../../../core/codec/bytes.js';
import type { Genesis } from '../../../core/genesis/genesis.js';
import { type Block, blockHash, decodeBlock } from '../../../core/types/block.js';
import type { Logger } from '../../../util/log.js';
import { type P2pHost, type ProtocolLimits, SyncProtocols } from '../../p2p/types.js';
import type { BeaconBlockRecord } from '../chain.js';
import type { CheckpointHex } from '../forkchoice/fork-choice.js';
import type { BeaconMetrics } from '../metrics.js';
import { encodeRangeRequest, MAX_BLOCKS_PER_REQUEST, slotOfBlock } from './blocks-by-range.js';
import type { StatusMessage } from './status.js';
import { classifyImportError } from './verdict.js';

/** What range sync needs from the chain. */
export interface SyncChain {
  readonly genesis: Genesis;
  head(): BeaconBlockRecord;
  record(root: string): BeaconBlockRecord | undefined;
  finalized(): CheckpointHex;
  /** The wall-clock slot. */
  currentSlot(): number;
  /** True when `root` is the head or one of its ancestors (false for a block not held). */
  onHeadChain(root: string): boolean;
  /** Imports a block; `ssz` is the chunk it was decoded from (passed on to execution as received). */
  importBlock(block: Block, ssz: Uint8Array): Promise<unknown>;
}

/** A peer's finalised checkpoint that is past ours and not on our head's chain. */
export interface FinalityAhead {
  peer: string;
  epoch: number;
  root: string;
}

/** The host operations range sync uses. */
export type SyncHost = Pick<P2pHost, 'request' | 'penalise' | 'disconnect'>;

/** How one pass against a peer ended. */
type PassResult = 'progress' | 'nothing' | 'failed';

export class RangeSync {
  private readonly statuses = new Map<string, StatusMessage>();
  private readonly restingUntil = new Map<string, number>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly opts: {
      chain: SyncChain;
      host: SyncHost;
      limits: ProtocolLimits;
      metrics: BeaconMetrics;
      log: Logger;
      /** How long a peer that could not help is left out of peer selection. */
      restMs: number;
      now?: () => number;
    },
  ) {}

  /** True while a sync runs. */
  get active(): boolean {
    return this.running !== undefined;
  }

  /** The last status a peer gave (undefined after it was forgotten). */
  status(peer: string): StatusMessage | undefined {
    return this.statuses.get(peer);
  }

  /**
   * The latest finalised checkpoint a peer holds that our head's chain lacks, if any: the network
   * finalised past us on blocks we do not follow (a minority cut off while the others finalised,
   * or a node far behind). Until range sync brings that checkpoint onto our head's chain, our head
   * is a branch the network has abandoned, and our validators must not vote or propose on it.
   * Peers resting after a pass that could not help are left out, so a peer claiming a finality it
   * does not serve pauses nothing for longer than one pass.
   */
  finalityAhead(): FinalityAhead | undefined {
    const fin = this.opts.chain.finalized();
    const now = this.now();
    let best: FinalityAhead | undefined;
    for (const [peer, s] of this.statuses) {
      if ((this.restingUntil.get(peer) ?? 0) > now || s.finalizedEpoch <= fin.epoch) continue;
      if (this.opts.chain.onHeadChain(s.finalizedRoot)) continue;
      if (!best || s.finalizedEpoch > best.epoch) best = { peer, epoch: s.finalizedEpoch, root: s.finalizedRoot };
    }
    return best;
  }

  /** Records a peer's latest status (on our chain: the caller checked). */
  setStatus(peer: string, s: StatusMessage): void {
    this.statuses.set(peer, s);
  }

  /** Drops what is known about a peer (disconnected). */
  forget(peer: string): void {
    this.statuses.delete(peer);
    this.restingUntil.delete(peer);
  }

  /** Forgets every peer not in `connected`, so a departed peer is never picked. */
  retain(connected: ReadonlySet<string>): void {
    for (const peer of this.statuses.keys()) if (!connected.has(peer)) this.forget(peer);
  }

  /** Starts a sync if some peer has a head we lack and none is running; returns the running sync. */
  trigger(): Promise<void> | undefined {
    if (this.stopped || this.running || !this.pickPeer()) return this.running;
    this.running = this.loop()
      .catch((err: Error) => this.opts.log.warn('range sync stopped', { error: err.message }))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Stops after the batch in flight; waits for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  // The peer with the highest head we do not hold, among those not resting (and not `except`).
  private pickPeer(except?: string): [string, StatusMessage] | undefined {
    let best: [string, StatusMessage] | undefined;
    const now = this.now();
    for (const [peer, s] of this.statuses) {
      if (peer === except || (this.restingUntil.get(peer) ?? 0) > now) continue;
      if (this.opts.chain.record(s.headRoot)) continue;
      if (!best || s.headSlot > best[1].headSlot) best = [peer, s];
    }
    return best;
  }

  private async loop(): Promise<void> {
    let picked: [string, StatusMessage] | undefined;
    while (!this.stopped && (picked = this.pickPeer())) {
      const [peer, status] = picked;
      const before = this.opts.chain.head();
      this.opts.log.info('range sync from peer', { peer, peer_head_slot: status.headSlot, head_slot: before.slot });
      const result = await this.syncFrom(peer, status);
      // A peer that gave nothing new would be picked again at once: let it rest, unless its head
      // arrived meanwhile by gossip (a status taken while that block was in flight is no fault).
      if (result !== 'progress' && !this.opts.chain.record(status.headRoot)) this.restingUntil.set(peer, this.now() + this.opts.restMs);
      const after = this.opts.chain.head();
      if (after.root !== before.root) this.opts.log.info('range sync pass done', { peer, head_slot: after.slot, result });
    }
  }

  /**
   * Fetches from our head onwards, or, when the peer's head is not ahead of ours or its blocks do
   * not attach to our head (another branch), from our finalised checkpoint: every branch a valid
   * peer can be on descends from it, so the common ancestor lies in between.
   */
  private async syncFrom(peer: string, status: StatusMessage): Promise<PassResult> {
    const chain = this.opts.chain;
    const finalizedSlot = (): number => chain.record(chain.finalized().root)?.slot ?? 0;
    const head = chain.head();
    // A head slot past the wall clock is a lie or a skewed clock; either way no block there can
    // be imported yet, and it must not send us requesting empty ranges up to it.
    const end = Math.min(status.headSlot, chain.currentSlot());
    let fromFinalized = end <= head.slot;
    let start = fromFinalized ? finalizedSlot() + 1 : head.slot + 1;
    let progress = false;
    while (!this.stopped && start <= end) {
      const count = Math.min(MAX_BLOCKS_PER_REQUEST, end - start + 1);
      let chunks: Uint8Array[];
      try {
        chunks = await this.opts.host.request(peer, SyncProtocols.blocksByRange, encodeRangeRequest({ startSlot: start, count }), this.opts.limits);
      } catch (err) {
        this.opts.metrics.syncFailures.inc({ reason: 'request_failed' });
        this.opts.log.debug('blocks_by_range request failed', { peer, start_slot: start, count, error: (err as Error).message });
        // Mid-sync (the peer went away, or stalled): the rest of the range comes from another
        // peer at once, if there is one; a lone peer is asked again rather than left out.
        if (progress && !this.pickPeer(peer)) return 'progress';
        return 'failed';
      }
      let previous = start - 1;
      let restart = false;
      for (const chunk of chunks) {
        let block: Block;
        try {
          block = decodeBlock(chunk);
        } catch {
          return this.fault(peer, 'malformed_block');
        }
        const slot = slotOfBlock(chain.genesis, block);
        if (slot <= previous || slot >= start + count) return this.fault(peer, 'out_of_range');
        previous = slot;
        if (chain.record(toHex(blockHash(block.header)))) continue;
        try {
          await chain.importBlock(block, chunk);
          progress = true;
          this.opts.metrics.syncBlocks.inc();
        } catch (err) {
          const f = classifyImportError(err);
          if (f.kind === 'unknown_parent' && !fromFinalized) {
            // Its branch leaves ours below our head: go back to the finalised checkpoint.
            fromFinalized = true;
            start = finalizedSlot() + 1;
            restart = true;
            break;
          }
          if (f.kind === 'unknown_parent') return this.offBranch(peer, status, progress);
          if (f.kind !== 'invalid') return progress ? 'progress' : 'nothing';
          return this.fault(peer, f.reason);
        }
      }
      if (!restart) start += count;
    }
    if (progress) this.opts.log.info('range sync caught up with peer', { peer, head_slot: chain.head().slot });
    return progress ? 'progress' : 'nothing';
  }

  /**
   * The peer's blocks do not attach even to our finalised checkpoint: its branch forks below it.
   * That is no proof of misbehaviour (a minority cut off while we finalised is honest; it syncs
   * from us), so the peer is only left out of peer selection for a while, never penalised. When
   * the peer has finalised past us on a chain without our checkpoint, no range sync can join the
   * two (finality does not revert): it is said loudly, for an operator to judge.
   */
  private offBranch(peer: string, status: StatusMessage, progress: boolean): PassResult {
    const fin = this.opts.chain.finalized();
    this.opts.metrics.syncFailures.inc({ reason: 'other_branch' });
    if (status.finalizedEpoch > fin.epoch) {
      this.opts.log.warn('peer finalised a chain without our finalised checkpoint; not syncing from it', { peer, peer_finalized_epoch: status.finalizedEpoch, peer_finalized_root: status.finalizedRoot, finalized_epoch: fin.epoch, finalized_root: fin.root });
    } else {
      this.opts.log.info('peer is on a branch our finality ruled out; ignored until it rejoins', { peer, peer_finalized_epoch: status.finalizedEpoch, finalized_epoch: fin.epoch });
    }
    this.restingUntil.set(peer, this.now() + this.opts.restMs);
    return progress ? 'progress' : 'nothing';
  }

  // A peer that serves blocks breaking the rules is penalised and disconnected; another is tried.
  private async fault(peer: string, reason: string): Promise<PassResult> {
    this.opts.metrics.syncFailures.inc({ reason });
    this.opts.log.warn('peer served invalid blocks; disconnected', { peer, reason });
    this.opts.host.penalise(peer, `sync_${reason}`);
    this.forget(peer);
    this.restingUntil.set(peer, this.now() + this.opts.restMs);
    await this.opts.host.disconnect(peer, `sync_${reason}`).catch(() => undefined);
    return 'failed';
  }
}
