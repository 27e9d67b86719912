/**
 * Deployment-time validation: the static rules of docs/contracts.md (size, imports, one capped
 * memory, integer-only code, table and local limits, reserved export names). Every refusal is a
 * ContractModuleError whose code names the rule.
 */
import { checkValType, type DecodedBody, decodeBody } from './code.js';
import { type ContractErrorCode, ContractModuleError } from './errors.js';
import {
  MAX_CODE_BYTES,
  MAX_DATA_SEGMENTS,
  MAX_EXPORTS,
  MAX_FUNCTIONS,
  MAX_GLOBALS,
  MAX_LOCALS,
  MAX_MEMORY_PAGES,
  MAX_TABLE_ENTRIES,
  MAX_TYPES,
} from './schedule.js';
import { countData, countElements, FUNCREF, type FuncType, I32, I64, parseModule, type WasmModule } from './wasm.js';

/**
 * The host ABI (version 1): every import a contract may have, with its exact signature. A Map, not
 * an object literal: import names are the deployer's choice, and `constructor`, `__proto__` or
 * `toString` looked up on an object would find Object.prototype's members instead of nothing.
 */
export const HOST_SIGNATURES: ReadonlyMap<string, FuncType> = new Map(Object.entries({
  input_size: { params: [], results: [I32] },
  input_copy: { params: [I32], results: [] },
  storage_read: { params: [I32, I32], results: [I32] },
  storage_write: { params: [I32, I32], results: [] },
  storage_remove: { params: [I32], results: [] },
  caller: { params: [I32], results: [] },
  self_address: { params: [I32], results: [] },
  call_value: { params: [I32], results: [] },
  block_number: { params: [], results: [I64] },
  block_timestamp: { params: [], results: [I64] },
  balance: { params: [I32, I32], results: [] },
  transfer: { params: [I32, I32], results: [I32] },
  call: { params: [I32, I32, I32, I32, I64], results: [I32] },
  return_data_size: { params: [], results: [I32] },
  return_data_copy: { params: [I32], results: [] },
  emit_log: { params: [I32, I32, I32, I32], results: [] },
  set_return: { params: [I32, I32], results: [] },
  revert: { params: [I32, I32], results: [] },
  sha3: { params: [I32, I32, I32], results: [] },
  mldsa_verify: { params: [I32, I32, I32, I32], results: [I32] },
  gas_left: { params: [], results: [I64] },
} satisfies Record<string, FuncType>));

/** The only import module. */
export const HOST_MODULE = 'svc';
/** Export names the VM adds to the stored form; a deployed module may not use this prefix. */
export const RESERVED_EXPORT_PREFIX = '__svc';
/** The export a deployment runs, with the constructor arguments as input. */
export const INIT_EXPORT = 'init';

/** A module that passed validation, with its decoded bodies for the rewrite. */
export interface ValidatedModule {
  module: WasmModule;
  bodies: DecodedBody[];
}

function sameType(a: FuncType, b: FuncType): boolean {
  return a.params.length === b.params.length && a.results.length === b.results.length && a.params.every((p, i) => p === b.params[i]) && a.results.every((p, i) => p === b.results[i]);
}

function describe(t: FuncType): string {
  const name = (v: number): string => (v === I32 ? 'i32' : v === I64 ? 'i64' : `0x${v.toString(16)}`);
  return `(${t.params.map(name).join(', ')}) -> (${t.results.map(name).join(', ')})`;
}

function limit(ok: boolean, message: string): void {
  if (!ok) throw new ContractModuleError('CONTRACT_LIMIT', message);
}

/** Validates a contract module against every static rule; returns it decoded. */
export function validateModule(code: Uint8Array): ValidatedModule {
  if (code.length > MAX_CODE_BYTES) throw new ContractModuleError('CONTRACT_MODULE_TOO_LARGE', `module is ${code.length} bytes, over the ${MAX_CODE_BYTES}-byte limit`);
  const m = parseModule(code);
  limit(m.types.length <= MAX_TYPES, `more than ${MAX_TYPES} types`);
  m.types.forEach((t, i) => {
    for (const v of [...t.params, ...t.results]) checkValType(v, `type ${i}`);
  });
  for (const imp of m.imports) {
    const expected = imp.module === HOST_MODULE ? HOST_SIGNATURES.get(imp.name) : undefined;
    if (!expected) throw new ContractModuleError('CONTRACT_FORBIDDEN_IMPORT', `import ${imp.module}.${imp.name} is not allowed: only the host functions of module "${HOST_MODULE}" (docs/contracts.md) may be imported`);
    const got = m.types[imp.typeIndex];
    if (!got) throw new ContractModuleError('CONTRACT_MODULE_MALFORMED', `malformed module: import ${imp.name} has unknown type ${imp.typeIndex}`);
    if (!sameType(got, expected)) throw new ContractModuleError('CONTRACT_FORBIDDEN_IMPORT', `import svc.${imp.name} has signature ${describe(got)}, expected ${describe(expected)}`);
  }
  const funcCount = m.imports.length + m.functions.length;
  limit(funcCount <= MAX_FUNCTIONS, `${funcCount} functions, over the limit of ${MAX_FUNCTIONS}`);
  if (m.memories.length !== 1) throw new ContractModuleError('CONTRACT_MEMORY', `a contract must define exactly one memory, this module defines ${m.memories.length}`);
  const mem = m.memories[0]!;
  if (mem.min > MAX_MEMORY_PAGES) throw new ContractModuleError('CONTRACT_MEMORY', `memory starts at ${mem.min} pages, over the cap of ${MAX_MEMORY_PAGES}`);
  if (mem.max !== undefined && mem.max > MAX_MEMORY_PAGES) throw new ContractModuleError('CONTRACT_MEMORY', `memory maximum ${mem.max} pages is over the cap of ${MAX_MEMORY_PAGES}`);
  limit(m.tables.length <= 1, 'at most one table');
  for (const t of m.tables) {
    if (t.elemType !== FUNCREF) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', 'tables may only hold function references');
    limit(t.limits.min <= MAX_TABLE_ENTRIES && (t.limits.max ?? 0) <= MAX_TABLE_ENTRIES, `table larger than ${MAX_TABLE_ENTRIES} entries`);
  }
  if (m.elements) limit(countElements(m.elements) <= MAX_TABLE_ENTRIES, `more than ${MAX_TABLE_ENTRIES} element entries`);
  if (m.data) limit(countData(m.data) <= MAX_DATA_SEGMENTS, `more than ${MAX_DATA_SEGMENTS} data segments`);
  limit(m.globals.length <= MAX_GLOBALS, `more than ${MAX_GLOBALS} globals`);
  m.globals.forEach((g, i) => checkValType(g.type, `global ${i}`));
  limit(m.exports.length <= MAX_EXPORTS, `more than ${MAX_EXPORTS} exports`);
  for (const e of m.exports) {
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX)) throw new ContractModuleError('CONTRACT_RESERVED_EXPORT', `export name ${e.name} uses the reserved prefix ${RESERVED_EXPORT_PREFIX}`);
    if (e.name === 'memory' && e.kind !== 2) throw new ContractModuleError('CONTRACT_MEMORY', 'the export named memory must be the memory');
  }
  if (m.start !== undefined) {
    const t = m.types[m.functions[m.start - m.imports.length] ?? -1];
    if (m.start < m.imports.length || !t || t.params.length || t.results.length) throw new ContractModuleError('CONTRACT_MODULE_MALFORMED', 'malformed module: the start function must be a defined () -> () function');
  }
  const funcTypes = [...m.imports.map((i) => i.typeIndex), ...m.functions];
  const ctx = { types: m.types, funcTypes, hasTable: m.tables.length > 0 };
  const bodies = m.bodies.map((body, i) => {
    const type = m.types[m.functions[i]!];
    if (!type) throw new ContractModuleError('CONTRACT_MODULE_MALFORMED', `malformed module: function ${i} has unknown type ${m.functions[i]}`);
    let locals = type.params.length;
    for (const [count, t] of body.locals) {
      checkValType(t, `the locals of function ${i + m.imports.length}`);
      locals += count;
    }
    limit(locals <= MAX_LOCALS, `function ${i + m.imports.length} has ${locals} locals, over the limit of ${MAX_LOCALS}`);
    try {
      return decodeBody(body.code, ctx, type.results.length);
    } catch (err) {
      // Name the function, so a contract's author can find the instruction (functions are numbered imports first, as tools print them).
      if (err instanceof ContractModuleError) throw new ContractModuleError(err.code as ContractErrorCode, `function ${i + m.imports.length}: ${err.message}`);
      throw err;
    }
  });
  // The engine's full check (operand types, indices) after ours, which gives the clearer messages.
  if (!WebAssembly.validate(code)) {
    let detail = 'the engine refuses it';
    try {
      new WebAssembly.Module(code);
    } catch (err) {
      detail = (err as Error).message;
    }
    throw new ContractModuleError('CONTRACT_MODULE_MALFORMED', `malformed module: ${detail}`);
  }
  return { module: m, bodies };
}

/** What a transaction can run in a module: callable methods (sorted) and whether `init` is exported. */
export interface EntryPoints {
  /** Exported `() -> ()` functions whose names do not start with `_` and are not `init`. */
  callable: string[];
  hasInit: boolean;
}

/** Lists a module's entry points by the calldata rule (docs/contracts.md, Calls). */
export function entryPoints(m: WasmModule): EntryPoints {
  const funcTypes = [...m.imports.map((i) => i.typeIndex), ...m.functions];
  const callable: string[] = [];
  let hasInit = false;
  for (const e of m.exports) {
    const t = e.kind === 0 ? m.types[funcTypes[e.index] ?? -1] : undefined;
    if (!t || t.params.length !== 0 || t.results.length !== 0) continue;
    if (e.name === INIT_EXPORT) hasInit = true;
    else if (!e.name.startsWith('_')) callable.push(e.name);
  }
  return { callable: callable.sort(), hasInit };
}
