/**
 * The public REST API of the execution node (`{execution_url}`, default port 8546) and its
 * JSON-RPC endpoint: each route once, for the servers (src/node/execution/api/rest.ts,
 * rest-contracts.ts, rpc.ts) and the clients (src/client/execution.ts, src/client/engine.ts).
 * `Res` is the `data` of the `{success: true, data}` envelope, except for the routes marked
 * "bare", which answer `Res` itself.
 */
import type { CounterpartsView } from '../bridge.js';
import type {
  AccountProofView,
  AccountView,
  BatchSubmitResult,
  BlockView,
  CallRequestBody,
  CallView,
  CodeView,
  EstimateGasView,
  FaucetClaimAnswer,
  HealthView,
  LogsQuery,
  LogsView,
  MempoolPageView,
  Receipt,
  RegistryProofView,
  StorageView,
  SubmitView,
  TxStatus,
} from '../execution.js';
import { route } from './route.js';

/** Node health (bare). */
export const health = route<HealthView>()('GET', '/health');

/** Prometheus text exposition (bare, text/plain). */
export const metrics = route<string>()('GET', '/metrics');

/** Faucet claim (bare). The spec also names it /faucet, which answers the claim without `success`. */
export const faucetClaim = route<FaucetClaimAnswer, { address: string }>()('POST', '/api/v1/faucet/claim', ['/faucet']);

/** A page of the pool (bare); `limit` 1..10,000 (default 1,000), `offset` from 0. */
export const mempool = route<MempoolPageView, undefined, { limit?: number; offset?: number }>()('GET', '/api/v1/execution/mempool');

/** Submits one signed envelope: SSZ bytes (application/octet-stream) or JSON (`{raw}` or the spec's fields); 202. */
export const submitTransaction = route<SubmitView, Uint8Array | Record<string, unknown>>()('POST', '/api/v1/transactions');

/** Submits up to MAX_TX_BATCH envelopes: an SSZ envelope list or JSON `{raw: [...]}`; each entry accepted or refused on its own. */
export const submitBatch = route<BatchSubmitResult, Uint8Array | { raw: string[] }>()('POST', '/api/v1/transactions/batch');

/** Lifecycle state of a transaction. */
export const transaction = route<TxStatus>()('GET', '/api/v1/transactions/:hash');

/** A transaction's receipt (404 until it is included). The spec also names it /api/v1/receipts/:hash. */
export const receipt = route<Receipt>()('GET', '/api/v1/transactions/:hash/receipt', ['/api/v1/receipts/:hash']);

/** Balance and nonces of an address at the head. */
export const account = route<AccountView>()('GET', '/api/v1/accounts/:address');

/** Account and storage proof; `block` latest (default), finalized, a height or a hash; `keys` comma-separated 32-byte keys. */
export const accountProof = route<AccountProofView, undefined, { block?: string; keys?: string }>()('GET', '/api/v1/accounts/:address/proof');

/** A page of the validator registry with its proofs; `block` as accountProof's, `from` the first index (0), `limit` at most 256 entries (256). */
export const registryProof = route<RegistryProofView, undefined, { block?: string; from?: string; limit?: string }>()('GET', '/api/v1/registry/proof');

/** A block by height, 0x hash, latest, finalized or earliest. */
export const block = route<BlockView>()('GET', '/api/v1/blocks/:id');

/** This chain and the bridge counterparts registered in the head state. */
export const bridgeCounterparts = route<CounterpartsView>()('GET', '/api/v1/bridge/counterparts');

/** The deployed code of a contract at `block` (default latest). */
export const contractCode = route<CodeView, undefined, { block?: string }>()('GET', '/api/v1/execution/contracts/:address/code');

/** One storage slot of a contract at `block` (default latest). */
export const contractStorage = route<StorageView, undefined, { block?: string }>()('GET', '/api/v1/execution/contracts/:address/storage/:key');

/** A read-only call (no transaction); a revert is EXECUTION_REVERTED with the reason. */
export const call = route<CallView, CallRequestBody>()('POST', '/api/v1/execution/call');

/** The least gas limit under which a deployment or call succeeds. */
export const estimateGas = route<EstimateGasView, CallRequestBody>()('POST', '/api/v1/execution/estimate-gas');

/** Logs of canonical blocks. */
export const logs = route<LogsView, undefined, LogsQuery>()('GET', '/api/v1/execution/logs');

/** JSON-RPC 2.0 on the RPC server (bare): one call or a batch; the body is parsed by the handler so a parse error is -32700. */
export const jsonRpc = route<unknown, unknown>()('POST', '/');
