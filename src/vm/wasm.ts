/**
 * A WebAssembly binary reader and writer, just wide enough to validate and rewrite contract
 * modules: it keeps the sections the VM rewrites as structures and the rest as checked raw bytes,
 * and refuses anything it does not understand (custom sections are dropped: they never execute).
 */
import { ContractModuleError } from './errors.js';

export const I32 = 0x7f;
export const I64 = 0x7e;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export const FUNCREF = 0x70;
export const EXTERNREF = 0x6f;
export const EMPTY_BLOCK = 0x40;

/** A function signature. */
export interface FuncType {
  params: number[];
  results: number[];
}

/** An imported function (the only import kind a contract may have). */
export interface FuncImport {
  module: string;
  name: string;
  typeIndex: number;
}

/** Memory or table size limits. */
export interface Limits {
  min: number;
  max?: number;
}

/** A defined global: its type and its initialiser (a constant expression ending in `end`). */
export interface Global {
  type: number;
  mutable: boolean;
  init: Uint8Array;
}

/** An export entry (kind: 0 function, 1 table, 2 memory, 3 global). */
export interface Export {
  name: string;
  kind: number;
  index: number;
}

/** A function body: its declared locals (run-length) and its instructions up to and including the final `end`. */
export interface FuncBody {
  locals: Array<[count: number, type: number]>;
  code: Uint8Array;
}

/** A decoded module. Element and data sections stay raw (checked on reading, re-emitted verbatim). */
export interface WasmModule {
  types: FuncType[];
  imports: FuncImport[];
  /** Type index of each defined function. */
  functions: number[];
  tables: Array<{ elemType: number; limits: Limits }>;
  memories: Limits[];
  globals: Global[];
  exports: Export[];
  start?: number;
  elements?: Uint8Array;
  dataCount?: number;
  bodies: FuncBody[];
  data?: Uint8Array;
}

/** Throws the malformed-module error with an offset, so a deployer can find the bad byte. */
export function malformed(detail: string, offset?: number): never {
  throw new ContractModuleError('CONTRACT_MODULE_MALFORMED', offset === undefined ? `malformed module: ${detail}` : `malformed module: ${detail} at byte ${offset}`);
}

/** A cursor over a byte range with WebAssembly's LEB128 and vector encodings. */
export class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }

  /** Whether the cursor reached the end of its range. */
  done(): boolean {
    return this.pos >= this.end;
  }

  /** One byte. */
  u8(): number {
    if (this.pos >= this.end) malformed('unexpected end', this.pos);
    return this.bytes[this.pos++]!;
  }

  /** An unsigned LEB128 of at most 32 bits. */
  u32(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.u8();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) malformed('integer too large', this.pos - 1);
        return result;
      }
      shift += 7;
    }
    return malformed('integer representation too long', this.pos);
  }

  /** Skips a signed LEB128 of at most `bits` bits. */
  skipSigned(bits: number): void {
    const max = Math.ceil(bits / 7);
    for (let i = 0; i < max; i++) if ((this.u8() & 0x80) === 0) return;
    malformed('integer representation too long', this.pos);
  }

  /** A signed LEB128 of at most 33 bits (block types). */
  s33(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    let i = 0;
    do {
      if (i++ >= 5) malformed('integer representation too long', this.pos);
      b = this.u8();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    if (b & 0x40) result -= 2 ** shift;
    return result;
  }

  /** `n` raw bytes. */
  take(n: number): Uint8Array {
    if (n > this.end - this.pos) malformed('unexpected end', this.pos);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A length-prefixed UTF-8 name. */
  name(): string {
    const bytes = this.take(this.u32());
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return malformed('name is not UTF-8', this.pos);
    }
  }

  /** A vector length, refused when it could not possibly fit in the remaining bytes. */
  count(): number {
    const n = this.u32();
    if (n > this.end - this.pos) malformed('vector length exceeds its section', this.pos);
    return n;
  }
}

/** Reads memory or table limits. */
function readLimits(r: Reader): Limits {
  const flag = r.u8();
  if (flag === 0) return { min: r.u32() };
  if (flag === 1) return { min: r.u32(), max: r.u32() };
  throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `unsupported limits flag ${flag} (shared or 64-bit memories are not allowed)`);
}

/**
 * Reads a constant expression up to its `end` and returns it raw. Only integer constants,
 * global.get, ref.null and ref.func are accepted; a float constant is refused as a float.
 */
export function readConstExpr(r: Reader): Uint8Array {
  const start = r.pos;
  for (;;) {
    const op = r.u8();
    if (op === 0x0b) return r.bytes.subarray(start, r.pos);
    if (op === 0x41) r.skipSigned(32);
    else if (op === 0x42) r.skipSigned(64);
    else if (op === 0x23 || op === 0xd2) r.u32();
    else if (op === 0xd0) r.u8();
    else if (op === 0x43 || op === 0x44) throw new ContractModuleError('CONTRACT_FLOAT', 'floating-point constant in a constant expression');
    else malformed(`opcode 0x${op.toString(16)} in a constant expression`, r.pos - 1);
  }
}

const SECTION_ORDER: Record<number, number> = { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 12: 10, 10: 11, 11: 12 };

/** Parses a module's sections. Structural validation (types of code) is left to the engine. */
export function parseModule(bytes: Uint8Array): WasmModule {
  const r = new Reader(bytes);
  if (bytes.length < 8 || r.u8() !== 0 || r.u8() !== 0x61 || r.u8() !== 0x73 || r.u8() !== 0x6d) malformed('missing the \\0asm magic');
  if (r.u8() !== 1 || r.u8() !== 0 || r.u8() !== 0 || r.u8() !== 0) malformed('unsupported binary version');
  const m: WasmModule = { types: [], imports: [], functions: [], tables: [], memories: [], globals: [], exports: [], bodies: [] };
  let lastOrder = 0;
  while (!r.done()) {
    const id = r.u8();
    const size = r.u32();
    if (size > r.end - r.pos) malformed(`section ${id} runs past the end`, r.pos);
    const s = new Reader(bytes, r.pos, r.pos + size);
    r.pos += size;
    if (id === 0) {
      s.name();
      continue;
    }
    const order = SECTION_ORDER[id];
    if (order === undefined) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `unsupported section id ${id}`);
    if (order <= lastOrder) malformed(`section ${id} out of order or repeated`, s.pos);
    lastOrder = order;
    readSection(m, id, s);
    if (!s.done()) malformed(`section ${id} has trailing bytes`, s.pos);
  }
  if (m.functions.length !== m.bodies.length) malformed(`${m.functions.length} functions declared but ${m.bodies.length} bodies`);
  return m;
}

function readSection(m: WasmModule, id: number, s: Reader): void {
  switch (id) {
    case 1:
      for (let n = s.count(); n > 0; n--) {
        if (s.u8() !== 0x60) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', 'only function types are supported in the type section');
        const params = Array.from({ length: s.count() }, () => s.u8());
        const results = Array.from({ length: s.count() }, () => s.u8());
        m.types.push({ params, results });
      }
      return;
    case 2:
      for (let n = s.count(); n > 0; n--) {
        const module = s.name();
        const name = s.name();
        const kind = s.u8();
        if (kind !== 0) throw new ContractModuleError('CONTRACT_FORBIDDEN_IMPORT', `import ${module}.${name} is not a function: only functions of module "svc" may be imported`);
        m.imports.push({ module, name, typeIndex: s.u32() });
      }
      return;
    case 3:
      for (let n = s.count(); n > 0; n--) m.functions.push(s.u32());
      return;
    case 4:
      for (let n = s.count(); n > 0; n--) {
        const elemType = s.u8();
        m.tables.push({ elemType, limits: readLimits(s) });
      }
      return;
    case 5:
      for (let n = s.count(); n > 0; n--) m.memories.push(readLimits(s));
      return;
    case 6:
      for (let n = s.count(); n > 0; n--) {
        const type = s.u8();
        const mut = s.u8();
        if (mut > 1) malformed('global mutability flag', s.pos - 1);
        m.globals.push({ type, mutable: mut === 1, init: readConstExpr(s) });
      }
      return;
    case 7:
      for (let n = s.count(); n > 0; n--) {
        const name = s.name();
        const kind = s.u8();
        if (kind > 3) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `export ${name} has unsupported kind ${kind}`);
        m.exports.push({ name, kind, index: s.u32() });
      }
      return;
    case 8:
      m.start = s.u32();
      return;
    case 9:
      m.elements = s.bytes.slice(s.pos, s.end);
      checkElements(s);
      return;
    case 12:
      m.dataCount = s.u32();
      return;
    case 10:
      for (let n = s.count(); n > 0; n--) {
        const size = s.u32();
        const b = new Reader(s.bytes, s.pos, s.pos + size);
        if (size > s.end - s.pos) malformed('function body runs past its section', s.pos);
        s.pos += size;
        const locals: Array<[number, number]> = [];
        for (let k = b.count(); k > 0; k--) locals.push([b.u32(), b.u8()]);
        if (b.done()) malformed('empty function body', b.pos);
        m.bodies.push({ locals, code: b.bytes.slice(b.pos, b.end) });
      }
      return;
    case 11:
      m.data = s.bytes.slice(s.pos, s.end);
      checkData(s);
      return;
    default:
      throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `unsupported section id ${id}`);
  }
}

/** Total element-segment entries, checked while the element section is read. */
export function countElements(raw: Uint8Array): number {
  return checkElements(new Reader(raw));
}

function checkElements(s: Reader): number {
  let total = 0;
  for (let n = s.count(); n > 0; n--) {
    const flags = s.u32();
    if (flags > 7) malformed(`element segment flags ${flags}`, s.pos);
    if ((flags & 1) === 0) {
      if (flags & 2) s.u32();
      readConstExpr(s);
    }
    if (flags & 4) {
      if (flags & 3) {
        const t = s.u8();
        if (t !== FUNCREF) throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', 'element segments may only hold function references');
      }
      const k = s.count();
      total += k;
      for (let i = 0; i < k; i++) readConstExpr(s);
    } else {
      if (flags & 3) {
        if (s.u8() !== 0) malformed('element kind', s.pos - 1);
      }
      const k = s.count();
      total += k;
      for (let i = 0; i < k; i++) s.u32();
    }
  }
  return total;
}

/** Number of data segments and the bytes they hold, checked while the data section is read. */
function checkData(s: Reader): { segments: number; bytes: number } {
  const n = s.count();
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const mode = s.u32();
    if (mode === 0) readConstExpr(s);
    else if (mode === 2) {
      if (s.u32() !== 0) malformed('data segment for a memory other than 0', s.pos);
      readConstExpr(s);
    } else if (mode !== 1) malformed(`data segment mode ${mode}`, s.pos);
    bytes += s.take(s.u32()).length;
  }
  return { segments: n, bytes };
}

/** Data segments of a raw data section and the bytes they hold. */
export function dataTotals(raw: Uint8Array): { segments: number; bytes: number } {
  return checkData(new Reader(raw));
}

/** Number of data segments in a raw data section. */
export function countData(raw: Uint8Array): number {
  return new Reader(raw).u32();
}

/** A growable byte buffer with WebAssembly's encodings. */
export class Writer {
  private buf = new Uint8Array(1024);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  /** One byte. */
  u8(b: number): this {
    this.reserve(1);
    this.buf[this.length++] = b;
    return this;
  }

  /** Unsigned LEB128. */
  u32(v: number): this {
    do {
      let b = v & 0x7f;
      v = Math.floor(v / 128);
      if (v !== 0) b |= 0x80;
      this.u8(b);
    } while (v !== 0);
    return this;
  }

  /** Signed LEB128 of an i32/i64 constant. */
  sleb(value: bigint): this {
    let v = value;
    for (;;) {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) return this.u8(b);
      this.u8(b | 0x80);
    }
  }

  /** Raw bytes. */
  bytes(b: Uint8Array): this {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }

  /** A length-prefixed name. */
  name(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).bytes(b);
  }

  /** The bytes written so far. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function writeLimits(w: Writer, l: Limits): void {
  if (l.max === undefined) w.u8(0).u32(l.min);
  else w.u8(1).u32(l.min).u32(l.max);
}

/** Encodes a module; sections come out in canonical order, custom sections never. */
export function encodeModule(m: WasmModule): Uint8Array {
  const out = new Writer().bytes(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0));
  const section = (id: number, body: (w: Writer) => void): void => {
    const w = new Writer();
    body(w);
    out.u8(id).u32(w.length).bytes(w.finish());
  };
  if (m.types.length)
    section(1, (w) => {
      w.u32(m.types.length);
      for (const t of m.types) {
        w.u8(0x60).u32(t.params.length);
        for (const p of t.params) w.u8(p);
        w.u32(t.results.length);
        for (const p of t.results) w.u8(p);
      }
    });
  if (m.imports.length)
    section(2, (w) => {
      w.u32(m.imports.length);
      for (const i of m.imports) w.name(i.module).name(i.name).u8(0).u32(i.typeIndex);
    });
  if (m.functions.length)
    section(3, (w) => {
      w.u32(m.functions.length);
      for (const f of m.functions) w.u32(f);
    });
  if (m.tables.length)
    section(4, (w) => {
      w.u32(m.tables.length);
      for (const t of m.tables) {
        w.u8(t.elemType);
        writeLimits(w, t.limits);
      }
    });
  if (m.memories.length)
    section(5, (w) => {
      w.u32(m.memories.length);
      for (const l of m.memories) writeLimits(w, l);
    });
  if (m.globals.length)
    section(6, (w) => {
      w.u32(m.globals.length);
      for (const g of m.globals) w.u8(g.type).u8(g.mutable ? 1 : 0).bytes(g.init);
    });
  if (m.exports.length)
    section(7, (w) => {
      w.u32(m.exports.length);
      for (const e of m.exports) w.name(e.name).u8(e.kind).u32(e.index);
    });
  if (m.start !== undefined) section(8, (w) => w.u32(m.start!));
  if (m.elements) section(9, (w) => w.bytes(m.elements!));
  if (m.dataCount !== undefined) section(12, (w) => w.u32(m.dataCount!));
  if (m.bodies.length)
    section(10, (w) => {
      w.u32(m.bodies.length);
      for (const b of m.bodies) {
        const f = new Writer().u32(b.locals.length);
        for (const [count, type] of b.locals) f.u32(count).u8(type);
        f.bytes(b.code);
        w.u32(f.length).bytes(f.finish());
      }
    });
  if (m.data) section(11, (w) => w.bytes(m.data!));
  return out.finish();
}
