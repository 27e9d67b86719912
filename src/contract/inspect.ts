/**
 * A small reader for compiled contract modules: imports and exports with their signatures, the
 * memories, whether there is a start function, and the first floating-point use. It reads only
 * what the build needs to explain a module the VM would refuse; the VM's own validator decides.
 */
import { SvcError } from '../core/errors.js';

/** A WebAssembly value type by name. */
export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'funcref' | 'externref';

/** A function signature. */
export interface FuncSig {
  params: ValType[];
  results: ValType[];
}

/** An import; `sig` is set for function imports. */
export interface WasmImport {
  module: string;
  name: string;
  kind: 'function' | 'table' | 'memory' | 'global';
  sig?: FuncSig;
}

/** An export; `sig` is set for function exports. */
export interface WasmExport {
  name: string;
  kind: 'function' | 'table' | 'memory' | 'global';
  sig?: FuncSig;
}

/** What `inspectWasm` found. */
export interface WasmSummary {
  imports: WasmImport[];
  exports: WasmExport[];
  /** Memories, imported ones first: initial and maximum size in 64 KiB pages. */
  memories: Array<{ min: number; max: number | null }>;
  hasStart: boolean;
  /** The first use of f32/f64 (a type, a local, a global or an instruction), or null if none. */
  float: string | null;
}

/** A module that does not parse as WebAssembly. */
export class WasmFormatError extends SvcError {
  constructor(detail: string) {
    super('MALFORMED_WASM', `not a valid WebAssembly module: ${detail}`, 400);
  }
}

const VALTYPES: Record<number, ValType> = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128', 0x70: 'funcref', 0x6f: 'externref' };
const KINDS = ['function', 'table', 'memory', 'global'] as const;
const isFloat = (t: ValType) => t === 'f32' || t === 'f64';

/** Byte cursor with LEB128 reads; every overrun is a WasmFormatError. */
class Reader {
  pos = 0;
  constructor(
    private readonly b: Uint8Array,
    readonly end = b.length,
  ) {}

  byte(): number {
    if (this.pos >= this.end) throw new WasmFormatError('unexpected end');
    return this.b[this.pos++]!;
  }

  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new WasmFormatError('LEB128 too long');
    }
  }

  /** Skips a signed or unsigned LEB128 of any width. */
  skipLeb(): void {
    while (this.byte() & 0x80);
  }

  skip(n: number): void {
    if (this.pos + n > this.end) throw new WasmFormatError('unexpected end');
    this.pos += n;
  }

  name(): string {
    const n = this.u32();
    this.skip(n);
    return new TextDecoder('utf-8', { fatal: true }).decode(this.b.subarray(this.pos - n, this.pos));
  }

  valtype(): ValType {
    const t = VALTYPES[this.byte()];
    if (!t) throw new WasmFormatError(`unknown value type at byte ${this.pos - 1}`);
    return t;
  }

  limits(): { min: number; max: number | null } {
    const flags = this.byte();
    const min = this.u32();
    return { min, max: flags & 1 ? this.u32() : null };
  }
}

/** Reads imports, exports, memories, the start section and any float use of a module. */
export function inspectWasm(bytes: Uint8Array): WasmSummary {
  const r = new Reader(bytes);
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  for (const m of magic) if (r.byte() !== m) throw new WasmFormatError('bad magic or version');
  const types: FuncSig[] = [];
  const funcTypes: number[] = []; // imported functions first, then defined ones
  const out: WasmSummary = { imports: [], exports: [], memories: [], hasStart: false, float: null };
  const noteFloat = (what: string) => (out.float ??= what);
  const rawExports: Array<{ name: string; kind: number; index: number }> = [];
  let importedFuncs = 0;
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const s = new Reader(bytes, r.pos + size);
    s.pos = r.pos;
    if (s.end > bytes.length) throw new WasmFormatError('section overruns the module');
    switch (id) {
      case 1:
        for (let n = s.u32(), i = 0; i < n; i++) {
          if (s.byte() !== 0x60) throw new WasmFormatError('bad function type');
          const params = Array.from({ length: s.u32() }, () => s.valtype());
          const results = Array.from({ length: s.u32() }, () => s.valtype());
          if ([...params, ...results].some(isFloat)) noteFloat(`function type ${i} uses a float type`);
          types.push({ params, results });
        }
        break;
      case 2:
        for (let n = s.u32(), i = 0; i < n; i++) {
          const module = s.name();
          const name = s.name();
          const kind = s.byte();
          if (kind === 0) {
            const t = s.u32();
            funcTypes.push(t);
            importedFuncs++;
            out.imports.push({ module, name, kind: 'function', sig: types[t] });
          } else if (kind === 1) {
            s.byte();
            s.limits();
            out.imports.push({ module, name, kind: 'table' });
          } else if (kind === 2) {
            out.memories.push(s.limits());
            out.imports.push({ module, name, kind: 'memory' });
          } else if (kind === 3) {
            if (isFloat(s.valtype())) noteFloat(`imported global ${module}.${name} is a float`);
            s.byte();
            out.imports.push({ module, name, kind: 'global' });
          } else throw new WasmFormatError(`unknown import kind ${kind}`);
        }
        break;
      case 3:
        for (let n = s.u32(), i = 0; i < n; i++) funcTypes.push(s.u32());
        break;
      case 5:
        for (let n = s.u32(), i = 0; i < n; i++) out.memories.push(s.limits());
        break;
      case 6:
        for (let n = s.u32(), i = 0; i < n; i++) {
          if (isFloat(s.valtype())) noteFloat(`global ${i} is a float`);
          s.byte();
          scanExpr(s, `global ${i} initialiser`, noteFloat);
        }
        break;
      case 7:
        for (let n = s.u32(), i = 0; i < n; i++) rawExports.push({ name: s.name(), kind: s.byte(), index: s.u32() });
        break;
      case 8:
        out.hasStart = true;
        break;
      case 10:
        for (let n = s.u32(), i = 0; i < n; i++) {
          const bodySize = s.u32();
          const body = new Reader(bytes, s.pos + bodySize);
          body.pos = s.pos;
          const where = `function ${importedFuncs + i}`;
          for (let groups = body.u32(), g = 0; g < groups; g++) {
            body.u32();
            if (isFloat(body.valtype())) noteFloat(`${where} has a float local`);
          }
          scanExpr(body, where, noteFloat);
          s.pos = body.end;
        }
        break;
      default:
        break; // custom, table, element, data, data count: nothing the build reports on
    }
    r.pos = s.end;
  }
  for (const e of rawExports) {
    const kind = KINDS[e.kind];
    if (!kind) throw new WasmFormatError(`unknown export kind ${e.kind}`);
    const t = kind === 'function' ? funcTypes[e.index] : undefined;
    out.exports.push(t !== undefined && types[t] ? { name: e.name, kind, sig: types[t] } : { name: e.name, kind });
  }
  return out;
}

/** Float opcodes of the core instruction set: loads/stores, constants, comparisons, arithmetic, conversions. */
function isFloatOpcode(op: number): boolean {
  if (op === 0x2a || op === 0x2b || op === 0x38 || op === 0x39 || op === 0x43 || op === 0x44) return true;
  if (op >= 0x5b && op <= 0x66) return true; // f32/f64 comparisons
  if (op >= 0x8b && op <= 0xa6) return true; // f32/f64 arithmetic
  // Conversions: all but i32.wrap_i64 (0xa7) and i64.extend_i32_s/u (0xac, 0xad) involve a float.
  return op >= 0xa8 && op <= 0xbf && op !== 0xac && op !== 0xad;
}

/** Walks one instruction sequence through its final `end` (a body, or a constant expression) noting float instructions. */
function scanExpr(s: Reader, where: string, noteFloat: (what: string) => void): void {
  let depth = 0;
  for (;;) {
    const at = s.pos;
    const op = s.byte();
    if (isFloatOpcode(op)) noteFloat(`${where} uses float instruction 0x${op.toString(16)} at byte ${at}`);
    switch (op) {
      case 0x0b:
        if (depth-- === 0) return;
        break;
      case 0x02: case 0x03: case 0x04: {
        depth++;
        const bt = s.byte();
        if (bt === 0x7d || bt === 0x7c) noteFloat(`${where} has a float block type`);
        else if (bt !== 0x40 && !VALTYPES[bt]) {
          s.pos--;
          s.skipLeb();
        }
        break;
      }
      case 0x0c: case 0x0d: case 0x10: case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26: case 0xd2:
        s.u32();
        break;
      case 0x0e:
        for (let n = s.u32(), i = 0; i <= n; i++) s.u32();
        break;
      case 0x11:
        s.u32();
        s.u32();
        break;
      case 0x1c:
        for (let n = s.u32(), i = 0; i < n; i++) if (isFloat(s.valtype())) noteFloat(`${where} selects a float`);
        break;
      case 0x3f: case 0x40: case 0xd0:
        s.byte();
        break;
      case 0x41: case 0x42:
        s.skipLeb();
        break;
      case 0x43:
        s.skip(4);
        break;
      case 0x44:
        s.skip(8);
        break;
      case 0xfc: {
        const sub = s.u32();
        if (sub <= 7) noteFloat(`${where} uses a saturating float conversion`);
        else if (sub === 8) { s.u32(); s.byte(); }
        else if (sub === 9 || sub === 13 || sub === 15 || sub === 16 || sub === 17) s.u32();
        else if (sub === 10) { s.byte(); s.byte(); }
        else if (sub === 11) s.byte();
        else if (sub === 12 || sub === 14) { s.u32(); s.u32(); }
        else throw new WasmFormatError(`unknown instruction 0xfc ${sub} in ${where}`);
        break;
      }
      case 0xfd:
        noteFloat(`${where} uses SIMD`);
        return; // SIMD immediates are not decoded here; the module is refused anyway
      default:
        if (op >= 0x28 && op <= 0x3e) {
          s.u32();
          s.u32();
        }
        break;
    }
  }
}
