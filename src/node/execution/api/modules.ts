/**
 * What the execution API serves from: the node's modules, handed to the REST, engine and
 * JSON-RPC registrations instead of the node itself, so the API depends on the parts it reads and
 * the node on the API, never both ways (issue 28 item 4).
 */
import type { PriorityGate } from '../../../util/priority-gate.js';
import type { CanonicalChange, ExecutionChain } from '../chain.js';
import type { Faucet } from '../faucet.js';
import type { LogIndex } from '../logs.js';
import type { ExecutionMetrics } from '../metrics.js';
import type { CallPool } from '../reads/call-pool.js';
import type { Admission } from '../txpool/admission.js';
import type { ContractReader } from './contracts.js';

/** The execution node's modules as the API sees them. */
export interface ExecutionModules {
  readonly chain: ExecutionChain;
  readonly admission: Admission;
  readonly faucet: Faucet;
  readonly metrics: ExecutionMetrics;
  /** Engine calls go first: storage reads wait while one is in flight. */
  readonly enginePriority: PriorityGate;
  /** eth_call and eth_estimateGas threads. */
  readonly calls: CallPool;
  /** The chain's log index (one per chain: the chain writes it, the API reads it). */
  readonly logs: LogIndex;
  /** Contract reads (state views, code, storage, calls) over the chain and the call threads. */
  readonly contracts: ContractReader;
  /** Connected P2P peers (0 without P2P). */
  peerCount(): number;
  /** Calls `listener` after each committed canonical change, after the pool has followed it. */
  onCanonical(listener: (change: CanonicalChange) => void): void;
}
