/** inspectWasm on hand-assembled modules: signatures, start, memories, and float detection that skips immediates. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inspectWasm, WasmFormatError } from '../../src/contract/inspect.js';
import { compileModule } from '../helpers/wasm.js';

const I32 = 0x7f;
const I64 = 0x7e;
const F64 = 0x7c;

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}
const str = (s: string) => [...leb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const fnType = (params: number[], results: number[]) => [0x60, ...vec(params.map((p) => [p])), ...vec(results.map((r) => [r]))];
/** A function body: no locals unless given, the instructions, then `end`. */
const body = (code: number[], locals: number[][] = []) => {
  const b = [...vec(locals), ...code, 0x0b];
  return [...leb(b.length), ...b];
};

/** A module with one imported host function, one memory, the given functions (type 1 = () -> ()) and exports. */
function module(opts: { bodies: number[][]; globals?: number[][]; start?: number; memories?: number }): Uint8Array {
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([fnType([I32, I32], [I32]), fnType([], [])])),
    ...section(2, vec([[...str('svc'), ...str('storage_read'), 0x00, 0x00]])),
    ...section(3, vec(opts.bodies.map(() => [0x01]))),
    ...section(5, vec(Array.from({ length: opts.memories ?? 1 }, () => [0x01, 0x01, 0x10]))),
    ...(opts.globals ? section(6, vec(opts.globals)) : []),
    ...section(7, vec([[...str('memory'), 0x02, 0x00], [...str('run'), 0x00, 0x01]])),
    ...(opts.start !== undefined ? section(8, leb(opts.start)) : []),
    ...section(10, vec(opts.bodies)),
  ];
  return Uint8Array.from(bytes);
}

test('reads imports and exports with their signatures, the memory limits and no start', () => {
  const wasm = module({ bodies: [body([0x41, 0x00, 0x41, 0x00, 0x10, 0x00, 0x1a])] });
  assert.ok(compileModule(wasm), 'the hand-assembled module is valid WebAssembly');
  const s = inspectWasm(wasm);
  assert.equal(s.imports, [{ module: 'svc', name: 'storage_read', kind: 'function', sig: { params: ['i32', 'i32'], results: ['i32'] } }]);
  assert.equal(s.exports, [
    { name: 'memory', kind: 'memory' },
    { name: 'run', kind: 'function', sig: { params: [], results: [] } },
  ]);
  assert.equal(s.memories, [{ min: 1, max: 16 }]);
  assert.is(s.hasStart, false);
  assert.is(s.float, null);
});

test('immediates that happen to equal float opcodes are skipped, not mistaken for instructions', () => {
  // i32.const 42 is 0x41 0x2a (0x2a is f32.load); i64.const 0x44 spans 0xc4 0x00 (0x44 is f64.const);
  // a load's memarg of 0x38 (f32.store) and a local index of 0x39.
  const code = [0x41, 0x2a, 0x1a, 0x42, 0xc4, 0x00, 0x1a, 0x41, 0x00, 0x28, 0x02, 0x38, 0x1a];
  const wasm = module({ bodies: [body([...code, 0x20, 0x39, 0x1a], [[0x3a, I64]])] });
  assert.ok(compileModule(wasm));
  assert.is(inspectWasm(wasm).float, null);
});

test('a float instruction, a float local, a float global and a float block type are each found', () => {
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['f64.const', module({ bodies: [body([0x44, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x1a])] }), /function 1 uses float instruction 0x44/],
    ['f64 local', module({ bodies: [body([], [[0x01, F64]])] }), /function 1 has a float local/],
    ['f64 global', module({ bodies: [body([])], globals: [[F64, 0x00, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b]] }), /global 0 is a float/],
    ['f64.reinterpret_i64', module({ bodies: [body([0x42, 0x00, 0xbf, 0x1a])] }), /float instruction 0xbf/],
    ['block returning f64', module({ bodies: [body([0x02, F64, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0x1a])] }), /float block type/],
  ];
  for (const [name, wasm, want] of cases) {
    assert.ok(compileModule(wasm), `${name}: valid module`);
    const found = inspectWasm(wasm).float;
    assert.ok(found !== null && want.test(found), `${name}: ${found}`);
  }
  // A global that is an integer after a float global's initialiser ended: the walk stops at `end`.
  const ints = module({ bodies: [body([])], globals: [[I32, 0x00, 0x41, 0x2a, 0x0b], [I64, 0x01, 0x42, 0x07, 0x0b]] });
  assert.ok(compileModule(ints));
  assert.is(inspectWasm(ints).float, null);
});

test('a start section and several memories are reported', () => {
  const wasm = module({ bodies: [body([])], start: 1 });
  assert.ok(compileModule(wasm));
  assert.is(inspectWasm(wasm).hasStart, true);
  assert.is(inspectWasm(module({ bodies: [body([])], memories: 2 })).memories.length, 2);
});

test('bytes that are not a module are a WasmFormatError, never a crash', () => {
  const good = module({ bodies: [body([])] });
  for (const bad of [new Uint8Array(0), Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x02, 0, 0, 0]), good.subarray(0, good.length - 3)]) {
    assert.throws(() => inspectWasm(bad), (e: unknown) => e instanceof WasmFormatError && e.code === 'MALFORMED_WASM');
  }
});

test.run();
