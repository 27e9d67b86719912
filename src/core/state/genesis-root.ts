/**
 * The genesis state root, computed from the genesis document alone: block 1's header carries it
 * as its `state_root`, and a light client bootstrapping from genesis can check it without asking
 * any server.
 */
import { BRIDGE_ADDRESS } from '../constants.js';
import type { Genesis } from '../genesis/genesis.js';
import { genesisBridgeStorage } from '../bridge/genesis.js';
import { REGISTRY_ADDRESS, genesisRegistry, registryStorage } from '../consensus/registry.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, storageKey, trieRoot } from './trie.js';

/** Root of the storage trie holding `words` (slot, word), built from scratch. */
export function storageRootOf(words: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Uint8Array {
  return words.length > 0 ? trieRoot(words.map(([slot, word]) => [storageKey(slot), word] as const)) : EMPTY_TRIE_ROOT;
}

/**
 * Root of the state genesis allocates: each `alloc` balance (zero balances leave no account), the
 * registry account's storage of the genesis validators (src/core/consensus/registry.ts) and the
 * bridge account's storage of the genesis counterparts (src/core/bridge/genesis.ts); each storage
 * gives its account a leaf even with no balance.
 */
export function genesisStateRoot(genesis: Pick<Genesis, 'alloc' | 'bridge_counterparts' | 'validators'>): Uint8Array {
  const storage = new Map([
    [REGISTRY_ADDRESS, storageRootOf(registryStorage(genesisRegistry(genesis)))],
    [BRIDGE_ADDRESS, storageRootOf(genesisBridgeStorage(genesis))],
  ]);
  const balances = new Map(genesis.alloc.filter((a) => BigInt(a.balance) > 0n).map((a) => [a.address, BigInt(a.balance)]));
  for (const [address, root] of storage) if (root !== EMPTY_TRIE_ROOT && !balances.has(address)) balances.set(address, 0n);
  const entries = [...balances].map(
    ([address, balance]) => [accountKey(address), encodeAccountValue({ balance, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: storage.get(address) ?? EMPTY_TRIE_ROOT })] as const,
  );
  return trieRoot(entries);
}
