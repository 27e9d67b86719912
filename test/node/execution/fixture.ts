/**
 * Shared fixture for the execution-layer tests (not a test file itself): an in-process devnet
 * genesis whose keys are derivable, nodes on ephemeral ports, HTTP helpers, signed transactions
 * and signed blocks.
 */
import { type SlashingEvidence, accusedIndex } from '../../../src/core/consensus/slashing.js';
import type { Attestation } from '../../../src/core/types/attestation.js';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { type ProposerCandidate, proposerForSlot } from '../../../src/core/consensus/proposer.js';
import { type EpochMixes, genesisEpochMixes, genesisMix, nextEpochMixes, seedMixFor } from '../../../src/core/consensus/randao.js';
import { DEPOSIT_ADDRESS, EXIT_ADDRESS, GWEI, TX_BASE_GAS, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { addressFromPublicKey } from '../../../src/core/crypto/address.js';
import { mixRandao } from '../../../src/core/crypto/randao.js';
import { type Genesis, genesisHash, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { type Block, blockToJson, type BlockJson, buildSignedBlock } from '../../../src/core/types/block.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import { encodeTx, signStandardTx, type StandardTx, type Transaction, txHash } from '../../../src/core/types/transaction.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { ExecutionNode, type ExecutionNodeOptions } from '../../../src/node/execution/node.js';
import { RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { silentLogger } from '../../../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../../../src/wallet/derivation.js';
import { metricSum as sumSamples, parseMetrics } from '../../helpers/fuzz.js';

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

/** Epoch length of the unit-test chain (see devnet()). */
export const UNIT_SLOTS_PER_EPOCH = 4;

/** The fixture's chain (chain id, validators, timing) with `accounts` funded accounts: blocks the fixture builds are valid on it. */
export function fixtureGenesis(accounts: number): ReturnType<typeof buildGenesis> {
  return buildGenesis({
    validators: 2,
    accounts,
    preset: 'devnet',
    chainId: CHAIN_ID,
    networkId: NETWORK_ID,
    genesisTime: GENESIS_TIME,
    mnemonic: DEV_MNEMONIC,
    timing: { slotsPerEpoch: UNIT_SLOTS_PER_EPOCH },
  });
}

/**
 * The devnet genesis (2 validators, 2 accounts, faucet) and every key, built once per process.
 * Its epochs are pinned at 4 slots: the unit tests on it script blocks and votes slot by slot
 * (inclusion windows, rewards, duties, reorgs) and were written for that length, which the
 * devnet preset no longer has (2-slot epochs since issue 14).
 */
export function devnet(): { genesis: Genesis; keys: DevKeys } {
  if (cached) return cached;
  const { genesis, keys } = fixtureGenesis(2);
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

/**
 * A branch's consensus state as a proposer tracks it: what the next block's slot, vrf_seed,
 * proposer and randao_reveal derive from (the rules of src/core/consensus/).
 */
export interface BranchState {
  slot: number;
  mixes: EpochMixes;
  /** Last accepted RANDAO value per validator index. */
  last: ReadonlyMap<number, Uint8Array>;
  /** The registry as the draw reads it, with addresses: genesis validators plus deposits and exits on the branch. */
  validators: ReadonlyArray<ProposerCandidate & { address: string }>;
}

/** Where a new block goes: its parent's hash, height, wire timestamp (ms) and branch state. */
export interface ParentRef {
  hash: string;
  index: number;
  timestamp: number;
  branch: BranchState;
  /** The parent's post-state root (the child's header state_root); genesis's when absent at index 0. */
  stateRoot?: string;
}

/** The branch state at genesis (of the fixture's devnet unless another genesis is given). */
export function genesisBranch(genesis: Genesis = devnet().genesis): BranchState {
  return {
    slot: 0,
    mixes: genesisEpochMixes(genesisMix(genesisHash(genesis))),
    last: new Map(genesis.validators.map((v) => [v.index, parseHex(v.randao_commitment, 'commitment', 32)])),
    validators: genesis.validators.map((v) => ({ index: v.index, address: v.address, stake: BigInt(v.stake), active: true })),
  };
}

/** The genesis block as a parent. */
export async function genesisRef(node: ExecutionNode): Promise<ParentRef> {
  return { hash: node.chain.genesisHash, index: 0, timestamp: GENESIS_TIME * 1000, branch: genesisBranch(), stateRoot: (await node.chain.record(node.chain.genesisHash))!.state_root };
}

const randaoChains = new Map<string, RandaoChain>();

/** The RANDAO hash chain of a key (built once per key and length): its commitment is what a deposit registers. */
export function randaoChainOf(k: WalletKeys, length = devnet().genesis.config.randao_chain_length): RandaoChain {
  const id = `${k.address}/${length}`;
  let c = randaoChains.get(id);
  if (!c) randaoChains.set(id, (c = new RandaoChain(k.mldsaSeed, length)));
  return c;
}

/** The `skip`-th slot after the branch's last block (from 0) that the draw gives `validatorIndex`, and its vrf_seed. */
export function drawnSlot(genesis: Genesis, b: BranchState, validatorIndex: number, skip = 0): { slot: number; seed: Uint8Array } {
  const spe = genesis.config.slots_per_epoch;
  for (let slot = b.slot + 1; slot < b.slot + 10_000; slot++) {
    const d = proposerForSlot(b.validators, seedMixFor(b.mixes, b.slot, slot, spe), slot);
    if (d.index === validatorIndex && skip-- === 0) return { slot, seed: d.seed };
  }
  throw new Error(`validator ${validatorIndex} is never drawn in 10,000 slots`);
}

/** The branch state after a block at `slot` in which validator `index` (if registered) revealed `reveal`. */
export function branchAfter(genesis: Genesis, b: BranchState, slot: number, index: number | undefined, reveal: Uint8Array, txs: Transaction[]): BranchState {
  const last = new Map(b.last);
  if (index !== undefined) last.set(index, reveal);
  return {
    slot,
    mixes: nextEpochMixes(b.mixes, b.slot, slot, genesis.config.slots_per_epoch, mixRandao(b.mixes.mix, reveal)),
    last,
    validators: registryAfter(genesis, b.validators, txs, last),
  };
}

export interface BlockOpts {
  txs?: Transaction[];
  /** Signing key and registry index; default validator 0. */
  proposer?: WalletKeys;
  validatorIndex?: number;
  /** Address in header.validator_id; default the proposer's. */
  validatorId?: string;
  /** Overrides the slot-start timestamp (to build invalid blocks). */
  timestampMs?: number;
  /** Distinguishes sibling blocks: skips this many of the proposer's slots after the parent. */
  salt?: number;
  /** Forces the slot (whoever the draw names); its timestamp and seed follow unless overridden too. */
  slot?: number;
  /** Overrides the slot's vrf_seed (the proof is still made over it, by the proposer). */
  vrfSeed?: Uint8Array;
  /** Overrides the proposer's next RANDAO reveal. */
  randaoReveal?: Uint8Array;
  /** Attestations the block includes (covered by its merkle_root). */
  attestations?: Attestation[];
  /** Overrides the header's state_root (default the parent's post-state root). */
  stateRoot?: Uint8Array;
  /** Slashing evidence the block includes (covered by its merkle_root); its validators leave the branch's draw. */
  slashings?: SlashingEvidence[];
}

/** Branch state after each block makeBlock built (read back by refOf). */
const after = new WeakMap<Block, BranchState>();

/**
 * A valid block signed by a validator (default validator 0) extending `parent`: in the first slot
 * after the parent's (skipping `salt` of them) for which the draw names that validator, with the
 * slot's vrf_seed and the validator's next RANDAO reveal on the branch.
 */
export function makeBlock(parent: ParentRef, o: BlockOpts = {}): Block {
  const { genesis, keys } = devnet();
  const proposer = o.proposer ?? keys.validators[0]!;
  const b = parent.branch;
  const drawn = b.validators.find((v) => v.address === (o.validatorId ?? proposer.address));
  // An unregistered proposer (to provoke UNKNOWN_VALIDATOR) takes the next slot; a registered
  // one waits for a slot the stake-weighted draw gives it.
  const { slot, seed } =
    o.slot !== undefined
      ? { slot: o.slot, seed: proposerForSlot(b.validators, seedMixFor(b.mixes, b.slot, o.slot, genesis.config.slots_per_epoch), o.slot).seed }
      : drawn
        ? drawnSlot(genesis, b, drawn.index, o.salt ?? 0)
        : { slot: b.slot + 1 + (o.salt ?? 0), seed: new Uint8Array(32) };
  const chain = randaoChainOf(proposer);
  // A key signing for another validator's address (to provoke a signature failure) has no place on that chain.
  const own = drawn && drawn.address === proposer.address ? drawn : undefined;
  const reveal = o.randaoReveal ?? (own ? chain.next(b.last.get(own.index)!) : chain.reveal(1));
  const txs = o.txs ?? [];
  const block = buildSignedBlock({
    chainId: CHAIN_ID,
    index: parent.index + 1,
    timestampMs: o.timestampMs ?? slotStartMs(genesis, slot),
    parentHash: parseHex(parent.hash, 'parent', 32),
    transactions: txs,
    key: proposer.mldsa,
    validatorIndex: o.validatorIndex ?? drawn?.index ?? 0,
    validatorId: parseHex(o.validatorId ?? proposer.address, 'validator', 20),
    vrfSeed: o.vrfSeed ?? seed,
    randaoReveal: reveal,
    stateRoot: o.stateRoot ?? parentStateRoot(genesis, parent),
    attestations: o.attestations ?? [],
    slashings: o.slashings ?? [],
  });
  const next = branchAfter(genesis, b, slot, own?.index, reveal, txs);
  const slashed = new Set((o.slashings ?? []).map(accusedIndex));
  after.set(block, slashed.size === 0 ? next : { ...next, validators: next.validators.map((v) => (slashed.has(v.index) ? { ...v, active: false } : v)) });
  return block;
}

// Deposits and exits as execution applies them (successful ones only), so later draws match.
function registryAfter(genesis: Genesis, validators: BranchState['validators'], txs: Transaction[], last: Map<number, Uint8Array>): BranchState['validators'] {
  const out = validators.map((v) => ({ ...v }));
  for (const tx of txs) {
    if (tx.type !== 0 || tx.to === null) continue;
    const from = toHex(addressFromPublicKey(tx.publicKey));
    const to = toHex(tx.to);
    if (to === DEPOSIT_ADDRESS && tx.value >= BigInt(genesis.config.min_validator_stake) && tx.data.length === 32 && !out.some((v) => v.address === from)) {
      out.push({ index: out.length, address: from, stake: tx.value, active: true });
      last.set(out.length - 1, tx.data.slice());
    }
    const v = out.find((x) => x.address === from);
    if (to === EXIT_ADDRESS && v?.active && tx.value === 0n && tx.data.length === 0) v.active = false;
  }
  return out;
}

// A child's header names its parent's post-state root, known only once the parent was imported
// (importOk's ref carries it); genesis's follows from the genesis document.
function parentStateRoot(genesis: Genesis, parent: ParentRef): Uint8Array {
  if (parent.stateRoot !== undefined) return parseHex(parent.stateRoot, 'parent state root', 32);
  assert.ok(parent.index === 0, `makeBlock needs the post-state root of parent ${parent.index} (use importOk's ref, or pass stateRoot)`);
  return genesisStateRoot(genesis);
}

/** The ref of a block for its children (the block must come from makeBlock); `stateRoot` is its post-state root. */
export function refOf(block: Block, hash: string, stateRoot?: string): ParentRef {
  const branch = after.get(block);
  assert.ok(branch, 'refOf needs a block built by makeBlock');
  return { hash, index: block.header.index, timestamp: block.header.timestampMs, branch, ...(stateRoot === undefined ? {} : { stateRoot }) };
}

/** A copy of `block` with one unsigned header field changed: the re-headered copy execution must refuse. */
export function reheader(block: Block, field: 'randaoReveal' | 'vrfSeed' | 'vrfProof' | 'timestampMs'): Block {
  const h = { ...block.header };
  if (field === 'timestampMs') h.timestampMs += 1;
  else {
    const bytes = h[field].slice();
    bytes[0]! ^= 0x01;
    h[field] = bytes;
  }
  return { ...block, header: h };
}

/** POST /api/v1/engine/newPayload with a block (or its wire JSON). */
export const newPayload = (node: ExecutionNode, block: Block | BlockJson) =>
  post(node, '/api/v1/engine/newPayload', 'header' in block && 'timestampMs' in (block as Block).header ? blockToJson(block as Block) : block);

/** Imports a block that must be valid; returns the import result and the ref for children. */
export async function importOk(node: ExecutionNode, block: Block): Promise<{ result: any; ref: ParentRef }> {
  const result = expectOk(await newPayload(node, block));
  assert.is(result.status, 'VALID');
  return { result, ref: refOf(block, result.block_hash, result.state_root) };
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

/** Sum of the samples of `name` in a Prometheus text exposition whose labels include every `key="value"` of `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return sumSamples(parseMetrics(text), name, labels);
}
