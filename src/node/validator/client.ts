/**
 * The validator client: one validator key, driven by a timer aligned to slot starts, talking to
 * the beacon REST API, subscribed to the beacon's `/ws` event stream (`event-stream.ts`), and to
 * execution's engine API for transactions.
 *
 * Per slot s (times from the slot start; a third of a slot is `slot_seconds / 3`):
 * - 0: **propose** if the epoch's proposer duties (fetched once per epoch, cached with their
 *   dependent root) name this validator for s: head, pending transactions, RANDAO reveal
 *   (`RandaoChain.next` of the value the beacon last accepted), header; slashing protection
 *   records the signing root **before** the block is signed; then POST. Duties depend on the
 *   branch (the seed is the mix after the last block before epoch − 1): when the head's
 *   dependent root for the epoch is not the cached duties' one, they are fetched again before
 *   anything is signed, and a head that moved while the block was assembled (attestations and
 *   randao_last are answered on the beacon's head of the moment) has it planned again. The
 *   validator's own accepted block is the slot's block, so it attests right away when s is its
 *   attestation slot. Always timer-driven: a proposal never waits for an event.
 * - 1/6: **head poll**: attest early when the head already holds a block for s. Skipped while
 *   the event stream is connected: `new_block` does the same job as soon as the block exists.
 * - 1/3: **attest** (whatever the head is).
 *
 * Events: a `new_block` for the current slot triggers the head check and early attestation at
 * once (instead of at 1/6); the first block of a new epoch loads that epoch's and the next
 * epoch's proposer duties when they are not cached yet; a `head` on a branch with other
 * dependent roots reloads the cached duties it invalidates (so a reorg does not cost the slot).
 * When the stream is down (or the beacon has none) the client polls as above and the stream
 * reconnects with capped exponential backoff; `service_validator_beacon_ws_connected` says which
 * mode it is in.
 *
 * Attestations: one per epoch, not one per slot. Two different votes with the same target epoch
 * are a double vote (slashable; the beacon refuses the second with SLASHABLE_ATTESTATION and
 * slashing protection refuses to sign it), and the beacon's fork choice keeps one latest message
 * per target epoch anyway. The validator attests at its attestation slot of each epoch
 * (`epoch start + index mod slots_per_epoch`, which spreads validators over the epoch), or at
 * the first later slot of the epoch where that works (beacon down, client started late). A vote
 * signed but not delivered (beacon unreachable) is re-sent unchanged, never re-signed.
 *
 * RANDAO: reveals come from a RandaoKeeper (randao-recommit.ts), which keeps this key's current
 * hash chain and the next generation's. When few reveals are left it re-commits by itself (a
 * transaction to RANDAO_COMMIT_ADDRESS, never packed into this validator's own blocks); a slot
 * whose chain is exhausted before the new commitment took effect is skipped with a log line.
 *
 * Failures never stop the timer: an unreachable beacon is logged (once, then at debug until it
 * is back) and the next phase or slot tries again. Phases run one at a time; a phase whose slot
 * has passed when its turn comes is skipped.
 */
import { type SlashingEvidence, encodeEvidence } from '../../core/consensus/slashing.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { MAX_BLOCK_TXS } from '../../core/constants.js';
import { sha3 } from '../../core/crypto/hash.js';
import { vrfProve } from '../../core/crypto/vrf.js';
import { SvcError } from '../../core/errors.js';
import { epochOfSlot, type Genesis, slotAt, slotStartMs } from '../../core/genesis/genesis.js';
import { type Attestation, type AttestationData, attestationSigningHash, attestationToJson, type AttestationJson, signAttestation } from '../../core/types/attestation.js';
import { type BlockHeader, blockMerkleRoot, encodeBlock, canonicalHeaderBytes, headerSigningHash, signBlock, signedHeaderOf } from '../../core/types/block.js';
import { type Transaction, txSender } from '../../core/types/transaction.js';
import { AttestationSsz, BlockSsz } from '../../core/types/ssz.js';
import { MAX_BLOCK_BYTES } from '../beacon/p2p.js';
import { BeaconClient, BeaconClientError, ExecutionEngineClient } from '../../client/beacon.js';
import type { HeadView, ProposerDutyView, ValidatorView } from '../../api/beacon.js';
import type { Logger } from '../../util/log.js';
import type { WalletKeys } from '../../wallet/derivation.js';
import type { HeadEvent, NewBlockEvent } from '../beacon/events.js';
import { dependentRootOn, ProposerDutiesCache } from './duties.js';
import { BeaconEventStream } from './event-stream.js';
import { BridgeDuty } from './bridge-duty.js';
import { RandaoChain, RandaoChainError } from './randao-chain.js';
import { RandaoKeeper } from './randao-recommit.js';
import { isRecommit } from '../../core/consensus/recommit.js';
import { ExecutionClient } from '../../client/execution.js';
import { type SlashingProtectionDb, SlashingProtectionError } from './slashing-protection.js';
import { serveMetrics, ValidatorMetrics } from './metrics.js';
import { realTimers, type Timers } from './timers.js';

export type { Timers } from './timers.js';

/** The key material the client needs from a wallet. */
export type ValidatorKeys = Pick<WalletKeys, 'address' | 'mldsa' | 'mldsaSeed'>;

export interface ValidatorClientOptions {
  genesis: Genesis;
  keys: ValidatorKeys;
  beaconUrl: string;
  executionUrl: string;
  /** Bearer token for the beacon's validator POSTs. */
  token: string;
  /** Opened by the caller, who also closes it after `stop()`. */
  slashingDb: SlashingProtectionDb;
  log: Logger;
  /** Unix ms (default Date.now). */
  clock?: () => number;
  timers?: Timers;
  /** Serve GET /metrics on this port (0 = an ephemeral port); absent = no metrics server. */
  metricsPort?: number;
  /** Interface of the metrics server (default 127.0.0.1). */
  metricsHost?: string;
  /** Makes an engine JWT per request, for an execution node that is not on loopback. */
  executionJwt?: () => string;
  /** Deadline of GET requests (default: half a slot, within 1 to 10 s). */
  requestTimeoutMs?: number;
  /** Deadline of the block POST, which the beacon forwards to execution (default: max(slot, 10 s)). */
  proposeTimeoutMs?: number;
  /** Stop packing transactions once the block's SSZ would exceed this (default: the P2P block frame, MAX_BLOCK_BYTES). */
  maxBlockBytes?: number;
  /** A chain already built for this key (tests; otherwise built at start, ~0.1 s for 2^16). */
  randaoChain?: RandaoChain;
  /** Validator data directory: where the RANDAO generation is persisted (absent: kept in memory). */
  dataDir?: string;
  /** Reconnection backoff of the `/ws` subscription (default 250 ms doubling to 5 s, jittered). */
  reconnectBackoffMs?: { min: number; max: number };
}

const PHASES = ['propose', 'poll', 'attest'] as const;
type Phase = (typeof PHASES)[number];

/** What made the client attest (the `trigger` field of "attestation sent"). */
type AttestTrigger = 'own_block' | 'head_poll' | 'new_block' | 'deadline';

/** Codes with which the beacon says the cached duties were wrong for the block. */
const STALE_DUTY_CODES = new Set(['WRONG_PROPOSER', 'WRONG_VRF_SEED']);

/** How many times a proposal is re-planned when the head moves to another branch under it. */
const MAX_PROPOSAL_ATTEMPTS = 3;

/** An attestation signed (so recorded by slashing protection) but not yet acknowledged. */
interface PendingAttestation {
  epoch: number;
  slot: number;
  json: AttestationJson;
}

export class ValidatorClient {
  readonly metrics = new ValidatorMetrics();
  readonly beacon: BeaconClient;
  readonly execution: ExecutionEngineClient;
  private readonly genesis: Genesis;
  private readonly keys: ValidatorKeys;
  private readonly sp: SlashingProtectionDb;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly timers: Timers;
  private readonly pubkeyHex: string;
  private readonly slotMs: number;
  private readonly proposeTimeoutMs: number;
  private readonly maxBlockBytes: number;
  private randao: RandaoKeeper | undefined;
  private index: number | undefined;
  private readonly duties: ProposerDutiesCache;
  /** Highest epoch whose attestation is settled (accepted, refused, or given up). */
  private attestedEpoch = -1;
  private pendingAtt: PendingAttestation | undefined;
  private cursor = { slot: 0, phase: 0 };
  /** Last slot whose proposer duty was checked against the beacon (so a reconnect re-checks only a missed one). */
  private proposalChecked = -1;
  private timer: unknown;
  private running = false;
  private work: Promise<void> = Promise.resolve();
  private beaconDown = false;
  private lastIndexProblem = '';
  private server: Server | undefined;
  private metricsAddress: AddressInfo | undefined;
  private readonly stream: BeaconEventStream;
  /** Highest epoch a `new_block` event has been seen in (duties are refreshed once per epoch). */
  private eventEpoch = -1;
  /** Signs this chain's bridge BIDs (on `bridge_bid_registered`, and once per epoch). */
  readonly bridge: BridgeDuty;

  constructor(private readonly opts: ValidatorClientOptions) {
    this.genesis = opts.genesis;
    this.keys = opts.keys;
    this.sp = opts.slashingDb;
    this.log = opts.log;
    this.clock = opts.clock ?? Date.now;
    this.timers = opts.timers ?? realTimers;
    this.pubkeyHex = toHex(opts.keys.mldsa.publicKey);
    this.slotMs = opts.genesis.config.slot_seconds * 1000;
    const getTimeout = opts.requestTimeoutMs ?? Math.min(10_000, Math.max(1_000, Math.floor(this.slotMs / 2)));
    this.proposeTimeoutMs = opts.proposeTimeoutMs ?? Math.max(10_000, this.slotMs);
    this.maxBlockBytes = opts.maxBlockBytes ?? MAX_BLOCK_BYTES;
    this.beacon = new BeaconClient(opts.beaconUrl, { token: opts.token, timeoutMs: getTimeout });
    this.execution = new ExecutionEngineClient(opts.executionUrl, { timeoutMs: getTimeout, ...(opts.executionJwt ? { jwt: opts.executionJwt } : {}) });
    this.duties = new ProposerDutiesCache({
      genesis: opts.genesis,
      log: opts.log,
      fetch: async (epoch) => {
        const d = await this.b(this.beacon.proposerDuties(epoch));
        if (d.epoch !== epoch) throw this.beacon.badResponse(`GET /api/v1/validator/duties/proposer/${epoch}`, `it answered epoch ${d.epoch}`);
        return d;
      },
    });
    this.bridge = new BridgeDuty({ genesis: opts.genesis, key: opts.keys.mldsa, beacon: this.beacon, log: opts.log, metrics: this.metrics, index: () => this.index, clock: this.clock, timers: this.timers });
    this.stream = new BeaconEventStream({
      beaconUrl: this.beacon.baseUrl,
      log: opts.log,
      timers: this.timers,
      ...(opts.reconnectBackoffMs ? { minBackoffMs: opts.reconnectBackoffMs.min, maxBackoffMs: opts.reconnectBackoffMs.max } : {}),
      handlers: {
        newBlock: (e) => this.onNewBlock(e),
        head: (e) => this.onHead(e),
        bridgeBidRegistered: (e) => this.bridge.onRegistered(e),
        event: (type) => this.metrics.wsEvents.inc({ type }),
        connected: (reconnect) => {
          this.metrics.wsConnected.set(1);
          if (reconnect) this.metrics.wsReconnects.inc();
          // The beacon may just have come up (started together with this client, or restarted)
          // after this slot's proposal phase could not reach it: check the slot again now rather
          // than losing it.
          const slot = slotAt(this.genesis, this.clock());
          if (this.running && this.proposalChecked !== slot) this.enqueue(slot, 'propose');
        },
        disconnected: () => {
          this.metrics.wsConnected.set(0);
          this.duties.forgetHead();
        },
        malformed: () => this.metrics.wsMalformed.inc(),
      },
    });
  }

  /** True while the beacon event stream is connected (the head poll is then skipped). */
  get eventsConnected(): boolean {
    return this.stream.connected;
  }

  /** Registry index, once the beacon named it. */
  get validatorIndex(): number | undefined {
    return this.index;
  }

  /** `http://host:port` of the metrics server, when one runs. */
  get metricsUrl(): string | undefined {
    const a = this.metricsAddress;
    if (!a) return undefined;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /**
   * Builds the RANDAO chain, starts the metrics server, asks the beacon for this validator's
   * index (an unreachable beacon is logged and asked again each slot), starts the slot timer and
   * subscribes to the beacon's event stream (in the background).
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.randao ??= await RandaoKeeper.open(
      {
        genesis: this.genesis,
        keys: this.keys,
        execution: new ExecutionClient(this.opts.executionUrl, { timeoutMs: this.proposeTimeoutMs }),
        log: this.log,
        dataDir: this.opts.dataDir,
        onRemaining: (left) => this.metrics.randaoRemaining.set(left),
        onSubmitted: () => this.metrics.randaoRecommits.inc(),
        onSigned: () => this.metrics.signed('transaction'),
      },
      this.opts.randaoChain,
    );
    if (this.opts.metricsPort !== undefined) {
      const server = await serveMetrics(this.metrics, this.opts.metricsHost ?? '127.0.0.1', this.opts.metricsPort);
      this.server = server;
      this.metricsAddress = server.address() as AddressInfo;
    }
    this.running = true;
    await this.ensureIndex();
    const now = this.clock();
    this.cursor = { slot: slotAt(this.genesis, now), phase: 0 };
    this.log.info('validator client started', {
      address: this.keys.address,
      index: this.index ?? null,
      beacon: this.beacon.baseUrl,
      execution: this.execution.baseUrl,
      events: this.stream.url,
      slot: this.cursor.slot,
      metrics: this.metricsUrl ?? null,
    });
    this.schedule();
    this.stream.start();
    this.bridge.start();
  }

  /** Stops the timer and the event stream (socket and reconnection), waits for the phase in progress, closes the metrics server. */
  async stop(): Promise<void> {
    if (!this.running && !this.server) return;
    this.running = false;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.stream.stop();
    await this.bridge.stop();
    this.metrics.wsConnected.set(0);
    await this.idle();
    const server = this.server;
    this.server = undefined;
    this.metricsAddress = undefined;
    if (server) {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    }
    this.log.info('validator client stopped', {});
  }

  /** Resolves once no phase (nor bridge signing pass) is running or queued (tests use it after moving the clock). */
  async idle(): Promise<void> {
    for (;;) {
      const w = this.work;
      await w;
      await this.bridge.idle();
      if (w === this.work) return;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Timing

  /** Slot `slot`'s phase `phase` in Unix ms. */
  private phaseTime(slot: number, phase: number): number {
    const offset = PHASES[phase] === 'propose' ? 0 : PHASES[phase] === 'poll' ? Math.floor(this.slotMs / 6) : Math.floor(this.slotMs / 3);
    return slotStartMs(this.genesis, slot) + offset;
  }

  /** Arms the timer for the cursor's phase; a cursor left behind jumps to the current slot. */
  private schedule(): void {
    if (!this.running) return;
    const now = this.clock();
    const current = slotAt(this.genesis, now);
    if (this.cursor.slot < current) this.cursor = { slot: current, phase: 0 };
    const delay = Math.max(0, this.phaseTime(this.cursor.slot, this.cursor.phase) - now);
    this.timer = this.timers.setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    if (!this.running) return;
    const { slot, phase } = this.cursor;
    this.cursor = phase + 1 < PHASES.length ? { slot, phase: phase + 1 } : { slot: slot + 1, phase: 0 };
    this.enqueue(slot, PHASES[phase]!);
    this.schedule();
  }

  private enqueue(slot: number, phase: Phase): void {
    this.work = this.work.then(async () => {
      if (!this.running) return;
      const current = slotAt(this.genesis, this.clock());
      if (current > slot) {
        this.log.debug('phase skipped: its slot has passed', { slot, phase, current_slot: current });
        return;
      }
      // While the stream is up, new_block does the head poll's job the moment the block exists.
      if (phase === 'poll' && this.stream.connected) return;
      try {
        if (phase === 'propose') await this.proposePhase(slot);
        else if (phase === 'poll') await this.maybeAttest(slot, 'head-at-slot', 'head_poll');
        else await this.maybeAttest(slot, 'always', 'deadline');
        if (phase === 'attest') this.prefetchNextDuties(slot);
      } catch (err) {
        this.failure(`${phase} at slot ${slot}`, err);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Events

  /** Reacts to a block the beacon announced: duties of a new epoch, and an early attestation. */
  private onNewBlock(e: NewBlockEvent): void {
    if (!this.running) return;
    const current = slotAt(this.genesis, this.clock());
    const epoch = epochOfSlot(this.genesis, e.slot);
    if (epoch > this.eventEpoch && e.slot <= current) {
      this.eventEpoch = epoch;
      this.loadDuties(epoch);
    }
    // Only a block of the current slot makes the vote early; a late block of an earlier slot
    // changes nothing (the slot-timer path votes), and a block ahead of this clock waits for it.
    if (e.slot !== current || e.slot === 0) return;
    this.work = this.work.then(async () => {
      if (!this.running || slotAt(this.genesis, this.clock()) > e.slot) return;
      try {
        await this.maybeAttest(e.slot, 'head-at-slot', 'new_block');
      } catch (err) {
        this.failure(`attest on new_block at slot ${e.slot}`, err);
      }
    });
  }

  /**
   * Drops the cached proposer duties the new head's branch draws differently (another dependent
   * root) and loads them again, so the proposal phase finds this branch's duties; the check
   * before signing stays the guarantee (events can be missed), this only keeps the slot from
   * being lost to a stale "not mine".
   */
  private onHead(e: HeadEvent): void {
    if (!this.running) return;
    for (const epoch of this.duties.onHead({ root: e.block_hash, slot: e.slot, proposer_dependent_roots: e.proposer_dependent_roots })) {
      this.work = this.work.then(async () => {
        if (!this.running || this.duties.peek(epoch)) return;
        await this.duties.get(epoch).catch((err: Error) => this.log.debug('could not reload proposer duties after a head change; the proposal phase fetches them', { epoch, error: err.message }));
      });
    }
  }

  /**
   * Loads the proposer duties of `epoch` and `epoch + 1` that are not cached (best effort). At the
   * first block of `epoch` the next epoch's seed is fixed on this branch (it is the mix after the
   * last block of `epoch - 1`), so its duties are final from here on.
   */
  private loadDuties(epoch: number): void {
    if (this.index === undefined) return;
    for (const e of [epoch, epoch + 1]) {
      this.work = this.work.then(async () => {
        if (!this.running || this.duties.peek(e)) return;
        await this.duties.get(e).catch((err: Error) => this.log.debug('could not load proposer duties on a new epoch; the slot timer fetches them', { epoch: e, error: err.message }));
      });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Beacon bookkeeping

  /** Awaits a beacon call; the first success after an outage is logged. */
  private async b<T>(p: Promise<T>): Promise<T> {
    const v = await p;
    if (this.beaconDown) {
      this.beaconDown = false;
      this.log.info('beacon node reachable again', { beacon: this.beacon.baseUrl });
    }
    return v;
  }

  /** Logs a failed phase: an unreachable beacon once (then at debug), anything else as an error. */
  private failure(what: string, err: unknown): void {
    const e = err as Error;
    const fields = { during: what, code: err instanceof SvcError ? err.code : 'ERROR', error: e.message };
    // Execution failures never get here (a proposal goes on without its transactions).
    if (err instanceof BeaconClientError && err.transport) {
      if (this.beaconDown) this.log.debug('beacon node still unreachable', fields);
      else this.log.warn('beacon node unreachable: retrying at the next slot', fields);
      this.beaconDown = true;
      return;
    }
    this.log.error('validator duty failed', fields);
  }

  /** The registry index from the beacon (by address); undefined while it cannot say. */
  private async ensureIndex(): Promise<number | undefined> {
    if (this.index !== undefined) return this.index;
    try {
      const v = await this.b(this.beacon.validator(this.keys.address));
      if (v.address !== this.keys.address) throw this.beacon.badResponse(`GET /api/v1/validators/${this.keys.address}`, `it answered validator ${v.address}`);
      this.index = v.index;
      this.log.info('validator registered on the beacon', { index: v.index, address: v.address, active: v.active, stake: v.stake });
      if (!v.active) this.log.warn('validator is not active: the beacon will give it no duties', { index: v.index });
      this.checkRandao(v.randao_last);
      return v.index;
    } catch (err) {
      if (err instanceof BeaconClientError && err.code === 'NOT_FOUND') {
        const problem = `not registered: ${err.message}`;
        if (problem !== this.lastIndexProblem) this.log.warn('validator is not in the beacon registry (deposit not yet included?); asking again each slot', { address: this.keys.address });
        this.lastIndexProblem = problem;
        return undefined;
      }
      this.failure('looking up the validator index', err);
      return undefined;
    }
  }

  /** Says early when the beacon's RANDAO value is on none of this key's chains; re-commits when the chain runs low. */
  private checkRandao(randaoLast: string | null): void {
    const last = randaoLast === null ? this.randao!.firstCommitment() : parseHex(randaoLast, 'randao_last', 32);
    if (this.randao!.remaining(last) === undefined) {
      this.log.error('the beacon\'s RANDAO value for this validator is on none of this key\'s chains: proposals will fail (wrong keystore, or a lost randao-generation.json?)', { randao_last: randaoLast, generation: this.randao!.generation });
      return;
    }
    this.recommitCheck(last);
  }

  /** Runs the re-commitment check in the background: it talks to execution and must not hold up the slot's duties. */
  private recommitCheck(last: Uint8Array): void {
    void this.randao!.check(last, slotAt(this.genesis, this.clock()));
  }

  /**
   * The head to build the block of `slot` on, with this slot's duty drawn on the head's branch:
   * cached duties whose dependent root is not the head's were drawn on another branch (the head
   * moved since they were fetched) and are fetched again. Undefined when there is nothing to
   * propose (head already at the slot, not this validator's slot on this branch, a head that
   * keeps moving).
   */
  private async headAndDuty(slot: number, epoch: number, index: number): Promise<{ head: HeadView; duty: ProposerDutyView } | undefined> {
    for (let attempt = 1; ; attempt++) {
      const head = await this.b(this.beacon.head());
      if (head.slot >= slot) {
        this.log.warn('not proposing: the head is already at or after this slot', { slot, head_slot: head.slot, head: head.root });
        return undefined;
      }
      const want = dependentRootOn(head, epoch, this.genesis);
      if (want === undefined) throw this.beacon.badResponse('GET /api/v1/beacon/head', `no proposer dependent root for epoch ${epoch} at head slot ${head.slot}`);
      const cached = this.duties.peek(epoch);
      const entry = await this.duties.get(epoch);
      if (entry.dependentRoot === want) {
        const duty = entry.duties.find((d) => d.slot === slot);
        if (duty && duty.validator_index === index && duty.address === this.keys.address) return { head, duty };
        this.log.info('not proposing: on the head\'s branch this slot is not this validator\'s', { slot, head: head.root, dependent_root: want, proposer: duty?.validator_index ?? null });
        return undefined;
      }
      if (attempt === MAX_PROPOSAL_ATTEMPTS) {
        this.log.warn('not proposing: the head keeps moving between branches with different proposer duties', { slot, head: head.root, dependent_root: want, duties_dependent_root: entry.dependentRoot });
        return undefined;
      }
      // Fetched just now, the duties are from a head newer than `head`: read the head again.
      if (entry === cached) {
        this.log.info('proposer duties were drawn on another branch than the head\'s: fetching them again', { slot, epoch, head: head.root, dependent_root: want, duties_dependent_root: entry.dependentRoot });
        this.duties.drop(epoch);
      }
    }
  }

  /** At the attestation phase of an epoch's last slot, loads the next epoch's duties (best effort). */
  private prefetchNextDuties(slot: number): void {
    const spe = this.genesis.config.slots_per_epoch;
    if ((slot + 1) % spe !== 0 || this.index === undefined) return;
    const next = epochOfSlot(this.genesis, slot) + 1;
    if (this.duties.peek(next)) return;
    this.work = this.work.then(() =>
      this.duties.get(next).then(
        () => undefined,
        (err: Error) => this.log.debug('could not prefetch proposer duties; will fetch at the epoch start', { epoch: next, error: err.message }),
      ),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Proposals

  private async proposePhase(slot: number): Promise<void> {
    const index = await this.ensureIndex();
    if (index === undefined || slot === 0) return;
    const epoch = epochOfSlot(this.genesis, slot);
    const duty = (await this.duties.get(epoch)).duties.find((d) => d.slot === slot);
    this.proposalChecked = slot;
    if (!duty || duty.validator_index !== index) return;
    if (duty.address !== this.keys.address) {
      this.log.error('proposer duty names this index with another address: not proposing', { slot, index, duty_address: duty.address, address: this.keys.address });
      return;
    }
    await this.propose(slot, epoch, index);
  }

  private async propose(slot: number, epoch: number, index: number): Promise<void> {
    const chainId = this.genesis.chain_id;
    let planned: { head: HeadView; duty: ProposerDutyView } | undefined;
    let attestations: Attestation[] = [];
    let slashings: SlashingEvidence[] = [];
    let v: ValidatorView | undefined;
    // The beacon answers the attestations and randao_last below on its head of the moment: if the
    // head moved to another branch meanwhile they may not fit the parent, so plan again.
    for (let attempt = 1; ; attempt++) {
      planned = await this.headAndDuty(slot, epoch, index);
      if (!planned) return;
      ({ attestations, slashings } = await this.blockAttestations(slot));
      v = await this.b(this.beacon.validator(index));
      if (v.address !== this.keys.address) throw this.beacon.badResponse(`GET /api/v1/validators/${index}`, `it answered address ${v.address}, not ${this.keys.address}`);
      const now = await this.b(this.beacon.head());
      if (now.root === planned.head.root) break;
      if (attempt === MAX_PROPOSAL_ATTEMPTS) {
        this.log.warn('not proposing: the head keeps moving while the block is assembled', { slot, head: now.root });
        return;
      }
      this.log.info('the head moved while the block was assembled: planning it again', { slot, was: planned.head.root, head: now.root });
    }
    const { head, duty } = planned;
    // Execution lets a lone validator include its own re-commitment; an epoch whose every slot is
    // this validator's is taken as that (if wrong, the re-commitment fails and is sent again).
    const alone = (await this.duties.get(epoch)).duties.every((d) => d.validator_index === index);
    // SSZ sizes: attestations are fixed-size; each evidence is a byte list behind a 4-byte offset.
    const reserved = attestations.length * AttestationSsz.fixedSize! + slashings.reduce((n, e) => n + encodeEvidence(e).length + 4, 0);
    const { txs, envelopes } = await this.pendingTransactions(slot, reserved, alone);
    const last = v.randao_last === null ? this.randao!.firstCommitment() : parseHex(v.randao_last, 'randao_last', 32);
    let randaoReveal: Uint8Array;
    try {
      randaoReveal = this.randao!.next(last);
    } catch (err) {
      if (!(err instanceof RandaoChainError) || err.code !== 'RANDAO_CHAIN_EXHAUSTED') throw err;
      // An invalid reveal would only be refused: skip the slot until the new commitment lands.
      this.log.warn('not proposing: RANDAO chain exhausted and the re-commitment has not taken effect yet', { slot, generation: this.randao!.generation, randao_last: v.randao_last });
      this.recommitCheck(last);
      return;
    }
    const vrfSeed = parseHex(duty.vrf_seed, 'vrf_seed', 32);
    // The parent's post-state root, which execution checks the header against (STATE_ROOT_MISMATCH).
    let stateRoot: Uint8Array;
    try {
      stateRoot = parseHex(await this.execution.stateRoot(head.root), 'state_root', 32);
    } catch (err) {
      this.log.warn('not proposing: execution cannot give the parent\'s state root', { slot, parent: head.root, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return;
    }
    const vrfProof = vrfProve(this.keys.mldsa, vrfSeed, chainId);
    this.metrics.signed('vrf');
    const header: BlockHeader = {
      index: head.index + 1,
      timestampMs: slotStartMs(this.genesis, slot),
      parentHash: parseHex(head.root, 'head root', 32),
      // A transaction's hash is SHA3 of its envelope: execution's envelopes are hashed as they are.
      merkleRoot: blockMerkleRoot(envelopes.map((e) => sha3(e)), attestations, slashings),
      validatorId: parseHex(this.keys.address, 'address', 20),
      vrfProof,
      vrfSeed,
      randaoReveal,
      stateRoot,
    };
    const signingRoot = headerSigningHash(signedHeaderOf(header, chainId, index));
    try {
      // Durable before the signature exists: a crash after this line cannot forget the block.
      await this.sp.checkAndRecordBlock(this.pubkeyHex, slot, signingRoot);
    } catch (err) {
      if (!(err instanceof SlashingProtectionError)) throw err;
      this.metrics.slashingRefusals.inc();
      this.log.warn('slashing protection refused to sign a block', { slot, rule: err.rule, reason: err.message, parent: head.root, signing_root: toHex(signingRoot) });
      return;
    }
    const block = signBlock(header, txs, this.keys.mldsa, chainId, index, attestations, slashings);
    this.metrics.signed('block');
    this.metrics.canonicalBytes.set(canonicalHeaderBytes(signedHeaderOf(header, chainId, index), block.signature).length);
    let res;
    try {
      // Execution's envelopes are the transactions' encodings: the block is not encoded twice.
      res = await this.b(this.beacon.proposeBlock(encodeBlock(block, envelopes), { timeoutMs: this.proposeTimeoutMs }));
    } catch (err) {
      if (!(err instanceof BeaconClientError) || err.transport) throw err;
      if (STALE_DUTY_CODES.has(err.code)) this.duties.drop(epoch);
      const hint = err.code === 'UNAUTHORIZED' ? ' (check --token-file: it must hold the token the beacon was started with)' : '';
      this.log.warn(`the beacon refused the block${hint}`, { slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      return;
    }
    this.metrics.blocksProposed.inc();
    this.recommitCheck(randaoReveal);
    this.log.info('block proposed', { slot, number: header.index, block_hash: res.block_hash, parent: head.root, transactions: txs.length, attestations: attestations.length, slashings: slashings.length, already_known: res.already_known ?? false });
    // The validator's own block is the slot's block: no need to wait for the head poll.
    await this.maybeAttest(slot, 'always', 'own_block');
  }

  /**
   * The beacon's includable attestations and pending slashing evidence for `slot`; none if it
   * cannot say (a block without them is still a valid block, and they stay includable in the next one).
   */
  private async blockAttestations(slot: number): Promise<{ attestations: Attestation[]; slashings: SlashingEvidence[] }> {
    try {
      const r = await this.b(this.beacon.blockAttestations(slot));
      return { attestations: r.attestations, slashings: r.slashings };
    } catch (err) {
      if (err instanceof BeaconClientError && err.transport) throw err;
      this.log.warn('no attestations from the beacon: proposing without any', { slot, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return { attestations: [], slashings: [] };
    }
  }

  /**
   * Execution's pending transactions in build order, decoded, with their envelopes, within what
   * `reservedBytes` of attestations and evidence leave of the block's SSZ size; none if execution cannot say.
   */
  private async pendingTransactions(slot: number, reservedBytes = 0, packOwnRecommit = false): Promise<{ txs: Transaction[]; envelopes: Uint8Array[] }> {
    let raw;
    try {
      raw = await this.execution.pendingTransactions();
    } catch (err) {
      this.log.warn('no transactions from execution: proposing an empty block', { slot, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return { txs: [], envelopes: [] };
    }
    // A later transaction of the same sender may depend on the bad one's nonce: the client stopped there.
    if (raw.malformed) this.log.error('execution sent a transaction that does not parse: packing only the ones before it', { slot, position: raw.malformed.position, error: raw.malformed.message });
    const txs: Transaction[] = [];
    const envelopes: Uint8Array[] = [];
    // The block's fixed part (header, signature, list offsets), then each envelope behind its 4-byte offset.
    let bytes = BlockSsz.minSize + reservedBytes;
    let heldBack = false;
    for (let i = 0; i < raw.transactions.length && txs.length < MAX_BLOCK_TXS; i++) {
      const tx = raw.transactions[i]!;
      const envelope = raw.envelopes[i]!;
      bytes += envelope.length + 4;
      if (bytes > this.maxBlockBytes) {
        this.log.warn('block size cap reached: leaving the remaining transactions in the pool', { slot, packed: txs.length, offered: raw.count });
        break;
      }
      // Execution fails a validator's re-commitment in its own block unless it is the only
      // active validator (core/consensus/recommit.ts): it waits for another proposer, and so do
      // this sender's later nonces.
      if ((heldBack || (isRecommit(tx) && !packOwnRecommit)) && toHex(txSender(tx)) === this.keys.address) {
        heldBack = true;
        continue;
      }
      txs.push(tx);
      envelopes.push(envelope);
    }
    return { txs, envelopes };
  }

  // -------------------------------------------------------------------------------------------
  // Attestations

  /** The slot of `epoch` at which this validator attests (it may attest later in the epoch). */
  attestationSlot(epoch: number, index: number): number {
    const spe = this.genesis.config.slots_per_epoch;
    return epoch * spe + (index % spe);
  }

  private async maybeAttest(slot: number, when: 'head-at-slot' | 'always', trigger: AttestTrigger): Promise<void> {
    const index = this.index;
    if (index === undefined) return;
    const epoch = epochOfSlot(this.genesis, slot);
    if (this.pendingAtt && this.pendingAtt.epoch < epoch) {
      this.log.warn('attestation never delivered: its epoch is over', { slot: this.pendingAtt.slot, epoch: this.pendingAtt.epoch });
      this.pendingAtt = undefined;
    }
    if (this.attestedEpoch >= epoch || slot < this.attestationSlot(epoch, index)) return;
    if (this.pendingAtt) {
      // Signed and recorded already: send the same bytes again, never a second vote.
      await this.sendAttestation(this.pendingAtt, trigger);
      return;
    }
    if (when === 'head-at-slot') {
      const head = await this.b(this.beacon.head());
      if (head.slot < slot) return;
    }
    const what = `GET /api/v1/validator/attestation_data?slot=${slot}`;
    const d = await this.b(this.beacon.attestationData(slot));
    if (d.slot !== slot) throw this.beacon.badResponse(what, `it answered slot ${d.slot}`);
    if (d.target.epoch !== epoch) throw this.beacon.badResponse(what, `target epoch ${d.target.epoch} is not the slot's epoch ${epoch}`);
    const data: AttestationData = {
      slot,
      beaconBlockRoot: parseHex(d.beacon_block_root, 'beacon_block_root', 32),
      source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source.root', 32) },
      target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target.root', 32) },
    };
    const chainId = this.genesis.chain_id;
    const signingRoot = attestationSigningHash(index, data, chainId);
    try {
      await this.sp.checkAndRecordAttestation(this.pubkeyHex, data.source.epoch, data.target.epoch, signingRoot);
    } catch (err) {
      if (!(err instanceof SlashingProtectionError)) throw err;
      this.metrics.slashingRefusals.inc();
      this.attestedEpoch = epoch;
      this.log.warn('slashing protection refused to sign an attestation', { slot, source: d.source.epoch, target: d.target.epoch, rule: err.rule, reason: err.message });
      return;
    }
    const att = signAttestation(index, data, this.keys.mldsa, chainId);
    this.metrics.signed('attestation');
    this.pendingAtt = { epoch, slot, json: attestationToJson(att) };
    await this.sendAttestation(this.pendingAtt, trigger);
  }

  private async sendAttestation(p: PendingAttestation, trigger: AttestTrigger): Promise<void> {
    let res;
    try {
      res = await this.b(this.beacon.submitAttestation(p.json));
    } catch (err) {
      if (!(err instanceof BeaconClientError) || err.transport) throw err; // kept pending: re-sent next phase
      // A beacon whose clock runs behind may find the slot in its future: the same vote later is fine.
      if (err.code === 'FUTURE_SLOT') {
        this.log.warn('the beacon refused the attestation as early: sending it again next phase', { slot: p.slot, reason: err.message });
        return;
      }
      this.pendingAtt = undefined;
      this.attestedEpoch = Math.max(this.attestedEpoch, p.epoch);
      const hint = err.code === 'UNAUTHORIZED' ? ' (check --token-file: it must hold the token the beacon was started with)' : '';
      this.log.warn(`the beacon refused the attestation${hint}`, { slot: p.slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      return;
    }
    this.pendingAtt = undefined;
    this.attestedEpoch = Math.max(this.attestedEpoch, p.epoch);
    this.metrics.attestations.inc();
    this.log.info('attestation sent', { slot: p.slot, epoch: p.epoch, head: p.json.data.beacon_block_root, source: p.json.data.source.epoch, target: p.json.data.target.epoch, status: res.status, trigger });
  }
}
