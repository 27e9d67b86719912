/**
 * The beacon's public WebSocket event stream (`GET /ws`, spec "Events"): every connected client
 * receives every event as one JSON text message `{ type, data, timestamp }`, `timestamp` being
 * ISO 8601 UTC (`2026-11-22T10:15:30.123Z`, the publish time). There is no authentication: the
 * stream is public and read-only (spec "Authentication" 5).
 *
 * Event types and their `data`: src/api/events.ts (the wire types, shared with the stream client).
 *
 * Behaviour:
 * - Only upgrades of path `/ws` (any query string) are accepted; any other upgrade path is
 *   answered 404 with the error envelope and the socket is destroyed. The hub owns the server's
 *   'upgrade' event: nothing else may listen to it.
 * - Keepalive: a ping every `pingIntervalMs` (default 30 s, spec); a client that has not answered
 *   the previous ping with a pong by the next tick is terminated.
 * - Fan-out: an event is serialised once into one Buffer, and that Buffer is handed to every open
 *   client (no per-client copy or re-encoding). A slow client never stalls the others: when a
 *   client's unsent backlog (`bufferedAmount`: kernel-refused bytes Node holds for it) would exceed
 *   `maxBufferedBytes` (default 1 MiB) the client is terminated (logged once) instead of being
 *   queued more; it reconnects and resumes (reconnection is the client's job, spec).
 * - Messages from clients are ignored. A message above 4 KiB, or more than 4 KiB sent in total
 *   over a connection, drops the client (the stream is read-only).
 * - At most `maxClients` (default 10,000) connections; further upgrades are answered 503.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { EVENT_TYPES, type EventDataMap, type EventEnvelope, type EventType } from '../../api/events.js';
import { eventRoutes } from '../../api/routes/events.js';
import type { Logger } from '../../util/log.js';
import { refuseUpgrade } from '../shared/http.js';
import { closeSockets } from '../shared/ws.js';
import type { BeaconMetrics } from './metrics.js';

/** The stream's path. */
const WS_PATH = eventRoutes.stream.path;
/** Spec keepalive: ping/pong every 30 s. */
export const DEFAULT_PING_INTERVAL_MS = 30_000;
/** Per-client backlog above which a client counts as too slow and is dropped. */
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** Connection cap of the public stream. */
export const DEFAULT_MAX_CLIENTS = 10_000;
/** What a client may send (per message and in total) before it is dropped. */
export const MAX_INBOUND_BYTES = 4 * 1024;
/** How long `close()` waits for clients to answer the close frame before terminating them. */

export interface EventHubOptions {
  log: Logger;
  /** Keepalive period; default 30,000 ms. */
  pingIntervalMs?: number;
  /** Per-client unsent backlog above which the client is dropped; default 1 MiB. */
  maxBufferedBytes?: number;
  /** Connection cap; default 10,000. */
  maxClients?: number;
  /** Updates service_beacon_ws_clients and the drop / event counters when given. */
  metrics?: BeaconMetrics;
}

/** Why a client was dropped (metric label). */
type DropReason = 'slow' | 'unresponsive' | 'inbound';

interface Client {
  readonly ws: WebSocket;
  readonly remote: string;
  /** A pong (or the connection itself) arrived since the last ping. */
  alive: boolean;
  /** Bytes of data messages received so far. */
  inbound: number;
  /** Dropped already (drops are logged once). */
  dropped: boolean;
}

const SEND_OPTS = { binary: false, compress: false, fin: true } as const;

function rawSize(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data.byteLength;
}

/** JSON with bigints as base-10 strings (only paid for when a payload carries one). */
function serialise(envelope: EventEnvelope): string {
  try {
    return JSON.stringify(envelope);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(envelope, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  }
}

/** Broadcasts beacon events to WebSocket clients on `/ws` of an existing HTTP server. */
export class EventHub {
  private readonly wss: WebSocketServer;
  private readonly set = new Set<Client>();
  private readonly log: Logger;
  private readonly maxBuffered: number;
  private readonly maxClients: number;
  private readonly metrics: BeaconMetrics | undefined;
  private readonly timer: NodeJS.Timeout;
  private closing: Promise<void> | undefined;

  private constructor(server: Server, opts: EventHubOptions) {
    this.log = opts.log;
    this.maxBuffered = opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.maxClients = opts.maxClients ?? DEFAULT_MAX_CLIENTS;
    this.metrics = opts.metrics;
    const interval = opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    if (!(interval > 0)) throw new RangeError(`pingIntervalMs must be positive, got ${interval}`);
    if (!(this.maxBuffered > 0)) throw new RangeError(`maxBufferedBytes must be positive, got ${this.maxBuffered}`);
    // noServer: the hub routes upgrades itself; no per-message deflate (CPU per client per event).
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: MAX_INBOUND_BYTES });
    this.timer = setInterval(() => this.heartbeat(), interval);
    this.timer.unref();
    server.on('upgrade', this.onUpgrade);
  }

  /** Starts serving `/ws` on `server` (a Fastify instance's `app.server`). */
  static attach(server: Server, opts: EventHubOptions): EventHub {
    return new EventHub(server, opts);
  }

  /** Open connections. */
  get clients(): number {
    return this.set.size;
  }

  /**
   * Sends one event to every open client; returns how many it was handed to. The envelope is
   * serialised once and the same bytes go to every client.
   */
  publish<T extends EventType>(type: T, data: EventDataMap[T]): number {
    if (!EVENT_TYPES.includes(type)) throw new TypeError(`unknown event type ${String(type)}`);
    this.metrics?.wsEvents.inc({ type });
    if (this.closing || this.set.size === 0) return 0;
    const frame = Buffer.from(serialise({ type, data, timestamp: new Date().toISOString() } as EventEnvelope));
    let sent = 0;
    for (const c of this.set) {
      if (c.dropped || c.ws.readyState !== WebSocket.OPEN) continue;
      const backlog = c.ws.bufferedAmount;
      // An idle client (backlog 0) always gets the event, however large; a client that has not
      // drained what it was given is dropped rather than queued past the cap.
      if (backlog > 0 && backlog + frame.length > this.maxBuffered) {
        this.drop(c, 'slow', { backlog_bytes: backlog });
        continue;
      }
      c.ws.send(frame, SEND_OPTS);
      sent++;
    }
    return sent;
  }

  /**
   * Stops accepting connections (later upgrades get 503), sends every client a close frame
   * (1001 going away), terminates those that have not closed within a second and resolves once
   * every connection is gone. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await closeSockets([...this.set].map((c) => c.ws));
    this.wss.close();
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== WS_PATH) return refuseUpgrade(socket, 404, 'NOT_FOUND', `no WebSocket endpoint at ${path}; the event stream is ${WS_PATH}`);
    if (this.closing) return refuseUpgrade(socket, 503, 'UNAVAILABLE', 'the event stream is shutting down');
    if (this.set.size >= this.maxClients) return refuseUpgrade(socket, 503, 'UNAVAILABLE', `the event stream is full (${this.maxClients} clients)`);
    // handleUpgrade answers bad handshakes (method, version, key) itself.
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, req));
  };

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    const c: Client = { ws, remote: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`, alive: true, inbound: 0, dropped: false };
    if (this.closing) {
      ws.terminate();
      return;
    }
    this.set.add(c);
    this.metrics?.wsClients.set(this.set.size);
    this.log.debug('ws client connected', { remote: c.remote, clients: this.set.size });
    ws.on('pong', () => {
      c.alive = true;
    });
    ws.on('message', (data) => {
      c.inbound += rawSize(data);
      if (c.inbound > MAX_INBOUND_BYTES) this.drop(c, 'inbound', { inbound_bytes: c.inbound });
    });
    ws.on('error', (err) => {
      // ws closes the connection itself after an error (e.g. a message above maxPayload: 1009).
      if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.drop(c, 'inbound', { error: err.message });
      else this.log.debug('ws client error', { remote: c.remote, error: err.message });
    });
    ws.on('close', () => {
      this.set.delete(c);
      this.metrics?.wsClients.set(this.set.size);
      this.log.debug('ws client disconnected', { remote: c.remote, clients: this.set.size });
    });
  }

  private heartbeat(): void {
    for (const c of this.set) {
      if (c.dropped || c.ws.readyState !== WebSocket.OPEN) continue;
      if (!c.alive) {
        this.drop(c, 'unresponsive');
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }

  /** Terminates a client once and logs why (once). */
  private drop(c: Client, reason: DropReason, fields: Record<string, unknown> = {}): void {
    if (c.dropped) return;
    c.dropped = true;
    this.metrics?.wsDropped.inc({ reason });
    const msg =
      reason === 'slow'
        ? 'ws client dropped: too slow, its backlog would pass the cap'
        : reason === 'unresponsive'
          ? 'ws client dropped: no pong since the previous ping'
          : 'ws client dropped: it sent data to the read-only stream';
    (reason === 'slow' ? this.log.warn : this.log.info)(msg, { remote: c.remote, max_buffered_bytes: this.maxBuffered, ...fields });
    // terminate, not close: a close frame would queue behind the backlog of a slow client, and an
    // unresponsive one would never answer it.
    c.ws.terminate();
  }
}

