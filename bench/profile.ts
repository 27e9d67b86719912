/**
 * Main-thread CPU profiles of selected benchmark phases (`--profile DIR`), through the inspector's
 * sampling profiler, and a plain-text summary: self time by function, inclusive time of svc
 * functions, and self time by component (svc module, npm package, Node internals, GC, idle).
 * Run directly (`node dist/bench/profile.js FILE.cpuprofile…`) it summarises saved profiles, such
 * as the per-thread ones `node --cpu-prof` writes for worker threads.
 */
import { readFileSync } from 'node:fs';
import { writeFile, mkdir } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
/** The inspector's (and `node --cpu-prof`'s) .cpuprofile format. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Runs `fn` under the sampling profiler and writes `<dir>/<name>.cpuprofile`; returns fn's result and the profile. */
export async function profiled<T>(dir: string, name: string, fn: () => Promise<T>): Promise<{ value: T; profile: CpuProfile; path: string }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const value = await fn();
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${name}.cpuprofile`);
    await writeFile(path, JSON.stringify(profile));
    return { value, profile, path };
  } finally {
    session.disconnect();
  }
}

/** URL of the compiled tree this file belongs to (dist/ normally): frames under it are svc's own code. */
const ROOT = new URL('../', import.meta.url).href;

function shortUrl(url: string): string {
  if (url.startsWith(ROOT) && !url.includes('/node_modules/')) return url.slice(ROOT.length);
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (m) return `${m[1]}/${m[2]!.split('/').pop()}`;
  return url.replace(/^file:\/\//, '');
}

/** Component a frame belongs to: `svc src/…/file.js`, an npm package, `node internals`, or a V8 pseudo-frame. */
function component(f: CallFrame): string {
  if (f.url === '') return f.functionName.startsWith('(') ? f.functionName : 'native (V8 builtins, C++)';
  if (f.url.startsWith(ROOT) && !f.url.includes('/node_modules/')) return `svc ${f.url.slice(ROOT.length)}`;
  if (f.url.startsWith('wasm://')) return 'WebAssembly (liboqs)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f.url);
  if (m) return m[1]!;
  if (f.url.startsWith('node:')) return f.url.includes('undici') ? 'node:undici' : 'node internals';
  return f.url;
}

function frameKey(f: CallFrame): string {
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
}

/** Plain-text summary of a profile: top self time, top inclusive svc functions, and self time per component. */
export function summarizeProfile(p: CpuProfile, top = 15): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Samples under the inspector (the profiler stopping and serialising itself) are not the workload.
  const inspectorMemo = new Map<number, boolean>();
  const underInspector = (id: number): boolean => {
    let hit = inspectorMemo.get(id);
    if (hit === undefined) {
      const up = parent.get(id);
      hit = byId.get(id)!.callFrame.url === 'node:inspector' || (up !== undefined && underInspector(up));
      inspectorMemo.set(id, hit);
    }
    return hit;
  };
  const selfUs = new Map<number, number>();
  p.samples.forEach((id, i) => {
    if (!underInspector(id)) selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const busy = total - idle;

  const self = new Map<string, number>();
  const comp = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    self.set(frameKey(f), (self.get(frameKey(f)) ?? 0) + us);
    comp.set(component(f), (comp.get(component(f)) ?? 0) + us);
    // Inclusive time: every distinct svc function on the sampled stack (recursion counted once).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (!cf.url.startsWith(`${ROOT}src/`)) continue;
      const k = frameKey(cf);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + us);
    }
  }
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const list = (m: Map<string, number>, n: number): string[] =>
    [...m]
      .filter(([k]) => k !== '(idle)' && !k.startsWith('(idle) '))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [
    `sampled ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s (${((100 * busy) / total).toFixed(0)}%); percentages are of busy time`,
    'self time by component:',
    ...list(comp, 12),
    'self time by function:',
    ...list(self, top),
    'inclusive time of svc functions:',
    ...list(incl, top),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) console.log(`${file}\n${summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)}\n`);
}
