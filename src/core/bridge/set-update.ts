/**
 * A bridge following a counterpart's validator-set changes (docs/bridge.md "Set updates"): each
 * chain holds one validator set per counterpart, its genesis set until a set update moves it.
 * A set update is the light client's set change (src/core/light/set-change.ts) in SSZ: the
 * finality of a newer checkpoint signed by ≥ 2/3 of the held set, and the whole registry proven
 * against that checkpoint header's state_root. The state keeps only the held set's commitment
 * (setSlot); the set itself is content-addressed beside it. Pure: no I/O.
 */
import { ADDRESS_BYTES, HASH_BYTES, PUBLIC_KEY_BYTES } from '../constants.js';
import { bigintToBytesBE, parseHex, tag32, toHex } from '../codec/bytes.js';
import { parseDecimal, parseUint, requireObject } from '../codec/json.js';
import { MalformedError } from '../errors.js';
import { REGISTRY_ADDRESS, type RegistryEntry, registryStorage } from '../consensus/registry.js';
import { sha3 } from '../crypto/hash.js';
import type { Genesis } from '../genesis/genesis.js';
import type { RegistryProofWire } from '../light/registry.js';
import { type SetChange, applySetChange } from '../light/set-change.js';
import { LightClientError, type TrustedState, type TrustedValidator, trustedFromGenesis } from '../light/types.js';
import { BridgeError, type RegistryProofBody, type SetUpdateBody } from './types.js';

/** The validator set a chain holds for a counterpart: the checkpoint it was proven at, and the set. */
export interface HeldSet {
  /** Checkpoint epoch (0: the counterpart's genesis set). */
  epoch: number;
  /** The checkpoint's block root (the counterpart's genesis hash for its genesis set). */
  root: Uint8Array;
  validators: ReadonlyMap<number, TrustedValidator>;
}

const HELD_SET_TAG = tag32('svc/bridge/held-set/v1');

/**
 * The commitment a chain keeps in setSlot(counterpart): SHA3-256(tag ‖ epoch (uint64 BE) ‖ root ‖
 * count (uint64 BE) ‖ for each validator in index order: index (uint64 BE) ‖ public key ‖ stake
 * (uint256 BE) ‖ active (one byte, 1 or 0)).
 */
export function heldSetCommitment(s: HeldSet): Uint8Array {
  const sorted = [...s.validators.values()].sort((a, b) => a.index - b.index);
  const parts: Uint8Array[] = [HELD_SET_TAG, bigintToBytesBE(BigInt(s.epoch), 8), s.root, bigintToBytesBE(BigInt(sorted.length), 8)];
  for (const v of sorted) parts.push(bigintToBytesBE(BigInt(v.index), 8), v.publicKey, bigintToBytesBE(v.stake, 32), Uint8Array.of(v.active ? 1 : 0));
  return sha3(...parts);
}

/** The set a chain holds for a counterpart before any set update: its genesis validators, all active. */
export function genesisHeldSet(counterpart: Genesis, counterpartHash: Uint8Array): HeldSet {
  return { epoch: 0, root: counterpartHash, validators: trustedFromGenesis(counterpart, counterpartHash).validators };
}

/** The light client's trusted state for a held set: what finality proofs about the counterpart are checked against. */
export function trustedFromHeld(counterpart: Genesis, held: HeldSet): TrustedState {
  return { chainId: counterpart.chain_id, slotsPerEpoch: counterpart.config.slots_per_epoch, root: held.root, epoch: held.epoch, validators: held.validators };
}

/** The active stake of a set, wei. */
export function activeStake(validators: ReadonlyMap<number, TrustedValidator>): bigint {
  let sum = 0n;
  for (const v of validators.values()) if (v.active) sum += v.stake;
  return sum;
}

function entryFromSsz(e: RegistryProofBody['entries'][number]): RegistryEntry {
  return { index: e.index, address: toHex(e.address), public_key: toHex(e.publicKey), stake: e.stake.toString(), randao_commitment: toHex(e.randaoCommitment), active: e.active, slashed: e.slashed };
}

/**
 * The light client's registry proof of a set update's registry against `stateRoot`: each slot and
 * word is derived from the entries (the count's first, then each entry's), so only the trie nodes
 * come from the payload. A proof whose node lists do not match the entries is LIGHT_PROOF_INVALID.
 */
export function registryProofFromBody(b: RegistryProofBody, stateRoot: Uint8Array): RegistryProofWire {
  if (b.storageNodes.length !== b.entries.length + 1) {
    throw new LightClientError('LIGHT_PROOF_INVALID', `the registry proof carries ${b.storageNodes.length} storage proofs, a registry of ${b.entries.length} needs ${b.entries.length + 1} (the count, then each entry)`);
  }
  const entries = b.entries.map(entryFromSsz);
  const words = registryStorage(entries);
  return {
    count: entries.length,
    from: 0,
    entries,
    proof: {
      address: REGISTRY_ADDRESS,
      stateRoot: toHex(stateRoot),
      balance: b.balance.toString(),
      nonce: Number(b.nonce),
      codeHash: toHex(b.codeHash),
      storageHash: toHex(b.storageHash),
      accountProof: b.accountNodes.map((n) => toHex(n)),
      storageProof: words.map(([slot, word], i) => ({ key: toHex(slot), value: toHex(word), proof: b.storageNodes[i]!.map((n) => toHex(n)) })),
    },
  };
}

/** A set update's SSZ registry from the light client's wire proof (a relayer's side); MalformedError naming `field` on any fault. */
export function registryProofToBody(w: RegistryProofWire, field = 'registry'): RegistryProofBody {
  const nodes = (list: unknown, f: string): Uint8Array[] => {
    if (!Array.isArray(list)) throw new MalformedError(f, 'expected an array of hex trie nodes');
    return list.map((n, i) => parseHex(n, `${f}[${i}]`));
  };
  if (w.from !== 0 || w.entries.length !== w.count) throw new MalformedError(field, `a set update carries the whole registry: ${w.entries.length} entries from ${w.from}, count ${w.count}`);
  return {
    entries: w.entries.map((e, i) => ({
      index: e.index,
      address: parseHex(e.address, `${field}.entries[${i}].address`, ADDRESS_BYTES),
      publicKey: parseHex(e.public_key, `${field}.entries[${i}].public_key`, PUBLIC_KEY_BYTES),
      stake: BigInt(e.stake),
      randaoCommitment: parseHex(e.randao_commitment, `${field}.entries[${i}].randao_commitment`, HASH_BYTES),
      active: e.active,
      slashed: e.slashed,
    })),
    balance: BigInt(w.proof.balance),
    nonce: BigInt(w.proof.nonce),
    codeHash: parseHex(w.proof.codeHash, `${field}.proof.codeHash`, HASH_BYTES),
    storageHash: parseHex(w.proof.storageHash, `${field}.proof.storageHash`, HASH_BYTES),
    accountNodes: nodes(w.proof.accountProof, `${field}.proof.accountProof`),
    storageNodes: w.proof.storageProof.map((s, i) => nodes(s.proof, `${field}.proof.storageProof[${i}].proof`)),
  };
}

/** The set update of counterpart `counterpart` carrying a light-client set change. */
export function setUpdateFromChange(counterpart: Uint8Array, change: SetChange): SetUpdateBody {
  return { counterpart, finality: change.finality, registry: registryProofToBody(change.registry) };
}

/**
 * Verifies a set update against the set held for its counterpart and returns the set it moves
 * to, by the light client's rule (applySetChange): a checkpoint newer than the held one, its
 * finality signed by ≥ 2/3 of the held set's active stake, the whole registry proven against its
 * header's state_root, someone active in it. Every failure is BRIDGE_SET_UPDATE_INVALID naming
 * the light-client code.
 */
export function verifySetUpdate(body: SetUpdateBody, counterpart: Genesis, held: HeldSet): HeldSet {
  try {
    const next = applySetChange(trustedFromHeld(counterpart, held), { finality: body.finality, registry: registryProofFromBody(body.registry, body.finality.header.stateRoot) });
    return { epoch: next.epoch ?? 0, root: next.root, validators: next.validators };
  } catch (err) {
    if (err instanceof LightClientError) throw new BridgeError('BRIDGE_SET_UPDATE_INVALID', `${err.code}: ${err.message}`);
    throw err;
  }
}

/** A held set as the execution stores it (hex and base-10, as the registry's JSON). */
export interface HeldSetJson {
  epoch: number;
  root: string;
  validators: Array<{ index: number; public_key: string; stake: string; active: boolean }>;
}

/** The stored form of a held set. */
export function heldSetToJson(s: HeldSet): HeldSetJson {
  return {
    epoch: s.epoch,
    root: toHex(s.root),
    validators: [...s.validators.values()].sort((a, b) => a.index - b.index).map((v) => ({ index: v.index, public_key: toHex(v.publicKey), stake: v.stake.toString(), active: v.active })),
  };
}

/** A held set from its stored form; MalformedError naming `field` on any fault. */
export function heldSetFromJson(input: unknown, field = 'held_set'): HeldSet {
  const o = requireObject(input, field);
  if (!Array.isArray(o.validators)) throw new MalformedError(`${field}.validators`, 'expected an array');
  const validators = new Map<number, TrustedValidator>();
  o.validators.forEach((raw, i) => {
    const v = requireObject(raw, `${field}.validators[${i}]`);
    const index = parseUint(v.index, `${field}.validators[${i}].index`);
    if (typeof v.active !== 'boolean') throw new MalformedError(`${field}.validators[${i}].active`, 'expected a boolean');
    validators.set(index, { index, publicKey: parseHex(v.public_key, `${field}.validators[${i}].public_key`, PUBLIC_KEY_BYTES), stake: parseDecimal(v.stake, `${field}.validators[${i}].stake`, 256), active: v.active });
  });
  return { epoch: parseUint(o.epoch, `${field}.epoch`), root: parseHex(o.root, `${field}.root`, HASH_BYTES), validators };
}
