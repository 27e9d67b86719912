#!/usr/bin/env node
/**
 * Runs the compiled uvu suite (dist/test), three files at a time: `npm test` (all), or
 * `node scripts/test.mjs [PATTERN] [--jobs N] [--record]` (SVC_TEST_JOBS sets the default).
 *
 * Why in parallel: the end-to-end tests spend most of their wall time waiting for slots on real
 * processes, so three test files side by side finish the suite in far less time on CI's two
 * cores (measured on this 2-core machine: 675 s at three, 880 s at two, for 1,750 s of file
 * time), and every test already has to hold on a loaded machine (deadlines from slot time,
 * ports reserved across processes, own temp dirs). Each file runs in its own uvu process; a worker
 * takes the next file as soon as it is free. Each file's output is printed whole when it ends (no
 * interleaving); the exit code is non-zero if any file failed.
 *
 * Order: longest first, by the seconds each file last took (scripts/test-durations.json), so the
 * long files overlap each other and the many short ones fill the gaps at the end instead of a long
 * one starting last and running alone. A file missing from the table (a new one) counts as the
 * longest: starting a short file early costs nothing, starting a long one late sets the suite's
 * length. `--record` writes this run's durations of the files that passed into the table (a run
 * of the whole suite replaces it, so deleted files drop out); commit it when the suite changes.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const dir = join(root, 'dist', 'test');
const args = process.argv.slice(2);
const recordAt = args.indexOf('--record');
const record = recordAt >= 0 && args.splice(recordAt, 1).length === 1;
const jobsAt = args.indexOf('--jobs');
const jobs = jobsAt >= 0 ? Number(args.splice(jobsAt, 2)[1]) : Number(process.env.SVC_TEST_JOBS ?? 3);
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error('--jobs must be a positive integer');
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

const durationsPath = join(root, 'scripts', 'test-durations.json');
/** Seconds each file took when last recorded (file -> seconds). */
const durations = JSON.parse(readFileSync(durationsPath, 'utf8'));
const longestKnown = Math.max(0, ...Object.values(durations));

/** Expected seconds of a file: its last recorded duration, or (unknown: new) above every known one. */
function cost(file) {
  return durations[file] ?? longestKnown + 1;
}

const files = testFiles(dir).sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
if (files.length === 0) {
  console.error(`no test file matches ${pattern}`);
  process.exit(1);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const uvu = join(root, 'node_modules', 'uvu', 'bin.js');
const started = Date.now();
const totals = { total: 0, passed: 0, skipped: 0 };
const failed = [];
/** The lines of each failed file's output that say what failed, repeated at the very end: CI keeps only the log's tail. */
const digests = [];
/** Lines of a failed file's output that name a failure (uvu's report, assertion messages, a test's own "failed" lines), capped. */
function digestOf(plain) {
  const seen = new Set();
  const out = [];
  let afterFail = 0;
  for (const line of plain.split('\n')) {
    const t = line.trim();
    // uvu prints an assertion's message on the line after its FAIL line.
    const wanted = afterFail > 0 || /FAIL|failed|Error|timed out|Expected|Actual|✘/.test(t);
    afterFail = /^FAIL/.test(t) ? 2 : t === '' ? afterFail : Math.max(0, afterFail - 1);
    if (!wanted || t === '' || /^at /.test(t) || seen.has(t)) continue;
    seen.add(t);
    out.push(t.length > 600 ? `${t.slice(0, 600)}…` : t);
    if (out.length === 40) break;
  }
  return out;
}

/** Seconds each file of this run took, for --record. */
const measured = {};
/** CPU seconds each file used (the uvu process and every process it started and reaped). */
const cpu = {};

/**
 * CPU seconds of this runner's reaped children so far (Linux: cutime + cstime of /proc/self/stat,
 * at 100 ticks a second), or undefined elsewhere. A child's whole tree is counted when it is
 * reaped, so the growth across one file's exit is that file's CPU (two files reaped in the same
 * tick share theirs; a process a test detaches, such as `devnet up --detach`'s supervisor, is
 * reaped by init and not counted). The suite is CPU-bound on CI's two cores, so this, not wall
 * time, is what a file costs the run.
 */
function reapedCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}
let reapedBefore = reapedCpuSeconds();

/** Runs one file in its own uvu process; prints its output whole when it ends. */

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [uvu, dir, `^${escape(file)}$`], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      const out = Buffer.concat(chunks).toString('utf8');
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
      for (const key of ['total', 'passed', 'skipped']) {
        const m = new RegExp(`${key}:\\s+(\\d+)`, 'i').exec(plain);
        if (m) totals[key] += Number(m[1]);
      }
      if (code === 0) measured[file] = Math.max(1, Math.round((Date.now() - t0) / 1000));
      const reaped = reapedCpuSeconds();
      if (reaped !== undefined && reapedBefore !== undefined) cpu[file] = reaped - reapedBefore;
      reapedBefore = reaped;
      if (code !== 0) {
        failed.push(`${file} (${signal ?? `exit ${code}`})`);
        digests.push(`----- ${file}\n${digestOf(plain).join('\n')}`);
      }
      const cpuNote = cpu[file] === undefined ? '' : ` (${Math.round(cpu[file])} s CPU)`;
      process.stdout.write(`\n----- ${file}: ${code === 0 ? 'ok' : 'FAILED'} in ${Math.round((Date.now() - t0) / 1000)} s${cpuNote}\n${out}`);
      resolve();
    });
  });
}

/**
 * Files that must not run beside each other: each `svc devnet up` binds the well-known default
 * ports (8546, 8545, 8080, 9000, …, swapping ones already taken), so two devnets planning their
 * ports at the same instant could pick the same one. The bridge file starts two devnets.
 */
const EXCLUSIVE = /^e2e\/(devnet|bridge)/;
const running = new Set();

/** The next queued file that may start now, removed from the queue. */
function nextFile(queue) {
  const busy = [...running].some((f) => EXCLUSIVE.test(f));
  const i = queue.findIndex((f) => !(busy && EXCLUSIVE.test(f)));
  return i < 0 ? undefined : queue.splice(i, 1)[0];
}

// A pool of `jobs` workers, each taking the next file it may run (longest first) as it frees up.
const queue = [...files];
const waiters = [];
await Promise.all(
  Array.from({ length: Math.min(jobs, files.length) }, async () => {
    while (queue.length > 0) {
      const f = nextFile(queue);
      if (f === undefined) {
        // Only exclusive files are left and one is running: wait for a file to finish.
        await new Promise((resolve) => waiters.push(resolve));
        continue;
      }
      running.add(f);
      await runFile(f);
      running.delete(f);
      for (const resolve of waiters.splice(0)) resolve();
    }
  }),
);
if (record) {
  // A whole-suite run replaces the table (deleted files drop out); a partial one updates its files.
  const table = Object.assign(args[0] === undefined ? {} : { ...durations }, measured);
  for (const f of files) if (!(f in measured) && f in durations) table[f] = durations[f];
  const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(durationsPath, JSON.stringify(sorted, null, 2) + '\n');
  console.log(`recorded ${Object.keys(measured).length} durations in ${relative(root, durationsPath)}`);
}
const secs = Math.round((Date.now() - started) / 1000);
const byCpu = Object.entries(cpu).sort(([, a], [, b]) => b - a);
if (byCpu.length > 0) {
  const all = byCpu.reduce((sum, [, c]) => sum + c, 0);
  console.log(`\nCPU: ${Math.round(all)} s in all; the most: ${byCpu.slice(0, 12).map(([f, c]) => `${f} ${Math.round(c)} s`).join(', ')}`);
}
console.log(`\n${totals.passed}/${totals.total} tests passed (${totals.skipped} skipped) in ${files.length} files, ${secs} s, ${jobs} at a time`);
if (failed.length > 0) console.log(`\nWhat failed (each file's whole output is above):\n${digests.join('\n')}\n\nFAILED: ${failed.join(', ')}`);
process.exit(failed.length === 0 && totals.passed + totals.skipped === totals.total ? 0 : 1);
