/**
 * The execution chain: block validation (the spec's six steps, in order), application against
 * a view of the parent's state (transactions, then the block's consensus rewards: see rewards.ts),
 * canonical-chain bookkeeping, and reorganisation by forkchoiceUpdated. Account state is the
 * persisted trie in state/: every stored, non-pruned block's state stays readable by its root, so
 * a side branch validates against its own parent and a reorg only moves the head. Every state
 * change is one LevelDB batch.
 */
import { BRIDGE_ADDRESS, DEPOSIT_ADDRESS, EXIT_ADDRESS, HASH_BYTES, RANDAO_COMMIT_ADDRESS, SLASHING_PENALTY_DIVISOR, TX_BASE_GAS } from '../../core/constants.js';
import { blockRecommitments, type BlockRecommitments } from '../../core/consensus/recommit.js';
import { type SlashingEvidence, SlashingError, checkBlockEvidence } from '../../core/consensus/slashing.js';
import { BlockError, SvcError, TxError } from '../../core/errors.js';
import { bytesEqual, parseHex, toHex } from '../../core/codec/bytes.js';
import { vrfVerify } from '../../core/crypto/vrf.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import {
  type Block,
  blockHash,
  blockMerkleRoot,
  canonicalHeaderBytes,
  headerSigningHash,
  signedHeaderOf,
} from '../../core/types/block.js';
import { sha3 } from '../../core/crypto/hash.js';
import { verify } from '../../core/crypto/mldsa.js';
import { type AuthorizationTx, type EcdsaAuthorizedTx, type StandardTx, type Transaction, TxType, checkGasLimit, encodeTx, isAuthorization, maxCost, txKind } from '../../core/types/transaction.js';
import { type AuthChanges, AuthOverlay, Authorizations } from './authorizations.js';
import { type BranchPath, ConsensusFields } from './consensus-fields.js';
import type { Logger } from '../../util/log.js';
import { Mutex } from '../../util/mutex.js';
import { Registry, type RegistryChanges, type SlashedChange } from './registry.js';
import { type LogJson, type RegistryEntry, type Receipt } from '../../api/execution.js';
import { StateDb } from './state/db.js';
import { EMPTY_REF, type NodeRef } from './state/trie.js';
import type { AccountProofJson, StateView } from './state/types.js';
import type { View } from './state/view.js';
import { type BlockRecord, BlockStore, type ChainCacheOptions, DEFAULT_CHAIN_CACHE, encodeShell, blockSize, type LoadedChanges, receiptJson } from './blocks.js';
import { ChainStore, WriteBatch } from '../shared/store.js';
import { BodyFile, type BodyWrite } from './body-file.js';
import { Keys, SCHEMA_VERSION, UPGRADABLE_SCHEMA_VERSIONS } from './store.js';
import { moveStateKeys } from './state/migrate.js';
import type { SignatureVerifier } from './verifier.js';
import { ConsensusAccounting, type IncludedVote, type VotePath } from './rewards.js';
import { LogIndex } from './logs.js';
import { runContractTx } from './vm/executor.js';
import { type BridgeDocs, BridgeExecution, bridgeData, bridgeKind } from './bridge.js';
import type { BlockRef, ImportResult } from '../../api/execution.js';
import type { EncodedReceipts } from '../../api/import-answer.js';

export type { BlockChanges, BlockRecord, ChainCacheOptions } from './blocks.js';
export { DEFAULT_CHAIN_CACHE } from './blocks.js';

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

/** One block's execution in progress (ExecutionChain.execute): its inputs, and what its transactions have added up to so far. */
interface BlockRun {
  readonly block: Block;
  readonly blockHashHex: string;
  readonly proposer: string;
  readonly state: View;
  readonly recommits: BlockRecommitments;
  readonly docs: BridgeDocs;
  readonly senders: Set<string>;
  readonly receipts: Receipt[];
  readonly registry: RegistryChanges;
  readonly auth: AuthOverlay;
  /** Gas used by the transactions so far. */
  cumulative: bigint;
  fees: bigint;
  /** Fees not yet credited to the proposer (see payProposer), and whether any were charged since the last credit. */
  owedFees: bigint;
  owed: boolean;
  /** Logs emitted so far: they are numbered across the block, as eth_getLogs reports them. */
  logCount: number;
}

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

/** Hooks into the node. */
export interface ChainObserver {
  canonicalChanged(change: CanonicalChange): void;
  blockRejected(code: string, message: string): void;
  signatureChecked(kind: 'block' | 'vrf', ms: number, ok: boolean, canonicalBytes?: number): void;
}

const ZERO_HASH = '0x' + '00'.repeat(HASH_BYTES);
const ZERO_ADDRESS = '0x' + '00'.repeat(20);

function txFail(hash: string, reason: string): BlockError {
  return new BlockError('INVALID_TRANSACTION', `tx ${hash}: ${reason}`);
}

export class ExecutionChain {
  /** The state trie (accounts, storage, code). */
  state!: StateDb;
  readonly registry = new Registry();
  readonly auth = new Authorizations();
  private readonly mutex = new Mutex();
  /** Stored blocks: records, receipts, transactions, state changes. */
  readonly blocks: BlockStore;
  /** Canonical blocks' logs, for eth_getLogs. */
  private readonly logs: LogIndex;
  private headRef!: BlockRef;
  /** The head block's state root (kept beside headRef so head reads need no record lookup). */
  private headRoot: NodeRef = EMPTY_REF;
  private headAccounts = 0;
  /** Last state version handed out (one per imported block). */
  private version = 0;
  private finalizedRef!: BlockRef;
  readonly genesisHash: string;
  private readonly maxGas: bigint;
  private readonly minGasPrice: bigint;
  private readonly minStake: bigint;
  private readonly consensus: ConsensusFields;
  private readonly accounting: ConsensusAccounting;
  /** Bridge operations and counterpart documents (bridge.ts). */
  readonly bridge: BridgeExecution;

  private constructor(
    readonly genesis: Genesis,
    readonly store: ChainStore,
    private readonly verifier: SignatureVerifier,
    private readonly log: Logger,
    private readonly observer: ChainObserver,
    cache: ChainCacheOptions,
    bodies: BodyFile | undefined,
  ) {
    this.blocks = new BlockStore(store, cache, bodies);
    this.logs = new LogIndex(store);
    this.genesisHash = toHex(genesisHash(genesis));
    this.maxGas = BigInt(genesis.config.max_gas_per_block);
    this.minGasPrice = BigInt(genesis.config.min_gas_price);
    this.minStake = BigInt(genesis.config.min_validator_stake);
    this.consensus = new ConsensusFields(genesis, this.genesisHash, store, this.registry);
    this.accounting = new ConsensusAccounting(genesis, store, this.registry);
    this.bridge = new BridgeExecution(store, genesis, this.genesisHash);
  }

  /**
   * Opens the chain in `store` and its state in `stateStore` (a database of its own), initialising
   * both from genesis on first use. With `bodiesPath` (a node with a data directory) block bodies go
   * to that append-only file (body-file.ts), cut back to the end the database indexes; without it
   * they are database entries.
   */
  static async open(genesis: Genesis, store: ChainStore, stateStore: ChainStore, verifier: SignatureVerifier, log: Logger, observer: ChainObserver, cache: ChainCacheOptions = DEFAULT_CHAIN_CACHE, bodiesPath?: string): Promise<ExecutionChain> {
    // Before anything touches the directory: a refused one is left exactly as it was.
    const schema = await checkLayout(store, toHex(genesisHash(genesis)));
    if (schema !== undefined && schema !== SCHEMA_VERSION) await upgradeLayout(store, stateStore, schema, log);
    const bodies = bodiesPath === undefined ? undefined : await BodyFile.open(bodiesPath, (await store.get<number>(Keys.meta('body_end'))) ?? 0);
    const chain = new ExecutionChain(genesis, store, verifier, log, observer, cache, bodies);
    try {
      chain.state = await StateDb.open(stateStore, cache.stateBytes);
    } catch (err) {
      await chain.blocks.close();
      throw err;
    }
    try {
      await chain.load();
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
  private async load(): Promise<void> {
    const chain = this;
    const store = this.store;
    const stored = await store.get<string>(Keys.meta('genesis'));
    // The state batch of an import (or of genesis) is durable before the chain batch naming its
    // version: a crash between the two leaves versions the chain does not know, which go first.
    const version = stored === undefined ? -1 : ((await store.get<number>(Keys.meta('state_version'))) ?? 0);
    const dropped = await chain.state.recover(version);
    if (dropped > 0) this.log.warn('deleted state written by an import that did not complete', { above_version: version, keys: dropped });
    if (stored === undefined) await chain.initGenesis();
    // The layout and genesis were checked by `open` (checkLayout).
    chain.registry.load((await store.scan<RegistryEntry>('v:')).map((e) => e.value));
    chain.auth.load((await store.scan<string[]>('e:')).map((e) => ({ account: e.key.slice(2), keys: e.value })));
    chain.headRef = (await store.get<BlockRef>(Keys.meta('head')))!;
    chain.finalizedRef = (await store.get<BlockRef>(Keys.meta('finalized')))!;
    chain.version = (await store.get<number>(Keys.meta('state_version'))) ?? 0;
    const head = await chain.record(chain.headRef.hash);
    if (!head) throw new SvcError('CORRUPT_DB', `head block ${chain.headRef.hash} is not stored`, 500);
    chain.setHead(head);
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

  private async initGenesis(): Promise<void> {
    const g = this.genesis;
    const view = this.state.view(EMPTY_REF);
    for (const a of g.alloc) view.addBalance(a.address, BigInt(a.balance));
    const committed = this.state.commit(view, 0);
    const validators = Registry.fromGenesis(g);
    const record: BlockRecord = {
      hash: this.genesisHash,
      index: 0,
      parent: ZERO_HASH,
      timestamp: g.genesis_time * 1000,
      proposer: ZERO_ADDRESS,
      state_root: toHex(committed.root.hash),
      gas_used: 0,
      fees: '0',
      tx_count: 0,
      size: 0,
      state_version: 0,
      root_version: committed.root.version,
      accounts: committed.accountsDelta,
    };
    const ref: BlockRef = { hash: record.hash, index: 0 };
    const stateBatch = new WriteBatch();
    this.state.queue(stateBatch, committed);
    await this.state.write(stateBatch);
    const batch = new WriteBatch();
    for (const v of validators) batch.put(Keys.validator(v.index), v);
    // Genesis has no body: only its record and state changes are stored.
    this.blocks.put(batch, { record, changes: { senders: [], registry: { added: validators, exited: [] }, authorizations: [], votes: [] }, shell: new Uint8Array(0), envelopes: [], txHashes: [], receipts: [] });
    batch.put(Keys.canonical(0), record.hash);
    batch.put(Keys.meta('head'), ref).put(Keys.meta('finalized'), ref).put(Keys.meta('genesis'), this.genesisHash).put(Keys.meta('schema'), SCHEMA_VERSION).put(Keys.meta('state_version'), 0);
    await this.store.write(batch);
    this.state.committed(committed);
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

  /** Account and storage proofs (existence or absence) against the state root of a stored, non-pruned block. */
  async proof(blockHash: string, address: string, keys: Uint8Array[]): Promise<AccountProofJson> {
    return this.state.proof(await this.readableRoot(blockHash), address, keys);
  }

  private async readableRoot(blockHash: string): Promise<NodeRef> {
    const r = await this.record(blockHash);
    if (!r) throw new SvcError('UNKNOWN_BLOCK', `unknown block ${blockHash}`, 404);
    // The finalised block's parent's state stays readable (pruning runs one block behind): the
    // finalised header's state_root names it, and light clients prove accounts against that header.
    const finalizedParent = r.index === this.finalizedRef.index - 1 && (await this.record(this.finalizedRef.hash))?.parent === r.hash;
    if (!finalizedParent && !(await this.descendsFromFinalized(r))) throw new SvcError('STATE_PRUNED', `the state of block ${r.index} (${r.hash}) is pruned: only the finalized block's parent's, its own and its descendants' states are kept`, 410);
    return rootOf(r);
  }

  // States are kept for the finalised block and its descendants; pruning removed the rest (and
  // the finalised block's parent's, see readableRoot, which imports never build on).
  private async descendsFromFinalized(r: BlockRecord): Promise<boolean> {
    if (r.hash === this.headRef.hash || r.hash === this.finalizedRef.hash) return true;
    if (r.index <= this.finalizedRef.index) return false;
    return (await this.ancestorAt(r, this.finalizedRef.index)).hash === this.finalizedRef.hash;
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
    return (await this.importBlockWithJson(block, envelopes)).result;
  }

  /**
   * importBlock, also returning each receipt as the JSON string stored for it (absent for a block
   * already known), so the engine route answers without serialising 1,428 receipts a second time.
   */
  importBlockWithJson(block: Block, envelopes?: Uint8Array[]): Promise<ImportWithJson> {
    return this.mutex.run(async () => {
      try {
        return await this.importLocked(block, envelopes ?? block.transactions.map(encodeTx));
      } catch (err) {
        if (err instanceof SvcError) this.observer.blockRejected(err.code, err.message);
        throw err;
      }
    });
  }

  private summary(r: BlockRecord, receipts: Receipt[], canonical: boolean, already: boolean): ImportResult {
    return { status: 'VALID', block_hash: r.hash, block_number: r.index, state_root: r.state_root, gas_used: r.gas_used, receipts, canonical, already_known: already };
  }

  private async importLocked(block: Block, envelopes: Uint8Array[]): Promise<ImportWithJson> {
    const h = block.header;
    const hash = toHex(blockHash(h));
    const known = await this.record(hash);
    if (known) {
      await this.checkKnownCopy(block, known, envelopes.map((e) => sha3(e)));
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

    // The verifier derives each hash once (or finds it with the signer of a transaction admitted
    // through the pool), so the root, the cache and storage share it. The checks are still judged
    // in the spec's order: a block with a wrong root is refused for its root, not its signatures.
    const verified = await this.verifier.verifyMany(block.transactions, { envelopes });
    const txHashes = verified.map((v) => hashBytes(v.hash));
    // Step 1: Merkle root.
    if (!bytesEqual(blockMerkleRoot(txHashes, block.attestations, block.slashings), h.merkleRoot)) throw new BlockError('MERKLE_ROOT_MISMATCH');
    // Step 2: every transaction signature (cached when admitted through the pool).
    const bad = verified.find((v) => v.signer === null);
    if (bad) throw txFail(bad.hash, new TxError('ErrInvalidSignature').message);
    // Step 3: the proposer is registered.
    const proposer = toHex(h.validatorId);
    const validator = this.registry.get(proposer);
    if (!validator) throw new BlockError('UNKNOWN_VALIDATOR', proposer);
    const publicKey = this.registry.publicKey(validator);
    // Step 4: block signature over the canonical SignedHeader.
    if (block.signature.length === 0) throw new BlockError('MISSING_SIGNATURE');
    let sh;
    try {
      sh = signedHeaderOf(h, this.genesis.chain_id, validator.index);
    } catch (err) {
      throw new BlockError('SIGNED_HEADER_FAILED', (err as Error).message);
    }
    let t = performance.now();
    const sigOk = verify(publicKey, headerSigningHash(sh), block.signature);
    this.observer.signatureChecked('block', performance.now() - t, sigOk, canonicalHeaderBytes(sh, block.signature).length);
    if (!sigOk) throw new BlockError('INVALID_BLOCK_SIGNATURE');
    // Step 5: VRF proof over the seed.
    if (h.vrfProof.length === 0) throw new BlockError('MISSING_VRF_PROOF');
    // The seed is not signed, so first make sure it is the slot's seed and the draw names this proposer.
    this.consensus.checkSeed(h, slot, parent, validator);
    t = performance.now();
    const vrfOk = vrfVerify(publicKey, h.vrfSeed, h.vrfProof, this.genesis.chain_id);
    this.observer.signatureChecked('vrf', performance.now() - t, vrfOk);
    if (!vrfOk) throw new BlockError('INVALID_VRF_PROOF');

    // Step 6: state transitions against the parent's state.
    if (!(await this.descendsFromFinalized(parent))) throw new BlockError('PARENT_STATE_PRUNED', `parent ${parent.hash} (${parent.index}), finalized ${this.finalizedRef.hash} (${this.finalizedRef.index})`);
    // Checked before anything is read or written: the header commits to the state it executes
    // on, which is what a light client proves accounts against.
    if (toHex(h.stateRoot) !== parent.state_root) throw new BlockError('STATE_ROOT_MISMATCH', `header state_root ${toHex(h.stateRoot)}, parent ${parent.index} post-state root ${parent.state_root}`);
    const parentState = await this.stateAt(parent);
    // randao_reveal is hash-covered but unsigned: it must be the proposer's next link on this branch.
    const revealed = await this.consensus.checkReveal(h, slot, parent, validator, parentState.path);
    // Re-commitments are judged against the registry before the block, as the beacon judges them.
    const recommits = blockRecommitments(block.transactions, proposer, (a) => this.registry.get(a), () => this.consensus.activeCount());
    const consensus = await this.consensus.withCommits(revealed, recommits.applied, parentState.path);
    // Included votes are checked on this block's branch, then credited with the transactions.
    const votes = await this.accounting.check(block.attestations, slot, parentState.votes);
    // Evidence is verified here against execution's own registry, never taken from the beacon.
    const slashed = this.checkSlashings(block.slashings);
    const parentRoot = rootOf(parent);
    // What the block obviously touches is read with batched reads first; execution's own reads
    // (a contract's storage, a callee) are then mostly cache hits, and the rest read synchronously.
    // Each recipient's hex once: the prefetch list and execution both need it.
    const recipients = block.transactions.map((tx) => (isAuthorization(tx) || tx.to === null ? null : toHex(tx.to)));
    await this.state.prefetch(parentRoot, this.touchedBy(block, verified, recipients, votes, proposer));
    const view = this.state.view(parentRoot);
    const docs = await this.bridge.prepare(bridgeData(block.transactions));
    const exec = this.execute(block, hash, verified, recipients, view, votes, recommits, docs);
    if (slashed.length > 0) exec.registry.slashed = slashed;
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
    batch.put(Keys.blockAtHeight(record.index, hash), 0).put(Keys.meta('state_version'), version);
    // Only queued, so it goes before the wait for the body's sync below.
    if (extendsHead) this.putCanonical(batch, record, hashes, exec.receipts);
    // The block's trie nodes go to the state's database while the body file syncs; both are
    // durable before the chain batch that names them, and before anything in memory moves.
    const stateBatch = new WriteBatch();
    this.state.queue(stateBatch, committed);
    // The version is taken once its nodes are on disk, even if the body's sync or the chain batch
    // fails: the next import must not write under it again.
    const stateWritten = this.state.write(stateBatch).then(() => void (this.version = version));
    await Promise.all([stored?.synced, stateWritten]);
    if (extendsHead) {
      this.persistRegistry(batch, exec.registry, 1);
      this.auth.apply(exec.authorizations, 1, batch);
      this.consensus.persist(batch, record, 1);
      this.accounting.persist(batch, votes, 1);
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
    return { result: this.summary(record, exec.receipts, extendsHead, false), receiptsJson, ...(stored ? { receiptsEncoded: { bytes: stored.receiptBytes, lengths: stored.index.receiptLengths } } : {}) };
  }

  // The block hash covers neither the signature nor the transaction list: a copy that differs
  // from the stored block must prove both before it is acknowledged as already known. Equal
  // shells and equal transaction hashes (each the SHA3 of its envelope) mean an identical copy,
  // found without reading the stored transactions.
  private async checkKnownCopy(block: Block, known: BlockRecord, txHashes: Uint8Array[]): Promise<void> {
    if (known.index === 0 || (await this.blocks.isStoredCopy(known.hash, block, txHashes))) return;
    if (toHex(blockMerkleRoot(txHashes, block.attestations, block.slashings)) !== toHex(block.header.merkleRoot)) throw new BlockError('MERKLE_ROOT_MISMATCH');
    const v = this.registry.get(known.proposer);
    if (block.signature.length === 0) throw new BlockError('MISSING_SIGNATURE');
    if (!v || !verify(this.registry.publicKey(v), headerSigningHash(signedHeaderOf(block.header, this.genesis.chain_id, v.index)), block.signature)) {
      throw new BlockError('INVALID_BLOCK_SIGNATURE');
    }
  }

  private putCanonical(batch: WriteBatch, r: BlockRecord, txHashes: string[], receipts: readonly Receipt[]): void {
    this.logs.put(batch, r, receipts);
    batch.put(Keys.canonical(r.index), r.hash);
    // The location's JSON by template (hex and an integer need no escaping): 1,428 of them per full block.
    txHashes.forEach((tx, index) => batch.ops.push({ type: 'put', key: Keys.txLocation(tx), value: `{"block":"${r.hash}","index":${index}}` }));
  }

  /** Applies registry changes in memory and queues their persistence; returns the batch. */
  private persistRegistry(batch: WriteBatch, changes: RegistryChanges, sign: 1 | -1): WriteBatch {
    const touched = this.registry.apply(changes, sign);
    if (sign === -1) for (const e of changes.added) batch.del(Keys.validator(e.index));
    for (const e of touched) if (sign === 1 || !changes.added.some((a) => a.index === e.index)) batch.put(Keys.validator(e.index), e);
    return batch;
  }

  /** The blocks (and their included votes) between the head and `block`: what consensus fields and vote checks replay. */
  private async stateAt(block: BlockRecord): Promise<{ path: BranchPath; votes: VotePath }> {
    let path: BranchPath = { reverted: [], applied: [] };
    const votes: { reverted: IncludedVote[][]; applied: IncludedVote[][] } = { reverted: [], applied: [] };
    if (block.hash !== this.headRef.hash) {
      const { reverted, applied } = await this.path(this.headRef.hash, block.hash);
      for (const r of reverted) {
        votes.reverted.push((await this.blocks.changes(r.hash)).votes);
      }
      for (const a of applied) {
        votes.applied.push((await this.blocks.changes(a.hash)).votes);
      }
      path = { reverted, applied };
    }
    return { path, votes };
  }

  /**
   * Verifies a block's slashing evidence and returns the penalties it applies: each accuses a
   * registered validator not yet slashed (nor accused twice in the block) and proves a conflict
   * under that validator's key. Any fault refuses the block (INVALID_SLASHING, detail the code).
   */
  private checkSlashings(evidence: readonly SlashingEvidence[]): SlashedChange[] {
    const all = this.registry.all();
    let accused: number[];
    try {
      accused = checkBlockEvidence(evidence, (index) => {
        const v = all[index];
        return v && { slashed: v.slashed, publicKey: () => this.registry.publicKey(v) };
      }, this.genesis.chain_id);
    } catch (err) {
      if (err instanceof SlashingError) throw new BlockError('INVALID_SLASHING', `${err.code}: ${err.message}`);
      throw err;
    }
    return accused.map((index) => {
      const v = all[index]!;
      return { index, penalty: (BigInt(v.stake) / SLASHING_PENALTY_DIVISOR).toString(), was_active: v.active };
    });
  }

  /** Accounts a block certainly reads: proposer, senders, recipients, rewarded attesters. */
  private touchedBy(block: Block, verified: Array<{ signer: string | null }>, recipients: ReadonlyArray<string | null>, votes: readonly IncludedVote[], proposer: string): string[] {
    const out = [proposer];
    const txs = block.transactions;
    for (let i = 0; i < txs.length; i++) {
      const tx = txs[i]!;
      out.push(verified[i]!.signer!);
      if (tx.type === TxType.EcdsaAuthorized) out.push(toHex(tx.from));
      const to = recipients[i];
      if (to) out.push(to);
    }
    for (const v of votes) {
      const e = this.registry.all()[v.validator];
      if (e) out.push(e.address);
    }
    return out;
  }

  /** Blocks to revert (newest first) and apply (oldest first) to move from `from` to `to`. */
  private async path(from: string, to: string): Promise<{ reverted: BlockRecord[]; applied: BlockRecord[]; ancestor: BlockRecord }> {
    const load = async (hash: string): Promise<BlockRecord> => {
      const r = await this.record(hash);
      if (!r) throw new SvcError('CORRUPT_DB', `block ${hash} is not stored`, 500);
      return r;
    };
    let a = await load(from);
    let b = await load(to);
    const reverted: BlockRecord[] = [];
    const applied: BlockRecord[] = [];
    while (a.index > b.index) {
      reverted.push(a);
      a = await this.parentOf(a);
    }
    while (b.index > a.index) {
      applied.push(b);
      b = await this.parentOf(b);
    }
    while (a.hash !== b.hash) {
      reverted.push(a);
      applied.push(b);
      a = await this.parentOf(a);
      b = await this.parentOf(b);
    }
    return { reverted, applied: applied.reverse(), ancestor: a };
  }

  /** Executes a block's transactions (step 6), then credits its consensus rewards; throws on the first invalid transaction. */
  private execute(
    block: Block,
    blockHashHex: string,
    verified: Array<{ hash: string; signer: string | null }>,
    recipients: ReadonlyArray<string | null>,
    state: View,
    votes: readonly IncludedVote[],
    recommits: BlockRecommitments,
    docs: BridgeDocs,
  ): { senders: string[]; receipts: Receipt[]; gasUsed: number; fees: bigint; registry: RegistryChanges; authorizations: AuthChanges } {
    const proposer = toHex(block.header.validatorId);
    const run: BlockRun = {
      block,
      blockHashHex,
      proposer,
      state,
      recommits,
      docs,
      senders: new Set<string>(),
      receipts: [],
      registry: { added: [], exited: [] },
      auth: new AuthOverlay(this.auth),
      cumulative: 0n,
      fees: 0n,
      owedFees: 0n,
      owed: false,
      logCount: 0,
    };
    // One method call per transaction, not a callback made per block: a closure made per block
    // starts without optimised code once a full collection has dropped the last block's (V8
    // keeps it only weakly), so many blocks ran the body unoptimised while TurboFan compiled it
    // again (tens of ms on a worker thread). A method keeps its code, and is hot within a block.
    const txs = block.transactions;
    for (let i = 0; i < txs.length; i++) this.executeTx(run, txs[i]!, i, verified[i]!.hash, verified[i]!.signer!, recipients[i] ?? null);
    this.payProposer(run);
    // After the transactions, so a reward never funds a transaction of the block that earns it.
    this.accounting.credit(state, proposer, votes);
    return { senders: [...run.senders], receipts: run.receipts, gasUsed: Number(run.cumulative), fees: run.fees, registry: run.registry, authorizations: run.auth.changes };
  }

  /**
   * Credits the proposer's fees owed so far in one write rather than one per transaction: nothing
   * reads the proposer's balance between plain transfers by others, and every transaction that
   * could (the proposer's own, contracts, bridge and registry operations) finds them credited
   * first. `owed` keeps the proposer touched exactly when a fee-paying transaction ran.
   */
  private payProposer(run: BlockRun): void {
    if (!run.owed) return;
    run.state.addBalance(run.proposer, run.owedFees);
    run.owedFees = 0n;
    run.owed = false;
  }

  /** Executes transaction `i` of `run`'s block (`to`: its recipient's hex, null for none) and appends its receipt; throws if it is invalid. */
  private executeTx(run: BlockRun, raw: Transaction, i: number, hash: string, signer: string, to: string | null): void {
    const { block, blockHashHex, state, auth, registry } = run;
    if (isAuthorization(raw)) {
      if (signer === run.proposer) this.payProposer(run);
      run.senders.add(signer);
      run.receipts.push(this.authorize(raw, signer, state, auth, { hash, index: i, blockHash: blockHashHex, blockNumber: block.header.index, cumulative: run.cumulative }));
      return;
    }
    const tx: StandardTx | EcdsaAuthorizedTx = raw;
    // Type 3 acts for `from`; its signature only proves the ECDSA key, which `from` must have authorised.
    const sender = tx.type === 3 ? toHex(tx.from) : signer;
    run.senders.add(sender);
    if (tx.type === 3 && !auth.has(sender, signer)) throw txFail(hash, `${new TxError('ErrInvalidSignature').message}: ECDSA key ${signer} is not authorised for ${sender}`);
    const kind = to === BRIDGE_ADDRESS ? bridgeKind(tx.data) : to === DEPOSIT_ADDRESS ? 'deposit' : to === EXIT_ADDRESS ? 'exit' : to === RANDAO_COMMIT_ADDRESS ? 'randao_commit' : txKind(tx);
    if (sender === run.proposer || kind !== 'transfer') this.payProposer(run);
    try {
      checkGasLimit(tx, this.maxGas);
    } catch (err) {
      throw txFail(hash, (err as Error).message);
    }
    if (run.cumulative + tx.gasLimit > this.maxGas) throw txFail(hash, `block gas limit ${this.maxGas} exceeded`);
    if (tx.gasPrice < this.minGasPrice) throw txFail(hash, new TxError('ErrGasPriceTooLow').message);
    const acc = state.account(sender);
    if (tx.nonce !== acc.nonce) throw txFail(hash, `invalid nonce: transaction nonce ${tx.nonce}, account nonce ${acc.nonce}`);
    if (acc.balance < maxCost(tx)) throw txFail(hash, new TxError('ErrInsufficientFunds').message);
    let outcome: { status: 0 | 1; gasUsed: bigint; contractAddress: string | null; logs: LogJson[]; error?: string | undefined };
    // A plain transfer's value leaves the sender with its fee, in one write.
    let debit = 0n;
    if (kind === 'contract_deploy' || kind === 'contract_call') {
      // The VM moves the value and reverts its own changes on failure; nothing but the value
      // leaves the sender's balance during the run, so the fee charged afterwards is covered.
      const r = runContractTx(state, { from: sender, to, value: tx.value, data: tx.data, gasLimit: tx.gasLimit, nonce: tx.nonce, blockNumber: block.header.index, timestampMs: block.header.timestampMs });
      const first = run.logCount;
      const logs = r.logs.map((l, j) => ({ address: l.address, topics: l.topics.map((t) => toHex(t)), data: toHex(l.data), blockNumber: block.header.index, blockHash: blockHashHex, transactionHash: hash, transactionIndex: i, logIndex: first + j }));
      run.logCount += logs.length;
      outcome = { status: r.status, gasUsed: r.gasUsed, contractAddress: r.status === 1 ? r.contractAddress : null, logs, error: r.error };
    } else if (to === BRIDGE_ADDRESS) {
      // The operation moves its own value (a lock's), and only when it succeeds.
      const r = this.bridge.execute({ sender, hash, value: tx.value, data: tx.data }, state, run.docs, block.header.timestampMs);
      const logs = r.log ? [{ ...r.log, blockNumber: block.header.index, blockHash: blockHashHex, transactionHash: hash, transactionIndex: i, logIndex: run.logCount++ }] : [];
      outcome = { status: r.status, gasUsed: r.gasUsed, contractAddress: null, logs, error: r.error };
    } else {
      let error: string | undefined;
      if (kind === 'deposit') error = tx.type === 0 ? this.deposit(tx, sender, registry) : 'a deposit must be signed by the ML-DSA key it registers';
      else if (kind === 'exit') error = this.exit(tx, sender, registry);
      else if (kind === 'randao_commit') error = this.recommit(i, run.recommits, registry);
      if (error === undefined && tx.value > 0n) {
        state.addBalance(to!, tx.value);
        debit = tx.value;
      }
      outcome = { status: error === undefined ? 1 : 0, gasUsed: TX_BASE_GAS, contractAddress: null, logs: [], error };
    }
    const fee = outcome.gasUsed * tx.gasPrice;
    state.addBalance(sender, -(fee + debit));
    run.owedFees += fee;
    run.owed = true;
    state.incrementNonce(sender);
    run.cumulative += outcome.gasUsed;
    run.fees += fee;
    run.receipts.push({
      transactionHash: hash,
      transactionIndex: i,
      blockHash: blockHashHex,
      blockNumber: block.header.index,
      from: sender,
      to,
      kind,
      status: outcome.status,
      gasUsed: Number(outcome.gasUsed),
      cumulativeGasUsed: Number(run.cumulative),
      effectiveGasPrice: tx.gasPrice.toString(),
      fee: fee.toString(),
      contractAddress: outcome.contractAddress,
      logs: outcome.logs,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  }

  /** Executes a gas-free ECDSA authorisation or revocation (nonce consumed, no fee). */
  private authorize(tx: AuthorizationTx, sender: string, state: StateView, auth: AuthOverlay, at: { hash: string; index: number; blockHash: string; blockNumber: number; cumulative: bigint }): Receipt {
    const acc = state.account(sender);
    if (tx.nonce !== acc.nonce) throw txFail(at.hash, `invalid nonce: transaction nonce ${tx.nonce}, account nonce ${acc.nonce}`);
    state.incrementNonce(sender);
    const ecdsa = toHex(tx.ecdsaAddress);
    const revoke = tx.type === TxType.EcdsaRevocation;
    const done = revoke ? auth.remove(sender, ecdsa) : auth.add(sender, ecdsa);
    return {
      transactionHash: at.hash,
      transactionIndex: at.index,
      blockHash: at.blockHash,
      blockNumber: at.blockNumber,
      from: sender,
      to: null,
      kind: revoke ? 'ecdsa_revocation' : 'ecdsa_authorization',
      status: done ? 1 : 0,
      gasUsed: 0,
      cumulativeGasUsed: Number(at.cumulative),
      effectiveGasPrice: '0',
      fee: '0',
      contractAddress: null,
      logs: [],
      ...(done ? {} : { error: revoke ? `ECDSA key ${ecdsa} is not authorised` : `ECDSA key ${ecdsa} is already authorised` }),
    };
  }

  /** A deposit registers the sender's key; returns a failure reason (tx status 0) or undefined. */
  private deposit(tx: StandardTx, sender: string, changes: RegistryChanges): string | undefined {
    if (tx.value < this.minStake) return `deposit below the minimum stake of ${this.minStake} wei`;
    if (tx.data.length !== HASH_BYTES) return 'deposit data must be the 32-byte RANDAO commitment';
    if (this.registry.get(sender) || changes.added.some((e) => e.address === sender)) return 'sender is already a validator';
    changes.added.push({
      index: this.registry.size + changes.added.length,
      address: sender,
      public_key: toHex(tx.publicKey),
      stake: tx.value.toString(),
      randao_commitment: toHex(tx.data),
      active: true,
      slashed: false,
    });
    return undefined;
  }

  /** A re-commitment replaces the sender's RANDAO commitment (judged by blockRecommitments); returns a failure reason or undefined. */
  private recommit(txIndex: number, recommits: BlockRecommitments, changes: RegistryChanges): string | undefined {
    const failure = recommits.failed.get(txIndex);
    if (failure !== undefined) return failure;
    const c = recommits.applied.find((r) => r.txIndex === txIndex)!;
    const entry = this.registry.all()[c.validatorIndex]!;
    (changes.recommitted ??= []).push({ index: c.validatorIndex, previous: entry.randao_commitment, commitment: toHex(c.commitment) });
    return undefined;
  }

  /** An exit deactivates the sender's validator; returns a failure reason or undefined. */
  private exit(tx: StandardTx | EcdsaAuthorizedTx, sender: string, changes: RegistryChanges): string | undefined {
    const v = this.registry.get(sender);
    if (!v || !v.active || changes.exited.includes(v.index)) return 'sender is not an active validator';
    if (tx.value !== 0n || tx.data.length !== 0) return 'an exit carries no value and no data';
    changes.exited.push(v.index);
    return undefined;
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
      if (!target) throw new SvcError('UNKNOWN_BLOCK', `unknown head block ${headHash}`, 404);
      // A head that does not descend from the current finalized block would revert it.
      if (target.index < this.finalizedRef.index || (await this.ancestorAt(target, this.finalizedRef.index)).hash !== this.finalizedRef.hash) {
        throw new SvcError('REORG_PAST_FINALIZED', `cannot reorganise below the finalized block ${this.finalizedRef.index}`, 409);
      }
      let finalized = this.finalizedRef;
      if (finalizedHash !== undefined && finalizedHash !== this.finalizedRef.hash) {
        const f = await this.record(finalizedHash);
        if (!f) throw new SvcError('UNKNOWN_BLOCK', `unknown finalized block ${finalizedHash}`, 404);
        if (f.index < this.finalizedRef.index) throw new SvcError('FINALITY_REGRESSION', `finalized block ${f.index} is below the current finalized block ${this.finalizedRef.index}`, 409);
        finalized = { hash: f.hash, index: f.index };
      }
      if (finalized.index > target.index || (await this.ancestorAt(target, finalized.index)).hash !== finalized.hash) {
        throw new SvcError('FINALIZED_NOT_ANCESTOR', `finalized block ${finalized.hash} (${finalized.index}) is not an ancestor of head ${target.hash} (${target.index})`, 409);
      }
      const moveHead = target.hash !== this.headRef.hash;
      const moveFinalized = finalized !== this.finalizedRef;
      if (!moveHead && !moveFinalized) return { head: this.headRef, finalized: this.finalizedRef, reverted: 0, applied: 0 };

      const batch = new WriteBatch();
      let change: CanonicalChange = { applied: [], reverted: [] };
      if (moveHead) {
        // Everything that can fail (record reads, state-change parsing) happens before the registry and
        // authorisation sets are touched in memory below.
        const { reverted, applied, ancestor } = await this.path(this.headRef.hash, target.hash);
        if (ancestor.index < this.finalizedRef.index) throw new SvcError('REORG_PAST_FINALIZED', `cannot reorganise below the finalized block ${this.finalizedRef.index}`, 409);
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
        for (const a of into) this.putCanonical(batch, a.record, a.txHashes, a.receipts);
        for (const r of out) {
          this.persistRegistry(batch, r.changes.registry, -1);
          this.auth.apply(r.changes.authorizations, -1, batch);
          this.consensus.persist(batch, r.record, -1);
          this.accounting.persist(batch, r.changes.votes, -1);
        }
        for (const a of into) {
          this.persistRegistry(batch, a.changes.registry, 1);
          this.auth.apply(a.changes.authorizations, 1, batch);
          this.consensus.persist(batch, a.record, 1);
          this.accounting.persist(batch, a.changes.votes, 1);
        }
        batch.put(Keys.meta('head'), { hash: target.hash, index: target.index });
        change = {
          applied: into.map((a) => ({ record: a.record, txHashes: a.txHashes, senders: a.changes.senders, slashed: a.changes.registry.slashed?.length ?? 0 })),
          reverted: out.map((r) => ({ record: r.record, txHashes: r.txHashes, transactions: r.transactions, senders: r.changes.senders })),
        };
      }
      // The finalised pointer travels in the same batch as the head: a crash never leaves a head
      // that moved without the finality it was sent with, or the reverse.
      let pruned: string[] = [];
      if (moveFinalized) {
        batch.put(Keys.meta('finalized'), finalized);
        pruned = await this.prune(batch, this.finalizedRef, finalized);
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

  /**
   * Queues the pruning that moving finality from `from` to `to` allows: the nodes each newly
   * finalised block replaced, and every node of the blocks at those heights off the finalised
   * chain (their descendants above are found when finality passes their heights). Costs the
   * blocks finalised and the nodes pruned, never the size of the state.
   */
  private async prune(batch: WriteBatch, from: BlockRef, to: BlockRef): Promise<string[]> {
    const canonical: BlockRecord[] = [];
    let r = await this.record(to.hash);
    while (r && r.index > from.index) {
      canonical.push(r);
      r = await this.parentOf(r);
    }
    const keep = new Set(canonical.map((c) => c.hash));
    // Pruning runs one block behind finality: the stale nodes of block B are nodes B's parent
    // state used, so deleting those of `to` itself would lose the state `to`'s header names.
    // Those of `from` (held back last time) go now; those of `to` wait for the next move.
    const previous = from.index > 0 ? await this.record(from.hash) : undefined;
    canonical.shift();
    const orphans: number[] = [];
    for (let h = from.index + 1; h <= to.index; h++) {
      const prefix = Keys.blockAtHeightPrefix(h);
      for await (const key of this.store.db.keys({ gte: prefix, lt: prefix + '\xff' })) {
        batch.del(key);
        const hash = key.slice(prefix.length);
        if (keep.has(hash)) continue;
        const o = await this.record(hash);
        if (o) orphans.push(o.state_version);
      }
    }
    const versions = [...(previous ? [previous] : []), ...canonical.reverse()].map((c) => c.state_version);
    // Written before the chain batch moves finality: a crash between the two leaves the finalised
    // pointer behind states already pruned, which only a reorg below finality (refused by the
    // beacon's rules) would read; the next move prunes again, and deleting twice deletes nothing.
    const stateBatch = new WriteBatch();
    const pruned = await this.state.pruneTo(stateBatch, versions, orphans);
    await this.state.write(stateBatch);
    return pruned;
  }

  /** The ancestor of `from` at height `index`. */
  private async ancestorAt(from: BlockRecord, index: number): Promise<BlockRecord> {
    let r = from;
    while (r.index > index) r = await this.parentOf(r);
    return r;
  }

  // Every stored block's parent is stored (import requires it), so a missing one is a damaged
  // database: a typed error naming it rather than a TypeError on undefined.
  private async parentOf(r: BlockRecord): Promise<BlockRecord> {
    const p = await this.record(r.parent);
    if (!p) throw new SvcError('CORRUPT_DB', `block ${r.hash} (${r.index}) has no stored parent ${r.parent}`, 500);
    return p;
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

/** A verifier result's 0x hash as bytes (the Merkle root and the stored hash list take bytes). */
function hashBytes(hex: string): Uint8Array {
  const b = Buffer.from(hex.slice(2), 'hex');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Where a block's state root node is. */
function rootOf(r: BlockRecord): NodeRef {
  return { version: r.root_version, hash: parseHex(r.state_root, 'state_root', HASH_BYTES) };
}

/**
 * Refuses a data directory of another storage layout or genesis (an older layout stores blocks
 * under the same keys in another shape); returns the layout found (undefined: a fresh directory).
 */
async function checkLayout(store: ChainStore, genesisHashHex: string): Promise<number | undefined> {
  const stored = await store.get<string>(Keys.meta('genesis'));
  if (stored === undefined) return undefined;
  const schema = (await store.get<number>(Keys.meta('schema'))) ?? 1;
  if (schema !== SCHEMA_VERSION && !UPGRADABLE_SCHEMA_VERSIONS.includes(schema)) {
    throw new SvcError(
      'DB_SCHEMA_MISMATCH',
      `data directory uses storage layout ${schema}, this node reads layout ${SCHEMA_VERSION}: start with a fresh data directory (svc devnet up --fresh, or another --data-dir)`,
      409,
    );
  }
  if (stored !== genesisHashHex) throw new SvcError('GENESIS_MISMATCH', `data directory belongs to genesis ${stored}, not ${genesisHashHex}`, 409);
  return schema;
}

/**
 * Upgrades an older layout this node reads (UPGRADABLE_SCHEMA_VERSIONS) in place: the state moves
 * into its own database (state/migrate.ts), then the schema key changes, after which an svc that
 * reads only the older layout refuses the directory.
 */
async function upgradeLayout(store: ChainStore, stateStore: ChainStore, schema: number, log: Logger): Promise<void> {
  const moved = await moveStateKeys(store, stateStore);
  await store.write(new WriteBatch().put(Keys.meta('schema'), SCHEMA_VERSION));
  log.info('storage layout upgraded', { from: schema, to: SCHEMA_VERSION, state_keys_moved: moved });
}
