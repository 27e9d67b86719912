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

/** Slot length the test hosts pace discovery by (fast, so redials and peer exchange show within seconds). */
export const TEST_SLOT_MS = 1_000;

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
    const options: P2pOptions = { layer: 'beacon', host: '127.0.0.1', port: 0, bootnodes: [], dataDir, genesisHash: GENESIS, slotMs: TEST_SLOT_MS, metrics: registry, log: silentLogger, ...opts };
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

/** What a raw libp2p node for adversarial tests is built with. */
export interface RawNodeOptions {
  /** `hybrid` (our encrypter, with `genesisHash`) or `plain` (stock `/noise`). */
  encrypter: 'hybrid' | 'plain';
  genesisHash?: string;
}

/**
 * A bare libp2p node (no gossipsub, no P2pHost) that tests drive by hand: raw protocol streams with
 * garbage frames, a stock-Noise peer. Stopped by the caller.
 */
export async function rawNode(opts: RawNodeOptions) {
  await import('../../../src/node/p2p/polyfill.js');
  const { createLibp2p } = await import('libp2p');
  const { tcp } = await import('@libp2p/tcp');
  const { yamux } = await import('@libp2p/yamux');
  const { noise } = await import('@chainsafe/libp2p-noise');
  const { hybridNoise } = await import('../../../src/node/p2p/hybrid-noise.js');
  const genesis = new Uint8Array(Buffer.from((opts.genesisHash ?? GENESIS).slice(2), 'hex'));
  return createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    streamMuxers: [yamux()],
    connectionEncrypters: [opts.encrypter === 'plain' ? noise() : hybridNoise({ genesisHash: genesis })],
    connectionGater: { denyDialMultiaddr: () => false },
  });
}

/** A TCP proxy between two hosts: records both directions and can flip one byte at an offset. */
export interface WireProxy {
  port: number;
  /** Client-to-server and server-to-client bytes of every connection, in order. */
  captured: { c2s: Buffer[]; s2c: Buffer[] };
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`; `flip` XORs 0x01 into the byte at `offset` of each connection's `direction`. */
export async function startProxy(targetPort: number, flip?: { direction: 'c2s' | 's2c'; offset: number }): Promise<WireProxy> {
  const net = await import('node:net');
  const captured = { c2s: [] as Buffer[], s2c: [] as Buffer[] };
  const sockets = new Set<import('node:net').Socket>();
  const relay = (from: import('node:net').Socket, to: import('node:net').Socket, direction: 'c2s' | 's2c'): void => {
    let seen = 0;
    from.on('data', (chunk: Buffer) => {
      const data = Buffer.from(chunk);
      if (flip?.direction === direction && flip.offset >= seen && flip.offset < seen + data.length) data[flip.offset - seen] ^= 0x01;
      seen += data.length;
      captured[direction].push(data);
      to.write(data);
    });
    from.on('end', () => to.end());
    from.on('error', () => to.destroy());
    from.on('close', () => to.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    relay(client, upstream, 'c2s');
    relay(upstream, client, 's2c');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    captured,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The TCP port of a host's loopback listen address. */
export function portOf(t: TestHost): number {
  const m = /\/tcp\/(\d+)/.exec(addrOf(t));
  if (!m) throw new Error('no tcp port');
  return Number(m[1]);
}
