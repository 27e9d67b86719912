/**
 * The client side of bridge operations (docs/bridge.md): where a chain's nodes are (a devnet
 * directory or two URLs), proofs of the bridge account's slots against a chain's latest finalised
 * header, the release/refund/complete payloads built from them, and signing and submitting the
 * transaction that carries an operation. Shared by `svc bridge …`, the relayer, tests and bench.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BRIDGE_ADDRESS } from '../core/constants.js';
import { bytesEqual, toHex } from '../core/codec/bytes.js';
import { SvcError } from '../core/errors.js';
import type { Genesis } from '../core/genesis/genesis.js';
import { finalityUpdateFromJson } from '../core/light/types.js';
import { type BlockHeader, blockHash, headerFromJson } from '../core/types/block.js';
import type { MlDsaKeyPair } from '../core/crypto/mldsa.js';
import { bridgeGas } from '../core/bridge/verify.js';
import { type BidFields, type BidSignature, type FinalityProof, type ReleaseBody, type SettleBody, bridgeAccountProofFromWire, lockSlot, releaseSlot } from '../core/bridge/types.js';
import { type BridgeOperation, encodeBridgeOp } from '../core/bridge/ops.js';
import { loadGenesisFile } from '../genesis/load.js';
import { readManifest } from './devnet-manifest.js';
import { unlockWallet } from '../wallet/keystore.js';
import { resolveSigningWallet, signValueTx } from '../wallet/tx-builder.js';
import type { BidView } from '../api/bridge.js';
import type { PoolStatus } from '../api/execution.js';
import { BeaconClientError } from './beacon.js';
import { BridgeBeaconClient } from './bridge.js';
import { bidFieldsFromJson } from '../core/bridge/types.js';
import { ExecutionClient, parseExecutionUrl } from './execution.js';

/** Where one chain's nodes are. */
export interface ChainSpec {
  beaconUrl: string;
  executionUrl: string;
  /** Known when the chain was named by its devnet directory. */
  genesis?: Genesis;
  dir?: string;
}

/**
 * `DIR` (a devnet directory: its manifest's node 0 and genesis) or `BEACON_URL,EXECUTION_URL`.
 * `what` names the flag in errors.
 */
export async function parseChainSpec(value: string, what: string): Promise<ChainSpec> {
  if (value.includes('://')) {
    const parts = value.split(',');
    if (parts.length !== 2) throw new SvcError('USAGE', `${what} must be a devnet directory or BEACON_URL,EXECUTION_URL, got ${JSON.stringify(value)}`);
    return { beaconUrl: parseExecutionUrl(parts[0]!.trim(), `${what} beacon URL`), executionUrl: parseExecutionUrl(parts[1]!.trim(), `${what} execution URL`) };
  }
  const dir = resolve(value);
  const m = readManifest(dir);
  if (!m) throw new SvcError('DEVNET_NOT_FOUND', `${what}: no devnet in ${dir} (no devnet.json); pass a devnet directory or BEACON_URL,EXECUTION_URL`);
  const genesis = existsSync(m.genesis) ? await loadGenesisFile(m.genesis) : undefined;
  return { beaconUrl: m.endpoints.beacon, executionUrl: m.endpoints.execution, dir, ...(genesis ? { genesis } : {}) };
}

/** One chain as the bridge commands use it: its clients and identity. */
export interface BridgeChain {
  beacon: BridgeBeaconClient;
  execution: ExecutionClient;
  chainId: string;
  /** 0x genesis hash: the chain's name in BIDs. */
  genesisHash: string;
  /** Wei: the chain's minimum gas price (its genesis's), or the caller's. */
  gasPrice: bigint;
  /** Slot length when known (from the genesis, or a counterpart's view of this chain). */
  slotSeconds: number | undefined;
}

/** Connects to a chain: asks its beacon who it is (GET /api/v1/bridge/counterparts). */
export async function connectChain(spec: ChainSpec, o: { gasPrice?: bigint; timeoutMs?: number } = {}): Promise<BridgeChain> {
  const opts = o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs };
  const beacon = new BridgeBeaconClient(spec.beaconUrl, opts);
  const execution = new ExecutionClient(spec.executionUrl, opts);
  const view = await beacon.counterparts();
  const gasPrice = o.gasPrice ?? (spec.genesis ? BigInt(spec.genesis.config.min_gas_price) : DEFAULT_BRIDGE_GAS_PRICE);
  return { beacon, execution, chainId: view.self.chain_id, genesisHash: view.self.genesis_hash.toLowerCase(), gasPrice, slotSeconds: spec.genesis?.config.slot_seconds };
}

/** Gas price when the chain's genesis is not at hand: the presets' minimum (1 gwei). */
export const DEFAULT_BRIDGE_GAS_PRICE = 1_000_000_000n;

/** A bridge account slot proven against a chain's latest finalised header. */
export interface ProvenSlot {
  proof: FinalityProof;
  /** 0x root of the finalised header. */
  root: string;
  header: BlockHeader;
  /** The slot's 32-byte word (all zero: absent). */
  value: Uint8Array;
}

/** Answers worth asking again: the state at the root was pruned, or finality moved between the two calls. */
const RETRYABLE = new Set(['STATE_PRUNED', 'NOT_FOUND', 'UNKNOWN_BLOCK', 'NOT_FINALIZED']);

/**
 * The latest finality update of the beacon and a proof of `slot` of its bridge account at that
 * finalised header. Retried (a few times, briefly) when the state at the root was pruned or the
 * root moved; NO_FINALITY_UPDATE and other errors are thrown as the beacon says them.
 */
export async function proveBridgeSlot(beacon: BridgeBeaconClient, slot: Uint8Array, o: { attempts?: number; delayMs?: number } = {}): Promise<ProvenSlot> {
  const attempts = o.attempts ?? 4;
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, o.delayMs ?? 250));
    const update = finalityUpdateFromJson(await beacon.finalityUpdate());
    const root = toHex(blockHash(update.header));
    let served;
    try {
      served = await beacon.storageProof(root, BRIDGE_ADDRESS, [toHex(slot)]);
    } catch (err) {
      if (err instanceof BeaconClientError && RETRYABLE.has(err.code)) {
        last = err;
        continue;
      }
      throw err;
    }
    const header = headerFromJson(served.header, 'proof.header');
    if (!bytesEqual(blockHash(header), blockHash(update.header))) {
      last = new SvcError('PROOF_ROOT_MOVED', `the beacon proved against ${served.block_hash}, not the finalised root ${root}`);
      continue;
    }
    const account = bridgeAccountProofFromWire(served.proof, slot);
    return { proof: { update, account }, root, header: update.header, value: account.value };
  }
  throw last instanceof Error ? last : new SvcError('PROOF_UNAVAILABLE', `no proof of bridge slot ${toHex(slot)} after ${attempts} attempts`);
}

/** BID signatures as a release carries them: by validator index, each once. */
export function bidSignaturesFromJson(list: ReadonlyArray<{ validator_index: number; signature: string }>): BidSignature[] {
  const seen = new Set<number>();
  const out: BidSignature[] = [];
  for (const s of [...list].sort((a, b) => a.validator_index - b.validator_index)) {
    if (seen.has(s.validator_index)) continue;
    seen.add(s.validator_index);
    out.push({ validatorIndex: s.validator_index, signature: Uint8Array.from(Buffer.from(s.signature.replace(/^0x/, ''), 'hex')) });
  }
  return out;
}

/** A release of an outgoing BID of `source`: the lock proven at its latest finalised header, with its validators' BID signatures. */
export async function buildRelease(source: BridgeBeaconClient, view: BidView): Promise<{ body: ReleaseBody; proven: ProvenSlot }> {
  const bid = view.bid.toLowerCase();
  const fields = bidFieldsFromJson(view.fields);
  const proven = await proveBridgeSlot(source, lockSlot(Buffer.from(bid.slice(2), 'hex')));
  const sigs = await source.signatures(bid);
  return { body: { bid: fields, proof: proven.proof, signatures: bidSignaturesFromJson(sigs.signatures) }, proven };
}

/** A refund or completion payload: `fields`' release slot proven at the destination's latest finalised header. */
export async function buildSettle(dest: BridgeBeaconClient, fields: BidFields, bid: Uint8Array): Promise<{ body: SettleBody; proven: ProvenSlot }> {
  const proven = await proveBridgeSlot(dest, releaseSlot(bid));
  return { body: { bid: fields, proof: proven.proof }, proven };
}

/** An unlocked wallet that signs bridge transactions. */
export interface BridgeSigner {
  address: string;
  key: MlDsaKeyPair;
}

/** Finds a wallet (name, address or file) and unlocks it; the password is asked only once it is found. */
export async function unlockSigner(ref: string, password: () => Promise<string>): Promise<BridgeSigner> {
  const w = await resolveSigningWallet(ref);
  const keys = await unlockWallet(w.wallet.file, await password());
  return { address: keys.address, key: keys.mldsa };
}

/** A signed bridge transaction. */
export interface SignedBridgeTx {
  hash: string;
  raw: string;
  nonce: bigint;
  gasLimit: bigint;
  data: Uint8Array;
}

/** Signs an operation for `chainId`: gas limit exactly bridgeGas(data), so it never pays for more than it uses. */
export function signBridgeTx(op: BridgeOperation, o: { signer: BridgeSigner; chainId: string; nonce: bigint; gasPrice: bigint; value?: bigint }): SignedBridgeTx {
  const data = encodeBridgeOp(op);
  const gasLimit = bridgeGas(data);
  const signed = signValueTx({ nonce: o.nonce, gasPrice: o.gasPrice, gasLimit, to: Buffer.from(BRIDGE_ADDRESS.slice(2), 'hex'), value: o.value ?? 0n, data }, o.signer.key, o.chainId);
  return { hash: signed.hash, raw: signed.raw, nonce: o.nonce, gasLimit, data };
}

/** A submitted bridge transaction. */
export interface SubmittedBridgeTx {
  hash: string;
  from: string;
  nonce: number;
  gas_limit: number;
  gas_price: string;
  pool_status: PoolStatus;
}

/**
 * Signs `op` with the signer's pending nonce on `chain` and submits it. A doomed operation is
 * refused by admission with 400 and its BRIDGE_* code (thrown as the client error).
 */
export async function submitBridgeOp(chain: BridgeChain, signer: BridgeSigner, op: BridgeOperation, value = 0n): Promise<SubmittedBridgeTx> {
  const nonce = BigInt((await chain.execution.account(signer.address)).pending_nonce);
  const tx = signBridgeTx(op, { signer, chainId: chain.chainId, nonce, gasPrice: chain.gasPrice, value });
  const sent = await chain.execution.submitRaw(tx.raw);
  return { hash: sent.hash, from: signer.address, nonce: Number(nonce), gas_limit: Number(tx.gasLimit), gas_price: chain.gasPrice.toString(), pool_status: sent.status };
}
