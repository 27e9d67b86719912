/**
 * The contract between the state trie (src/node/execution/state/), the contract VM (src/vm/) and
 * the APIs: what execution reads and writes, synchronously, while it runs a block or a read-only
 * call. Addresses are lowercase 0x strings; storage keys and values are 32 bytes. The account and
 * the state view are the VM's (src/vm/state.ts): the VM states what it runs against and the trie
 * implements it, so the VM imports nothing of the node.
 */

export type { Account, StateView } from '../../../vm/index.js';

/** Proof wire shapes: defined in core, where the standalone verifier reads them. */
export type { AccountProofWire as AccountProofJson, StorageProofWire as StorageProofJson } from '../../../core/state/trie.js';
