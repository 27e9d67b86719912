/**
 * Wire types of the execution layer's APIs (REST, JSON-RPC results, the engine API): the one
 * definition that the server (src/node/execution/) and the clients (src/client/, the beacon's
 * engine client) both import, so a field cannot drift between them.
 */
import type { BlockJson } from '../core/types/block.js';
import type { TxJson } from '../core/types/transaction-json.js';
import type { TxKind } from '../core/types/transaction.js';
import type { BridgeOpKind } from '../core/bridge/types.js';
import type { AccountProofWire } from '../core/state/trie.js';

/** Pool-internal status (spec: queued until every predecessor nonce is present). */
export type PoolStatus = 'ready' | 'queued';

/** Spec mempool view of an entry. */
export interface MempoolEntryJson {
  hash: string;
  /** Envelope type: 0 standard, 1/2 ECDSA (de)authorisation, 3 ECDSA-authorised. */
  type: number;
  from: string;
  to: string | null;
  value: string;
  gas: number;
  gas_price: string;
  nonce: number;
  /** Dilithium signature, or for type 3 the 65-byte ECDSA signature. */
  signature: string;
  /** null for type 3 (signed by an authorised ECDSA key). */
  public_key: string | null;
  status: PoolStatus;
}

/**
 * What a transaction did: its TxKind, a system operation (deposit, exit, RANDAO re-commitment), or
 * a bridge operation (docs/bridge.md; `bridge_malformed` when its data names no operation).
 */
export type ReceiptKind = TxKind | 'deposit' | 'exit' | 'randao_commit' | BridgeOpKind | 'bridge_malformed';

/** A transaction's outcome, stored with its block. */
export interface Receipt {
  transactionHash: string;
  transactionIndex: number;
  blockHash: string;
  blockNumber: number;
  from: string;
  to: string | null;
  kind: ReceiptKind;
  /** 1 success, 0 failure (gas still consumed). */
  status: 0 | 1;
  gasUsed: number;
  cumulativeGasUsed: number;
  effectiveGasPrice: string;
  fee: string;
  /** Address of the contract a successful deployment created; null otherwise. */
  contractAddress: string | null;
  /** Events the transaction emitted (none when it failed: a failed call's logs are reverted). */
  logs: LogJson[];
  /** Why the transaction failed (status 0): out of gas, a trap, or `revert: <reason>`. */
  error?: string;
}

/** An event a contract emitted, as receipts, eth_getLogs and REST logs show it. */
export interface LogJson {
  /** The contract that emitted it. */
  address: string;
  /** 0..4 32-byte topics, 0x hex; topics[0] is SHA3-256 of the event name. */
  topics: string[];
  /** The event's data, 0x hex. */
  data: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  /** Position of the log in its block. */
  logIndex: number;
}

/** Lifecycle state of a transaction as the spec names it. */
export type TxLifecycle = 'Pending' | 'Confirmed' | 'Finalized' | 'unknown';

/** Everything known about a transaction. */
export interface TxStatus {
  hash: string;
  state: TxLifecycle;
  pool_status?: 'ready' | 'queued';
  tx?: TxJson;
  receipt?: Receipt;
  block?: { hash: string; number: number };
}

/** A block with its execution metadata. */
export interface BlockView {
  hash: string;
  number: number;
  parent_hash: string;
  timestamp: number;
  proposer: string;
  state_root: string;
  gas_used: number;
  fees: string;
  transactions: string[];
  canonical: boolean;
  finalized: boolean;
  block: BlockJson | null;
}

/** A pointer to a block. */
export interface BlockRef {
  hash: string;
  index: number;
}

/** Result of newPayload. */
export interface ImportResult {
  status: 'VALID';
  block_hash: string;
  block_number: number;
  state_root: string;
  gas_used: number;
  receipts: Receipt[];
  canonical: boolean;
  already_known: boolean;
  /**
   * Whether importing it changed execution's current registry (a canonical block with a deposit,
   * exit, RANDAO re-commitment or slashing that applied): the beacon re-reads the registry only then.
   */
  registry_changed: boolean;
}

/** One registered validator. */
/** A validator registry entry (its SSZ and state commitment: src/core/consensus/registry.ts). */
export type { RegistryEntry } from '../core/consensus/registry.js';
import type { RegistryEntry } from '../core/consensus/registry.js';
import type { RegistryProofWire } from '../core/light/registry.js';

/** GET /health */
export interface HealthView {
  status: string;
  layer: string;
  latest_block: number;
  peers: number;
  chain_id: string;
  head_hash: string;
  finalized_block: number;
  mempool: number;
  /** Pool entries whose predecessor nonces are all present (includable now). */
  mempool_pending: number;
  /** Pool entries waiting for a missing nonce. */
  mempool_queued: number;
}

/** GET /api/v1/accounts/:address */
export interface AccountView {
  address: string;
  /** Base-10 wei. */
  balance: string;
  nonce: number;
  /** The next nonce after the sender's transactions in the pool. */
  pending_nonce: number;
}

/** POST /api/v1/transactions (202) */
export interface SubmitView {
  hash: string;
  status: PoolStatus;
  /** Hash of the same-nonce transaction this one replaced. */
  replaced?: string;
}

/** One entry's outcome in POST /api/v1/transactions/batch, in request order. */
export interface BatchEntryResult {
  /** SHA3-256 of the entry's envelope bytes; null only for a JSON entry that is not hex at all. */
  hash: string | null;
  status: 'accepted' | 'rejected';
  /** Pool status of an accepted entry (as a single submission's `status`). */
  pool_status?: PoolStatus;
  /** Hash of the same-nonce transaction an accepted entry replaced. */
  replaced?: string;
  /** Why a rejected entry was refused: the code and message a single submission would get. */
  error?: { code: string; message: string };
}

/** POST /api/v1/transactions/batch: how many entries were accepted, and each entry's outcome. */
export interface BatchSubmitResult {
  accepted: number;
  results: BatchEntryResult[];
}

export interface MempoolView {
  count: number;
  transactions: MempoolEntryJson[];
}

/** POST /api/v1/faucet/claim */
export interface FaucetClaimView {
  address: string;
  tx_hash: string;
  /** Base-10 wei. */
  amount: string;
}

/** GET /api/v1/execution/contracts/:address/code */
export interface CodeView {
  address: string;
  block_number: number;
  block_hash: string;
  /** The deployed (original) WebAssembly module, 0x hex; `0x` when the account has none. */
  code: string;
  size: number;
}

/** GET /api/v1/execution/contracts/:address/storage/:key */
export interface StorageView {
  address: string;
  /** 32-byte key, 0x hex. */
  key: string;
  /** 32-byte value, 0x hex (all zero when unset). */
  value: string;
  block_number: number;
  block_hash: string;
}

/** POST /api/v1/execution/call (a failed call is the EXECUTION_REVERTED or EXECUTION_FAILED envelope). */
export interface CallView {
  /** The call's return data (tagged values, see docs/contracts.md), 0x hex. */
  return_data: string;
  gas_used: number;
  block_number: number;
  block_hash: string;
}

/** POST /api/v1/execution/estimate-gas */
export interface EstimateGasView {
  gas: number;
  block_number: number;
}

/** Most blocks one log query (eth_getLogs, GET /api/v1/execution/logs) may span. */
export const MAX_LOG_BLOCK_RANGE = 10_000;

/** GET /api/v1/execution/logs */
export interface LogsView {
  from_block: number;
  to_block: number;
  logs: LogJson[];
}

/** GET /api/v1/execution/mempool: a page of the pool (a bare answer, not the data envelope). */
export interface MempoolPageView {
  success: true;
  /** Entries in the whole pool. */
  count: number;
  offset: number;
  transactions: MempoolEntryJson[];
}

/** POST /api/v1/faucet/claim answers `success: true` with the claim; its older alias /faucet answers the claim alone. */
export type FaucetClaimAnswer = FaucetClaimView & { success?: true };

/** GET /api/v1/accounts/:address/proof: an account (and storage) proof against a block's post-state. */
export type AccountProofView = AccountProofWire & { block_number: number; block_hash: string };

/** GET /api/v1/registry/proof: a page of the registry at a block's post-state, with its proofs (docs/light-client.md "Registry proofs"). */
export type RegistryProofView = RegistryProofWire & { block_number: number; block_hash: string };

/** GET /api/v1/engine/getPendingTransactions: the pool's includable entries in build order, under max_gas. */
export interface PendingTransactionsView {
  count: number;
  gas: number;
  transactions: TxJson[];
}

/** GET /api/v1/engine/config: the chain an execution node runs (the beacon's configuration exchange). */
export interface EngineChainConfig {
  chain_id: string;
  network_id: number;
  genesis_hash: string;
}

/** POST /api/v1/engine/forkchoiceUpdated: the new head and finalised block, and how many blocks were reverted and applied. */
export interface ForkchoiceView {
  head: BlockRef;
  finalized: BlockRef;
  reverted: number;
  applied: number;
}

/** Body of POST /api/v1/engine/forkchoiceUpdated. */
export interface ForkchoiceRequest {
  head_block_hash: string;
  finalized_block_hash?: string | null;
}

/** GET /api/v1/engine/registry */
export interface RegistryView {
  validators: RegistryEntry[];
}

/** Body of POST /api/v1/execution/call and /estimate-gas. */
export interface CallRequestBody {
  from?: string;
  /** null: a deployment. */
  to: string | null;
  /** 0x hex calldata or deploy data. */
  data: string;
  /** Base-10 wei. */
  value?: string;
  gas?: number;
  block?: string;
}

/** Query of GET /api/v1/execution/logs: a range (or one block by hash), emitters and topics (comma-separated alternatives). */
export type LogsQuery = {
  address?: string;
  from?: string | number;
  to?: string | number;
  block_hash?: string;
  topic0?: string;
  topic1?: string;
  topic2?: string;
  topic3?: string;
};
