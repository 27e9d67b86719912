/**
 * The execution layer's LevelDB key layouts (the store itself is src/node/shared/store.ts): the
 * chain's database (`chain/`) and the state's (`state/`: trie nodes, stale lists and code, see
 * state/trie.ts). Every block or reorg is one chain batch, so a process killed at any instant
 * restarts with all of it or none of it; a block's state batch is durable before it (state/db.ts).
 */


/**
 * Version of the execution key layout. Version 2 split the one-JSON-value block record (v1,
 * unversioned) into metadata, state changes, a binary shell, and per-transaction receipts and
 * envelopes. Version 3: the shell carries the block's included attestations, state changes carry
 * their first inclusions, `l:` keys hold each validator's last included target epoch, and the
 * `c:` reward-credit records are gone (rewards are part of each block's state transition). An
 * older data directory is refused rather than misread. Version 4: account state is a persisted
 * trie (`n:` nodes, `z:` stale-node index, `y:` blocks by height, `c:`/`i:` code) instead of `a:`
 * account values and per-block account diffs; block records carry the state's versions and
 * account count, and state changes carry the block's senders instead of a diff. Version 5: the
 * block header (in the stored shell) carries `state_root`, its parent's post-state root, the
 * shell's SSZ ends with the block's slashing evidence, registry entries carry `slashed`, and
 * registry changes the validators a block slashed and the RANDAO re-commitments it applied.
 * Within layout 5, blocks are now written with one `u:` entry per transaction (receipt and
 * envelope together) where they had an `x:` envelope and an `r:` receipt: readers take either,
 * so a data directory written before keeps its blocks readable. Version 6: a node with a data
 * directory appends each block's envelopes and receipts to the body file (`blocks.bodies`,
 * body-file.ts) and stores only their index under `j:` and the file's committed end under
 * `m:body_end`, and the account trie's levels 0 to 3 are stored hashless (state/hashless.ts).
 * Everything layout 5 wrote stays readable, so a layout-5 directory is upgraded in place on open
 * (UPGRADABLE_SCHEMA_VERSION: only its schema key changes); the new number is there so that an
 * svc reading layout 5 refuses a directory it would misread (blocks with no `u:` entries, nodes
 * in a form it does not know) instead of serving it. Version 7: the state (`n:` nodes, `c:`/`i:`
 * code) lives in a database of its own beside the chain's, and each version's stale-node list is
 * under `n:<version>:~` (state/trie.ts `staleKey`) instead of `z:<block hash>`: a block's state
 * write is then one key range above all older ones, which LevelDB moves down its levels without
 * rewriting (docs/execution.md, "State database"). Version 8: the validator registry is committed in
 * the state (the registry account's storage words, docs/protocol.md "The registry in the state")
 * and each entry is stored by its word under `V:`. Every state root of an older layout's chain
 * differs from what this node computes for the same blocks, so no older layout is read: a data
 * directory of one is refused, never upgraded.
 */
export const SCHEMA_VERSION = 8;

/**
 * classic-level open options of the execution databases (the node and the state bench open the
 * state's the same way). LevelDB memory-maps every table file it holds open, and the pages reads touch stay
 * resident: with the default 1,000 open files a 1,000,000-account state kept about 410 MB of its
 * tables resident, growing with the database. 128 open files (118 tables after LevelDB's 10
 * other files) bound that to the tables in use: the state bench's resident memory fell from about
 * 775 to 400 MB. Fewer files cost block time (a table reopened on a miss re-reads its index and
 * filter): at 64 the per-block state-root update was ~17% slower, at 128 ~8%, within the noise.
 * `multithreading` lets the state's reader thread share the handle.
 */
export const EXECUTION_DB_OPTIONS = { keyEncoding: 'utf8', valueEncoding: 'utf8', multithreading: true, maxOpenFiles: 128 } as const;

/** Directory of the chain's database inside a data directory. */
export const CHAIN_DB_DIR = 'chain';
/** Directory of the state's database inside a data directory. */
export const STATE_DB_DIR = 'state';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Key layout. Heights and indexes are zero-padded so lexicographic order is numeric order. */
export const Keys = {
  /**
   * `body_end`: the end of the bytes of blocks.bodies that `j:` indexes (see body-file.ts);
   * `history` and `pruned_to`: the history mode and the finalised block last pruned up to (pruning.ts).
   */
  meta: (name: 'head' | 'finalized' | 'genesis' | 'schema' | 'state_version' | 'body_end' | 'history' | 'pruned_to') => `m:${name}`,
  /** Deployed (original) code by its SHA3-256, binary, in the state's database. Content-addressed, so shared and never pruned. */
  code: (codeHashHex: string) => `c:${codeHashHex}`,
  /** The instrumented module of the code with this hash, binary, in the state's database. */
  instrumentedCode: (codeHashHex: string) => `i:${codeHashHex}`,
  /** Every imported block by height (any branch), so finality can find the orphans to prune. */
  blockAtHeight: (height: number, hash: string) => `y:${pad(height, 16)}:${hash}`,
  /** Prefix of the blocks imported at `height`. */
  blockAtHeightPrefix: (height: number) => `y:${pad(height, 16)}:`,
  validator: (index: number) => `v:${pad(index, 8)}`,
  /** A registry entry by its state word (0x hex): the preimage a registry proof serves (registry.ts commitRegistry). */
  registryEntry: (word: string) => `V:${word}`,
  /** Small JSON metadata of a block (any branch): what traversal, reorgs and views need. */
  block: (hash: string) => `b:${hash}`,
  /** JSON state changes of a block (diff, registry, authorisations), read when it moves canonically. */
  blockChanges: (hash: string) => `d:${hash}`,
  /** Binary SSZ of the block without its transactions (header and signature). */
  blockShell: (hash: string) => `s:${hash}`,
  /** Binary concatenation of the block's 32-byte transaction hashes, in order. */
  blockTxHashes: (hash: string) => `k:${hash}`,
  /**
   * The block's `index`-th transaction with its receipt, binary (keyed by block, so side branches
   * keep theirs): a 4-byte big-endian length, the receipt's UTF-8 JSON, then the envelope (see
   * blocks.ts `packEntries`): one write per transaction where there were two.
   */
  blockEntry: (hash: string, index: number) => `u:${hash}:${pad(index, 6)}`,
  /**
   * Where the block's transactions and receipts are in the body file (body-file.ts `BodyIndex`),
   * binary: a node with a data directory writes this instead of `u:` entries.
   */
  blockBody: (hash: string) => `j:${hash}`,
  /** Prefix of all transaction entries of a block, in index order. */
  blockEntryPrefix: (hash: string) => `u:${hash}:`,
  /** Binary envelope of the block's `index`-th transaction, as blocks imported before `u:` entries stored it (read, never written). */
  blockTx: (hash: string, index: number) => `x:${hash}:${pad(index, 6)}`,
  /** Prefix of all `x:` envelopes of a block, in index order. */
  blockTxPrefix: (hash: string) => `x:${hash}:`,
  /** JSON receipt of the block's `index`-th transaction, as blocks imported before `u:` entries stored it (read, never written). */
  receipt: (hash: string, index: number) => `r:${hash}:${pad(index, 6)}`,
  /** Prefix of all `r:` receipts of a block, in index order. */
  receiptPrefix: (hash: string) => `r:${hash}:`,
  canonical: (height: number) => `h:${pad(height, 16)}`,
  txLocation: (txHash: string) => `t:${txHash}`,
  faucetClaim: (address: string) => `f:${address}`,
  authorizations: (account: string) => `e:${account}`,
  /** Legacy pool journal (before pool.journal): read once on start, moved into the file and deleted (txpool/journal.ts). */
  poolTx: (txHash: string) => `p:${txHash}`,
} as const;
