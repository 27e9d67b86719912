/**
 * The one client of the execution node's engine API (src/api/routes/engine.ts) and of the few
 * execution reads its callers make: the beacon drives execution with it (newPayload,
 * forkchoiceUpdated, getPayload, registry, proofs, counterparts, balances). URLs come from the
 * route table; the engine API answers loopback callers, or callers with an HS256 JWT (`jwt` mints one per request).
 *
 * Every answer goes through one decoder (`decode`), which names what went wrong as a Failure; the
 * caller's wording turns it into an EngineError. A beacon's link to its execution node (`chain`
 * given) reports EXECUTION_UNREACHABLE (503) and EXECUTION_ERROR, the codes the beacon serves on;
 * any other caller sees the client codes UNREACHABLE / TIMEOUT / BAD_RESPONSE / HTTP_ERROR, as
 * the beacon and execution clients do. Either way an error envelope keeps execution's code.
 */
import { SvcError, WrongChainError } from '../core/errors.js';
import type { RelayedStatus } from '../api/errors.js';
import { JSON_MEDIA_TYPE, SSZ_MEDIA_TYPE } from '../api/media.js';
import type { AccountView, EngineChainConfig, ForkchoiceView, ImportResult, PendingTransactionsView, RegistryEntry, SubmitView, TxStatus } from '../api/execution.js';
import type { CounterpartsView } from '../api/bridge.js';
import { decodeImportAnswer } from '../api/import-answer.js';
import { engineConfig, engineRegistry, forkchoiceUpdated, getPayload, getPendingTransactions, newPayload } from '../api/routes/engine.js';
import { decodePayload, type Payload, type PayloadQuery } from '../api/block-production.js';
import { account, accountProof, bridgeCounterparts, registryProof, submitTransaction, transaction } from '../api/routes/execution.js';
import { type RegistryProofWire, mergeRegistryPages } from '../core/light/registry.js';
import { type PathParams, type QueryValues, type Route, routeUrl } from '../api/routes/route.js';
import type { AccountProofWire } from '../core/state/trie.js';
import { type Transaction, decodeEnvelopeList, decodeTx, encodeTx } from '../core/types/transaction.js';
import { txFromJson } from '../core/types/transaction-json.js';
import { HttpClient, type HttpAnswer, jsonBody } from '../util/http-client.js';
import { envelopeError, exchange, isTimeout, transportReason } from './http.js';
import { parseExecutionUrl } from './execution.js';

export type { EngineChainConfig } from '../api/execution.js';

/** Deadline of a beacon's engine calls, answer included. */
const LINK_TIMEOUT_MS = 30_000;
/** Deadline of any other caller's calls. */
const CLIENT_TIMEOUT_MS = 10_000;

/**
 * A failed call to the execution node. `httpStatus` is what execution answered (absent when no
 * answer arrived); `relayStatus` is the one a server passing the failure on answers with.
 * `transport` is true when no answer arrived (connection refused, reset, cut off, deadline).
 */
export class EngineError extends SvcError implements RelayedStatus {
  constructor(
    code: string,
    message: string,
    readonly relayStatus: number,
    readonly httpStatus: number | undefined,
    readonly transport: boolean,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** What went wrong with one call, before the caller's wording names it. */
type Failure =
  /** No complete answer: a socket error, a cut-off body, the deadline, or close(). */
  | { kind: 'transport'; err: unknown }
  /** Execution's error envelope. */
  | { kind: 'envelope'; code: string; message: string; httpStatus: number }
  /** An answer that is not the envelope the route promises (non-2xx without an error envelope, or 2xx without `{success: true, data}`). */
  | { kind: 'unexpected'; httpStatus: number; statusText: string; why: string }
  /** An answer whose content does not decode (an SSZ body, or a field the caller relies on). */
  | { kind: 'malformed'; ssz: boolean; why: string };

/** One call, for the wording. */
interface Call {
  method: string;
  path: string;
  timeoutMs: number;
}

export interface EngineClientOptions {
  /**
   * The chain execution must run (a beacon's link): state-changing calls go only to a node whose
   * chain was checked, and failures are worded EXECUTION_UNREACHABLE / EXECUTION_ERROR.
   */
  chain?: EngineChainConfig;
  /** Makes the engine JWT sent as `Authorization: Bearer` on every call. */
  jwt?: () => string;
  /** Deadline of each call, answer included (default 30 s for a link, else 10 s). */
  timeoutMs?: number;
}

export interface EngineRequestOptions {
  /** Deadline of this call in ms, instead of the client's. */
  timeoutMs?: number;
}

/** Execution's pending transactions as the proposer packs them (see EngineClient.pendingTransactions). */
export interface PendingTransactions {
  /** Entries execution offered (decoded or not). */
  count: number;
  transactions: Transaction[];
  /** Each decoded transaction's envelope bytes, as execution sent them. */
  envelopes: Uint8Array[];
  /** The first entry that does not parse; it and everything after it were left out. */
  malformed?: { position: number; message: string };
}

/** How a call's answer is wanted: JSON data, or SSZ bytes decoded by `ssz` when execution sends them. */
interface Want<T> {
  ssz?: (bytes: Uint8Array) => T;
  timeoutMs?: number;
}

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

export class EngineClient {
  readonly baseUrl: string;
  /** True once execution's chain was checked and nothing since suggests it may have changed. */
  private verified = false;
  /** Why the link to execution is down (unreachable or another chain); undefined while it works. */
  private problem: SvcError | undefined;
  /** Keep-alive connections of this client alone, so close() can end its calls: fetch cost about 4× the CPU per call on a 2-core devnet. */
  private readonly http: HttpClient;
  private readonly timeoutMs: number;

  constructor(
    baseUrl: string,
    private readonly opts: EngineClientOptions = {},
  ) {
    this.baseUrl = parseExecutionUrl(baseUrl, 'execution URL');
    this.http = new HttpClient(new URL(this.baseUrl).origin, { maxSockets: 4 });
    this.timeoutMs = opts.timeoutMs ?? (opts.chain ? LINK_TIMEOUT_MS : CLIENT_TIMEOUT_MS);
  }

  /** Ends calls in flight (as unreachable) and closes the connections; for shutdown. */
  close(): void {
    this.http.close();
  }

  /** Execution's chain (the engine configuration exchange). */
  config(): Promise<EngineChainConfig> {
    return this.call(engineConfig, {}, undefined, undefined);
  }

  /**
   * Asks execution which chain it runs and compares it with `chain`: throws WRONG_CHAIN (naming
   * both chain ids and genesis hashes) on a mismatch, EXECUTION_UNREACHABLE when it does not
   * answer. Either way nothing more is sent to it until a later check passes.
   */
  async checkChain(): Promise<EngineChainConfig> {
    let got: EngineChainConfig;
    try {
      got = await this.config();
    } catch (err) {
      this.verified = false;
      if (err instanceof EngineError && !err.transport) this.problem = err;
      throw err;
    }
    const e = this.opts.chain;
    if (e && (got.chain_id !== e.chain_id || got.genesis_hash !== e.genesis_hash || got.network_id !== e.network_id)) {
      this.verified = false;
      this.problem = new WrongChainError(
        `execution at ${this.baseUrl} runs another chain: chain id ${JSON.stringify(got.chain_id)} (network ${got.network_id}), genesis ${got.genesis_hash}; ` +
          `this beacon runs chain id ${JSON.stringify(e.chain_id)} (network ${e.network_id}), genesis ${e.genesis_hash}`,
      );
      throw this.problem;
    }
    this.verified = true;
    this.problem = undefined;
    return got;
  }

  /** Why execution cannot be driven now (EXECUTION_UNREACHABLE, WRONG_CHAIN, …), or undefined. */
  linkProblem(): SvcError | undefined {
    return this.problem;
  }

  /**
   * Validates and applies a block given as its SSZ bytes (`encodeBlock`); execution re-verifies
   * everything. Asks for the compact answer: receipts are parsed only if read, and its receipts'
   * outcomes say which are worth reading (`receiptsWhere`).
   */
  async newPayload(ssz: Uint8Array): Promise<ImportResult> {
    await this.checked();
    return this.call(newPayload, {}, undefined, ssz, { ssz: decodeImportAnswer });
  }

  /** Makes `head` canonical and records `finalized`. */
  async forkchoiceUpdated(head: string, finalized: string): Promise<ForkchoiceView> {
    await this.checked();
    return this.call(forkchoiceUpdated, {}, undefined, { head_block_hash: head, finalized_block_hash: finalized });
  }

  /**
   * Waits until execution answers (a beacon and its execution node are often started together):
   * retries an unreachable engine every 250 ms until `timeoutMs`, then throws the last error.
   */
  async waitUntilReachable(timeoutMs: number, onWaiting: () => void): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let first = true; ; first = false) {
      try {
        await this.registry();
        return;
      } catch (err) {
        if (!(err instanceof EngineError) || !err.transport || Date.now() > deadline) throw err;
        if (first) onWaiting();
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Execution's validator registry (genesis plus deposits and exits). */
  async registry(): Promise<RegistryEntry[]> {
    return (await this.call(engineRegistry, {}, undefined, undefined)).validators;
  }

  /** Account (and storage) proof against the post-state of block `blockHash` (public REST); execution's code on failure (STATE_PRUNED, NOT_FOUND). */
  accountProof(address: string, blockHash: string, keys: readonly string[]): Promise<AccountProofWire & { block_hash: string }> {
    return this.call(accountProof, { address }, { block: blockHash, keys: keys.length > 0 ? keys.join(',') : undefined }, undefined);
  }

  /** The whole registry in the post-state of block `blockHash`, with its proofs, fetched page by page (public REST). */
  async registryProof(blockHash: string): Promise<RegistryProofWire> {
    const pages: RegistryProofWire[] = [];
    for (let from = 0; ; ) {
      const { block_hash: _h, block_number: _n, ...page } = await this.call(registryProof, {}, { block: blockHash, from: String(from) }, undefined);
      pages.push(page);
      from += page.entries.length;
      if (from >= page.count || page.entries.length === 0) return mergeRegistryPages(pages);
    }
  }

  /** This chain and the bridge counterparts registered in execution's head state (public REST). */
  counterparts(): Promise<CounterpartsView> {
    return this.call(bridgeCounterparts, {}, undefined, undefined);
  }

  /** Balance of an address (public REST). */
  async balance(address: string): Promise<string> {
    return (await this.account(address)).balance;
  }

  /** An account as execution's head state and pool see it (public REST). */
  account(address: string): Promise<AccountView> {
    return this.call(account, { address }, undefined, undefined);
  }

  /** Submits a signed envelope to execution's pool (public REST); a link sends only to a node whose chain it checked. */
  async submitRaw(envelope: Uint8Array): Promise<SubmitView> {
    await this.checked();
    return this.call(submitTransaction, {}, undefined, envelope);
  }

  /** A transaction's lifecycle state (public REST). */
  txStatus(hash: string): Promise<TxStatus> {
    return this.call(transaction, { hash }, undefined, undefined);
  }

  /**
   * Pending transactions in build order, packed under the gas cap, asked for as SSZ (an envelope
   * list); an execution node that answers JSON is read too. Each entry is decoded; decoding stops
   * at the first entry that does not parse (a later one of its sender may depend on its nonce),
   * which `malformed` reports. `envelopes[i]` is the encoding of `transactions[i]`, as execution
   * sent it, so a block built from them need not encode them again.
   */
  async pendingTransactions(opts?: EngineRequestOptions): Promise<PendingTransactions> {
    const c = this.callOf(getPendingTransactions, {}, undefined, opts);
    const answer = await this.call<PendingTransactionsView | Uint8Array[], typeof getPendingTransactions.path, { max_gas?: string | bigint }>(getPendingTransactions, {}, undefined, undefined, {
      ...opts,
      ssz: (bytes) => {
        try {
          return decodeEnvelopeList(bytes);
        } catch (err) {
          throw this.failed(c, { kind: 'malformed', ssz: true, why: (err as Error).message });
        }
      },
    });
    const out: PendingTransactions = { count: 0, transactions: [], envelopes: [] };
    const take = (tx: Transaction, envelope: Uint8Array): void => {
      out.transactions.push(tx);
      out.envelopes.push(envelope);
    };
    if (Array.isArray(answer)) {
      out.count = answer.length;
      for (const [i, envelope] of answer.entries()) {
        try {
          take(decodeTx(envelope), envelope);
        } catch (err) {
          out.malformed = { position: i, message: (err as Error).message };
          break;
        }
      }
      return out;
    }
    const d = this.object(c, answer) as Partial<PendingTransactionsView> & Record<string, unknown>;
    if (!Array.isArray(d.transactions)) throw this.failed(c, { kind: 'malformed', ssz: false, why: 'transactions is not an array' });
    if (typeof d.count !== 'number' || !Number.isSafeInteger(d.count) || d.count < 0) throw this.failed(c, { kind: 'malformed', ssz: false, why: 'count: expected a non-negative integer' });
    out.count = d.transactions.length;
    for (const [i, json] of d.transactions.entries()) {
      try {
        const tx = txFromJson(json);
        take(tx, encodeTx(tx));
      } catch (err) {
        out.malformed = { position: i, message: (err as Error).message };
        break;
      }
    }
    return out;
  }

  /**
   * What a block on `parent` is built from, in one call, asked for as SSZ: the parent's
   * post-state root and the pending envelopes in build order (none of them decoded here).
   * `proposer`'s own RANDAO re-commitment (and its later nonces) is left out unless `ownRecommit`.
   */
  async payload(parent: string, proposer: string, ownRecommit: boolean, opts?: EngineRequestOptions): Promise<Payload> {
    const query: PayloadQuery = { parent, proposer, own_recommit: ownRecommit };
    const c = this.callOf(getPayload, {}, query, opts);
    // The one decoder already words an SSZ answer that does not decode as a malformed answer.
    const answer = await this.call<Payload | unknown, typeof getPayload.path, PayloadQuery>(getPayload, {}, query, undefined, { ...opts, ssz: decodePayload });
    if (typeof answer === 'object' && answer !== null && 'envelopes' in answer && (answer as Payload).stateRoot instanceof Uint8Array) return answer as Payload;
    // An execution node that answers JSON: the same payload, each transaction encoded.
    const d = this.object(c, answer);
    if (typeof d.state_root !== 'string' || !HASH_RE.test(d.state_root)) throw this.failed(c, { kind: 'malformed', ssz: false, why: 'state_root: expected 0x and 64 hex digits' });
    if (!Array.isArray(d.transactions)) throw this.failed(c, { kind: 'malformed', ssz: false, why: 'transactions is not an array' });
    const envelopes: Uint8Array[] = [];
    for (const [i, json] of d.transactions.entries()) {
      try {
        envelopes.push(encodeTx(txFromJson(json)));
      } catch (err) {
        throw this.failed(c, { kind: 'malformed', ssz: false, why: `transaction ${i}: ${(err as Error).message}` });
      }
    }
    return { stateRoot: Buffer.from(d.state_root.slice(2), 'hex'), envelopes };
  }

  // Calls that change execution's state go only to a node whose chain was checked (a link only).
  private async checked(): Promise<void> {
    if (this.opts.chain && !this.verified) await this.checkChain();
  }

  private callOf<P extends string, Q extends QueryValues | undefined>(r: Route<P, unknown, unknown, Q>, params: PathParams<P>, query: Q | undefined, opts: EngineRequestOptions | undefined): Call {
    return { method: r.method, path: routeUrl(r, params, query), timeoutMs: opts?.timeoutMs ?? this.timeoutMs };
  }

  /**
   * One exchange on route `r`: a Uint8Array body goes as SSZ bytes (application/octet-stream),
   * anything else as JSON. With `want.ssz`, the call asks for an SSZ answer and decodes it with
   * that (errors stay JSON); otherwise the answer is the `data` of the JSON envelope.
   */
  private async call<Res, P extends string, Q extends QueryValues | undefined>(r: Route<P, Res, unknown, Q>, params: PathParams<P>, query: Q | undefined, body: unknown, want: Want<Res> = {}): Promise<Res> {
    const c = this.callOf(r, params, query, want);
    const headers: Record<string, string> = { accept: want.ssz ? `${SSZ_MEDIA_TYPE}, ${JSON_MEDIA_TYPE};q=0.9` : JSON_MEDIA_TYPE };
    let payload: string | Uint8Array | undefined;
    if (body instanceof Uint8Array) {
      headers['content-type'] = SSZ_MEDIA_TYPE;
      payload = body;
    } else if (body !== undefined) {
      headers['content-type'] = JSON_MEDIA_TYPE;
      payload = JSON.stringify(body);
    }
    if (this.opts.jwt) headers.authorization = `Bearer ${this.opts.jwt()}`;
    let res: HttpAnswer;
    try {
      res = await exchange(this.baseUrl + c.path, c.method, payload, headers, c.timeoutMs, this.http);
    } catch (err) {
      // Whatever answers on this URL next may be another node (a restart on other data): the
      // chain is checked again before anything is sent to it.
      this.verified = false;
      this.problem = this.failed(c, { kind: 'transport', err });
      throw this.problem;
    }
    if (this.verified) this.problem = undefined;
    return this.decode(c, res, want.ssz);
  }

  /** The one decoder: an SSZ answer through `ssz`, else the `{success: true, data}` envelope's data; anything else is a Failure. */
  private decode<T>(c: Call, res: HttpAnswer, ssz: ((bytes: Uint8Array) => T) | undefined): T {
    if (ssz && res.ok && res.contentType === SSZ_MEDIA_TYPE) {
      try {
        return ssz(res.body);
      } catch (err) {
        if (err instanceof EngineError) throw err;
        throw this.failed(c, { kind: 'malformed', ssz: true, why: (err as Error).message });
      }
    }
    const json = jsonBody(res);
    const o = typeof json === 'object' && json !== null ? (json as { success?: unknown; data?: unknown }) : undefined;
    if (o?.success === true && res.ok && 'data' in o) return o.data as T;
    const env = envelopeError(json);
    if (env && o?.success !== true) throw this.failed(c, { kind: 'envelope', ...env, httpStatus: res.status });
    const why = json === undefined ? 'the body is not JSON' : 'no {success: true, data} envelope';
    throw this.failed(c, { kind: 'unexpected', httpStatus: res.status, statusText: res.statusText, why });
  }

  /** `v` as a JSON object, or the caller's malformed-answer error. */
  private object(c: Call, v: unknown): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw this.failed(c, { kind: 'malformed', ssz: false, why: 'not a JSON object' });
    return v as Record<string, unknown>;
  }

  /** The caller's wording of a failure: a link's EXECUTION_* codes, or the client codes. */
  private failed(c: Call, f: Failure): EngineError {
    return this.opts.chain ? linkError(this.baseUrl, f) : clientError(this.baseUrl, c, f);
  }
}

/** A beacon's link: what the beacon reports while execution cannot be driven, or execution's own code. */
function linkError(baseUrl: string, f: Failure): EngineError {
  switch (f.kind) {
    case 'transport':
      return new EngineError('EXECUTION_UNREACHABLE', `execution engine at ${baseUrl} is unreachable: ${(f.err as Error).message}`, 503, undefined, true, { cause: f.err });
    case 'envelope':
      return new EngineError(f.code, f.message, relayed(f.httpStatus), f.httpStatus, false);
    case 'unexpected':
      return new EngineError('EXECUTION_ERROR', `execution answered HTTP ${f.httpStatus}`, relayed(f.httpStatus), f.httpStatus, false);
    case 'malformed':
      return new EngineError('EXECUTION_ERROR', `execution answered a malformed ${f.ssz ? 'SSZ answer' : 'answer'}: ${f.why}`, 502, undefined, false);
  }
}

/** A server fault of execution stays one (502) for the beacon's own callers; anything else is their request's (400). */
function relayed(httpStatus: number): number {
  return httpStatus >= 500 ? 502 : 400;
}

/** Any other caller: the client codes, naming the execution node and the call. */
function clientError(baseUrl: string, c: Call, f: Failure): EngineError {
  const what = `${c.method} ${c.path}`;
  switch (f.kind) {
    case 'transport':
      if (isTimeout(f.err)) return new EngineError('TIMEOUT', `the execution node at ${baseUrl} did not answer ${what} within ${c.timeoutMs} ms`, 502, undefined, true, { cause: f.err });
      return new EngineError('UNREACHABLE', `cannot reach the execution node at ${baseUrl} (${transportReason(f.err)}): start one with \`svc node execution\`, or point --execution-url at a running node`, 502, undefined, true, { cause: f.err });
    case 'envelope':
      return new EngineError(f.code, f.message, f.httpStatus, f.httpStatus, false);
    case 'unexpected':
      if (f.httpStatus < 200 || f.httpStatus > 299) return new EngineError('HTTP_ERROR', `${c.method} ${baseUrl}${c.path} answered HTTP ${f.httpStatus}${f.statusText ? ` ${f.statusText}` : ''}`, f.httpStatus, f.httpStatus, false);
      return badResponse(baseUrl, what, f.why);
    case 'malformed':
      return badResponse(baseUrl, what, f.why);
  }
}

function badResponse(baseUrl: string, what: string, why: string): EngineError {
  return new EngineError('BAD_RESPONSE', `unexpected answer from the execution node at ${baseUrl} to ${what}: ${why}`, 502, undefined, false);
}
