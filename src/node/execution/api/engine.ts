/**
 * Engine API (beacon → execution). Answers loopback callers, or callers with a valid HS256 JWT
 * when the node has an engine secret; everyone else gets 403. POST /api/v1/blocks is the
 * spec's alias of newPayload and shares the rule, since accepted blocks move the head.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acceptsSsz } from '../../../api/media.js';
import { parseDecimal, rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { MalformedError, SvcError } from '../../../core/errors.js';
import { blockFromJson, decodeBlockWithEnvelopes } from '../../../core/types/block.js';
import { encodeEnvelopeList } from '../../../core/types/transaction.js';
import { txToJson } from '../../../core/types/transaction-json.js';
import type { ExecutionNode } from '../node.js';
import { clientIp, errorBody, isLoopback, ok, okSsz, sszBody } from '../../shared/http.js';
import { verifyEngineJwt } from '../../shared/jwt.js';
import { parseHashParam } from './rest.js';

/** Whether a matched route pattern is an engine route (POST /api/v1/blocks is newPayload's alias). */
function isEngineRoute(route: string | undefined): boolean {
  return route !== undefined && (route.startsWith('/api/v1/engine/') || route === '/api/v1/blocks');
}

/** Registers the engine routes behind the loopback/JWT guard. */
export function registerEngineRoutes(app: FastifyInstance, node: ExecutionNode, jwtSecret: Uint8Array | undefined): void {
  app.addHook('onRequest', async (req, reply) => {
    // Decide on the matched route, not the raw URL: the router percent-decodes paths, so
    // `/api/v1/%65ngine/newPayload` reaches the engine handler while its raw URL does not
    // start with `/api/v1/engine/`.
    if (!isEngineRoute(req.routeOptions.url)) return;
    if (!isLoopback(clientIp(req)) && !(jwtSecret && verifyEngineJwt(req.headers.authorization, jwtSecret))) {
      return reply.status(403).send(errorBody('ENGINE_FORBIDDEN', 'the engine API answers only loopback callers or callers with a valid engine JWT'));
    }
    // Public lookups wait while an admitted engine call is in flight, from its first byte (the
    // body of a full block takes a while to arrive and parse) until its answer is sent or dropped.
    node.enginePriority.enter();
    reply.raw.once('close', () => node.enginePriority.leave());
  });

  // SSZ bytes (encodeBlock) or the spec's JSON; the received envelopes go to import as they are.
  const newPayload = async (req: FastifyRequest) => {
    const bytes = sszBody(req);
    if (!bytes) return node.chain.importBlock(blockFromJson(req.body, { deferMissing: true }));
    const { block, envelopes } = decodeBlockWithEnvelopes(bytes);
    return node.chain.importBlock(block, envelopes);
  };
  app.post('/api/v1/engine/newPayload', async (req, reply) => ok(reply, await newPayload(req)));
  app.post('/api/v1/blocks', async (req, reply) => ok(reply, await newPayload(req)));

  app.post('/api/v1/engine/forkchoiceUpdated', async (req, reply) => {
    const o = requireObject(req.body, 'request');
    rejectUnknownKeys(o, ['head_block_hash', 'finalized_block_hash'], 'request');
    if (o.head_block_hash === undefined) throw new MalformedError('request.head_block_hash', 'required');
    if (typeof o.head_block_hash !== 'string') throw new MalformedError('request.head_block_hash', 'expected a 0x-prefixed 32-byte hash');
    const head = parseHashParam(o.head_block_hash, 'head_block_hash');
    const f = o.finalized_block_hash;
    if (f !== undefined && f !== null && typeof f !== 'string') throw new MalformedError('request.finalized_block_hash', 'expected a 0x-prefixed 32-byte hash');
    const finalized = f === undefined || f === null ? undefined : parseHashParam(f, 'finalized_block_hash');
    return ok(reply, await node.chain.forkchoiceUpdated(head, finalized));
  });

  app.get<{ Querystring: { max_gas?: string } }>('/api/v1/engine/getPendingTransactions', async (req, reply) => {
    const cap = BigInt(node.chain.genesis.config.max_gas_per_block);
    const maxGas = req.query.max_gas === undefined ? cap : parseDecimal(req.query.max_gas, 'max_gas', 64);
    if (maxGas > cap) throw new SvcError('GAS_TOO_HIGH', `max_gas exceeds the protocol max ${cap}`, 400);
    const entries = await node.admission.pending(maxGas);
    // With Accept: application/octet-stream, the envelopes in build order as one SSZ list.
    if (acceptsSsz(req.headers.accept)) return okSsz(reply, encodeEnvelopeList(entries.map((e) => e.envelope)));
    const gas = entries.reduce((n, e) => n + e.gasLimit, 0n);
    return ok(reply, { count: entries.length, gas: Number(gas), transactions: entries.map((e) => txToJson(e.tx)) });
  });

  // The configuration exchange: the beacon checks it at start-up and after execution was
  // unreachable, and refuses to drive a node of another chain.
  app.get('/api/v1/engine/config', async (_req, reply) =>
    ok(reply, { chain_id: node.chain.genesis.chain_id, network_id: node.chain.genesis.network_id, genesis_hash: node.chain.genesisHash }),
  );

  app.get('/api/v1/engine/registry', async (_req, reply) => ok(reply, { validators: node.chain.registry.all() }));
}
