/**
 * Hostile contract modules for the vm bench's abuse table, built byte by byte with the VM's own
 * encoder: shapes AssemblyScript cannot express (a thousand data segments, a full table, a
 * thousand globals) but a deployer can hand-write.
 */
import { encodeModule, FUNCREF, I64, Writer, type WasmModule } from '../src/vm/wasm.js';
import { MAX_MEMORY_PAGES, MAX_TABLE_ENTRIES } from '../src/vm/schedule.js';

/** What a heavy-instantiation callee allocates and initialises. */
export interface HeavyShape {
  pages: number;
  dataSegments: number;
  /** Bytes of each data segment. */
  segmentBytes: number;
  tableEntries: number;
  globals: number;
  /** Defined functions besides `noop` (compile work). */
  functions: number;
}

/** The issue's heavy callee: 32 pages, 1,024 active data segments, 4,096 table entries, 1,000 globals. */
export const ISSUE_HEAVY: HeavyShape = { pages: MAX_MEMORY_PAGES, dataSegments: 1_024, segmentBytes: 40, tableEntries: MAX_TABLE_ENTRIES, globals: 1_000, functions: 0 };

/** A module exporting `noop` (and `memory`) whose instantiation does what `shape` says. */
export function heavyModule(shape: HeavyShape): Uint8Array {
  const noop = Uint8Array.of(0x0b);
  const m: WasmModule = {
    types: [{ params: [], results: [] }],
    imports: [],
    functions: Array.from({ length: 1 + shape.functions }, () => 0),
    tables: shape.tableEntries > 0 ? [{ elemType: FUNCREF, limits: { min: shape.tableEntries, max: shape.tableEntries } }] : [],
    memories: [{ min: shape.pages, max: MAX_MEMORY_PAGES }],
    globals: Array.from({ length: shape.globals }, (_, i) => ({ type: I64, mutable: true, init: new Writer().u8(0x42).sleb(BigInt(i)).u8(0x0b).finish() })),
    exports: [
      { name: 'noop', kind: 0, index: 0 },
      { name: 'memory', kind: 2, index: 0 },
    ],
    // Filler functions do a little work so the engine cannot fold them away.
    bodies: [{ locals: [], code: noop }, ...Array.from({ length: shape.functions }, (_, i) => ({ locals: [], code: new Writer().u8(0x23).u32(0).u8(0x42).sleb(BigInt(i)).u8(0x7c).u8(0x24).u32(0).u8(0x0b).finish() }))],
  };
  if (shape.globals === 0 && shape.functions > 0) throw new Error('filler functions use global 0');
  if (shape.tableEntries > 0) {
    const e = new Writer().u32(1).u32(0).u8(0x41).sleb(0n).u8(0x0b).u32(shape.tableEntries);
    for (let i = 0; i < shape.tableEntries; i++) e.u32(i % (1 + shape.functions));
    m.elements = e.finish();
  }
  if (shape.dataSegments > 0) {
    const d = new Writer().u32(shape.dataSegments);
    const bytes = new Uint8Array(shape.segmentBytes).fill(0xab);
    for (let i = 0; i < shape.dataSegments; i++) d.u32(0).u8(0x41).sleb(BigInt(i * shape.segmentBytes)).u8(0x0b).u32(shape.segmentBytes).bytes(bytes);
    m.data = d.finish();
  }
  return encodeModule(m);
}

/** Deploy data for `code` with no constructor arguments. */
export function deployData(code: Uint8Array): Uint8Array {
  const data = new Uint8Array(4 + code.length);
  new DataView(data.buffer).setUint32(0, code.length, true);
  data.set(code, 4);
  return data;
}
