/**
 * The deployment rewrite that makes a validated module metered and depth-limited (run once; the
 * result is stored under the code hash):
 *   - a mutable i64 global `__svc_gas`, the gas left. Each function keeps a copy in a local (a
 *     register, where a global is a memory access: this is what keeps metering cheap), charged at
 *     the start of every straight-line segment by the segment's static cost (segments end at
 *     every loop, if, else, end and branch) and by run-time amounts before memory.grow and the bulk
 *     memory operations. The copy is written back before every call and at the function's exit
 *     and read again after every call, so host functions and callees always see the true count;
 *   - a mutable i32 global `__svc_depth` to which each function adds its frame weight on entry and
 *     subtracts it on exit: the body is wrapped in a block, so a `return` becomes a branch to the
 *     wrapper and every exit path passes the one decrement;
 *   - the start function becomes the export `__svc_start`, called by the VM once gas is set.
 * Running out of gas stores -1 in `__svc_gas` and a too-deep call stores -1 in `__svc_depth`
 * before trapping, so the VM can tell those traps from the others.
 */
import { type DecodedBody, Role } from './code.js';
import { InstrumentationError } from './errors.js';
import { COPY_WORD_GAS, FRAME_BASE_SLOTS, MAX_MEMORY_PAGES, MEMORY_PAGE_GAS, STACK_BUDGET_SLOTS } from './schedule.js';
import type { ValidatedModule } from './validate.js';
import { EMPTY_BLOCK, encodeModule, type FuncType, I32, I64, type WasmModule, Writer } from './wasm.js';

export const GAS_EXPORT = '__svc_gas';
export const DEPTH_EXPORT = '__svc_depth';
export const START_EXPORT = '__svc_start';

/** Operand-stack values the injected sequences need on top of a function's own. */
const INJECTED_STACK = 4;

function typeIndex(m: WasmModule, t: FuncType): number {
  const same = (a: number[], b: number[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);
  const i = m.types.findIndex((x) => same(x.params, t.params) && same(x.results, t.results));
  if (i >= 0) return i;
  m.types.push(t);
  return m.types.length - 1;
}

/** Rewrites a validated module into its stored, metered form. */
export function instrument(v: ValidatedModule): Uint8Array {
  const src = v.module;
  const m: WasmModule = {
    ...src,
    types: src.types.map((t) => ({ params: [...t.params], results: [...t.results] })),
    functions: [...src.functions],
    memories: src.memories.map((l) => ({ min: l.min, max: l.max ?? MAX_MEMORY_PAGES })),
    globals: [...src.globals],
    exports: [...src.exports],
    bodies: [],
  };
  const gas = m.globals.length;
  const depth = gas + 1;
  m.globals.push({ type: I64, mutable: true, init: Uint8Array.of(0x42, 0x00, 0x0b) }, { type: I32, mutable: true, init: Uint8Array.of(0x41, 0x00, 0x0b) });

  src.bodies.forEach((body, i) => {
    const type = m.types[src.functions[i]!]!;
    let locals = type.params.length;
    for (const [count] of body.locals) locals += count;
    const decoded = v.bodies[i]!;
    const needsScratch = decoded.instrs.some((x) => x.role === Role.Grow || x.role === Role.Bulk);
    const weight = FRAME_BASE_SLOTS + locals + 2 + decoded.maxStack + INJECTED_STACK;
    const wrapperType = type.results.length === 0 ? EMPTY_BLOCK : type.results.length === 1 ? type.results[0]! : typeIndex(m, { params: [], results: type.results });
    // Only a function with a loop can charge often enough for the local copy to pay for its
    // load, its stores around calls and its store at exit; the others charge the global.
    const cached = decoded.instrs.some((x) => x.loop);
    const injectedLocals: Array<[number, number]> = [];
    if (cached) injectedLocals.push([1, I64]);
    if (needsScratch) injectedLocals.push([1, I32]);
    m.bodies.push({
      locals: [...body.locals, ...injectedLocals],
      code: rewriteBody(body.code, decoded, { gas, depth, gasLocal: cached ? locals : undefined, scratch: locals + (cached ? 1 : 0), weight, wrapperType }),
    });
  });
  if (src.start !== undefined) {
    m.exports.push({ name: START_EXPORT, kind: 0, index: src.start });
    delete m.start;
  }
  // The host reads the memory through the export named memory; validation made sure no other kind uses the name.
  if (!m.exports.some((e) => e.name === 'memory')) m.exports.push({ name: 'memory', kind: 2, index: 0 });
  m.exports.push({ name: GAS_EXPORT, kind: 3, index: gas }, { name: DEPTH_EXPORT, kind: 3, index: depth });
  const out = encodeModule(m);
  if (!WebAssembly.validate(out)) {
    let detail = 'invalid';
    try {
      new WebAssembly.Module(out);
    } catch (err) {
      detail = (err as Error).message;
    }
    throw new InstrumentationError(`instrumented module does not validate: ${detail}`);
  }
  return out;
}

interface Injection {
  gas: number;
  depth: number;
  /** The function's local copy of the gas counter, if it keeps one. */
  gasLocal: number | undefined;
  scratch: number;
  weight: number;
  wrapperType: number;
}

/** Pushes the gas left (the local copy or the global). */
function emitGasGet(w: Writer, j: Injection): void {
  if (j.gasLocal === undefined) w.u8(0x23).u32(j.gas);
  else w.u8(0x20).u32(j.gasLocal);
}

/**
 * With gas left and a cost on the stack: `gas -= cost; if (gas < 0) { global = -1; unreachable }`.
 * Gas limits are far below 2^63, so the subtraction cannot wrap.
 */
function emitChargeTop(w: Writer, j: Injection): void {
  w.u8(0x7d);
  if (j.gasLocal === undefined) w.u8(0x24).u32(j.gas).u8(0x23).u32(j.gas);
  else w.u8(0x22).u32(j.gasLocal);
  w.u8(0x42).u8(0x00).u8(0x53).u8(0x04).u8(EMPTY_BLOCK);
  w.u8(0x42).sleb(-1n).u8(0x24).u32(j.gas).u8(0x00).u8(0x0b);
}

/** Charges a static cost. */
function emitCharge(w: Writer, j: Injection, cost: bigint): void {
  emitGasGet(w, j);
  w.u8(0x42).sleb(cost);
  emitChargeTop(w, j);
}

function rewriteBody(code: Uint8Array, d: DecodedBody, j: Injection): Uint8Array {
  const w = new Writer();
  // Entry: depth += weight; if (depth > budget) { depth = -1; unreachable }
  w.u8(0x23).u32(j.depth).u8(0x41).sleb(BigInt(j.weight)).u8(0x6a).u8(0x24).u32(j.depth);
  w.u8(0x23).u32(j.depth).u8(0x41).sleb(BigInt(STACK_BUDGET_SLOTS)).u8(0x4b).u8(0x04).u8(EMPTY_BLOCK);
  w.u8(0x41).sleb(-1n).u8(0x24).u32(j.depth).u8(0x00).u8(0x0b);
  if (j.gasLocal !== undefined) w.u8(0x23).u32(j.gas).u8(0x21).u32(j.gasLocal);
  w.u8(0x02);
  if (j.wrapperType === EMPTY_BLOCK || j.wrapperType === I32 || j.wrapperType === I64) w.u8(j.wrapperType);
  else w.sleb(BigInt(j.wrapperType));

  const instrs = d.instrs;
  let segmentStart = true;
  for (let k = 0; k < instrs.length; k++) {
    const ins = instrs[k]!;
    const last = k === instrs.length - 1;
    if (segmentStart && !last) {
      let cost = 0n;
      for (let e = k; e < instrs.length; e++) {
        const x = instrs[e]!;
        cost += x.gas;
        if (x.role === Role.Open || x.role === Role.Close || x.role === Role.Branch || x.role === Role.Return) break;
      }
      if (cost > 0n) emitCharge(w, j, cost);
    }
    segmentStart = ins.role === Role.Open || ins.role === Role.Close || ins.role === Role.Branch || ins.role === Role.Return;
    if (last) break;
    if (ins.role === Role.Return) {
      w.u8(0x0c).u32(ins.nesting);
    } else if (ins.role === Role.Call && j.gasLocal !== undefined) {
      w.u8(0x20).u32(j.gasLocal).u8(0x24).u32(j.gas);
      w.bytes(code.subarray(ins.start, ins.end));
      w.u8(0x23).u32(j.gas).u8(0x21).u32(j.gasLocal);
    } else if (ins.role === Role.Grow) {
      // pages * MEMORY_PAGE_GAS, with the page count kept in the scratch local for the grow itself.
      w.u8(0x21).u32(j.scratch);
      emitGasGet(w, j);
      w.u8(0x20).u32(j.scratch).u8(0xad).u8(0x42).sleb(MEMORY_PAGE_GAS).u8(0x7e);
      emitChargeTop(w, j);
      w.u8(0x20).u32(j.scratch).bytes(code.subarray(ins.start, ins.end));
    } else if (ins.role === Role.Bulk) {
      // ceil(bytes / 32) * COPY_WORD_GAS, the byte count (the operation's last operand) kept likewise.
      w.u8(0x21).u32(j.scratch);
      emitGasGet(w, j);
      w.u8(0x20).u32(j.scratch).u8(0xad).u8(0x42).sleb(31n).u8(0x7c).u8(0x42).sleb(5n).u8(0x88);
      w.u8(0x42).sleb(COPY_WORD_GAS).u8(0x7e);
      emitChargeTop(w, j);
      w.u8(0x20).u32(j.scratch).bytes(code.subarray(ins.start, ins.end));
    } else w.bytes(code.subarray(ins.start, ins.end));
  }
  // The body's own final end closes the wrapper; then the one exit path hands the gas back and
  // restores the depth.
  w.u8(0x0b);
  if (j.gasLocal !== undefined) w.u8(0x20).u32(j.gasLocal).u8(0x24).u32(j.gas);
  w.u8(0x23).u32(j.depth).u8(0x41).sleb(BigInt(j.weight)).u8(0x6b).u8(0x24).u32(j.depth);
  w.u8(0x0b);
  return w.finish();
}
