/**
 * Devnets as bridge counterparts (`svc devnet up --chain-id ID --counterpart DIR_A`, docs/devnet.md):
 * distinct validator keys per chain id, the default bridge reserve, and registering each chain's
 * genesis on the other once both run, signed by each chain's own validators (the devnet holds
 * their keys) and sent by a prefunded dev account of each.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { WEI_PER_TOKEN } from '../core/constants.js';
import { toHex, utf8 } from '../core/codec/bytes.js';
import { sha3 } from '../core/crypto/hash.js';
import { type Genesis, canonicalJson, genesisHash, parseGenesis } from '../core/genesis/genesis.js';
import { type BidSignature, BridgeOp } from '../core/bridge/types.js';
import { registrationTerms, signRegistration } from '../core/bridge/registration.js';
import { unlockWallet } from '../wallet/keystore.js';
import { readWallet } from '../wallet/store.js';
import { BridgeExecutionClient } from '../client/bridge.js';
import { ExecutionClient } from '../client/execution.js';
import { signBridgeTx } from '../client/bridge-ops.js';
import { waitForInclusion } from '../client/send.js';
import { type DevnetManifest, type ManifestCounterpart, type ManifestKey, DevnetError, pidAlive, readManifest } from './manifest.js';

/** The chain id of a devnet started without --chain-id. */
export const DEFAULT_DEVNET_CHAIN_ID = 'svc-devnet';
/** Bridge reserve of a new devnet unless --bridge-reserve says otherwise (docs/bridge.md: 1,000,000 tokens). */
export const DEFAULT_DEVNET_BRIDGE_RESERVE = 1_000_000n * WEI_PER_TOKEN;
/** The allowance a devnet gives a counterpart it registers (docs/bridge.md "Liquidity"): a tenth of the default reserve. */
export const DEFAULT_DEVNET_COUNTERPART_ALLOWANCE = 100_000n * WEI_PER_TOKEN;
/** Index stride between chains' validator key ranges: above MAX_GENESIS_VALIDATORS, so ranges never overlap. */
const KEY_RANGE = 1024;

/**
 * First derivation index of a devnet's validator keys. Every devnet derives from the public dev
 * mnemonic, so two chains would otherwise share validators, and a BID signed by one chain's set
 * would verify on the other. The default chain keeps 0 (its keys are unchanged); any other chain
 * id starts at 1024 × (1 + the first 16 bits of SHA3-256(chain id)), below 2^27 + 1024.
 */
export function devnetValidatorKeyOffset(chainId: string): number {
  if (chainId === DEFAULT_DEVNET_CHAIN_ID) return 0;
  const h = sha3(utf8(chainId));
  return KEY_RANGE * (1 + ((h[0]! << 8) | h[1]!));
}

/** A counterpart devnet, read from its directory: its manifest must exist and name a genesis. */
export function readCounterpart(dir: string): { manifest: DevnetManifest; genesis: Genesis; record: ManifestCounterpart } {
  const abs = resolve(dir);
  const manifest = readManifest(abs);
  if (!manifest) throw new DevnetError('DEVNET_NOT_FOUND', `--counterpart ${abs}: no devnet there (no devnet.json); start it first with svc devnet up --dir ${abs}`);
  let genesis: Genesis;
  try {
    genesis = parseGenesis(JSON.parse(readFileSync(manifest.genesis, 'utf8')));
  } catch (err) {
    throw new DevnetError('DEVNET_MANIFEST_INVALID', `--counterpart ${abs}: cannot read its genesis ${manifest.genesis} (${(err as Error).message})`);
  }
  return { manifest, genesis, record: { dir: abs, chain_id: genesis.chain_id, genesis_hash: toHex(genesisHash(genesis)) } };
}

/** What registering did on one chain. */
export interface Registration {
  /** The chain the register operation ran on. */
  on: string;
  /** The chain registered there. */
  registered: string;
  genesis_hash: string;
  /** Null when it was registered already (a resumed devnet). */
  tx_hash: string | null;
}

/** Unlocks a wallet a devnet manifest lists (its keystore password). */
async function unlockDevnetKey(m: DevnetManifest, key: ManifestKey) {
  const stored = await readWallet(key.wallet);
  if (stored.wallet.kind !== 'v2') throw new DevnetError('DEVNET_BRIDGE_REGISTER_FAILED', `${key.wallet} cannot sign (a watch-only wallet)`);
  return unlockWallet(stored.wallet.file, m.keystore_password);
}

/** Registration signatures of every validator of the devnet `m` (chain `genesis`) for registering `other` with `allowance` wei: a devnet holds its validators' keys. */
export async function devnetRegistrationSignatures(m: DevnetManifest, genesis: Genesis, other: Genesis, allowance: bigint): Promise<BidSignature[]> {
  const terms = registrationTerms(genesisHash(genesis), other, genesisHash(other), allowance);
  const signatures: BidSignature[] = [];
  for (const v of m.validators) signatures.push(signRegistration(terms, v.index, (await unlockDevnetKey(m, v)).mldsa, genesis.chain_id));
  return signatures;
}

/**
 * Registers `other`'s genesis on the chain of `m` unless it already knows it. A devnet holds all
 * its validators' keys, so it gathers their registration signatures itself (every genesis
 * validator consents: a devnet's operator is the one who asked for the counterpart); the
 * allowance is DEFAULT_DEVNET_COUNTERPART_ALLOWANCE, or the unallocated reserve when that is
 * less. The operation is sent by the devnet's first prefunded account (the faucet when it has
 * none) and waited into a block. A failed receipt is DEVNET_BRIDGE_REGISTER_FAILED.
 */
export async function registerOn(m: DevnetManifest, other: Genesis, timeoutMs: number): Promise<Registration> {
  const hash = genesisHash(other);
  const base = { on: m.chain_id, registered: other.chain_id, genesis_hash: toHex(hash) };
  const known = await new BridgeExecutionClient(m.endpoints.execution).counterparts();
  if (known.counterparts.some((c) => c.genesis_hash.toLowerCase() === base.genesis_hash)) return { ...base, tx_hash: null };
  const key = m.accounts[0] ?? m.faucet;
  if (!key) throw new DevnetError('DEVNET_BRIDGE_REGISTER_FAILED', `${m.dir} has no prefunded account to sign the registration with`);
  const keys = await unlockDevnetKey(m, key);
  const execution = new ExecutionClient(m.endpoints.execution);
  const genesis = parseGenesis(JSON.parse(readFileSync(m.genesis, 'utf8')));
  const unallocated = BigInt(known.reserve?.unallocated ?? '0');
  const allowance = unallocated < DEFAULT_DEVNET_COUNTERPART_ALLOWANCE ? unallocated : DEFAULT_DEVNET_COUNTERPART_ALLOWANCE;
  const signatures = await devnetRegistrationSignatures(m, genesis, other, allowance);
  const nonce = BigInt((await execution.account(keys.address)).pending_nonce);
  const tx = signBridgeTx(
    { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(other)), allowance, signatures } },
    { signer: { address: keys.address, key: keys.mldsa }, chainId: m.chain_id, nonce, gasPrice: BigInt(genesis.config.min_gas_price) },
  );
  await execution.submitRaw(tx.raw);
  const status = await waitForInclusion(execution, tx.hash, { timeoutMs });
  if (status.receipt?.status !== 1) {
    throw new DevnetError('DEVNET_BRIDGE_REGISTER_FAILED', `registering ${other.chain_id} on ${m.chain_id} failed in block ${status.receipt?.blockNumber}: ${status.receipt?.error ?? 'no receipt'}`);
  }
  return { ...base, tx_hash: tx.hash };
}

/**
 * Registers the counterpart on this devnet and this devnet on the counterpart, which must be
 * running (its supervisor alive): both must produce blocks for the operations to land.
 */
export async function registerCounterparts(self: DevnetManifest, selfGenesis: Genesis, counterpartDir: string, timeoutMs: number): Promise<Registration[]> {
  const cp = readCounterpart(counterpartDir);
  if (!pidAlive(cp.manifest.supervisor?.pid) || cp.manifest.state !== 'running') {
    throw new DevnetError('DEVNET_NOT_RUNNING', `the counterpart devnet in ${cp.record.dir} is not running (state ${cp.manifest.state}); start it with svc devnet up --dir ${cp.record.dir} --detach`);
  }
  return Promise.all([registerOn(self, cp.genesis, timeoutMs), registerOn(cp.manifest, selfGenesis, timeoutMs)]);
}
