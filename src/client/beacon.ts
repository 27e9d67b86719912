/**
 * A small typed client for the beacon node's REST API (`{beacon_url}`, default port 8080) as the
 * validator client uses it, on node:http keep-alive connections (src/util/http-client.ts); the
 * calls a proposer makes to execution are the engine client's (src/client/engine.ts). Blocks go to
 * the beacon as SSZ bytes (application/octet-stream). Every request has a deadline; every failure is a
 * BeaconClientError whose `code` is the server's envelope code, or UNREACHABLE / TIMEOUT /
 * BAD_RESPONSE / HTTP_ERROR. Answers are checked for the fields the validator relies on (extra
 * fields are allowed, so the server may grow them); hex is returned lowercase.
 */
import { SvcError } from '../core/errors.js';
import type { RelayedStatus } from '../api/errors.js';
import type { AttestationJson } from '../core/types/attestation.js';
import { SSZ_MEDIA_TYPE } from '../api/media.js';
import { parseExecutionUrl, resolveNodeUrl } from './execution.js';
import { type JsonExchange, envelopeError, exchange, exchangeJson, isTimeout, readJson, transportReason } from './http.js';
import { type BidFields, bidFieldsFromJson } from '../core/bridge/types.js';
import { BID_STATUSES, type BidDirection, type BidSignatureJson, type BidSignatureResult, type BidStatus } from '../api/bridge.js';
import type { AttestResultView, AttestationDataView, BeaconHealthView, CheckpointView, HeadView, ProposeResultView, ProposerDutiesView, RecommitAccountView, RecommitSubmitBody, RecommitSubmitView, ValidatorView } from '../api/beacon.js';
import type { Receipt, TxStatus } from '../api/execution.js';
import { routeUrl } from '../api/routes/route.js';
import { beaconRoutes } from '../api/routes/beacon.js';
import { validatorRoutes } from '../api/routes/validator.js';
import { bridgeRoutes } from '../api/routes/bridge.js';
import { type BlockTemplate, decodeBlockTemplate } from '../api/block-production.js';
import { blockFromJson, encodeBlock } from '../core/types/block.js';
import { parseHex } from '../core/codec/bytes.js';

/** Where the beacon REST API listens when nothing else is configured (SPEC: port 8080). */
export const DEFAULT_BEACON_URL = 'http://127.0.0.1:8080';

/** Per-request deadline unless the caller sets another. */
export const DEFAULT_BEACON_TIMEOUT_MS = 10_000;

/** A failed call to the beacon (or execution) node. `httpStatus` is absent when no HTTP answer arrived. */
export class BeaconClientError extends SvcError implements RelayedStatus {
  readonly httpStatus: number | undefined;
  /** A server passing this failure on answers with the status the remote answered, or the code's row when no answer arrived. */
  get relayStatus(): number | undefined {
    return this.httpStatus;
  }

  constructor(code: string, message: string, httpStatus?: number, options?: { cause?: unknown }) {
    super(code, message, options);
    this.httpStatus = httpStatus;
  }

  /** True when no HTTP answer arrived (connection refused, reset, DNS, deadline). */
  get transport(): boolean {
    return this.httpStatus === undefined && (this.code === 'UNREACHABLE' || this.code === 'TIMEOUT');
  }
}

/**
 * The beacon URL in effect: `--beacon-url`, else SVC_BEACON_URL, else the running devnet's, else the default.
 * Returns it normalised (no trailing slash); a bad value is INVALID_URL naming its source.
 */
export function resolveBeaconUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolveNodeUrl(flag, env, { flag: '--beacon-url', envVar: 'SVC_BEACON_URL', endpoint: 'beacon', fallback: DEFAULT_BEACON_URL });
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (the beacon API contract).

export interface ApiClientOptions {
  /** Deadline of each request in ms (default 10 s). */
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer <token>` on requests that need it; a function is called per request. */
  token?: string | (() => string);
  /** How errors name the server, e.g. "beacon node". */
  name?: string;
  /** Hint appended to UNREACHABLE errors. */
  unreachableHint?: string;
}

export interface RequestOptions {
  /** Deadline of this request in ms, instead of the client's. */
  timeoutMs?: number;
}

const TOKEN_RE = /^[\x21-\x7e]+$/;

/** Validates a bearer token: visible ASCII only, so it can never break the header line. */
export function parseBearerToken(token: string, source = 'token'): string {
  const t = token.trim();
  if (!TOKEN_RE.test(t)) throw new SvcError('INVALID_TOKEN', `${source} must be non-empty printable ASCII without spaces`);
  return t;
}

/** JSON over HTTP with the DECISIONS.md envelope; the shared machinery of the clients below. */
/** The part of the beacon's health view a caller gates on (checked field by field). */
export type BeaconHealthSummary = Pick<BeaconHealthView, 'status' | 'head_slot' | 'current_slot' | 'reason' | 'message'>;

export class JsonApiClient {
  readonly baseUrl: string;
  protected readonly timeoutMs: number;
  protected readonly name: string;
  private readonly token: string | (() => string) | undefined;
  private readonly unreachableHint: string;

  constructor(baseUrl: string, opts: ApiClientOptions = {}) {
    this.name = opts.name ?? 'server';
    this.baseUrl = parseExecutionUrl(baseUrl, `${this.name} URL`);
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_BEACON_TIMEOUT_MS;
    this.token = typeof opts.token === 'string' ? parseBearerToken(opts.token) : opts.token;
    this.unreachableHint = opts.unreachableHint ?? '';
  }

  /** A `{success: true, data}` route: returns `data` as an object. */
  protected async data(method: string, path: string, body: unknown, opts: { auth?: boolean; timeoutMs?: number } = {}): Promise<Record<string, unknown>> {
    const o = object(await this.request(method, path, body, opts), `${method} ${path}`, this);
    if (o.success !== true || !('data' in o)) throw this.badResponse(`${method} ${path}`, 'no {success: true, data} envelope');
    return object(o.data, `${method} ${path}`, this);
  }

  /** One HTTP exchange: JSON in and out, the error envelope mapped to BeaconClientError. */
  protected async request(method: string, path: string, body: unknown, opts: { auth?: boolean; timeoutMs?: number }): Promise<unknown> {
    const x = await this.exchange(method, path, opts, (url, headers, timeoutMs) => exchangeJson(url, method, body, headers, timeoutMs));
    if (x.json === undefined) throw this.badResponse(`${method} ${path}`, 'the body is not JSON');
    return x.json;
  }

  /**
   * One HTTP exchange that sends SSZ bytes when `body` is given and, with `acceptSsz`, takes an SSZ
   * answer: `bytes` is set when the answer is application/octet-stream, else `json` is the parsed
   * body (so a server that answers JSON still works). Errors are mapped as by `request`.
   */
  protected async requestSsz(method: string, path: string, o: { body?: Uint8Array; acceptSsz?: boolean; auth?: boolean; timeoutMs?: number }): Promise<{ bytes?: Uint8Array; json?: unknown }> {
    const x = await this.exchange(method, path, o, (url, headers, timeoutMs) => exchangeSsz(url, method, o.body, o.acceptSsz === true, headers, timeoutMs));
    if (x.bytes === undefined && x.json === undefined) throw this.badResponse(`${method} ${path}`, 'the body is neither JSON nor SSZ bytes');
    return x.bytes === undefined ? { json: x.json } : { bytes: x.bytes };
  }

  private async exchange<X extends JsonExchange>(method: string, path: string, opts: { auth?: boolean; timeoutMs?: number }, send: (url: string, headers: Record<string, string>, timeoutMs: number) => Promise<X>): Promise<X> {
    const url = this.baseUrl + path;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string> = {};
    if (opts.auth && this.token !== undefined) headers.authorization = `Bearer ${typeof this.token === 'string' ? this.token : this.token()}`;
    let x: X;
    try {
      x = await send(url, headers, timeoutMs);
    } catch (err) {
      if (isTimeout(err)) throw new BeaconClientError('TIMEOUT', `the ${this.name} at ${this.baseUrl} did not answer ${method} ${path} within ${timeoutMs} ms`, undefined, { cause: err });
      throw new BeaconClientError('UNREACHABLE', `cannot reach the ${this.name} at ${this.baseUrl} (${transportReason(err)})${this.unreachableHint}`, undefined, { cause: err });
    }
    const { res, json } = x;
    if (!res.ok) {
      const env = envelopeError(json);
      if (env) throw new BeaconClientError(env.code, env.message, res.status);
      throw new BeaconClientError('HTTP_ERROR', `${method} ${url} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, res.status);
    }
    return x;
  }

  /** BAD_RESPONSE naming the route and what was wrong. */
  badResponse(what: string, why: string): BeaconClientError {
    return new BeaconClientError('BAD_RESPONSE', `unexpected answer from the ${this.name} at ${this.baseUrl} to ${what}: ${why}`);
  }
}

/** The beacon routes a validator client uses. */
export class BeaconClient extends JsonApiClient {
  constructor(baseUrl: string, opts: Omit<ApiClientOptions, 'name'> = {}) {
    super(baseUrl, {
      name: 'beacon node',
      unreachableHint: ': start one with `svc node beacon`, or point --beacon-url (or SVC_BEACON_URL) at a running node',
      ...opts,
    });
  }

  /**
   * The beacon's health route (beaconRoutes.health). The beacon answers 503 with the same view while it cannot make
   * progress (execution unreachable or on another chain, or refusing its proposals): that is
   * returned, not thrown, with `reason` and `message` saying why.
   */
  async health(opts?: RequestOptions): Promise<BeaconHealthSummary> {
    const r = beaconRoutes.health;
    const what = `${r.method} ${r.path}`;
    const timeoutMs = opts?.timeoutMs ?? this.timeoutMs;
    let x: JsonExchange;
    try {
      x = await exchangeJson(this.baseUrl + r.path, r.method, undefined, {}, timeoutMs);
    } catch (err) {
      if (isTimeout(err)) throw new BeaconClientError('TIMEOUT', `the ${this.name} at ${this.baseUrl} did not answer ${what} within ${timeoutMs} ms`, undefined, { cause: err });
      throw new BeaconClientError('UNREACHABLE', `cannot reach the ${this.name} at ${this.baseUrl} (${transportReason(err)})`, undefined, { cause: err });
    }
    if (x.res.status !== 200 && x.res.status !== 503) throw new BeaconClientError('HTTP_ERROR', `${what} answered HTTP ${x.res.status}`, x.res.status);
    const o = object(x.json, what, this);
    if (o.layer !== 'beacon') throw this.badResponse(what, `layer is ${JSON.stringify(o.layer ?? null)}, not beacon`);
    const healthy = x.res.status === 200 && o.status === 'healthy';
    return {
      status: healthy ? 'healthy' : 'unhealthy',
      head_slot: uint(o.head_slot, `${what}: head_slot`, this),
      current_slot: uint(o.current_slot, `${what}: current_slot`, this),
      ...(healthy ? {} : { reason: typeof o.reason === 'string' ? o.reason : 'UNKNOWN', message: typeof o.message === 'string' ? o.message : `HTTP ${x.res.status}` }),
    };
  }

  /** The fork-choice head and the justified and finalised checkpoints. */
  async head(opts?: RequestOptions): Promise<HeadView> {
    const r = beaconRoutes.head;
    const what = `${r.method} ${r.path}`;
    const d = await this.data(r.method, r.path, undefined, opts);
    return {
      root: hash(d.root, `${what}: root`, this),
      slot: uint(d.slot, `${what}: slot`, this),
      index: uint(d.index, `${what}: index`, this),
      justified: checkpoint(d.justified, `${what}: justified`, this),
      finalized: checkpoint(d.finalized, `${what}: finalized`, this),
      // An epoch and a root, like a checkpoint.
      proposer_dependent_roots: array(d.proposer_dependent_roots, `${what}: proposer_dependent_roots`, this).map((r, i) => checkpoint(r, `${what}: proposer_dependent_roots[${i}]`, this)),
    };
  }

  /** Proposer duties of `epoch` (the current one, or the next). */
  async proposerDuties(epoch: number, opts?: RequestOptions): Promise<ProposerDutiesView> {
    const r = validatorRoutes.proposerDuties;
    const path = routeUrl(r, { epoch: String(checkUint(epoch, 'epoch')) });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, opts);
    if (!Array.isArray(d.duties)) throw this.badResponse(what, 'duties is not an array');
    return {
      epoch: uint(d.epoch, `${what}: epoch`, this),
      dependent_root: hash(d.dependent_root, `${what}: dependent_root`, this),
      duties: d.duties.map((raw, i) => {
        const o = object(raw, `${what}: duties[${i}]`, this);
        return {
          slot: uint(o.slot, `${what}: duties[${i}].slot`, this),
          validator_index: uint(o.validator_index, `${what}: duties[${i}].validator_index`, this),
          address: hex(o.address, `${what}: duties[${i}].address`, 20, this),
          vrf_seed: hash(o.vrf_seed, `${what}: duties[${i}].vrf_seed`, this),
        };
      }),
    };
  }

  /** The whole registry in one call (index, address, active, stake of each): a many-key validator client's index lookup. */
  async validators(opts?: RequestOptions): Promise<Array<Pick<ValidatorView, 'index' | 'address' | 'active' | 'stake'>>> {
    const r = beaconRoutes.validators;
    const what = `${r.method} ${r.path}`;
    const d = await this.data(r.method, r.path, undefined, opts);
    if (!Array.isArray(d.validators)) throw this.badResponse(what, 'validators is not an array');
    return (d.validators as unknown[]).map((v, i) => {
      const o = v as Record<string, unknown>;
      if (typeof o !== 'object' || o === null || !Number.isSafeInteger(o.index) || typeof o.address !== 'string' || typeof o.active !== 'boolean' || typeof o.stake !== 'string') {
        throw this.badResponse(what, `validators[${i}] is not {index, address, active, stake}`);
      }
      return { index: o.index as number, address: o.address.toLowerCase(), active: o.active, stake: o.stake };
    });
  }

  /** A validator by registry index or 0x address; an unknown one is the server's NOT_FOUND (404). */
  async validator(id: number | string, opts?: RequestOptions): Promise<ValidatorView> {
    const ref = typeof id === 'number' ? String(checkUint(id, 'validator index')) : id.toLowerCase();
    if (typeof id === 'string' && !/^0x[0-9a-f]{40}$/.test(ref)) throw new SvcError('MALFORMED_INPUT', 'malformed validator id: expected an index or a 0x address');
    const r = beaconRoutes.validator;
    const path = routeUrl(r, { id: ref });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, opts);
    if (typeof d.active !== 'boolean') throw this.badResponse(what, 'active is not a boolean');
    if (typeof d.stake !== 'string') throw this.badResponse(what, 'stake is not a string');
    return {
      ...d,
      index: uint(d.index, `${what}: index`, this),
      address: hex(d.address, `${what}: address`, 20, this),
      active: d.active,
      stake: d.stake,
      randao_last: d.randao_last === null || d.randao_last === undefined ? null : hash(d.randao_last, `${what}: randao_last`, this),
    };
  }

  /** What to vote for at `slot`: the head, and the FFG source and target. */
  async attestationData(slot: number, opts?: RequestOptions): Promise<AttestationDataView> {
    const r = validatorRoutes.attestationData;
    const path = routeUrl(r, {}, { slot: checkUint(slot, 'slot') });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, opts);
    return {
      slot: uint(d.slot, `${what}: slot`, this),
      beacon_block_root: hash(d.beacon_block_root, `${what}: beacon_block_root`, this),
      source: checkpoint(d.source, `${what}: source`, this),
      target: checkpoint(d.target, `${what}: target`, this),
    };
  }

  /**
   * The unsigned block of `slot` for validator `proposerIndex`, asked for as SSZ
   * (api/block-production.ts); a JSON answer is read too. Needs the bearer token. The beacon's
   * refusals keep their codes (WRONG_PROPOSER, INVALID_SLOT, BEACON_SYNCING, EXECUTION_UNREACHABLE).
   */
  async produceBlock(slot: number, proposerIndex: number, opts?: RequestOptions): Promise<BlockTemplate> {
    const r = validatorRoutes.produceBlock;
    const path = routeUrl(r, { slot: String(checkUint(slot, 'slot')) }, { proposer_index: checkUint(proposerIndex, 'validator index') });
    const what = `${r.method} ${path}`;
    const x = await this.requestSsz(r.method, path, { ...opts, acceptSsz: true, auth: true });
    let t: BlockTemplate;
    try {
      if (x.bytes) t = decodeBlockTemplate(x.bytes);
      else {
        const o = object(x.json, what, this);
        if (o.success !== true || !('data' in o)) throw this.badResponse(what, 'no {success: true, data} envelope');
        const d = object(o.data, what, this);
        t = {
          slot: uint(d.slot, `${what}: slot`, this),
          proposerIndex: uint(d.proposer_index, `${what}: proposer_index`, this),
          dependentRoot: parseHex(hash(d.dependent_root, `${what}: dependent_root`, this), 'dependent_root', 32),
          randaoLast: d.randao_last === null ? null : parseHex(hash(d.randao_last, `${what}: randao_last`, this), 'randao_last', 32),
          block: encodeBlock(blockFromJson(d.block)),
        };
      }
    } catch (err) {
      if (err instanceof BeaconClientError) throw err;
      throw this.badResponse(what, (err as Error).message);
    }
    if (t.slot !== slot || t.proposerIndex !== proposerIndex) throw this.badResponse(what, `it answered the block of slot ${t.slot} for validator ${t.proposerIndex}`);
    return t;
  }

  /** Submits a signed block as its SSZ bytes (`encodeBlock`); needs the bearer token. */
  async proposeBlock(ssz: Uint8Array, opts?: RequestOptions): Promise<ProposeResultView> {
    const r = validatorRoutes.proposeBlock;
    const what = `${r.method} ${r.path}`;
    const { json } = await this.requestSsz(r.method, r.path, { ...opts, body: ssz, auth: true });
    const o = object(json, what, this);
    if (o.success !== true || !('data' in o)) throw this.badResponse(what, 'no {success: true, data} envelope');
    const d = object(o.data, what, this);
    return { ...d, block_hash: hash(d.block_hash, `${what}: block_hash`, this), slot: uint(d.slot, `${what}: slot`, this) };
  }

  /** BIDs of GET /api/v1/bridge/bids (newest first), with the fields a signer recomputes the id from. */
  async bridgeBids(q: { status?: BidStatus; direction?: BidDirection; limit?: number }, opts?: RequestOptions): Promise<Array<{ bid: string; status: BidStatus; direction: BidDirection; fields: BidFields }>> {
    const r = bridgeRoutes.bids;
    const path = routeUrl(r, {}, { status: q.status || undefined, direction: q.direction || undefined, limit: q.limit === undefined ? undefined : checkUint(q.limit, 'limit') });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, opts);
    return array(d.bids, `${what}: bids`, this).map((raw, i) => {
      const o = object(raw, `${what}: bids[${i}]`, this);
      if (typeof o.status !== 'string' || !BID_STATUSES.includes(o.status as BidStatus)) throw this.badResponse(what, `bids[${i}].status is not a BID status`);
      if (o.direction !== 'outgoing' && o.direction !== 'incoming') throw this.badResponse(what, `bids[${i}].direction is not outgoing or incoming`);
      let fields: BidFields;
      try {
        fields = bidFieldsFromJson(o.fields, `bids[${i}].fields`);
      } catch (err) {
        throw this.badResponse(what, (err as Error).message);
      }
      return { bid: hash(o.bid, `${what}: bids[${i}].bid`, this), status: o.status as BidStatus, direction: o.direction, fields };
    });
  }

  /** Posts a validator's BID signature (POST /api/v1/bridge/bids/:id/signatures); `added` is false when the beacon had it already. */
  async submitBidSignature(bid: string, s: BidSignatureJson, opts?: RequestOptions): Promise<BidSignatureResult> {
    const r = bridgeRoutes.submitBidSignature;
    const path = routeUrl(r, { id: bid });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, s, opts);
    if (typeof d.added !== 'boolean') throw this.badResponse(what, 'added is not a boolean');
    if (typeof d.status !== 'string' || !BID_STATUSES.includes(d.status as BidStatus)) throw this.badResponse(what, 'status is not a BID status');
    return { bid: hash(d.bid, `${what}: bid`, this), added: d.added, status: d.status as BidStatus, signers: uint(d.signers, `${what}: signers`, this), signed_stake: String(d.signed_stake), active_stake: String(d.active_stake) };
  }

  /** The next nonce of a validator's account, relayed from execution for its RANDAO re-commitment; needs the bearer token. */
  async recommitAccount(address: string, opts?: RequestOptions): Promise<RecommitAccountView> {
    const r = validatorRoutes.recommitAccount;
    const path = routeUrl(r, { address });
    const d = await this.data(r.method, path, undefined, { ...opts, auth: true });
    return { address: String(d.address), pending_nonce: uint(d.pending_nonce, `${r.method} ${path}: pending_nonce`, this) };
  }

  /** Hands a signed RANDAO re-commitment (0x envelope hex) to the beacon, which passes it to execution's pool; needs the bearer token. */
  async submitRecommit(raw: string, opts?: RequestOptions): Promise<RecommitSubmitView> {
    const r = validatorRoutes.submitRecommit;
    const body: RecommitSubmitBody = { raw };
    const d = await this.data(r.method, r.path, body, { ...opts, auth: true });
    return { hash: hash(d.hash, `${r.method} ${r.path}: hash`, this) };
  }

  /** A re-commitment's lifecycle state in execution, relayed by the beacon; needs the bearer token. */
  async recommitStatus(txHash: string, opts?: RequestOptions): Promise<Pick<TxStatus, 'hash' | 'state' | 'receipt'>> {
    const r = validatorRoutes.recommitStatus;
    const path = routeUrl(r, { hash: txHash });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, { ...opts, auth: true });
    if (typeof d.state !== 'string') throw this.badResponse(what, 'state is not a string');
    const receipt = d.receipt === undefined ? undefined : object(d.receipt, `${what}: receipt`, this);
    return { hash: hash(d.hash, `${what}: hash`, this), state: d.state as TxStatus['state'], ...(receipt ? { receipt: receipt as unknown as Receipt } : {}) };
  }

  /** Submits a signed attestation; needs the bearer token. */
  async submitAttestation(att: AttestationJson, opts?: RequestOptions): Promise<AttestResultView> {
    const r = validatorRoutes.attest;
    const what = `${r.method} ${r.path}`;
    const d = await this.data(r.method, r.path, att, { ...opts, auth: true });
    if (typeof d.status !== 'string') throw this.badResponse(what, 'status is not a string');
    return { ...d, status: d.status };
  }
}

// ---------------------------------------------------------------------------------------------
// Response checks: each failure is BAD_RESPONSE naming the route and field.

function object(v: unknown, what: string, c: JsonApiClient): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw c.badResponse(what, 'not a JSON object');
  return v as Record<string, unknown>;
}

function array(v: unknown, what: string, c: JsonApiClient): unknown[] {
  if (!Array.isArray(v)) throw c.badResponse(what, 'not a JSON array');
  return v;
}

function uint(v: unknown, what: string, c: JsonApiClient): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw c.badResponse(what, 'expected a non-negative integer');
  return v;
}

function hex(v: unknown, what: string, bytes: number, c: JsonApiClient): string {
  if (typeof v !== 'string' || !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(v)) throw c.badResponse(what, `expected 0x and ${bytes * 2} hex digits`);
  return v.toLowerCase();
}

function hash(v: unknown, what: string, c: JsonApiClient): string {
  return hex(v, what, 32, c);
}

function checkpoint(v: unknown, what: string, c: JsonApiClient): CheckpointView {
  const o = object(v, what, c);
  return { epoch: uint(o.epoch, `${what}.epoch`, c), root: hash(o.root, `${what}.root`, c) };
}

function checkUint(n: number, field: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new SvcError('MALFORMED_INPUT', `malformed ${field}: expected a non-negative integer`);
  return n;
}


/** Sends `body` as SSZ bytes (or nothing); asks for SSZ when `acceptSsz`; reads the answer by its Content-Type. */
async function exchangeSsz(url: string, method: string, body: Uint8Array | undefined, acceptSsz: boolean, headers: Record<string, string>, timeoutMs: number): Promise<JsonExchange & { bytes?: Uint8Array }> {
  const h: Record<string, string> = { accept: acceptSsz ? `${SSZ_MEDIA_TYPE}, application/json;q=0.9` : 'application/json', ...headers };
  if (body !== undefined) h['content-type'] = SSZ_MEDIA_TYPE;
  const a = await exchange(url, method, body, h, timeoutMs);
  if (a.contentType === SSZ_MEDIA_TYPE && a.ok) return { res: { status: a.status, ok: true, statusText: a.statusText }, json: undefined, bytes: a.body };
  return readJson(a);
}
