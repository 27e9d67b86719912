/**
 * The one client of the beacon's public event stream (`GET /ws`, route src/api/routes/events.ts,
 * envelope `{ type, data, timestamp }` and event types src/api/events.ts), used by the validator
 * client and the devnet observer. Both also poll the beacon's REST API, so losing the stream costs
 * latency, never a duty or a view.
 *
 * - The URL is the beacon URL with http → ws and https → wss, plus `/ws` (a path prefix is kept),
 *   or a ws(s) URL given as such (a devnet manifest names it).
 * - Reconnection: after a failed attempt or a dropped connection the next attempt waits a capped
 *   exponential backoff (default 250 ms doubling to 5 s, ±20 % jitter so a fleet of validators
 *   does not reconnect in lockstep after a beacon restart); a connection that opens resets it.
 *   With `firstConnectRetryMs`, attempts before the first connection retry at that flat pace
 *   instead (a beacon that is starting: its first events must not be missed).
 * - Liveness: the beacon pings every 30 s (ws answers the pongs). A connection on which nothing
 *   (ping or message) arrives for `idleTimeoutMs` (default 75 s) is taken as dead (a half-open
 *   TCP connection never reports itself) and replaced.
 * - Typed events: the owner gives one handler per event type it reads. A message of such a type is
 *   checked against its wire shape first (hex lowercased); anything that is not a well-formed
 *   envelope (binary frames, text that is not JSON, wrong field types, data of a read type that
 *   does not match its shape) is ignored and counted, never thrown. A known type the owner does
 *   not read is only counted (`event`), its data unchecked; a type this client does not know (a
 *   newer beacon) is ignored without counting it as malformed.
 * - Logs: one line when the stream connects and when it drops; the first failed attempt of an
 *   outage at info, the following ones at debug (a beacon down for an hour must not fill the log).
 */
import { WebSocket, type RawData } from 'ws';
import { SvcError } from '../core/errors.js';
import type { Logger } from '../util/log.js';
import { EVENT_TYPES, type EventDataMap, type EventType, isEventType } from '../api/events.js';
import { eventRoutes } from '../api/routes/events.js';
import { BID_STATUSES, type BidStatus } from '../api/bridge.js';
import { realTimers, type Timers } from '../util/timers.js';

/** Default first reconnection delay. */
export const DEFAULT_MIN_BACKOFF_MS = 250;
/** Default cap of the reconnection delay. */
export const DEFAULT_MAX_BACKOFF_MS = 5_000;
/** Default silence after which an open connection is declared dead (2.5 beacon ping periods). */
export const DEFAULT_IDLE_TIMEOUT_MS = 75_000;
/** Default deadline of the opening handshake. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 5_000;
/** Largest message accepted; a larger one closes the connection (1009) and it reconnects. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
/** How long stop() waits for the beacon to answer the close frame before cutting the socket. */
const CLOSE_GRACE_MS = 1_000;

/** A checked event of type T, as the client hands it over. */
export type TypedMessage<T extends EventType> = { kind: T; data: EventDataMap[T]; timestamp: string };

/** One message from the stream, as the client sees it after checking it. */
export type StreamMessage =
  /** A well-formed event of a type the owner reads (hex lowercased). */
  | { [T in EventType]: TypedMessage<T> }[EventType]
  /** A well-formed envelope of a known type the owner does not read (only counted). */
  | { kind: 'other'; type: EventType; timestamp: string }
  /** An envelope of a type this client does not know. */
  | { kind: 'unknown'; type: string }
  /** Not a usable message; `reason` says why. */
  | { kind: 'malformed'; reason: string };

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const SLASHING_KINDS: ReadonlySet<string> = new Set(['double_proposal', 'double_vote', 'surround_vote']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isHash(v: unknown): v is string {
  return typeof v === 'string' && HASH_RE.test(v);
}

function isAddress(v: unknown): v is string {
  return typeof v === 'string' && ADDRESS_RE.test(v);
}

function isBidStatus(v: unknown): v is BidStatus {
  return typeof v === 'string' && BID_STATUSES.includes(v as BidStatus);
}

/** A data check: the event's data (hex lowercased), or why it is malformed. */
type Check<T extends EventType> = (d: Record<string, unknown>) => EventDataMap[T] | string;

// One check per event type: keyed by EventDataMap, so a new type without a check does not compile.
const CHECKS: { readonly [T in EventType]: Check<T> } = {
  new_block: ({ slot, block_hash, proposer, transactions }) => {
    if (!isCount(slot)) return 'new_block: slot is not a non-negative integer';
    if (!isHash(block_hash)) return 'new_block: block_hash is not 32 bytes of 0x hex';
    if (!isAddress(proposer)) return 'new_block: proposer is not a 0x address';
    if (!isCount(transactions)) return 'new_block: transactions is not a non-negative integer';
    return { slot, block_hash: block_hash.toLowerCase(), proposer: proposer.toLowerCase(), transactions };
  },
  new_attestation: ({ slot, validator, block_hash }) => {
    if (!isCount(slot)) return 'new_attestation: slot is not a non-negative integer';
    if (!isAddress(validator)) return 'new_attestation: validator is not a 0x address';
    if (!isHash(block_hash)) return 'new_attestation: block_hash is not 32 bytes of 0x hex';
    return { slot, validator: validator.toLowerCase(), block_hash: block_hash.toLowerCase() };
  },
  bridge_bid_registered: ({ bid, status, amount, chain }) => {
    if (!isHash(bid)) return 'bridge_bid_registered: bid is not 32 bytes of 0x hex';
    if (!isBidStatus(status)) return 'bridge_bid_registered: status is not a BID status';
    if (typeof amount !== 'string' || !/^(0|[1-9][0-9]*)$/.test(amount)) return 'bridge_bid_registered: amount is not a base-10 integer';
    if (typeof chain !== 'string') return 'bridge_bid_registered: chain is not a string';
    return { bid: bid.toLowerCase(), status, amount, chain };
  },
  bridge_bid_status: ({ bid, status, previous, direction }) => {
    if (!isHash(bid)) return 'bridge_bid_status: bid is not 32 bytes of 0x hex';
    if (!isBidStatus(status)) return 'bridge_bid_status: status is not a BID status';
    if (previous !== null && !isBidStatus(previous)) return 'bridge_bid_status: previous is neither a BID status nor null';
    if (direction !== 'outgoing' && direction !== 'incoming') return 'bridge_bid_status: direction is not outgoing or incoming';
    return { bid: bid.toLowerCase(), status, previous, direction };
  },
  finalized_checkpoint: ({ epoch, root }) => {
    if (!isCount(epoch)) return 'finalized_checkpoint: epoch is not a non-negative integer';
    if (!isHash(root)) return 'finalized_checkpoint: root is not 32 bytes of 0x hex';
    return { epoch, root: root.toLowerCase() };
  },
  slashing: ({ kind, validator_index, validator, evidence_hash, slot, epoch, evidence }) => {
    if (typeof kind !== 'string' || !SLASHING_KINDS.has(kind)) return 'slashing: kind is not double_proposal, double_vote or surround_vote';
    if (!isCount(validator_index)) return 'slashing: validator_index is not a non-negative integer';
    if (validator !== null && !isAddress(validator)) return 'slashing: validator is neither a 0x address nor null';
    if (!isHash(evidence_hash)) return 'slashing: evidence_hash is not 32 bytes of 0x hex';
    if (!isCount(slot)) return 'slashing: slot is not a non-negative integer';
    if (!isCount(epoch)) return 'slashing: epoch is not a non-negative integer';
    if (!isRecord(evidence)) return 'slashing: evidence is not an object';
    return { kind: kind as EventDataMap['slashing']['kind'], validator_index, validator: validator === null ? null : validator.toLowerCase(), evidence_hash: evidence_hash.toLowerCase(), slot, epoch, evidence };
  },
  head: ({ slot, block_hash, proposer_dependent_roots: roots }) => {
    if (!isCount(slot)) return 'head: slot is not a non-negative integer';
    if (!isHash(block_hash)) return 'head: block_hash is not 32 bytes of 0x hex';
    if (!Array.isArray(roots)) return 'head: proposer_dependent_roots is not an array';
    const dependent: EventDataMap['head']['proposer_dependent_roots'] = [];
    for (const r of roots) {
      if (!isRecord(r) || !isCount(r.epoch) || !isHash(r.root)) return 'head: proposer_dependent_roots holds something other than { epoch, root }';
      dependent.push({ epoch: r.epoch, root: r.root.toLowerCase() });
    }
    return { slot, block_hash: block_hash.toLowerCase(), proposer_dependent_roots: dependent };
  },
};

/** Checks the data of one event of a read type. */
function checked<T extends EventType>(type: T, data: Record<string, unknown>, timestamp: string): StreamMessage {
  const r = CHECKS[type](data);
  return typeof r === 'string' ? { kind: 'malformed', reason: r } : ({ kind: type, data: r, timestamp } as StreamMessage);
}

/**
 * Checks one text message from the beacon's stream; never throws. `read` names the event types
 * whose data is checked and handed over; other known types come back as `other`.
 */
export function parseStreamMessage(text: string, read: ReadonlySet<EventType>): StreamMessage {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { kind: 'malformed', reason: 'not JSON' };
  }
  if (!isRecord(doc)) return { kind: 'malformed', reason: 'not a JSON object' };
  const { type, data, timestamp } = doc;
  if (typeof type !== 'string') return { kind: 'malformed', reason: 'type is not a string' };
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp))) return { kind: 'malformed', reason: 'timestamp is not an ISO 8601 time' };
  if (!isRecord(data)) return { kind: 'malformed', reason: 'data is not an object' };
  if (!isEventType(type)) return { kind: 'unknown', type };
  if (!read.has(type)) return { kind: 'other', type, timestamp };
  return checked(type, data, timestamp);
}

/** The stream URL of a beacon base URL: http → ws, https → wss, plus `/ws`; anything else is INVALID_URL. */
export function eventStreamUrl(beaconUrl: string): string {
  let url: URL;
  try {
    url = new URL(beaconUrl);
  } catch {
    throw new SvcError('INVALID_URL', `beacon URL ${JSON.stringify(beaconUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SvcError('INVALID_URL', `beacon URL must be http:// or https://, got ${JSON.stringify(beaconUrl)}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${eventRoutes.stream.path}`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

/** A ws:// or wss:// stream URL given as such; anything else is INVALID_URL. */
function checkStreamUrl(streamUrl: string): string {
  let url: URL;
  try {
    url = new URL(streamUrl);
  } catch {
    throw new SvcError('INVALID_URL', `event stream URL ${JSON.stringify(streamUrl)} is not a URL`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new SvcError('INVALID_URL', `event stream URL must be ws:// or wss://, got ${JSON.stringify(streamUrl)}`);
  return url.toString();
}

/**
 * Delay before reconnection attempt `attempt` (0 = the first after a failure or drop): `minMs`
 * doubling per attempt up to `maxMs`, times a jitter factor in [0.8, 1.2), never above `maxMs`.
 */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const nominal = Math.min(maxMs, minMs * 2 ** Math.min(Math.max(0, attempt), 30));
  return Math.round(Math.min(maxMs, nominal * (0.8 + 0.4 * random())));
}

/** One handler per event type the owner reads: given a well-formed event's data and its timestamp. */
export type EventHandlers = { [T in EventType]?: (data: EventDataMap[T], timestamp: string) => void };

/** What the stream tells its owner. Exceptions thrown by a handler are logged, never propagated into ws. */
export interface EventStreamHandlers extends EventHandlers {
  /** Any well-formed envelope arrived (`unknown` for a type this client does not know). */
  event?(type: EventType | 'unknown'): void;
  /** The connection opened; `reconnect` is false for the first connection of the stream. */
  connected?(reconnect: boolean): void;
  /** An open connection closed (also on stop()). */
  disconnected?(): void;
  /** A message was ignored as malformed. */
  malformed?(reason: string): void;
}

/** Where the stream is: the beacon's http(s) base URL, or the ws(s) stream URL itself. */
export type EventStreamLocation = { beaconUrl: string; url?: undefined } | { url: string; beaconUrl?: undefined };

/** How to run a BeaconEventStream. */
export type BeaconEventStreamOptions = EventStreamLocation & {
  log: Logger;
  handlers: EventStreamHandlers;
  timers?: Timers;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  idleTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  maxMessageBytes?: number;
  /** Flat delay between attempts until the first connection opens (default: the backoff from the start). */
  firstConnectRetryMs?: number;
};

/** Bytes of a message as ws hands them over (a Buffer for the default binaryType, fragments concatenated). */
function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** A reconnecting subscription to a beacon's `/ws` event stream. */
export class BeaconEventStream {
  /** The ws:// or wss:// URL in use. */
  readonly url: string;
  private readonly log: Logger;
  private readonly handlers: EventStreamHandlers;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly idleTimeoutMs: number;
  private readonly handshakeTimeoutMs: number;
  private readonly maxMessageBytes: number;
  private readonly firstConnectRetryMs: number | undefined;
  /** The event types the owner has a handler for: only their data is checked. */
  private readonly read: ReadonlySet<EventType>;
  private ws: WebSocket | undefined;
  private running = false;
  private open = false;
  private everConnected = false;
  /** Consecutive failed attempts since the last open connection (drives the backoff). */
  private attempt = 0;
  /** The current outage has been logged at info/warn already. */
  private outageLogged = false;
  /** Malformed messages logged at warn on the current connection. */
  private warnedMalformed = false;
  private reconnectTimer: unknown;
  private idleTimer: unknown;
  private reconnectCount = 0;
  private malformedCount = 0;

  constructor(opts: BeaconEventStreamOptions) {
    this.url = opts.url !== undefined ? checkStreamUrl(opts.url) : eventStreamUrl(opts.beaconUrl);
    this.log = opts.log;
    this.handlers = opts.handlers;
    this.read = new Set(EVENT_TYPES.filter((t) => opts.handlers[t] !== undefined));
    this.firstConnectRetryMs = opts.firstConnectRetryMs;
    this.timers = opts.timers ?? realTimers;
    this.random = opts.random ?? Math.random;
    this.minBackoffMs = opts.minBackoffMs ?? DEFAULT_MIN_BACKOFF_MS;
    this.maxBackoffMs = Math.max(this.minBackoffMs, opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
    this.idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.handshakeTimeoutMs = opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!(this.minBackoffMs > 0)) throw new RangeError(`minBackoffMs must be positive, got ${this.minBackoffMs}`);
    if (this.firstConnectRetryMs !== undefined && !(this.firstConnectRetryMs > 0)) throw new RangeError(`firstConnectRetryMs must be positive, got ${this.firstConnectRetryMs}`);
  }

  /** True while a connection is open. */
  get connected(): boolean {
    return this.open;
  }

  /** Connections opened after the first one (each a recovery from a drop). */
  get reconnects(): number {
    return this.reconnectCount;
  }

  /** Messages ignored as malformed so far. */
  get malformed(): number {
    return this.malformedCount;
  }

  /** Opens the first connection (in the background: failures only schedule the next attempt). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.connect();
  }

  /**
   * Connects now rather than at the next backoff step, when an attempt is waiting: the caller
   * just heard from the beacon (REST), so the stream is likely up too and the backoff would
   * only delay the first events (up to its growing delay, after the beacon started).
   */
  retryNow(): void {
    if (!this.running || this.ws || this.reconnectTimer === undefined) return;
    this.clearReconnect();
    this.connect();
  }

  /** Cancels any pending attempt and closes the connection; resolves once the socket is gone. */
  async stop(): Promise<void> {
    this.running = false;
    this.clearReconnect();
    this.clearIdle();
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((done) => {
      let grace: NodeJS.Timeout | undefined;
      ws.once('close', () => {
        if (grace) clearTimeout(grace);
        done();
      });
      if (ws.readyState === WebSocket.OPEN) {
        ws.close(1000, 'client stopping');
        // Real time on purpose: this bounds network I/O at shutdown, not a protocol delay that
        // tests drive through the injected timers. Cleared as soon as the socket closes.
        grace = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      } else {
        // CONNECTING (aborts the handshake) or CLOSING (a close frame is already out).
        ws.terminate();
      }
    });
  }

  private connect(): void {
    if (!this.running || this.ws) return;
    // No redirects (a beacon does not send them, and following one could leave the beacon's
    // host); no compression (the beacon sends none and inflating costs memory per message).
    const ws = new WebSocket(this.url, { handshakeTimeout: this.handshakeTimeoutMs, maxPayload: this.maxMessageBytes, perMessageDeflate: false, followRedirects: false });
    this.ws = ws;
    let opened = false;
    let error: string | undefined;
    ws.on('open', () => {
      opened = true;
      this.onOpen();
    });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('ping', () => this.armIdle());
    // The error is reported with the close that always follows it.
    ws.on('error', (err) => {
      error = err.message;
    });
    ws.on('close', (code, reason) => this.onClose(ws, opened, code, reason.toString('utf8'), error));
  }

  private onOpen(): void {
    const reconnect = this.everConnected;
    this.everConnected = true;
    this.attempt = 0;
    this.open = true;
    this.outageLogged = false;
    this.warnedMalformed = false;
    if (reconnect) this.reconnectCount++;
    this.log.info('beacon event stream connected: reacting to new blocks as they arrive', { url: this.url, reconnects: this.reconnectCount });
    this.call(() => this.handlers.connected?.(reconnect));
    this.armIdle();
  }

  private onClose(ws: WebSocket, opened: boolean, code: number, reason: string, error: string | undefined): void {
    if (this.ws === ws) this.ws = undefined;
    this.clearIdle();
    if (opened) {
      this.open = false;
      if (this.running) {
        this.log.warn('beacon event stream disconnected: polling the beacon until it reconnects', { url: this.url, code, reason, error: error ?? null });
        this.outageLogged = true;
      } else {
        this.log.info('beacon event stream closed', { url: this.url });
      }
      this.call(() => this.handlers.disconnected?.());
    }
    if (!this.running) return;
    const delay = !this.everConnected && this.firstConnectRetryMs !== undefined ? this.firstConnectRetryMs : backoffDelay(this.attempt, this.minBackoffMs, this.maxBackoffMs, this.random);
    if (!opened) {
      const fields = { url: this.url, error: error ?? `closed (${code})`, attempt: this.attempt + 1, retry_in_ms: delay };
      if (this.outageLogged) this.log.debug('beacon event stream still unavailable', fields);
      else this.log.info('cannot subscribe to the beacon event stream: polling the beacon and retrying', fields);
      this.outageLogged = true;
    }
    this.attempt++;
    this.clearReconnect();
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delay);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    this.armIdle();
    const msg: StreamMessage = isBinary ? { kind: 'malformed', reason: 'binary frame' } : parseStreamMessage(rawText(data), this.read);
    switch (msg.kind) {
      case 'malformed':
        this.malformedCount++;
        // One warning per connection: a beacon (or proxy) sending garbage would otherwise flood the log.
        if (this.warnedMalformed) this.log.debug('malformed beacon event ignored', { reason: msg.reason });
        else this.log.warn('malformed beacon event ignored (further ones on this connection at debug)', { url: this.url, reason: msg.reason });
        this.warnedMalformed = true;
        this.call(() => this.handlers.malformed?.(msg.reason));
        return;
      case 'unknown':
        this.log.debug('beacon event of an unknown type ignored', { type: msg.type });
        this.call(() => this.handlers.event?.('unknown'));
        return;
      case 'other':
        this.call(() => this.handlers.event?.(msg.type));
        return;
      default:
        this.call(() => this.handlers.event?.(msg.kind));
        this.call(() => this.dispatch(msg));
    }
  }

  /** Hands a checked event to its type's handler. */
  private dispatch<T extends EventType>(msg: TypedMessage<T>): void {
    (this.handlers[msg.kind] as ((data: EventDataMap[T], timestamp: string) => void) | undefined)?.(msg.data, msg.timestamp);
  }

  /** Runs a handler; an exception would otherwise escape into ws's socket callbacks and crash the process. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error('beacon event handler failed', { error: (err as Error).message });
    }
  }

  /** (Re)starts the silence deadline of the open connection. */
  private armIdle(): void {
    this.clearIdle();
    const ws = this.ws;
    if (!ws || !this.running) return;
    this.idleTimer = this.timers.setTimeout(() => {
      this.idleTimer = undefined;
      if (this.ws !== ws) return;
      this.log.info('beacon event stream silent (no ping): reconnecting', { url: this.url, idle_ms: this.idleTimeoutMs });
      ws.terminate();
    }, this.idleTimeoutMs);
  }

  private clearIdle(): void {
    if (this.idleTimer !== undefined) this.timers.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private clearReconnect(): void {
    if (this.reconnectTimer !== undefined) this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }
}
