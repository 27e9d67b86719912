/**
 * Engine API (beacon → execution), registered from its route table (src/api/routes/engine.ts).
 * Answers loopback callers, or callers with a valid HS256 JWT when the node has an engine secret;
 * everyone else gets 403. newPayload's spec alias (POST /api/v1/blocks) shares the rule, since
 * accepted blocks move the head.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { engineConfig, engineRegistry, forkchoiceUpdated, getPayload, getPendingTransactions, isEngineRoute, newPayload } from '../../../api/routes/engine.js';
import { encodePayload, type PayloadView } from '../../../api/block-production.js';
import { isRecommit } from '../../../core/consensus/recommit.js';
import { parseHex } from '../../../core/codec/bytes.js';
import { MAX_BLOCK_TXS } from '../../../core/constants.js';
import type { IncomingMessage } from 'node:http';
import { encodeImportAnswer } from '../../../api/import-answer.js';
import { receiptJson } from '../blocks.js';
import { acceptsSsz, SSZ_MEDIA_TYPE } from '../../../api/media.js';
import { ERROR_STATUS } from '../../../api/errors.js';
import { parseDecimal, rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { MalformedError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import { blockFromJson, decodeBlockWithEnvelopes } from '../../../core/types/block.js';
import { encodeEnvelopeList } from '../../../core/types/transaction.js';
import { txToJson } from '../../../core/types/transaction-json.js';
import type { ExecutionModules } from './modules.js';
import type { ImportWithJson } from '../chain.js';
import { clientIp, errorBody, isLoopback, ok, okSsz, sszBody } from '../../shared/http.js';
import { verifyEngineJwt } from '../../shared/jwt.js';
import { registerRoute } from '../../shared/routes.js';
import { parseHashParam } from './rest.js';

/**
 * Reads an SSZ body whose Content-Length is declared straight into one buffer of that size: a
 * 7.6 MB block arrives in ~120 socket chunks, which the generic parser keeps in a list and then
 * concatenates (a second 7.6 MB allocation and copy). A body without Content-Length (chunked) is
 * collected under the same limit. A body over the route's limit is refused before it is read.
 */
function readSszBody(req: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: Buffer) => void): void {
  const limit = req.routeOptions.bodyLimit ?? Infinity;
  const header = req.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  const tooLarge = () => new ExecutionError('BODY_TOO_LARGE', `request body exceeds ${limit} bytes`);
  if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0)) return done(new ExecutionError('INVALID_REQUEST', 'Content-Length is not a byte count'));
  if (declared !== undefined && declared > limit) {
    payload.resume();
    return done(tooLarge());
  }
  const buf = declared === undefined ? undefined : Buffer.allocUnsafe(declared);
  const chunks: Buffer[] = [];
  let received = 0;
  let failed = false;
  const fail = (err: Error): void => {
    if (failed) return;
    failed = true;
    payload.removeListener('data', onData);
    payload.resume();
    done(err);
  };
  const onData = (chunk: Buffer): void => {
    const end = received + chunk.length;
    if (end > limit) return fail(tooLarge());
    if (buf) {
      if (end > buf.length) return fail(new ExecutionError('INVALID_REQUEST', 'Content-Length does not match the body'));
      buf.set(chunk, received);
    } else chunks.push(chunk);
    received = end;
  };
  payload.on('data', onData);
  payload.on('error', (err) => fail(err));
  payload.on('end', () => {
    if (failed) return;
    if (buf && received !== buf.length) return fail(new ExecutionError('INVALID_REQUEST', 'Content-Length does not match the body'));
    failed = true;
    done(null, buf ?? Buffer.concat(chunks, received));
  });
}

/**
 * The `ok` envelope of an import result whose receipts are already JSON (the strings the chain
 * stored): byte for byte what `ok(reply, result)` sends, without serialising the receipts again.
 * The compact answer takes their UTF-8 bytes from the body file's write when there was one.
 */
function sendImport(reply: FastifyReply, { result, receiptsJson, receiptsEncoded }: ImportWithJson, ssz: boolean): FastifyReply {
  if (ssz) return okSsz(reply, encodeImportAnswer(result, receiptsEncoded ?? receiptsJson ?? result.receipts.map(receiptJson)));
  if (receiptsJson === undefined) return ok(reply, result);
  const { receipts: _receipts, canonical, already_known, registry_changed, ...head } = result;
  const front = JSON.stringify({ success: true, data: head });
  // `front` ends with the two closing braces of `data` and the envelope.
  const body = `${front.slice(0, -2)},"receipts":[${receiptsJson.join(',')}],"canonical":${canonical},"already_known":${already_known},"registry_changed":${registry_changed}}}`;
  return reply.status(200).type('application/json; charset=utf-8').send(body);
}

/** Registers the engine routes behind the loopback/JWT guard. */
export function registerEngineRoutes(app: FastifyInstance, node: ExecutionModules, jwtSecret: Uint8Array | undefined): void {
  app.addHook('onRequest', async (req, reply) => {
    // Decide on the matched route, not the raw URL: the router percent-decodes paths, so
    // `/api/v1/%65ngine/newPayload` reaches the engine handler while its raw URL does not
    // start with `/api/v1/engine/`.
    if (!isEngineRoute(req.routeOptions.url)) return;
    if (!isLoopback(clientIp(req)) && !(jwtSecret && verifyEngineJwt(req.headers.authorization, jwtSecret))) {
      return reply.status(ERROR_STATUS.ENGINE_FORBIDDEN).send(errorBody('ENGINE_FORBIDDEN', 'the engine API answers only loopback callers or callers with a valid engine JWT'));
    }
    // Public lookups wait while an admitted engine call is in flight, from its first byte (the
    // body of a full block takes a while to arrive and parse) until its answer is sent or dropped.
    node.enginePriority.enter();
    reply.raw.once('close', () => node.enginePriority.leave());
  });

  // SSZ bytes (encodeBlock) or the spec's JSON; the received envelopes go to import as they are.
  // The answer is JSON, or the compact SSZ answer (api/import-answer.ts) when Accept asks for it.
  const importPayload = async (req: FastifyRequest, reply: FastifyReply) => {
    const bytes = sszBody(req);
    const imported = bytes ? await importSsz(bytes) : await node.chain.importForAnswer(blockFromJson(req.body, { deferMissing: true }));
    return sendImport(reply, imported, acceptsSsz(req.headers.accept));
  };
  const importSsz = (bytes: Uint8Array) => {
    const { block, envelopes } = decodeBlockWithEnvelopes(bytes);
    return node.chain.importForAnswer(block, envelopes);
  };
  // Block bodies get their own SSZ parser (readSszBody), so the routes live in a child context.
  app.register(async (engine) => {
    engine.removeContentTypeParser(SSZ_MEDIA_TYPE);
    engine.addContentTypeParser(SSZ_MEDIA_TYPE, readSszBody);
    registerRoute(engine, newPayload, {}, importPayload);
  });

  registerRoute(app, forkchoiceUpdated, {}, async (req, reply) => {
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

  registerRoute(app, getPendingTransactions, {}, async (req, reply) => {
    const cap = BigInt(node.chain.genesis.config.max_gas_per_block);
    const maxGas = req.query.max_gas === undefined ? cap : parseDecimal(req.query.max_gas, 'max_gas', 64);
    if (maxGas > cap) throw new ExecutionError('GAS_TOO_HIGH', `max_gas exceeds the protocol max ${cap}`);
    const entries = await node.admission.pending(maxGas);
    // With Accept: application/octet-stream, the envelopes in build order as one SSZ list.
    if (acceptsSsz(req.headers.accept)) return okSsz(reply, encodeEnvelopeList(entries.map((e) => e.envelope)));
    const gas = entries.reduce((n, e) => n + e.gasLimit, 0n);
    return ok(reply, { count: entries.length, gas: Number(gas), transactions: entries.map((e) => txToJson(e.tx)) });
  });

  // A block's payload in one call: the beacon builds the proposer's block from it, so the parent's
  // post-state root and the pool's build order need not be two round trips (or the validator's).
  registerRoute(app, getPayload, {}, async (req, reply) => {
    const q = req.query;
    if (q.parent === undefined) throw new MalformedError('parent', 'required');
    const parentHash = parseHashParam(String(q.parent), 'parent');
    const proposer = q.proposer === undefined ? undefined : String(q.proposer).toLowerCase();
    if (proposer !== undefined && !/^0x[0-9a-f]{40}$/.test(proposer)) throw new MalformedError('proposer', 'expected 0x and 40 hex digits');
    const ownRecommit = q.own_recommit === undefined ? false : String(q.own_recommit);
    if (ownRecommit !== false && ownRecommit !== 'true' && ownRecommit !== 'false') throw new MalformedError('own_recommit', 'expected true or false');
    const parent = await node.chain.record(parentHash);
    if (!parent) throw new ExecutionError('NOT_FOUND', `no block ${parentHash}`);
    const entries = [];
    // Execution fails a validator's re-commitment in its own block unless it is the only active
    // validator (core/consensus/recommit.ts): it waits for another proposer, and so do the
    // sender's later nonces.
    let heldBack = false;
    for (const e of await node.admission.pending(BigInt(node.chain.genesis.config.max_gas_per_block))) {
      if (entries.length === MAX_BLOCK_TXS) break;
      if (e.sender === proposer && (heldBack || (isRecommit(e.tx) && ownRecommit !== 'true'))) {
        heldBack = true;
        continue;
      }
      entries.push(e);
    }
    if (acceptsSsz(req.headers.accept)) return okSsz(reply, encodePayload({ stateRoot: parseHex(parent.state_root, 'state_root', 32), envelopes: entries.map((e) => e.envelope) }));
    const view: PayloadView = { parent: parentHash, state_root: parent.state_root, count: entries.length, gas: Number(entries.reduce((n, e) => n + e.gasLimit, 0n)), transactions: entries.map((e) => txToJson(e.tx)) };
    return ok(reply, view);
  });

  // The configuration exchange: the beacon checks it at start-up and after execution was
  // unreachable, and refuses to drive a node of another chain.
  registerRoute(app, engineConfig, {}, async (_req, reply) =>
    ok(reply, { chain_id: node.chain.genesis.chain_id, network_id: node.chain.genesis.network_id, genesis_hash: node.chain.genesisHash }),
  );

  registerRoute(app, engineRegistry, {}, async (_req, reply) => ok(reply, { validators: node.chain.registry.all() }));
}
