/**
 * The validator registry in the state trie (docs/protocol.md "The registry in the state"): every
 * validator's entry is committed as one storage word of the registry account, so an account proof
 * with storage proofs against a header's state_root proves the whole set. Execution writes the
 * words (genesis, then every block that changes an entry); light clients and bridges verify them
 * (src/core/light/registry.ts). Pure: no I/O.
 */
import { BooleanType, ByteVectorType, ContainerType, UintBigintType, UintNumberType } from '@chainsafe/ssz';
import { ADDRESS_BYTES, DEPOSIT_ADDRESS, HASH_BYTES, PUBLIC_KEY_BYTES } from '../constants.js';
import { bigintToBytesBE, parseHex, tag32 } from '../codec/bytes.js';
import { sha3 } from '../crypto/hash.js';

/** The account whose storage holds the registry: the deposit system address, which deposits pay. */
export const REGISTRY_ADDRESS = DEPOSIT_ADDRESS;

/** A registry entry as the wire and the stores carry it (hex bytes, base-10 wei). */
export interface RegistryEntry {
  index: number;
  address: string;
  public_key: string;
  stake: string;
  randao_commitment: string;
  active: boolean;
  /** Slashed by included evidence (docs/protocol.md "Slashing"): inactive for good, its stake cut. */
  slashed: boolean;
}

/** SSZ of an entry (2,046 bytes, fixed size): what its storage word hashes. */
export const RegistryEntrySsz = new ContainerType({
  index: new UintNumberType(8),
  address: new ByteVectorType(ADDRESS_BYTES),
  publicKey: new ByteVectorType(PUBLIC_KEY_BYTES),
  stake: new UintBigintType(32),
  randaoCommitment: new ByteVectorType(HASH_BYTES),
  active: new BooleanType(),
  slashed: new BooleanType(),
});

const COUNT_SLOT = sha3(tag32('svc/registry/count/v1'));
const ENTRY_SLOT_TAG = tag32('svc/registry/slot/v1');
const ENTRY_WORD_TAG = tag32('svc/registry/entry/v1');

/** The storage slot holding the number of registered validators (a uint256 word, big-endian). */
export function registryCountSlot(): Uint8Array {
  return COUNT_SLOT;
}

/** The storage slot holding validator `index`'s entry word: SHA3-256(tag ‖ uint64 big-endian index). */
export function registryEntrySlot(index: number): Uint8Array {
  return sha3(ENTRY_SLOT_TAG, bigintToBytesBE(BigInt(index), 8));
}

/** The count word: uint256 big-endian. */
export function registryCountWord(count: number): Uint8Array {
  return bigintToBytesBE(BigInt(count), 32);
}

/** SSZ bytes of an entry. */
export function encodeRegistryEntry(e: RegistryEntry): Uint8Array {
  return RegistryEntrySsz.serialize({
    index: e.index,
    address: parseHex(e.address, 'address', ADDRESS_BYTES),
    publicKey: parseHex(e.public_key, 'public_key', PUBLIC_KEY_BYTES),
    stake: BigInt(e.stake),
    randaoCommitment: parseHex(e.randao_commitment, 'randao_commitment', HASH_BYTES),
    active: e.active,
    slashed: e.slashed,
  });
}

/** An entry's storage word: SHA3-256(tag ‖ SSZ(entry)). */
export function registryEntryWord(e: RegistryEntry): Uint8Array {
  return sha3(ENTRY_WORD_TAG, encodeRegistryEntry(e));
}

/** The storage words (slot, word) of `entries`, which must be a whole registry in index order: the count and one word per entry. */
export function registryStorage(entries: readonly RegistryEntry[]): Array<readonly [Uint8Array, Uint8Array]> {
  return [[COUNT_SLOT, registryCountWord(entries.length)], ...entries.map((e) => [registryEntrySlot(e.index), registryEntryWord(e)] as const)];
}

/** The registry genesis starts with: every genesis validator, active, not slashed. */
export function genesisRegistry(genesis: { validators: ReadonlyArray<Omit<RegistryEntry, 'active' | 'slashed'>> }): RegistryEntry[] {
  return genesis.validators.map((v) => ({ index: v.index, address: v.address, public_key: v.public_key, stake: v.stake, randao_commitment: v.randao_commitment, active: true, slashed: false }));
}
