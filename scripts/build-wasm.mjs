#!/usr/bin/env node
/**
 * Compiles svc's own WebAssembly modules (wasm/<name>/*.ts, AssemblyScript) to dist/wasm/<name>.wasm;
 * part of `npm run build`, so `npm ci` produces them. Today: the ML-DSA-65 verifier with its
 * key cache (wasm/mldsa65/verify.ts), loaded by src/core/crypto/mldsa-wasm.ts.
 */
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const { default: asc } = await import('assemblyscript/asc');
// maximumMemory (64 KiB pages): the verifier's key cache is bounded by it as well as by its entry count.
const modules = [{ source: join('wasm', 'mldsa65', 'verify.ts'), out: join('dist', 'wasm', 'mldsa65.wasm'), args: ['--maximumMemory', '2048'] }];
await mkdir(join(root, 'dist', 'wasm'), { recursive: true });
for (const m of modules) {
  const stderr = asc.createMemoryStream();
  // No runtime (the module allocates nothing), no assertions, optimised for speed.
  const { error } = await asc.main([join(root, m.source), '--runtime', 'stub', '--optimizeLevel', '3', '--noAssert', ...m.args, '--outFile', join(root, `${m.out}.tmp`)], { stdout: asc.createMemoryStream(), stderr });
  if (error) {
    console.error(`wasm: ${m.source}: ${error.message}\n${stderr.toString()}`);
    process.exit(1);
  }
  await rename(join(root, `${m.out}.tmp`), join(root, m.out));
  console.log(`wasm: ${m.source} -> ${m.out}`);
}
