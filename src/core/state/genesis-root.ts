/**
 * The genesis state root, computed from the genesis document alone: block 1's header carries it
 * as its `state_root`, and a light client bootstrapping from genesis can check it without asking
 * any server.
 */
import type { Genesis } from '../genesis/genesis.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, trieRoot } from './trie.js';

/** Root of the state genesis allocates (each `alloc` balance; zero balances leave no account). */
export function genesisStateRoot(genesis: Pick<Genesis, 'alloc'>): Uint8Array {
  const entries = genesis.alloc
    .filter((a) => BigInt(a.balance) > 0n)
    .map((a) => [accountKey(a.address), encodeAccountValue({ balance: BigInt(a.balance), nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT })] as const);
  return trieRoot(entries);
}
