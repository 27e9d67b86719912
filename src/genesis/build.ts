/**
 * Builds a genesis document and its keystores from one mnemonic: validators, prefunded accounts
 * and the faucet each get a wallet file (the same encrypted seed, a different derivation path).
 */
import { join } from 'node:path';
import { toHex } from '../core/codec/bytes.js';
import { GenesisError } from '../core/errors.js';
import { randaoCommitment } from '../core/crypto/randao.js';
import { chainIdBytes } from '../core/crypto/domain.js';
import { BRIDGE_ADDRESS, WEI_PER_TOKEN } from '../core/constants.js';
import { type Genesis, type PresetName, PRESETS, genesisHash, parseGenesis } from '../core/genesis/genesis.js';
import { Branch, deriveMlDsaSeed, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../wallet/derivation.js';
import { encryptSeed, walletFileFor } from '../wallet/keystore.js';
import { assertAbsent, writeFileAtomic } from '../util/fs.js';

/** Inputs of `svc genesis new`. */
export interface GenesisPlan {
  validators: number;
  accounts: number;
  preset: PresetName;
  chainId: string;
  networkId: number;
  /** Unix seconds of slot 0. */
  genesisTime: number;
  mnemonic: string;
  /** Overrides of the preset's timing (devnet `--slot-time`, `--slots-per-epoch`) and RANDAO chain length (`--randao-chain-length`). */
  timing?: { slotSeconds?: number; slotsPerEpoch?: number; randaoChainLength?: number };
  /** Wei allocated to BRIDGE_ADDRESS as the bridge's release liquidity (docs/bridge.md); none when absent or 0. */
  bridgeReserve?: bigint;
  /** Bridge counterparts trusted from genesis, each with the wei of the reserve that is its ledger (docs/bridge.md "Genesis counterparts"). */
  bridgeCounterparts?: ReadonlyArray<{ genesis: Genesis; allowance: bigint }>;
  /**
   * First derivation index of the validator keys (default 0): chains built from one mnemonic
   * (every devnet uses the public dev mnemonic) get distinct validator sets by distinct offsets.
   */
  validatorKeyOffset?: number;
}

/** Password of devnet keystores when none is given: devnet keys are public (like anvil's), so is this. */
export const DEVNET_PASSWORD = 'svc-devnet';

/** Default balances, in tokens: generous like anvil's, and a faucet that outlasts any devnet. */
const ACCOUNT_BALANCE = 1_000_000n * WEI_PER_TOKEN;
const VALIDATOR_BALANCE = 1_000n * WEI_PER_TOKEN;
const FAUCET_BALANCE = 1_000_000_000n * WEI_PER_TOKEN;
const FAUCET_CLAIM = 10n * WEI_PER_TOKEN;
const FAUCET_COOLDOWN_SECONDS = 24 * 60 * 60;
/** Upper bound on validators one command creates, to keep key generation and RANDAO chains bounded. */
export const MAX_GENESIS_VALIDATORS = 1024;

/** Keys derived for a genesis, with their role. */
export interface GenesisKey {
  role: 'validator' | 'account' | 'faucet';
  index: number;
  keys: WalletKeys;
}

/** The ML-DSA key seeds of the plan's validators, in index order (cheap: an HMAC chain each, no key generation). */
export function validatorKeySeeds(plan: Pick<GenesisPlan, 'validators' | 'mnemonic' | 'validatorKeyOffset'>): Uint8Array[] {
  const seed = mnemonicToSeed(plan.mnemonic);
  const out = Array.from({ length: plan.validators }, (_, i) => deriveMlDsaSeed(seed, walletPath(Branch.Validators, (plan.validatorKeyOffset ?? 0) + i)));
  seed.fill(0);
  return out;
}

/** The RANDAO chain length a plan's genesis commits to. */
export function planChainLength(plan: Pick<GenesisPlan, 'preset' | 'timing'>): number {
  return plan.timing?.randaoChainLength ?? PRESETS[plan.preset].randao_chain_length;
}

/** Derives every key and assembles the (validated) genesis document. */
export function buildGenesis(plan: GenesisPlan): { genesis: Genesis; keys: GenesisKey[] } {
  return assembleGenesis(plan, deriveGenesisKeys(plan));
}

/** Every key of the plan: validators, accounts, then the faucet. */
export function deriveGenesisKeys(plan: GenesisPlan): GenesisKey[] {
  if (!Number.isInteger(plan.validators) || plan.validators < 1 || plan.validators > MAX_GENESIS_VALIDATORS) {
    throw new GenesisError(`--validators must be 1..${MAX_GENESIS_VALIDATORS}`);
  }
  chainIdBytes(plan.chainId);
  const seed = mnemonicToSeed(plan.mnemonic);
  const keys: GenesisKey[] = [
    ...Array.from({ length: plan.validators }, (_, i) => ({ role: 'validator' as const, index: i, keys: deriveWalletKeys(seed, walletPath(Branch.Validators, (plan.validatorKeyOffset ?? 0) + i)) })),
    ...Array.from({ length: plan.accounts }, (_, i) => ({ role: 'account' as const, index: i, keys: deriveWalletKeys(seed, walletPath(Branch.Accounts, i)) })),
    { role: 'faucet', index: 0, keys: deriveWalletKeys(seed, walletPath(Branch.Faucet, 0)) },
  ];
  seed.fill(0);
  return keys;
}

/**
 * The genesis document of `keys` (deriveGenesisKeys). `commitments` (hex, index order) are the
 * validators' RANDAO commitments when the caller computed them already, on another thread: they
 * cost `randao_chain_length` hashes per validator, about as much as deriving the keys.
 */
export function assembleGenesis(plan: GenesisPlan, keys: GenesisKey[], commitments?: readonly string[]): { genesis: Genesis; keys: GenesisKey[] } {
  if (commitments !== undefined && commitments.length !== plan.validators) throw new GenesisError(`${commitments.length} RANDAO commitments for ${plan.validators} validators`);
  const preset = PRESETS[plan.preset];
  const faucet = keys[keys.length - 1]!.keys;
  const validators = keys.filter((k) => k.role === 'validator');
  const chainLength = planChainLength(plan);
  const genesis: Genesis = {
    chain_id: plan.chainId,
    network_id: plan.networkId,
    preset: plan.preset,
    genesis_time: plan.genesisTime,
    config: {
      ...preset,
      ...(plan.timing?.slotSeconds !== undefined ? { slot_seconds: plan.timing.slotSeconds } : {}),
      ...(plan.timing?.slotsPerEpoch !== undefined ? { slots_per_epoch: plan.timing.slotsPerEpoch } : {}),
      randao_chain_length: chainLength,
      faucet: { address: faucet.address, amount: FAUCET_CLAIM.toString(), cooldown_seconds: FAUCET_COOLDOWN_SECONDS },
    },
    forks: [{ name: 'genesis', epoch: 0, version: '0x00000001' }],
    alloc: [
      ...keys.map((k) => ({
        address: k.keys.address,
        balance: (k.role === 'faucet' ? FAUCET_BALANCE : k.role === 'validator' ? VALIDATOR_BALANCE : ACCOUNT_BALANCE).toString(),
      })),
      // Only when asked: a genesis without a reserve stays byte-identical to one built before the bridge.
      ...(plan.bridgeReserve !== undefined && plan.bridgeReserve > 0n ? [{ address: BRIDGE_ADDRESS, balance: plan.bridgeReserve.toString() }] : []),
    ],
    validators: validators.map((v) => ({
      index: v.index,
      address: v.keys.address,
      public_key: toHex(v.keys.mldsa.publicKey),
      stake: preset.min_validator_stake,
      randao_commitment: commitments?.[v.index] ?? toHex(randaoCommitment(v.keys.mldsaSeed, chainLength)),
    })),
    ...(plan.bridgeCounterparts?.length
      ? { bridge_counterparts: plan.bridgeCounterparts.map((c) => ({ genesis_hash: toHex(genesisHash(c.genesis)), allowance: c.allowance.toString(), genesis: c.genesis })) }
      : {}),
  };
  return { genesis: parseGenesis(genesis), keys };
}

/** Keystore files `writeGenesis` writes at a time. */
const KEYSTORE_WRITES_IN_FLIGHT = 16;

/** Where `writeGenesis` put things. */
export interface GenesisFiles {
  genesis: string;
  keystores: Array<{ role: GenesisKey['role']; index: number; address: string; path: string }>;
}

/** File name of a key's wallet file inside the output directory. */
export function keystorePath(outDir: string, role: GenesisKey['role'], index: number): string {
  return role === 'account' ? join(outDir, 'accounts', `account-${index}.json`) : join(outDir, 'keystores', role === 'faucet' ? 'faucet.json' : `validator-${index}.json`);
}

/** Every file `writeGenesis` would create for `validators` validators and `accounts` accounts. */
export function plannedGenesisFiles(outDir: string, validators: number, accounts: number): string[] {
  return [
    join(outDir, 'genesis.json'),
    ...Array.from({ length: validators }, (_, i) => keystorePath(outDir, 'validator', i)),
    ...Array.from({ length: accounts }, (_, i) => keystorePath(outDir, 'account', i)),
    keystorePath(outDir, 'faucet', 0),
  ];
}

/**
 * Writes genesis.json and one encrypted wallet file per key. The seed is encrypted once: every
 * file carries the same ciphertext and differs only in its derivation path and addresses.
 */
export async function writeGenesis(
  outDir: string,
  built: { genesis: Genesis; keys: GenesisKey[] },
  mnemonic: string,
  password: string,
  opts: { force?: boolean; kdfMemoryKib?: number } = {},
): Promise<GenesisFiles> {
  const genesisPath = join(outDir, 'genesis.json');
  if (!opts.force) assertAbsent(plannedGenesisFiles(outDir, built.genesis.validators.length, built.keys.length - built.genesis.validators.length - 1));
  const seed = mnemonicToSeed(mnemonic);
  const encrypted = await encryptSeed(seed, password, opts.kdfMemoryKib);
  seed.fill(0);
  await writeFileAtomic(genesisPath, JSON.stringify(built.genesis, null, 2) + '\n', { force: true, mode: 0o644 });
  const keystores: GenesisFiles['keystores'] = built.keys.map((k) => ({ role: k.role, index: k.index, address: k.keys.address, path: keystorePath(outDir, k.role, k.index) }));
  // Each file is fsync'd: one after another, 75 of them took a devnet ~0.3 s before any process
  // could start; a few at a time let the file system sync them together.
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < keystores.length; i = next++) {
      await writeFileAtomic(keystores[i]!.path, JSON.stringify(walletFileFor(encrypted, built.keys[i]!.keys), null, 2) + '\n', { force: true });
    }
  };
  await Promise.all(Array.from({ length: Math.min(KEYSTORE_WRITES_IN_FLIGHT, keystores.length) }, writer));
  return { genesis: genesisPath, keystores };
}
