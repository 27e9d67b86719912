/**
 * REST equivalents of the contract and log JSON-RPC methods, under /api/v1/execution/: code,
 * storage, logs, read-only calls and gas estimates. Bad input is a 400 envelope naming the field,
 * a block the node lacks a 404.
 */
import type { FastifyInstance } from 'fastify';
import * as routes from '../../../api/routes/execution.js';
import type { CallView, CodeView, EstimateGasView, LogsView, StorageView } from '../../../api/execution.js';
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../../../core/codec/json.js';
import { normalizeAddress } from '../../../core/crypto/address.js';
import { MalformedError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import type { BlockRecord } from '../blocks.js';
import { topicsMatch } from '../logs.js';
import type { ExecutionModules } from './modules.js';
import { resolveBlock } from './queries.js';
import { DEFAULT_BODY_LIMIT, clientIp, ok } from '../../shared/http.js';
import { registerRoute } from '../../shared/routes.js';
import type { CallRequest } from './contracts.js';
import { ZERO_ADDRESS } from './rpc-params.js';

/** The block a `block` query or body field names (default latest); 404 when the node lacks it. */
async function blockOf(node: ExecutionModules, id: unknown): Promise<BlockRecord> {
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') throw new MalformedError('block', 'expected a number, a 0x hash, latest, finalized or earliest');
  const name = id === undefined ? 'latest' : String(id);
  const r = await resolveBlock(node, name);
  if (!r) throw new ExecutionError('NOT_FOUND', `no block ${name}`);
  return r;
}

/** A 32-byte storage key path parameter: 0x and 1..64 hex digits, left-padded. */
function storageKeyParam(v: string): Uint8Array {
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(v)) throw new MalformedError('storage key', 'expected 0x and 1..64 hex digits');
  return parseHex('0x' + v.slice(2).padStart(64, '0'), 'storage key', 32);
}

const CALL_KEYS = ['from', 'to', 'data', 'value', 'gas', 'block'] as const;

/** Parses a call body: `to` (null for a deployment), `data` 0x hex, optional `from`, `value` (base-10 wei), `gas`, `block`. */
function callBody(body: unknown): CallRequest & { block: unknown } {
  const o = requireObject(body, 'request');
  rejectUnknownKeys(o, CALL_KEYS, 'request');
  const to = o.to === null || o.to === undefined ? null : normalizeAddress(o.to, 'request.to');
  const data = o.data === undefined ? new Uint8Array(0) : parseHex(o.data, 'request.data');
  if (to === null && data.length === 0) throw new MalformedError('request.to', 'a call without "to" is a deployment and needs data');
  return {
    from: o.from === undefined ? ZERO_ADDRESS : normalizeAddress(o.from, 'request.from'),
    to,
    data,
    value: o.value === undefined ? 0n : parseDecimal(o.value, 'request.value', 256),
    ...(o.gas === undefined ? {} : { gas: BigInt(parseUint(o.gas, 'request.gas')) }),
    block: o.block,
  };
}

const TOPIC_RE = /^0x[0-9a-fA-F]{64}$/;

/** A `topicN` query value: comma-separated alternatives (OR), each 32 bytes of hex. */
function topicAlternatives(v: string | undefined, name: string): string[] | null {
  if (v === undefined || v === '') return null;
  return v.split(',').map((t) => {
    if (!TOPIC_RE.test(t)) throw new MalformedError(name, 'expected comma-separated 0x and 64 hex digits');
    return t.toLowerCase();
  });
}


/** Registers the contract and log routes. */
export function registerContractRoutes(app: FastifyInstance, node: ExecutionModules): void {
  const { contracts: reader, logs } = node;
  const small = { bodyLimit: DEFAULT_BODY_LIMIT };

  registerRoute(app, routes.contractCode, {}, async (req, reply) => {
    const address = normalizeAddress(req.params.address);
    const block = await blockOf(node, req.query.block);
    const code = await reader.code(block, address);
    return ok(reply, { address, block_number: block.index, block_hash: block.hash, code: toHex(code), size: code.length } satisfies CodeView);
  });

  registerRoute(app, routes.contractStorage, {}, async (req, reply) => {
    const address = normalizeAddress(req.params.address);
    const key = storageKeyParam(req.params.key);
    const block = await blockOf(node, req.query.block);
    const value = await reader.storage(block, address, key);
    return ok(reply, { address, key: toHex(key), value: toHex(value), block_number: block.index, block_hash: block.hash } satisfies StorageView);
  });

  registerRoute(app, routes.call, small, async (req, reply) => {
    const { block: id, ...call } = callBody(req.body);
    const block = await blockOf(node, id);
    const r = await reader.call(block, call, clientIp(req));
    return ok(reply, { return_data: toHex(r.returnData), gas_used: Number(r.gasUsed), block_number: block.index, block_hash: block.hash } satisfies CallView);
  });

  registerRoute(app, routes.estimateGas, small, async (req, reply) => {
    const { block: id, ...call } = callBody(req.body);
    const block = await blockOf(node, id);
    return ok(reply, { gas: Number(await reader.estimateGas(block, call, clientIp(req))), block_number: block.index } satisfies EstimateGasView);
  });

  registerRoute(app, routes.logs, {}, async (req, reply) => {
    const q = req.query;
    rejectUnknownKeys(q as Record<string, unknown>, ['address', 'from', 'to', 'block_hash', 'topic0', 'topic1', 'topic2', 'topic3'], 'query');
    const addresses = q.address ? q.address.split(',').map((a) => normalizeAddress(a, 'address')) : [];
    const topics = [q.topic0, q.topic1, q.topic2, q.topic3].map((t, i) => topicAlternatives(t, `topic${i}`));
    while (topics.length && topics[topics.length - 1] === null) topics.pop();
    if (q.block_hash !== undefined) {
      if (q.from !== undefined || q.to !== undefined) throw new MalformedError('block_hash', 'cannot be combined with from or to');
      if (!TOPIC_RE.test(q.block_hash)) throw new MalformedError('block_hash', 'expected 0x and 64 hex digits');
      const block = await blockOf(node, q.block_hash);
      const canonical = block.tx_count > 0 && (await node.chain.canonicalHash(block.index)) === block.hash;
      const all = await logs.ofStoredBlock(block, canonical, () => node.chain.blocks.receipts(block.hash));
      const wanted = new Set(addresses);
      const found = all.filter((l) => (wanted.size === 0 || wanted.has(l.address)) && topicsMatch(l, topics));
      return ok(reply, { from_block: block.index, to_block: block.index, logs: found } satisfies LogsView);
    }
    const head = node.chain.head().index;
    const to = q.to === undefined ? head : (await heightOf(node, q.to, 'to'));
    const from = q.from === undefined ? to : (await heightOf(node, q.from, 'from'));
    logs.checkRange(from, to);
    const clamped = Math.min(to, head);
    const found = from > clamped ? [] : await logs.query({ fromBlock: from, toBlock: clamped, addresses, topics });
    return ok(reply, { from_block: from, to_block: clamped, logs: found } satisfies LogsView);
  });
}

/** A range bound: a height (it may be past the head) or a tag. */
async function heightOf(node: ExecutionModules, v: string, field: string): Promise<number> {
  if (/^(0|[1-9][0-9]{0,15})$/.test(v)) return Number(v);
  if (!['latest', 'finalized', 'safe', 'earliest', 'pending'].includes(v)) throw new MalformedError(field, 'expected a block number, latest, finalized or earliest');
  return (await blockOf(node, v)).index;
}
