/**
 * The beacon's bridge routes, `/api/v1/bridge/...` (docs/bridge.md "API", wire types
 * src/api/bridge.ts). Public like the slashing routes: a BID signature proves itself, so anyone
 * may post one (validators do, a relayer may pass one on). Every query, parameter and body is
 * checked strictly: a bad one is `400 MALFORMED_INPUT` naming the field. Registration requests
 * are public too: a signature over them proves itself, and execution judges the operation.
 */
import type { FastifyInstance } from 'fastify';
import { parseHex } from '../../../core/codec/bytes.js';
import { SIGNATURE_BYTES } from '../../../core/constants.js';
import { MalformedError } from '../../../core/errors.js';
import { BeaconError } from '../errors.js';
import { BID_STATUSES, type BidDirection, type BidListView, type BidSignaturesView, type BidStatus, type CounterpartsView, type RegistrationListView } from '../../../api/bridge.js';
import { RelayedError } from '../../../api/errors.js';
import { ok } from '../../shared/http.js';
import { registerRoute } from '../../shared/routes.js';
import { bridgeRoutes } from '../../../api/routes/bridge.js';
import type { BridgeStore } from './store.js';
import { BRIDGE_LIST_DEFAULT, BRIDGE_LIST_MAX, type BidQuery } from './queries.js';
import { EngineError } from '../engine-client.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const DIRECTIONS: readonly BidDirection[] = ['outgoing', 'incoming'];
const LIST_PARAMS: ReadonlySet<string> = new Set(['status', 'address', 'direction', 'limit']);

/** A 32-byte id path parameter, lowercased. */
function idParam(v: string, field: string): string {
  if (!HASH_RE.test(v)) throw new MalformedError(field, 'expected 0x and 64 hex digits');
  return v.toLowerCase();
}

const bidParam = (v: string) => idParam(v, 'bid');

/** One query value: a repeated parameter is refused rather than silently picking one. */
function single(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new MalformedError(name, 'give it once');
  return v;
}

/** Parses the listing's query string (unknown parameters are refused: a typo must not widen the answer). */
export function parseBidQuery(q: Record<string, unknown>): BidQuery {
  for (const k of Object.keys(q)) if (!LIST_PARAMS.has(k)) throw new MalformedError(k, `unknown parameter (expected ${[...LIST_PARAMS].join(', ')})`);
  const status = single(q, 'status');
  if (status !== undefined && !BID_STATUSES.includes(status as BidStatus)) throw new MalformedError('status', `expected one of ${BID_STATUSES.join(', ')}`);
  const direction = single(q, 'direction');
  if (direction !== undefined && !DIRECTIONS.includes(direction as BidDirection)) throw new MalformedError('direction', `expected one of ${DIRECTIONS.join(', ')}`);
  const address = single(q, 'address');
  if (address !== undefined && !ADDRESS_RE.test(address)) throw new MalformedError('address', 'expected 0x and 40 hex digits');
  const limitText = single(q, 'limit');
  let limit = BRIDGE_LIST_DEFAULT;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(limitText) || Number(limitText) > BRIDGE_LIST_MAX) throw new MalformedError('limit', `expected an integer from 1 to ${BRIDGE_LIST_MAX}`);
    limit = Number(limitText);
  }
  return { limit, ...(status !== undefined ? { status: status as BidStatus } : {}), ...(direction !== undefined ? { direction: direction as BidDirection } : {}), ...(address !== undefined ? { address: address.toLowerCase() } : {}) };
}

/** Parses a POST …/signatures body: exactly `{validator_index, signature}`. */
export function parseBidSignatureBody(body: unknown): { validatorIndex: number; signature: Uint8Array } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new MalformedError('body', 'expected a JSON object {validator_index, signature}');
  const o = body as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'validator_index' && k !== 'signature') throw new MalformedError(k, 'unknown field (expected validator_index, signature)');
  const v = o.validator_index;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v >= 2 ** 32) throw new MalformedError('validator_index', 'expected an integer from 0 to 2^32 - 1');
  return { validatorIndex: v, signature: parseHex(o.signature, 'signature', SIGNATURE_BYTES) };
}

/** Parses a POST /registrations body: exactly `{genesis, allowance}` (allowance base-10 wei). */
export function parseRegistrationRequestBody(body: unknown): { genesis: unknown; allowance: bigint } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new MalformedError('body', 'expected a JSON object {genesis, allowance}');
  const o = body as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'genesis' && k !== 'allowance') throw new MalformedError(k, 'unknown field (expected genesis, allowance)');
  if (typeof o.genesis !== 'object' || o.genesis === null || Array.isArray(o.genesis)) throw new MalformedError('genesis', "expected the counterpart's genesis document (a JSON object)");
  const a = o.allowance;
  if (typeof a !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(a) || BigInt(a) >= 1n << 256n) throw new MalformedError('allowance', 'expected a base-10 integer of wei below 2^256');
  return { genesis: o.genesis, allowance: BigInt(a) };
}

/** Registers `/api/v1/bridge/...`. */
export function registerBridgeRoutes(app: FastifyInstance, o: { bridge: BridgeStore }): void {
  const { bridge } = o;

  registerRoute(app, bridgeRoutes.bids, {}, async (req, reply) => {
    const view: BidListView = { bids: await bridge.list(parseBidQuery(req.query as Record<string, unknown>)) };
    return ok(reply, view);
  });

  registerRoute(app, bridgeRoutes.bid, {}, async (req, reply) => {
    const bid = bidParam(req.params.id);
    const view = await bridge.bid(bid);
    if (!view) throw new BeaconError('UNKNOWN_BID', `no BID ${bid}`);
    return ok(reply, view);
  });

  registerRoute(app, bridgeRoutes.bidSignatures, {}, async (req, reply) => {
    const bid = bidParam(req.params.id);
    const signatures = await bridge.signatures(bid);
    if (!signatures) throw new BeaconError('UNKNOWN_BID', `no BID ${bid}`);
    const view: BidSignaturesView = { bid, signatures };
    return ok(reply, view);
  });

  registerRoute(app, bridgeRoutes.submitBidSignature, {}, async (req, reply) => {
    const bid = bidParam(req.params.id);
    const s = parseBidSignatureBody(req.body);
    const { added, result } = await bridge.addSignature(bid, s);
    return ok(reply, result, added ? 202 : 200);
  });

  registerRoute(app, bridgeRoutes.registrations, {}, async (_req, reply) => {
    const view: RegistrationListView = { registrations: bridge.registrations.list() };
    return ok(reply, view);
  });

  registerRoute(app, bridgeRoutes.requestRegistration, {}, async (req, reply) => {
    const { genesis, allowance } = parseRegistrationRequestBody(req.body);
    const { added, view } = bridge.registrations.request(genesis, allowance);
    return ok(reply, view, added ? 202 : 200);
  });

  registerRoute(app, bridgeRoutes.registration, {}, async (req, reply) => ok(reply, bridge.registrations.get(idParam(req.params.id, 'registration'))));

  registerRoute(app, bridgeRoutes.submitRegistrationSignature, {}, async (req, reply) => {
    const id = idParam(req.params.id, 'registration');
    const { added, view } = bridge.registrations.addSignature(id, parseBidSignatureBody(req.body));
    return ok(reply, view, added ? 202 : 200);
  });

  registerRoute(app, bridgeRoutes.counterparts, {}, async (_req, reply) => {
    let view: CounterpartsView;
    try {
      view = await bridge.counterparts();
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      // Execution's view is the only one: without it the beacon has nothing true to answer.
      throw new RelayedError(err.code, `execution could not list the counterparts: ${err.message}`, err.code === 'EXECUTION_UNREACHABLE' ? undefined : 502);
    }
    return ok(reply, view);
  });
}
