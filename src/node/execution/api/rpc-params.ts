/**
 * JSON-RPC errors and parameter parsing: quantities, block selectors (tags, numbers, hashes and
 * EIP-1898 objects), call objects and log filters. Every bad parameter is -32602 with a message
 * naming it; a well-formed reference to a block this node does not have is -32000.
 */
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { normalizeAddress } from '../../../core/crypto/address.js';
import type { BlockRecord } from '../blocks.js';
import type { ExecutionModules } from './modules.js';
import { resolveBlock } from './queries.js';
import type { CallRequest } from './contracts.js';

/** Standard JSON-RPC error codes (DECISIONS.md), and 3 for a reverted call as Ethereum nodes answer. */
export const RpcCode = { Parse: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, Internal: -32603, Server: -32000, Reverted: 3 } as const;

/** An error with a JSON-RPC code. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export type Params = unknown[];

/** Parses `params[i]` with `parse`, turning its failure into -32602 naming the parameter. */
export function param<T>(params: Params, i: number, parse: (v: unknown) => T, name: string, optional = false): T | undefined {
  const v = params[i];
  if (v === undefined && optional) return undefined;
  try {
    return parse(v);
  } catch (err) {
    throw new RpcError(RpcCode.InvalidParams, `invalid ${name}: ${(err as Error).message}`);
  }
}

export const address = (v: unknown) => normalizeAddress(v, 'address');
export const hash32 = (v: unknown) => toHex(parseHex(v, 'hash', 32));
export const bool = (v: unknown) => {
  if (typeof v !== 'boolean') throw new Error('expected true or false');
  return v;
};

const QTY_RE = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** An Ethereum quantity: 0x hex without leading zeros (a safe JSON integer is accepted too), below 2^bits. */
export function quantity(bits = 256): (v: unknown) => bigint {
  return (v) => {
    let n: bigint;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) n = BigInt(v);
    else if (typeof v === 'string' && QTY_RE.test(v)) n = BigInt(v);
    else throw new Error(`expected a 0x hex quantity without leading zeros, got ${JSON.stringify(v)}`);
    if (n >= 1n << BigInt(bits)) throw new Error(`quantity ${v} does not fit in ${bits} bits`);
    return n;
  };
}

/** Hex data of any length (`0x` is empty). */
export const data = (v: unknown) => parseHex(v, 'data');

/** A 32-byte storage key: a quantity or up to 32 bytes of hex, left-padded with zeros. */
export function storageKey(v: unknown): Uint8Array {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(v)) throw new Error('expected 0x and 1..64 hex digits');
  return parseHex('0x' + v.slice(2).padStart(64, '0'), 'storage key', 32);
}

const TAGS = ['latest', 'pending', 'finalized', 'safe', 'earliest'] as const;
/** Block tags every state method accepts; `pending` reads the head (the pool is not executed ahead). */
export type BlockTag = (typeof TAGS)[number];

/** A parsed block selector. */
export type BlockSelector = { tag: BlockTag } | { number: number } | { hash: string; requireCanonical: boolean };

/** Parses a block tag, a 0x number, a 32-byte hash (where hashes are allowed) or an EIP-1898 object. */
export function blockSelector(v: unknown, allowHash = true): BlockSelector {
  if (v === undefined || v === null) return { tag: 'latest' };
  if (typeof v === 'string') {
    if ((TAGS as readonly string[]).includes(v)) return { tag: v as BlockTag };
    if (allowHash && /^0x[0-9a-fA-F]{64}$/.test(v)) return { hash: v.toLowerCase(), requireCanonical: false };
    if (v.startsWith('0x')) return { number: blockNumber(v) };
  }
  if (typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (o.blockHash !== undefined && o.blockNumber !== undefined) throw new Error('give blockHash or blockNumber, not both');
    if (o.blockHash !== undefined) {
      if (o.requireCanonical !== undefined && typeof o.requireCanonical !== 'boolean') throw new Error('requireCanonical must be true or false');
      return { hash: hash32(o.blockHash), requireCanonical: o.requireCanonical === true };
    }
    if (o.blockNumber !== undefined) return blockSelector(o.blockNumber, false);
  }
  throw new Error(`expected a block number, a block hash or one of ${TAGS.join(', ')}; got ${JSON.stringify(v)}`);
}

function blockNumber(v: unknown): number {
  const n = quantity(64)(v);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`block number ${v} is too large`);
  return Number(n);
}

/** The block a selector names, or a -32000 error when this node has no such block. */
export async function resolveSelector(node: ExecutionModules, sel: BlockSelector): Promise<BlockRecord> {
  let r: BlockRecord | undefined;
  let what: string;
  if ('tag' in sel) {
    r = await resolveBlock(node, sel.tag);
    what = sel.tag;
  } else if ('number' in sel) {
    r = sel.number > node.chain.head().index ? undefined : await resolveBlock(node, String(sel.number));
    what = `0x${sel.number.toString(16)} (head is 0x${node.chain.head().index.toString(16)})`;
  } else {
    r = await resolveBlock(node, sel.hash);
    what = sel.hash;
    if (r && sel.requireCanonical && (await node.chain.canonicalHash(r.index)) !== r.hash) throw new RpcError(RpcCode.Server, `block ${sel.hash} is not canonical`);
  }
  if (!r) throw new RpcError(RpcCode.Server, `unknown block ${what}`);
  return r;
}

/** The zero address: `from` of a call that names none. */
export const ZERO_ADDRESS = '0x' + '00'.repeat(20);

/** Parses an eth_call / eth_estimateGas transaction object; fields tooling adds (fees, nonce, type, access list) are ignored. */
export function callRequest(v: unknown): CallRequest {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('expected a transaction object');
  const o = v as Record<string, unknown>;
  const field = <T>(name: string, parse: (x: unknown) => T): T | undefined => {
    if (o[name] === undefined || o[name] === null) return undefined;
    try {
      return parse(o[name]);
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`);
    }
  };
  const input = field('input', data);
  const dataField = field('data', data);
  if (input && dataField && toHex(input) !== toHex(dataField)) throw new Error('data and input differ; give one');
  const payload = input ?? dataField ?? new Uint8Array(0);
  const to = field('to', address) ?? null;
  if (to === null && payload.length === 0) throw new Error('a call without "to" is a deployment and needs data');
  const gas = field('gas', quantity(64));
  return { from: field('from', address) ?? ZERO_ADDRESS, to, value: field('value', quantity(256)) ?? 0n, data: payload, ...(gas === undefined ? {} : { gas }) };
}

/** A parsed eth_getLogs filter, with its range still symbolic. */
export interface RpcLogFilter {
  range: { blockHash: string } | { from: BlockSelector; to: BlockSelector };
  addresses: string[];
  topics: Array<string[] | null>;
}

const topic = (v: unknown) => hash32(v);

/** Parses an eth_getLogs filter object. */
export function logFilter(v: unknown): RpcLogFilter {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('expected a filter object');
  const o = v as Record<string, unknown>;
  const known = ['fromBlock', 'toBlock', 'blockHash', 'address', 'topics'];
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length) throw new Error(`unknown filter field ${unknown[0]}`);
  let range: RpcLogFilter['range'];
  if (o.blockHash !== undefined) {
    if (o.fromBlock !== undefined || o.toBlock !== undefined) throw new Error('blockHash cannot be combined with fromBlock or toBlock');
    range = { blockHash: hash32(o.blockHash) };
  } else {
    range = { from: blockSelector(o.fromBlock ?? 'latest', false), to: blockSelector(o.toBlock ?? 'latest', false) };
  }
  let addresses: string[] = [];
  if (Array.isArray(o.address)) addresses = o.address.map((a, i) => normalizeAddress(a, `address[${i}]`));
  else if (o.address !== undefined && o.address !== null) addresses = [address(o.address)];
  let topics: Array<string[] | null> = [];
  if (o.topics !== undefined && o.topics !== null) {
    if (!Array.isArray(o.topics)) throw new Error('topics must be an array');
    if (o.topics.length > 4) throw new Error(`at most 4 topic positions, got ${o.topics.length}`);
    topics = o.topics.map((t) => (t === null ? null : Array.isArray(t) ? t.map(topic) : [topic(t)]));
  }
  return { range, addresses, topics };
}

/** Per-request context: the submission limits bound to the caller. */
export interface RpcContext {
  /** Who asked (the client IP), for per-client limits. */
  client: string;
  limitIp(): void;
  limitSender(sender: string): void;
}

/** The installed polled filters, as the filter methods use them (rpc-filters.ts). */
export interface FilterStore {
  install(kind: 'block' | 'pending' | 'logs', raw?: unknown, criteria?: RpcLogFilter): string;
  changes(id: string): unknown[];
  logQuery(id: string): unknown;
  uninstall(id: string): boolean;
}

/** What methods reach beyond the node's modules: the installed filters. */
export interface RpcEnv {
  filters: FilterStore;
}

/** Most parameters a method takes. */
export type Arity = number;

/** One JSON-RPC method. */
export type Method = (params: Params, node: ExecutionModules, ctx: RpcContext, env: RpcEnv) => unknown;
