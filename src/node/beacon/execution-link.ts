/**
 * The beacon's link to execution: which head and finalized block execution was last told (and
 * the `head` and `finalized_checkpoint` events that follow them), the per-slot chain check, and
 * whether execution is taking the beacon's blocks (the beacon's health).
 */
import { SvcError, WrongChainError } from '../../core/errors.js';
import type { DependentRootView } from '../../api/beacon.js';
import { httpStatusOf } from '../../api/errors.js';
import type { Logger } from '../../util/log.js';
import { ExecutionRejectedError } from './errors.js';
import type { BeaconBlockRecord } from './chain-storage.js';
import type { EngineClient } from '../../client/engine.js';
import type { EventHub } from './events.js';
import type { CheckpointHex, ForkChoice } from './forkchoice/fork-choice.js';
import type { BeaconMetrics } from './metrics.js';

/** Consecutive proposals execution refused after which the beacon reports itself unhealthy. */
export const UNHEALTHY_AFTER_REJECTIONS = 3;

/** The beacon's own view of whether it can make progress (GET /beacon/v1/node/health). */
export type BeaconHealth = { healthy: true } | { healthy: false; reason: string; message: string };

/** What the link reads of the chain, and what it has the chain do. */
export interface ExecutionLinkDeps {
  engine: EngineClient;
  forkChoice: ForkChoice;
  events: EventHub | undefined;
  metrics: BeaconMetrics;
  log: Logger;
  record(root: string): BeaconBlockRecord | undefined;
  /** HeadView.proposer_dependent_roots of a head. */
  headDependentRoots(root: string): DependentRootView[];
  /** Re-reads execution's registry into the chain (after a reorg). */
  refreshRegistry(): Promise<void>;
  /** Records what a newly finalized checkpoint means beyond execution (light clients, bridge); never throws. */
  onFinalized(fin: CheckpointHex): Promise<void>;
}

/** Sends execution the beacon's blocks, head and finality, and tracks what execution has. */
export class ExecutionLink {
  private lastHead = '';
  private lastFinalized = '';
  /** The head the last `head` event named (execution may lag behind it: lastHead is what execution has). */
  private lastPublishedHead = '';
  /** Proposals in a row that passed the beacon's checks and were refused by execution. */
  private rejectedInRow = 0;
  private lastRejection = '';
  private checking = false;

  /** A link that has told execution nothing yet. */
  constructor(private readonly deps: ExecutionLinkDeps) {}

  /** Execution last heard of fork choice's current head and finalized block (a store reopened from its snapshot). */
  resume(): void {
    this.lastHead = this.deps.forkChoice.head();
    this.lastFinalized = this.deps.forkChoice.finalized().root;
  }

  /** The finalized block execution was last told of. */
  get finalizedRoot(): string {
    return this.lastFinalized;
  }

  /** Whether the beacon can make progress: execution reachable, on this chain, and taking its blocks. */
  health(): BeaconHealth {
    const link = this.deps.engine.linkProblem();
    if (link) return { healthy: false, reason: link.code, message: link.message };
    if (this.rejectedInRow >= UNHEALTHY_AFTER_REJECTIONS) {
      return { healthy: false, reason: 'PROPOSALS_REJECTED', message: `execution rejected the last ${this.rejectedInRow} proposals (last: ${this.lastRejection})` };
    }
    return { healthy: true };
  }

  /** Has execution apply a checked block (its SSZ bytes); a refusal is a BeaconError (EXECUTION_REJECTED) or WrongChainError. */
  async newPayload(ssz: Uint8Array): Promise<Awaited<ReturnType<EngineClient['newPayload']>>> {
    const result = await this.deps.engine.newPayload(ssz).catch((err: SvcError) => {
      this.rejectedInRow++;
      this.lastRejection = `${err.code}: ${err.message}`;
      if (err instanceof WrongChainError) throw err;
      throw new ExecutionRejectedError(err.code, `execution rejected the block: ${err.message}`, httpStatusOf(err) === 503);
    });
    this.rejectedInRow = 0;
    // A new block on execution's head became its head: a forkchoiceUpdated naming it would change
    // nothing, so updateHead skips it when fork choice agrees.
    if (result.canonical && !result.already_known) this.lastHead = result.block_hash;
    return result;
  }

  /**
   * Tells execution about a new head or finalised block; emits finality once execution has it.
   * Never throws: the block or attestation that moved fork choice is already accepted and
   * stored, so execution refusing the update (or being unreachable) must not turn that into an
   * error for its sender. lastHead/lastFinalized then stay behind, so the update is sent again
   * on the next block, attestation or slot.
   */
  async updateHead(): Promise<void> {
    const { forkChoice, engine, events, metrics, log } = this.deps;
    const head = forkChoice.head();
    const fin = forkChoice.finalized();
    if (head !== this.lastPublishedHead) {
      // Validators learn here that the head changed branch, so duties drawn on the old one are
      // refetched before their slot rather than found stale at it.
      this.lastPublishedHead = head;
      events?.publish('head', { slot: this.deps.record(head)!.slot, block_hash: head, proposer_dependent_roots: this.deps.headDependentRoots(head) });
    }
    if (head === this.lastHead && fin.root === this.lastFinalized) return;
    // Execution refuses a head that does not descend from the finalized block (409). Fork choice
    // walks from the justified checkpoint, which agrees with the finalized one, so this pair is
    // always consistent; checked anyway so a fork-choice bug shows up here, not as a reorg.
    let consistent: boolean;
    try {
      consistent = forkChoice.isDescendant(fin.root, head);
    } catch {
      consistent = false;
    }
    if (!consistent) {
      metrics.forkchoiceUpdatesFailed.inc({ reason: 'INCONSISTENT_FORK_CHOICE' });
      log.error('fork choice head does not descend from the finalized checkpoint; not sent to execution', { head, finalized: fin.root, finalized_epoch: fin.epoch });
      return;
    }
    let reverted: number;
    let applied: number;
    try {
      ({ reverted, applied } = await engine.forkchoiceUpdated(head, fin.root));
    } catch (err) {
      const code = err instanceof SvcError ? err.code : 'INTERNAL';
      metrics.forkchoiceUpdatesFailed.inc({ reason: code });
      log.warn('execution refused forkchoiceUpdated; will retry', { head, finalized: fin.root, code, error: (err as Error).message });
      return;
    }
    // A reorg (or catching up on blocks imported off its head) can revert or apply deposits and
    // exits that newPayload did not report as changes of the current registry. Execution checks
    // the proposer draw against its registry: the beacon's copy must follow, or the next
    // proposals would be drawn from a registry execution no longer has and be refused.
    if (reverted > 0 || applied > 0) {
      await this.deps.refreshRegistry().catch((err: Error) => log.warn('registry refresh after a reorg failed; refreshed again on the next block', { error: err.message }));
    }
    if (fin.root !== this.lastFinalized) {
      metrics.finalizedEpoch.set(fin.epoch);
      metrics.blocksFinalized.inc(this.newlyFinalized(fin.root));
      events?.publish('finalized_checkpoint', { epoch: fin.epoch, root: fin.root });
      log.info('finalized', { epoch: fin.epoch, root: fin.root });
      await this.deps.onFinalized(fin);
      forkChoice.prune();
    }
    this.lastHead = head;
    this.lastFinalized = fin.root;
  }

  /**
   * Checks that execution is reachable and on this chain. Every slot, not only after a failed
   * call: execution may have been restarted on other data between two calls. While the check
   * fails, the engine client sends execution nothing that changes its state (no newPayload or
   * forkchoiceUpdated) and health says why.
   */
  async checkChain(): Promise<void> {
    // One check at a time: against a hung node, slot ticks must not pile up requests.
    if (this.checking) return;
    this.checking = true;
    try {
      const before = this.deps.engine.linkProblem()?.code;
      await this.deps.engine.checkChain().catch(() => undefined);
      const now = this.deps.engine.linkProblem();
      if (now && now.code !== before) this.deps.log.error('execution cannot be driven; nothing is sent to it until this is resolved', { code: now.code, error: now.message });
      else if (!now && before) this.deps.log.info('execution link restored', { was: before });
    } finally {
      this.checking = false;
    }
  }

  /**
   * Blocks that became final when finality moved from lastFinalized to `root`: the height
   * difference, since the new finalised block descends from the old one. Finality can jump
   * several epochs at once, and epochs may hold empty slots, so neither 1 nor the epoch count
   * is the number of blocks.
   */
  private newlyFinalized(root: string): number {
    const now = this.deps.record(root)?.index;
    const before = this.deps.record(this.lastFinalized)?.index ?? 0;
    return now === undefined ? 0 : Math.max(0, now - before);
  }
}
