#!/usr/bin/env node
/**
 * Runs the compiled uvu suite (dist/test) in parallel shards: `npm test` (all), or
 * `node scripts/test.mjs [PATTERN] [--shards N]`.
 *
 * Why shards: the end-to-end tests spend most of their wall time waiting for slots on real
 * processes, so two uvu processes side by side finish the suite in far less time on CI's two
 * cores, and every test already has to hold on a loaded machine (deadlines from slot time,
 * free ports, own temp dirs). Files are dealt to shards by an estimated cost so each shard gets
 * a similar share of the slow end-to-end files. Each shard's output is printed whole when it
 * ends (no interleaving); the exit code is non-zero if any shard failed.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const dir = join(root, 'dist', 'test');
const args = process.argv.slice(2);
const shardsAt = args.indexOf('--shards');
const shards = shardsAt >= 0 ? Number(args.splice(shardsAt, 2)[1]) : Number(process.env.SVC_TEST_SHARDS ?? 2);
if (!Number.isInteger(shards) || shards < 1) {
  console.error('--shards must be a positive integer');
  process.exit(2);
}
const pattern = new RegExp(args[0] ?? '\\.test\\.js$', 'i');

/** Every compiled test file (path relative to dist/test, as uvu names it) matching the pattern. */
function testFiles(d, out = []) {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) testFiles(p, out);
    else if (name.endsWith('.test.js') && pattern.test(relative(dir, p))) out.push(relative(dir, p));
  }
  return out;
}

/** Rough cost of a file: end-to-end and process-level files dominate. */
function cost(file) {
  if (file.startsWith('e2e/')) return 20;
  if (/^cli\/|devnet|p2p|crash|process/.test(file)) return 5;
  return 1;
}

const files = testFiles(dir).sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
if (files.length === 0) {
  console.error(`no test file matches ${pattern}`);
  process.exit(1);
}
const groups = Array.from({ length: Math.min(shards, files.length) }, () => ({ files: [], cost: 0 }));
for (const f of files) {
  const g = groups.reduce((a, b) => (b.cost < a.cost ? b : a));
  g.files.push(f);
  g.cost += cost(f);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const uvu = join(root, 'node_modules', 'uvu', 'bin.js');
const started = Date.now();
const results = await Promise.all(
  groups.map(
    (g, i) =>
      new Promise((resolve) => {
        const re = `^(${g.files.map(escape).join('|')})$`;
        const child = spawn(process.execPath, [uvu, dir, re], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
        const chunks = [];
        child.stdout.on('data', (c) => chunks.push(c));
        child.stderr.on('data', (c) => chunks.push(c));
        child.on('close', (code, signal) => {
          process.stdout.write(`\n===== shard ${i + 1}/${groups.length} (${g.files.length} files): ${code === 0 ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} =====\n`);
          process.stdout.write(Buffer.concat(chunks));
          resolve(code === 0);
        });
      }),
  ),
);
const ok = results.every(Boolean);
console.log(`\n${ok ? 'all shards passed' : 'some shard FAILED'} in ${Math.round((Date.now() - started) / 1000)} s (${files.length} files, ${groups.length} shards)`);
process.exit(ok ? 0 : 1);
