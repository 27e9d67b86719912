/**
 * A counterpart chain for bridge tests (not a test file itself): a real genesis built by the
 * genesis builder whose validator keys the test holds, and finality proofs about its bridge
 * account made the way its beacon would serve them: a state trie holding the bridge account's
 * storage, a header naming that trie's root, and the finalising link's votes signed by its
 * validators. Nothing here is checked by the code under test except through its real verifiers.
 */
import { toHex } from '../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../src/core/constants.js';
import type { MlDsaKeyPair } from '../../src/core/crypto/mldsa.js';
import { type Genesis, genesisHash } from '../../src/core/genesis/genesis.js';
import { participationBits } from '../../src/core/light/verify.js';
import { EMPTY_CODE_HASH, accountKey, encodeAccountValue, storageKey, trieProof, trieRoot } from '../../src/core/state/trie.js';
import { type AttestationData, signAttestation } from '../../src/core/types/attestation.js';
import { type BlockHeader, blockHash } from '../../src/core/types/block.js';
import { type BidFields, type BidSignature, type FinalityProof, type SetUpdateBody, bidId, signBid } from '../../src/core/bridge/types.js';
import { setUpdateFromChange } from '../../src/core/bridge/set-update.js';
import { type RegistryEntry, genesisRegistry } from '../../src/core/consensus/registry.js';
import { standaloneRegistryProof } from '../../src/core/light/registry.js';
import type { FinalityUpdate } from '../../src/core/light/types.js';
import { addressFromPublicKey } from '../../src/core/crypto/address.js';
import { buildGenesis } from '../../src/genesis/build.js';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/** A chain whose genesis and validator keys a test holds. */
export interface TestChain {
  genesis: Genesis;
  hash: Uint8Array;
  keys: MlDsaKeyPair[];
}

const chains = new Map<string, TestChain>();

/**
 * A devnet genesis of `validators` equal-stake validators for `chainId` (built once per process),
 * from a mnemonic of its own (entropy `keySeed` repeated): chains with different key seeds have
 * different validator sets, as two independent chains do.
 */
export function testChain(chainId: string, keySeed: number, validators = 4, genesisTime = 1_700_000_000): TestChain {
  const id = `${chainId}/${keySeed}/${validators}/${genesisTime}`;
  let c = chains.get(id);
  if (!c) {
    const built = buildGenesis({ validators, accounts: 1, preset: 'devnet', chainId, networkId: 7, genesisTime, mnemonic: entropyToMnemonic(new Uint8Array(32).fill(keySeed), wordlist), timing: { randaoChainLength: 16 } });
    c = { genesis: built.genesis, hash: genesisHash(built.genesis), keys: built.keys.filter((k) => k.role === 'validator').map((k) => k.keys.mldsa) };
    chains.set(id, c);
  }
  return c;
}

/** What a proof says about the chain: its bridge account's storage words by slot, and the header's terms. */
export interface ProofTerms {
  /** Storage of the bridge account: slot → 32-byte word. */
  storage: ReadonlyArray<readonly [Uint8Array, Uint8Array]>;
  /** The slot proven (present or absent). */
  slot: Uint8Array;
  bridgeBalance?: bigint;
  /** Finalised header time, ms. */
  timestampMs?: number;
  /** Validator indices whose votes the update carries (default: the first ⌈2n/3⌉). */
  signers?: number[];
  /** Keys that sign (default the chain's own; another set's keys forge). */
  keys?: MlDsaKeyPair[];
  /** The chain id the votes are signed under (default the chain's). */
  chainId?: string;
  finalizedEpoch?: number;
  /** Registry size the participation bitfield spans (default the genesis set's). */
  registrySize?: number;
}

/** Indices 0..k−1 of the smallest k with 3k ≥ 2n: exactly enough equal stake. */
export function quorum(n: number): number[] {
  return Array.from({ length: Math.ceil((2 * n) / 3) }, (_, i) => i);
}

/**
 * A finality proof about `chain`'s bridge account: a state trie holding the account with
 * `terms.storage`, a header at `terms.timestampMs` whose state_root is that trie's root, finalised
 * by votes of `terms.signers` on the link epoch → epoch + 1.
 */
export function finalityProof(chain: TestChain, terms: ProofTerms): FinalityProof {
  const storageEntries = terms.storage.map(([slot, word]) => [storageKey(slot), word] as const);
  const storageRoot = trieRoot(storageEntries);
  const balance = terms.bridgeBalance ?? 10n ** 24n;
  const accountValue = { balance, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot };
  const other = '0x' + '77'.repeat(20);
  const accounts = [
    [accountKey(BRIDGE_ADDRESS), encodeAccountValue(accountValue)],
    [accountKey(other), encodeAccountValue({ balance: 5n, nonce: 1n, codeHash: EMPTY_CODE_HASH, storageRoot: new Uint8Array(32) })],
  ] as const;
  const stateRoot = trieRoot(accounts);
  const update = finalityUpdate(chain, stateRoot, terms);
  const slotWord = terms.storage.find(([s]) => toHex(s) === toHex(terms.slot))?.[1] ?? new Uint8Array(32);
  return {
    update,
    account: {
      balance,
      nonce: 0n,
      codeHash: EMPTY_CODE_HASH,
      storageHash: storageRoot,
      accountNodes: trieProof(accounts, accountKey(BRIDGE_ADDRESS)),
      value: slotWord,
      storageNodes: trieProof(storageEntries, storageKey(terms.slot)),
    },
  };
}

/** The finality update of a checkpoint at `terms.finalizedEpoch` (default 3) whose header names `stateRoot`, signed as `terms` says. */
export function finalityUpdate(chain: TestChain, stateRoot: Uint8Array, terms: Omit<ProofTerms, 'storage' | 'slot' | 'bridgeBalance'>): FinalityUpdate {
  const epoch = terms.finalizedEpoch ?? 3;
  const spe = chain.genesis.config.slots_per_epoch;
  const header: BlockHeader = {
    index: epoch * spe + 1,
    timestampMs: terms.timestampMs ?? chain.genesis.genesis_time * 1000 + epoch * spe * chain.genesis.config.slot_seconds * 1000,
    parentHash: new Uint8Array(32).fill(0x11),
    merkleRoot: new Uint8Array(32).fill(0x22),
    validatorId: new Uint8Array(20).fill(0x33),
    vrfProof: new Uint8Array(3309).fill(0x44),
    vrfSeed: new Uint8Array(32).fill(0x55),
    randaoReveal: new Uint8Array(32).fill(0x66),
    stateRoot,
  };
  const root = blockHash(header);
  const target = { epoch: epoch + 1, root: new Uint8Array(32).fill(0x99) };
  const data: AttestationData = { slot: (epoch + 1) * spe, beaconBlockRoot: target.root, source: { epoch, root }, target };
  const signers = terms.signers ?? quorum(chain.keys.length);
  const keys = terms.keys ?? chain.keys;
  const attestations = signers.map((i) => signAttestation(i, data, keys[i]!, terms.chainId ?? chain.genesis.chain_id));
  return { finalized: { epoch, root }, target, header, attestations, participation: participationBits(signers, terms.registrySize ?? Math.max(chain.keys.length, ...signers.map((i) => i + 1))) };
}

/**
 * The registry of `chain` after deposits by `joiners` (validators n … n + joiners.length − 1, the
 * stake of a genesis validator each), with the validators in `exited` inactive.
 */
export function grownRegistry(chain: TestChain, joiners: MlDsaKeyPair[], exited: number[] = []): RegistryEntry[] {
  const base = genesisRegistry(chain.genesis);
  const stake = base[0]!.stake;
  const joined = joiners.map((k, i): RegistryEntry => ({ index: base.length + i, address: toHex(addressFromPublicKey(k.publicKey)), public_key: toHex(k.publicKey), stake, randao_commitment: toHex(new Uint8Array(32).fill(i + 1)), active: true, slashed: false }));
  return [...base, ...joined].map((e) => (exited.includes(e.index) ? { ...e, active: false } : e));
}

/**
 * A set update of `chain` to `entries` at checkpoint `terms.finalizedEpoch`: the registry proven in
 * a state holding only the registry account, finalised by `terms.signers` over a bitfield of
 * `terms.registrySize` (the set held before).
 */
export function setUpdate(chain: TestChain, entries: RegistryEntry[], terms: Omit<ProofTerms, 'storage' | 'slot' | 'bridgeBalance'>): SetUpdateBody {
  const { stateRoot, proof } = standaloneRegistryProof(entries);
  return setUpdateFromChange(chain.hash, { finality: finalityUpdate(chain, stateRoot, terms), registry: proof });
}

/** BID signatures of `signers` of `chain` (default: a quorum), under its chain id. */
export function bidSignatures(chain: TestChain, f: BidFields, signers = quorum(chain.keys.length), keys = chain.keys): BidSignature[] {
  const bid = bidId(f);
  return signers.map((i) => signBid(bid, i, keys[i]!, chain.genesis.chain_id));
}
