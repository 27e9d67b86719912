/**
 * One contract frame at run time: instantiating the stored module, the host functions of
 * docs/contracts.md bound to the frame, gas accounting between the module's counter and the host,
 * and nested calls with their own journal checkpoints.
 */
import { bigintToBytesBE, bytesEqual, bytesToBigintBE, toHex } from '../core/codec/bytes.js';
import { VmError } from './errors.js';
import { sha3 } from '../core/crypto/hash.js';
import { verify } from '../core/crypto/mldsa.js';
import type { StateView } from './state.js';
import { DEPTH_EXPORT, GAS_EXPORT, START_EXPORT } from './instrument.js';
import {
  BALANCE_GAS,
  CALL_GAS,
  CALL_VALUE_GAS,
  compileGas,
  hostCopyGas,
  HOST_BASE_GAS,
  HOST_CALL_SLOTS,
  type InstanceShape,
  instantiationGas,
  LOG_BYTE_GAS,
  LOG_GAS,
  LOG_TOPIC_GAS,
  MAX_CALL_DEPTH,
  MAX_LOG_DATA_BYTES,
  MAX_LOG_TOPICS,
  MAX_RETURN_BYTES,
  MAX_REVERT_REASON_BYTES,
  MLDSA_VERIFY_GAS,
  REVERT_BYTE_GAS,
  SHA3_GAS,
  SHA3_WORD_GAS,
  STORAGE_READ_GAS,
  STORAGE_REMOVE_GAS,
  STORAGE_WRITE_GAS,
  TRANSFER_GAS,
} from './schedule.js';
import { entryPoints, HOST_MODULE, INIT_EXPORT } from './validate.js';
import { countElements, dataTotals, I64, parseModule, type WasmModule } from './wasm.js';

/** SHA3-256 of empty code: the code hash of an account without code. */
export const EMPTY_CODE_HASH = sha3(new Uint8Array(0));

const PUBLIC_KEY_LEN = 1952;
const SIGNATURE_LEN = 3309;

/** One log as the VM emits it. */
export interface VmLog {
  address: string;
  topics: Uint8Array[];
  data: Uint8Array;
}

/** How a frame ended. */
export type FrameOutcome = 'ok' | 'revert' | 'out-of-gas' | 'depth' | 'trap';

/** A frame's result. */
export interface FrameResult {
  outcome: FrameOutcome;
  gasLeft: bigint;
  returnData: Uint8Array;
  error?: string;
}

/** Block context and the shared, per-transaction bookkeeping of nested frames. */
export interface TxRun {
  state: StateView;
  blockNumber: number;
  timestampMs: number;
  logs: VmLog[];
  /** Contracts on the call stack, outermost first (the re-entrancy rule refuses these). */
  stack: string[];
}

/** Loads a code hash's compiled module; `firstInTx` when this transaction has not loaded it before (it pays the compilation). */
export type ContractLoader = (codeHash: Uint8Array) => { contract: CompiledContract; firstInTx: boolean } | undefined;

/** What a frame runs. */
export interface FrameCall {
  address: string;
  caller: string;
  value: bigint;
  input: Uint8Array;
  gas: bigint;
  /** The depth counter's starting value: the native-stack slots already used below this frame. */
  depthBase: number;
  /** The export a call runs after the start function (ignored for a deployment). */
  method: string;
  /** A deployment: runs `init` (if exported) instead of a method. */
  deploy: boolean;
}

/** A compiled module and what the VM needs to know about its exports. */
export interface CompiledContract {
  module: WebAssembly.Module;
  /** Exports callable by a transaction: `() -> ()` functions not starting with `_`, not `init`. */
  callable: ReadonlySet<string>;
  hasInit: boolean;
  hasStart: boolean;
  /** Gas of each instantiation, from what the module allocates and initialises. */
  instantiationGas: bigint;
  /** Gas of compiling it, paid by a transaction's first frame of this code. */
  compileGas: bigint;
}

/** What instantiating `m` allocates and initialises. */
export function instanceShape(m: WasmModule): InstanceShape {
  const data = m.data ? dataTotals(m.data) : { segments: 0, bytes: 0 };
  const i64Globals = m.globals.filter((g) => g.type === I64).length;
  return {
    pages: m.memories[0]?.min ?? 0,
    dataSegments: data.segments,
    dataBytes: data.bytes,
    tableEntries: m.tables.reduce((n, t) => n + t.limits.min, 0),
    elementEntries: m.elements ? countElements(m.elements) : 0,
    i32Globals: m.globals.length - i64Globals,
    i64Globals,
  };
}

/** Compiles a stored (instrumented) module, indexes its exports and prices its instantiation. */
export function compileContract(instrumented: Uint8Array): CompiledContract {
  const m = parseModule(instrumented);
  const { callable, hasInit } = entryPoints(m);
  const hasStart = m.exports.some((e) => e.kind === 0 && e.name === START_EXPORT);
  return {
    module: new WebAssembly.Module(instrumented),
    callable: new Set(callable),
    hasInit,
    hasStart,
    instantiationGas: instantiationGas(instanceShape(m)),
    compileGas: compileGas(instrumented.length),
  };
}

/**
 * The engine ran out of a machine resource (native stack, memory) while running a contract. The
 * outcome would differ between nodes, so it is not a receipt: the block (or call) fails here and
 * can be retried.
 */
export class VmResourceError extends VmError<'VM_RESOURCE_EXHAUSTED'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('VM_RESOURCE_EXHAUSTED', `contract execution exhausted a machine resource: ${message}`, options);
  }
}

/** Internal signals that unwind a frame through the engine; never seen outside the VM. */
class OutOfGas extends VmError<'VM_OUT_OF_GAS'> {
  constructor() {
    super('VM_OUT_OF_GAS', 'out of gas');
  }
}
class Revert extends VmError<'VM_REVERT'> {
  constructor(readonly reason: Uint8Array) {
    super('VM_REVERT', 'revert');
  }
}
class HostTrap extends VmError<'VM_HOST_TRAP'> {
  constructor(message: string) {
    super('VM_HOST_TRAP', message);
  }
}

/** Splits call data `u8 method_len ‖ method ‖ args`; undefined when it does not parse. */
export function splitCallData(data: Uint8Array): { method: string; args: Uint8Array } | undefined {
  const len = data[0];
  if (len === undefined || len < 1 || len > 64 || data.length < 1 + len) return undefined;
  const name = data.subarray(1, 1 + len);
  for (const b of name) if (b < 0x21 || b > 0x7e) return undefined;
  return { method: String.fromCharCode(...name), args: data.subarray(1 + len) };
}

/** Everything a frame's host functions touch. */
interface FrameState {
  call: FrameCall;
  memory?: WebAssembly.Memory;
  gas?: WebAssembly.Global;
  depth?: WebAssembly.Global;
  returnData: Uint8Array;
  /** The last nested call's return data (or revert reason). */
  lastReturn: Uint8Array;
}

/** Runs one frame to completion; never throws for anything the contract did. */
export function runFrame(run: TxRun, call: FrameCall, load: ContractLoader): FrameResult {
  const codeHash = run.state.account(call.address).codeHash;
  const loaded = load(codeHash);
  if (!loaded) return { outcome: 'trap', gasLeft: 0n, returnData: new Uint8Array(0), error: 'no code at the called address' };
  const compiled = loaded.contract;
  const outOfGas: FrameResult = { outcome: 'out-of-gas', gasLeft: 0n, returnData: new Uint8Array(0), error: 'out of gas' };
  let gas = call.gas;
  if (loaded.firstInTx) {
    if (gas < compiled.compileGas) return outOfGas;
    gas -= compiled.compileGas;
  }
  if (!call.deploy && !compiled.callable.has(call.method)) {
    // The reason is the return data, as for a contract's own revert, so a calling contract can read it.
    const reason = `no callable method ${call.method}`;
    return { outcome: 'revert', gasLeft: gas, returnData: new TextEncoder().encode(reason), error: `revert: ${reason}` };
  }
  // Charged before the engine allocates anything, so gas bounds the work of a frame that cannot pay.
  if (gas < compiled.instantiationGas) return outOfGas;
  gas -= compiled.instantiationGas;
  const f: FrameState = { call, returnData: new Uint8Array(0), lastReturn: new Uint8Array(0) };
  run.stack.push(call.address);
  try {
    const instance = new WebAssembly.Instance(compiled.module, { [HOST_MODULE]: hostFunctions(run, f, load) });
    const ex = instance.exports;
    f.memory = ex.memory as WebAssembly.Memory;
    f.gas = ex[GAS_EXPORT] as WebAssembly.Global;
    f.depth = ex[DEPTH_EXPORT] as WebAssembly.Global;
    f.gas.value = gas;
    f.depth.value = call.depthBase;
    if (compiled.hasStart) (ex[START_EXPORT] as () => void)();
    if (!call.deploy) (ex[call.method] as () => void)();
    else if (compiled.hasInit) (ex[INIT_EXPORT] as () => void)();
    return { outcome: 'ok', gasLeft: f.gas.value as bigint, returnData: f.returnData };
  } catch (err) {
    return failure(err, f);
  } finally {
    run.stack.pop();
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A revert reason as receipt text: the UTF-8 string when it is printable text, otherwise `0x` hex
 * of the bytes (a binary or control-laden reason would otherwise grow sixfold as JSON escapes and
 * lose bytes to replacement characters). Either way at most 2 characters per reason byte.
 */
export function reasonText(reason: Uint8Array): string {
  let text: string;
  try {
    text = STRICT_UTF8.decode(reason);
  } catch {
    return toHex(reason);
  }
  // C0 controls but tab and newline, DEL, and C1 controls: JSON escapes them as \u00XX.
  return /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text) ? toHex(reason) : text;
}

function failure(err: unknown, f: FrameState): FrameResult {
  const empty = new Uint8Array(0);
  if (err instanceof VmResourceError) throw err;
  if (err instanceof Revert) {
    return { outcome: 'revert', gasLeft: (f.gas?.value as bigint | undefined) ?? 0n, returnData: err.reason, error: `revert: ${reasonText(err.reason)}` };
  }
  if (err instanceof OutOfGas || f.gas?.value === -1n) return { outcome: 'out-of-gas', gasLeft: 0n, returnData: empty, error: 'out of gas' };
  if (f.depth?.value === -1) return { outcome: 'depth', gasLeft: 0n, returnData: empty, error: 'call depth exceeded' };
  if (err instanceof HostTrap) return { outcome: 'trap', gasLeft: 0n, returnData: empty, error: `trap: ${err.message}` };
  if (err instanceof WebAssembly.RuntimeError || err instanceof WebAssembly.LinkError) {
    return { outcome: 'trap', gasLeft: 0n, returnData: empty, error: `trap: ${err.message}` };
  }
  // V8's own stack limit or a failed memory allocation: neither is deterministic (the injected
  // depth budget is set to trip first), so no receipt may record it; the whole run fails instead.
  if (err instanceof RangeError) throw new VmResourceError(err.message, { cause: err });
  throw err;
}

function hostFunctions(run: TxRun, f: FrameState, load: ContractLoader): Record<string, (...args: never[]) => unknown> {
  const state = run.state;
  const self = f.call.address;
  const charge = (cost: bigint): void => {
    const g = f.gas!.value as bigint;
    if (g < cost) {
      f.gas!.value = -1n;
      throw new OutOfGas();
    }
    f.gas!.value = g - cost;
  };
  const mem = (ptr: number, len: number): Uint8Array => {
    const buf = f.memory!.buffer;
    const p = ptr >>> 0;
    const n = len >>> 0;
    if (p + n > buf.byteLength) throw new HostTrap(`memory access out of bounds (${p} + ${n} > ${buf.byteLength})`);
    return new Uint8Array(buf, p, n);
  };
  const read = (ptr: number, len: number): Uint8Array => mem(ptr, len).slice();
  const write = (ptr: number, bytes: Uint8Array): void => mem(ptr, bytes.length).set(bytes);
  const address = (ptr: number): string => toHex(mem(ptr, 20));
  const u256 = (ptr: number): bigint => bytesToBigintBE(mem(ptr, 32));

  return {
    input_size: () => {
      charge(HOST_BASE_GAS);
      return f.call.input.length;
    },
    input_copy: (ptr: number) => {
      charge(HOST_BASE_GAS + hostCopyGas(f.call.input.length));
      write(ptr, f.call.input);
    },
    storage_read: (keyPtr: number, outPtr: number) => {
      charge(STORAGE_READ_GAS);
      const value = state.storage(self, read(keyPtr, 32));
      write(outPtr, value);
      return value.some((b) => b !== 0) ? 1 : 0;
    },
    storage_write: (keyPtr: number, valPtr: number) => {
      charge(STORAGE_WRITE_GAS);
      state.setStorage(self, read(keyPtr, 32), read(valPtr, 32));
    },
    storage_remove: (keyPtr: number) => {
      charge(STORAGE_REMOVE_GAS);
      state.setStorage(self, read(keyPtr, 32), new Uint8Array(32));
    },
    caller: (ptr: number) => {
      charge(HOST_BASE_GAS);
      write(ptr, Buffer.from(f.call.caller.slice(2), 'hex'));
    },
    self_address: (ptr: number) => {
      charge(HOST_BASE_GAS);
      write(ptr, Buffer.from(self.slice(2), 'hex'));
    },
    call_value: (ptr: number) => {
      charge(HOST_BASE_GAS);
      write(ptr, bigintToBytesBE(f.call.value, 32));
    },
    block_number: () => {
      charge(HOST_BASE_GAS);
      return BigInt(run.blockNumber);
    },
    block_timestamp: () => {
      charge(HOST_BASE_GAS);
      return BigInt(run.timestampMs);
    },
    balance: (addrPtr: number, outPtr: number) => {
      charge(BALANCE_GAS);
      write(outPtr, bigintToBytesBE(state.account(address(addrPtr)).balance, 32));
    },
    transfer: (addrPtr: number, amountPtr: number) => {
      charge(TRANSFER_GAS);
      const to = address(addrPtr);
      const amount = u256(amountPtr);
      if (state.account(self).balance < amount) return 1;
      state.addBalance(self, -amount);
      state.addBalance(to, amount);
      return 0;
    },
    call: (addrPtr: number, inputPtr: number, inputLen: number, valuePtr: number, gas: bigint) => {
      const value = u256(valuePtr);
      charge(CALL_GAS + (value > 0n ? CALL_VALUE_GAS : 0n) + hostCopyGas(inputLen >>> 0));
      const to = address(addrPtr);
      const input = read(inputPtr, inputLen);
      f.lastReturn = new Uint8Array(0);
      if (run.stack.length >= MAX_CALL_DEPTH || run.stack.includes(to)) return 0;
      const cp = state.checkpoint();
      const logMark = run.logs.length;
      const undo = (): number => {
        state.revertTo(cp);
        run.logs.length = logMark;
        return 0;
      };
      if (value > 0n) {
        if (state.account(self).balance < value) return undo();
        state.addBalance(self, -value);
        state.addBalance(to, value);
      }
      if (input.length === 0 || bytesEqual(state.account(to).codeHash, EMPTY_CODE_HASH)) return 1;
      const parsed = splitCallData(input);
      if (!parsed) return undo();
      // EIP-150's rule: a caller always keeps 1/64 of its gas, so it can act on a failed callee.
      const available = f.gas!.value as bigint;
      const cap = available - available / 64n;
      const forward = gas > 0n && gas < cap ? gas : cap;
      f.gas!.value = available - forward;
      const depthBase = (f.depth!.value as number) + HOST_CALL_SLOTS;
      const result = runFrame(run, { address: to, caller: self, value, input: parsed.args, gas: forward, depthBase, method: parsed.method, deploy: false }, load);
      f.gas!.value = (f.gas!.value as bigint) + result.gasLeft;
      f.lastReturn = result.returnData;
      return result.outcome === 'ok' ? 1 : undo();
    },
    return_data_size: () => {
      charge(HOST_BASE_GAS);
      return f.lastReturn.length;
    },
    return_data_copy: (ptr: number) => {
      charge(HOST_BASE_GAS + hostCopyGas(f.lastReturn.length));
      write(ptr, f.lastReturn);
    },
    emit_log: (topicsPtr: number, topicCount: number, dataPtr: number, dataLen: number) => {
      const count = topicCount >>> 0;
      const len = dataLen >>> 0;
      if (count > MAX_LOG_TOPICS) throw new HostTrap(`a log has at most ${MAX_LOG_TOPICS} topics, got ${count}`);
      if (len > MAX_LOG_DATA_BYTES) throw new HostTrap(`log data is at most ${MAX_LOG_DATA_BYTES} bytes, got ${len}`);
      charge(LOG_GAS + LOG_TOPIC_GAS * BigInt(count) + LOG_BYTE_GAS * BigInt(len));
      const raw = read(topicsPtr, 32 * count);
      const topics = Array.from({ length: count }, (_, i) => raw.slice(32 * i, 32 * i + 32));
      run.logs.push({ address: self, topics, data: read(dataPtr, len) });
    },
    set_return: (ptr: number, len: number) => {
      const n = len >>> 0;
      if (n > MAX_RETURN_BYTES) throw new HostTrap(`return data is at most ${MAX_RETURN_BYTES} bytes, got ${n}`);
      charge(HOST_BASE_GAS + hostCopyGas(n));
      f.returnData = read(ptr, n);
    },
    revert: (ptr: number, len: number) => {
      const n = Math.min(len >>> 0, MAX_REVERT_REASON_BYTES);
      charge(HOST_BASE_GAS + REVERT_BYTE_GAS * BigInt(n));
      throw new Revert(read(ptr, n));
    },
    sha3: (ptr: number, len: number, outPtr: number) => {
      charge(SHA3_GAS + SHA3_WORD_GAS * BigInt(Math.ceil((len >>> 0) / 32)));
      // SHA3-256 of nothing is the empty code hash; hashing a zero-length view of the memory was the slowest call measured.
      const n = len >>> 0;
      write(outPtr, n === 0 ? EMPTY_CODE_HASH : sha3(mem(ptr, n)));
    },
    mldsa_verify: (pkPtr: number, msgPtr: number, msgLen: number, sigPtr: number) => {
      charge(MLDSA_VERIFY_GAS + hostCopyGas(msgLen >>> 0));
      const ok = verify(read(pkPtr, PUBLIC_KEY_LEN), read(msgPtr, msgLen), read(sigPtr, SIGNATURE_LEN));
      return ok ? 1 : 0;
    },
    gas_left: () => {
      charge(HOST_BASE_GAS);
      return f.gas!.value as bigint;
    },
  };
}
