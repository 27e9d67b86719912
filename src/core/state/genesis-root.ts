/**
 * The genesis state root, computed from the genesis document alone: block 1's header carries it
 * as its `state_root`, and a light client bootstrapping from genesis can check it without asking
 * any server.
 */
import { BRIDGE_ADDRESS } from '../constants.js';
import type { Genesis } from '../genesis/genesis.js';
import { genesisBridgeStorage } from '../bridge/genesis.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, storageKey, trieRoot } from './trie.js';

/**
 * Root of the state genesis allocates: each `alloc` balance (zero balances leave no account) and
 * the bridge account's storage of the genesis counterparts (src/core/bridge/genesis.ts), which
 * gives that account a leaf even with no reserve.
 */
export function genesisStateRoot(genesis: Pick<Genesis, 'alloc' | 'bridge_counterparts'>): Uint8Array {
  const storage = genesisBridgeStorage(genesis);
  const bridgeStorageRoot = storage.length > 0 ? trieRoot(storage.map(([slot, word]) => [storageKey(slot), word] as const)) : EMPTY_TRIE_ROOT;
  const balances = new Map(genesis.alloc.filter((a) => BigInt(a.balance) > 0n).map((a) => [a.address, BigInt(a.balance)]));
  if (storage.length > 0 && !balances.has(BRIDGE_ADDRESS)) balances.set(BRIDGE_ADDRESS, 0n);
  const entries = [...balances].map(
    ([address, balance]) =>
      [accountKey(address), encodeAccountValue({ balance, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: address === BRIDGE_ADDRESS ? bridgeStorageRoot : EMPTY_TRIE_ROOT })] as const,
  );
  return trieRoot(entries);
}
