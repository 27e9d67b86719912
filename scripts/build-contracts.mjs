#!/usr/bin/env node
/**
 * Compiles the example contracts (contracts/examples/*.ts) to dist/contracts/*.wasm with the same
 * compiler path as `svc contract build`; part of `npm run build`, so `npm ci` produces them.
 * Runs after tsc (it uses dist/src/contract/compile.js). One at a time: each compile is
 * CPU-bound and the CI box has two cores.
 */
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const { compileContract, formatDiagnostic } = await import(join(root, 'dist', 'src', 'contract', 'compile.js'));
const examples = join(root, 'contracts', 'examples');
const out = join(root, 'dist', 'contracts');
await mkdir(out, { recursive: true });
for (const name of (await readdir(examples)).filter((f) => f.endsWith('.ts')).sort()) {
  try {
    const built = await compileContract(join(examples, name));
    for (const w of built.warnings) console.error(`warning: ${formatDiagnostic(w)}`);
    const target = join(out, name.replace(/\.ts$/, '.wasm'));
    await writeFile(`${target}.tmp`, built.wasm);
    await rename(`${target}.tmp`, target);
    console.log(`contracts: ${name} -> dist/contracts/${name.replace(/\.ts$/, '.wasm')} (${built.wasm.length} bytes; methods ${built.methods.join(', ')})`);
  } catch (err) {
    console.error(`contracts: ${name}: ${err.message}`);
    process.exitCode = 1;
  }
}
