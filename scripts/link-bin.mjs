#!/usr/bin/env node
/**
 * Links node_modules/.bin/svc to this checkout's bin/run.js (run by `prepare`, so `npm ci` leaves it).
 *
 * Why not package.json's `bin`: `npm ci` links no bin of the root package, and when the root
 * package itself declares the bin `npx svc` asks for, npm exec installs the checkout into its own
 * cache (~/.npm/_npx) on first use so that the bin gets linked there: about a minute of silent
 * spinner before the README's first command printed anything. With no root `bin` and this link in
 * node_modules/.bin, `npx svc` finds the local bin and runs it at once, installing nothing.
 */
import { chmodSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'svc');
const target = join('..', '..', 'bin', 'run.js');

mkdirSync(binDir, { recursive: true });
let current;
try {
  current = readlinkSync(link);
} catch {
  current = undefined;
}
if (current !== target) {
  rmSync(link, { force: true });
  symlinkSync(target, link);
}
chmodSync(join(root, 'bin', 'run.js'), 0o755);
