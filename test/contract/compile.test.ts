/**
 * The contract compiler and the SDK as compiled: the examples build into modules the VM's
 * deployment check accepts (only svc.* host imports with the ABI's signatures, no floats, no start
 * function, one exported memory at the VM's cap), expose the documented methods, and match what
 * `npm run build` put in dist/contracts; contracts the VM would refuse fail at build time with
 * the VM's code and a clear reason. The examples run on the VM in test/vm/examples.test.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkModule, compileContract, ContractCompileError, ContractRejectedError, type CompiledContract } from '../../src/contract/compile.js';
import { MAX_MEMORY_PAGES } from '../../src/vm/schedule.js';
import { HOST_MODULE, HOST_SIGNATURES } from '../../src/vm/validate.js';
import { parseModule } from '../../src/vm/wasm.js';
import { validateDeploy } from '../../src/vm/executor.js';
import { ContractModuleError } from '../../src/vm/errors.js';
import { REPO_ROOT, withTempDir } from '../helpers/cli.js';
import { engineExports, engineImports } from '../helpers/wasm.js';
import { deployData, wat } from '../helpers/wat.js';

const EXAMPLES = join(REPO_ROOT, 'contracts', 'examples');
const BUILT = join(REPO_ROOT, 'dist', 'contracts');

/** The methods each example documents in its header comment. */
const DOCUMENTED: Record<string, string[]> = {
  counter: ['get', 'increment'],
  token: ['allowance', 'approve', 'balanceOf', 'decimals', 'name', 'symbol', 'totalSupply', 'transfer', 'transferFrom'],
  caller: ['bump', 'bumpBy', 'counter', 'tryCall'],
};

interface BinaryenModule {
  emitText(): string;
}
// Binaryen (AssemblyScript's own backend) as a second, independent reader of the compiled code.
const binaryen = (await import('assemblyscript/binaryen' as string)).default as { readBinary(b: Uint8Array): BinaryenModule };

const compiled = new Map<string, CompiledContract>();
async function example(name: string): Promise<CompiledContract> {
  let c = compiled.get(name);
  if (!c) {
    c = await compileContract(join(EXAMPLES, `${name}.ts`));
    compiled.set(name, c);
  }
  return c;
}

const Examples = suite('contract: examples');

for (const name of Object.keys(DOCUMENTED)) {
  Examples(`${name}: exports init and exactly the documented methods, imports only host functions with the ABI's signatures`, async () => {
    const c = await example(name);
    assert.is(c.hasInit, true);
    assert.equal(c.methods, DOCUMENTED[name]);
    assert.equal(c.warnings, []);

    const engineSeen = engineImports(c.wasm);
    assert.ok(engineSeen.length > 0);
    for (const imp of engineSeen) {
      assert.is(imp.module, HOST_MODULE, `${name} imports ${imp.module}.${imp.name}`);
      assert.is(imp.kind, 'function');
      assert.ok(HOST_SIGNATURES.get(imp.name), `${name}: ${imp.name} is a host function`);
    }
    const m = parseModule(c.wasm);
    for (const imp of m.imports) assert.equal(m.types[imp.typeIndex], HOST_SIGNATURES.get(imp.name), `${name}: signature of ${imp.name}`);
    assert.equal(c.imports, m.imports.map((i) => i.name).sort());

    const exported = engineExports(c.wasm);
    assert.equal(exported.filter((e) => e.kind === 'memory').map((e) => e.name), ['memory']);
    assert.equal(exported.filter((e) => e.kind === 'function').map((e) => e.name).sort(), [...DOCUMENTED[name]!, 'init'].sort(), 'no runtime helpers or other functions leak out as exports');
  });

  Examples(`${name}: no floating point, no start function, no bulk-memory instructions, one memory capped at ${MAX_MEMORY_PAGES} pages`, async () => {
    const c = await example(name);
    const m = parseModule(c.wasm);
    assert.is(m.start, undefined);
    assert.is(m.memories.length, 1);
    assert.is(m.memories[0]!.max, MAX_MEMORY_PAGES);
    const text = binaryen.readBinary(c.wasm).emitText();
    assert.not.match(text, /\bf(32|64)\b/, 'binaryen sees no f32/f64 type or instruction');
    assert.not.match(text, /\(start /, 'binaryen sees no start function');
    assert.not.match(text, /memory\.(copy|fill|init)/, 'binaryen sees no bulk-memory instruction');
  });

  Examples(`${name}: dist/contracts/${name}.wasm (built by npm run build) is byte-identical to a fresh compile`, async () => {
    const c = await example(name);
    const built = new Uint8Array(await readFile(join(BUILT, `${name}.wasm`)));
    assert.ok(Buffer.from(built).equals(Buffer.from(c.wasm)), 'the compile is deterministic and the build step produced it');
  });
}

Examples.run();

const Rejected = suite('contract: contracts the VM would refuse fail at build time');

/** Compiles `source` saved as `file` in a fresh temp dir (away from the repository: the SDK resolves from anywhere). */
async function compileSource(file: string, source: string): Promise<CompiledContract> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, file), source);
    return compileContract(join(dir, file));
  });
}

async function rejection(file: string, source: string, code: string): Promise<ContractRejectedError> {
  try {
    await compileSource(file, source);
  } catch (err) {
    assert.instance(err, ContractRejectedError, String(err));
    assert.is((err as ContractRejectedError).code, code);
    return err as ContractRejectedError;
  }
  assert.unreachable(`${file} should be refused`);
  throw new Error('unreachable');
}

Rejected('a contract outside the repository imports the SDK by name and builds', async () => {
  const c = await compileSource('tiny.ts', 'import { Result, Context } from "svc-sdk";\nexport function now(): void { Result.u64(Context.blockNumber()); }\n');
  assert.equal(c.methods, ['now']);
  assert.is(c.hasInit, false);
  // revert comes from AssemblyScript's own checks (a typed array's length, an index), routed from abort.
  assert.equal(c.imports, ['block_number', 'revert', 'set_return']);
});

Rejected('floating point is refused with the reason and the fix', async () => {
  const err = await rejection('float.ts', 'import { Args, Result } from "svc-sdk";\nexport function half(): void { Result.u64(<u64>(<f64>Args.input().u64() * 0.5)); }\n', 'CONTRACT_FLOAT');
  assert.match(err.message, /^\S*\/float\.ts would be refused at deployment: function \d+: floating-point .+; float results may differ across machines, use integer types/);
});

Rejected('a module-level computed value (which needs a start function) is refused', async () => {
  const err = await rejection('start.ts', 'import { Result, Storage } from "svc-sdk";\nconst SLOT = Storage.slot("x");\nexport function f(): void { Result.bytes(SLOT); }\n', 'CONTRACT_START_FUNCTION');
  assert.match(err.message, /^\S*\/start\.ts needs a start function .*compute the value inside a function$/);
});

Rejected('an import outside "svc" and a host function with the wrong signature are refused', async () => {
  const env = await rejection('env.ts', '@external("env", "now") declare function now(): i64;\nexport function f(): void { now(); }\n', 'CONTRACT_FORBIDDEN_IMPORT');
  assert.match(env.message, /^\S*\/env\.ts would be refused at deployment: import env\.now is not allowed: only the host functions of module "svc" .*; contracts import only the svc host functions/);
  const sig = await rejection('sig.ts', '@external("svc", "gas_left") declare function gl(): i32;\nexport function f(): void { gl(); }\n', 'CONTRACT_FORBIDDEN_IMPORT');
  assert.match(sig.message, /^\S*\/sig\.ts would be refused at deployment: import svc\.gas_left has signature \(\) -> \(i32\), expected \(\) -> \(i64\);/);
  const unknown = await rejection('unknown.ts', '@external("svc", "selfdestruct") declare function sd(): void;\nexport function f(): void { sd(); }\n', 'CONTRACT_FORBIDDEN_IMPORT');
  assert.match(unknown.message, /^\S*\/unknown\.ts would be refused at deployment: import svc\.selfdestruct is not allowed/);
});

Rejected('checkModule is the deployment check: the same refusals with the same codes, plus the SDK\'s start-function rule', () => {
  const MEM = '(memory (export "memory") 1)';
  const cases: Array<[string, string]> = [
    [`(module ${MEM} (func (export "f") (drop (f64.const 1))))`, 'CONTRACT_FLOAT'],
    [`(module (memory 1 ${MAX_MEMORY_PAGES + 1}))`, 'CONTRACT_MEMORY'],
    [`(module ${MEM} (global $g (mut i64) (i64.const 0)) (export "__svc_gas" (global $g)))`, 'CONTRACT_RESERVED_EXPORT'],
    [`(module (import "svc" "caller" (func (param i64))) ${MEM})`, 'CONTRACT_FORBIDDEN_IMPORT'],
  ];
  for (const [text, code] of cases) {
    const wasm = wat(text);
    assert.throws(() => validateDeploy(deployData(wasm)), (e: unknown) => e instanceof ContractModuleError && e.code === code, `deployment refuses ${code}`);
    assert.throws(() => checkModule('m.wasm', wasm), (e: unknown) => e instanceof ContractRejectedError && e.code === code && e.message.startsWith('m.wasm would be refused at deployment: '), `the build refuses ${code}`);
  }
  const start = wat(`(module ${MEM} (func $s) (start $s))`);
  validateDeploy(deployData(start));
  assert.throws(() => checkModule('s.wasm', start), (e: unknown) => e instanceof ContractRejectedError && e.code === 'CONTRACT_START_FUNCTION');
});

Rejected('checkModule lists methods by the VM\'s rule: () -> () exports, not init, not starting with _', () => {
  const wasm = wat(`(module (import "svc" "gas_left" (func $g (result i64))) (memory (export "memory") 1)
    (func (export "b")) (func (export "a")) (func (export "init")) (func (export "_hidden"))
    (func (export "withParam") (param i32)) (func (export "withResult") (result i32) (i32.const 0)))`);
  assert.equal(checkModule('m.wasm', wasm), { methods: ['a', 'b'], hasInit: true, imports: ['gas_left'] });
  assert.equal(checkModule('n.wasm', wat('(module (memory 1) (func (export "only")))')), { methods: ['only'], hasInit: false, imports: [] });
});

Rejected('a compile error names file, line and column of each error', async () => {
  const source = 'import { Result } from "svc-sdk";\nexport function f(): void {\n  Result.u64(missingName + 1);\n}\n';
  try {
    await compileSource('broken.ts', source);
    assert.unreachable('broken.ts should not compile');
  } catch (err) {
    assert.instance(err, ContractCompileError, String(err));
    const e = err as ContractCompileError;
    assert.is(e.code, 'COMPILE_FAILED');
    assert.equal(e.diagnostics.map((d) => [d.severity, d.file, d.line, d.column]), [['error', e.diagnostics[0]!.file, 3, 14]]);
    assert.match(e.diagnostics[0]!.file!, /broken\.ts$/);
    assert.match(e.message, /^\S*\/broken\.ts does not compile: \S*\/broken\.ts:3:14: Cannot find name 'missingName'$/);
  }
});

Rejected.run();
