/**
 * The genesis document: chain id, timing, gas limits, prefunded accounts, initial validators and
 * the fork manifest, and the bridge counterparts it trusts from the start. Every timing and
 * economic constant the layers use is read from here.
 */
import { GenesisError, SvcError } from '../errors.js';
import { parseHex, toHex } from '../codec/bytes.js';
import { parseDecimal, parseString, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { addressFromPublicKey, normalizeAddress } from '../crypto/address.js';
import { chainIdBytes } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { BRIDGE_ADDRESS, GWEI, HASH_BYTES, PUBLIC_KEY_BYTES, WEI_PER_TOKEN } from '../constants.js';

export type PresetName = 'devnet' | 'mainnet';

/** Chain parameters. Amounts are base-10 wei strings. */
export interface ChainConfig {
  slot_seconds: number;
  slots_per_epoch: number;
  /** Epochs after which a justified checkpoint is final. */
  finality_epochs: number;
  max_gas_per_block: number;
  min_gas_price: string;
  min_validator_stake: string;
  /** Length n of each validator's RANDAO hash chain. */
  randao_chain_length: number;
  /** Consensus reward per proposed block, wei. */
  proposer_reward: string;
  /** Consensus reward per validator per epoch with a counted attestation, wei. */
  attester_reward: string;
  faucet: { address: string; amount: string; cooldown_seconds: number };
}

export interface GenesisAccount {
  address: string;
  balance: string;
}

export interface GenesisValidator {
  index: number;
  address: string;
  /** 0x hex of the 1952-byte ML-DSA-65 public key. */
  public_key: string;
  stake: string;
  /** H^n(secret), 0x hex. */
  randao_commitment: string;
}

export interface Fork {
  name: string;
  epoch: number;
  /** 4-byte fork version, 0x hex. */
  version: string;
}

/**
 * A bridge counterpart known from genesis (docs/bridge.md "Genesis counterparts"): what a signed
 * registration stores (the counterpart's whole genesis document, which its proofs and BID
 * signatures are checked against) and the allowance moved from the bridge reserve into its ledger.
 */
export interface GenesisCounterpart {
  /** 0x SHA3-256 of the counterpart's canonical genesis: its name in BIDs, checked against `genesis`. */
  genesis_hash: string;
  /** Wei of this chain's bridge reserve (BRIDGE_ADDRESS's alloc) that is the counterpart's ledger at genesis. */
  allowance: string;
  genesis: Genesis;
}

export interface Genesis {
  chain_id: string;
  /** Numeric id for Ethereum tooling (eth_chainId, net_version). */
  network_id: number;
  preset: PresetName;
  /** Unix seconds of slot 0. */
  genesis_time: number;
  config: ChainConfig;
  forks: Fork[];
  alloc: GenesisAccount[];
  validators: GenesisValidator[];
  /** Bridge counterparts trusted from genesis, sorted by genesis hash; absent when none (an empty list parses to absent, so the hash is unchanged). */
  bridge_counterparts?: GenesisCounterpart[];
}

/** Timing and limits of each preset; everything else in ChainConfig comes from the builder. */
export const PRESETS: Record<PresetName, Omit<ChainConfig, 'faucet'>> = {
  mainnet: {
    slot_seconds: 12,
    slots_per_epoch: 32,
    finality_epochs: 2,
    max_gas_per_block: 30_000_000,
    min_gas_price: GWEI.toString(),
    min_validator_stake: (32n * WEI_PER_TOKEN).toString(),
    randao_chain_length: 1 << 20,
    proposer_reward: WEI_PER_TOKEN.toString(),
    attester_reward: (WEI_PER_TOKEN / 10n).toString(),
  },
  devnet: {
    slot_seconds: 2,
    // Two-slot epochs: the first finalised epoch (epochs 1 and 2 justified, the second by 2/3 of
    // the validators attesting in its first and second slot) comes 2 epochs + 1 slot after
    // genesis, ~10 s, instead of ~20 s with four-slot epochs (docs/deploy.md, "Timing").
    slots_per_epoch: 2,
    finality_epochs: 2,
    max_gas_per_block: 30_000_000,
    min_gas_price: GWEI.toString(),
    min_validator_stake: (32n * WEI_PER_TOKEN).toString(),
    // 4,096 reveals: the genesis commitments and every validator client's chains are this many
    // SHA3 hashes per key (64 validators at 1 << 16 took ~8 s of CPU at genesis alone); even a
    // lone validator proposing every 2 s slot re-commits (randao/recommit.ts) only after ~2 hours.
    randao_chain_length: 1 << 12,
    proposer_reward: WEI_PER_TOKEN.toString(),
    attester_reward: (WEI_PER_TOKEN / 10n).toString(),
  },
};

const MAX_GAS_CAP = 1_000_000_000;

function parseConfig(input: unknown): ChainConfig {
  const c = requireObject(input, 'genesis.config');
  rejectUnknownKeys(c, ['slot_seconds', 'slots_per_epoch', 'finality_epochs', 'max_gas_per_block', 'min_gas_price', 'min_validator_stake', 'randao_chain_length', 'proposer_reward', 'attester_reward', 'faucet'], 'genesis.config');
  const f = requireObject(c.faucet, 'genesis.config.faucet');
  rejectUnknownKeys(f, ['address', 'amount', 'cooldown_seconds'], 'genesis.config.faucet');
  const positive = (v: unknown, field: string, max?: number) => {
    const n = parseUint(v, field, max);
    if (n === 0) throw new GenesisError(`${field} must be at least 1`);
    return n;
  };
  return {
    slot_seconds: positive(c.slot_seconds, 'genesis.config.slot_seconds', 3600),
    slots_per_epoch: positive(c.slots_per_epoch, 'genesis.config.slots_per_epoch', 1024),
    finality_epochs: positive(c.finality_epochs, 'genesis.config.finality_epochs', 64),
    max_gas_per_block: positive(c.max_gas_per_block, 'genesis.config.max_gas_per_block', MAX_GAS_CAP),
    min_gas_price: parseDecimal(c.min_gas_price, 'genesis.config.min_gas_price', 64).toString(),
    min_validator_stake: parseDecimal(c.min_validator_stake, 'genesis.config.min_validator_stake', 256).toString(),
    randao_chain_length: positive(c.randao_chain_length, 'genesis.config.randao_chain_length', 1 << 24),
    proposer_reward: parseDecimal(c.proposer_reward, 'genesis.config.proposer_reward', 256).toString(),
    attester_reward: parseDecimal(c.attester_reward, 'genesis.config.attester_reward', 256).toString(),
    faucet: {
      address: normalizeAddress(f.address, 'genesis.config.faucet.address'),
      amount: parseDecimal(f.amount, 'genesis.config.faucet.amount', 256).toString(),
      cooldown_seconds: parseUint(f.cooldown_seconds, 'genesis.config.faucet.cooldown_seconds'),
    },
  };
}

function parseForks(input: unknown): Fork[] {
  if (!Array.isArray(input) || input.length === 0) throw new GenesisError('genesis.forks must list at least the genesis fork');
  const forks = input.map((raw, i) => {
    const o = requireObject(raw, `genesis.forks[${i}]`);
    rejectUnknownKeys(o, ['name', 'epoch', 'version'], `genesis.forks[${i}]`);
    return {
      name: parseString(o.name, `genesis.forks[${i}].name`),
      epoch: parseUint(o.epoch, `genesis.forks[${i}].epoch`),
      version: toHex(parseHex(o.version, `genesis.forks[${i}].version`, 4)),
    };
  });
  if (forks[0]!.epoch !== 0) throw new GenesisError('the first fork must activate at epoch 0');
  for (let i = 1; i < forks.length; i++) {
    if (forks[i]!.epoch <= forks[i - 1]!.epoch) throw new GenesisError(`fork ${forks[i]!.name} must activate after ${forks[i - 1]!.name}`);
  }
  if (new Set(forks.map((f) => f.name)).size !== forks.length) throw new GenesisError('fork names must be unique');
  if (new Set(forks.map((f) => f.version)).size !== forks.length) throw new GenesisError('fork versions must be unique');
  return forks;
}

// Any fault of one counterpart entry, the nested document's included (its message then prefixed by `nested`), is GENESIS_COUNTERPART_INVALID.
function inCounterpart<T>(nested: string | undefined, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof SvcError) throw new GenesisError(nested ? `${nested}: ${err.message}` : err.message, 'GENESIS_COUNTERPART_INVALID');
    throw err;
  }
}

/**
 * The bridge counterparts of a genesis whose chain id and alloc are parsed: each entry's document
 * valid and hashing to its stated genesis_hash (GENESIS_COUNTERPART_INVALID), another chain than
 * this one (GENESIS_COUNTERPART_SELF: the chain id differs, so neither this genesis nor a chain
 * sharing its id and signing domain is listed), each once by hash and by chain id
 * (GENESIS_COUNTERPART_DUPLICATE), the allowances together within the bridge reserve
 * (GENESIS_COUNTERPART_RESERVE). Sorted by genesis hash, so the genesis hash covers the set, not the order.
 */
function parseCounterparts(input: unknown, chainId: string, alloc: readonly GenesisAccount[]): GenesisCounterpart[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) throw new GenesisError('genesis.bridge_counterparts must be an array', 'GENESIS_COUNTERPART_INVALID');
  const out = input.map((raw, i): GenesisCounterpart => {
    const field = `genesis.bridge_counterparts[${i}]`;
    const o = inCounterpart(undefined, () => {
      const e = requireObject(raw, field);
      rejectUnknownKeys(e, ['genesis_hash', 'allowance', 'genesis'], field);
      return e;
    });
    const genesis = inCounterpart(`${field}.genesis`, () => parseGenesis(o.genesis));
    const hash = toHex(genesisHash(genesis));
    const stated = inCounterpart(undefined, () => toHex(parseHex(o.genesis_hash, `${field}.genesis_hash`, HASH_BYTES)));
    if (stated !== hash) throw new GenesisError(`${field}.genesis_hash ${stated} is not the hash of its genesis document (${hash})`, 'GENESIS_COUNTERPART_INVALID');
    const allowance = inCounterpart(undefined, () => parseDecimal(o.allowance, `${field}.allowance`, 256));
    if (genesis.chain_id === chainId) {
      throw new GenesisError(`${field} is chain ${chainId}, the chain this genesis starts: a counterpart is another chain, with its own chain id`, 'GENESIS_COUNTERPART_SELF');
    }
    return { genesis_hash: hash, allowance: allowance.toString(), genesis };
  });
  for (const [key, what] of [['genesis_hash', 'genesis hash'], ['chain_id', 'chain id']] as const) {
    const seen = new Set<string>();
    for (const c of out) {
      const v = key === 'genesis_hash' ? c.genesis_hash : c.genesis.chain_id;
      if (seen.has(v)) throw new GenesisError(`genesis.bridge_counterparts lists the ${what} ${v} twice`, 'GENESIS_COUNTERPART_DUPLICATE');
      seen.add(v);
    }
  }
  const reserve = BigInt(alloc.find((a) => a.address === BRIDGE_ADDRESS)?.balance ?? '0');
  const allocated = out.reduce((sum, c) => sum + BigInt(c.allowance), 0n);
  if (allocated > reserve) {
    throw new GenesisError(`genesis.bridge_counterparts allocate ${allocated} wei, beyond the bridge reserve of ${reserve} wei (the alloc of ${BRIDGE_ADDRESS})`, 'GENESIS_COUNTERPART_RESERVE');
  }
  return out.sort((a, b) => (a.genesis_hash < b.genesis_hash ? -1 : a.genesis_hash > b.genesis_hash ? 1 : 0));
}

/** Parses and cross-checks a genesis document; every fault is a GenesisError or MalformedError. */
export function parseGenesis(input: unknown): Genesis {
  const g = requireObject(input, 'genesis');
  rejectUnknownKeys(g, ['chain_id', 'network_id', 'preset', 'genesis_time', 'config', 'forks', 'alloc', 'validators', 'bridge_counterparts'], 'genesis');
  const chainId = parseString(g.chain_id, 'genesis.chain_id');
  try {
    chainIdBytes(chainId);
  } catch (err) {
    throw new GenesisError((err as SvcError).message);
  }
  if (g.preset !== 'devnet' && g.preset !== 'mainnet') throw new GenesisError('genesis.preset must be devnet or mainnet');
  const config = parseConfig(g.config);
  const minStake = BigInt(config.min_validator_stake);
  if (!Array.isArray(g.alloc)) throw new GenesisError('genesis.alloc must be an array');
  const alloc = g.alloc.map((raw, i) => {
    const o = requireObject(raw, `genesis.alloc[${i}]`);
    rejectUnknownKeys(o, ['address', 'balance'], `genesis.alloc[${i}]`);
    return { address: normalizeAddress(o.address, `genesis.alloc[${i}].address`), balance: parseDecimal(o.balance, `genesis.alloc[${i}].balance`, 256).toString() };
  });
  if (new Set(alloc.map((a) => a.address)).size !== alloc.length) throw new GenesisError('genesis.alloc lists an address twice');
  if (!Array.isArray(g.validators) || g.validators.length === 0) throw new GenesisError('genesis.validators must list at least one validator');
  const validators = g.validators.map((raw, i) => {
    const field = `genesis.validators[${i}]`;
    const o = requireObject(raw, field);
    rejectUnknownKeys(o, ['index', 'address', 'public_key', 'stake', 'randao_commitment'], field);
    const v: GenesisValidator = {
      index: parseUint(o.index, `${field}.index`),
      address: normalizeAddress(o.address, `${field}.address`),
      public_key: toHex(parseHex(o.public_key, `${field}.public_key`, PUBLIC_KEY_BYTES)),
      stake: parseDecimal(o.stake, `${field}.stake`, 256).toString(),
      randao_commitment: toHex(parseHex(o.randao_commitment, `${field}.randao_commitment`, HASH_BYTES)),
    };
    if (v.index !== i) throw new GenesisError(`${field}.index must be ${i}: indices are contiguous from 0`);
    if (toHex(addressFromPublicKey(parseHex(v.public_key, 'public_key'))) !== v.address) {
      throw new GenesisError(`${field}.address does not derive from its public key`);
    }
    if (BigInt(v.stake) < minStake) throw new GenesisError(`${field}.stake is below the minimum validator stake ${config.min_validator_stake} wei`);
    return v;
  });
  if (new Set(validators.map((v) => v.address)).size !== validators.length) throw new GenesisError('genesis.validators lists an address twice');
  const counterparts = parseCounterparts(g.bridge_counterparts, chainId, alloc);
  return {
    chain_id: chainId,
    network_id: parseUint(g.network_id, 'genesis.network_id'),
    preset: g.preset,
    genesis_time: parseUint(g.genesis_time, 'genesis.genesis_time'),
    config,
    forks: parseForks(g.forks),
    alloc,
    validators,
    ...(counterparts.length > 0 ? { bridge_counterparts: counterparts } : {}),
  };
}

/** JSON with object keys sorted at every level: the form the genesis hash commits to. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Genesis hash: SHA3-256 of the canonical JSON of the parsed document. Nodes refuse peers and data
 * dirs with another. It covers bridge_counterparts (each entry's nested document in the same
 * canonical form), so chains that trust different counterparts never take each other for one.
 */
export function genesisHash(genesis: Genesis): Uint8Array {
  return sha3(Buffer.from(canonicalJson(genesis), 'utf8'));
}

/** Slot at Unix time `nowMs` (0 before genesis). */
export function slotAt(genesis: Genesis, nowMs: number): number {
  const elapsed = nowMs - genesis.genesis_time * 1000;
  return elapsed <= 0 ? 0 : Math.floor(elapsed / (genesis.config.slot_seconds * 1000));
}

/** Epoch containing `slot`. */
export function epochOfSlot(genesis: Genesis, slot: number): number {
  return Math.floor(slot / genesis.config.slots_per_epoch);
}

/** Unix ms at which `slot` starts. */
export function slotStartMs(genesis: Genesis, slot: number): number {
  return (genesis.genesis_time + slot * genesis.config.slot_seconds) * 1000;
}

export type ForkStatus = 'active' | 'current' | 'scheduled';

/** The fork manifest with each fork's status at `epoch`: exactly one is `current`. */
export function forkSchedule(genesis: Genesis, epoch: number): Array<Fork & { status: ForkStatus }> {
  const currentIndex = genesis.forks.reduce((acc, f, i) => (f.epoch <= epoch ? i : acc), 0);
  return genesis.forks.map((f, i) => ({ ...f, status: i === currentIndex ? 'current' : i < currentIndex ? 'active' : 'scheduled' }));
}
