/**
 * Shared fixture for the execution-layer tests (not a test file itself): an in-process devnet
 * genesis whose keys are derivable, nodes on ephemeral ports, HTTP helpers, signed transactions
 * and signed blocks.
 */
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex, toHex, u64LE } from '../../../src/core/codec/bytes.js';
import { GWEI, TX_BASE_GAS, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import type { Genesis } from '../../../src/core/genesis/genesis.js';
import { type Block, blockToJson, type BlockJson, buildSignedBlock } from '../../../src/core/types/block.js';
import { encodeTx, signStandardTx, type StandardTx, type Transaction, txHash } from '../../../src/core/types/transaction.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { ExecutionNode, type ExecutionNodeOptions } from '../../../src/node/execution/node.js';
import { silentLogger } from '../../../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../../../src/wallet/derivation.js';

export const TOKEN = WEI_PER_TOKEN;
export const CHAIN_ID = 'svc-exectest';
export const NETWORK_ID = 31337;
/** Unix seconds of slot 0: fixed, in the past, so block timestamps are reproducible. */
export const GENESIS_TIME = 1_700_000_000;
export const MIN_GAS_PRICE = GWEI;

export interface DevKeys {
  validators: WalletKeys[];
  accounts: WalletKeys[];
  faucet: WalletKeys;
  /** Keys on the accounts branch that genesis does not fund (index 100 + i). */
  unfunded: WalletKeys[];
}

let cached: { genesis: Genesis; keys: DevKeys } | undefined;

/** The devnet genesis (2 validators, 2 accounts, faucet) and every key, built once per process. */
export function devnet(): { genesis: Genesis; keys: DevKeys } {
  if (cached) return cached;
  const { genesis, keys } = buildGenesis({
    validators: 2,
    accounts: 2,
    preset: 'devnet',
    chainId: CHAIN_ID,
    networkId: NETWORK_ID,
    genesisTime: GENESIS_TIME,
    mnemonic: DEV_MNEMONIC,
  });
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const unfunded = [0, 1].map((i) => deriveWalletKeys(seed, walletPath(Branch.Accounts, 100 + i)));
  // The keys come from the documented derivation paths, not only from the builder's output.
  const v0 = deriveWalletKeys(seed, walletPath(Branch.Validators, 0));
  assert.is(v0.address, genesis.validators[0]!.address, 'validator 0 derives from walletPath(Branch.Validators, 0)');
  cached = {
    genesis,
    keys: {
      validators: keys.filter((k) => k.role === 'validator').map((k) => k.keys),
      accounts: keys.filter((k) => k.role === 'account').map((k) => k.keys),
      faucet: keys.find((k) => k.role === 'faucet')!.keys,
      unfunded,
    },
  };
  return cached;
}

/** Starts an in-memory node on ephemeral loopback ports with the faucet enabled. */
export async function startNode(opts: Partial<ExecutionNodeOptions> = {}): Promise<ExecutionNode> {
  const { genesis, keys } = devnet();
  return ExecutionNode.start({
    genesis,
    host: '127.0.0.1',
    restPort: 0,
    rpcPort: 0,
    log: silentLogger,
    verifierThreads: 1,
    faucet: { key: keys.faucet.mldsa, address: keys.faucet.address },
    ...opts,
  });
}

/** Runs `fn` with a node, stopping it whatever happens. */
export async function withNode<T>(fn: (node: ExecutionNode) => Promise<T>, opts: Partial<ExecutionNodeOptions> = {}): Promise<T> {
  const node = await startNode(opts);
  try {
    return await fn(node);
  } finally {
    await node.stop();
  }
}

/** A fresh temp directory, removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-exec-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface HttpResult {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** One HTTP request; the body is parsed as JSON when it is JSON. */
export async function http(
  base: string,
  path: string,
  init: { method?: string; json?: unknown; body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: string | Uint8Array | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** GET on the REST server. */
export const get = (node: ExecutionNode, path: string, headers?: Record<string, string>) => http(node.restUrl, path, { headers });
/** POST JSON on the REST server. */
export const post = (node: ExecutionNode, path: string, json: unknown) => http(node.restUrl, path, { json });

/** Asserts the DECISIONS.md error envelope with an exact status, code and message (or prefix). */
export function expectEnvelope(r: HttpResult, status: number, code: string, message?: string | RegExp): string {
  assert.is(r.status, status, `expected HTTP ${status}, got ${r.status}: ${r.text}`);
  assert.ok(r.body && typeof r.body === 'object', `expected a JSON body, got ${r.text}`);
  assert.equal(Object.keys(r.body).sort(), ['error', 'success'], `envelope keys: ${r.text}`);
  assert.is(r.body.success, false);
  assert.equal(Object.keys(r.body.error).sort(), ['code', 'message'], `error keys: ${r.text}`);
  assert.is(r.body.error.code, code, `code: ${r.text}`);
  assert.type(r.body.error.message, 'string');
  if (typeof message === 'string') assert.is(r.body.error.message, message);
  else if (message) assert.match(r.body.error.message, message);
  return r.body.error.message;
}

/** Asserts `{success: true, data}` with `status` and returns data. */
export function expectOk(r: HttpResult, status = 200): any {
  assert.is(r.status, status, `expected HTTP ${status}, got ${r.status}: ${r.text}`);
  assert.is(r.body?.success, true, r.text);
  return r.body.data;
}

/** One JSON-RPC call; returns the whole response object. */
export async function rpc(node: ExecutionNode, method: string, params: unknown[] = [], id: number = 1): Promise<any> {
  const r = await http(node.rpcUrl, '/', { json: { jsonrpc: '2.0', method, params, id } });
  assert.is(r.status, 200, r.text);
  return r.body;
}

/** The result of a JSON-RPC call that must succeed. */
export async function rpcResult(node: ExecutionNode, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(node, method, params);
  assert.is(r.error, undefined, `${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

export interface TransferOpts {
  nonce: number | bigint;
  to?: string | null;
  value?: bigint;
  gasPrice?: bigint;
  gasLimit?: bigint;
  data?: Uint8Array;
  chainId?: string;
}

export const RECIPIENT = '0x00000000000000000000000000000000000000aa';

/** A signed type-0 transaction from `from`. */
export function transfer(from: WalletKeys, o: TransferOpts): StandardTx {
  return signStandardTx(
    {
      nonce: BigInt(o.nonce),
      gasPrice: o.gasPrice ?? MIN_GAS_PRICE,
      gasLimit: o.gasLimit ?? TX_BASE_GAS,
      to: o.to === null ? null : parseHex(o.to ?? RECIPIENT, 'to', 20),
      value: o.value ?? 1n,
      data: o.data ?? new Uint8Array(0),
    },
    from.mldsa,
    o.chainId ?? CHAIN_ID,
  );
}

export const hashOf = (tx: StandardTx) => toHex(txHash(tx));

/** Raw submission body for REST. */
export const raw = (tx: StandardTx) => ({ raw: toHex(encodeTx(tx)) });

/** Submits over REST; returns the raw result. */
export const submit = (node: ExecutionNode, tx: StandardTx) => post(node, '/api/v1/transactions', raw(tx));

/** Submits over REST and asserts admission. */
export async function submitOk(node: ExecutionNode, tx: StandardTx, status: 'ready' | 'queued' = 'ready'): Promise<string> {
  const data = expectOk(await submit(node, tx), 202);
  assert.equal(data, { hash: hashOf(tx), status });
  return data.hash;
}

/** Where a new block goes: its parent's hash, height and wire timestamp (ms). */
export interface ParentRef {
  hash: string;
  index: number;
  timestamp: number;
}

/** The genesis block as a parent. */
export async function genesisRef(node: ExecutionNode): Promise<ParentRef> {
  return { hash: node.chain.genesisHash, index: 0, timestamp: GENESIS_TIME * 1000 };
}

export interface BlockOpts {
  txs?: Transaction[];
  /** Signing key and registry index; default validator 0. */
  proposer?: WalletKeys;
  validatorIndex?: number;
  /** Address in header.validator_id; default the proposer's. */
  validatorId?: string;
  timestampMs?: number;
  /** Distinguishes sibling blocks with the same transactions. */
  salt?: number;
}

/** A block signed by a validator (default validator 0) extending `parent`. */
export function makeBlock(parent: ParentRef, o: BlockOpts = {}): Block {
  const { keys } = devnet();
  const proposer = o.proposer ?? keys.validators[0]!;
  const index = parent.index + 1;
  const validatorIndex = o.validatorIndex ?? Math.max(0, keys.validators.findIndex((v) => v.address === proposer.address));
  return buildSignedBlock({
    chainId: CHAIN_ID,
    index,
    timestampMs: o.timestampMs ?? parent.timestamp + 2000 + (o.salt ?? 0),
    parentHash: parseHex(parent.hash, 'parent', 32),
    transactions: o.txs ?? [],
    key: proposer.mldsa,
    validatorIndex,
    validatorId: parseHex(o.validatorId ?? proposer.address, 'validator', 20),
    vrfSeed: sha3(u64LE(index), u64LE(o.salt ?? 0)),
    randaoReveal: sha3(u64LE(index + 1000)),
  });
}

/** The ref of a block for its children. */
export function refOf(block: Block, hash: string): ParentRef {
  return { hash, index: block.header.index, timestamp: block.header.timestampMs };
}

/** POST /api/v1/engine/newPayload with a block (or its wire JSON). */
export const newPayload = (node: ExecutionNode, block: Block | BlockJson) =>
  post(node, '/api/v1/engine/newPayload', 'header' in block && 'timestampMs' in (block as Block).header ? blockToJson(block as Block) : block);

/** Imports a block that must be valid; returns the import result and the ref for children. */
export async function importOk(node: ExecutionNode, block: Block): Promise<{ result: any; ref: ParentRef }> {
  const result = expectOk(await newPayload(node, block));
  assert.is(result.status, 'VALID');
  return { result, ref: refOf(block, result.block_hash) };
}

/** Account view over REST. */
export async function account(node: ExecutionNode, address: string): Promise<{ balance: bigint; nonce: number; pending_nonce: number }> {
  const d = expectOk(await get(node, `/api/v1/accounts/${address}`));
  return { balance: BigInt(d.balance), nonce: d.nonce, pending_nonce: d.pending_nonce };
}

/** Head height over REST. */
export async function height(node: ExecutionNode): Promise<number> {
  const r = await get(node, '/health');
  assert.is(r.status, 200);
  return r.body.latest_block;
}

/** Polls `check` until it returns a truthy value or `ms` elapse (then fails with `what`). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) assert.unreachable(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Hashes in the REST mempool view. */
export async function mempoolHashes(node: ExecutionNode): Promise<string[]> {
  const r = await get(node, '/api/v1/execution/mempool');
  assert.is(r.status, 200);
  return r.body.transactions.map((t: { hash: string }) => t.hash);
}

/** Value of an unlabelled (or first matching) sample in a Prometheus text exposition. */
export function metricValue(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
