/**
 * CPU accounting of a benchmark phase: this process's threads from /proc/self/task (Linux;
 * elsewhere only the process total from process.cpuUsage), an optional load-generator child
 * process, and what the rest of the machine used meanwhile (/proc/stat), which flags runs
 * disturbed by other processes. Threads are attributed to roles by id: the main thread is the
 * one whose id is the process id; callers name the threads a step created (the node's verifier
 * workers); the rest are `other` (V8 GC and compiler helpers, libuv, the inspector).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const TASKS = '/proc/self/task';
const HAS_PROC = existsSync(TASKS);
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) per thread id; empty without /proc. */
export function threadCpu(): Map<number, number> {
  const out = new Map<number, number>();
  if (!HAS_PROC) return out;
  for (const tid of readdirSync(TASKS)) {
    try {
      const stat = readFileSync(`${TASKS}/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND);
    } catch {
      // The thread exited between listing and reading.
    }
  }
  return out;
}

/**
 * CPU seconds the calling thread has run (/proc/thread-self/schedstat, nanoseconds: exact over a
 * short phase where the tick-based /proc stat fields are not), or undefined without /proc.
 */
export function ownThreadCpuSeconds(): number | undefined {
  if (!HAS_PROC) return undefined;
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return undefined;
  }
}

/** Thread ids alive now. */
export function threadIds(): Set<number> {
  return new Set(threadCpu().keys());
}

/** Busy CPU seconds of the whole machine since boot, or undefined without /proc. */
function machineBusy(): number | undefined {
  if (!HAS_PROC) return undefined;
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - f[3]! - f[4]!) / TICKS_PER_SECOND;
}

/** CPU used during a phase. */
export interface CpuSplit {
  wallSeconds: number;
  /** This process (all threads), in cores: CPU seconds / wall seconds. */
  cores: number;
  /** CPU seconds per role: main, verifiers, other (Linux only), and `load generator` (a child process) when given. */
  seconds: Record<string, number>;
  /** Cores the rest of the machine kept busy meanwhile (Linux only): above ~0.1 the figures are disturbed. */
  otherProcessesCores?: number;
}

/**
 * Starts measuring. `finish(wallSeconds, roles, clientSeconds)` returns the split; `roles` maps a
 * role name to the thread ids it owns and `clientSeconds` is the CPU a load-generator child used.
 */
export function startCpu(): { finish(wallSeconds: number, roles: Record<string, Set<number>>, clientSeconds?: number): CpuSplit } {
  const before = threadCpu();
  const m0 = machineBusy();
  const p0 = process.cpuUsage();
  return {
    finish(wallSeconds, roles, clientSeconds) {
      const p = process.cpuUsage(p0);
      const m1 = machineBusy();
      const after = threadCpu();
      const seconds: Record<string, number> = {};
      if (HAS_PROC) {
        for (const [tid, cpu] of after) {
          const role = tid === process.pid ? 'main' : (Object.entries(roles).find(([, ids]) => ids.has(tid))?.[0] ?? 'other');
          seconds[role] = (seconds[role] ?? 0) + cpu - (before.get(tid) ?? 0);
        }
      }
      if (clientSeconds !== undefined) seconds['load generator'] = clientSeconds;
      const cores = (p.user + p.system) / 1e6 / wallSeconds;
      const split: CpuSplit = { wallSeconds, cores, seconds };
      if (m0 !== undefined && m1 !== undefined) split.otherProcessesCores = Math.max(0, (m1 - m0 - (clientSeconds ?? 0)) / wallSeconds - cores);
      return split;
    },
  };
}

/**
 * Several measured spans as one: CPU seconds per role add up, and the process's and the rest of
 * the machine's cores are weighted by each span's wall time (so a short disturbed span counts for
 * its share, not more).
 */
export function sumCpu(splits: readonly CpuSplit[]): CpuSplit {
  const seconds: Record<string, number> = {};
  let wallSeconds = 0;
  let coreSeconds = 0;
  let otherCoreSeconds: number | undefined;
  for (const s of splits) {
    wallSeconds += s.wallSeconds;
    coreSeconds += s.cores * s.wallSeconds;
    for (const [role, v] of Object.entries(s.seconds)) seconds[role] = (seconds[role] ?? 0) + v;
    if (s.otherProcessesCores !== undefined) otherCoreSeconds = (otherCoreSeconds ?? 0) + s.otherProcessesCores * s.wallSeconds;
  }
  const split: CpuSplit = { wallSeconds, cores: wallSeconds > 0 ? coreSeconds / wallSeconds : 0, seconds };
  if (otherCoreSeconds !== undefined && wallSeconds > 0) split.otherProcessesCores = otherCoreSeconds / wallSeconds;
  return split;
}

/** `CPU µs/tx: main 228, verifiers 233, …; other processes 0.02 cores` (largest first). */
export function formatCpu(c: CpuSplit, txs: number): string {
  const parts = Object.entries(c.seconds)
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([role, s]) => `${role} ${((s * 1e6) / txs).toFixed(0)}`);
  const body = parts.length ? `CPU µs/tx: ${parts.join(', ')}` : `process CPU ${c.cores.toFixed(2)} cores`;
  return c.otherProcessesCores === undefined ? body : `${body}; other processes ${c.otherProcessesCores.toFixed(2)} cores`;
}

/** This process's CPU time in ms, all threads (getrusage: microseconds, exact at any instant). */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Resolves once the event loop turns quickly again (`runs` consecutive turns under `turnMs`,
 * or `maxMs` passed): a row measuring one operation's block starts after the GC debt of what
 * the bench did before it (a forced gc() of a 300 MB heap leaves sweeping that the next
 * allocations pay on the main thread) is paid, so that debt is not counted as the operation's.
 */
export async function quietLoop(turnMs = 0.5, runs = 5, maxMs = 500): Promise<void> {
  const until = performance.now() + maxMs;
  let quiet = 0;
  let last = performance.now();
  while (quiet < runs && performance.now() < until) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const now = performance.now();
    quiet = now - last < turnMs ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * A chain of setImmediate ticks beside the work: the widest gap between two ticks is the longest
 * the loop was held. A wall gap includes time the OS gave other processes; a process-CPU gap
 * includes V8's parallel GC and libuv's threads, which do not hold the loop. Both bound the main
 * thread's own CPU in the gap from above, so each gap counts the smaller of the two. (The main
 * thread's own counter in /proc/…/schedstat is only brought up to date at scheduler ticks, 4 ms
 * here: too coarse.) Garbage-collection pauses inside a gap (`gc` performance entries) are taken
 * out of it and reported apart: on this VM a scavenge of a freshly built 50,000-entry pool's
 * survivors takes 10–30 ms whatever code happens to be running, so it is not the work's block.
 * `cpuMs` is the work's longest block so counted, `wallMs` the raw widest gap, `gcMs` the
 * longest pause seen.
 */
export function watchLoop(): { stop(): { wallMs: number; cpuMs: number; gcMs: number } } {
  const gaps: Array<{ start: number; end: number; cpu: number }> = [];
  const pauses: Array<{ start: number; end: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  let lastCpu = processCpuMs();
  let running = true;
  const mark = (): void => {
    const now = performance.now();
    const nowCpu = processCpuMs();
    gaps.push({ start: last, end: now, cpu: nowCpu - lastCpu });
    last = now;
    lastCpu = nowCpu;
  };
  const tick = (): void => {
    mark();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      running = false;
      mark();
      for (const e of observer.takeRecords()) pauses.push({ start: e.startTime, end: e.startTime + e.duration });
      observer.disconnect();
      let wall = 0;
      let cpu = 0;
      for (const g of gaps) {
        let gc = 0;
        for (const p of pauses) gc += Math.max(0, Math.min(p.end, g.end) - Math.max(p.start, g.start));
        wall = Math.max(wall, g.end - g.start);
        cpu = Math.max(cpu, Math.max(0, Math.min(g.end - g.start, g.cpu) - gc));
      }
      return { wallMs: wall, cpuMs: cpu, gcMs: pauses.reduce((m, p) => Math.max(m, p.end - p.start), 0) };
    },
  };
}
