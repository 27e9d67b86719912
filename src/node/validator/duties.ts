/**
 * The validator client's proposer duties, per epoch, cached with the dependent root they were
 * drawn from (docs/beacon.md, "Dependent root"): the root of the last block before epoch − 1
 * starts on the head's branch, whose RANDAO mix seeds the epoch. Duties with another dependent
 * root than the head's were drawn on another branch and must not be signed with.
 *
 * Without a reorg an epoch is fetched once. A `head` event naming another dependent root for a
 * cached epoch drops it (the owner reloads it), and an answer that disagrees with the last head
 * event is returned but not cached: that event may have been handled while the request was out,
 * when there was nothing cached for it to drop.
 */
import type { HeadView, ProposerDutiesView, ProposerDutyView } from '../../api/beacon.js';
import { epochOfSlot, type Genesis } from '../../core/genesis/genesis.js';
import type { Logger } from '../../util/log.js';

/** What a dependent root is read from: a head and the dependent roots it names. */
export type HeadRef = Pick<HeadView, 'root' | 'slot' | 'proposer_dependent_roots'>;

/** An epoch's proposer duties and the dependent root they were drawn from. */
export interface CachedDuties {
  dependentRoot: string;
  duties: ProposerDutyView[];
}

/**
 * The dependent root of `epoch`'s proposer duties on `head`'s branch: the head names those of its
 * own epoch and the next; a later epoch's seed is the mix after the head block itself (the last
 * block before epoch − 1 starts). Undefined for an epoch before the head's, which nobody can
 * propose in on this head.
 */
export function dependentRootOn(head: HeadRef, epoch: number, genesis: Genesis): string | undefined {
  const headEpoch = epochOfSlot(genesis, head.slot);
  if (epoch >= headEpoch + 2) return head.root;
  return head.proposer_dependent_roots.find((d) => d.epoch === epoch)?.root;
}

export interface ProposerDutiesCacheOptions {
  genesis: Genesis;
  /** GET /api/v1/validator/duties/proposer/:epoch, answer checked to be for `epoch`. */
  fetch: (epoch: number) => Promise<ProposerDutiesView>;
  log: Logger;
}

export class ProposerDutiesCache {
  private readonly byEpoch = new Map<number, CachedDuties>();
  /** The last `head` event while the stream is up. */
  private eventHead: HeadRef | undefined;

  constructor(private readonly opts: ProposerDutiesCacheOptions) {}

  /** The cached duties of `epoch`, if any. */
  peek(epoch: number): CachedDuties | undefined {
    return this.byEpoch.get(epoch);
  }

  /** Forgets `epoch` (the next `get` fetches it). */
  drop(epoch: number): void {
    this.byEpoch.delete(epoch);
  }

  /** Duties of `epoch`: cached, or fetched (and cached unless the last head event disagrees); older epochs are dropped. */
  async get(epoch: number): Promise<CachedDuties> {
    const cached = this.byEpoch.get(epoch);
    if (cached) return cached;
    const d = await this.opts.fetch(epoch);
    for (const e of this.byEpoch.keys()) if (e < epoch - 1) this.byEpoch.delete(e);
    const entry = { dependentRoot: d.dependent_root, duties: d.duties };
    const heard = this.eventHead && dependentRootOn(this.eventHead, epoch, this.opts.genesis);
    if (heard !== undefined && heard !== entry.dependentRoot) {
      this.opts.log.debug('proposer duties answered for another branch than the last head event\'s: not cached', { epoch, dependent_root: entry.dependentRoot, head_dependent_root: heard });
      return entry;
    }
    this.byEpoch.set(epoch, entry);
    return entry;
  }

  /** Records a `head` event; drops and returns the cached epochs that head's branch draws differently. */
  onHead(head: HeadRef): number[] {
    this.eventHead = head;
    const stale: number[] = [];
    for (const [epoch, cached] of this.byEpoch) {
      const want = dependentRootOn(head, epoch, this.opts.genesis);
      if (want === undefined || want === cached.dependentRoot) continue;
      this.opts.log.info('the head moved to a branch with other proposer duties: fetching them again', { epoch, head: head.root, dependent_root: want, duties_dependent_root: cached.dependentRoot });
      this.byEpoch.delete(epoch);
      stale.push(epoch);
    }
    return stale;
  }

  /** The event stream dropped: head changes are no longer heard of, so the last one would only go stale. */
  forgetHead(): void {
    this.eventHead = undefined;
  }
}
