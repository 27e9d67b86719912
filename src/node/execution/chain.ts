/**
 * The execution chain: block validation (the spec's six steps, in order), application against
 * a view of the parent's state (transactions, then the block's consensus rewards: see rewards.ts),
 * canonical-chain bookkeeping, and reorganisation by forkchoiceUpdated. Account state is the
 * persisted trie in state/: every stored, non-pruned block's state stays readable by its root, so
 * a side branch validates against its own parent and a reorg only moves the head. Every state
 * change is one LevelDB batch.
 *
 * This file keeps what needs the chain's pointers and lock: opening, the head and finalised
 * pointers, queries, and the order of an import and of a forkchoiceUpdated (what is durable before
 * what moves in memory). The steps themselves live by concern: block-validation.ts (steps 1 to 5,
 * slashing evidence), block-execution.ts (step 6), canonical.ts (canonical indexes and what a
 * block's membership changes), ancestry.ts, pruning.ts, chain-init.ts (layout, upgrade, genesis).
 */
import { HASH_BYTES } from '../../core/constants.js';
import { blockRecommitments } from '../../core/consensus/recommit.js';
import { BlockError, SvcError } from '../../core/errors.js';
import { ExecutionError } from './errors.js';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { type Block, blockHash } from '../../core/types/block.js';
import { sha3 } from '../../core/crypto/hash.js';
import { encodeTx, isAuthorization } from '../../core/types/transaction.js';
import { Authorizations } from './txpool/authorizations.js';
import { ConsensusFields } from './consensus-fields.js';
import type { Logger } from '../../util/log.js';
import { Mutex } from '../../util/mutex.js';
import { Registry, type RegistryChanges, commitRegistry } from './registry.js';
import type { RegistryEntry, Receipt } from '../../api/execution.js';
import { StateDb } from './state/db.js';
import { EMPTY_REF, type NodeRef } from './state/trie.js';
import type { AccountProofJson, StateView } from './state/types.js';
import type { StateSource } from './state/view.js';
import { type BlockRecord, BlockStore, type ChainCacheOptions, DEFAULT_CHAIN_CACHE, encodeShell, blockSize, type LoadedChanges, receiptJson } from './blocks.js';
import { type ChainStore, WriteBatch } from '../shared/store.js';
import { BodyFile, type BodyWrite } from './body-file.js';
import { Keys } from './store.js';
import type { SignatureVerifier } from './verifier.js';
import { ConsensusAccounting } from './rewards.js';
import { LogIndex } from './logs.js';
import { BridgeExecution, bridgeData } from './bridge.js';
import type { BlockRef, ImportResult } from '../../api/execution.js';
import type { EncodedReceipts } from '../../api/import-answer.js';
import { ancestorAt, branchPath, replayPath } from './ancestry.js';
import { BlockExecutor } from './block-execution.js';
import { BlockValidator, type SignatureObserver } from './block-validation.js';
import { type CanonicalChange, CanonicalIndex } from './canonical.js';
import { checkLayout, initGenesis } from './chain-init.js';
import { type HistoryMode, type KeptHistory, PRUNE_CATCH_UP_HEIGHTS, descendsFromFinalized, historyReadable, prunedMessage, queuePrune } from './pruning.js';

export type { BlockChanges, BlockRecord, ChainCacheOptions } from './blocks.js';
export { DEFAULT_CHAIN_CACHE } from './blocks.js';
export type { AppliedBlock, CanonicalChange, RevertedBlock } from './canonical.js';

/**
 * An import's result with its receipts as stored, so the engine route answers without
 * serialising them again: the JSON strings (absent for a block already known) and, when the
 * block went to the body file, their UTF-8 bytes.
 */
export interface ImportWithJson {
  result: ImportResult;
  receiptsJson?: string[];
  receiptsEncoded?: EncodedReceipts;
}

/** Hooks into the node (signature timings: SignatureObserver). */
export interface ChainObserver extends SignatureObserver {
  canonicalChanged(change: CanonicalChange): void;
  blockRejected(code: string, message: string): void;
}

/** The execution layer's chain: imports blocks, follows forkchoiceUpdated, answers reads at any kept block. */
export class ExecutionChain {
  /** The state trie (accounts, storage, code). */
  state!: StateDb;
  readonly registry = new Registry();
  readonly auth = new Authorizations();
  private readonly mutex = new Mutex();
  /** Stored blocks: records, receipts, transactions, state changes. */
  readonly blocks: BlockStore;
  /** Canonical blocks' logs, for eth_getLogs (the API reads the chain's one index). */
  readonly logs: LogIndex;
  private headRef!: BlockRef;
  /** The head block's state root (kept beside headRef so head reads need no record lookup). */
  private headRoot: NodeRef = EMPTY_REF;
  private headAccounts = 0;
  /** Last state version handed out (one per imported block). */
  private version = 0;
  private finalizedRef!: BlockRef;
  /** The history mode and how far pruning has gone (pruning.ts). */
  private kept!: KeptHistory;
  readonly genesisHash: string;
  private readonly consensus: ConsensusFields;
  private readonly accounting: ConsensusAccounting;
  /** Bridge operations and counterpart documents (bridge.ts). */
  readonly bridge: BridgeExecution;
  private readonly validator: BlockValidator;
  private readonly executor: BlockExecutor;
  private readonly canonical: CanonicalIndex;

  private constructor(
    readonly genesis: Genesis,
    readonly store: ChainStore,
    verifier: SignatureVerifier,
    private readonly log: Logger,
    private readonly observer: ChainObserver,
    cache: ChainCacheOptions,
    bodies: BodyFile | undefined,
  ) {
    this.blocks = new BlockStore(store, cache, bodies);
    this.logs = new LogIndex(store);
    this.genesisHash = toHex(genesisHash(genesis));
    this.consensus = new ConsensusFields(genesis, this.genesisHash, store, this.registry);
    this.accounting = new ConsensusAccounting(genesis, store, this.registry);
    this.bridge = new BridgeExecution(store, genesis, this.genesisHash, this.registry);
    this.validator = new BlockValidator(genesis, this.registry, this.consensus, verifier, this.blocks, observer);
    this.executor = new BlockExecutor(genesis, this.registry, this.auth, this.bridge, this.accounting);
    this.canonical = new CanonicalIndex(this.blocks, this.logs, this.registry, this.auth, this.consensus, this.accounting);
  }

  /**
   * Opens the chain in `store` and its state in `stateStore` (a database of its own), initialising
   * both from genesis on first use. With `bodiesPath` (a node with a data directory) block bodies go
   * to that append-only file (body-file.ts), cut back to the end the database indexes; without it
   * they are database entries. `history` is what it keeps of past states (pruning.ts).
   */
  static async open(genesis: Genesis, store: ChainStore, stateStore: ChainStore, verifier: SignatureVerifier, log: Logger, observer: ChainObserver, cache: ChainCacheOptions = DEFAULT_CHAIN_CACHE, bodiesPath?: string, history: HistoryMode = 'finalized'): Promise<ExecutionChain> {
    // Before anything touches the directory: a refused one is left exactly as it was.
    await checkLayout(store, toHex(genesisHash(genesis)));
    const bodies = bodiesPath === undefined ? undefined : await BodyFile.open(bodiesPath, (await store.get<number>(Keys.meta('body_end'))) ?? 0);
    const chain = new ExecutionChain(genesis, store, verifier, log, observer, cache, bodies);
    try {
      chain.state = await StateDb.open(stateStore, cache.stateBytes);
    } catch (err) {
      await chain.blocks.close();
      throw err;
    }
    try {
      await chain.load(history);
    } catch (err) {
      await chain.state.close();
      await chain.blocks.close();
      throw err;
    }
    // In the background: the node serves and imports meanwhile (a block that comes first reads its own paths).
    chain.state.warm(chain.headRoot).then(
      (r) => log.info('state trie upper levels cached', { levels: r.levels, nodes: r.nodes, bytes: r.bytes, ms: Math.round(r.ms) }),
      (err: unknown) => log.warn('state trie warm-up stopped', { error: (err as Error).message }),
    );
    return chain;
  }

  // Start-up reads the head and finalised records, the registry and authorisations: no account.
  private async load(history: HistoryMode): Promise<void> {
    const chain = this;
    const store = this.store;
    const stored = await store.get<string>(Keys.meta('genesis'));
    // The state batch of an import (or of genesis) is durable before the chain batch naming its
    // version: a crash between the two leaves versions the chain does not know, which go first.
    const version = stored === undefined ? -1 : ((await store.get<number>(Keys.meta('state_version'))) ?? 0);
    const dropped = await chain.state.recover(version);
    if (dropped > 0) this.log.warn('deleted state written by an import that did not complete', { above_version: version, keys: dropped });
    if (stored === undefined) await initGenesis(this.genesis, this.genesisHash, chain.state, chain.blocks, store);
    // The layout and genesis were checked by `open` (checkLayout).
    chain.registry.load((await store.scan<RegistryEntry>('v:')).map((e) => e.value));
    chain.auth.load((await store.scan<string[]>('e:')).map((e) => ({ account: e.key.slice(2), keys: e.value })));
    chain.headRef = (await store.get<BlockRef>(Keys.meta('head')))!;
    chain.finalizedRef = (await store.get<BlockRef>(Keys.meta('finalized')))!;
    chain.version = (await store.get<number>(Keys.meta('state_version'))) ?? 0;
    const head = await chain.record(chain.headRef.hash);
    if (!head) throw new ExecutionError('CORRUPT_DB', `head block ${chain.headRef.hash} is not stored`);
    chain.setHead(head);
    await chain.openHistory(history, stored === undefined);
  }

  /**
   * Records the history mode. A directory from before the flag pruned at finality, so it was
   * `finalized` and pruned up to its finalised block. Switching to full keeps every state from
   * there on; switching to finalized prunes what full history kept, once, in bounded batches.
   */
  private async openHistory(mode: HistoryMode, fresh: boolean): Promise<void> {
    const was = fresh ? mode : ((await this.store.get<HistoryMode>(Keys.meta('history'))) ?? 'finalized');
    this.kept = { mode: was, prunedTo: (await this.store.get<BlockRef>(Keys.meta('pruned_to'))) ?? this.finalizedRef };
    if (was === 'full' && mode === 'finalized') await this.pruneKeptHistory();
    if (was !== mode) this.log.info('history mode changed', { from: was, to: mode, pruned_to: this.kept.prunedTo.index });
    this.kept = { mode, prunedTo: this.kept.prunedTo };
    await this.store.write(new WriteBatch().put(Keys.meta('history'), mode).put(Keys.meta('pruned_to'), this.kept.prunedTo));
  }

  /** Prunes from where full history began up to finality, PRUNE_CATCH_UP_HEIGHTS heights per write, so memory stays bounded however long the history. */
  private async pruneKeptHistory(): Promise<void> {
    const stops: BlockRef[] = [];
    let r = await this.record(this.finalizedRef.hash);
    while (r && r.index > this.kept.prunedTo.index) {
      if (stops.length === 0 || r.index % PRUNE_CATCH_UP_HEIGHTS === 0) stops.push({ hash: r.hash, index: r.index });
      r = await this.record(r.parent);
    }
    for (const to of stops.reverse()) {
      const batch = new WriteBatch();
      const pruned = await queuePrune(this.store, this.blocks, this.state, batch, this.kept.prunedTo, to);
      await this.store.write(batch.put(Keys.meta('pruned_to'), to));
      this.state.pruned(pruned);
      this.kept = { ...this.kept, prunedTo: to };
    }
  }

  private setHead(r: BlockRecord): void {
    this.headRef = { hash: r.hash, index: r.index };
    this.headRoot = rootOf(r);
    this.headAccounts = r.accounts;
  }

  /** Stops the state reader thread and closes the body file (the database itself is the node's to close). */
  async close(): Promise<void> {
    // Under the mutex: an import in flight finishes its body writes before the file closes.
    await this.mutex.run(() => this.blocks.close());
    await this.state.close();
  }

  /** A read-only view of the head state (admission, account lookups); synchronous. */
  headState(): StateView {
    return this.state.view(this.headRoot);
  }

  /** Reads the head state's paths to `addresses` into the cache with batched reads (before synchronous reads of them). */
  prefetchHead(addresses: Iterable<string>): Promise<void> {
    return this.state.prefetch(this.headRoot, addresses);
  }

  /** Non-empty accounts in the head state. */
  accountCount(): number {
    return this.headAccounts;
  }

  /** A throwaway view of the state after a stored block whose state is not pruned (for eth_call and reads at a block). */
  async stateView(blockHash: string): Promise<StateView> {
    return this.state.view(await this.readableRoot(blockHash));
  }

  /** The committed state of a stored, non-pruned block as a source and root (what a View reads; the call threads read through it). */
  async stateSource(blockHash: string): Promise<{ source: StateSource; root: NodeRef }> {
    return { source: this.state, root: await this.readableRoot(blockHash) };
  }

  /** Account and storage proofs (existence or absence) against the state root of a stored, non-pruned block. */
  async proof(blockHash: string, address: string, keys: Uint8Array[]): Promise<AccountProofJson> {
    return this.state.proof(await this.readableRoot(blockHash), address, keys);
  }

  private async readableRoot(blockHash: string): Promise<NodeRef> {
    const r = await this.record(blockHash);
    if (!r) throw new ExecutionError('UNKNOWN_BLOCK', `unknown block ${blockHash}`);
    if (!(await historyReadable(this.blocks, r, this.headRef, this.finalizedRef, this.kept))) throw new ExecutionError('STATE_PRUNED', prunedMessage(r, this.kept));
    return rootOf(r);
  }

  /** Current canonical head. */
  head(): BlockRef {
    return this.headRef;
  }

  /** Latest finalised block. */
  finalized(): BlockRef {
    return this.finalizedRef;
  }

  /** A stored block record by hash (any branch). */
  record(hash: string): Promise<BlockRecord | undefined> {
    return this.blocks.record(hash);
  }

  /** Canonical block hash at `height`. */
  async canonicalHash(height: number): Promise<string | undefined> {
    if (height > this.headRef.index || height < 0) return undefined;
    return this.store.get<string>(Keys.canonical(height));
  }

  /** Where a transaction sits on the canonical chain. */
  async txLocation(txHash: string): Promise<{ block: string; index: number } | undefined> {
    return this.store.get<{ block: string; index: number }>(Keys.txLocation(txHash));
  }

  /**
   * Validates and stores a block; it becomes the head when it extends the head. `envelopes`, when
   * given, are the transactions' canonical envelopes as received (decodeBlockWithEnvelopes), in order.
   */
  async importBlock(block: Block, envelopes?: Uint8Array[]): Promise<ImportResult> {
    return (await this.importForAnswer(block, envelopes)).result;
  }

  /**
   * importBlock, also returning each receipt as the JSON string stored for it (absent for a block
   * already known), so the engine route answers without serialising 1,428 receipts a second time.
   */
  importForAnswer(block: Block, envelopes?: Uint8Array[]): Promise<ImportWithJson> {
    return this.mutex.run(async () => {
      try {
        return await this.importLocked(block, envelopes ?? block.transactions.map(encodeTx));
      } catch (err) {
        if (err instanceof SvcError) this.observer.blockRejected(err.code, err.message);
        throw err;
      }
    });
  }

  private summary(r: BlockRecord, receipts: Receipt[], canonical: boolean, already: boolean, registryChanged = false): ImportResult {
    return { status: 'VALID', block_hash: r.hash, block_number: r.index, state_root: r.state_root, gas_used: r.gas_used, receipts, canonical, already_known: already, registry_changed: registryChanged };
  }

  private async importLocked(block: Block, envelopes: Uint8Array[]): Promise<ImportWithJson> {
    const h = block.header;
    const hash = toHex(blockHash(h));
    const known = await this.record(hash);
    if (known) {
      await this.validator.checkKnownCopy(block, known, envelopes.map((e) => sha3(e)));
      return { result: this.summary(known, await this.blocks.receipts(hash), (await this.canonicalHash(known.index)) === hash, true) };
    }
    const parent = await this.record(toHex(h.parentHash));
    if (!parent) throw new BlockError('UNKNOWN_PARENT', toHex(h.parentHash));
    if (h.index !== parent.index + 1) throw new BlockError('INVALID_HEIGHT', `index ${h.index}, parent index ${parent.index}`);
    // The envelopes' write overlaps the block's validation and execution; a block refused below
    // leaves its bytes past the committed end, where the next body overwrites them.
    const body = this.blocks.beginBody(envelopes);
    try {
      return await this.importNew(block, envelopes, hash, parent, body);
    } catch (err) {
      await body?.settle();
      throw err;
    }
  }

  /** importLocked for a block not stored yet whose parent is (`body`: its envelopes' write in the body file, if any). */
  private async importNew(block: Block, envelopes: Uint8Array[], hash: string, parent: BlockRecord, body: BodyWrite | undefined): Promise<ImportWithJson> {
    const h = block.header;
    const slot = this.consensus.slotOf(h.timestampMs, parent);

    // Steps 1 to 5: Merkle root, transaction signatures, proposer, block signature, VRF proof.
    const { verified, txHashes, proposer, validator } = await this.validator.checkAuthenticity(block, envelopes, parent, slot);

    // Step 6: state transitions against the parent's state.
    if (!(await descendsFromFinalized(this.blocks, parent, this.headRef, this.finalizedRef))) throw new BlockError('PARENT_STATE_PRUNED', `parent ${parent.hash} (${parent.index}), finalized ${this.finalizedRef.hash} (${this.finalizedRef.index})`);
    // Checked before anything is read or written: the header commits to the state it executes
    // on, which is what a light client proves accounts against.
    if (toHex(h.stateRoot) !== parent.state_root) throw new BlockError('STATE_ROOT_MISMATCH', `header state_root ${toHex(h.stateRoot)}, parent ${parent.index} post-state root ${parent.state_root}`);
    const parentState = await replayPath(this.blocks, this.headRef.hash, parent);
    // randao_reveal is hash-covered but unsigned: it must be the proposer's next link on this branch.
    const revealed = await this.consensus.checkReveal(h, slot, parent, validator, parentState.path);
    // Re-commitments are judged against the registry before the block, as the beacon judges them.
    const recommits = blockRecommitments(block.transactions, proposer, (a) => this.registry.get(a), () => this.consensus.activeCount());
    const consensus = await this.consensus.withCommits(revealed, recommits.applied, parentState.path);
    // Included votes are checked on this block's branch, then credited with the transactions.
    const votes = await this.accounting.check(block.attestations, slot, parentState.votes);
    // Evidence is verified here against execution's own registry, never taken from the beacon.
    const slashed = this.validator.checkSlashings(block.slashings);
    const parentRoot = rootOf(parent);
    // What the block obviously touches is read with batched reads first; execution's own reads
    // (a contract's storage, a callee) are then mostly cache hits, and the rest read synchronously.
    // Each recipient's hex once: the prefetch list and execution both need it.
    const recipients = block.transactions.map((tx) => (isAuthorization(tx) || tx.to === null ? null : toHex(tx.to)));
    await this.state.prefetch(parentRoot, this.executor.touchedBy(block, verified, recipients, votes, proposer));
    const view = this.state.view(parentRoot);
    const docs = await this.bridge.prepare(bridgeData(block.transactions), view);
    const exec = this.executor.execute(block, hash, verified, recipients, view, votes, recommits, docs);
    if (slashed.length > 0) exec.registry.slashed = slashed;
    // The registry's words go into the state the block commits, their entries beside the block.
    const registryWords = commitRegistry(view, this.registry, exec.registry);
    // Serialised once: the stored entries and the engine route's answer share the strings. The
    // receipts' write and the file's sync run while the state commits below.
    const receiptsJson = exec.receipts.map(receiptJson);
    const stored = body?.finish(receiptsJson);
    const version = this.version + 1;
    const committed = this.state.commit(view, version);
    const shell = encodeShell(block);
    const record: BlockRecord = {
      hash,
      index: h.index,
      parent: parent.hash,
      timestamp: h.timestampMs,
      proposer,
      state_root: toHex(committed.root.hash),
      gas_used: exec.gasUsed,
      fees: exec.fees.toString(),
      tx_count: envelopes.length,
      size: blockSize(shell, envelopes),
      state_version: version,
      root_version: committed.root.version,
      accounts: parent.accounts + committed.accountsDelta,
      consensus,
    };
    const changes: LoadedChanges = { senders: exec.senders, registry: exec.registry, authorizations: exec.authorizations, votes };
    const hashes = verified.map((v) => v.hash);
    const extendsHead = parent.hash === this.headRef.hash;
    const batch = new WriteBatch();
    this.blocks.put(batch, { record, changes, shell, envelopes, txHashes, receipts: exec.receipts, receiptsJson, ...(stored ? { body: stored.index } : {}) });
    docs.queue(batch);
    for (const [word, entry] of registryWords) batch.put(Keys.registryEntry(word), entry);
    batch.put(Keys.blockAtHeight(record.index, hash), 0).put(Keys.meta('state_version'), version);
    // Only queued, so it goes before the wait for the body's sync below.
    if (extendsHead) this.canonical.put(batch, record, hashes, exec.receipts);
    // The block's trie nodes go to the state's database while the body file syncs; both are
    // durable before the chain batch that names them, and before anything in memory moves.
    const stateBatch = new WriteBatch();
    this.state.queue(stateBatch, committed);
    // The version is taken once its nodes are on disk, even if the body's sync or the chain batch
    // fails: the next import must not write under it again.
    const stateWritten = this.state.write(stateBatch).then(() => void (this.version = version));
    await Promise.all([stored?.synced, stateWritten]);
    if (extendsHead) {
      this.canonical.follow(batch, record, changes, 1);
      const ref = { hash, index: record.index };
      batch.put(Keys.meta('head'), ref);
      await this.commitOrDie(batch);
      this.setHead(record);
    } else {
      await this.store.write(batch);
    }
    this.blocks.bodyCommitted(stored?.index);
    this.state.committed(committed);
    this.bridge.committed(docs);
    this.blocks.remember(record, changes);
    this.log.info('block imported', { number: record.index, hash, txs: record.tx_count, gas_used: record.gas_used, canonical: extendsHead, state_root: record.state_root });
    if (extendsHead) this.notifyCanonical({ applied: [{ record, txHashes: hashes, senders: exec.senders, slashed: slashed.length }], reverted: [] });
    const registryChanged = extendsHead && registryTouched(changes.registry);
    return { result: this.summary(record, exec.receipts, extendsHead, false, registryChanged), receiptsJson, ...(stored ? { receiptsEncoded: { bytes: stored.receiptBytes, lengths: stored.index.receiptLengths } } : {}) };
  }

  /**
   * Makes `headHash` canonical (account state needs no replay: the head's state root is the
   * target's) and records `finalizedHash`, pruning the trie nodes only states older than it or
   * off its chain use. Finalised blocks are never reverted. Every refusal is a typed 4xx raised
   * before anything is written; an accepted update is one batch (canonical index, transaction
   * locations, registry, authorisations, head and finalised pointers, pruned nodes).
   */
  forkchoiceUpdated(headHash: string, finalizedHash?: string): Promise<{ head: BlockRef; finalized: BlockRef; reverted: number; applied: number }> {
    return this.mutex.run(async () => {
      const target = await this.record(headHash);
      if (!target) throw new ExecutionError('UNKNOWN_BLOCK', `unknown head block ${headHash}`);
      // A head that does not descend from the current finalized block would revert it.
      if (target.index < this.finalizedRef.index || (await ancestorAt(this.blocks, target, this.finalizedRef.index)).hash !== this.finalizedRef.hash) {
        throw new ExecutionError('REORG_PAST_FINALIZED', `cannot reorganise below the finalized block ${this.finalizedRef.index}`);
      }
      let finalized = this.finalizedRef;
      if (finalizedHash !== undefined && finalizedHash !== this.finalizedRef.hash) {
        const f = await this.record(finalizedHash);
        if (!f) throw new ExecutionError('UNKNOWN_BLOCK', `unknown finalized block ${finalizedHash}`);
        if (f.index < this.finalizedRef.index) throw new ExecutionError('FINALITY_REGRESSION', `finalized block ${f.index} is below the current finalized block ${this.finalizedRef.index}`);
        finalized = { hash: f.hash, index: f.index };
      }
      if (finalized.index > target.index || (await ancestorAt(this.blocks, target, finalized.index)).hash !== finalized.hash) {
        throw new ExecutionError('FINALIZED_NOT_ANCESTOR', `finalized block ${finalized.hash} (${finalized.index}) is not an ancestor of head ${target.hash} (${target.index})`);
      }
      const moveHead = target.hash !== this.headRef.hash;
      const moveFinalized = finalized !== this.finalizedRef;
      if (!moveHead && !moveFinalized) return { head: this.headRef, finalized: this.finalizedRef, reverted: 0, applied: 0 };

      const batch = new WriteBatch();
      let change: CanonicalChange = { applied: [], reverted: [] };
      if (moveHead) {
        // Everything that can fail (record reads, state-change parsing) happens before the registry and
        // authorisation sets are touched in memory (CanonicalIndex.reorg reads first).
        const branch = await branchPath(this.blocks, this.headRef.hash, target.hash);
        if (branch.ancestor.index < this.finalizedRef.index) throw new ExecutionError('REORG_PAST_FINALIZED', `cannot reorganise below the finalized block ${this.finalizedRef.index}`);
        change = await this.canonical.reorg(batch, branch, target);
        batch.put(Keys.meta('head'), { hash: target.hash, index: target.index });
      }
      // The finalised pointer travels in the same batch as the head: a crash never leaves a head
      // that moved without the finality it was sent with, or the reverse.
      let pruned: string[] = [];
      if (moveFinalized) {
        batch.put(Keys.meta('finalized'), finalized);
        // A full node keeps every state (and the by-height index a later switch to finalized prunes with).
        if (this.kept.mode === 'finalized') {
          pruned = await queuePrune(this.store, this.blocks, this.state, batch, this.kept.prunedTo, finalized);
          batch.put(Keys.meta('pruned_to'), finalized);
        }
      }
      if (moveHead) {
        await this.commitOrDie(batch);
        this.setHead(target);
      } else {
        // Nothing in memory moved yet, so a failed write can simply be reported.
        await this.store.write(batch);
      }
      this.state.pruned(pruned);
      this.finalizedRef = finalized;
      if (this.kept.mode === 'finalized') this.kept = { mode: 'finalized', prunedTo: finalized };
      if (moveHead) {
        this.log.info('reorganised', { head: this.headRef.hash, number: this.headRef.index, reverted: change.reverted.length, applied: change.applied.length });
        this.notifyCanonical(change);
      }
      return { head: this.headRef, finalized: this.finalizedRef, reverted: change.reverted.length, applied: change.applied.length };
    });
  }

  /**
   * Tells the node about a committed canonical change. The change is durable once its batch is
   * written, so a failing observer (pool re-admission, metrics) must not turn an applied
   * forkchoiceUpdated or newPayload into an error answer: the failure is logged instead.
   */
  private notifyCanonical(change: CanonicalChange): void {
    try {
      this.observer.canonicalChanged(change);
    } catch (err) {
      this.log.error('canonical-change observer failed after the change was committed', { error: (err as Error).stack ?? String(err) });
    }
  }

  // In-memory registry and state were already moved for this batch: a failed write leaves
  // memory ahead of disk, so the process must restart from disk rather than continue.
  private async commitOrDie(batch: WriteBatch): Promise<void> {
    try {
      await this.store.write(batch);
    } catch (err) {
      this.log.error('database write failed after in-memory changes; exiting to recover from disk', { error: (err as Error).message });
      process.exit(70);
    }
  }
}

/** Where a block's state root node is. */
function rootOf(r: BlockRecord): NodeRef {
  return { version: r.root_version, hash: parseHex(r.state_root, 'state_root', HASH_BYTES) };
}

/** Whether a block's registry changes change anything (added, exited, re-committed or slashed validators). */
function registryTouched(c: RegistryChanges): boolean {
  return c.added.length > 0 || c.exited.length > 0 || (c.recommitted?.length ?? 0) > 0 || (c.slashed?.length ?? 0) > 0;
}
