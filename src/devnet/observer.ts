/**
 * Watches a running devnet through its public interfaces only (beacon REST and `/ws`, execution
 * REST) and keeps a DevnetView for the dashboard, plus the stream of devnet events (block,
 * finalized, error) that `svc devnet up --json` prints as NDJSON.
 */
import { EventEmitter } from 'node:events';
import { BeaconEventStream } from '../client/event-stream.js';
import { ExecutionClient } from '../client/execution.js';
import type { FinalizedCheckpointEvent, NewAttestationEvent, NewBlockEvent } from '../api/events.js';
import { silentLogger } from '../util/log.js';
import type { DevnetManifest, ManifestNode } from './manifest.js';
import { type NodeProbe, probeNode } from './probe.js';
import type { DevnetView, EventLine, NodeView, ProcessView } from './view.js';

/** One devnet event, as printed on an NDJSON line (`event` first). */
export type DevnetEvent =
  | { event: 'block'; time: string; slot: number; hash: string; proposer: string; transactions: number }
  | { event: 'finalized'; time: string; epoch: number; root: string }
  | { event: 'error'; time: string; process?: string; message: string; log?: string };

/** Events an Observer emits. */
export interface ObserverEvents {
  /** The view changed (redraw). */
  change: [];
  event: [DevnetEvent];
}

const EVENTS_KEPT = 50;
/** Deadline of each poll request. */
const POLL_TIMEOUT_MS = 2_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
/** Retry pace until the first connection: the beacon is starting, and its first blocks must not be missed. */
const FIRST_CONNECT_RETRY_MS = 100;
/** No jitter: one observer reconnecting in lockstep with nobody (the backoff's factor is exactly 1). */
const NO_JITTER = (): number => 0.5;

/** Keeps a live view of a devnet described by its manifest. */
export class Observer extends EventEmitter<ObserverEvents> {
  private view: DevnetView;
  private readonly processesOf: () => ProcessView[];
  private readonly execution: ExecutionClient;
  private readonly byAddress = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stream: BeaconEventStream;
  private stopped = false;
  private polling = false;
  private lastBalancesSlot = -1;
  private lastFinalized = -1;

  constructor(
    private readonly manifest: DevnetManifest,
    processes: () => ProcessView[],
    /**
     * Read every validator's balance for the view (the dashboard shows them). NDJSON output has
     * no use for them, and 64 balance requests a slot cost the supervisor and execution CPU that
     * a starting devnet's processes need.
     */
    private readonly readBalances = true,
  ) {
    super();
    this.processesOf = processes;
    this.execution = new ExecutionClient(manifest.endpoints.execution, { timeoutMs: POLL_TIMEOUT_MS });
    manifest.validators.forEach((v) => this.byAddress.set(v.address.toLowerCase(), v.index));
    this.stream = new BeaconEventStream({
      url: manifest.endpoints.ws,
      // The view and the NDJSON events are the observer's output; the stream's own lines are not.
      log: silentLogger,
      minBackoffMs: RECONNECT_MIN_MS,
      maxBackoffMs: RECONNECT_MAX_MS,
      random: NO_JITTER,
      firstConnectRetryMs: FIRST_CONNECT_RETRY_MS,
      handlers: {
        new_block: (d, time) => this.onBlock(d, time),
        new_attestation: (d) => this.onAttestation(d),
        finalized_checkpoint: (d) => this.onFinalized(d),
      },
    });
    this.view = {
      dir: manifest.dir,
      chainId: manifest.chain_id,
      endpoints: manifest.endpoints,
      slot: 0,
      epoch: 0,
      head: null,
      justifiedEpoch: 0,
      finalizedEpoch: 0,
      mempool: null,
      peers: 0,
      nodes: manifest.nodes.map((n) => nodeView(n, null)),
      processes: processes(),
      validators: manifest.validators.map((v) => ({ index: v.index, address: v.address, proposed: 0, attested: 0, balance: null })),
      events: [],
    };
  }

  /** The latest view (a fresh object each change, so renderers can compare by reference). */
  current(): DevnetView {
    return this.view;
  }

  /** Calls `fn` after every change; returns the unsubscribe function (the dashboard's store API). */
  subscribe(fn: () => void): () => void {
    this.on('change', fn);
    return () => void this.off('change', fn);
  }

  /** Starts polling (every half slot, at most once a second) and the `/ws` subscription. */
  start(): void {
    const every = Math.min(1_000, (this.manifest.slot_seconds * 1000) / 2);
    const tick = () => {
      void this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, every);
      });
    };
    tick();
    this.stream.start();
  }

  /** Stops polling and closes the socket. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    void this.stream.stop();
  }

  /** Records a line in the recent-events list (and, for errors, in the event stream). */
  note(kind: EventLine['kind'], text: string, extra?: { process?: string; log?: string }): void {
    const time = new Date().toISOString();
    this.pushLine({ time, kind, text });
    if (kind === 'error' || kind === 'crash') this.emit('event', { event: 'error', time, message: text, ...(extra ?? {}) });
  }

  /** Process table changed (the supervisor calls this). */
  processesChanged(): void {
    this.update({ processes: this.processesOf() });
  }

  private update(patch: Partial<DevnetView>): void {
    this.view = { ...this.view, ...patch };
    this.emit('change');
  }

  private pushLine(line: EventLine): void {
    this.update({ events: [...this.view.events, line].slice(-EVENTS_KEPT) });
  }

  private slotNow(): number {
    const ms = Date.now() - this.manifest.genesis_time * 1000;
    return ms <= 0 ? 0 : Math.floor(ms / (this.manifest.slot_seconds * 1000));
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const slot = this.slotNow();
      const patch: Partial<DevnetView> = { slot, epoch: Math.floor(slot / this.manifest.slots_per_epoch), processes: this.processesOf() };
      const probes = await Promise.all(this.manifest.nodes.map((n) => probeNode(n, POLL_TIMEOUT_MS)));
      const node0 = probes[0]!;
      if (node0.head) {
        const h = node0.head;
        patch.head = { slot: h.slot, index: h.index, root: h.root };
        patch.justifiedEpoch = h.justified.epoch;
        patch.finalizedEpoch = h.finalized.epoch;
        this.finalized(h.finalized.epoch, h.finalized.root, true);
      }
      patch.mempool = node0.execution ? { pending: node0.execution.mempool_pending, queued: node0.execution.mempool_queued } : null;
      if (node0.beaconPeers !== null) patch.peers = node0.beaconPeers;
      patch.nodes = this.manifest.nodes.map((n, i) => nodeView(n, probes[i]!));
      this.update(patch);
      // Balances change only with a new head (none before the first block).
      if (this.readBalances && node0.head && node0.head.slot !== this.lastBalancesSlot) {
        this.lastBalancesSlot = node0.head.slot;
        await this.balances();
      }
    } finally {
      this.polling = false;
    }
  }

  private async balances(): Promise<void> {
    const read = await Promise.allSettled(this.view.validators.map((v) => this.execution.account(v.address)));
    const validators = this.view.validators.map((v, i) => {
      const r = read[i]!;
      return r.status === 'fulfilled' ? { ...v, balance: r.value.balance } : v;
    });
    this.update({ validators });
  }

  /** A finalised checkpoint seen; the first one polled is the baseline (a resumed chain's old news). */
  private finalized(epoch: number, root: string, polled: boolean): void {
    if (this.lastFinalized < 0 && polled) {
      this.lastFinalized = epoch;
      return;
    }
    if (epoch <= this.lastFinalized) return;
    this.lastFinalized = epoch;
    const time = new Date().toISOString();
    this.pushLine({ time, kind: 'finalized', text: `epoch ${epoch} finalised (${root.slice(0, 10)}…)` });
    this.emit('event', { event: 'finalized', time, epoch, root });
  }

  private onBlock(d: NewBlockEvent, time: string): void {
    this.count(d.proposer, 'proposed');
    this.pushLine({ time, kind: 'block', text: `slot ${d.slot}: block ${d.block_hash.slice(0, 10)}… by validator ${this.byAddress.get(d.proposer) ?? d.proposer} (${d.transactions} tx)` });
    this.emit('event', { event: 'block', time, slot: d.slot, hash: d.block_hash, proposer: d.proposer, transactions: d.transactions });
  }

  private onAttestation(d: NewAttestationEvent): void {
    this.count(d.validator, 'attested');
  }

  private onFinalized(d: FinalizedCheckpointEvent): void {
    this.finalized(d.epoch, d.root, false);
  }

  private count(address: string, field: 'proposed' | 'attested'): void {
    const index = this.byAddress.get(address.toLowerCase());
    if (index === undefined) return;
    this.update({ validators: this.view.validators.map((v) => (v.index === index ? { ...v, [field]: v[field] + 1 } : v)) });
  }
}

/** A node as the dashboard lists it; before the first answer (`probe` null) everything is unknown. */
function nodeView(n: ManifestNode, probe: NodeProbe | null): NodeView {
  const head = probe?.head ?? null;
  return {
    index: n.index,
    role: n.role,
    validators: n.validators,
    head: head ? { slot: head.slot, index: head.index, root: head.root } : null,
    finalized_epoch: head?.finalized.epoch ?? null,
    peers: { beacon: probe?.beaconPeers ?? null, execution: probe?.execution?.peers ?? null },
  };
}
