/**
 * A small typed client for the execution layer's REST API (`{execution_url}`, default port 8546),
 * its URLs built from the route table (src/api/routes/execution.ts), on node:http keep-alive connections (src/util/http-client.ts). Every request has a deadline; every failure is an ExecutionClientError
 * whose `code` is the server's envelope code, or UNREACHABLE / TIMEOUT / BAD_RESPONSE.
 */
import { SvcError } from '../core/errors.js';
import type { RelayedStatus } from '../api/errors.js';
import { encodeEnvelopeList } from '../core/types/transaction.js';
import { runningDevnet } from './devnet-manifest.js';
import { type JsonExchange, envelopeError, exchangeJson, isTimeout, transportReason } from './http.js';
import * as routes from '../api/routes/execution.js';
import { type PathParams, type QueryValues, type Route, routeUrl } from '../api/routes/route.js';
import type {
  AccountView,
  BatchSubmitResult,
  BlockView,
  CallRequestBody,
  CallView,
  CodeView,
  EstimateGasView,
  FaucetClaimView,
  HealthView,
  LogsQuery,
  LogsView,
  MempoolEntryJson,
  MempoolView,
  StorageView,
  SubmitView,
  TxStatus,
} from '../api/execution.js';

/** Where the execution REST API listens when nothing else is configured. */
export const DEFAULT_EXECUTION_URL = 'http://127.0.0.1:8546';

/** Per-request deadline unless the caller sets another. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** A failed call to the execution node. `httpStatus` is absent when no HTTP answer arrived. */
export class ExecutionClientError extends SvcError implements RelayedStatus {
  readonly httpStatus: number | undefined;
  /** A server passing this failure on answers with the status the remote answered, or the code's row when no answer arrived. */
  get relayStatus(): number | undefined {
    return this.httpStatus;
  }

  constructor(code: string, message: string, httpStatus?: number, options?: { cause?: unknown }) {
    super(code, message, options);
    this.httpStatus = httpStatus;
  }
}

/**
 * The execution URL in effect: `--execution-url`, else SVC_EXECUTION_URL, else the running devnet's
 * (`svc devnet up`), else the default.
 * Returns it normalised (no trailing slash); a bad value is INVALID_URL naming its source.
 */
export function resolveExecutionUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolveNodeUrl(flag, env, { flag: '--execution-url', envVar: 'SVC_EXECUTION_URL', endpoint: 'execution', fallback: DEFAULT_EXECUTION_URL });
}

/** A node URL in effect: the flag, else the environment variable, else the running devnet's endpoint, else `fallback`. */
export function resolveNodeUrl(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  o: { flag: string; envVar: string; endpoint: 'execution' | 'beacon'; fallback: string },
): string {
  if (flag !== undefined) return parseExecutionUrl(flag, o.flag);
  const fromEnv = env[o.envVar];
  if (fromEnv !== undefined && fromEnv !== '') return parseExecutionUrl(fromEnv, o.envVar);
  return runningDevnet(env)?.endpoints[o.endpoint] ?? o.fallback;
}

/** Validates an http(s) base URL (a path prefix is allowed, e.g. behind a proxy) and drops trailing slashes. */
export function parseExecutionUrl(value: string, source: string): string {
  const bad = (why: string) => new SvcError('INVALID_URL', `${source} must be an http:// or https:// URL${why}, got ${JSON.stringify(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad('');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('');
  if (url.username || url.password) throw bad(' without credentials');
  if (url.search || url.hash) throw bad(' without a query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (docs/execution.md). Where the node declares a shape, it is imported as a type only:
// erased at compile time, so the client still depends on nothing but the HTTP interface.



const TX_HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** Validates a transaction hash before it goes on the wire (same message as the server's). */
export function parseTxHash(value: string): string {
  if (!TX_HASH_RE.test(value)) throw new SvcError('MALFORMED_INPUT', 'malformed transaction hash: expected 0x and 64 hex digits');
  return value.toLowerCase();
}

export interface ExecutionClientOptions {
  /** Deadline of each request in ms (default 10 s). */
  timeoutMs?: number;
}

export interface RequestOptions {
  /** Deadline of this request in ms, instead of the client's. */
  timeoutMs?: number;
}

export class ExecutionClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(baseUrl: string, opts: ExecutionClientOptions = {}) {
    this.baseUrl = parseExecutionUrl(baseUrl, 'execution URL');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** GET /health; refuses a server that is not an execution node. */
  async health(opts?: RequestOptions): Promise<HealthView> {
    const path = routeUrl(routes.health, {});
    const what = `${routes.health.method} ${path}`;
    const h = object(await this.request(routes.health.method, path, undefined, opts), what);
    if (h.layer !== 'execution' || typeof h.chain_id !== 'string') {
      throw new ExecutionClientError('BAD_RESPONSE', `${this.baseUrl} is not an execution node (${what} answered layer ${JSON.stringify(h.layer ?? null)})`);
    }
    return h as unknown as HealthView;
  }

  /** Balance and nonces of an address at the head. */
  async account(address: string, opts?: RequestOptions): Promise<AccountView> {
    return this.data(routes.account, { address: checkAddress(address) }, undefined, undefined, opts);
  }

  /** Submits a signed envelope to the pool: bytes go as SSZ (application/octet-stream), a 0x string as JSON `{raw}`. */
  submitRaw(raw: string | Uint8Array, opts?: RequestOptions): Promise<SubmitView> {
    return this.data(routes.submitTransaction, {}, undefined, typeof raw === 'string' ? { raw } : raw, opts);
  }

  /** Submits up to MAX_TX_BATCH signed envelopes in one SSZ envelope list; each entry is accepted or refused on its own. */
  submitBatch(envelopes: readonly Uint8Array[], opts?: RequestOptions): Promise<BatchSubmitResult> {
    return this.data(routes.submitBatch, {}, undefined, encodeEnvelopeList(envelopes), opts);
  }

  /** Lifecycle state of a transaction. */
  txStatus(hash: string, opts?: RequestOptions): Promise<TxStatus> {
    return this.data(routes.transaction, { hash: parseTxHash(hash) }, undefined, undefined, opts);
  }

  /** The pool's contents. */
  async mempool(opts?: RequestOptions): Promise<MempoolView> {
    const path = routeUrl(routes.mempool, {});
    const what = `${routes.mempool.method} ${path}`;
    const o = object(await this.request(routes.mempool.method, path, undefined, opts), what);
    if (typeof o.count !== 'number' || !Array.isArray(o.transactions)) throw this.badResponse(what, 'no count and transactions');
    return { count: o.count, transactions: o.transactions as MempoolEntryJson[] };
  }

  /** Asks the faucet for its fixed amount; a cooldown is FAUCET_COOLDOWN (HTTP 429). */
  async faucetClaim(address: string, opts?: RequestOptions): Promise<FaucetClaimView> {
    const path = routeUrl(routes.faucetClaim, {});
    const what = `${routes.faucetClaim.method} ${path}`;
    const o = object(await this.request(routes.faucetClaim.method, path, { address }, opts), what);
    if (typeof o.tx_hash !== 'string' || typeof o.amount !== 'string') throw this.badResponse(what, 'no tx_hash and amount');
    return { address: typeof o.address === 'string' ? o.address : address.toLowerCase(), tx_hash: o.tx_hash, amount: o.amount };
  }

  /** A block by height, 0x hash, `latest`, `finalized` or `earliest`. */
  block(id: string | number, opts?: RequestOptions): Promise<BlockView> {
    return this.data(routes.block, { id: String(id) }, undefined, undefined, opts);
  }

  /** The deployed code of a contract at a block (default latest). */
  code(address: string, block?: string, opts?: RequestOptions): Promise<CodeView> {
    return this.data(routes.contractCode, { address: checkAddress(address) }, { block }, undefined, opts);
  }

  /** One 32-byte storage slot of a contract at a block (default latest). */
  storage(address: string, key: string, block?: string, opts?: RequestOptions): Promise<StorageView> {
    return this.data(routes.contractStorage, { address: checkAddress(address), key }, { block }, undefined, opts);
  }

  /** Runs a read-only call (no transaction); a revert is EXECUTION_REVERTED with the reason. */
  call(req: CallBody, opts?: RequestOptions): Promise<CallView> {
    return this.data(routes.call, {}, undefined, req, opts);
  }

  /** The least gas limit under which a deployment or call succeeds. */
  estimateGas(req: CallBody, opts?: RequestOptions): Promise<EstimateGasView> {
    return this.data(routes.estimateGas, {}, undefined, req, opts);
  }

  /** Logs of canonical blocks by range, emitters and topics (each position: alternatives). */
  logs(q: LogsRequest, opts?: RequestOptions): Promise<LogsView> {
    const query: LogsQuery = {};
    if (q.address?.length) query.address = q.address.join(',');
    if (q.from !== undefined) query.from = q.from;
    if (q.to !== undefined) query.to = q.to;
    q.topics?.forEach((t, i) => t && t.length && (query[`topic${i}` as 'topic0'] = t.join(',')));
    return this.data(routes.logs, {}, query, undefined, opts);
  }

  /** A `{success: true, data}` route: returns `data`. */
  private async data<P extends string, Res, Req, Q extends QueryValues | undefined>(r: Route<P, Res, Req, Q>, params: PathParams<P>, query: Q | undefined, body: Req | undefined, opts: RequestOptions | undefined): Promise<Res> {
    const path = routeUrl(r, params, query);
    const o = object(await this.request(r.method, path, body, opts), `${r.method} ${path}`);
    if (o.success !== true || !('data' in o)) throw this.badResponse(`${r.method} ${path}`, 'no {success: true, data} envelope');
    return o.data as Res;
  }

  /** One HTTP exchange: JSON in and out, the error envelope mapped to ExecutionClientError. */
  private async request(method: string, path: string, body: unknown, opts: RequestOptions | undefined): Promise<unknown> {
    const url = this.baseUrl + path;
    const timeoutMs = opts?.timeoutMs ?? this.timeoutMs;
    let x: JsonExchange;
    try {
      x = await exchangeJson(url, method, body, {}, timeoutMs);
    } catch (err) {
      if (isTimeout(err)) throw new ExecutionClientError('TIMEOUT', `the execution node at ${this.baseUrl} did not answer ${method} ${path} within ${formatSeconds(timeoutMs)}`, undefined, { cause: err });
      throw new ExecutionClientError(
        'UNREACHABLE',
        `cannot reach the execution node at ${this.baseUrl} (${transportReason(err)}): start one with \`svc node execution\`, or point --execution-url (or SVC_EXECUTION_URL) at a running node`,
        undefined,
        { cause: err },
      );
    }
    const { res, json } = x;
    if (!res.ok) {
      const env = envelopeError(json);
      if (env) throw new ExecutionClientError(env.code, env.message, res.status);
      throw new ExecutionClientError('HTTP_ERROR', `${method} ${url} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, res.status);
    }
    if (json === undefined) throw this.badResponse(`${method} ${path}`, 'the body is not JSON');
    return json;
  }

  private badResponse(what: string, why: string): ExecutionClientError {
    return new ExecutionClientError('BAD_RESPONSE', `unexpected answer from ${this.baseUrl} to ${what}: ${why} (is this an svc execution node?)`);
  }
}

/** Body of POST /call and /estimate-gas. */
export type CallBody = CallRequestBody;

/** Query of GET /logs. */
export interface LogsRequest {
  address?: string[];
  from?: number | string;
  to?: number | string;
  topics?: Array<string[] | null>;
}

function checkAddress(address: string): string {
  if (!ADDRESS_RE.test(address)) throw new SvcError('MALFORMED_INPUT', 'malformed address: expected a 0x-prefixed 20-byte hex address');
  return address.toLowerCase();
}

function object(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ExecutionClientError('BAD_RESPONSE', `unexpected answer to ${what}: not a JSON object`);
  return v as Record<string, unknown>;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
