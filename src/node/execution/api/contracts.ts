/**
 * What the read APIs (JSON-RPC and REST) need from the state trie and the contract VM, as one
 * typed backend, and the read-only operations built on it: code, storage, proofs, eth_call and
 * gas estimation. The node passes ExecutionChain's state views and proofs and the VM's executor.
 */
import { SvcError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import type { AccountProofJson, StateView } from '../state/types.js';
import type { BlockRecord } from '../blocks.js';
import { type ContractTxContext, type ContractTxResult, intrinsicGas, runContractTx } from '../../../vm/index.js';
import type { ExecutionChain } from '../chain.js';

export type { ContractTxContext, ContractTxResult };

/** The state trie and VM operations the read APIs use. */
export interface ContractBackend {
  /** A throwaway view of the state after a stored, non-pruned block; throws a typed error otherwise. */
  stateView(blockHash: string): Promise<StateView>;
  /** Account and storage proofs against the state root of a stored, non-pruned block. */
  proof(blockHash: string, address: string, keys: Uint8Array[]): Promise<AccountProofJson>;
  /** Runs a deployment or call on `view` (the VM's runContractTx). */
  run(view: StateView, ctx: ContractTxContext): ContractTxResult;
  /** Intrinsic gas of a deployment or call (the VM's intrinsicGas). */
  intrinsicGas(to: string | null, data: Uint8Array): bigint;
}

/** The backend over an execution chain's stored states and the VM. */
export function chainBackend(chain: Pick<ExecutionChain, 'stateView' | 'proof'>): ContractBackend {
  return { stateView: (hash) => chain.stateView(hash), proof: (hash, address, keys) => chain.proof(hash, address, keys), run: runContractTx, intrinsicGas };
}

/** A read-only call that failed: a revert (with its reason) or an out-of-gas or trap. */
export class CallFailedError extends SvcError {
  constructor(
    readonly result: ContractTxResult,
    readonly reverted: boolean,
  ) {
    super(reverted ? 'EXECUTION_REVERTED' : 'EXECUTION_FAILED', reverted ? `execution reverted: ${revertReason(result)}` : `execution failed: ${result.error ?? 'status 0'}`);
  }
}

const REVERT_PREFIX = 'revert: ';

/**
 * Most VM runs one eth_estimateGas makes (the run at the cap included): enough for the search to
 * reach the tolerance from a 30M cap down to a 21,000-gas answer (2 + 17 runs).
 */
export const ESTIMATE_MAX_RUNS = 24;
/**
 * Most gas all runs of one eth_estimateGas may use together, in multiples of the cap: the search
 * stops (answering a limit that succeeded) before a run could take it past this, so the VM work
 * of one estimate is bounded by gas, like a block's, whatever the contract does with less gas.
 */
export const ESTIMATE_GAS_BUDGET_CAPS = 4n;
/** The binary search stops once the range is within this fraction of its upper end (geth's 1.5%). */
export const ESTIMATE_TOLERANCE = { num: 15n, den: 1_000n } as const;

/** The reason of a run's error when it reverted (`revert: <reason>`), else undefined (out of gas, a trap, no error). */
export function revertText(error: string | undefined): string | undefined {
  return error?.startsWith(REVERT_PREFIX) ? error.slice(REVERT_PREFIX.length) : undefined;
}

/** The revert reason of a failed run, from its error (`revert: <reason>`), else the error itself. */
export function revertReason(r: ContractTxResult): string {
  return revertText(r.error) ?? r.error ?? '';
}

/** The block a read-only call runs in: its state and its context. */
export type CallBlockRef = Pick<BlockRecord, 'hash' | 'index' | 'timestamp'>;

/** Runs calls and estimates elsewhere (reads/call-pool.ts: off the main thread); `client` is who asked, for per-client limits. */
export interface CallOffload {
  call(block: CallBlockRef, req: CallRequest, client?: string): Promise<ContractTxResult>;
  estimateGas(block: CallBlockRef, req: CallRequest, client?: string): Promise<bigint>;
}

/** A read-only call as the APIs accept it (validated). */
export interface CallRequest {
  from: string;
  to: string | null;
  value: bigint;
  data: Uint8Array;
  /** Gas the call may use; defaults to the block gas limit. */
  gas?: bigint;
}

/** Read-only operations at a block, over a backend. */
export class ContractReader {
  constructor(
    private readonly backend: ContractBackend,
    /** The block gas limit: the default and the cap of a call's gas. */
    private readonly maxGas: bigint,
    /** Where call and estimateGas run when not here (the node's call threads). */
    private readonly offload?: CallOffload,
  ) {}

  /** A view of the state after `block`. */
  view(block: BlockRecord): Promise<StateView> {
    return this.backend.stateView(block.hash);
  }

  /** The deployed code at `address` after `block` (empty when none). */
  async code(block: BlockRecord, address: string): Promise<Uint8Array> {
    return (await this.view(block)).code(address) ?? new Uint8Array(0);
  }

  /** A 32-byte storage slot after `block`. */
  async storage(block: BlockRecord, address: string, key: Uint8Array): Promise<Uint8Array> {
    return (await this.view(block)).storage(address, key);
  }

  /** Balance and nonce after `block`. */
  async account(block: BlockRecord, address: string): Promise<{ balance: bigint; nonce: bigint }> {
    const a = (await this.view(block)).account(address);
    return { balance: a.balance, nonce: a.nonce };
  }

  /** Account and storage proofs against `block`'s state root. */
  proof(block: BlockRecord, address: string, keys: Uint8Array[]): Promise<AccountProofJson> {
    return this.backend.proof(block.hash, address, keys);
  }

  /**
   * Runs `req` on a throwaway view of the state after `block`, in that block's context (its
   * number and timestamp), and returns the result; a status-0 result throws CallFailedError.
   * A call to an address without code returns empty data, as on Ethereum.
   */
  async call(block: CallBlockRef, req: CallRequest, client?: string): Promise<ContractTxResult> {
    if (this.offload) return this.offload.call(block, req, client);
    const backend = this.backend;
    const view = await backend.stateView(block.hash);
    const gas = this.gasOf(req);
    checkValue(view, req);
    if (req.to !== null && req.data.length > 0 && view.code(req.to) === undefined) {
      return { status: 1, gasUsed: backend.intrinsicGas(req.to, req.data), contractAddress: null, returnData: new Uint8Array(0), logs: [] };
    }
    const r = this.runOn(backend, view, block, req, gas);
    if (r.status === 0) throw new CallFailedError(r, r.error?.startsWith(REVERT_PREFIX) ?? false);
    return r;
  }

  /**
   * The least gas limit under which `req` succeeds, to within ESTIMATE_TOLERANCE: a run at the cap
   * proves it can; its gas used is then tried (the answer unless the call behaves differently
   * with less gas left, e.g. by forwarding gas to a nested call), and only then a binary search
   * between the two. The search answers its upper end (a limit that succeeded) once the range is
   * within the tolerance, as geth's does, or once ESTIMATE_MAX_RUNS runs are made or the next could
   * take the gas used by all runs past ESTIMATE_GAS_BUDGET_CAPS × the cap: one read is never a
   * search of log2(cap) runs that each burn the cap. Each run starts from the same state
   * (checkpoint and revert on one view).
   */
  async estimateGas(block: CallBlockRef, req: CallRequest, client?: string): Promise<bigint> {
    if (this.offload) return this.offload.estimateGas(block, req, client);
    const backend = this.backend;
    const view = await backend.stateView(block.hash);
    const intrinsic = backend.intrinsicGas(req.to, req.data);
    const cap = this.gasOf(req);
    if (intrinsic > cap) throw new ExecutionError('GAS_TOO_LOW', `intrinsic gas ${intrinsic} exceeds the gas limit ${cap}`);
    checkValue(view, req);
    // A value transfer, or a call to an address without code, runs nothing.
    if (req.to !== null && (req.data.length === 0 || view.code(req.to) === undefined)) return intrinsic;
    let runs = 0;
    let spent = 0n;
    const attempt = (gas: bigint): ContractTxResult => {
      runs++;
      const mark = view.checkpoint();
      try {
        const r = this.runOn(backend, view, block, req, gas);
        spent += r.gasUsed;
        return r;
      } finally {
        view.revertTo(mark);
      }
    };
    const full = attempt(cap);
    if (full.status === 0) throw new CallFailedError(full, full.error?.startsWith(REVERT_PREFIX) ?? false);
    let lo = full.gasUsed > intrinsic ? full.gasUsed : intrinsic;
    if (attempt(lo).status === 1) return lo;
    let hi = cap;
    const budget = ESTIMATE_GAS_BUDGET_CAPS * cap;
    while (hi - lo > 1n && runs < ESTIMATE_MAX_RUNS && (hi - lo) * ESTIMATE_TOLERANCE.den > hi * ESTIMATE_TOLERANCE.num) {
      const mid = (lo + hi) / 2n;
      if (spent + mid > budget) break;
      if (attempt(mid).status === 1) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  private gasOf(req: CallRequest): bigint {
    const gas = req.gas ?? this.maxGas;
    if (gas > this.maxGas) throw new ExecutionError('GAS_TOO_HIGH', `gas ${gas} exceeds the block gas limit ${this.maxGas}`);
    return gas;
  }

  private runOn(backend: ContractBackend, view: StateView, block: CallBlockRef, req: CallRequest, gas: bigint): ContractTxResult {
    return backend.run(view, { from: req.from, to: req.to, value: req.value, data: req.data, gasLimit: gas, nonce: view.account(req.from).nonce, blockNumber: block.index, timestampMs: block.timestamp });
  }
}

/** A call cannot move more than its sender has (the fee is not charged on a read). */
function checkValue(view: StateView, req: CallRequest): void {
  if (req.value > 0n && view.account(req.from).balance < req.value) {
    throw new ExecutionError('INSUFFICIENT_FUNDS', `${req.from} has less than the call's value ${req.value}`);
  }
}
