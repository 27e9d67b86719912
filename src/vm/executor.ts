/**
 * The VM's entry point for the chain and for read-only calls: intrinsic gas, deploy-time
 * validation, and running a deployment or a call against a journaled StateView.
 */
import { bytesEqual, toHex } from '../core/codec/bytes.js';
import { contractAddress } from '../core/crypto/address.js';
import type { StateView } from './state.js';
import { ContractModuleError } from './errors.js';
import { ByteCache, type CacheStats } from '../util/byte-cache.js';
import { type CompiledContract, compileContract, type ContractLoader, EMPTY_CODE_HASH, runFrame, splitCallData, type TxRun, VmResourceError } from './runtime.js';
import { callIntrinsicGas } from '../core/gas.js';
import { prepareModule } from './prepare.js';

export { EMPTY_CODE_HASH, splitCallData, VmResourceError };

/** A deployment or call as the chain hands it to the VM. */
export interface ContractTxContext {
  from: string;
  to: string | null;
  value: bigint;
  data: Uint8Array;
  gasLimit: bigint;
  nonce: bigint;
  blockNumber: number;
  timestampMs: number;
}

/** What a deployment or call did; the chain turns it into a receipt. */
export interface ContractTxResult {
  status: 0 | 1;
  gasUsed: bigint;
  contractAddress: string | null;
  returnData: Uint8Array;
  logs: Array<{ address: string; topics: Uint8Array[]; data: Uint8Array }>;
  error?: string;
}

/** Splits deploy data `u32 LE code_length ‖ code ‖ constructor args`; throws when it does not frame. */
export function splitDeployData(data: Uint8Array): { code: Uint8Array; args: Uint8Array } {
  if (data.length < 4) throw new ContractModuleError('CONTRACT_DEPLOY_DATA_MALFORMED', `deploy data is ${data.length} bytes, shorter than its 4-byte code length`);
  const len = new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true);
  if (len > data.length - 4) throw new ContractModuleError('CONTRACT_DEPLOY_DATA_MALFORMED', `deploy data announces ${len} bytes of code but carries ${data.length - 4}`);
  return { code: data.subarray(4, 4 + len), args: data.subarray(4 + len) };
}

/** Intrinsic gas of a deploy or call: the transaction rule of src/core/types/transaction.ts. */
export function intrinsicGas(to: string | null, data: Uint8Array): bigint {
  return callIntrinsicGas(to, data);
}

/** Statically validates deploy data (module well-formed, imports allowed, no floats, size, one memory under the cap); throws a typed error with a clear message. Admission calls it so a bad module is refused before it is pooled. */
export function validateDeploy(data: Uint8Array): void {
  prepareModule(splitDeployData(data).code);
}

/**
 * Compiled modules by code hash, least recently used first, bounded by an estimate of their
 * resident size (V8's machine code and metadata run to several times the module's bytes). A hit
 * saves the host the compilation; gas is the same either way (runFrame charges by the per-transaction
 * rule), so the cache's contents never show in a receipt. Each frame still instantiates afresh.
 */
const MODULE_CACHE_BYTES = 64 * 1024 * 1024;
const COMPILED_BYTES_PER_MODULE_BYTE = 8;
const modules = new ByteCache<{ contract: CompiledContract; bytes: number }>(MODULE_CACHE_BYTES, (e) => e.bytes * COMPILED_BYTES_PER_MODULE_BYTE);

/** A transaction's loader: the shared cache behind a per-transaction map, which keeps every module the transaction used alive (and warm) until it ends. */
function loader(state: StateView): ContractLoader {
  const used = new Map<string, CompiledContract>();
  return (codeHash) => {
    if (bytesEqual(codeHash, EMPTY_CODE_HASH)) return undefined;
    const key = toHex(codeHash);
    const seen = used.get(key);
    if (seen) return { contract: seen, firstInTx: false };
    let contract = modules.get(key)?.contract;
    if (!contract) {
      const stored = state.instrumented(codeHash);
      if (!stored) return undefined;
      contract = compileContract(stored);
      modules.set(key, { contract, bytes: stored.length });
    }
    used.set(key, contract);
    return { contract, firstInTx: true };
  };
}

/** Empties the compiled-module cache (tests use it to prove results do not depend on it). */
export function clearModuleCache(): void {
  modules.clear();
}

/** Size of the compiled-module cache, for the cache gauges. */
export function moduleCacheStats(): CacheStats {
  return modules.stats();
}

/** Runs a deployment or call on `state`. Moves `value`, never touches the sender's nonce or fee (the chain does). A failed run reverts its state changes. */
export function runContractTx(state: StateView, ctx: ContractTxContext): ContractTxResult {
  const empty = new Uint8Array(0);
  const fail = (gasUsed: bigint, error: string, contract: string | null = null, returnData: Uint8Array = empty): ContractTxResult => ({
    status: 0,
    gasUsed,
    contractAddress: contract,
    returnData,
    logs: [],
    error,
  });
  const intrinsic = intrinsicGas(ctx.to, ctx.data);
  if (ctx.gasLimit < intrinsic) return fail(ctx.gasLimit, `intrinsic gas too low: gas limit ${ctx.gasLimit} < ${intrinsic}`);
  let deploy: { code: Uint8Array; args: Uint8Array } | undefined;
  try {
    if (ctx.to === null) deploy = splitDeployData(ctx.data);
  } catch (err) {
    // Refused at admission; in a block it costs its intrinsic gas (every byte of its data), no more.
    if (err instanceof ContractModuleError) return fail(intrinsic, err.message);
    throw err;
  }
  if (state.account(ctx.from).balance < ctx.value) return fail(intrinsic, 'insufficient balance for value');

  const run: TxRun = { state, blockNumber: ctx.blockNumber, timestampMs: ctx.timestampMs, logs: [], stack: [] };
  const cp = state.checkpoint();
  let address: string;
  let input: Uint8Array;
  let method = '';
  if (deploy) {
    let stored: Uint8Array;
    try {
      stored = prepareModule(deploy.code).stored;
    } catch (err) {
      if (err instanceof ContractModuleError) return fail(intrinsic, err.message);
      throw err;
    }
    address = contractAddress(ctx.from, ctx.nonce);
    const existing = state.account(address);
    if (existing.nonce > 0n || !bytesEqual(existing.codeHash, EMPTY_CODE_HASH)) return fail(intrinsic, `contract address ${address} is already in use`, address);
    state.setCode(address, deploy.code, stored);
    input = deploy.args;
  } else {
    address = ctx.to!;
    input = ctx.data;
  }
  if (ctx.value > 0n) {
    state.addBalance(ctx.from, -ctx.value);
    state.addBalance(address, ctx.value);
  }
  const contract = deploy ? address : null;
  if (!deploy) {
    // A plain transfer, or value sent to a contract with no data: nothing runs.
    if (input.length === 0 || bytesEqual(state.account(address).codeHash, EMPTY_CODE_HASH)) {
      return { status: 1, gasUsed: intrinsic, contractAddress: null, returnData: empty, logs: [] };
    }
    const parsed = splitCallData(input);
    if (!parsed) {
      state.revertTo(cp);
      return fail(intrinsic, 'malformed call data: expected u8 method length (1..64), method name, arguments');
    }
    method = parsed.method;
    input = parsed.args;
  }
  const budget = ctx.gasLimit - intrinsic;
  let result;
  try {
    result = runFrame(run, { address, caller: ctx.from, value: ctx.value, input, gas: budget, depthBase: 0, method, deploy: deploy !== undefined }, loader(state));
  } catch (err) {
    state.revertTo(cp);
    throw err;
  }
  if (result.outcome === 'ok') {
    return { status: 1, gasUsed: ctx.gasLimit - result.gasLeft, contractAddress: contract, returnData: result.returnData, logs: run.logs };
  }
  state.revertTo(cp);
  return fail(ctx.gasLimit - result.gasLeft, result.error ?? result.outcome, contract, result.returnData);
}
