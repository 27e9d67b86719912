/**
 * Shared fixture for beacon-node tests (not a test file itself): an in-process execution node
 * (memory DB) and a beacon node (temp data dir) on ephemeral loopback ports, over a devnet
 * genesis whose slot 0 lies in the past, plus helpers that build proposals the way a validator
 * client does (duties from the beacon, keys from the derivation paths, RANDAO reveals from the
 * validator's hash chain).
 */
import type { SlashingEvidence } from '../../../src/core/consensus/slashing.js';
import type { Attestation } from '../../../src/core/types/attestation.js';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { type Genesis, PRESETS, epochOfSlot, slotAt, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { type Block, blockToJson, buildSignedBlock } from '../../../src/core/types/block.js';
import { type StandardTx, type Transaction, signStandardTx } from '../../../src/core/types/transaction.js';
import { TX_BASE_GAS } from '../../../src/core/constants.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { type BeaconP2pOptions, BeaconNode } from '../../../src/node/beacon/node.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import type { TlsPair } from '../../../src/node/shared/tls.js';
import { RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { silentLogger } from '../../../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../../../src/wallet/derivation.js';
import { http, type HttpResult } from '../execution/fixture.js';

export const BEACON_CHAIN_ID = 'svc-beacon';
export const BEACON_NETWORK_ID = 31338;

/** A running execution + beacon pair and what a test needs to drive it. */
export interface Harness {
  genesis: Genesis;
  exec: ExecutionNode;
  beacon: BeaconNode;
  /** The validators' bearer token (read back from the token file). */
  token: string;
  dir: string;
  /** Validator keys by registry index, from walletPath(Branch.Validators, i). */
  validators: WalletKeys[];
  /** Funded account keys (Branch.Accounts). */
  accounts: WalletKeys[];
}

/**
 * Starts both nodes over a fresh genesis whose genesis_time is `slotsAgo` slots in the past
 * (devnet preset: 2 s slots, 2 slots per epoch); with `tls` the beacon serves HTTPS/WSS (then `bget`
 * and `bpost`, which use fetch, do not trust it); `engineUrl` puts something (a proxy) between the beacon and
 * execution. Anything started is released if a later step fails.
 */
export async function startHarness(o: { validators?: number; slotsAgo?: number; tls?: TlsPair; genesis?: Genesis; p2p?: BeaconP2pOptions; engineUrl?: (restUrl: string) => Promise<string> } = {}): Promise<Harness> {
  const genesis = o.genesis ?? harnessGenesis(o);
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const validators = genesis.validators.map((_, i) => deriveWalletKeys(seed, walletPath(Branch.Validators, i)));
  const accounts = [deriveWalletKeys(seed, walletPath(Branch.Accounts, 0))];
  validators.forEach((k, i) => assert.is(k.address, genesis.validators[i]!.address, `validator ${i} derives from walletPath(Branch.Validators, ${i})`));

  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-'));
  let exec: ExecutionNode | undefined;
  try {
    exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    const tokenFile = join(dir, 'validator-token');
    const beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: o.engineUrl ? await o.engineUrl(exec.restUrl) : exec.restUrl, tokenFile, log: silentLogger, ...(o.tls ? { tls: o.tls } : {}), ...(o.p2p ? { p2p: o.p2p } : {}) });
    const token = (await readFile(tokenFile, 'utf8')).trim();
    return { genesis, exec, beacon, token, dir, validators, accounts };
  } catch (err) {
    await exec?.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The harness's devnet genesis (2 s slots, 2 slots per epoch) with slot 0 `slotsAgo` slots in the
 * past; built once and passed to several harnesses, they run the same chain. `chainId` makes
 * another chain.
 */
export function harnessGenesis(o: { validators?: number; slotsAgo?: number; chainId?: string } = {}): Genesis {
  return buildGenesis({
    validators: o.validators ?? 2,
    accounts: 1,
    preset: 'devnet',
    chainId: o.chainId ?? BEACON_CHAIN_ID,
    networkId: BEACON_NETWORK_ID,
    genesisTime: Math.floor(Date.now() / 1000) - (o.slotsAgo ?? 12) * PRESETS.devnet.slot_seconds,
    mnemonic: DEV_MNEMONIC,
  }).genesis;
}

/** Stops both nodes and removes the temp directory, whatever fails on the way. */
export async function stopHarness(h: Harness): Promise<void> {
  try {
    await h.beacon.stop();
  } finally {
    try {
      await h.exec.stop();
    } finally {
      await rm(h.dir, { recursive: true, force: true });
    }
  }
}

/** A suite's context holding one harness, or why it failed to start (each test rethrows it). */
export interface HarnessContext {
  h?: Harness;
  startError?: unknown;
}

/** A uvu suite whose tests share one harness, started before them and stopped after. */
export function harnessSuite(name: string, options: Parameters<typeof startHarness>[0]): Test<HarnessContext> {
  const s = suite<HarnessContext>(name);
  s.before(async (ctx) => {
    try {
      ctx.h = await startHarness(options);
    } catch (err) {
      ctx.startError = err;
    }
  });
  s.after(async (ctx) => {
    if (ctx.h) await stopHarness(ctx.h);
  });
  return s;
}

/** GET on the beacon. */
export const bget = (h: Harness, path: string, headers?: Record<string, string>): Promise<HttpResult> => http(h.beacon.url, path, { headers });

/** POST JSON on the beacon, with the bearer token unless `token` says otherwise (null: no header). */
export function bpost(h: Harness, path: string, json: unknown, token: string | null = h.token): Promise<HttpResult> {
  return http(h.beacon.url, path, { json, headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

/** `data` of a `{success: true}` answer. */
export function okData(r: HttpResult, status = 200): any {
  assert.is(r.status, status, `expected HTTP ${status}, got ${r.status}: ${r.text}`);
  assert.is(r.body?.success, true, r.text);
  return r.body.data;
}

/** The beacon's head. */
export async function beaconHead(h: Harness): Promise<{ root: string; slot: number; index: number }> {
  return okData(await bget(h, '/api/v1/beacon/head'));
}

/** Execution's head height. */
export async function execHeight(h: Harness): Promise<number> {
  const r = await http(h.exec.restUrl, '/health');
  assert.is(r.status, 200, r.text);
  return r.body.latest_block;
}

/** The last RANDAO value the beacon accepted for validator `i` on the head's branch. */
export async function randaoLast(h: Harness, i: number): Promise<string> {
  const v = okData(await bget(h, `/api/v1/validators/${i}`));
  assert.type(v.randao_last, 'string', `validator ${i} has a randao_last`);
  return v.randao_last;
}

/** The wall-clock slot. */
export const currentSlot = (h: Harness): number => slotAt(h.genesis, Date.now());

/** One slot's proposer duty as the beacon publishes it. */
export interface Duty {
  slot: number;
  validator_index: number;
  address: string;
  vrf_seed: string;
}

/** The duty of `slot`, from GET /api/v1/validator/duties/proposer/:epoch (on the head's branch). */
export async function dutyOf(h: Harness, slot: number): Promise<Duty> {
  const data = okData(await bget(h, `/api/v1/validator/duties/proposer/${epochOfSlot(h.genesis, slot)}`));
  const d = (data.duties as Duty[]).find((x) => x.slot === slot);
  assert.ok(d, `no duty for slot ${slot} in ${JSON.stringify(data)}`);
  return d;
}

const chains = new Map<string, RandaoChain>();

/** Validator `i`'s RANDAO hash chain (built once per key and length). */
export function randaoChain(h: Harness, i: number): RandaoChain {
  const k = h.validators[i]!;
  const id = `${k.address}/${h.genesis.config.randao_chain_length}`;
  let c = chains.get(id);
  if (!c) chains.set(id, (c = new RandaoChain(k.mldsaSeed, h.genesis.config.randao_chain_length)));
  return c;
}

/** A block's post-state root as execution reports it (zero bytes for a block execution does not know, to build refused proposals). */
export async function parentStateRoot(h: Harness, parentHash: Uint8Array): Promise<Uint8Array> {
  const r = await http(h.exec.restUrl, `/api/v1/blocks/${toHex(parentHash)}`);
  return r.status === 200 ? parseHex(r.body.data.state_root, 'state_root', 32) : new Uint8Array(32);
}

/** The reveal validator `i` should carry next, from the beacon's randao_last. */
export async function nextReveal(h: Harness, i: number): Promise<Uint8Array> {
  return randaoChain(h, i).next(parseHex(await randaoLast(h, i), 'randao_last', 32));
}

/** Everything a test may override in a proposal; the rest is what an honest proposer sends. */
export interface ProposalOpts {
  slot: number;
  /** Signing validator (registry index); default the slot's drawn proposer. */
  validator?: number;
  /** Registry index in the signed header; default `validator`. */
  signedIndex?: number;
  /** Key that signs the header and proves the seed; default the validator's. */
  key?: WalletKeys;
  vrfSeed?: Uint8Array;
  randaoReveal?: Uint8Array;
  parentHash?: Uint8Array;
  index?: number;
  timestampMs?: number;
  transactions?: Transaction[];
  /** Attestations to include (covered by merkle_root). */
  attestations?: Attestation[];
  /** Header state_root; default the parent's post-state root as execution reports it. */
  stateRoot?: Uint8Array;
  /** Slashing evidence to include (covered by merkle_root). */
  slashings?: SlashingEvidence[];
}

/**
 * A block extending the beacon's head at `slot`: the drawn proposer (or `validator`), the slot's
 * vrf_seed from the duties route, the validator's next RANDAO reveal, timestamp = slot start,
 * index = head + 1.
 */
export async function buildProposal(h: Harness, o: ProposalOpts): Promise<{ block: Block; duty: Duty; validator: number; reveal: Uint8Array }> {
  const head = await beaconHead(h);
  const duty = await dutyOf(h, o.slot);
  const validator = o.validator ?? duty.validator_index;
  const key = o.key ?? h.validators[validator]!;
  const reveal = o.randaoReveal ?? (await nextReveal(h, validator));
  const parentHash = o.parentHash ?? parseHex(head.root, 'head', 32);
  const block = buildSignedBlock({
    chainId: h.genesis.chain_id,
    index: o.index ?? head.index + 1,
    timestampMs: o.timestampMs ?? slotStartMs(h.genesis, o.slot),
    parentHash,
    transactions: o.transactions ?? [],
    key: key.mldsa,
    validatorIndex: o.signedIndex ?? validator,
    validatorId: parseHex(h.validators[validator]!.address, 'address', 20),
    vrfSeed: o.vrfSeed ?? parseHex(duty.vrf_seed, 'vrf_seed', 32),
    randaoReveal: reveal,
    stateRoot: o.stateRoot ?? (await parentStateRoot(h, parentHash)),
    attestations: o.attestations ?? [],
    slashings: o.slashings ?? [],
  });
  return { block, duty, validator, reveal };
}

/** A plain transfer of 1 wei on the harness's chain, from `from` at `nonce`. */
export function transferTx(h: Harness, from: WalletKeys, nonce: bigint): StandardTx {
  const to = parseHex('0x' + 'aa'.repeat(20), 'to', 20);
  return signStandardTx({ nonce, gasPrice: BigInt(h.genesis.config.min_gas_price), gasLimit: TX_BASE_GAS, to, value: 1n, data: new Uint8Array(0) }, from.mldsa, h.genesis.chain_id);
}

/** POST a block to the validator proposal route. */
export const proposeBlock = (h: Harness, block: Block, path = '/api/v1/validator/blocks/propose', token: string | null = h.token): Promise<HttpResult> =>
  bpost(h, path, blockToJson(block), token);

/** Value of one sample in a Prometheus text exposition (undefined when absent). */
export function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

/** The beacon's /metrics text. */
export async function beaconMetrics(h: Harness): Promise<string> {
  const r = await bget(h, '/metrics');
  assert.is(r.status, 200);
  return r.text;
}
