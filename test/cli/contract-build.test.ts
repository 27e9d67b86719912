/**
 * `svc contract build` as a user runs it: a contract in a temp dir (outside the repository)
 * importing the SDK by name, built to FILE.wasm or --out; broken and refused contracts exit 1
 * with the reason on one line; bad usage exits 2.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliEnv, expectCliError, expectJsonOk, mapLimit, runCli, withTempDir } from '../helpers/cli.js';
import { engineExports } from '../helpers/wasm.js';

/** Two CLI processes at a time: the CI box has two cores. */
const PAR = 2;

const COUNTER = `import { Args, Result, Storage } from "svc-sdk";

function slot(): Uint8Array {
  return Storage.slot("n");
}

export function init(): void {
  Storage.setU64(slot(), Args.input().u64());
}

export function add(): void {
  const n = Storage.getU64(slot()) + Args.input().u64();
  Storage.setU64(slot(), n);
  Result.u64(n);
}
`;
const BROKEN = 'import { Result } from "svc-sdk";\nexport function f(): void {\n  Result.u64(missingName + 1);\n}\n';
const FLOAT = 'import { Args, Result } from "svc-sdk";\nexport function half(): void { Result.u64(<u64>(<f64>Args.input().u64() * 0.5)); }\n';

const Build = suite('cli: contract build');

Build('builds FILE.wasm beside the source and prints size, init, methods and imports', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'adder.ts'), COUNTER);
    const r = await runCli(['contract', 'build', 'adder.ts'], cliEnv(dir), { cwd: dir });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stderr, '');
    const wasm = new Uint8Array(await readFile(join(dir, 'adder.wasm')));
    assert.equal(r.stdout.split('\n'), [
      `Built:    adder.wasm (${wasm.length} bytes)`,
      'Init:     yes (runs once at deployment with the constructor arguments)',
      'Methods:  add',
      'Imports:  svc.input_copy, svc.input_size, svc.revert, svc.set_return, svc.sha3, svc.storage_read, svc.storage_remove, svc.storage_write',
      '',
    ]);
    assert.equal(engineExports(wasm).map((e) => e.name).sort(), ['add', 'init', 'memory']);
  });
});

Build('--json and --out: one JSON document, the output directory created, the file replaced on a rebuild', async () => {
  await withTempDir(async (dir) => {
    const src = join(dir, 'src', 'adder.ts');
    const out = join(dir, 'build', 'deep', 'adder.wasm');
    await mkdir(join(dir, 'src'));
    await writeFile(src, COUNTER);
    // Sequential on purpose: the second build replaces the first one's output.
    for (let i = 0; i < 2; i++) {
      const doc = expectJsonOk(await runCli(['contract', 'build', src, '--out', out, '--json'], cliEnv(dir)));
      const wasm = await readFile(out);
      assert.equal(doc, { source: src, out, size: wasm.length, init: true, methods: ['add'], imports: doc.imports, warnings: [] });
      assert.ok(doc.imports.includes('storage_write'));
    }
  });
});

Build('a contract that does not compile: exit 1, COMPILE_FAILED, the diagnostic located, nothing written', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'broken.ts'), BROKEN);
    const [human, json] = await mapLimit([false, true], PAR, (asJson) =>
      runCli(['contract', 'build', 'broken.ts', ...(asJson ? ['--json'] : [])], cliEnv(dir), { cwd: dir }),
    );
    for (const [r, asJson] of [[human!, false], [json!, true]] as const) {
      expectCliError(r, { exit: 1, code: 'COMPILE_FAILED', message: "broken.ts does not compile: broken.ts:3:14: Cannot find name 'missingName'", json: asJson });
    }
    assert.not.ok(existsSync(join(dir, 'broken.wasm')));
  });
});

Build('a contract the VM would refuse (floating point): exit 1, the VM\'s CONTRACT_FLOAT, nothing written', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'float.ts'), FLOAT);
    const r = await runCli(['contract', 'build', 'float.ts', '--json'], cliEnv(dir), { cwd: dir });
    expectCliError(r, { exit: 1, code: 'CONTRACT_FLOAT', messageStartsWith: 'float.ts would be refused at deployment: function ', messageIncludes: ['floating-point', 'use integer types'], json: true });
    assert.not.ok(existsSync(join(dir, 'float.wasm')));
  });
});

Build('bad usage exits 2 (not a .ts file, no file, an empty --out); a missing file exits 1', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'adder.ts'), COUNTER);
    const cases = [
      { args: ['contract', 'build', 'adder.js', '--json'], exit: 2, code: 'USAGE', message: 'FILE must be an AssemblyScript source ending in .ts, got adder.js' },
      { args: ['contract', 'build', '--json'], exit: 2, code: 'USAGE', messageStartsWith: 'Missing 1 required arg' },
      { args: ['contract', 'build', 'adder.ts', '--out', ' ', '--json'], exit: 2, code: 'USAGE', message: '--out must not be empty' },
      { args: ['contract', 'build', 'nowhere.ts', '--json'], exit: 1, code: 'FILE_NOT_FOUND', message: 'nowhere.ts not found' },
    ];
    const results = await mapLimit(cases, PAR, (c) => runCli(c.args, cliEnv(dir), { cwd: dir }));
    results.forEach((r, i) => {
      const { args: _args, ...want } = cases[i]!;
      expectCliError(r, { ...want, json: true });
    });
    assert.not.ok(existsSync(join(dir, 'adder.wasm')));
  });
});

Build.run();
