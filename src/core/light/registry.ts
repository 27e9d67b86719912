/**
 * Proving a validator set against a header's state_root (docs/light-client.md "Registry proofs"):
 * the registry account's proof, the count word and one entry word per validator, each with the
 * entry it hashes. A light client or a bridge takes a set from nothing else. Pure: no I/O.
 */
import { HASH_BYTES, PUBLIC_KEY_BYTES } from '../constants.js';
import { bytesEqual, bytesToBigintBE, parseHex, toHex } from '../codec/bytes.js';
import { parseDecimal, parseUint, rejectUnknownKeys, requireObject } from '../codec/json.js';
import { MalformedError } from '../errors.js';
import { REGISTRY_ADDRESS, type RegistryEntry, registryCountSlot, registryEntrySlot, registryEntryWord, registryStorage } from '../consensus/registry.js';
import { type AccountProofWire, EMPTY_CODE_HASH, accountKey, encodeAccountValue, storageKey, trieProof, trieRoot, verifyAccountProof, verifyStorageProof } from '../state/trie.js';
import { LightClientError, type TrustedValidator } from './types.js';

/**
 * A registry proof in wire form: `entries` are validators `from` … `from + entries.length - 1`,
 * and `proof.storageProof` holds the count slot's proof first, then one per entry in that order.
 * A whole registry (what a set change carries) has `from` 0 and `count` entries.
 */
export interface RegistryProofWire {
  count: number;
  from: number;
  entries: RegistryEntry[];
  proof: AccountProofWire;
}

const ENTRY_KEYS = ['index', 'address', 'public_key', 'stake', 'randao_commitment', 'active', 'slashed'];

/** Strictly parses registry entries (hex and decimal as the registry stores them). */
export function registryEntriesFromJson(input: unknown, field = 'entries'): RegistryEntry[] {
  if (!Array.isArray(input)) throw new MalformedError(field, 'expected an array');
  return input.map((raw, i) => {
    const f = `${field}[${i}]`;
    const o = requireObject(raw, f);
    rejectUnknownKeys(o, ENTRY_KEYS, f);
    if (typeof o.active !== 'boolean') throw new MalformedError(`${f}.active`, 'expected a boolean');
    if (typeof o.slashed !== 'boolean') throw new MalformedError(`${f}.slashed`, 'expected a boolean');
    return {
      index: parseUint(o.index, `${f}.index`),
      address: toHex(parseHex(o.address, `${f}.address`, 20)),
      public_key: toHex(parseHex(o.public_key, `${f}.public_key`, PUBLIC_KEY_BYTES)),
      stake: parseDecimal(o.stake, `${f}.stake`, 256).toString(),
      randao_commitment: toHex(parseHex(o.randao_commitment, `${f}.randao_commitment`, HASH_BYTES)),
      active: o.active,
      slashed: o.slashed,
    };
  });
}

/** Strictly parses a registry proof's wire JSON (the account proof's fields are checked by verification). */
export function registryProofFromJson(input: unknown, field = 'registry'): RegistryProofWire {
  const o = requireObject(input, field);
  const proof = requireObject(o.proof, `${field}.proof`);
  if (!Array.isArray(proof.accountProof) || !Array.isArray(proof.storageProof)) throw new MalformedError(`${field}.proof`, 'expected accountProof and storageProof arrays');
  return { count: parseUint(o.count, `${field}.count`), from: parseUint(o.from, `${field}.from`), entries: registryEntriesFromJson(o.entries, `${field}.entries`), proof: proof as unknown as AccountProofWire };
}

const fail = (message: string): never => {
  throw new LightClientError('LIGHT_PROOF_INVALID', message);
};

/**
 * Verifies a whole registry against `stateRoot` and returns the validator set it proves: the
 * registry account's proof, the count word, and for each index 0 … count − 1 the entry word at
 * its slot equal to SHA3-256(tag ‖ SSZ(entry)) of the entry served. One canonical form: the count
 * slot first, then every entry in index order, nothing else. A validator is active when its
 * entry is active (a slashed one never is).
 */
export function verifyRegistryProof(stateRoot: Uint8Array, w: RegistryProofWire): Map<number, TrustedValidator> {
  const p = w.proof;
  if (typeof p.address !== 'string' || p.address.toLowerCase() !== REGISTRY_ADDRESS) fail(`the registry proof is for ${String(p.address)}, not the registry account ${REGISTRY_ADDRESS}`);
  if (!verifyAccountProof(stateRoot, p)) fail(`the registry account proof does not verify against state_root ${toHex(stateRoot)}`);
  if (w.from !== 0 || w.entries.length !== w.count) fail(`a registry proof must carry the whole registry: ${w.entries.length} entries from ${w.from}, count ${w.count}`);
  if (p.storageProof.length !== w.count + 1) fail(`the registry proof carries ${p.storageProof.length} storage proofs, a registry of ${w.count} needs ${w.count + 1} (the count, then each entry)`);
  const storageRoot = parseHex(p.storageHash, 'storageHash', HASH_BYTES);
  const slotProof = (i: number, slot: Uint8Array, what: string): Uint8Array => {
    const s = p.storageProof[i]!;
    if (typeof s.key !== 'string' || s.key.toLowerCase() !== toHex(slot)) fail(`storage proof ${i} is for slot ${String(s.key)}, not ${what} (${toHex(slot)})`);
    if (!verifyStorageProof(storageRoot, s)) fail(`the storage proof of ${what} does not verify against the registry's storage root ${toHex(storageRoot)}`);
    return parseHex(s.value, 'value', 32);
  };
  const count = bytesToBigintBE(slotProof(0, registryCountSlot(), 'the registry count'));
  if (count !== BigInt(w.count)) fail(`the registry count word is ${count}, the proof says ${w.count}`);
  const out = new Map<number, TrustedValidator>();
  w.entries.forEach((e, i) => {
    if (e.index !== i) fail(`registry entry ${i} has index ${e.index}`);
    const word = slotProof(i + 1, registryEntrySlot(i), `validator ${i}'s entry`);
    if (!bytesEqual(word, registryEntryWord(e))) fail(`validator ${i}'s entry as served does not hash to its word ${toHex(word)} in the state`);
    out.set(i, { index: i, publicKey: parseHex(e.public_key, 'public_key', PUBLIC_KEY_BYTES), stake: BigInt(e.stake), active: e.active && !e.slashed });
  });
  return out;
}

/** Merges consecutive pages of one state's registry proof (one account proof, the count's proof first in each) into one. */
export function mergeRegistryPages(pages: readonly RegistryProofWire[]): RegistryProofWire {
  const first = pages[0]!;
  return {
    count: first.count,
    from: first.from,
    entries: pages.flatMap((p) => p.entries),
    proof: { ...first.proof, storageProof: [first.proof.storageProof[0]!, ...pages.flatMap((p) => p.proof.storageProof.slice(1))] },
  };
}

/**
 * The root of a state holding only the registry account with `entries` (a whole registry in index
 * order), and its registry proof, built from scratch: the reference form for vectors, benches and
 * another implementation's tests.
 */
export function standaloneRegistryProof(entries: RegistryEntry[]): { stateRoot: Uint8Array; proof: RegistryProofWire } {
  const words = registryStorage(entries);
  const storage = words.map(([slot, word]) => [storageKey(slot), word] as const);
  const storageRoot = trieRoot(storage);
  const state = [[accountKey(REGISTRY_ADDRESS), encodeAccountValue({ balance: 0n, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot })] as const];
  const stateRoot = trieRoot(state);
  const account: AccountProofWire = {
    address: REGISTRY_ADDRESS, stateRoot: toHex(stateRoot), balance: '0', nonce: 0, codeHash: toHex(EMPTY_CODE_HASH), storageHash: toHex(storageRoot),
    accountProof: trieProof(state, accountKey(REGISTRY_ADDRESS)).map(toHex),
    storageProof: words.map(([slot, word]) => ({ key: toHex(slot), value: toHex(word), proof: trieProof(storage, storageKey(slot)).map(toHex) })),
  };
  return { stateRoot, proof: { count: entries.length, from: 0, entries, proof: account } };
}
