/** Public REST routes of the execution layer (`{execution_url}`, default port 8546), registered from src/api/routes/execution.ts. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as routes from '../../../api/routes/execution.js';
import { normalizeAddress } from '../../../core/crypto/address.js';
import { ExecutionError } from '../errors.js';
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { MAX_TX_BATCH } from '../../../core/constants.js';
import { sha3 } from '../../../core/crypto/hash.js';
import type { BatchEntryResult, BatchSubmitResult } from '../../../api/execution.js';
import { parseDecimal, requireObject } from '../../../core/codec/json.js';
import type { ExecutionModules } from './modules.js';
import { account, blockView, health, resolveBlock, txStatus } from './queries.js';
import { DEFAULT_BODY_LIMIT, classify, clientIp, ok, sszBody } from '../../shared/http.js';
import { RateLimiter } from './rate-limit.js';
import { parseBatch, parseBatchEntry, parseEnvelope, parseSubmission } from './submission.js';
import { type Submission, SubmitRefusal } from '../txpool/admission.js';
import { registerContractRoutes } from './rest-contracts.js';
import { registerRoute } from '../../shared/routes.js';
import { MAX_REGISTRY_PROOF_ENTRIES, registryProof } from '../registry-proof.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
/**
 * Body limit of a batch: MAX_TX_BATCH entries of up to 32 KB each in hex JSON (a transfer is
 * about 10.7 KB as hex, 5.3 KB as SSZ); larger transactions go in smaller batches.
 */
const BATCH_BODY_LIMIT = MAX_TX_BATCH * 32 * 1024;
/** Mempool page size by default and at most. */
const MEMPOOL_PAGE = 1000;
const MEMPOOL_PAGE_MAX = 10_000;

/** Validates a 32-byte hash path parameter. */
export function parseHashParam(v: string, what = 'transaction hash'): string {
  if (!HASH_RE.test(v)) throw new ExecutionError('MALFORMED_INPUT', `malformed ${what}: expected 0x and 64 hex digits`);
  return v.toLowerCase();
}

export interface RestLimits {
  submitRatePerIp: number;
  faucetRatePerIpPerMinute: number;
}

/** Registers /health, faucet, mempool, transactions, accounts, blocks, contracts and logs, bridge counterparts, and /metrics. */
export function registerRestRoutes(app: FastifyInstance, node: ExecutionModules, limits: RestLimits): void {
  const submitPerIp = new RateLimiter(limits.submitRatePerIp, limits.submitRatePerIp * 2, 'client');
  const submitPerSender = new RateLimiter(limits.submitRatePerIp, limits.submitRatePerIp * 2, 'sender');
  const faucetPerIp = new RateLimiter(limits.faucetRatePerIpPerMinute / 60, limits.faucetRatePerIpPerMinute, 'client');
  const small = { bodyLimit: DEFAULT_BODY_LIMIT };

  registerRoute(app, routes.health, {}, async () => health(node));

  const claim = async (body: unknown, ip: string) => {
    faucetPerIp.take(ip);
    return node.faucet.claim(requireObject(body, 'request').address);
  };
  // The older variant of the claim endpoint (the route's alias) has its own response shape.
  registerRoute(app, routes.faucetClaim, small, async (req) => {
    const c = await claim(req.body, clientIp(req));
    const claimed = { tx_hash: c.tx_hash, amount: c.amount, address: c.address };
    return req.routeOptions.url === routes.faucetClaim.path ? { success: true, ...claimed } : claimed;
  });

  // Paged (default and maximum page sizes below): 50,000 entries with their signatures would be a ~350 MB answer.
  registerRoute(app, routes.mempool, {}, async (req) => {
    const limit = req.query.limit === undefined ? MEMPOOL_PAGE : Number(parseDecimal(req.query.limit, 'limit', 32));
    const offset = req.query.offset === undefined ? 0 : Number(parseDecimal(req.query.offset, 'offset', 32));
    if (limit < 1 || limit > MEMPOOL_PAGE_MAX) throw new ExecutionError('MALFORMED_INPUT', `malformed limit: must be 1..${MEMPOOL_PAGE_MAX}`);
    const pool = node.admission.pool;
    return { success: true, count: pool.size, offset, transactions: node.admission.views(pool.page(offset, limit)) };
  });

  // Admission counts what it refuses; a request refused before it (a body or envelope that does
  // not parse, including a JSON error raised before the handler runs, or the per-client rate
  // limit) is counted by the route's onError hook, which skips requests admission has seen.
  const admitting = new WeakSet<FastifyRequest>();
  const countRefusal = async (req: FastifyRequest, _reply: unknown, err: unknown) => {
    if (!admitting.has(req)) node.admission.refusedBeforeAdmission(err);
  };
  const limitSender = (sender: string) => submitPerSender.take(sender);
  // JSON, or the signed envelope's bytes (Content-Type: application/octet-stream).
  registerRoute(app, routes.submitTransaction, { ...small, onError: countRefusal }, async (req, reply) => {
    submitPerIp.take(clientIp(req));
    const bytes = sszBody(req);
    const { tx, envelope } = bytes ? parseEnvelope(bytes) : parseSubmission(req.body);
    admitting.add(req);
    return ok(reply, await node.admission.submit(tx, 'rest', { ...(envelope ? { envelope } : {}), limitSender }), 202);
  });

  // Many envelopes per request (an SSZ envelope list, or JSON {raw: [...]}): each entry is its own
  // submission (rate limits, admission, refusal metrics, durability before the answer), all of them
  // in one admission batch: one verification round, one state prefetch, one journal write.
  registerRoute(app, routes.submitBatch, { bodyLimit: BATCH_BODY_LIMIT, onError: countRefusal }, async (req, reply) => {
    const entries = parseBatch(req.body, sszBody(req));
    admitting.add(req);
    const ip = clientIp(req);
    const results = new Array<BatchEntryResult>(entries.length);
    const submissions: Submission[] = [];
    const at: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      try {
        submitPerIp.take(ip);
        const { tx, envelope } = parseBatchEntry(entry);
        submissions.push({ tx, source: 'rest', opts: { envelope, limitSender } });
        at.push(i);
      } catch (err) {
        node.admission.refusedBeforeAdmission(err);
        results[i] = rejected(entry.bytes, err);
      }
    }
    const outcomes = await node.admission.submitMany(submissions);
    let accepted = 0;
    for (let k = 0; k < outcomes.length; k++) {
      const i = at[k]!;
      const a = outcomes[k]!;
      if (a instanceof SubmitRefusal) {
        results[i] = rejected(entries[i]!.bytes, a.error);
        continue;
      }
      accepted++;
      results[i] = a.replaced ? { hash: a.hash, status: 'accepted', pool_status: a.status, replaced: a.replaced } : { hash: a.hash, status: 'accepted', pool_status: a.status };
    }
    return ok(reply, { accepted, results } satisfies BatchSubmitResult);
  });

  registerRoute(app, routes.transaction, {}, async (req, reply) => ok(reply, await txStatus(node, parseHashParam(req.params.hash))));

  const receipt = async (hash: string) => {
    const s = await txStatus(node, parseHashParam(hash));
    if (!s.receipt) throw new ExecutionError('NOT_FOUND', `no receipt for ${hash}: transaction is ${s.state}`);
    return s.receipt;
  };
  registerRoute(app, routes.receipt, {}, async (req, reply) => ok(reply, await receipt(req.params.hash)));

  registerRoute(app, routes.account, {}, async (req, reply) => ok(reply, account(node, normalizeAddress(req.params.address))));

  // ?block= latest (default), finalized, a height or a hash; ?keys= comma-separated 32-byte storage keys.
  registerRoute(app, routes.accountProof, {}, async (req, reply) => {
    const address = normalizeAddress(req.params.address);
    const keys = parseStorageKeys(req.query.keys);
    const id = req.query.block ?? 'latest';
    const block = await resolveBlock(node, id);
    if (!block) throw new ExecutionError('NOT_FOUND', `no block ${id}`);
    const proof = await node.chain.proof(block.hash, address, keys);
    return ok(reply, { block_number: block.index, block_hash: block.hash, ...proof });
  });

  // ?block= as the account proof's; ?from= first index (0); ?limit= entries (MAX_REGISTRY_PROOF_ENTRIES).
  registerRoute(app, routes.registryProof, {}, async (req, reply) => {
    const from = req.query.from === undefined ? 0 : Number(parseDecimal(req.query.from, 'from', 32));
    const limit = req.query.limit === undefined ? MAX_REGISTRY_PROOF_ENTRIES : Number(parseDecimal(req.query.limit, 'limit', 32));
    if (limit < 1 || limit > MAX_REGISTRY_PROOF_ENTRIES) throw new ExecutionError('MALFORMED_INPUT', `malformed limit: 1 to ${MAX_REGISTRY_PROOF_ENTRIES} entries per page, got ${limit}`);
    const id = req.query.block ?? 'latest';
    const block = await resolveBlock(node, id);
    if (!block) throw new ExecutionError('NOT_FOUND', `no block ${id}`);
    return ok(reply, { block_number: block.index, block_hash: block.hash, ...(await registryProof(node.chain, block.hash, from, limit)) });
  });

  registerRoute(app, routes.block, {}, async (req, reply) => {
    const r = await resolveBlock(node, req.params.id);
    if (!r) throw new ExecutionError('NOT_FOUND', `no block ${req.params.id}`);
    return ok(reply, await blockView(node, r));
  });

  // Read at the head: the counterparts whose registration is in the canonical state.
  registerRoute(app, routes.bridgeCounterparts, {}, async (_req, reply) => ok(reply, await node.chain.bridge.counterparts(node.chain.headState())));

  registerContractRoutes(app, node);

  registerRoute(app, routes.metrics, {}, async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(await node.metrics.text()));
}

/** A refused batch entry: its hash (when it has bytes) and the error a single submission would get. */
function rejected(bytes: Uint8Array | undefined, err: unknown): BatchEntryResult {
  const { code, message } = classify(err);
  return { hash: bytes ? toHex(sha3(bytes)) : null, status: 'rejected', error: { code, message } };
}

/** Storage keys of a proof request: comma-separated 0x 32-byte hex, at most 64. */
function parseStorageKeys(raw: string | undefined): Uint8Array[] {
  if (raw === undefined || raw === '') return [];
  const parts = raw.split(',');
  if (parts.length > 64) throw new ExecutionError('MALFORMED_INPUT', `at most 64 storage keys per proof, got ${parts.length}`);
  return parts.map((k) => {
    try {
      return parseHex(k.trim(), 'storage key', 32);
    } catch {
      throw new ExecutionError('MALFORMED_INPUT', `malformed storage key ${k}: expected 0x-prefixed 32-byte hex`);
    }
  });
}
