/**
 * The registry proof execution serves (GET /api/v1/registry/proof, docs/light-client.md "Registry
 * proofs"): a page of registry entries with the storage proofs of their words, and the count's,
 * against a block's post-state. The entries come from the preimages stored beside each block
 * (Keys.registryEntry), so any readable state's registry is served, not only the head's.
 */
import { bytesToBigintBE, parseHex } from '../../core/codec/bytes.js';
import { REGISTRY_ADDRESS, type RegistryEntry, registryCountSlot, registryEntrySlot } from '../../core/consensus/registry.js';
import type { RegistryProofWire } from '../../core/light/registry.js';
import type { ChainStore } from '../shared/store.js';
import { ExecutionError } from './errors.js';
import type { AccountProofJson } from './state/types.js';
import { Keys } from './store.js';

/** Entries one registry proof answer carries at most (each entry's key alone is 1,952 bytes). */
export const MAX_REGISTRY_PROOF_ENTRIES = 256;

/** What a registry proof reads: account proofs at a block, and entries by word. */
export interface RegistryProofSource {
  proof(blockHash: string, address: string, keys: Uint8Array[]): Promise<AccountProofJson>;
  readonly store: ChainStore;
}

/** Entries `from` … `from + limit − 1` (fewer at the registry's end) of the registry in `blockHash`'s post-state, with their proofs. */
export async function registryProof(chain: RegistryProofSource, blockHash: string, from: number, limit: number): Promise<RegistryProofWire> {
  const countProof = await chain.proof(blockHash, REGISTRY_ADDRESS, [registryCountSlot()]);
  const count = Number(bytesToBigintBE(parseHex(countProof.storageProof[0]!.value, 'count')));
  const end = Math.min(count, from + Math.max(0, Math.min(limit, MAX_REGISTRY_PROOF_ENTRIES)));
  const indices = Array.from({ length: Math.max(0, end - from) }, (_, i) => from + i);
  const proof = indices.length === 0 ? countProof : await chain.proof(blockHash, REGISTRY_ADDRESS, [registryCountSlot(), ...indices.map(registryEntrySlot)]);
  const entries = await Promise.all(
    proof.storageProof.slice(1).map(async (s, i): Promise<RegistryEntry> => {
      const e = await chain.store.get<RegistryEntry>(Keys.registryEntry(s.value.toLowerCase()));
      if (!e) throw new ExecutionError('INTERNAL', `registry entry ${indices[i]} (word ${s.value}) has no stored preimage`);
      return e;
    }),
  );
  return { count, from, entries, proof };
}
