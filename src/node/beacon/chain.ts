/**
 * The beacon chain: checks blocks (proposer draw, VRF seed and proof, signature, RANDAO
 * reveal, slot timing, parent, included attestations), forwards them to execution, runs fork
 * choice over attestations (those received and those included in blocks), keeps the pool of
 * attestations a proposer packs, and tells execution the head and the finalised block. Rewards
 * are not the beacon's business: execution credits them inside each block's state transition.
 * Records and the fork-choice store persist in LevelDB; blocks are kept as the SSZ bytes received
 * (`encodeBlock`), which is what execution, gossip and range sync are sent.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { verify } from '../../core/crypto/mldsa.js';
import { vrfVerify } from '../../core/crypto/vrf.js';
import { SvcError, WrongChainError } from '../../core/errors.js';
import { type Genesis, epochOfSlot, genesisHash, slotAt, slotStartMs } from '../../core/genesis/genesis.js';
import { type Attestation, attestationHash, verifyAttestation } from '../../core/types/attestation.js';
import { checkInclusion, InclusionError, type InclusionReason, type InclusionView, selectIncludable } from '../../core/consensus/inclusion.js';
import { MAX_BLOCK_ATTESTATIONS } from '../../core/constants.js';
import { type Block, blockHash, blockMerkleRoot, canonicalHeaderBytes, encodeBlock, headerSigningHash, signedHeaderOf, bodyMerkleRoot } from '../../core/types/block.js';
import { sha3 } from '../../core/crypto/hash.js';
import { txHash } from '../../core/types/transaction.js';
import { envelopesOfBlockBytes, headerOfBlockBytes, sameBytes, signatureOfBlockBytes } from './block-bytes.js';
import type { Logger } from '../../util/log.js';
import { Mutex } from '../../util/mutex.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { DependentRootView } from '../../api/beacon.js';
import { ChainStore, WriteBatch } from '../shared/store.js';
import { AttestationJournal } from './attestation-journal.js';
import { LightStore } from './light.js';
import type { EngineClient } from './engine-client.js';
import type { EventHub } from './events.js';
import { type CheckpointHex, ForkChoice, toForkChoiceAttestation } from './forkchoice.js';
import type { BeaconMetrics } from './metrics.js';
import { proposerDuties, proposerForSlot, type ProposerCandidate } from '../../core/consensus/proposer.js';
import { genesisStateRoot } from '../../core/state/genesis-root.js';
import { type SlashingErrorCode, type SlashingEvidence, SlashingError } from '../../core/consensus/slashing.js';
import { SlashingMonitor } from './slashing.js';
import { BridgeStore, isBridgeOutcome } from './bridge.js';
import { receiptsWhere } from '../../api/import-answer.js';
import { type RandaoState, applyReveal, genesisRandao, randaoFromJson, randaoToJson, registerCommitment, type RandaoJson } from '../../core/consensus/randao.js';
import { applyRecommitments, blockRecommitments } from '../../core/consensus/recommit.js';

/** A proposal or attestation the beacon refuses; `code` names the rule. */
export class BeaconError extends SvcError {}

/** A block whose included attestations break an inclusion rule (code INVALID_ATTESTATION); `reason` names the rule. */
export class IncludedAttestationError extends BeaconError {
  constructor(readonly reason: InclusionReason, message: string) {
    super('INVALID_ATTESTATION', message, 400);
  }
}

/** A block whose slashing evidence is refused (code INVALID_SLASHING); `reason` is the SlashingError code. */
export class IncludedSlashingError extends BeaconError {
  constructor(readonly reason: SlashingErrorCode, message: string) {
    super('INVALID_SLASHING', message, 400);
  }
}

/** What the beacon keeps per block. */
export interface BeaconBlockRecord {
  root: string;
  parent: string;
  slot: number;
  index: number;
  proposer: string;
  proposer_index: number;
  state_root: string;
  transactions: number;
  /** RANDAO state after this block. */
  randao: RandaoJson;
  /** [validator index, target epoch] of each attestation the block includes (absent: none). */
  included?: Array<[number, number]>;
}

/** Attestations the pool keeps for proposers (two epochs of 1,024 validators fit). */
export const ATTESTATION_POOL_MAX = 4 * MAX_BLOCK_ATTESTATIONS;

/** A proposer duty with the seed the proposer must use. */
export interface DutyView {
  slot: number;
  validator_index: number;
  address: string;
  vrf_seed: string;
}

const K = {
  record: (root: string) => `b:${root}`,
  /** The block's SSZ bytes (layout 2; layout 1 held its wire JSON with base64 fields). */
  body: (root: string) => `B:${root}`,
  bySlot: (slot: number) => `s:${String(slot).padStart(16, '0')}`,
  forkChoice: 'm:forkchoice',
  schema: 'm:schema',
} as const;

/**
 * The beacon database's storage layout. 1 (no `m:schema` key): blocks as wire JSON; 2: blocks as
 * SSZ bytes. A data directory of another layout is refused at start (DB_SCHEMA_MISMATCH), as
 * execution refuses one: reading it would misparse every stored block.
 */
export const BEACON_SCHEMA_VERSION = 2;

/** Refusals raised before a block's signature is checked: the signature is checked afterwards for slashing detection. */
const REFUSED_BEFORE_SIGNATURE: ReadonlySet<string> = new Set(['UNKNOWN_PARENT', 'INVALID_TIMESTAMP', 'INVALID_SLOT', 'INVALID_HEIGHT', 'INACTIVE_VALIDATOR', 'WRONG_VRF_SEED', 'WRONG_PROPOSER', 'INVALID_VRF_PROOF']);

/** Consecutive proposals execution refused after which the beacon reports itself unhealthy. */
export const UNHEALTHY_AFTER_REJECTIONS = 3;

/** The beacon's own view of whether it can make progress (GET /beacon/v1/node/health). */
export type BeaconHealth = { healthy: true } | { healthy: false; reason: string; message: string };

/** Half a slot of clock disparity tolerated for proposals from the future. */
const CLOCK_DISPARITY_FRACTION = 0.5;

export class BeaconChain {
  private readonly records = new Map<string, BeaconBlockRecord & { randaoState: RandaoState }>();
  private registry: RegistryEntry[] = [];
  private readonly mutex = new Mutex();
  private lastHead = '';
  private lastFinalized = '';
  /** The head the last `head` event named (execution may lag behind it: lastHead is what execution has). */
  private lastPublishedHead = '';
  readonly genesisRoot: string;
  private timer: NodeJS.Timeout | undefined;
  /** Proposals in a row that passed the beacon's checks and were refused by execution. */
  private rejectedInRow = 0;
  private lastRejection = '';
  private checking = false;
  private readonly journal: AttestationJournal;
  /** Verified attestations by hash, oldest first (Map order): the proposer's candidates. */
  private readonly pool = new Map<string, Attestation>();
  /** Finalizing links' signed votes and the finality updates made of them (light clients). */
  light!: LightStore;
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
    const genesisRecord: BeaconBlockRecord = {
      root,
      parent: '0x' + '00'.repeat(32),
      slot: 0,
      index: 0,
      proposer: '0x' + '00'.repeat(20),
      proposer_index: -1,
      // Block 1's header names it; execution computes the same root from the same alloc.
      state_root: toHex(genesisStateRoot(g)),
      transactions: 0,
      randao: randaoToJson(genesisRandao(parseHex(root, 'genesis', 32), g.validators)),
    };
    chain.remember(genesisRecord);
    chain.light = await LightStore.open(o.store, o.log);
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
    chain.lastHead = chain.forkChoice.head();
    chain.lastFinalized = chain.forkChoice.finalized().root;
    await chain.replayJournal();
    await chain.recordHeadEncoding();
    // A stop between a finality move and the bridge's write of it would otherwise leave those BIDs unfinalised until the next move.
    await chain.bridgeFinalized(chain.lastFinalized);
    return chain;
  }

  // The journal holds every acknowledged attestation that can still be included: re-applied in
  // acceptance order, those after the last snapshot get their fork-choice votes back, and all go
  // back into the proposer's pool. It holds two epochs' votes at most (see writeWithSnapshot), so
  // this is cheap at any chain length.
  private async replayJournal(): Promise<void> {
    const entries = await this.journal.load();
    let applied = 0;
    for (const e of entries) {
      try {
        if ('error' in e) throw e.error;
        const att = e.attestation;
        const v = this.registry[att.validatorIndex];
        if (!v) throw new BeaconError('UNKNOWN_VALIDATOR', `no validator with index ${att.validatorIndex}`, 400);
        // Its signature was checked before it was journaled; only the effects are redone (the
        // slashing index included: its entries since the last snapshot were not written yet).
        await this.slashing.observeAttestation(att);
        const status = this.forkChoice.onAttestation(toForkChoiceAttestation(att)).status;
        // A duplicate was already in the snapshot; either way it is includable again.
        if (status === 'applied' || status === 'duplicate') {
          this.addToPool(att);
          this.light.observe(att, this.forkChoice.finalized().epoch);
        }
        if (status === 'applied') applied++;
      } catch (err) {
        this.log.warn('journaled attestation could not be re-applied; dropped', { key: e.key, error: (err as Error).message });
      }
    }
    if (entries.length > 0) this.log.info('attestations re-applied from the journal', { journaled: entries.length, applied });
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
    const link = this.engine.linkProblem();
    if (link) return { healthy: false, reason: link.code, message: link.message };
    if (this.rejectedInRow >= UNHEALTHY_AFTER_REJECTIONS) {
      return { healthy: false, reason: 'PROPOSALS_REJECTED', message: `execution rejected the last ${this.rejectedInRow} proposals (last: ${this.lastRejection})` };
    }
    return { healthy: true };
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

  private candidates(): ProposerCandidate[] {
    const min = BigInt(this.genesis.config.min_validator_stake);
    return this.registry.map((v) => ({ index: v.index, stake: BigInt(v.stake), active: v.active && BigInt(v.stake) >= min }));
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

  /** Canonical block root at `slot`, if a block was proposed there. */
  rootAtSlot(slot: number): Promise<string | undefined> {
    return this.store.get<string>(K.bySlot(slot));
  }

  /**
   * The block whose RANDAO mix seeds epoch `epoch` on the branch ending at `tipRoot`: the last
   * block before epoch e-1 starts, i.e. the last block of epoch e-2 or earlier (genesis when
   * there is none). Its root is the proposer duties' dependent root.
   */
  private seedBlock(tipRoot: string, epoch: number): BeaconBlockRecord & { randaoState: RandaoState } {
    const limit = (epoch - 1) * this.genesis.config.slots_per_epoch;
    let r = this.records.get(tipRoot)!;
    while (r.slot >= limit && r.index > 0) r = this.records.get(r.parent)!;
    return r;
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
    const seedBlock = this.seedBlock(this.forkChoice.head(), epoch);
    const mix = seedBlock.randaoState.mix;
    const candidates = this.candidates();
    const duties = proposerDuties(candidates, mix, epoch, this.genesis.config.slots_per_epoch).map((d) => {
      const { seed } = proposerForSlot(candidates, mix, d.slot);
      return { slot: d.slot, validator_index: d.index, address: this.registry[d.index]!.address, vrf_seed: toHex(seed) };
    });
    return { dependent_root: seedBlock.root, duties };
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
   */
  propose(block: Block, ssz?: Uint8Array): Promise<{ block_hash: string; slot: number; index: number; state_root: string; transactions: number; already_known: boolean }> {
    return this.mutex.run(async () => {
      try {
        return await this.proposeLocked(block, ssz);
      } catch (err) {
        if (err instanceof SvcError) this.metrics.proposalsRejected.inc({ reason: err.code });
        if (err instanceof BeaconError && REFUSED_BEFORE_SIGNATURE.has(err.code)) await this.observeRefused(block);
        throw err;
      }
    });
  }

  // A block refused before its signature was checked may still be half of a double proposal: the
  // signature alone decides whether it is evidence (a second block for a slot usually is refused
  // or left on a side branch, which is the point of detecting it).
  private async observeRefused(block: Block): Promise<void> {
    const v = this.registry.find((x) => x.address === toHex(block.header.validatorId));
    if (!v || block.signature.length === 0) return;
    const sh = signedHeaderOf(block.header, this.genesis.chain_id, v.index);
    if (!verify(parseHex(v.public_key, 'public_key'), headerSigningHash(sh), block.signature)) return;
    await this.slashing.observeHeader({ header: sh, signature: block.signature }).catch((err: Error) => this.log.warn('slashing detector failed on a refused block', { error: err.message }));
  }

  private async proposeLocked(block: Block, received: Uint8Array | undefined) {
    const h = block.header;
    const root = toHex(blockHash(h));
    const known = this.records.get(root);
    if (known) {
      await this.checkKnownCopy(block, received, known);
      return { block_hash: root, slot: known.slot, index: known.index, state_root: known.state_root, transactions: known.transactions, already_known: true };
    }
    const cfg = this.genesis.config;
    const parent = this.records.get(toHex(h.parentHash));
    if (!parent) throw new BeaconError('UNKNOWN_PARENT', `unknown parent block ${toHex(h.parentHash)}`, 400);
    const sinceGenesis = h.timestampMs - this.genesis.genesis_time * 1000;
    const slotMs = cfg.slot_seconds * 1000;
    if (sinceGenesis <= 0 || sinceGenesis % slotMs !== 0) throw new BeaconError('INVALID_TIMESTAMP', `timestamp ${h.timestampMs} is not the start of a slot after genesis`, 400);
    const slot = sinceGenesis / slotMs;
    if (slot <= parent.slot) throw new BeaconError('INVALID_SLOT', `slot ${slot} is not after the parent's slot ${parent.slot}`, 400);
    if (h.timestampMs > this.now() + slotMs * CLOCK_DISPARITY_FRACTION) throw new BeaconError('FUTURE_SLOT', `slot ${slot} has not started yet`, 400);
    if (h.index !== parent.index + 1) throw new BeaconError('INVALID_HEIGHT', `index ${h.index} does not follow the parent's ${parent.index}`, 400);
    const proposer = toHex(h.validatorId);
    const validator = this.registry.find((v) => v.address === proposer);
    if (!validator) throw new BeaconError('UNKNOWN_VALIDATOR', `Unknown validator ${proposer}`, 400);
    if (!validator.active || BigInt(validator.stake) < BigInt(cfg.min_validator_stake)) throw new BeaconError('INACTIVE_VALIDATOR', `validator ${validator.index} is not active and staked`, 400);
    const epoch = epochOfSlot(this.genesis, slot);
    const expected = proposerForSlot(this.candidates(), this.seedMix(parent.root, epoch), slot);
    if (toHex(h.vrfSeed) !== toHex(expected.seed)) throw new BeaconError('WRONG_VRF_SEED', `vrf_seed ${toHex(h.vrfSeed)} is not the seed of slot ${slot} (${toHex(expected.seed)})`, 400);
    if (expected.index !== validator.index) throw new BeaconError('WRONG_PROPOSER', `validator ${validator.index} is not the proposer of slot ${slot} (validator ${expected.index} is)`, 400);
    const publicKey = parseHex(validator.public_key, 'public_key');
    let t = performance.now();
    const vrfOk = vrfVerify(publicKey, h.vrfSeed, h.vrfProof, this.genesis.chain_id);
    this.metrics.vrf(performance.now() - t, vrfOk);
    if (!vrfOk) {
      throw new BeaconError('INVALID_VRF_PROOF', 'VRF proof verification failed', 400);
    }
    const sh = signedHeaderOf(h, this.genesis.chain_id, validator.index);
    t = performance.now();
    const sigOk = verify(publicKey, headerSigningHash(sh), block.signature);
    this.metrics.signature(performance.now() - t, sigOk);
    this.metrics.canonicalBytes.set(canonicalHeaderBytes(sh, block.signature).length);
    if (!sigOk) throw new BeaconError('INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED', 400);
    await this.slashing.observeHeader({ header: sh, signature: block.signature });
    let randao: RandaoState;
    try {
      randao = applyReveal(this.withDeposits(parent.randaoState), validator.index, h.randaoReveal);
    } catch (err) {
      throw new BeaconError('INVALID_RANDAO_REVEAL', (err as Error).message, 400);
    }
    // The signed merkle_root is what binds the included votes to the proposer: checked here, not
    // only by execution, because the beacon acts on those votes. A transaction's hash is SHA3 of
    // its envelope: a block that arrived as bytes is hashed from them, not encoded again.
    const txHashes = received === undefined ? block.transactions.map(txHash) : envelopesOfBlockBytes(received).map((e) => sha3(e));
    if (toHex(blockMerkleRoot(txHashes, block.attestations, block.slashings)) !== toHex(h.merkleRoot)) {
      throw new BeaconError('MERKLE_ROOT_MISMATCH', "the transactions, attestations and slashings do not match the header's merkle_root", 400);
    }
    try {
      this.slashing.checkBlock(block.slashings);
    } catch (err) {
      if (err instanceof SlashingError) throw new IncludedSlashingError(err.slashingCode, `Block includes invalid slashing evidence: ${err.code}: ${err.message}`);
      throw err;
    }
    // Execution applies the same re-commitments (one rule, core/consensus/recommit.ts, on the registry before the block).
    const recommits = blockRecommitments(block.transactions, proposer, (a) => this.registry.find((v) => v.address === a), () => this.candidates().filter((c) => c.active).length);
    randao = applyRecommitments(randao, recommits.applied);
    try {
      checkInclusion(block.attestations, this.inclusionView(parent.root, slot));
    } catch (err) {
      if (err instanceof InclusionError) throw new IncludedAttestationError(err.reason, err.message);
      throw err;
    }
    const ssz = received ?? encodeBlock(block);
    const result = await this.engine.newPayload(ssz).catch((err: SvcError) => {
      this.rejectedInRow++;
      this.lastRejection = `${err.code}: ${err.message}`;
      if (err instanceof WrongChainError) throw err;
      throw new BeaconError('EXECUTION_REJECTED', `execution rejected the block: ${err.message}`, err.status === 503 ? 503 : 400);
    });
    this.rejectedInRow = 0;
    // Only the bridge's receipts are parsed (a compact answer says every receipt's status and
    // kind in binary). Read before the block is recorded: an answer whose receipts cannot be read
    // leaves the beacon as it was.
    let bridgeReceipts;
    try {
      bridgeReceipts = receiptsWhere(result, isBridgeOutcome);
    } catch (err) {
      throw new BeaconError('EXECUTION_ERROR', `execution's answer for the block is malformed: ${(err as Error).message}`, 502);
    }
    const record: BeaconBlockRecord = {
      root,
      parent: parent.root,
      slot,
      index: h.index,
      proposer,
      proposer_index: validator.index,
      state_root: result.state_root,
      transactions: block.transactions.length,
      randao: randaoToJson(randao),
      ...(block.attestations.length > 0 ? { included: block.attestations.map((a): [number, number] => [a.validatorIndex, a.data.target.epoch]) } : {}),
    };
    this.forkChoice.onBlock({ root, parentRoot: parent.root, slot });
    // A node that only sees blocks (a follower, a node syncing by range) gets the same votes.
    this.applyIncluded(block.attestations);
    for (const att of block.attestations) await this.slashing.observeAttestation(att);
    await this.slashing.onIncluded(block.slashings, root);
    this.remember(record);
    // What the block's bridge receipts did to BIDs is written in the same atomic batch: a crash
    // cannot keep the block and lose a lock it holds (a stored block is never imported again).
    await this.bridge.importBlock(bridgeReceipts, { hash: root, index: h.index }, new WriteBatch().put(K.record(root), record).putBytes(K.body(root), ssz).put(K.bySlot(slot), root), (b) => this.writeWithSnapshot(b));
    this.metrics.blocksProposed.inc();
    if (recommits.applied.length > 0) {
      this.metrics.randaoRecommits.inc(recommits.applied.length);
      this.log.info('RANDAO re-commitments applied', { slot, block_hash: root, validators: recommits.applied.map((c) => c.validatorIndex) });
    }
    this.log.info('block accepted', { slot, number: h.index, hash: root, proposer: validator.index, txs: record.transactions, state_root: record.state_root });
    this.events?.publish('new_block', { slot, block_hash: root, proposer, transactions: record.transactions });
    await this.refreshRegistry();
    await this.updateHead();
    return { block_hash: root, slot, index: h.index, state_root: record.state_root, transactions: record.transactions, already_known: false };
  }

  // The block hash covers neither the signature nor the transaction list, so a copy of an
  // accepted header can carry a corrupted signature or other transactions: it is refused rather
  // than reported as the known block.
  private async checkKnownCopy(block: Block, received: Uint8Array | undefined, known: BeaconBlockRecord): Promise<void> {
    if (known.index === 0) return;
    const stored = await this.store.getBytes(K.body(known.root));
    // The very bytes already accepted passed every check below.
    if (stored !== undefined && received !== undefined && sameBytes(stored, received)) return;
    if (stored === undefined || !sameBytes(signatureOfBlockBytes(stored), block.signature)) {
      const v = this.registry.find((x) => x.index === known.proposer_index);
      const sh = signedHeaderOf(block.header, this.genesis.chain_id, known.proposer_index);
      if (!v || !verify(parseHex(v.public_key, 'public_key'), headerSigningHash(sh), block.signature)) throw new BeaconError('INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED', 400);
    }
    if (toHex(bodyMerkleRoot(block.transactions, block.attestations, block.slashings)) !== toHex(block.header.merkleRoot)) throw new BeaconError('MERKLE_ROOT_MISMATCH', "the transactions, attestations and slashings do not match the header's merkle_root", 400);
  }

  // Validators registered by deposits after the parent get their commitment added on first use.
  private withDeposits(state: RandaoState): RandaoState {
    let s = state;
    for (const v of this.registry) if (!s.last.has(v.index)) s = registerCommitment(s, v.index, parseHex(v.randao_commitment, 'randao_commitment', 32));
    return s;
  }

  /** Verifies and counts an attestation. */
  attest(att: Attestation): Promise<{ status: string }> {
    return this.mutex
      .run(async () => {
        const v = this.registry[att.validatorIndex];
        if (!v || !v.active) throw new BeaconError('UNKNOWN_VALIDATOR', `no active validator with index ${att.validatorIndex}`, 400);
        if (att.data.slot > this.currentSlot()) throw new BeaconError('FUTURE_SLOT', `attestation slot ${att.data.slot} has not started yet`, 400);
        const t = performance.now();
        const ok = verifyAttestation(att, parseHex(v.public_key, 'public_key'), this.genesis.chain_id);
        this.metrics.signature(performance.now() - t, ok);
        if (!ok) throw new BeaconError('INVALID_SIGNATURE', 'attestation signature verification failed', 400);
        // The detector holds the signed votes fork choice does not: it builds (and announces) the evidence.
        await this.slashing.observeAttestation(att);
        const outcome = this.forkChoice.onAttestation(toForkChoiceAttestation(att));
        this.metrics.attestationsReceived.inc();
        if (outcome.status === 'slashable') {
          throw new BeaconError('SLASHABLE_ATTESTATION', `attestation is a ${outcome.evidence.kind.replace('_', ' ')} by validator ${att.validatorIndex}`, 409);
        }
        if (outcome.status === 'applied' || outcome.status === 'duplicate') this.light.observe(att, this.forkChoice.finalized().epoch);
        if (outcome.status !== 'applied') return { status: outcome.status };
        this.addToPool(att);
        // Queued under the lock, so journal order is acceptance order; awaited outside it, so
        // attestations arriving together share one synced write instead of one each.
        const durable = this.journal.append(att);
        await this.updateHead();
        return { status: outcome.status, durable, validator: v.address };
      })
      .then(async ({ status, durable, validator }) => {
        // Acknowledged (and announced) only once durable: one small synced put, not a snapshot
        // of the whole fork-choice store (that happens once per slot and retires these entries).
        if (durable) {
          await durable;
          this.events?.publish('new_attestation', { slot: att.data.slot, validator, block_hash: toHex(att.data.beaconBlockRoot) });
        }
        return { status };
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
    if (slot <= head.slot) throw new BeaconError('INVALID_SLOT', `slot ${slot} is not after the head's slot ${head.slot}`, 400);
    // Verified on the way into the pool: selection re-checks only the branch rules.
    return selectIncludable([...this.pool.values()], { ...this.inclusionView(head.root, slot), verify: () => true });
  }

  /**
   * The inclusion rules' view of the branch ending at `parentRoot`, for a block at `slot`. Only
   * votes with target epoch ≥ the block's epoch − 1 are includable, and a vote is included no
   * later than the epoch after its target, so the blocks from that epoch's start on hold every
   * inclusion that can matter: the walk is at most two epochs of blocks.
   */
  private inclusionView(parentRoot: string, slot: number): InclusionView {
    const spe = this.genesis.config.slots_per_epoch;
    const from = Math.max(0, (Math.floor(slot / spe) - 1) * spe);
    const last = new Map<number, number>();
    for (let r = this.records.get(parentRoot); r && r.index > 0 && r.slot >= from; r = this.records.get(r.parent)) {
      for (const [v, e] of r.included ?? []) if ((last.get(v) ?? -1) < e) last.set(v, e);
    }
    return {
      blockSlot: slot,
      slotsPerEpoch: spe,
      validator: (index) => {
        const v = this.registry[index];
        return v && { active: v.active, publicKey: parseHex(v.public_key, 'public_key') };
      },
      lastIncluded: (index) => last.get(index),
      verify: (att, publicKey) => {
        // A vote from the pool was verified on arrival; its hash commits to the signature.
        if (this.pool.has(toHex(attestationHash(att)))) return true;
        const t = performance.now();
        const ok = verifyAttestation(att, publicKey, this.genesis.chain_id);
        this.metrics.signature(performance.now() - t, ok);
        return ok;
      },
    };
  }

  // Included votes count in fork choice like received ones; one that fork choice cannot use
  // (names a block not held, conflicts with a recorded vote) is still validly included, since
  // inclusion rules do not depend on any node's fork-choice state.
  private applyIncluded(atts: readonly Attestation[]): void {
    for (const att of atts) {
      try {
        const outcome = this.forkChoice.onAttestation(toForkChoiceAttestation(att));
        if (outcome.status === 'applied' || outcome.status === 'duplicate') this.light.observe(att, this.forkChoice.finalized().epoch);
        // The detector (which holds the signed votes) turns it into evidence and announces it.
        if (outcome.status === 'slashable') this.log.warn('slashable attestation included in a block', { validator: att.validatorIndex, kind: outcome.evidence.kind });
      } catch (err) {
        if (!(err instanceof SvcError)) throw err;
        this.log.debug('included attestation not counted by fork choice', { validator: att.validatorIndex, code: err.code, error: err.message });
      }
    }
  }

  private addToPool(att: Attestation): void {
    this.pool.set(toHex(attestationHash(att)), att);
    // Map order is insertion order: the oldest go first.
    for (const key of this.pool.keys()) {
      if (this.pool.size <= ATTESTATION_POOL_MAX) break;
      this.pool.delete(key);
    }
  }

  // A vote is includable up to the epoch after its target: older ones can never be packed.
  private prunePool(epoch: number): void {
    for (const [key, att] of this.pool) if (att.data.target.epoch + 1 < epoch) this.pool.delete(key);
  }

  /**
   * What a validator attesting at `slot` votes for: the head as of that slot, and the FFG source
   * and target. A validator that runs late (a loaded machine) may ask after a later slot's block
   * arrived; a vote for a block after its own slot is invalid, so it gets the head's latest
   * ancestor at or before `slot`, as Ethereum's produceAttestationData does.
   */
  attestationData(slot: number): { slot: number; beacon_block_root: string; source: CheckpointHex; target: CheckpointHex } {
    if (slot > this.currentSlot()) throw new BeaconError('FUTURE_SLOT', `slot ${slot} has not started yet`, 400);
    const head = this.forkChoice.blockAtSlot(this.forkChoice.head(), slot);
    const epoch = epochOfSlot(this.genesis, slot);
    return { slot, beacon_block_root: head, source: this.sourceFor(head, epoch), target: { epoch, root: this.forkChoice.checkpointFor(head, epoch) } };
  }

  /**
   * FFG source for a vote with target `epoch`: the latest justified checkpoint before `epoch` on
   * `head`'s branch. Justification takes effect as soon as the votes arrive (no epoch-boundary
   * processing), so late in an epoch the best justified checkpoint may be that epoch itself, and a
   * vote whose source equals its target is invalid; step back to the previous justified one (the
   * finalized checkpoint is justified, so this ends there at the latest).
   */
  private sourceFor(head: string, epoch: number): CheckpointHex {
    const best = this.forkChoice.justified();
    if (best.epoch < epoch || epoch === 0) return best;
    const fin = this.forkChoice.finalized();
    for (let e = epoch - 1; e > fin.epoch; e--) {
      const cp = { epoch: e, root: this.forkChoice.checkpointFor(head, e) };
      if (this.forkChoice.isJustified(cp)) return cp;
    }
    return fin;
  }

  /**
   * Tells execution about a new head or finalised block; emits finality once execution has it.
   * Never throws: the block or attestation that moved fork choice is already accepted and
   * stored, so execution refusing the update (or being unreachable) must not turn that into an
   * error for its sender. lastHead/lastFinalized then stay behind, so the update is sent again
   * on the next block, attestation or slot.
   */
  private async updateHead(): Promise<void> {
    const head = this.forkChoice.head();
    const fin = this.forkChoice.finalized();
    if (head !== this.lastPublishedHead) {
      // Validators learn here that the head changed branch, so duties drawn on the old one are
      // refetched before their slot rather than found stale at it.
      this.lastPublishedHead = head;
      this.events?.publish('head', { slot: this.records.get(head)!.slot, block_hash: head, proposer_dependent_roots: this.headDependentRoots(head) });
    }
    if (head === this.lastHead && fin.root === this.lastFinalized) return;
    // Execution refuses a head that does not descend from the finalized block (409). Fork choice
    // walks from the justified checkpoint, which agrees with the finalized one, so this pair is
    // always consistent; checked anyway so a fork-choice bug shows up here, not as a reorg.
    let consistent: boolean;
    try {
      consistent = this.forkChoice.isDescendant(fin.root, head);
    } catch {
      consistent = false;
    }
    if (!consistent) {
      this.metrics.forkchoiceUpdatesFailed.inc({ reason: 'INCONSISTENT_FORK_CHOICE' });
      this.log.error('fork choice head does not descend from the finalized checkpoint; not sent to execution', { head, finalized: fin.root, finalized_epoch: fin.epoch });
      return;
    }
    let reverted: number;
    try {
      ({ reverted } = await this.engine.forkchoiceUpdated(head, fin.root));
    } catch (err) {
      const code = err instanceof SvcError ? err.code : 'INTERNAL';
      this.metrics.forkchoiceUpdatesFailed.inc({ reason: code });
      this.log.warn('execution refused forkchoiceUpdated; will retry', { head, finalized: fin.root, code, error: (err as Error).message });
      return;
    }
    // A reorg can revert or apply deposits and exits, and execution checks the proposer draw
    // against its registry: the beacon's copy must follow, or the next proposals would be drawn
    // from a registry execution no longer has and be refused.
    if (reverted > 0) {
      await this.refreshRegistry().catch((err: Error) => this.log.warn('registry refresh after a reorg failed; refreshed again on the next block', { error: err.message }));
    }
    if (fin.root !== this.lastFinalized) {
      this.metrics.finalizedEpoch.set(fin.epoch);
      this.metrics.blocksFinalized.inc(this.newlyFinalized(fin.root));
      this.events?.publish('finalized_checkpoint', { epoch: fin.epoch, root: fin.root });
      this.log.info('finalized', { epoch: fin.epoch, root: fin.root });
      await this.recordFinality(fin);
      await this.bridgeFinalized(fin.root);
      this.forkChoice.prune();
    }
    this.lastHead = head;
    this.lastFinalized = fin.root;
  }

  /**
   * Blocks that became final when finality moved from lastFinalized to `root`: the height
   * difference, since the new finalised block descends from the old one. Finality can jump
   * several epochs at once, and epochs may hold empty slots, so neither 1 nor the epoch count
   * is the number of blocks.
   */
  private newlyFinalized(root: string): number {
    const now = this.records.get(root)?.index;
    const before = this.records.get(this.lastFinalized)?.index ?? 0;
    return now === undefined ? 0 : Math.max(0, now - before);
  }

  // The light-client finality update of a newly finalized checkpoint. Never throws: finality is
  // already decided and sent to execution; a failed write only costs light clients this update.
  private async recordFinality(fin: CheckpointHex): Promise<void> {
    try {
      const stored = await this.store.getBytes(K.body(fin.root));
      if (stored === undefined) return; // genesis: no header, nothing a light client needs proven
      const active = new Map(this.registry.filter((v) => v.active).map((v) => [v.index, BigInt(v.stake)]));
      let totalActive = 0n;
      for (const s of active.values()) totalActive += s;
      const update = await this.light.finalized(fin, headerOfBlockBytes(stored), { size: this.registry.length, activeStake: (i) => active.get(i), totalActive });
      if (update) this.metrics.lightUpdateBytes.set(update.size_bytes);
    } catch (err) {
      this.log.error('could not record the light-client finality update', { epoch: fin.epoch, root: fin.root, error: (err as Error).message });
    }
  }

  // Never throws, like recordFinality: the BIDs catch up on the next finality move or restart.
  private async bridgeFinalized(root: string): Promise<void> {
    await this.bridge.onFinalized(root).catch((err: Error) => this.log.error('bridge finality update failed', { root, error: err.message }));
  }

  /** Per-slot work: the execution chain check, metrics, pruning the attestation pool, persisting the fork-choice store, expiring bridge BIDs. */
  async onSlot(): Promise<void> {
    // Outside the lock: a slow execution node must not hold up proposals and attestations here.
    await this.checkExecution();
    await this.mutex.run(async () => {
      const slot = this.currentSlot();
      const epoch = epochOfSlot(this.genesis, slot);
      this.metrics.currentSlot.set(slot);
      this.metrics.currentEpoch.set(epoch);
      // Retries a head or finality update execution refused or missed (a no-op when in sync).
      await this.updateHead();
      // The next block on the head's branch may lie before the wall clock's slot (a stalled or
      // syncing chain, a proposal for an earlier slot): keep what that block could still include.
      this.prunePool(Math.min(epoch, epochOfSlot(this.genesis, this.head().slot + 1)));
      this.slashing.prune();
      await this.writeWithSnapshot(new WriteBatch());
      await this.bridge.onSlot().catch((err: Error) => this.log.error('bridge expiry failed; retried next slot', { error: err.message }));
    });
  }

  // Every slot, not only after a failed call: execution may have been restarted on other data
  // between two calls. While the check fails, the engine client sends execution nothing that
  // changes its state (no newPayload or forkchoiceUpdated) and health says why.
  private async checkExecution(): Promise<void> {
    // One check at a time: against a hung node, slot ticks must not pile up requests.
    if (this.checking) return;
    this.checking = true;
    try {
      const before = this.engine.linkProblem()?.code;
      await this.engine.checkChain().catch(() => undefined);
      const now = this.engine.linkProblem();
      if (now && now.code !== before) this.log.error('execution cannot be driven; nothing is sent to it until this is resolved', { code: now.code, error: now.message });
      else if (!now && before) this.log.info('execution link restored', { was: before });
    } finally {
      this.checking = false;
    }
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

/**
 * Refuses a database of another storage layout; stamps an empty one with this layout. A database
 * without the stamp but with content is layout 1 (blocks as JSON), written before the stamp existed.
 */
async function checkSchema(store: ChainStore): Promise<void> {
  let schema = await store.get<number>(K.schema);
  if (schema === undefined) {
    if (!(await isEmpty(store))) schema = 1;
    else {
      await store.write(new WriteBatch().put(K.schema, BEACON_SCHEMA_VERSION));
      return;
    }
  }
  if (schema !== BEACON_SCHEMA_VERSION) {
    throw new SvcError(
      'DB_SCHEMA_MISMATCH',
      `beacon data directory uses storage layout ${schema}, this beacon reads layout ${BEACON_SCHEMA_VERSION} (blocks stored as SSZ): start with a fresh data directory (svc devnet up --fresh, or another --data-dir) and let the beacon sync from its peers`,
      409,
    );
  }
}

async function isEmpty(store: ChainStore): Promise<boolean> {
  for await (const _key of store.db.keys({ limit: 1 })) return false;
  return true;
}
