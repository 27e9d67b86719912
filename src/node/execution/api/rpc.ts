/**
 * JSON-RPC 2.0 (`{jsonrpc_url}`, default port 8545), with batches. Quantities and objects follow
 * Ethereum's conventions where the svc transaction format allows (rpc-format.ts), so viem's and
 * ethers' standard reads work; state, contract, log and fee methods are in rpc-state.ts.
 */
import { CallLimitError } from '../reads/call-pool.js';
import type { FastifyInstance } from 'fastify';
import { toHex } from '../../../core/codec/bytes.js';
import { SvcError, TxError, MalformedError } from '../../../core/errors.js';
import type { Transaction } from '../../../core/types/transaction.js';
import { txFromJson, txToJson } from '../../../core/types/transaction-json.js';
import type { BlockRecord } from '../chain.js';
import type { LogJson } from '../../../api/execution.js';
import { isServerFault } from '../../../api/errors.js';
import type { ExecutionModules } from './modules.js';
import { account, resolveBlock, txStatus } from './queries.js';
import { PoolError } from '../txpool/pool.js';
import { DEFAULT_BODY_LIMIT, clientIp } from '../../shared/http.js';
import { registerRoute } from '../../shared/routes.js';
import { jsonRpc } from '../../../api/routes/execution.js';
import { parseRaw } from './submission.js';
import { RateLimiter } from './rate-limit.js';
import { logsBloom } from '../logs.js';
import { CallFailedError } from './contracts.js';
import { abiErrorString, qty, rpcReceipt, rpcTx } from './rpc-format.js';
import { type Arity, address, bool, hash32, type Method, param, type Params, type RpcContext, type RpcEnv, RpcCode, RpcError } from './rpc-params.js';
import { STATE_ARITY, STATE_METHODS } from './rpc-state.js';
import { RpcFeed } from './rpc-feed.js';
import { filterMethods, RpcFilters } from './rpc-filters.js';
import { RpcSockets } from './rpc-ws.js';
import type { Logger } from '../../../util/log.js';

export { RpcCode, RpcError } from './rpc-params.js';
export type { RpcContext } from './rpc-params.js';

/** Most requests one batch may carry. */
const MAX_BATCH = 100;
const ZERO_HASH = '0x' + '00'.repeat(32);

const UNLIMITED: RpcContext = { client: '', limitIp() {}, limitSender() {} };

async function blockByTag(node: ExecutionModules, tag: unknown): Promise<BlockRecord | undefined> {
  if (typeof tag !== 'string') throw new RpcError(RpcCode.InvalidParams, 'block tag must be a string');
  if (/^0x[0-9a-fA-F]+$/.test(tag)) {
    const n = BigInt(tag);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    return resolveBlock(node, n.toString());
  }
  if (['latest', 'pending', 'finalized', 'safe', 'earliest'].includes(tag)) return resolveBlock(node, tag);
  throw new RpcError(RpcCode.InvalidParams, `invalid block tag ${JSON.stringify(tag)}`);
}

// Without full transactions only the record, the header and the hash list are read.
async function rpcBlock(node: ExecutionModules, r: BlockRecord, full: boolean) {
  return { ...(await rpcHeader(node, r, full)), size: qty(r.size) };
}

/**
 * A block's header fields (eth_subscribe newHeads sends these alone) and its transactions.
 * `baseFeePerGas` is the genesis minimum gas price: svc has no fee market, every transaction pays
 * at least that floor (to the proposer, nothing is burned), so EIP-1559 tooling that reads it as
 * the base fee estimates a fee the chain accepts (docs/execution.md, "Fees").
 */
async function rpcHeader(node: ExecutionModules, r: BlockRecord, full: boolean | undefined) {
  const at = { hash: r.hash, number: r.index };
  const block = full ? await node.chain.blocks.block(r.hash) : undefined;
  const header = block ? block.header : (await node.chain.blocks.header(r.hash))?.header;
  const chainId = node.chain.genesis.network_id;
  const txs = full === undefined ? [] : block ? block.transactions.map((t, i) => rpcTx(txToJson(t), chainId, at, i)) : await node.chain.blocks.txHashes(r.hash);
  return {
    number: qty(r.index),
    hash: r.hash,
    parentHash: r.parent,
    timestamp: qty(Math.floor(r.timestamp / 1000)),
    miner: r.proposer,
    stateRoot: r.state_root,
    transactionsRoot: header ? toHex(header.merkleRoot) : ZERO_HASH,
    receiptsRoot: ZERO_HASH,
    gasUsed: qty(r.gas_used),
    gasLimit: qty(node.chain.genesis.config.max_gas_per_block),
    baseFeePerGas: qty(BigInt(node.chain.genesis.config.min_gas_price)),
    difficulty: '0x0',
    totalDifficulty: '0x0',
    nonce: '0x0000000000000000',
    mixHash: header ? toHex(header.randaoReveal) : ZERO_HASH,
    sha3Uncles: ZERO_HASH,
    uncles: [],
    logsBloom: toHex(logsBloom(await logsOfBlock(node, r))),
    extraData: '0x',
    ...(full === undefined ? {} : { transactions: txs }),
  };
}

/** A stored block's logs (canonical from the index, side branches from their receipts). */
export async function logsOfBlock(node: ExecutionModules, r: BlockRecord): Promise<LogJson[]> {
  const canonical = r.tx_count > 0 && (await node.chain.canonicalHash(r.index)) === r.hash;
  return node.logs.ofStoredBlock(r, canonical, () => node.chain.blocks.receipts(r.hash));
}

async function submit(node: ExecutionModules, ctx: RpcContext, parse: () => { tx: Transaction; envelope?: Uint8Array }): Promise<string> {
  // Refusals before admission are rejections too (admission counts its own).
  try {
    ctx.limitIp();
  } catch (err) {
    node.admission.refusedBeforeAdmission(err);
    throw err;
  }
  let parsed;
  try {
    parsed = parse();
  } catch (err) {
    node.admission.refusedBeforeAdmission(err);
    throw new RpcError(RpcCode.InvalidParams, (err as Error).message, err instanceof SvcError ? { code: err.code } : undefined);
  }
  const { tx, envelope } = parsed;
  return (await node.admission.submit(tx, 'rpc', { ...(envelope ? { envelope } : {}), limitSender: (sender) => ctx.limitSender(sender) })).hash;
}

const METHODS = {
  web3_clientVersion: () => `svc/${process.env.npm_package_version ?? '0.1.0'}/node-${process.version}`,
  net_version: (_p, n) => String(n.chain.genesis.network_id),
  eth_chainId: (_p, n) => qty(n.chain.genesis.network_id),
  eth_blockNumber: (_p, n) => qty(n.chain.head().index),
  eth_gasPrice: (_p, n) => qty(BigInt(n.chain.genesis.config.min_gas_price)),
  // No fee market: the floor is the base fee (rpcHeader), and a transaction at the floor is
  // included while blocks have room, so the tip needed is zero.
  eth_maxPriorityFeePerGas: () => '0x0',
  svc_getNonce: (p, n) => {
    const a = param(p, 0, address, 'address')!;
    const acc = account(n, a);
    return { address: a, nonce: acc.nonce, pendingNonce: acc.pending_nonce };
  },
  eth_getBlockByNumber: async (p, n, _c) => {
    const full = param(p, 1, bool, 'full transactions flag', true) ?? false;
    const r = await blockByTag(n, p[0]);
    return r ? rpcBlock(n, r, full) : null;
  },
  eth_getBlockByHash: async (p, n, _c) => {
    const h = param(p, 0, hash32, 'block hash')!;
    const full = param(p, 1, bool, 'full transactions flag', true) ?? false;
    const r = await resolveBlock(n, h);
    return r ? rpcBlock(n, r, full) : null;
  },
  eth_getTransactionByHash: async (p, n) => {
    const s = await txStatus(n, param(p, 0, hash32, 'transaction hash')!);
    if (!s.tx) return null;
    return rpcTx(s.tx, n.chain.genesis.network_id, s.block, s.receipt?.transactionIndex);
  },
  eth_getTransactionReceipt: async (p, n) => {
    const s = await txStatus(n, param(p, 0, hash32, 'transaction hash')!);
    return s.receipt ? rpcReceipt(s.receipt) : null;
  },
  eth_sendRawTransaction: (p, n, ctx) => submit(n, ctx, () => parseRaw(p[0], 'raw transaction')),
  svc_sendTransaction: (p, n, ctx) => submit(n, ctx, () => ({ tx: txFromJson(p[0]) })),
  txpool_status: (_p, n) => {
    const c = n.admission.pool.counts(n.admission.accountNonce);
    return { pending: qty(c.pending), queued: qty(c.queued) };
  },
  txpool_content: (_p, n) => {
    const out: { pending: Record<string, Record<string, unknown>>; queued: Record<string, Record<string, unknown>> } = { pending: {}, queued: {} };
    const entries = n.admission.pool.entries();
    n.admission.views(entries).forEach((v, i) => {
      const e = entries[i]!;
      const bucket = out[v.status === 'ready' ? 'pending' : 'queued'];
      (bucket[e.sender] ??= {})[e.nonce.toString()] = rpcTx(txToJson(e.tx), n.chain.genesis.network_id, undefined, undefined);
    });
    return out;
  },
  ...STATE_METHODS,
  ...filterMethods(STATE_METHODS.eth_getLogs),
  // Over WebSocket (rpc-ws.ts) these are answered before this table is reached.
  eth_subscribe: () => {
    throw new RpcError(RpcCode.MethodNotFound, 'eth_subscribe needs a WebSocket connection to this port (ws://<host>:8545/); the beacon\'s own event stream is ws://<beacon-host>:8080/ws');
  },
  eth_unsubscribe: () => {
    throw new RpcError(RpcCode.MethodNotFound, 'eth_unsubscribe needs a WebSocket connection to this port (ws://<host>:8545/)');
  },
} satisfies Record<string, Method>;

/**
 * Most parameters each method takes: more is -32602 "too many arguments, want at most N", as geth
 * answers (missing required ones are refused by each parameter's own parser, naming it).
 */
const ARITY: { readonly [K in keyof typeof METHODS]: Arity } = {
  web3_clientVersion: 0,
  net_version: 0,
  eth_chainId: 0,
  eth_blockNumber: 0,
  eth_gasPrice: 0,
  eth_maxPriorityFeePerGas: 0,
  svc_getNonce: 1,
  eth_getBlockByNumber: 2,
  eth_getBlockByHash: 2,
  eth_getTransactionByHash: 1,
  eth_getTransactionReceipt: 1,
  eth_sendRawTransaction: 1,
  svc_sendTransaction: 1,
  txpool_status: 0,
  txpool_content: 0,
  ...STATE_ARITY,
  eth_newBlockFilter: 0,
  eth_newPendingTransactionFilter: 1,
  eth_newFilter: 1,
  eth_getFilterChanges: 1,
  eth_getFilterLogs: 1,
  eth_uninstallFilter: 1,
  eth_subscribe: 2,
  eth_unsubscribe: 1,
};

interface RpcRequest {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: unknown;
}

function errorResponse(id: unknown, code: number, message: string, data?: unknown) {
  return { jsonrpc: '2.0' as const, id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** The revert data of a reverted call: its reason (the VM's return data on a revert) ABI-encoded as Error(string). */
function revertData(err: CallFailedError): string {
  return abiErrorString(err.result.returnData);
}

/** Handles one request object; returns undefined for notifications (no id). */
export async function handleRpc(req: unknown, node: ExecutionModules, env: RpcEnv, ctx: RpcContext = UNLIMITED): Promise<object | undefined> {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) return errorResponse(null, RpcCode.InvalidRequest, 'invalid request: expected an object');
  const r = req as Partial<RpcRequest>;
  const id = r.id;
  const validId = id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !validId) {
    return errorResponse(validId ? id : null, RpcCode.InvalidRequest, 'invalid request: need jsonrpc "2.0", a string method and a string or number id');
  }
  if (r.params !== undefined && !Array.isArray(r.params)) return errorResponse(id, RpcCode.InvalidParams, 'params must be an array');
  const name = r.method as keyof typeof METHODS;
  const method: Method | undefined = Object.hasOwn(METHODS, name) ? METHODS[name] : undefined;
  if (!method) return errorResponse(id, RpcCode.MethodNotFound, `the method ${r.method} does not exist/is not available`);
  const params = (r.params as Params | undefined) ?? [];
  if (params.length > ARITY[name]) return errorResponse(id, RpcCode.InvalidParams, `too many arguments, want at most ${ARITY[name]}`);
  try {
    const result = await method(params, node, ctx, env);
    return id === undefined ? undefined : { jsonrpc: '2.0', id, result };
  } catch (err) {
    if (err instanceof RpcError) return errorResponse(id, err.code, err.message, err.data);
    // Ethereum nodes answer a reverted call with code 3 and the revert data ABI-encoded as
    // Error(string), which viem and ethers decode into the reason.
    if (err instanceof CallFailedError && err.reverted) return errorResponse(id, RpcCode.Reverted, err.message, revertData(err));
    if (err instanceof TxError || err instanceof PoolError || err instanceof MalformedError || err instanceof SvcError) {
      // A call refused or ended by the call threads' limits is the server's answer (as geth's "execution aborted (timeout)"), not an internal fault.
      return errorResponse(id, isServerFault(err) && !(err instanceof CallLimitError) ? RpcCode.Internal : RpcCode.Server, err.message, { code: err.code });
    }
    return errorResponse(id, RpcCode.Internal, 'internal error');
  }
}

/**
 * Registers the JSON-RPC route (POST /) on the RPC server, and JSON-RPC over WebSocket on upgrades to / (rpc-ws.ts).
 * Bodies are parsed here so a parse error is -32700, not HTTP 400. The filters and subscriptions
 * follow the node's canonical changes and admissions through one RpcFeed.
 */
export function registerRpcMethods(app: FastifyInstance, node: ExecutionModules, submitRatePerIp: number, log: Logger): void {
  const feed = new RpcFeed((r) => node.logs.ofStoredBlock(r, false, () => node.chain.blocks.receipts(r.hash)), log);
  node.onCanonical((change) => feed.canonical(change));
  node.admission.onAdmitted((tx) => feed.pending(tx.hash));
  const filters = new RpcFilters(feed);
  const env: RpcEnv = { filters };
  const perIp = new RateLimiter(submitRatePerIp, submitRatePerIp * 2, 'client');
  const perSender = new RateLimiter(submitRatePerIp, submitRatePerIp * 2, 'sender');
  const context = (ip: string): RpcContext => ({ client: ip, limitIp: () => perIp.take(ip), limitSender: (sender) => perSender.take(sender) });
  const sockets = RpcSockets.attach(app.server, {
    handle: (req, ctx) => handleRpc(req, node, env, ctx),
    context,
    header: (r) => rpcHeader(node, r, undefined),
    feed,
    log,
    maxBatch: MAX_BATCH,
  });
  app.addHook('onClose', async () => {
    filters.close();
    await sockets.close();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: DEFAULT_BODY_LIMIT }, (_req, body, done) => done(null, body));
  registerRoute(app, jsonRpc, {}, async (req, reply) => {
    const ctx = context(clientIp(req));
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(req.body ?? ''));
    } catch {
      return reply.send(errorResponse(null, RpcCode.Parse, 'parse error: body is not valid JSON'));
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return reply.send(errorResponse(null, RpcCode.InvalidRequest, 'invalid request: empty batch'));
      if (parsed.length > MAX_BATCH) return reply.send(errorResponse(null, RpcCode.InvalidRequest, `invalid request: batch larger than ${MAX_BATCH}`));
      const out = (await Promise.all(parsed.map((p) => handleRpc(p, node, env, ctx)))).filter((x) => x !== undefined);
      return out.length ? reply.send(out) : reply.status(204).send();
    }
    const res = await handleRpc(parsed, node, env, ctx);
    return res ? reply.send(res) : reply.status(204).send();
  });
}
