/**
 * Polled JSON-RPC filters, as geth serves them: eth_newBlockFilter, eth_newPendingTransactionFilter
 * and eth_newFilter install one and answer its id; eth_getFilterChanges answers what arrived since
 * the last poll (block hashes, transaction hashes, or logs with `removed` on a reorg);
 * eth_getFilterLogs answers a log filter's whole range as eth_getLogs would; eth_uninstallFilter
 * removes one. Memory is bounded three ways: a filter not polled for FILTER_TIMEOUT_MS is dropped
 * (geth's 5 minutes), one holding MAX_FILTER_CHANGES unpolled changes is dropped rather than grown,
 * and at most MAX_FILTERS are installed. A dropped filter's id answers "filter not found" naming
 * why, so a client knows to install it again.
 */
import { randomBytes } from 'node:crypto';
import { toHex } from '../../../core/codec/bytes.js';
import { topicsMatch } from '../logs.js';
import type { FeedLog, FeedSink, RpcFeed } from './rpc-feed.js';
import { rpcLog } from './rpc-format.js';
import { type FilterStore, logFilter, type Method, param, type RpcLogFilter, RpcCode, RpcError } from './rpc-params.js';

/** A filter not polled for this long is dropped (geth's deadline). */
export const FILTER_TIMEOUT_MS = 5 * 60_000;
/** Most changes one filter holds between polls; past it the filter is dropped. */
export const MAX_FILTER_CHANGES = 10_000;
/** Most filters installed at once on one node. */
export const MAX_FILTERS = 2_048;
/** How many dropped ids are remembered with their reason. */
const DROPPED_MEMORY = 1_024;

type FilterKind = 'block' | 'pending' | 'logs';

interface Installed {
  kind: FilterKind;
  /** The eth_newFilter object as given (eth_getFilterLogs runs eth_getLogs with it). */
  raw?: unknown;
  criteria?: RpcLogFilter;
  changes: unknown[];
  polledAt: number;
}

/** Tunables (tests shorten them). */
export interface FilterOptions {
  now?: () => number;
  timeoutMs?: number;
  maxChanges?: number;
  maxFilters?: number;
  sweepIntervalMs?: number;
}

/** Whether a log is inside a filter's numeric block range (tags follow the chain: no bound). */
function inRange(f: RpcLogFilter, blockNumber: number): boolean {
  if ('blockHash' in f.range) return false;
  const { from, to } = f.range;
  if ('number' in from && blockNumber < from.number) return false;
  if ('number' in to && blockNumber > to.number) return false;
  return true;
}

/** Whether a log matches a filter's addresses and topics. */
export function logMatches(f: Pick<RpcLogFilter, 'addresses' | 'topics'>, log: FeedLog['log']): boolean {
  return (f.addresses.length === 0 || f.addresses.includes(log.address)) && topicsMatch(log, f.topics);
}

/** The installed filters of one node, fed by its RpcFeed. */
export class RpcFilters implements FilterStore {
  private readonly filters = new Map<string, Installed>();
  private readonly dropped = new Map<string, string>();
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly maxChanges: number;
  private readonly maxFilters: number;
  private readonly timer: NodeJS.Timeout;
  private readonly detach: () => void;
  private logFilters = 0;

  constructor(feed: RpcFeed, opts: FilterOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? FILTER_TIMEOUT_MS;
    this.maxChanges = opts.maxChanges ?? MAX_FILTER_CHANGES;
    this.maxFilters = opts.maxFilters ?? MAX_FILTERS;
    const sink: FeedSink = {
      head: (r) => this.push('block', () => r.hash),
      pending: (hash) => this.push('pending', () => hash),
      wantsLogs: () => this.logFilters > 0,
      logs: (logs) => this.pushLogs(logs),
    };
    this.detach = feed.add(sink);
    this.timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 30_000);
    this.timer.unref();
  }

  /** Installed filters. */
  get size(): number {
    return this.filters.size;
  }

  /** Installs a filter and returns its id (0x and 16 random bytes, as geth's). */
  install(kind: FilterKind, raw?: unknown, criteria?: RpcLogFilter): string {
    this.sweep();
    if (this.filters.size >= this.maxFilters) throw new RpcError(RpcCode.Server, `too many filters installed (${this.maxFilters}): uninstall some, or let unpolled ones expire after ${this.timeoutMs / 1000} s`);
    const id = toHex(randomBytes(16));
    this.filters.set(id, { kind, raw, ...(criteria ? { criteria } : {}), changes: [], polledAt: this.now() });
    if (kind === 'logs') this.logFilters++;
    return id;
  }

  /** What arrived since the last poll; resets the filter's deadline. */
  changes(id: string): unknown[] {
    const f = this.get(id);
    f.polledAt = this.now();
    const out = f.changes;
    f.changes = [];
    return out;
  }

  /** The eth_newFilter object of a log filter (eth_getFilterLogs); resets its deadline. */
  logQuery(id: string): unknown {
    const f = this.get(id);
    if (f.kind !== 'logs') throw new RpcError(RpcCode.Server, `filter ${id} is a ${f.kind} filter, not a log filter`);
    f.polledAt = this.now();
    return f.raw;
  }

  /** Removes a filter; false when there was none. */
  uninstall(id: string): boolean {
    const f = this.filters.get(id);
    if (!f) return false;
    this.remove(id, f);
    return true;
  }

  /** Drops filters not polled within the deadline. */
  sweep(): void {
    const limit = this.now() - this.timeoutMs;
    for (const [id, f] of this.filters) if (f.polledAt < limit) this.drop(id, f, `it was not polled for ${this.timeoutMs / 1000} s`);
  }

  /** Stops the sweep timer and leaves the feed. */
  close(): void {
    clearInterval(this.timer);
    this.detach();
  }

  private get(id: string): Installed {
    const f = typeof id === 'string' ? this.filters.get(id.toLowerCase()) : undefined;
    if (!f) {
      const why = typeof id === 'string' ? this.dropped.get(id.toLowerCase()) : undefined;
      throw new RpcError(RpcCode.Server, why ? `filter not found: ${id} was dropped because ${why}` : 'filter not found');
    }
    return f;
  }

  private push(kind: FilterKind, item: () => unknown): void {
    let value: unknown;
    for (const [id, f] of this.filters) {
      if (f.kind !== kind) continue;
      value ??= item();
      this.append(id, f, [value]);
    }
  }

  private pushLogs(logs: readonly FeedLog[]): void {
    for (const [id, f] of this.filters) {
      if (f.kind !== 'logs') continue;
      const crit = f.criteria!;
      const hits = logs.filter((l) => inRange(crit, l.log.blockNumber) && logMatches(crit, l.log)).map((l) => rpcLog(l.log, l.removed));
      if (hits.length > 0) this.append(id, f, hits);
    }
  }

  private append(id: string, f: Installed, items: unknown[]): void {
    if (f.changes.length + items.length > this.maxChanges) return this.drop(id, f, `more than ${this.maxChanges} changes were not polled`);
    for (const i of items) f.changes.push(i);
  }

  private drop(id: string, f: Installed, why: string): void {
    this.remove(id, f);
    this.dropped.set(id, why);
    if (this.dropped.size > DROPPED_MEMORY) this.dropped.delete(this.dropped.keys().next().value!);
  }

  private remove(id: string, f: Installed): void {
    this.filters.delete(id);
    if (f.kind === 'logs') this.logFilters--;
  }
}

/** A filter id parameter: 0x hex. */
function filterId(v: unknown): string {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(v)) throw new Error(`expected a 0x hex filter id, got ${JSON.stringify(v)}`);
  return v.toLowerCase();
}

/** The filter methods; `getLogs` is eth_getLogs, which eth_getFilterLogs runs with the filter's object. */
export function filterMethods(getLogs: Method) {
  return {
    eth_newBlockFilter: (_p, _n, _c, env) => env.filters.install('block'),
    eth_newPendingTransactionFilter: (p, _n, _c, env) => {
      // geth takes an optional fullTx flag; only hashes are served.
      if (p[0] === true) throw new RpcError(RpcCode.InvalidParams, 'full pending transactions are not served: omit the flag or pass false for hashes');
      if (p[0] !== undefined && p[0] !== false) throw new RpcError(RpcCode.InvalidParams, 'invalid fullTx flag: expected true or false');
      return env.filters.install('pending');
    },
    eth_newFilter: (p, _n, _c, env) => {
      const crit = param(p, 0, logFilter, 'filter')!;
      if ('blockHash' in crit.range) throw new RpcError(RpcCode.InvalidParams, 'invalid filter: blockHash cannot be used with eth_newFilter (use eth_getLogs)');
      return env.filters.install('logs', p[0], crit);
    },
    eth_getFilterChanges: (p, _n, _c, env) => env.filters.changes(param(p, 0, filterId, 'filter id')!),
    eth_getFilterLogs: (p, n, c, env) => getLogs([env.filters.logQuery(param(p, 0, filterId, 'filter id')!)], n, c, env),
    eth_uninstallFilter: (p, _n, _c, env) => env.filters.uninstall(param(p, 0, filterId, 'filter id')!),
  } satisfies Record<string, Method>;
}
