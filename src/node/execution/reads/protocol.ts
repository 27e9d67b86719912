/**
 * Messages between the execution node's main thread and its call threads (call-pool.ts,
 * call-worker.ts). A call thread runs eth_call and eth_estimateGas with the VM; every state read
 * it needs is asked of the main thread, which answers from its state database, so the thread
 * holds no database handle and sees exactly the committed state the main thread would.
 */
import type { AccountEntry } from '../state/view.js';
import type { NodeRef } from '../state/trie.js';
import type { ContractTxResult } from '../../../vm/index.js';

/** A block as a call runs in it: its state root and its context. */
export interface CallBlock {
  hash: string;
  index: number;
  timestamp: number;
}

/** A read-only call (api/contracts.ts CallRequest, structured-clone safe). */
export interface CallJobRequest {
  from: string;
  to: string | null;
  value: bigint;
  data: Uint8Array;
  gas?: bigint;
}

/** main → call thread: run one call or estimate. */
export interface CallJob {
  id: number;
  op: 'call' | 'estimate';
  block: CallBlock;
  root: NodeRef;
  req: CallJobRequest;
  maxGas: bigint;
}

/** An error that crossed the thread boundary: enough to rebuild the typed error on the main thread. */
export interface WireError {
  name: string;
  code: string;
  message: string;
  /** For CallFailedError: the failed run and whether it reverted. */
  failed?: { result: ContractTxResult; reverted: boolean };
}

/** call thread → main: the answer to a job. */
export type CallAnswer = { id: number; call: ContractTxResult } | { id: number; estimate: bigint } | { id: number; error: WireError };

/** call thread → main (on the read port): one StateSource read, answered synchronously. */
export type ReadRequest =
  | { op: 'account'; root: NodeRef; address: string }
  | { op: 'storage'; address: string; storageRoot: NodeRef; key: Uint8Array }
  | { op: 'code'; codeHash: Uint8Array }
  | { op: 'instrumented'; codeHash: Uint8Array };

/** main → call thread (on the read port): the value read, or why it could not be. */
export type ReadAnswer = { value: AccountEntry | Uint8Array | undefined } | { error: WireError };

/** The shared flag's states: the thread waits while IDLE; the main thread sets DONE after it posted the answer. */
export const READ_IDLE = 0;
export const READ_DONE = 1;
