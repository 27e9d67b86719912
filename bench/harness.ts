/** Shared benchmark plumbing: a time-bounded loop, the machine description and a plain-text table. */
import os from 'node:os';

/** One measured row. */
export interface BenchResult {
  readonly name: string;
  readonly backend: string;
  readonly unit: 'ops/s' | 'MB/s' | 'tx/s' | 'MB' | 'ms' | 's' | 'bytes';
  readonly value: number;
  /** Speed relative to the row's reference (e.g. liboqs / noble, tx verify / raw verify). */
  readonly ratio?: number;
  /** Human reading of `ratio`, shown in the limit/reference column. */
  readonly note?: string;
}

/** The machine a run was measured on. */
export interface MachineInfo {
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  readonly platform: string;
}

/** The longest one piece of work may hold the event loop, in ms: the issues' "a few ms". */
export const EVENT_LOOP_BLOCK_GOAL_MS = 5;

/** The note of an event-loop-block row: its figure against EVENT_LOOP_BLOCK_GOAL_MS. */
export function eventLoopBlockNote(ms: number): string {
  return `${(ms / EVENT_LOOP_BLOCK_GOAL_MS).toFixed(2)}x the ${EVENT_LOOP_BLOCK_GOAL_MS} ms goal (lower is better)`;
}

/** Describes the current machine. */
export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return { node: process.version, cpu: cpus[0]?.model.trim() ?? 'unknown', cores: cpus.length, platform: `${os.platform()} ${os.arch()}` };
}

/** One-line machine header. */
export function formatMachine(m: MachineInfo): string {
  return `node ${m.node} | ${m.cpu} | ${m.cores} cores | ${m.platform}`;
}

/** Calls `fn` repeatedly for about `seconds` after a short warm-up and returns calls per second. */
export function measure(fn: () => unknown, seconds: number): number {
  // Warm-up lets V8 optimise the path and WebAssembly tier up, and estimates the per-call cost.
  const warmMs = Math.min(250, Math.max(20, seconds * 100));
  let warmCalls = 0;
  const w0 = performance.now();
  let w1 = w0;
  do {
    fn();
    warmCalls++;
    w1 = performance.now();
  } while (w1 - w0 < warmMs || warmCalls < 2);
  // Reading the clock after every call would distort sub-microsecond operations, so time batches of about 1 ms.
  const batch = Math.max(1, Math.floor(warmCalls / (w1 - w0)));
  const budgetMs = seconds * 1000;
  let calls = 0;
  const t0 = performance.now();
  let t1 = t0;
  while (t1 - t0 < budgetMs) {
    for (let i = 0; i < batch; i++) fn();
    calls += batch;
    t1 = performance.now();
  }
  return (calls * 1000) / (t1 - t0);
}

/** Returns a function that yields the items of `pool` round-robin. */
export function cycle<T>(pool: readonly T[]): () => T {
  let i = 0;
  return () => pool[i++ % pool.length]!;
}

function formatRate(v: number): string {
  return v.toLocaleString('en-US', { maximumFractionDigits: v < 100 ? 1 : 0 });
}

/** Renders results as an aligned plain-text table. */
export function formatTable(title: string, results: readonly BenchResult[]): string {
  const rows = [
    ['benchmark', 'backend', 'value', 'unit', 'limit/reference'],
    ...results.map((r) => [r.name, r.backend, formatRate(r.value), r.unit, r.note ?? '']),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const line = (row: string[]): string =>
    row.map((cell, c) => (c === 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd();
  return [title, line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** Calls `onEvent` with each JSON line a child writes (the NDJSON of `svc devnet up --json`). */
export function onNdjson<T>(stream: NodeJS.ReadableStream, onEvent: (event: T) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => {
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) onEvent(JSON.parse(line) as T);
  });
}

/** The value at quantile `q` of `xs` (nearest rank). */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
