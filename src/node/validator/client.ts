/**
 * The validator client: one process holding one or many validator keys (as Lighthouse, Lodestar
 * and Teku run them), driven by a timer aligned to slot starts, talking to the beacon REST API
 * through one keep-alive BeaconClient, subscribed to the beacon's `/ws` event stream once
 * (`event-stream.ts`); the beacon builds its blocks, it signs them. This file is the process
 * half (clock, phases, events, proposer duties, metrics server); `validator-key.ts` is the per-key
 * half (index, RANDAO keeper, attestation state) and `proposal.ts` signs the blocks.
 *
 * Per slot s (times from the slot start; a third of a slot is `slot_seconds / 3`):
 * - 0: **propose** if the epoch's proposer duties (one fetch per epoch for the whole chain, cached
 *   with their dependent root) name one of this process's keys for s. Proposals run on their own
 *   lane: attestations never queue in front of them. The proposer's own accepted block is the
 *   slot's block, so every key due at s attests right away. Always timer-driven: a proposal never
 *   waits for an event.
 * - 1/6: **head poll**: attest early when the head already holds a block for s. Skipped while
 *   the event stream is connected: `new_block` does the same job as soon as the block exists.
 * - 1/3: **attest** (whatever the head is).
 * An attestation round asks the beacon once for the head and once for the slot's attestation data,
 * whatever the number of keys due, then hands each due key its vote on the key's own lane (so one
 * slow key holds up only itself).
 *
 * Events: a `new_block` for the current slot triggers the head check and early attestation at
 * once (instead of at 1/6); the first block of a new epoch loads that epoch's and the next
 * epoch's proposer duties when they are not cached yet; a `head` on a branch with other
 * dependent roots reloads the cached duties it invalidates (so a reorg does not cost the slot).
 * When the stream is down (or the beacon has none) the client polls as above and the stream
 * reconnects with capped exponential backoff; `service_validator_beacon_ws_connected` says which
 * mode it is in.
 *
 * RANDAO: each key's reveals come from its RandaoKeeper (randao/recommit.ts). Chains are restored
 * from checkpoints in the data directory or built after start, one key after another, in a worker
 * thread (randao/builder.ts; a proposal needing one that is not built yet asks for it first), so
 * start-up does not grow with the keys.
 *
 * Failures never stop the timer: an unreachable beacon is logged (once, then at debug until it
 * is back) and the next phase or slot tries again. A phase whose slot has passed when its turn
 * comes is skipped.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SvcError } from '../../core/errors.js';
import { ValidatorError } from './errors.js';
import { epochOfSlot, type Genesis, slotAt, slotStartMs } from '../../core/genesis/genesis.js';
import { BeaconClient, BeaconClientError } from '../../client/beacon.js';
import { BEACON_SYNCING } from '../../api/beacon.js';
import type { Logger } from '../../util/log.js';
import type { HeadEvent, NewBlockEvent } from '../../api/events.js';
import { ProposerDutiesCache } from './duties.js';
import { BeaconEventStream } from '../../client/event-stream.js';
import { BridgeDuty } from './bridge-duty.js';
import { type AcceptedCounterpart, RegistrationSigning } from './bridge-registration-duty.js';
import { BridgeBeaconClient } from '../../client/bridge.js';
import type { RandaoChain } from './randao/chain.js';
import { KeySet } from './key-set.js';
import type { SlashingProtectionDb } from './slashing/protection.js';
import { serveMetrics, ValidatorMetrics } from './metrics.js';
import { realTimers, type Timers } from '../../util/timers.js';
import { Proposer } from './proposal.js';
import { AttestationRounds } from './attestation-rounds.js';
import type { KeyContext, ValidatorKeys } from './validator-key.js';

export type { Timers } from '../../util/timers.js';

/** Pace of the first-contact attempts while the beacon has never answered (armFirstContact). */
const FIRST_CONTACT_RETRY_MS = 200;
export type { ValidatorKeys } from './validator-key.js';

export interface ValidatorClientOptions {
  genesis: Genesis;
  /** One key, or every key this process runs (distinct addresses). */
  keys: ValidatorKeys | readonly ValidatorKeys[];
  /** The beacon, the client's only peer: blocks, duties and the RANDAO re-commitment relay. */
  beaconUrl: string;
  /** Bearer token for the beacon's validator POSTs. */
  token: string;
  /** Opened by the caller, who also closes it after `stop()`; one database holds every key. */
  slashingDb: SlashingProtectionDb;
  log: Logger;
  /** Unix ms (default Date.now). */
  clock?: () => number;
  timers?: Timers;
  /** Serve GET /metrics on this port (0 = an ephemeral port); absent = no metrics server. */
  metricsPort?: number;
  /** Interface of the metrics server (default 127.0.0.1). */
  metricsHost?: string;
  /** Deadline of GET requests (default: half a slot, within 1 to 10 s). */
  requestTimeoutMs?: number;
  /** Deadline of the block template and the block POST, for both of which the beacon waits on execution (default: max(slot, 10 s)). */
  proposeTimeoutMs?: number;
  /** Chains already built (tests): each is used for the key whose seed built it, matched by `keys` order. */
  randaoChain?: RandaoChain | readonly (RandaoChain | undefined)[];
  /** Validator data directory: where RANDAO generations and chain checkpoints are kept (absent: memory). */
  dataDir?: string;
  /** Reconnection backoff of the `/ws` subscription (default 250 ms doubling to 5 s, jittered). */
  reconnectBackoffMs?: { min: number; max: number };
  /** Counterparts whose registration requests this process signs (`--bridge-accept-counterparts`); absent: none. */
  bridgePolicy?: readonly AcceptedCounterpart[];
}

const PHASES = ['propose', 'poll', 'attest'] as const;
type Phase = (typeof PHASES)[number];

export class ValidatorClient {
  readonly metrics = new ValidatorMetrics();
  readonly beacon: BeaconClient;
  /** Signs this chain's bridge BIDs with every key (on `bridge_bid_registered`, and once per epoch). */
  readonly bridge: BridgeDuty;
  private readonly genesis: Genesis;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly timers: Timers;
  private readonly slotMs: number;
  private readonly keyList: ValidatorKeys[];
  private readonly set: KeySet;
  private readonly duties: ProposerDutiesCache;
  private readonly proposer: Proposer;
  private cursor = { slot: 0, phase: 0 };
  /** Last slot whose proposer duty was checked against the beacon (so a reconnect re-checks only a missed one). */
  private proposalChecked = -1;
  private timer: unknown;
  /** The next first-contact attempt (armFirstContact), while one is waiting. */
  private contactTimer: unknown;
  /** The first-contact attempt in progress (stop waits for it). */
  private contact: Promise<void> = Promise.resolve();
  private running = false;
  /** The proposal lane (and duty loading), one phase at a time. */
  private work: Promise<void> = Promise.resolve();
  private readonly rounds: AttestationRounds;
  private beaconDown = false;
  private server: Server | undefined;
  private metricsAddress: AddressInfo | undefined;
  private readonly stream: BeaconEventStream;
  /** Highest epoch a `new_block` event has been seen in (duties are refreshed once per epoch). */
  private eventEpoch = -1;

  constructor(private readonly opts: ValidatorClientOptions) {
    this.genesis = opts.genesis;
    this.log = opts.log;
    this.clock = opts.clock ?? Date.now;
    this.timers = opts.timers ?? realTimers;
    this.keyList = Array.isArray(opts.keys) ? [...(opts.keys as readonly ValidatorKeys[])] : [opts.keys as ValidatorKeys];
    if (this.keyList.length === 0) throw new ValidatorError('NO_KEYS', 'a validator client needs at least one key');
    const addresses = new Set(this.keyList.map((k) => k.address));
    if (addresses.size !== this.keyList.length) throw new ValidatorError('DUPLICATE_KEY', 'the same validator key was given twice');
    this.slotMs = opts.genesis.config.slot_seconds * 1000;
    const getTimeout = opts.requestTimeoutMs ?? Math.min(10_000, Math.max(1_000, Math.floor(this.slotMs / 2)));
    const proposeTimeoutMs = opts.proposeTimeoutMs ?? Math.max(10_000, this.slotMs);
    this.beacon = new BeaconClient(opts.beaconUrl, { token: opts.token, timeoutMs: getTimeout });
    const call = <T>(p: Promise<T>) => this.beaconCall(p);
    this.duties = new ProposerDutiesCache({
      genesis: opts.genesis,
      log: opts.log,
      fetch: async (epoch) => {
        const d = await this.beaconCall(this.beacon.proposerDuties(epoch));
        if (d.epoch !== epoch) throw this.beacon.badResponse(`GET /api/v1/validator/duties/proposer/${epoch}`, `it answered epoch ${d.epoch}`);
        return d;
      },
    });
    const keyCtx: KeyContext = { genesis: opts.genesis, beacon: this.beacon, sp: opts.slashingDb, metrics: this.metrics, clock: this.clock, call, failure: (what, err) => this.failure(what, err) };
    this.set = new KeySet({
      genesis: opts.genesis,
      keys: this.keyList,
      keyCtx,
      log: opts.log,
      metrics: this.metrics,
      beacon: this.beacon,
      call,
      failure: (what, err) => this.failure(what, err),
      recommitTimeoutMs: proposeTimeoutMs,
      dataDir: opts.dataDir,
      randaoChain: opts.randaoChain,
      running: () => this.running,
    });
    this.rounds = new AttestationRounds({
      genesis: opts.genesis,
      beacon: this.beacon,
      clock: this.clock,
      call,
      failure: (what, err) => this.failure(what, err),
      keys: () => this.set.keys,
      running: () => this.running,
    });
    this.proposer = new Proposer({
      genesis: opts.genesis,
      beacon: this.beacon,
      sp: opts.slashingDb,
      duties: this.duties,
      metrics: this.metrics,
      log: opts.log,
      call,
      proposeTimeoutMs,
    });
    this.bridge = new BridgeDuty({
      genesis: opts.genesis,
      beacon: this.beacon,
      log: opts.log,
      metrics: this.metrics,
      signers: () => this.set.keys.flatMap((k) => (k.index === undefined ? [] : [{ index: k.index, key: k.keys.mldsa }])),
      clock: this.clock,
      timers: this.timers,
      ...(opts.bridgePolicy
        ? { registrations: new RegistrationSigning({ genesis: opts.genesis, policy: opts.bridgePolicy, beacon: new BridgeBeaconClient(this.beacon.baseUrl), log: opts.log, metrics: this.metrics }) }
        : {}),
    });
    this.stream = new BeaconEventStream({
      beaconUrl: this.beacon.baseUrl,
      log: opts.log,
      timers: this.timers,
      ...(opts.reconnectBackoffMs ? { minBackoffMs: opts.reconnectBackoffMs.min, maxBackoffMs: opts.reconnectBackoffMs.max } : {}),
      handlers: {
        new_block: (e) => this.onNewBlock(e),
        head: (e) => this.onHead(e),
        bridge_bid_registered: (e) => this.bridge.onRegistered(e),
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

  /** Registry index of the first key, once the beacon named it. */
  get validatorIndex(): number | undefined {
    return this.set.keys[0]?.index;
  }

  /** Every key's address and registry index (undefined until the beacon named it), in the order given. */
  get validators(): Array<{ address: string; index: number | undefined }> {
    return this.set.keys.map((k) => ({ address: k.address, index: k.index }));
  }

  /** `http://host:port` of the metrics server, when one runs. */
  get metricsUrl(): string | undefined {
    const a = this.metricsAddress;
    if (!a) return undefined;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /**
   * Opens each key's RANDAO keeper (chains restored or built in the background), starts the
   * metrics server, asks the beacon for every key's index (an unreachable beacon is logged and
   * asked again each slot), starts the slot timer and subscribes to the event stream.
   */
  async start(): Promise<void> {
    if (this.running) return;
    if (this.set.keys.length === 0) await this.set.open();
    if (this.opts.metricsPort !== undefined) {
      const server = await serveMetrics(this.metrics, this.opts.metricsHost ?? '127.0.0.1', this.opts.metricsPort);
      this.server = server;
      this.metricsAddress = server.address() as AddressInfo;
    }
    this.running = true;
    this.set.buildChains(await this.set.lookUpIndices());
    this.set.countKeys();
    if (!this.set.keys.some((k) => k.index !== undefined) && this.beaconDown) this.armFirstContact();
    const now = this.clock();
    this.cursor = { slot: slotAt(this.genesis, now), phase: 0 };
    const one = this.set.keys.length === 1 ? this.set.keys[0]! : undefined;
    this.log.info('validator client started', {
      ...(one ? { address: one.address, index: one.index ?? null } : { keys: this.set.keys.length, registered: this.set.keys.filter((k) => k.index !== undefined).length }),
      beacon: this.beacon.baseUrl,
      events: this.stream.url,
      slot: this.cursor.slot,
      metrics: this.metricsUrl ?? null,
    });
    this.schedule();
    this.stream.start();
    this.bridge.start();
  }

  /** Stops the timer and the event stream (socket and reconnection), waits for the work in progress, closes the metrics server. */
  async stop(): Promise<void> {
    if (!this.running && !this.server) return;
    this.running = false;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.contactTimer !== undefined) this.timers.clearTimeout(this.contactTimer);
    this.contactTimer = undefined;
    await this.contact;
    await this.stream.stop();
    await this.bridge.stop();
    this.metrics.wsConnected.set(0);
    await this.idle();
    await this.set.close();
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

  /** Resolves once no phase, attestation, first-contact attempt nor bridge signing pass is running or queued (tests use it after moving the clock). */
  async idle(): Promise<void> {
    for (;;) {
      const w = this.work;
      const a = this.rounds.lane;
      await this.contact;
      await w;
      await a;
      for (const k of this.set.keys) await k.idle();
      await this.bridge.idle();
      if (w === this.work && a === this.rounds.lane) return;
    }
  }

  /** Resolves once every key's RANDAO chain is restored or built (the background pass after start). */
  randaoReady(): Promise<void> {
    return this.set.chainsReady;
  }

  /**
   * Until the beacon first answers (a devnet starts it together with this client), asks it
   * again every FIRST_CONTACT_RETRY_MS instead of at the next slot phase, so the first duties
   * wait for the beacon by a fraction of a second rather than by up to a third of a slot, and
   * the event stream connects at once rather than at its next backoff step. Then checks the
   * current slot's proposal, which the slot timer may already have found the beacon down for.
   */
  private armFirstContact(): void {
    this.contactTimer = this.timers.setTimeout(() => {
      this.contactTimer = undefined;
      this.contact = this.firstContact();
    }, FIRST_CONTACT_RETRY_MS);
  }

  private async firstContact(): Promise<void> {
    if (!this.running) return;
    const named = await this.set.lookUpIndices();
    if (!this.running) return;
    if (!this.set.keys.some((k) => k.index !== undefined)) {
      // Still unreachable: again soon. Reachable but none of the keys registered yet (deposit
      // pending): the slot phases ask, as they would at any other time.
      if (this.beaconDown) this.armFirstContact();
      return;
    }
    this.set.countKeys();
    this.set.checkAfterBuild(named);
    this.stream.retryNow();
    const slot = slotAt(this.genesis, this.clock());
    if (this.proposalChecked !== slot) this.enqueue(slot, 'propose');
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
    if (phase !== 'propose') {
      // While the stream is up, new_block does the head poll's job the moment the block exists.
      if (phase === 'poll' && this.stream.connected) return;
      this.rounds.run(slot, phase === 'poll' ? 'head-at-slot' : 'always', phase === 'poll' ? 'head_poll' : 'deadline');
      if (phase === 'attest') {
        this.set.lookUpMissingIndices();
        this.prefetchNextDuties(slot);
      }
      return;
    }
    this.work = this.work.then(async () => {
      if (!this.running) return;
      const current = slotAt(this.genesis, this.clock());
      if (current > slot) {
        this.log.debug('phase skipped: its slot has passed', { slot, phase, current_slot: current });
        return;
      }
      // Queued twice (the slot timer, and the beacon coming up): the first run did the slot.
      if (this.proposalChecked === slot) return;
      try {
        await this.proposePhase(slot);
      } catch (err) {
        this.failure(`${phase} at slot ${slot}`, err);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Proposals

  private async proposePhase(slot: number): Promise<void> {
    // Until the beacon knows one of the keys there is nothing to propose for (nor duties to ask).
    if (!this.set.keys.some((k) => k.index !== undefined)) {
      this.set.checkAfterBuild(await this.set.lookUpIndices());
      if (!this.set.keys.some((k) => k.index !== undefined)) return;
      this.set.countKeys();
    }
    if (slot === 0) return;
    const epoch = epochOfSlot(this.genesis, slot);
    const duty = (await this.duties.get(epoch)).duties.find((d) => d.slot === slot);
    this.proposalChecked = slot;
    if (!duty) return;
    const key = this.set.byAddress.get(duty.address);
    if (!key) return;
    const index = await key.ensureIndex();
    if (index === undefined) return;
    if (duty.validator_index !== index) {
      key.log.error('proposer duty names this address with another index: not proposing', { slot, index, duty_index: duty.validator_index, address: key.address });
      return;
    }
    if (!(await this.proposer.propose(key, slot, epoch, index))) return;
    this.set.countKeys();
    // The proposer's own block is the slot's block: every key due at it can vote now.
    this.rounds.run(slot, 'always', 'own_block');
  }

  /** At the attestation phase of an epoch's last slot, loads the next epoch's duties (best effort). */
  private prefetchNextDuties(slot: number): void {
    const spe = this.genesis.config.slots_per_epoch;
    if ((slot + 1) % spe !== 0) return;
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
    this.rounds.run(e.slot, 'head-at-slot', 'new_block');
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
  private async beaconCall<T>(p: Promise<T>): Promise<T> {
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
    if (err instanceof BeaconClientError && err.code === BEACON_SYNCING) {
      // Its head is a branch the network finalised against: nothing is signed until it has synced.
      this.log.info('duty skipped: the beacon is syncing the network\'s finalised chain', fields);
      return;
    }
    this.log.error('validator duty failed', fields);
  }
}
