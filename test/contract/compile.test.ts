/**
 * The contract compiler and the SDK as compiled: the examples build into modules the VM's rules
 * accept (only svc.* host imports with the ABI's signatures, no floats, no start function, one
 * exported memory), expose the documented methods, and match what `npm run build` put in
 * dist/contracts; contracts the VM would refuse fail at build time with a clear reason.
 * Running contracts needs the VM (src/node/execution/vm), which has its own tests.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compileContract, ContractCompileError, ContractRejectedError, MAX_MEMORY_PAGES, type CompiledContract } from '../../src/contract/compile.js';
import { HOST_FUNCTIONS, HOST_MODULE } from '../../src/contract/host-abi.js';
import { inspectWasm } from '../../src/contract/inspect.js';
import { REPO_ROOT, withTempDir } from '../helpers/cli.js';
import { engineExports, engineImports } from '../helpers/wasm.js';

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
      assert.ok(HOST_FUNCTIONS[imp.name], `${name}: ${imp.name} is a host function`);
    }
    for (const imp of inspectWasm(c.wasm).imports) assert.equal(imp.sig, { params: [...HOST_FUNCTIONS[imp.name]!.params], results: [...HOST_FUNCTIONS[imp.name]!.results] }, `${name}: signature of ${imp.name}`);

    const exported = engineExports(c.wasm);
    assert.equal(exported.filter((e) => e.kind === 'memory').map((e) => e.name), ['memory']);
    assert.equal(exported.filter((e) => e.kind === 'function').map((e) => e.name).sort(), [...DOCUMENTED[name]!, 'init'].sort(), 'no runtime helpers or other functions leak out as exports');
  });

  Examples(`${name}: no floating point, no start function, no bulk-memory instructions, one memory capped at ${MAX_MEMORY_PAGES} pages`, async () => {
    const c = await example(name);
    const summary = inspectWasm(c.wasm);
    assert.is(summary.float, null);
    assert.is(summary.hasStart, false);
    assert.is(summary.memories.length, 1);
    assert.is(summary.memories[0]!.max, MAX_MEMORY_PAGES);
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

async function rejection(file: string, source: string): Promise<ContractRejectedError> {
  try {
    await compileSource(file, source);
  } catch (err) {
    assert.instance(err, ContractRejectedError, String(err));
    assert.is((err as ContractRejectedError).code, 'CONTRACT_INVALID');
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
  const err = await rejection('float.ts', 'import { Args, Result } from "svc-sdk";\nexport function half(): void { Result.u64(<u64>(<f64>Args.input().u64() * 0.5)); }\n');
  assert.match(err.message, /^\S*\/float\.ts uses floating point \(.+\): the VM refuses floats, use integer types/);
});

Rejected('a module-level computed value (which needs a start function) is refused', async () => {
  const err = await rejection('start.ts', 'import { Result, Storage } from "svc-sdk";\nconst SLOT = Storage.slot("x");\nexport function f(): void { Result.bytes(SLOT); }\n');
  assert.match(err.message, /^\S*\/start\.ts needs a start function .*compute the value inside a function$/);
});

Rejected('an import outside "svc" and a host function with the wrong signature are refused', async () => {
  const env = await rejection('env.ts', '@external("env", "now") declare function now(): i64;\nexport function f(): void { now(); }\n');
  assert.match(env.message, /^\S*\/env\.ts imports env\.now, which contracts cannot use: the only import module is "svc"/);
  const sig = await rejection('sig.ts', '@external("svc", "gas_left") declare function gl(): i32;\nexport function f(): void { gl(); }\n');
  assert.match(sig.message, /^\S*\/sig\.ts imports svc\.gas_left as \(\) -> \(i32\), but the host function is \(\) -> \(i64\)$/);
  const unknown = await rejection('unknown.ts', '@external("svc", "selfdestruct") declare function sd(): void;\nexport function f(): void { sd(); }\n');
  assert.match(unknown.message, /^\S*\/unknown\.ts imports svc\.selfdestruct, which is not a host function$/);
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
