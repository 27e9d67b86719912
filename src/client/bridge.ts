/**
 * Typed HTTP clients of the bridge (docs/bridge.md): the beacon's `/api/v1/bridge/...` routes and
 * the light-client routes a relayer proves with, and the execution's counterpart view. Failures
 * are BeaconClientError carrying the server's envelope code (UNKNOWN_BID, BRIDGE_*, STATE_PRUNED,
 * …) or UNREACHABLE / TIMEOUT / BAD_RESPONSE, as the other clients of src/client/.
 */
import { SvcError } from '../core/errors.js';
import type { LightProofView } from '../api/light.js';
import {
  BID_STATUSES,
  type BidDirection,
  type BidListView,
  type BidSignatureJson,
  type BidSignatureResult,
  type BidSignaturesView,
  type BidStatus,
  type BidView,
  type CounterpartsView,
  type RegistrationRequestView,
} from '../api/bridge.js';
import { routeUrl } from '../api/routes/route.js';
import { bridgeRoutes } from '../api/routes/bridge.js';
import { lightRoutes } from '../api/routes/light.js';
import { type ApiClientOptions, BeaconClientError, JsonApiClient, type RequestOptions } from './beacon.js';
import { LightApiClient } from './light.js';
import * as executionRoutes from '../api/routes/execution.js';
import { hasCode } from '../api/errors.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/** Validates a BID id (0x and 64 hex digits) before it goes on the wire; lowercase. */
export function parseBidId(value: string): string {
  if (!HASH_RE.test(value)) throw new SvcError('MALFORMED_INPUT', `malformed BID id ${JSON.stringify(value)}: expected 0x and 64 hex digits`);
  return value.toLowerCase();
}

/** Filters of GET /api/v1/bridge/bids. */
export interface BidQuery {
  status?: BidStatus;
  address?: string;
  direction?: BidDirection;
  limit?: number;
}

/** The beacon's bridge routes plus its light-client routes (finality update, proofs with storage keys). */
export class BridgeBeaconClient extends LightApiClient {
  constructor(baseUrl: string, opts: Omit<ApiClientOptions, 'name'> = {}) {
    super(baseUrl, { unreachableHint: ': point --source/--dest (or --beacon-url) at a running beacon node', ...opts });
  }

  /** GET /api/v1/bridge/bids, newest first. */
  async bids(q: BidQuery = {}, opts?: RequestOptions): Promise<BidListView> {
    const r = bridgeRoutes.bids;
    const path = routeUrl(r, {}, { status: q.status, address: q.address?.toLowerCase(), direction: q.direction, limit: q.limit });
    const d = await this.data(r.method, path, undefined, opts ?? {});
    if (!Array.isArray(d.bids)) throw this.badResponse(`${r.method} ${path}`, 'no bids list');
    return { bids: d.bids.map((b, i) => this.checkBid(b, `${r.method} ${path} bids[${i}]`)) };
  }

  /** GET /api/v1/bridge/bids/:id with its history; 404 UNKNOWN_BID when this beacon has not seen it. */
  async bid(id: string, opts?: RequestOptions): Promise<BidView> {
    const r = bridgeRoutes.bid;
    const path = routeUrl(r, { id: parseBidId(id) });
    return this.checkBid(await this.data(r.method, path, undefined, opts ?? {}), `${r.method} ${path}`);
  }

  /** GET /api/v1/bridge/bids/:id/signatures: the source validators' BID signatures. */
  async signatures(id: string, opts?: RequestOptions): Promise<BidSignaturesView> {
    const r = bridgeRoutes.bidSignatures;
    const path = routeUrl(r, { id: parseBidId(id) });
    const what = `${r.method} ${path}`;
    const d = await this.data(r.method, path, undefined, opts ?? {});
    if (typeof d.bid !== 'string' || !Array.isArray(d.signatures)) throw this.badResponse(what, 'no bid and signatures');
    const signatures = d.signatures.map((s, i): BidSignatureJson => {
      const o = s as Partial<BidSignatureJson> | null;
      if (!o || !Number.isSafeInteger(o.validator_index) || typeof o.signature !== 'string') throw this.badResponse(what, `signatures[${i}] is not {validator_index, signature}`);
      return { validator_index: o.validator_index!, signature: o.signature };
    });
    return { bid: d.bid, signatures };
  }

  /** POST /api/v1/bridge/bids/:id/signatures (202 added, 200 already known). */
  async postSignature(id: string, sig: BidSignatureJson, opts?: RequestOptions): Promise<BidSignatureResult> {
    const r = bridgeRoutes.submitBidSignature;
    return (await this.data(r.method, routeUrl(r, { id: parseBidId(id) }), sig, opts ?? {})) as unknown as BidSignatureResult;
  }

  /** This chain and the counterparts it knows (the beacon's counterparts route). */
  async counterparts(opts?: RequestOptions): Promise<CounterpartsView> {
    const r = bridgeRoutes.counterparts;
    return checkCounterparts(await this.data(r.method, r.path, undefined, opts ?? {}), this, `${r.method} ${r.path}`);
  }

  /** POST /api/v1/bridge/registrations: asks this chain's validators (through this beacon) to sign a counterpart's registration. */
  async requestRegistration(genesis: unknown, allowance: bigint, opts?: RequestOptions): Promise<RegistrationRequestView> {
    const r = bridgeRoutes.requestRegistration;
    return this.checkRegistration(await this.data(r.method, r.path, { genesis, allowance: allowance.toString() }, opts ?? {}), `${r.method} ${r.path}`);
  }

  /** GET /api/v1/bridge/registrations: the requests this beacon holds, newest first. */
  async registrations(opts?: RequestOptions): Promise<RegistrationRequestView[]> {
    const r = bridgeRoutes.registrations;
    const what = `${r.method} ${r.path}`;
    const d = await this.data(r.method, r.path, undefined, opts ?? {});
    if (!Array.isArray(d.registrations)) throw this.badResponse(what, 'no registrations list');
    return d.registrations.map((x, i) => this.checkRegistration(x, `${what} registrations[${i}]`));
  }

  /** GET /api/v1/bridge/registrations/:id with the signatures gathered; 404 UNKNOWN_REGISTRATION when not held. */
  async registration(id: string, opts?: RequestOptions): Promise<RegistrationRequestView> {
    const r = bridgeRoutes.registration;
    const path = routeUrl(r, { id: parseBidId(id) });
    return this.checkRegistration(await this.data(r.method, path, undefined, opts ?? {}), `${r.method} ${path}`);
  }

  /** POST /api/v1/bridge/registrations/:id/signatures (202 added, 200 already held). */
  async postRegistrationSignature(id: string, sig: BidSignatureJson, opts?: RequestOptions): Promise<RegistrationRequestView> {
    const r = bridgeRoutes.submitRegistrationSignature;
    const path = routeUrl(r, { id: parseBidId(id) });
    return this.checkRegistration(await this.data(r.method, path, sig, opts ?? {}), `${r.method} ${path}`);
  }

  private checkRegistration(v: unknown, what: string): RegistrationRequestView {
    const r = v as Partial<RegistrationRequestView> | null;
    if (!r || typeof r.id !== 'string' || typeof r.terms !== 'object' || r.terms === null || typeof r.genesis_json !== 'string' || !Array.isArray(r.signatures)) {
      throw this.badResponse(what, 'not a registration request {id, terms, genesis_json, signatures, ...}');
    }
    return r as RegistrationRequestView;
  }

  /** GET /api/v1/light/proof of `address` and its storage `keys` against block `root`'s header. */
  async storageProof(root: string, address: string, keys: readonly string[], opts?: RequestOptions): Promise<LightProofView> {
    const r = lightRoutes.proof;
    const path = routeUrl(r, {}, { root, address, keys: keys.join(',') });
    const d = await this.data(r.method, path, undefined, opts ?? {});
    if (typeof d.block_hash !== 'string' || typeof d.header !== 'object' || typeof d.proof !== 'object' || d.proof === null) throw this.badResponse(`${r.method} ${path}`, 'no block_hash, header and proof');
    return d as unknown as LightProofView;
  }

  private checkBid(v: unknown, what: string): BidView {
    const b = v as Partial<BidView> | null;
    if (!b || typeof b.bid !== 'string' || !BID_STATUSES.includes(b.status as BidStatus) || typeof b.fields !== 'object' || b.fields === null || !Array.isArray(b.history)) {
      throw this.badResponse(what, 'not a BID view {bid, status, fields, history, ...}');
    }
    return b as BidView;
  }
}

/** The execution node's bridge route: its view of registered counterparts, read from the head state. */
export class BridgeExecutionClient extends JsonApiClient {
  constructor(baseUrl: string, opts: Omit<ApiClientOptions, 'name'> = {}) {
    super(baseUrl, { name: 'execution node', unreachableHint: ': point --execution-url (or SVC_EXECUTION_URL) at a running execution node', ...opts });
  }

  /** GET /api/v1/bridge/counterparts. */
  async counterparts(opts?: RequestOptions): Promise<CounterpartsView> {
    return checkCounterparts(await this.data('GET', executionRoutes.bridgeCounterparts.path, undefined, opts ?? {}), this, `GET ${executionRoutes.bridgeCounterparts.path}`);
  }
}

function checkCounterparts(d: Record<string, unknown>, c: JsonApiClient, what: string): CounterpartsView {
  const self = d.self as Partial<CounterpartsView['self']> | undefined;
  if (!self || typeof self.chain_id !== 'string' || typeof self.genesis_hash !== 'string' || !Array.isArray(d.counterparts)) throw c.badResponse(what, 'no self and counterparts');
  return d as unknown as CounterpartsView;
}

/** True when a client error is the server saying it does not know the BID (404 UNKNOWN_BID). */
export function isUnknownBid(err: unknown): boolean {
  return err instanceof BeaconClientError && hasCode(err, 'UNKNOWN_BID');
}
