/**
 * JSON-RPC over WebSocket on the JSON-RPC port (`ws://host:8545/`), as geth serves it: every
 * method the HTTP endpoint answers, plus eth_subscribe / eth_unsubscribe for `newHeads`, `logs`
 * (address and topics criteria), `newPendingTransactions` (hashes) and `syncing` (the execution
 * node has no sync phase of its own, so it never fires). Notifications are
 * `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"result":…}}`.
 *
 * Bounds: at most MAX_WS_CLIENTS connections (later upgrades 503), MAX_SUBSCRIPTIONS per
 * connection, messages up to the HTTP body limit, batches up to the HTTP batch limit; a client
 * whose unsent backlog would pass MAX_WS_BUFFERED_BYTES is dropped rather than queued (the
 * beacon's /ws rule); one that answers no ping within a heartbeat is dropped.
 */
import type { IncomingMessage, Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { toHex } from '../../../core/codec/bytes.js';
import type { Logger } from '../../../util/log.js';
import { DEFAULT_BODY_LIMIT, refuseUpgrade } from '../../shared/http.js';
import { closeSockets } from '../../shared/ws.js';
import type { BlockRecord } from '../blocks.js';
import type { FeedLog, FeedSink, RpcFeed } from './rpc-feed.js';
import { logMatches } from './rpc-filters.js';
import { rpcLog } from './rpc-format.js';
import { logFilter, type RpcContext, type RpcLogFilter, RpcCode } from './rpc-params.js';

/** Most WebSocket connections at once. */
export const MAX_WS_CLIENTS = 1_000;
/** Most live subscriptions on one connection. */
export const MAX_SUBSCRIPTIONS = 128;
/** Largest unsent backlog a client may have before it is dropped. */
export const MAX_WS_BUFFERED_BYTES = 16 * 1024 * 1024;
const HEARTBEAT_MS = 30_000;

type SubscriptionKind = 'newHeads' | 'logs' | 'newPendingTransactions' | 'syncing';

interface Subscription {
  kind: SubscriptionKind;
  criteria?: Pick<RpcLogFilter, 'addresses' | 'topics'>;
}

/** What the socket layer needs from the RPC: the HTTP handler's dispatch, a caller's limits, a head's header object. */
export interface RpcSocketDeps {
  /** Handles one request object (not a batch), as POST / does; undefined for a notification. */
  handle(req: unknown, ctx: RpcContext): Promise<object | undefined>;
  context(ip: string): RpcContext;
  /** The newHeads object of a block. */
  header(record: BlockRecord): Promise<object>;
  feed: RpcFeed;
  log: Logger;
  maxBatch: number;
  /** Tests shorten it. */
  maxBufferedBytes?: number;
}

interface Client {
  ws: WebSocket;
  ip: string;
  ctx: RpcContext;
  subs: Map<string, Subscription>;
  alive: boolean;
  dropped: boolean;
  detach: () => void;
}

const error = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0' as const, id: id ?? null, error: { code, message } });

/** Serves JSON-RPC over WebSocket on an HTTP server's upgrades to `/`. */
export class RpcSockets {
  private readonly wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: DEFAULT_BODY_LIMIT });
  private readonly clients = new Set<Client>();
  private readonly timer: NodeJS.Timeout;
  private readonly maxBuffered: number;
  private closing: Promise<void> | undefined;

  private constructor(
    server: Server,
    private readonly deps: RpcSocketDeps,
  ) {
    this.maxBuffered = deps.maxBufferedBytes ?? MAX_WS_BUFFERED_BYTES;
    this.timer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.timer.unref();
    server.on('upgrade', this.onUpgrade);
  }

  /** Starts serving WebSocket JSON-RPC on `server` (a Fastify instance's `app.server`). */
  static attach(server: Server, deps: RpcSocketDeps): RpcSockets {
    return new RpcSockets(server, deps);
  }

  /** Open connections. */
  get size(): number {
    return this.clients.size;
  }

  /** Closes every connection (1001) and stops accepting; idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await closeSockets([...this.clients].map((c) => c.ws));
    this.wss.close();
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== '/') return refuseUpgrade(socket, 404, 'NOT_FOUND', `no WebSocket endpoint at ${path}; JSON-RPC over WebSocket is at /`);
    if (this.closing) return refuseUpgrade(socket, 503, 'UNAVAILABLE', 'the JSON-RPC endpoint is shutting down');
    if (this.clients.size >= MAX_WS_CLIENTS) return refuseUpgrade(socket, 503, 'UNAVAILABLE', `too many WebSocket clients (${MAX_WS_CLIENTS})`);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, req));
  };

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    if (this.closing) return void ws.terminate();
    const ip = req.socket.remoteAddress ?? '';
    const c: Client = { ws, ip, ctx: this.deps.context(ip), subs: new Map(), alive: true, dropped: false, detach: () => undefined };
    c.detach = this.deps.feed.add(this.sinkOf(c));
    this.clients.add(c);
    ws.on('pong', () => {
      c.alive = true;
    });
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : String(data);
      this.onMessage(c, text).catch((err: Error) => this.deps.log.warn('ws rpc message failed', { error: err.message }));
    });
    ws.on('error', (err) => this.deps.log.debug('ws rpc client error', { remote: ip, error: err.message }));
    ws.on('close', () => {
      c.detach();
      this.clients.delete(c);
    });
  }

  private async onMessage(c: Client, text: string): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.send(c, error(null, RpcCode.Parse, 'parse error: message is not valid JSON'));
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return this.send(c, error(null, RpcCode.InvalidRequest, 'invalid request: empty batch'));
      if (parsed.length > this.deps.maxBatch) return this.send(c, error(null, RpcCode.InvalidRequest, `invalid request: batch larger than ${this.deps.maxBatch}`));
      const out = (await Promise.all(parsed.map((p) => this.answer(c, p)))).filter((x) => x !== undefined);
      if (out.length > 0) this.send(c, out);
      return;
    }
    const res = await this.answer(c, parsed);
    if (res !== undefined) this.send(c, res);
  }

  private async answer(c: Client, req: unknown): Promise<object | undefined> {
    const r = typeof req === 'object' && req !== null && !Array.isArray(req) ? (req as { method?: unknown; id?: unknown; params?: unknown; jsonrpc?: unknown }) : undefined;
    if (r && r.jsonrpc === '2.0' && (r.method === 'eth_subscribe' || r.method === 'eth_unsubscribe')) {
      const params = r.params === undefined ? [] : r.params;
      if (!Array.isArray(params)) return error(r.id, RpcCode.InvalidParams, 'params must be an array');
      const result = r.method === 'eth_subscribe' ? this.subscribe(c, params) : this.unsubscribe(c, params);
      if ('error' in result) return error(r.id, RpcCode.InvalidParams, result.error);
      return r.id === undefined ? undefined : { jsonrpc: '2.0', id: r.id, result: result.ok };
    }
    return this.deps.handle(req, c.ctx);
  }

  private subscribe(c: Client, params: unknown[]): { ok: string } | { error: string } {
    const [kind, opts] = params;
    if (params.length > 2) return { error: `too many arguments, want at most 2` };
    if (c.subs.size >= MAX_SUBSCRIPTIONS) return { error: `too many subscriptions on this connection (${MAX_SUBSCRIPTIONS})` };
    let sub: Subscription;
    if (kind === 'newHeads' || kind === 'syncing') {
      if (opts !== undefined) return { error: `${kind} takes no options` };
      sub = { kind };
    } else if (kind === 'newPendingTransactions') {
      if (opts === true) return { error: 'full pending transactions are not served: subscribe without the flag for hashes' };
      if (opts !== undefined && opts !== false) return { error: 'invalid fullTx flag: expected true or false' };
      sub = { kind };
    } else if (kind === 'logs') {
      const o = opts ?? {};
      if (typeof o === 'object' && o !== null && !Array.isArray(o) && ['fromBlock', 'toBlock', 'blockHash'].some((k) => k in o)) return { error: 'a logs subscription takes address and topics only: it follows new blocks' };
      try {
        const f = logFilter(o);
        sub = { kind, criteria: { addresses: f.addresses, topics: f.topics } };
      } catch (err) {
        return { error: `invalid logs criteria: ${(err as Error).message}` };
      }
    } else {
      return { error: `unknown subscription ${JSON.stringify(kind)}: newHeads, logs, newPendingTransactions or syncing` };
    }
    const id = toHex(randomBytes(16));
    c.subs.set(id, sub);
    return { ok: id };
  }

  private unsubscribe(c: Client, params: unknown[]): { ok: boolean } | { error: string } {
    if (params.length !== 1 || typeof params[0] !== 'string') return { error: 'expected one subscription id' };
    return { ok: c.subs.delete(params[0].toLowerCase()) };
  }

  private sinkOf(c: Client): FeedSink {
    const ids = (kind: SubscriptionKind) => [...c.subs].filter(([, s]) => s.kind === kind);
    return {
      head: (record) => {
        const subs = ids('newHeads');
        if (subs.length === 0) return;
        this.deps
          .header(record)
          .then((h) => {
            for (const [id] of subs) this.notify(c, id, h);
          })
          .catch((err: Error) => this.deps.log.warn('newHeads notification failed', { error: err.message }));
      },
      wantsLogs: () => ids('logs').length > 0,
      logs: (logs: readonly FeedLog[]) => {
        for (const [id, s] of ids('logs')) for (const l of logs) if (logMatches(s.criteria!, l.log)) this.notify(c, id, rpcLog(l.log, l.removed));
      },
      pending: (hash) => {
        for (const [id] of ids('newPendingTransactions')) this.notify(c, id, hash);
      },
    };
  }

  private notify(c: Client, subscription: string, result: unknown): void {
    this.send(c, { jsonrpc: '2.0', method: 'eth_subscription', params: { subscription, result } });
  }

  private send(c: Client, msg: unknown): void {
    if (c.dropped || c.ws.readyState !== WebSocket.OPEN) return;
    const frame = JSON.stringify(msg);
    const backlog = c.ws.bufferedAmount;
    if (backlog > 0 && backlog + Buffer.byteLength(frame) > this.maxBuffered) return this.drop(c, `its unsent backlog would pass ${this.maxBuffered} bytes`);
    c.ws.send(frame);
  }

  private heartbeat(): void {
    for (const c of this.clients) {
      if (c.dropped || c.ws.readyState !== WebSocket.OPEN) continue;
      if (!c.alive) {
        this.drop(c, 'it answered no ping');
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }

  private drop(c: Client, why: string): void {
    if (c.dropped) return;
    c.dropped = true;
    this.deps.log.info(`ws rpc client dropped: ${why}`, { remote: c.ip });
    c.ws.terminate();
  }
}
