/**
 * What follows the canonical chain: the indexes only canonical blocks have (height to hash,
 * transaction locations, logs) and the in-memory sets their changes move (validator registry,
 * ECDSA authorisations, consensus fields, included votes). Import extends it by one block; a
 * reorg reverts one branch and applies another. Everything is queued on the caller's batch; the
 * caller writes it and moves its head pointer.
 */
import type { Receipt } from '../../api/execution.js';
import type { Transaction } from '../../core/types/transaction.js';
import type { WriteBatch } from '../shared/store.js';
import type { Branch } from './ancestry.js';
import type { Authorizations } from './txpool/authorizations.js';
import type { BlockRecord, BlockStore, LoadedChanges } from './blocks.js';
import type { ConsensusFields } from './consensus-fields.js';
import type { LogIndex } from './logs.js';
import type { Registry, RegistryChanges } from './registry.js';
import type { ConsensusAccounting } from './rewards.js';
import { Keys } from './store.js';

/** A block that joined the canonical chain, with what the pool needs to forget its transactions. */
export interface AppliedBlock {
  record: BlockRecord;
  txHashes: string[];
  /** Accounts whose nonce the block advanced: every transaction's sender. */
  senders: string[];
  /** Validators the block's slashing evidence slashed. */
  slashed: number;
}

/** A block that left the canonical chain, with its transactions to re-pool. */
export interface RevertedBlock {
  record: BlockRecord;
  txHashes: string[];
  transactions: Transaction[];
  /** Accounts whose nonce the block had advanced: their pooled transactions' queue status changes. */
  senders: string[];
}

/** Canonical-chain change, for the pool and the metrics. */
export interface CanonicalChange {
  applied: AppliedBlock[];
  reverted: RevertedBlock[];
}

/** A block's changes that canonical membership applies or reverts. */
export type CanonicalEffects = Pick<LoadedChanges, 'registry' | 'authorizations' | 'votes'>;

/** Applies and reverts canonical blocks' indexes and effects (see the module comment). */
export class CanonicalIndex {
  constructor(
    private readonly blocks: BlockStore,
    private readonly logs: LogIndex,
    private readonly registry: Registry,
    private readonly auth: Authorizations,
    private readonly consensus: ConsensusFields,
    private readonly accounting: ConsensusAccounting,
  ) {}

  /** Queues a block's canonical indexes: its height, its transactions' locations, its logs. */
  put(batch: WriteBatch, r: BlockRecord, txHashes: string[], receipts: readonly Receipt[]): void {
    this.logs.put(batch, r, receipts);
    batch.put(Keys.canonical(r.index), r.hash);
    // The location's JSON by template (hex and an integer need no escaping): 1,428 of them per full block.
    txHashes.forEach((tx, index) => batch.ops.push({ type: 'put', key: Keys.txLocation(tx), value: `{"block":"${r.hash}","index":${index}}` }));
  }

  /** Applies (1) or reverts (-1) a block's effects in memory and queues their persistence. */
  follow(batch: WriteBatch, record: BlockRecord, changes: CanonicalEffects, sign: 1 | -1): void {
    this.persistRegistry(batch, changes.registry, sign);
    this.auth.apply(changes.authorizations, sign, batch);
    this.consensus.persist(batch, record, sign);
    this.accounting.persist(batch, changes.votes, sign);
  }

  /**
   * Queues the move along `branch` to `target` (indexes, then effects, in memory too) and returns
   * the change for the node. Reads every block it needs before it touches memory, so a failed
   * read leaves the registry and authorisation sets as they were.
   */
  async reorg(batch: WriteBatch, branch: Branch, target: BlockRecord): Promise<CanonicalChange> {
    const { reverted, applied } = branch;
    // The reverted blocks' transactions go back to the pool, so their bodies are read here,
    // with the rest of the reorg's work (proportional to the blocks it moves).
    const out = await Promise.all(
      reverted.map(async (record) => ({ record, changes: await this.blocks.changes(record.hash), txHashes: await this.blocks.txHashes(record.hash), transactions: (await this.blocks.block(record.hash))?.transactions ?? [] })),
    );
    const into = await Promise.all(applied.map(async (record) => ({ record, changes: await this.blocks.changes(record.hash), txHashes: await this.blocks.txHashes(record.hash), receipts: await this.blocks.receipts(record.hash) })));
    for (const r of out) {
      this.logs.revert(batch, r.record, await this.blocks.receipts(r.record.hash));
      if (r.record.index > target.index) batch.del(Keys.canonical(r.record.index));
      for (const tx of r.txHashes) batch.del(Keys.txLocation(tx));
    }
    for (const a of into) this.put(batch, a.record, a.txHashes, a.receipts);
    for (const r of out) this.follow(batch, r.record, r.changes, -1);
    for (const a of into) this.follow(batch, a.record, a.changes, 1);
    return {
      applied: into.map((a) => ({ record: a.record, txHashes: a.txHashes, senders: a.changes.senders, slashed: a.changes.registry.slashed?.length ?? 0 })),
      reverted: out.map((r) => ({ record: r.record, txHashes: r.txHashes, transactions: r.transactions, senders: r.changes.senders })),
    };
  }

  /** Applies registry changes in memory and queues their persistence; returns the batch. */
  private persistRegistry(batch: WriteBatch, changes: RegistryChanges, sign: 1 | -1): WriteBatch {
    const touched = this.registry.apply(changes, sign);
    if (sign === -1) for (const e of changes.added) batch.del(Keys.validator(e.index));
    for (const e of touched) if (sign === 1 || !changes.added.some((a) => a.index === e.index)) batch.put(Keys.validator(e.index), e);
    return batch;
  }
}
