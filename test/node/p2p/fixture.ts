/**
 * Real libp2p hosts on 127.0.0.1 for the P2P tests (not a test file itself): each in its own temp
 * data directory with its own metrics registry, all stopped and removed by `withHosts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { startP2p } from '../../../src/node/p2p/host.js';
import type { P2pHost, P2pOptions } from '../../../src/node/p2p/types.js';
import { silentLogger } from '../../../src/util/log.js';

/** A genesis hash for tests (any 32 bytes). */
export const GENESIS = '0x' + '11'.repeat(32);

/** One running host and what a test inspects. */
export interface TestHost {
  host: P2pHost;
  registry: Registry;
  dataDir: string;
  options: P2pOptions;
}

/** Starts hosts, runs `fn`, and always stops them and removes their directories. */
export async function withHosts<T>(fn: (start: (opts?: Partial<P2pOptions>) => Promise<TestHost>) => Promise<T>): Promise<T> {
  const started: TestHost[] = [];
  const dirs: string[] = [];
  const start = async (opts: Partial<P2pOptions> = {}): Promise<TestHost> => {
    const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'svc-p2p-')));
    if (!opts.dataDir) dirs.push(dataDir);
    const registry = opts.metrics ?? new Registry();
    const options: P2pOptions = { layer: 'beacon', host: '127.0.0.1', port: 0, bootnodes: [], dataDir, genesisHash: GENESIS, metrics: registry, log: silentLogger, ...opts };
    const host = await startP2p(options);
    const t = { host, registry, dataDir, options };
    started.push(t);
    return t;
  };
  try {
    return await fn(start);
  } finally {
    await Promise.allSettled(started.map((t) => t.host.stop()));
    await Promise.allSettled(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** Polls `check` until it returns true, failing with `what` after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Value of one metric series (labels must match exactly the given subset), 0 when absent. */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  let sum = 0;
  for (const v of values) {
    if (Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)) sum += v.value;
  }
  return sum;
}

/** Dial address of a host (its first listen multiaddr, with /p2p/<id>). */
export function addrOf(t: TestHost): string {
  const a = t.host.multiaddrs().find((m) => m.includes('/127.0.0.1/'));
  if (!a) throw new Error('host has no loopback address');
  return a.includes('/p2p/') ? a : `${a}/p2p/${t.host.peerId}`;
}
