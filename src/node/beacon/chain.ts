/**
 * The beacon chain: checks blocks (proposer draw, VRF seed and proof, signature, RANDAO
 * reveal, slot timing, parent, included attestations), forwards them to execution, runs fork
 * choice over attestations (those received and those included in blocks), keeps the pool of
 * attestations a proposer packs, and tells execution the head and the finalised block. Rewards
 * are not the beacon's business: execution credits them inside each block's state transition.
 * Records and the fork-choice store persist in LevelDB; blocks are kept as the SSZ bytes received
 * (`encodeBlock`), which is what execution, gossip and range sync are sent.
 *
 * This module imports blocks and ties the parts together under one lock: the proposal checks
 * are proposal-checks.ts, attestations attestations.ts (pool: attestation-pool.ts), proposer
 * duties proposer-duties.ts, what execution is told execution-link.ts, the database layout
 * chain-storage.ts.
 */
import { toHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { type Genesis, epochOfSlot, genesisHash, slotAt, slotStartMs } from '../../core/genesis/genesis.js';
import type { Attestation } from '../../core/types/attestation.js';
import { type InclusionView, selectIncludable } from '../../core/consensus/inclusion.js';
import { type Block, type BlockHeader, blockHash, canonicalHeaderBytes, encodeBlock, signedHeaderOf } from '../../core/types/block.js';
import { headerOfBlockBytes, signatureOfBlockBytes } from '../../core/types/block-bytes.js';
import type { Logger } from '../../util/log.js';
import { Mutex } from '../../util/mutex.js';
import type { ImportResult, RegistryEntry } from '../../api/execution.js';
import type { AttestationDataView, DependentRootView } from '../../api/beacon.js';
import { ChainStore, WriteBatch } from '../shared/store.js';
import { AttestationJournal } from './attestation-journal.js';
import { AttestationPool, inclusionView } from './attestation-pool.js';
import { Attestations } from './attestations.js';
import { BeaconError } from './errors.js';
import { BEACON_KEYS as K, type BeaconBlockRecord, checkSchema, genesisRecord } from './chain-storage.js';
import { LightStore } from './light.js';
import { type RegistrySource, SetChangeStore } from './light-sets.js';
import { REGISTRY_ADDRESS } from '../../core/consensus/registry.js';
import type { EngineClient } from '../../client/engine.js';
import type { EventHub } from './events.js';
import { type BeaconHealth, ExecutionLink } from './execution-link.js';
import { type CheckpointHex, ForkChoice } from './forkchoice/fork-choice.js';
import type { BeaconMetrics } from './metrics.js';
import { type CheckedProposal, checkKnownCopy, checkProposal, observeRefused, type ProposalContext, REFUSED_BEFORE_SIGNATURE } from './proposal-checks.js';
import { dutiesFromSeed, type DutyView, type RandaoBlock, seedBlock } from './proposer-duties.js';
import type { SlashingEvidence } from '../../core/consensus/slashing.js';
import { SlashingMonitor } from './slashing.js';
import { BridgeStore, isBridgeOutcome } from './bridge/store.js';
import { receiptsWhere } from '../../api/import-answer.js';
import { randaoFromJson, randaoToJson } from '../../core/consensus/randao.js';

// The chain's public vocabulary, from the modules that define it (importers keep importing chain.ts).
export { BeaconError, ExecutionRejectedError, IncludedAttestationError, IncludedSlashingError } from './errors.js';
export { BEACON_SCHEMA_VERSION, type BeaconBlockRecord } from './chain-storage.js';
export { ATTESTATION_POOL_MAX } from './attestation-pool.js';
export type { DutyView } from './proposer-duties.js';
export { type BeaconHealth, UNHEALTHY_AFTER_REJECTIONS } from './execution-link.js';

/** What a proposal's import answers (the API's and gossip's view of it). */
export interface ProposeResult {
  block_hash: string;
  slot: number;
  index: number;
  state_root: string;
  transactions: number;
  already_known: boolean;
}

/** A block that passed the beacon's checks, on its way to execution. */
type CheckedImport = CheckedProposal & { parent: RandaoBlock; ssz: Uint8Array };

/** The beacon node's chain: block import, fork choice, attestations, duties, and the link to execution. */
export class BeaconChain {
  private readonly records = new Map<string, RandaoBlock>();
  private registry: RegistryEntry[] = [];
  private readonly mutex = new Mutex();
  /** Blocks whose import is under way, by root, with their slot. */
  private readonly importing = new Map<string, { slot: number; done: Promise<ProposeResult> }>();
  /** Execution's newPayload calls, one at a time in arrival order (parents before children), outside `mutex`. */
  private readonly importLane = new Mutex();
  readonly genesisRoot: string;
  private timer: NodeJS.Timeout | undefined;
  private readonly journal: AttestationJournal;
  /** Verified attestations, the proposer's candidates. */
  private readonly pool = new AttestationPool();
  /** What the proposal checks read of this chain. */
  private readonly checks: ProposalContext;
  /** What execution has been told, and whether it takes the beacon's blocks. */
  private readonly link: ExecutionLink;
  /** Received, included and journaled attestations. */
  private readonly attestations: Attestations;
  /** Finalizing links' signed votes and the finality updates made of them (light clients). */
  light!: LightStore;
  /** Validator-set changes at finalized checkpoints (light-sets.ts). */
  sets!: SetChangeStore;
  /** Slashing detection and the evidence pool. */
  readonly slashing: SlashingMonitor;
  /** The bridge's BIDs and their state machine (docs/bridge.md). */
  bridge!: BridgeStore;

  private constructor(
    readonly genesis: Genesis,
    private readonly store: ChainStore,
    private readonly engine: EngineClient,
    readonly forkChoice: ForkChoice,
    private readonly events: EventHub | undefined,
    private readonly metrics: BeaconMetrics,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.genesisRoot = toHex(genesisHash(genesis));
    this.journal = new AttestationJournal(store, metrics);
    this.slashing = new SlashingMonitor({
      genesis,
      store,
      metrics,
      log,
      events,
      registry: () => this.registry,
      onHeadBranch: (root) => this.onHeadBranch(root),
      currentSlot: () => this.currentSlot(),
    });
    this.checks = {
      genesis,
      now,
      registry: () => this.registry,
      metrics,
      log,
      slashing: this.slashing,
      body: (root) => this.body(root),
      seedMix: (parentRoot, epoch) => this.seedMix(parentRoot, epoch),
      inclusionView: (parentRoot, slot) => this.inclusionView(parentRoot, slot),
    };
    this.attestations = new Attestations({
      genesis,
      forkChoice,
      slashing: this.slashing,
      pool: this.pool,
      journal: this.journal,
      metrics,
      log,
      registry: () => this.registry,
      light: () => this.light,
      currentSlot: () => this.currentSlot(),
    });
    this.link = new ExecutionLink({
      engine,
      forkChoice,
      events,
      metrics,
      log,
      record: (root) => this.records.get(root),
      headDependentRoots: (root) => this.headDependentRoots(root),
      refreshRegistry: () => this.refreshRegistry(),
      onFinalized: async (fin) => {
        await this.recordFinality(fin);
        await this.bridgeFinalized(fin.root);
      },
    });
  }

  /** Whether `root` is the head or one of its ancestors (walks back from the head to its slot). */
  onHeadBranch(root: string): boolean {
    const target = this.records.get(root);
    if (!target) return false;
    let r = this.records.get(this.forkChoice.head());
    while (r && r.slot > target.slot) r = this.records.get(r.parent);
    return r?.root === root;
  }

  /** Opens (or initialises) the beacon store and syncs the registry from execution. */
  static async open(o: { genesis: Genesis; store: ChainStore; engine: EngineClient; events?: EventHub; metrics: BeaconMetrics; log: Logger; now?: () => number }): Promise<BeaconChain> {
    const g = o.genesis;
    const root = toHex(genesisHash(g));
    await checkSchema(o.store);
    const fcJson = await o.store.get<unknown>(K.forkChoice);
    const chain = new BeaconChain(
      g,
      o.store,
      o.engine,
      fcJson ? ForkChoice.fromJson(fcJson) : new ForkChoice(root, g.config.slots_per_epoch),
      o.events,
      o.metrics,
      o.log,
      o.now ?? Date.now,
    );
    chain.remember(genesisRecord(g, root));
    chain.light = await LightStore.open(o.store, o.log);
    chain.sets = await SetChangeStore.open(o.store, g, o.log);
    chain.bridge = await BridgeStore.open({
      genesis: g,
      store: o.store,
      metrics: o.metrics,
      log: o.log,
      events: o.events,
      registry: () => chain.registry,
      counterparts: () => o.engine.counterparts(),
      block: (r) => chain.records.get(r),
      now: chain.now,
      currentSlot: () => chain.currentSlot(),
    });
    for (const { value } of await o.store.scan<BeaconBlockRecord>('b:')) chain.remember(value);
    await chain.slashing.load();
    await chain.refreshRegistry();
    // Execution last heard of the snapshot's head; what the replay moves is sent on the first slot.
    chain.link.resume();
    await chain.attestations.replayJournal();
    await chain.recordHeadEncoding();
    // A stop between a finality move and the bridge's write of it would otherwise leave those BIDs unfinalised until the next move.
    await chain.bridgeFinalized(chain.link.finalizedRoot);
    return chain;
  }

  /**
   * Writes `batch` with the fork-choice store, retiring in the same atomic write the journal
   * entries no block can include any more (target epoch + 1 < current epoch, as the pool drops them).
   */
  private writeWithSnapshot(batch: WriteBatch): Promise<void> {
    return this.journal.writeSnapshot(this.slashing.flush(batch.put(K.forkChoice, this.forkChoice.toJson())), epochOfSlot(this.genesis, this.currentSlot()) - 1);
  }

  /** Whether the beacon can make progress: execution reachable, on this chain, and taking its blocks. */
  health(): BeaconHealth {
    return this.link.health();
  }

  // The canonical-length gauge otherwise waits for the next proposal; the alert on it
  // (!= 3409) should judge a real encoding from start-up, so re-encode the head's stored
  // SignedHeader. Genesis is unsigned: there is no encoding to report and the gauge stays absent.
  private async recordHeadEncoding(): Promise<void> {
    const head = this.head();
    if (head.index === 0) return;
    try {
      const stored = await this.store.getBytes(K.body(head.root));
      if (stored === undefined) throw new Error('no stored body');
      this.metrics.canonicalBytes.set(canonicalHeaderBytes(signedHeaderOf(headerOfBlockBytes(stored), this.genesis.chain_id, head.proposer_index), signatureOfBlockBytes(stored)).length);
    } catch (err) {
      // Only a metric: a store that cannot give the head's body back must not stop the node.
      this.log.warn('cannot re-encode the head for quantum_canonical_bytes_len', { head: head.root, error: (err as Error).message });
    }
  }

  private remember(r: BeaconBlockRecord): void {
    this.records.set(r.root, { ...r, randaoState: randaoFromJson(r.randao) });
  }

  /** Re-reads execution's registry (deposits and exits) and the fork-choice balances. */
  async refreshRegistry(): Promise<void> {
    this.registry = await this.engine.registry();
    const stakes = new Map(this.registry.filter((v) => v.active).map((v) => [v.index, BigInt(v.stake)]));
    this.forkChoice.setBalances(stakes);
    this.metrics.activeValidators.set(stakes.size);
    this.metrics.totalValidators.set(this.registry.length);
    this.slashing.registryChanged(this.registry);
  }

  /** Current slot by the wall clock. */
  currentSlot(): number {
    return slotAt(this.genesis, this.now());
  }

  /** The record of a block root. */
  record(root: string): BeaconBlockRecord | undefined {
    const r = this.records.get(root);
    if (!r) return undefined;
    const { randaoState: _unused, ...rest } = r;
    return rest;
  }

  /** Head block record. */
  head(): BeaconBlockRecord {
    return this.record(this.forkChoice.head())!;
  }

  /** Registry entries (execution's view, refreshed on every block). */
  validators(): readonly RegistryEntry[] {
    return this.registry;
  }

  /** A block's stored SSZ bytes (`encodeBlock`), as received; undefined for genesis or an unknown root. */
  body(root: string): Promise<Uint8Array | undefined> {
    return this.store.getBytes(K.body(root));
  }

  /**
   * Canonical block root at `slot` (the head's branch), if it has a block there. The stored slot
   * index names the last block imported at the slot, which after a reorg (a minority rejoining)
   * may be on the abandoned branch: it is used only when it is on the head's branch.
   */
  async rootAtSlot(slot: number): Promise<string | undefined> {
    const indexed = await this.store.get<string>(K.bySlot(slot));
    if (indexed !== undefined && this.onHeadBranch(indexed)) return indexed;
    let r = this.records.get(this.forkChoice.head());
    while (r && r.slot > slot) r = this.records.get(r.parent);
    return r && r.slot === slot && r.index > 0 ? r.root : undefined;
  }

  // The block whose mix seeds `epoch` on `tipRoot`'s branch (proposer-duties.ts seedBlock).
  private seedBlock(tipRoot: string, epoch: number): RandaoBlock {
    return seedBlock(this.genesis, (r) => this.records.get(r), tipRoot, epoch);
  }

  /** The mix seeding epoch `epoch` on the branch ending at `parentRoot` (mix after epoch e-2). */
  seedMix(parentRoot: string, epoch: number): Uint8Array {
    return this.seedBlock(parentRoot, epoch).randaoState.mix;
  }

  /**
   * Root of the block epoch `epoch`'s proposer duties depend on, on the branch ending at
   * `tipRoot` (default: the head): two branches with the same dependent root draw the same
   * proposers and seeds (given the same registry).
   */
  dependentRoot(epoch: number, tipRoot: string = this.forkChoice.head()): string {
    return this.seedBlock(tipRoot, epoch).root;
  }

  /** Dependent roots of the proposer duties of `tipRoot`'s epoch and the next one (HeadView.proposer_dependent_roots). */
  headDependentRoots(tipRoot: string): DependentRootView[] {
    const epoch = epochOfSlot(this.genesis, this.records.get(tipRoot)!.slot);
    return [epoch, epoch + 1].map((e) => ({ epoch: e, root: this.dependentRoot(e, tipRoot) }));
  }

  /**
   * Proposer duties of `epoch` on the head's branch, with the seed each proposer must use, and
   * the dependent root they were drawn from (read from the same head, so the two always agree).
   */
  dutiesView(epoch: number): { dependent_root: string; duties: DutyView[] } {
    return dutiesFromSeed(this.genesis, this.registry, this.seedBlock(this.forkChoice.head(), epoch), epoch);
  }

  /** Proposer duties of `epoch` on the head's branch (see `dutiesView`). */
  duties(epoch: number): DutyView[] {
    return this.dutiesView(epoch).duties;
  }

  /** Last RANDAO value accepted for a validator on the head's branch. */
  randaoLast(index: number): string | undefined {
    const v = this.records.get(this.forkChoice.head())!.randaoState.last.get(index);
    return v ? toHex(v) : undefined;
  }

  /**
   * Validates a proposal, has execution apply it, and updates fork choice. `ssz` is the block's
   * encoding when it arrived as bytes (API, gossip, range sync): execution is sent and the store
   * keeps those same bytes instead of an encoding made again.
   *
   * The checks and the recording run under the chain's lock; execution's newPayload does not
   * (see `importBlock`). A copy of a block whose import is under way waits for that import, and a
   * block whose parent is being imported waits for its parent: queued, never refused as unknown.
   * `onChecked` is called once a new block passed the beacon's checks, before execution has it.
   */
  processBlock(block: Block, ssz?: Uint8Array, onChecked?: () => void): Promise<ProposeResult> {
    const root = toHex(blockHash(block.header));
    const inFlight = this.importing.get(root);
    // Then checked as a copy of the accepted block (or imported again if the first copy failed).
    if (inFlight) return inFlight.done.catch(() => undefined).then(() => this.processBlock(block, ssz));
    const parentImport = this.importing.get(toHex(block.header.parentHash))?.done;
    const done = (parentImport ? parentImport.catch(() => undefined) : Promise.resolve()).then(() => this.importBlock(block, ssz, root, onChecked));
    const slotMs = this.genesis.config.slot_seconds * 1000;
    this.importing.set(root, { slot: Math.floor((block.header.timestampMs - this.genesis.genesis_time * 1000) / slotMs), done });
    const clear = () => {
      if (this.importing.get(root)?.done === done) this.importing.delete(root);
    };
    done.then(clear, clear);
    return done;
  }

  /** Whether the block `root` is being imported now. */
  isImporting(root: string): boolean {
    return this.importing.has(root);
  }

  /**
   * Waits (at most `maxMs`) for the imports under way of blocks before `slot`. A proposer asks
   * before it builds: building on the parent of a block still being imported would make a
   * second block at the same height, with the same (slow) transactions, for every node to import.
   */
  async importsBefore(slot: number, maxMs: number): Promise<void> {
    const pending = [...this.importing.values()].filter((i) => i.slot < slot).map((i) => i.done.catch(() => undefined));
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs)));
    await Promise.race([Promise.all(pending), cap]);
    clearTimeout(timer);
  }

  // A slow newPayload (an expensive block: seconds, not milliseconds) used to hold the chain's
  // lock for as long, and every attestation, block and slot tick queued behind it: votes arrived
  // late or not at all and finality stopped while the import ran (issue 33). Now the lock is
  // held for the beacon's checks and for recording; execution's import runs on its own lane,
  // one block at a time, parents first.
  private async importBlock(block: Block, received: Uint8Array | undefined, root: string, onChecked?: () => void): Promise<ProposeResult> {
    try {
      const checked = await this.mutex.run(() => this.checkLocked(block, received, root));
      if ('already_known' in checked) return checked;
      onChecked?.();
      const result = await this.importLane.run(() => {
        // Finality may have moved while the block waited for the lane: a branch it ruled out is not executed.
        this.forkChoice.checkBlock({ root, parentRoot: checked.parent.root, slot: checked.slot });
        return this.link.newPayload(checked.ssz);
      });
      return await this.mutex.run(() => this.recordLocked(block, root, checked, result));
    } catch (err) {
      if (err instanceof SvcError) this.metrics.proposalsRejected.inc({ reason: err.code });
      if (err instanceof BeaconError && REFUSED_BEFORE_SIGNATURE.has(err.code)) await this.mutex.run(() => observeRefused(this.checks, block));
      throw err;
    }
  }

  // The beacon's checks of a new block, or the answer for a copy of a known one.
  private async checkLocked(block: Block, received: Uint8Array | undefined, root: string): Promise<ProposeResult | CheckedImport> {
    const h = block.header;
    const known = this.records.get(root);
    if (known) {
      await checkKnownCopy(this.checks, block, received, known);
      return { block_hash: root, slot: known.slot, index: known.index, state_root: known.state_root, transactions: known.transactions, already_known: true };
    }
    const parent = this.records.get(toHex(h.parentHash));
    if (!parent) throw new BeaconError('UNKNOWN_PARENT', `unknown parent block ${toHex(h.parentHash)}`);
    const proposal = await checkProposal(this.checks, block, received, parent);
    // A branch finality ruled out is refused here (FINALIZED_CONFLICT, stale rather than forged):
    // execution has pruned the states it would build on and would refuse it as a fault.
    this.forkChoice.checkBlock({ root, parentRoot: parent.root, slot: proposal.slot });
    return { ...proposal, parent, ssz: received ?? encodeBlock(block) };
  }

  // Records a block execution accepted: fork choice, included votes, storage, head.
  private async recordLocked(block: Block, root: string, c: CheckedImport, result: ImportResult): Promise<ProposeResult> {
    const h = block.header;
    const { slot, validator, parent, ssz, recommits } = c;
    // Finality may have moved during the import, as before it (see importBlock).
    this.forkChoice.checkBlock({ root, parentRoot: parent.root, slot });
    // Only the bridge's receipts are parsed (a compact answer says every receipt's status and
    // kind in binary). Read before the block is recorded: an answer whose receipts cannot be read
    // leaves the beacon as it was.
    let bridgeReceipts;
    try {
      bridgeReceipts = receiptsWhere(result, isBridgeOutcome);
    } catch (err) {
      throw new BeaconError('EXECUTION_ERROR', `execution's answer for the block is malformed: ${(err as Error).message}`);
    }
    const record: BeaconBlockRecord = {
      root,
      parent: parent.root,
      slot,
      index: h.index,
      proposer: c.proposer,
      proposer_index: validator.index,
      state_root: result.state_root,
      transactions: block.transactions.length,
      randao: randaoToJson(c.randao),
      ...(block.attestations.length > 0 ? { included: block.attestations.map((a): [number, number] => [a.validatorIndex, a.data.target.epoch]) } : {}),
    };
    this.forkChoice.onBlock({ root, parentRoot: parent.root, slot });
    // A node that only sees blocks (a follower, a node syncing by range) gets the same votes.
    this.attestations.applyIncluded(block.attestations);
    for (const att of block.attestations) await this.slashing.observeAttestation(att);
    await this.slashing.onIncluded(block.slashings, root);
    this.remember(record);
    // What the block's bridge receipts did to BIDs is written in the same atomic batch: a crash
    // cannot keep the block and lose a lock it holds (a stored block is never imported again).
    await this.bridge.importBlock(bridgeReceipts, { hash: root, index: h.index }, new WriteBatch().put(K.record(root), record).putBytes(K.body(root), ssz).put(K.bySlot(slot), root), (b) => this.writeWithSnapshot(b));
    this.metrics.blocksProposed.inc();
    if (recommits.applied.length > 0) {
      this.metrics.randaoRecommits.inc(recommits.applied.length);
      this.log.info('RANDAO re-commitments applied', { slot, block_hash: root, validators: recommits.applied.map((x) => x.validatorIndex) });
    }
    this.log.info('block accepted', { slot, number: h.index, hash: root, proposer: validator.index, txs: record.transactions, state_root: record.state_root });
    this.events?.publish('new_block', { slot, block_hash: root, proposer: c.proposer, transactions: record.transactions });
    // Execution says when the block changed its registry (deposits, exits, re-commitments,
    // slashings); an answer that does not say (an older node) is taken as a change.
    if (result.registry_changed !== false) await this.refreshRegistry();
    await this.link.updateHead();
    return { block_hash: root, slot, index: h.index, state_root: record.state_root, transactions: record.transactions, already_known: false };
  }

  /**
   * Verifies and counts an attestation. One naming a block whose import is under way (its head
   * vote or its target) waits for that import instead of being refused as UNKNOWN_BLOCK: the
   * votes for a slow block are what lets it become the head once it is in.
   */
  attest(att: Attestation): Promise<{ status: string }> {
    const waits = [att.data.beaconBlockRoot, att.data.target.root].map((r) => this.importing.get(toHex(r))?.done.catch(() => undefined)).filter((p) => p !== undefined);
    return waits.length > 0 ? Promise.all(waits).then(() => this.attestNow(att)) : this.attestNow(att);
  }

  private attestNow(att: Attestation): Promise<{ status: string }> {
    return this.mutex
      .run(async () => {
        const received = await this.attestations.receive(att);
        if (received.status === 'applied') await this.link.updateHead();
        return received;
      })
      .then(async (received) => {
        // Acknowledged (and announced) only once durable: one small synced put, not a snapshot
        // of the whole fork-choice store (that happens once per slot and retires these entries).
        if (received.status === 'applied') {
          await received.durable;
          this.events?.publish('new_attestation', { slot: att.data.slot, validator: received.validator, block_hash: toHex(att.data.beaconBlockRoot) });
        }
        return { status: received.status };
      });
  }

  /** Verifies and pools slashing evidence someone submitted (API or gossip); see SlashingMonitor.submit. */
  submitEvidence(ev: SlashingEvidence, source: 'api' | 'gossip'): ReturnType<SlashingMonitor['submit']> {
    return this.mutex.run(() => this.slashing.submit(ev, source));
  }

  /** Pending slashing evidence a proposer on the head's branch should include. */
  blockSlashings(): SlashingEvidence[] {
    return this.slashing.forBlock();
  }

  /** Attestations a proposer at `slot` (on the head's branch) may include, at most MAX_BLOCK_ATTESTATIONS. */
  blockAttestations(slot: number): Attestation[] {
    const head = this.head();
    if (slot <= head.slot) throw new BeaconError('INVALID_SLOT', `slot ${slot} is not after the head's slot ${head.slot}`);
    // Verified on the way into the pool: selection re-checks only the branch rules.
    return selectIncludable(this.pool.all(), { ...this.inclusionView(head.root, slot), verify: () => true });
  }

  // The inclusion rules' view of a branch, for checking a block's votes and for packing the pool's.
  private inclusionView(parentRoot: string, slot: number): InclusionView {
    return inclusionView({ genesis: this.genesis, record: (root) => this.records.get(root), registry: this.registry, pool: this.pool, metrics: this.metrics }, parentRoot, slot);
  }

  /** What a validator attesting at `slot` votes for (see Attestations.data). */
  attestationData(slot: number): AttestationDataView {
    return this.attestations.data(slot);
  }

  // The light-client records of a newly finalized checkpoint: a set change when the validator set
  // in its state moved (light-sets.ts), then its finality update framed on the set recorded last.
  // Never throws: finality is already decided and sent to execution; a failed write only costs
  // light clients this update (a set change is caught up at the next checkpoint).
  private async recordFinality(fin: CheckpointHex): Promise<void> {
    try {
      const stored = await this.store.getBytes(K.body(fin.root));
      if (stored === undefined) return; // genesis: no header, nothing a light client needs proven
      const header = headerOfBlockBytes(stored);
      const links = this.light.finalizedLinks(fin);
      const observed = await this.sets.observe(fin, header, links, this.registrySource).catch((err: Error) => {
        this.log.error('could not check the finalized checkpoint for a validator-set change', { epoch: fin.epoch, root: fin.root, error: err.message });
        return { short: false };
      });
      this.shortSetChange = observed.short ? { fin, header } : undefined;
      const update = await this.light.finalizedWith(fin, header, links, this.sets.stakes());
      if (update) this.metrics.lightUpdateBytes.set(update.size_bytes);
    } catch (err) {
      this.log.error('could not record the light-client finality update', { epoch: fin.epoch, root: fin.root, error: (err as Error).message });
    }
  }

  // A set change short of the previous set's 2/3 when its checkpoint finalized: framed again each
  // slot with the votes that arrived since (fork choice finalizes on 2/3 of the set after an exit,
  // before 2/3 of the set before it voted), until it records or the next checkpoint finalizes.
  private shortSetChange: { fin: CheckpointHex; header: BlockHeader } | undefined;

  private async retrySetChange(): Promise<void> {
    const pending = this.shortSetChange;
    if (!pending) return;
    const { fin, header } = pending;
    const links = this.light.finalizedLinks(fin);
    const observed = await this.sets.observe(fin, header, links, this.registrySource, { quiet: true });
    if (observed.short) return;
    this.shortSetChange = undefined;
    if (!observed.change) return;
    const update = await this.light.finalizedWith(fin, header, links, this.sets.stakes());
    if (update) this.metrics.lightUpdateBytes.set(update.size_bytes);
  }

  private readonly registrySource: RegistrySource = {
    registryStorageHash: async (at) => (await this.engine.accountProof(REGISTRY_ADDRESS, at, [])).storageHash.toLowerCase(),
    registryProof: (at) => this.engine.registryProof(at),
  };

  // Never throws, like recordFinality: the BIDs catch up on the next finality move or restart.
  private async bridgeFinalized(root: string): Promise<void> {
    await this.bridge.onFinalized(root).catch((err: Error) => this.log.error('bridge finality update failed', { root, error: err.message }));
  }

  /** Per-slot work: the execution chain check, metrics, pruning the attestation pool, persisting the fork-choice store, expiring bridge BIDs. */
  async onSlot(): Promise<void> {
    // Outside the lock: a slow execution node must not hold up proposals and attestations here.
    await this.link.checkChain();
    await this.mutex.run(async () => {
      const slot = this.currentSlot();
      const epoch = epochOfSlot(this.genesis, slot);
      this.metrics.currentSlot.set(slot);
      this.metrics.currentEpoch.set(epoch);
      // Retries a head or finality update execution refused or missed (a no-op when in sync).
      await this.link.updateHead();
      // The next block on the head's branch may lie before the wall clock's slot (a stalled or
      // syncing chain, a proposal for an earlier slot): keep what that block could still include.
      this.pool.prune(Math.min(epoch, epochOfSlot(this.genesis, this.head().slot + 1)));
      this.slashing.prune();
      await this.writeWithSnapshot(new WriteBatch());
      await this.bridge.onSlot().catch((err: Error) => this.log.error('bridge expiry failed; retried next slot', { error: err.message }));
      await this.retrySetChange().catch((err: Error) => this.log.error('could not record a late validator-set change; retried next slot', { error: err.message }));
    });
  }

  /** Starts the slot timer (aligned to slot starts). */
  start(): void {
    const tick = () => {
      const slotMs = this.genesis.config.slot_seconds * 1000;
      const next = slotStartMs(this.genesis, this.currentSlot() + 1) - this.now();
      this.timer = setTimeout(() => {
        this.onSlot().catch((err: Error) => this.log.error('slot processing failed', { error: err.message }));
        tick();
      }, Math.max(10, Math.min(next, slotMs)));
    };
    tick();
  }

  /** Stops the slot timer. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
