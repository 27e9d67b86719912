/**
 * The instruction decoder: walks one function body, refuses floating-point and unsupported
 * instructions, and records for each instruction what the rewrite needs (its byte range, its
 * control role, its gas and the function's maximum operand-stack height).
 */
import { ContractModuleError } from './errors.js';
import { CALL_INSTRUCTION_GAS, DIV_GAS, INSTRUCTION_GAS, MAX_NESTING } from './schedule.js';
import { type FuncType, I32, I64, Reader, malformed } from './wasm.js';

/** What an instruction means to the rewrite. */
export const enum Role {
  Plain,
  /** block: opens a frame, but its body starts exactly when it does, so metering goes on. */
  Block,
  /** loop / if: opens a frame whose body is a branch target or conditional; metering restarts inside it. */
  Open,
  /** else / end: metering restarts after it. */
  Close,
  /** br / br_if / br_table / unreachable: metering restarts after it. */
  Branch,
  /** return: rewritten into a branch to the wrapper block. */
  Return,
  /** call / call_indirect: the callee reads and charges the gas counter, so it must be current. */
  Call,
  /** memory.grow: its page count is charged at run time. */
  Grow,
  /** memory.copy / memory.fill / memory.init: their byte count is charged at run time. */
  Bulk,
}

/** One decoded instruction. */
export interface Instr {
  start: number;
  end: number;
  role: Role;
  gas: bigint;
  /** Open frames (not counting the function's own) before this instruction. */
  nesting: number;
  /** A `loop` (the rewrite keeps the gas counter in a local in functions that have one). */
  loop?: boolean;
}

/** A decoded function body. */
export interface DecodedBody {
  instrs: Instr[];
  /** Upper bound of the operand stack's height, in values. */
  maxStack: number;
}

/** What the decoder needs to know about the module around a body. */
export interface BodyContext {
  types: FuncType[];
  /** Type index of every function, imports first. */
  funcTypes: number[];
  /** Whether the module has a table (call_indirect needs one). */
  hasTable: boolean;
}

function float(what: string): never {
  throw new ContractModuleError('CONTRACT_FLOAT', `floating-point instruction ${what} is not allowed`);
}

function unsupported(what: string): never {
  throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `instruction ${what} is not supported`);
}

/** Checks a value type used in code: integers only. */
export function checkValType(t: number, where: string): void {
  if (t === I32 || t === I64) return;
  if (t === 0x7d || t === 0x7c) throw new ContractModuleError('CONTRACT_FLOAT', `floating-point type in ${where}`);
  throw new ContractModuleError('CONTRACT_UNSUPPORTED_FEATURE', `value type 0x${t.toString(16)} in ${where} (only i32 and i64 are allowed)`);
}

interface Frame {
  base: number;
  results: number;
  params: number;
}

/** Decodes a body's instructions (the body's final `end` included). */
export function decodeBody(code: Uint8Array, ctx: BodyContext, resultCount: number): DecodedBody {
  const r = new Reader(code);
  const instrs: Instr[] = [];
  const frames: Frame[] = [{ base: 0, results: resultCount, params: 0 }];
  let height = 0;
  let maxStack = 0;
  const top = (): Frame => frames[frames.length - 1]!;
  const pop = (n: number): void => {
    height = Math.max(top().base, height - n);
  };
  const push = (n: number): void => {
    height += n;
    if (height > maxStack) maxStack = height;
  };
  const polymorphic = (): void => {
    height = top().base;
  };
  const blockType = (): { params: number; results: number } => {
    const bt = r.s33();
    if (bt === -64) return { params: 0, results: 0 };
    if (bt < 0) {
      checkValType(bt + 128, 'a block type');
      return { params: 0, results: 1 };
    }
    const t = ctx.types[bt];
    if (!t) malformed(`block type index ${bt}`, r.pos);
    return { params: t.params.length, results: t.results.length };
  };
  while (!r.done()) {
    const start = r.pos;
    const nesting = frames.length - 1;
    let role = Role.Plain;
    let gas = INSTRUCTION_GAS;
    const op = r.u8();
    switch (op) {
      case 0x00: // unreachable
        role = Role.Branch;
        polymorphic();
        break;
      case 0x01: // nop
        break;
      case 0x02: // block
      case 0x03: // loop
      case 0x04: {
        // if
        if (op === 0x04) pop(1);
        const bt = blockType();
        pop(bt.params);
        frames.push({ base: height, results: bt.results, params: bt.params });
        if (frames.length > MAX_NESTING) throw new ContractModuleError('CONTRACT_LIMIT', `blocks nested deeper than ${MAX_NESTING}`);
        push(bt.params);
        role = op === 0x02 ? Role.Block : Role.Open;
        break;
      }
      case 0x05: {
        // else
        if (frames.length < 2) malformed('else outside a block', start);
        height = top().base;
        push(top().params);
        role = Role.Close;
        break;
      }
      case 0x0b: {
        // end
        const f = frames.pop();
        if (!f) malformed('unbalanced end', start);
        height = f.base;
        push(f.results);
        role = Role.Close;
        if (frames.length === 0) {
          if (!r.done()) malformed('instructions after the function end', r.pos);
          instrs.push({ start, end: r.pos, role, gas, nesting });
          return { instrs, maxStack };
        }
        break;
      }
      case 0x0c: // br
        r.u32();
        role = Role.Branch;
        polymorphic();
        break;
      case 0x0d: // br_if
        r.u32();
        pop(1);
        role = Role.Branch;
        break;
      case 0x0e: {
        // br_table
        for (let n = r.u32(); n >= 0; n--) {
          r.u32();
          if (n === 0) break;
        }
        role = Role.Branch;
        polymorphic();
        break;
      }
      case 0x0f: // return
        role = Role.Return;
        polymorphic();
        break;
      case 0x10: {
        // call
        const f = r.u32();
        const t = ctx.types[ctx.funcTypes[f] ?? -1];
        if (!t) malformed(`call to unknown function ${f}`, start);
        pop(t.params.length);
        push(t.results.length);
        gas = CALL_INSTRUCTION_GAS;
        role = Role.Call;
        break;
      }
      case 0x11: {
        // call_indirect
        const ti = r.u32();
        if (r.u32() !== 0) unsupported('call_indirect on a table other than 0');
        const t = ctx.types[ti];
        if (!t || !ctx.hasTable) malformed('call_indirect with an unknown type or no table', start);
        pop(t.params.length + 1);
        push(t.results.length);
        gas = CALL_INSTRUCTION_GAS;
        role = Role.Call;
        break;
      }
      case 0x1a: // drop
        pop(1);
        break;
      case 0x1b: // select
        pop(3);
        push(1);
        break;
      case 0x1c: {
        // select t
        const n = r.u32();
        for (let i = 0; i < n; i++) checkValType(r.u8(), 'select');
        pop(3);
        push(1);
        break;
      }
      case 0x20: // local.get
      case 0x23: // global.get
        r.u32();
        push(1);
        break;
      case 0x21: // local.set
      case 0x24: // global.set
        r.u32();
        pop(1);
        break;
      case 0x22: // local.tee
        r.u32();
        pop(1);
        push(1);
        break;
      case 0x3f: // memory.size
        if (r.u8() !== 0) malformed('memory.size reserved byte', start);
        push(1);
        break;
      case 0x40: // memory.grow
        if (r.u8() !== 0) malformed('memory.grow reserved byte', start);
        pop(1);
        push(1);
        role = Role.Grow;
        break;
      case 0x41:
        r.skipSigned(32);
        push(1);
        break;
      case 0x42:
        r.skipSigned(64);
        push(1);
        break;
      case 0x43:
        return float('f32.const');
      case 0x44:
        return float('f64.const');
      case 0xfc: {
        const sub = r.u32();
        if (sub <= 7) float(`0xfc ${sub} (saturating float truncation)`);
        if (sub === 8) {
          // memory.init
          r.u32();
          if (r.u8() !== 0) malformed('memory.init reserved byte', start);
          pop(3);
          role = Role.Bulk;
        } else if (sub === 9) r.u32(); // data.drop
        else if (sub === 10) {
          // memory.copy
          if (r.u8() !== 0 || r.u8() !== 0) malformed('memory.copy reserved bytes', start);
          pop(3);
          role = Role.Bulk;
        } else if (sub === 11) {
          // memory.fill
          if (r.u8() !== 0) malformed('memory.fill reserved byte', start);
          pop(3);
          role = Role.Bulk;
        } else unsupported(`0xfc ${sub} (table bulk operations)`);
        break;
      }
      default:
        decodeNumeric(op, r, pop, push);
        if (op === 0x6d || op === 0x6e || op === 0x6f || op === 0x70 || op === 0x7f || op === 0x80 || op === 0x81 || op === 0x82) gas = DIV_GAS;
    }
    instrs.push(op === 0x03 ? { start, end: r.pos, role, gas, nesting, loop: true } : { start, end: r.pos, role, gas, nesting });
  }
  return malformed('function body has no final end');
}

/** Loads, stores and integer arithmetic; everything float or unknown is refused. */
function decodeNumeric(op: number, r: Reader, pop: (n: number) => void, push: (n: number) => void): void {
  if (op >= 0x28 && op <= 0x3e) {
    if (op === 0x2a || op === 0x2b || op === 0x38 || op === 0x39) float(`0x${op.toString(16)} (float load/store)`);
    const align = r.u32();
    if (align >= 64) unsupported('memory access with a memory index (multi-memory)');
    r.u32();
    if (op <= 0x35) {
      pop(1);
      push(1);
    } else pop(2);
    return;
  }
  // i32.eqz, i64.eqz, clz/ctz/popcnt, wrap/extend, sign extension: one in, one out.
  if (op === 0x45 || op === 0x50 || (op >= 0x67 && op <= 0x69) || (op >= 0x79 && op <= 0x7b) || op === 0xa7 || op === 0xac || op === 0xad || (op >= 0xc0 && op <= 0xc4)) {
    pop(1);
    push(1);
    return;
  }
  // Integer comparisons and binary operators: two in, one out.
  if ((op >= 0x46 && op <= 0x4f) || (op >= 0x51 && op <= 0x5a) || (op >= 0x6a && op <= 0x78) || (op >= 0x7c && op <= 0x8a)) {
    pop(2);
    push(1);
    return;
  }
  if ((op >= 0x5b && op <= 0x66) || (op >= 0x8b && op <= 0xbf)) float(`0x${op.toString(16)}`);
  if (op === 0x25 || op === 0x26 || (op >= 0xd0 && op <= 0xd2)) unsupported(`0x${op.toString(16)} (reference types)`);
  if (op === 0xfd) unsupported('0xfd (SIMD)');
  if (op === 0xfe) unsupported('0xfe (threads)');
  if (op === 0x12 || op === 0x13) unsupported('return_call (tail calls)');
  if (op >= 0x06 && op <= 0x0a) unsupported(`0x${op.toString(16)} (exceptions)`);
  malformed(`unknown opcode 0x${op.toString(16)}`, r.pos - 1);
}
