/**
 * Compiles an AssemblyScript contract to a WebAssembly module the VM accepts: the SDK importable
 * as "svc-sdk" from a file anywhere on disk, a runtime without a start function, AssemblyScript's
 * abort routed to svc.revert, size-optimised (deployment costs gas per byte), and the result
 * checked by the VM's own deployment check (prepareModule, src/vm/prepare.ts, through the public
 * src/vm/check.ts), so the build and a deployment can never disagree on what is accepted.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SvcError } from '../core/errors.js';
import { type ContractErrorCode, ContractModuleError, entryPoints, MAX_MEMORY_PAGES, type PreparedModule, prepareModule } from '../vm/check.js';

/** The part of AssemblyScript's compiler API (assemblyscript/asc) this module uses. */
interface AscDiagnostic {
  code: number;
  category: number;
  message: string;
  range: { start: number; source: { normalizedPath: string } } | null;
}
interface AscStream {
  write(chunk: Uint8Array | string): void;
}
interface AscApi {
  main(
    argv: string[],
    options: {
      stdout: AscStream;
      stderr: AscStream;
      readFile: (filename: string, baseDir: string) => Promise<string | null>;
      writeFile: (filename: string, contents: Uint8Array | string, baseDir: string) => void;
      listFiles: (dirname: string, baseDir: string) => string[] | null;
      reportDiagnostic: (d: AscDiagnostic) => void;
    },
  ): Promise<{ error: Error | null }>;
  createMemoryStream(): AscStream;
  libraryFiles: Record<string, string>;
}

// Loaded on first use, through a specifier TypeScript does not resolve: the compiler's bundled
// typings declare AssemblyScript's own globals (console among them), which would leak into the
// whole project's type check.
const ASC_MODULE: string = 'assemblyscript/asc';
let ascLoaded: Promise<AscApi> | null = null;
function loadAsc(): Promise<AscApi> {
  ascLoaded ??= import(ASC_MODULE).then((m: { default: AscApi }) => m.default);
  return ascLoaded;
}

/** The module name contracts import the SDK by: `import { Storage } from "svc-sdk"`. */
export const SDK_MODULE = 'svc-sdk';

/** The SDK's source folder (contracts/sdk at the repository root; this file is dist/src/contract/compile.js). */
export const SDK_DIR = fileURLToPath(new URL('../../../contracts/sdk', import.meta.url));

// AssemblyScript resolves a package import "svc-sdk" as <path>/svc-sdk/<file>.ts for each --path
// entry; this directory does not exist, the file reader below maps it onto SDK_DIR. That lets a
// contract anywhere on disk import the SDK without a node_modules folder or a copy of it.
const VIRTUAL_PACKAGES = resolve(sep, '__svc_contract_packages__');
const VIRTUAL_SDK = `${VIRTUAL_PACKAGES}${sep}${SDK_MODULE}${sep}`;

/** One compiler diagnostic, located in its source. */
export interface CompileDiagnostic {
  /** "error", "warning" or "info". */
  severity: 'error' | 'warning' | 'info';
  /** The compiler's code, e.g. 2304 ("Cannot find name"). */
  code: number;
  message: string;
  /** File as the user knows it (relative to the current directory), SDK files as ~lib/svc-sdk/…; null if unlocated. */
  file: string | null;
  line: number | null;
  column: number | null;
}

/** A compiled contract and what it exposes. */
export interface CompiledContract {
  wasm: Uint8Array;
  /** Methods a transaction or eth_call can invoke: exported `() -> void` functions not starting with "_", without init. */
  methods: string[];
  /** Whether the module exports `init`, run once at deployment with the constructor arguments. */
  hasInit: boolean;
  /** Host functions the module imports (svc.* names). */
  imports: string[];
  /** Compiler warnings (the build succeeded). */
  warnings: CompileDiagnostic[];
}

/** The compiler refused the source; `diagnostics` are its errors. */
export class ContractCompileError extends SvcError {
  readonly diagnostics: CompileDiagnostic[];

  constructor(file: string, diagnostics: CompileDiagnostic[], detail?: string) {
    const shown = diagnostics.map(formatDiagnostic);
    super('COMPILE_FAILED', `${file} does not compile: ${shown.length > 0 ? shown.join('; ') : (detail ?? 'the compiler failed')}`);
    this.diagnostics = diagnostics;
  }
}

/** Machine code of the SDK's own rule on top of the VM's: no start function (see checkModule). */
export type SdkRuleCode = 'CONTRACT_START_FUNCTION';

/** The source compiled, but into a module the VM would refuse at deployment (the VM's code) or that breaks the SDK's rule. */
export class ContractRejectedError extends SvcError {
  constructor(code: ContractErrorCode | SdkRuleCode, message: string) {
    super(code, message);
  }
}

/** "file:line:col: message" (or just the message when unlocated), without the compiler's final period. */
export function formatDiagnostic(d: CompileDiagnostic): string {
  const message = d.message.replace(/\.$/, '');
  return d.file !== null ? `${d.file}:${d.line}:${d.column}: ${message}` : message;
}

// asc's category numbers (DiagnosticCategory: Pedantic, Info, Warning, Error).
const SEVERITY: Record<number, CompileDiagnostic['severity']> = { 0: 'info', 1: 'info', 2: 'warning', 3: 'error' };

/** Compiles `entryPath` (an AssemblyScript file) and checks the module against the host ABI. */
export async function compileContract(entryPath: string): Promise<CompiledContract> {
  const asc = await loadAsc();
  const entry = resolve(entryPath);
  const baseDir = dirname(entry);
  const shownEntry = displayPath(entry);
  installRuntime(asc, await readFile(resolve(SDK_DIR, 'runtime', 'stub.ts'), 'utf8'));

  const sources = new Map<string, string>();
  const diagnostics: CompileDiagnostic[] = [];
  const outName = basename(entry).replace(/\.ts$/, '') + '.wasm';
  let wasm: Uint8Array | null = null;

  const sourceOf = (normalizedPath: string): { text: string | undefined; shown: string } => {
    if (normalizedPath.startsWith(`~lib/${SDK_MODULE}/`)) {
      return { text: sources.get(resolve(SDK_DIR, normalizedPath.slice(`~lib/${SDK_MODULE}/`.length))), shown: normalizedPath };
    }
    if (normalizedPath.startsWith('~lib/')) return { text: asc.libraryFiles[normalizedPath.slice(5).replace(/\.ts$/, '')], shown: normalizedPath };
    const abs = resolve(baseDir, normalizedPath);
    return { text: sources.get(abs), shown: displayPath(abs) };
  };

  const result = await asc.main(
    [
      basename(entry),
      '--baseDir', baseDir,
      '--outFile', outName,
      '--runtime', 'stub',
      '--optimizeLevel', '3',
      '--shrinkLevel', '2',
      // The VM's cap, declared as the memory's maximum: growing past it fails inside the contract.
      '--maximumMemory', String(MAX_MEMORY_PAGES),
      // Bulk-memory instructions copy or fill a caller-chosen length in one instruction; without
      // them every byte goes through metered code, so gas follows the work.
      '--disable', 'bulk-memory',
      '--use', `abort=~lib/${SDK_MODULE}/env/svcAbort`,
      '--path', VIRTUAL_PACKAGES,
      '--noColors',
    ],
    {
      stdout: asc.createMemoryStream(),
      stderr: asc.createMemoryStream(),
      readFile: async (filename: string, dir: string) => {
        const abs = resolve(dir, filename);
        const real = abs.startsWith(VIRTUAL_SDK) ? resolve(SDK_DIR, abs.slice(VIRTUAL_SDK.length)) : abs;
        try {
          const text = await readFile(real, 'utf8');
          sources.set(real, text);
          return text;
        } catch {
          return null;
        }
      },
      writeFile: (filename: string, contents: Uint8Array | string) => {
        if (filename === outName && typeof contents !== 'string') wasm = contents;
      },
      listFiles: () => [],
      reportDiagnostic: (d) => {
        const at = d.range ? sourceOf(d.range.source.normalizedPath) : null;
        const pos = at?.text !== undefined && d.range ? lineColumn(at.text, d.range.start) : null;
        diagnostics.push({
          severity: SEVERITY[d.category] ?? 'error',
          code: d.code,
          message: d.message,
          file: at ? at.shown : null,
          line: pos ? pos.line : null,
          column: pos ? pos.column : null,
        });
      },
    },
  );
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (result.error || errors.length > 0 || wasm === null) {
    if (!sources.has(entry)) throw new SvcError('FILE_NOT_FOUND', `${shownEntry} not found`);
    throw new ContractCompileError(shownEntry, errors, result.error?.message);
  }
  const compiled: Uint8Array = wasm;
  return { ...checkModule(shownEntry, compiled), wasm: compiled, warnings: diagnostics.filter((d) => d.severity === 'warning') };
}

// What to do about a refusal, by the VM's rule; the VM's message says what is wrong.
const HINTS: Partial<Record<ContractErrorCode, string>> = {
  CONTRACT_FLOAT: 'float results may differ across machines, use integer types (i32, u64, U256)',
  CONTRACT_FORBIDDEN_IMPORT: 'contracts import only the svc host functions of contracts/sdk (Math.random, Date, console and trace are not available)',
  CONTRACT_MODULE_TOO_LARGE: 'deployment costs gas per byte; split the contract or drop unused code',
};

/** Checks a compiled module with the VM's deployment check, then the SDK's rule; returns its methods and imports. */
export function checkModule(shown: string, wasm: Uint8Array): { methods: string[]; hasInit: boolean; imports: string[] } {
  let prepared: PreparedModule;
  try {
    prepared = prepareModule(wasm);
  } catch (err) {
    if (!(err instanceof ContractModuleError)) throw err;
    const code = err.code as ContractErrorCode;
    const hint = HINTS[code];
    throw new ContractRejectedError(code, `${shown} would be refused at deployment: ${err.message}${hint ? `; ${hint}` : ''}`);
  }
  const m = prepared.module;
  // The VM meters a start function, but it runs at the top of every call (each call starts a
  // fresh instance) and its values do not persist: top-level state that looks durable is not.
  // The SDK's runtime needs none, so one only appears for a module-level computed value.
  if (m.start !== undefined) {
    throw new ContractRejectedError(
      'CONTRACT_START_FUNCTION',
      `${shown} needs a start function (a module-level variable with a computed initial value): it would rerun, and be charged, at the start of every call, and nothing but storage persists between calls; compute the value inside a function`,
    );
  }
  const { callable, hasInit } = entryPoints(m);
  return { methods: callable, hasInit, imports: m.imports.map((i) => i.name).sort() };
}

// The stock stub runtime sets its heap start from a start function; ours computes it on first
// use. asc resolves ~lib/rt/stub from this shared table, so the replacement is installed there
// (idempotent: the same text every time).
function installRuntime(asc: AscApi, text: string): void {
  asc.libraryFiles['rt/stub'] = text;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function displayPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel.startsWith('..') || rel === '' ? abs : rel;
}
