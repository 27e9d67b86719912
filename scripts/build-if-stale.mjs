#!/usr/bin/env node
/**
 * `npm test`'s build step: runs `npm run build` unless the last build (its stamp, dist/.build-stamp,
 * written when a build completes) is newer than every source the build reads, as make would. On a
 * fresh clone `npm ci` has just built through `prepare`, so CI does not build twice (about 35 s
 * of its time); after any edit the sources are newer and the build runs again.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const STAMP = join(root, 'dist', '.build-stamp');
/** What the build reads: sources, tests, benches, contracts, its scripts and configuration. */
const INPUTS = ['src', 'test', 'bench', 'contracts', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'];

/** The newest modification time under `p` (ms), skipping what builds write (compiled contracts). */
function newest(p) {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return p.endsWith('.wasm') ? 0 : st.mtimeMs;
  let m = st.mtimeMs;
  for (const name of readdirSync(p)) if (name !== 'node_modules') m = Math.max(m, newest(join(p, name)));
  return m;
}

let stamp = 0;
try {
  stamp = statSync(STAMP).mtimeMs;
} catch {
  stamp = 0;
}
const inputs = Math.max(...INPUTS.map((i) => newest(join(root, i))));
if (stamp > 0 && stamp >= inputs) {
  console.log('build is up to date (dist/.build-stamp is newer than every source): not rebuilding');
  process.exit(0);
}
const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
