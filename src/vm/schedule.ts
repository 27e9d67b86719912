/**
 * The VM's limits and gas schedule, named once (docs/contracts.md prints the same table). The
 * spec fixes deployment, storage-write and ML-DSA figures; the rest follows Ethereum's relative
 * prices so that one gas is roughly one cheap WebAssembly instruction.
 */
import { DEPLOY_BASE_GAS, DEPLOY_BYTE_GAS, DILITHIUM_VERIFY_GAS, STORAGE_WRITE_GAS, TX_BASE_GAS } from '../core/constants.js';

export { DEPLOY_BASE_GAS, DEPLOY_BYTE_GAS, TX_BASE_GAS };

/** Largest deployable module, bytes (its deployment gas, 32,000 + 200 × 65,536, fits a block). */
export const MAX_CODE_BYTES = 65_536;
/** Memory cap in 64 KiB pages; a memory declared without a maximum gets this one. */
export const MAX_MEMORY_PAGES = 32;
/** Most functions (imported + defined) one module may have. */
export const MAX_FUNCTIONS = 4_096;
/** Most locals (parameters included) one function may declare. */
export const MAX_LOCALS = 1_024;
/** Most globals one module may define. */
export const MAX_GLOBALS = 1_024;
/** Largest table (entries) and the most element-segment entries in total. */
export const MAX_TABLE_ENTRIES = 4_096;
/** Most types, exports and data segments. */
export const MAX_TYPES = 1_024;
export const MAX_EXPORTS = 1_024;
export const MAX_DATA_SEGMENTS = 1_024;
/** Deepest block nesting inside one function (keeps the rewrite's own recursion bounded). */
export const MAX_NESTING = 1_024;

/**
 * Native-stack budget shared by every contract frame of one transaction, in slots of 8 bytes.
 * Each function frame costs FRAME_BASE_SLOTS + params + locals + its operand stack's maximum
 * height (+ the injected code's few values); a nested contract call costs HOST_CALL_SLOTS for the
 * JavaScript frames between the two modules. Measured on Node 20 (V8 11, Liftoff frames, the
 * larger tier): a frame takes about 48 bytes plus 8 per local or stack value, so 32,768 slots is
 * about 256 KiB of a ~984 KiB stack, and the injected limit always trips before V8's
 * (test/vm/depth.test.ts recurses with small and large frames and across contracts).
 */
export const STACK_BUDGET_SLOTS = 32_768;
export const FRAME_BASE_SLOTS = 8;
export const HOST_CALL_SLOTS = 256;
/** Contract-to-contract call depth (the top-level call is depth 1). */
export const MAX_CALL_DEPTH = 64;

/** Gas of one instruction unless listed below. */
export const INSTRUCTION_GAS = 1n;
/** Calls (the callee's own instructions are charged separately). */
export const CALL_INSTRUCTION_GAS = 4n;
/** Integer division and remainder. */
export const DIV_GAS = 4n;
/** Per 64 KiB page added by memory.grow (charged whether or not the engine grants it). */
export const MEMORY_PAGE_GAS = 8_192n;
/** Per 32-byte word of memory.copy / memory.fill / memory.init, and of host copies in and out. */
export const COPY_WORD_GAS = 3n;

/**
 * Host functions (docs/contracts.md, Gas). Crossing from Liftoff-compiled WebAssembly into
 * JavaScript and back costs up to about 3 µs a call on a loaded two-core machine where an
 * instruction costs well under 1 ns, so even the cheapest host function is 500 gas (the abuse
 * table of `npm run bench -- --only vm` measures a block's worth of each pattern); state reads are
 * Ethereum's cold-access prices (EIP-2929), as a read may miss every cache.
 */
export const HOST_BASE_GAS = 500n;
/** Per 32-byte word a host function copies between the contract's memory and JavaScript (a fresh buffer each time). */
export const HOST_COPY_WORD_GAS = 24n;
export const STORAGE_READ_GAS = 2_100n;
export { STORAGE_WRITE_GAS };
export const STORAGE_REMOVE_GAS = 5_000n;
export const BALANCE_GAS = 2_600n;
export const TRANSFER_GAS = 9_000n;
/** A nested call's own work (journal checkpoint, call-data parsing, the frame); the callee's compilation and instantiation are charged on top (above). */
export const CALL_GAS = 5_000n;
export const CALL_VALUE_GAS = 9_000n;
/**
 * Logs are priced by the receipt bytes they add, at least RECEIPT_BYTE_GAS a byte, so a block's
 * receipts stay bounded (docs/contracts.md, Limits): a log's JSON in a receipt is at most
 * LOG_JSON_BYTES plus LOG_TOPIC_JSON_BYTES a topic and 2 a data byte (hex); the log index keeps
 * two more copies, which the per-log price also covers.
 */
export const RECEIPT_BYTE_GAS = 30n;
export const LOG_JSON_BYTES = 330;
export const LOG_TOPIC_JSON_BYTES = 69;
export const LOG_GAS = 20_000n;
export const LOG_TOPIC_GAS = 2_100n;
export const LOG_BYTE_GAS = 64n;
/** Node's SHA3-256 costs a few µs a call however short the input, and 6 to 30 ns a byte under load. */
export const SHA3_GAS = 1_500n;
export const SHA3_WORD_GAS = 100n;
export const MLDSA_VERIFY_GAS = DILITHIUM_VERIFY_GAS;
/** Most topics of one log, bytes of one log's data, bytes of return data or revert reason. */
export const MAX_LOG_TOPICS = 4;
export const MAX_LOG_DATA_BYTES = 65_536;
export const MAX_RETURN_BYTES = 65_536;
/**
 * Most bytes of a revert reason (also the return data a caller reads after it): longer reasons are
 * cut to this, so a receipt's `error` stays a few KB however much memory a contract hands `revert`.
 */
export const MAX_REVERT_REASON_BYTES = 1_024;
/** Per kept byte of a revert reason: it goes into the receipt as text or hex, like log data. */
export const REVERT_BYTE_GAS = LOG_BYTE_GAS;

/**
 * Instantiation (every frame: the top-level call, each nested call and a deployment's `init`
 * frame), charged before the engine instantiates, from the stored module alone so that every node
 * charges the same whether its compiled-module cache holds the code or not. Measured on Node 20
 * (docs/contracts.md, "Gas schedule: how each price was measured"): a bare instance about 10 µs,
 * a page of initial memory about 6 µs (the same price as a page memory.grow adds), an active data
 * segment about 0.1 µs plus its copy, a table entry 0.02 µs, an element-segment entry 0.1 µs, a
 * defined i32 global 0.03 µs and a defined i64 global up to 5 µs (V8 boxes them).
 */
export const INSTANCE_GAS = 2_000n;
export const DATA_SEGMENT_GAS = 20n;
export const TABLE_ENTRY_GAS = 5n;
export const ELEMENT_ENTRY_GAS = 20n;
export const I32_GLOBAL_GAS = 10n;
export const I64_GLOBAL_GAS = 1_000n;
/**
 * Compiling the stored module, per byte: charged on a code hash's first frame in a transaction
 * (later frames of the same transaction reuse that compilation, whatever the cache holds).
 */
export const COMPILE_BYTE_GAS = 10n;

/** What instantiating a module allocates and initialises (counted from the stored module). */
export interface InstanceShape {
  /** Initial memory pages. */
  pages: number;
  /** Active and passive data segments, and the bytes they hold. */
  dataSegments: number;
  dataBytes: number;
  /** Initial table size. */
  tableEntries: number;
  /** Entries of every element segment. */
  elementEntries: number;
  i32Globals: number;
  i64Globals: number;
}

/** Gas of one instantiation of a module of `shape`. */
export function instantiationGas(s: InstanceShape): bigint {
  return (
    INSTANCE_GAS +
    MEMORY_PAGE_GAS * BigInt(s.pages) +
    DATA_SEGMENT_GAS * BigInt(s.dataSegments) +
    copyGas(s.dataBytes) +
    TABLE_ENTRY_GAS * BigInt(s.tableEntries) +
    ELEMENT_ENTRY_GAS * BigInt(s.elementEntries) +
    I32_GLOBAL_GAS * BigInt(s.i32Globals) +
    I64_GLOBAL_GAS * BigInt(s.i64Globals)
  );
}

/** Gas of compiling a stored module of `bytes` bytes. */
export function compileGas(bytes: number): bigint {
  return COMPILE_BYTE_GAS * BigInt(bytes);
}

/** Gas of a host function copying `bytes` bytes in or out of the contract's memory. */
export function hostCopyGas(bytes: number): bigint {
  return HOST_COPY_WORD_GAS * BigInt(Math.ceil(bytes / 32));
}

/** Gas of copying `bytes` bytes (rounded up to whole words). */
export function copyGas(bytes: number): bigint {
  return COPY_WORD_GAS * BigInt(Math.ceil(bytes / 32));
}
