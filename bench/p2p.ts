/**
 * P2P handshake bench (`npm run bench -- --only p2p`): the hybrid Noise XX + ML-KEM-1024 handshake
 * against stock Noise XX, on loopback with real libp2p nodes (TCP, multistream-select, yamux).
 * Handshake time is dial-to-connection (p50 of many fresh connections); bytes are everything both
 * sides put on the wire up to the open connection, counted by a TCP relay; throughput is one yamux
 * stream through the encrypter. Each row is shown against plain Noise, its reference.
 */
import '../src/node/p2p/polyfill.js';
import { createServer, connect, type Socket } from 'node:net';
import { formatTable, type BenchResult } from './harness.js';

const HANDSHAKES = 60;
const WARMUP = 5;
const THROUGHPUT_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;
const PROTO = '/svc/bench/sink/1';
/** Allowed cost of the hybrid handshake relative to plain Noise (the limits the ratios are read against). */
const TIME_LIMIT_RATIO = 4;
/** The KEM adds exactly its two messages (public key and ciphertext, 1568 bytes each) plus the longer protocol id. */
const KEM_BYTES = 2 * 1568;
const BYTES_LIMIT_EXTRA = KEM_BYTES + 64;

type Kind = 'hybrid' | 'plain';

async function makeNode(kind: Kind) {
  const { createLibp2p } = await import('libp2p');
  const { tcp } = await import('@libp2p/tcp');
  const { yamux } = await import('@libp2p/yamux');
  const { noise } = await import('@chainsafe/libp2p-noise');
  const { hybridNoise } = await import('../src/node/p2p/hybrid-noise.js');
  return createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    streamMuxers: [yamux()],
    connectionEncrypters: [kind === 'plain' ? noise() : hybridNoise({ genesisHash: new Uint8Array(32).fill(1) })],
    connectionGater: { denyDialMultiaddr: () => false },
    // The bench opens connections back to back from one address, which libp2p rate-limits by default.
    connectionManager: { inboundConnectionThreshold: 10_000 },
  });
}

/** A TCP relay that counts the bytes of the connection currently passing through it. */
async function countingRelay(targetPort: number): Promise<{ port: number; bytes: () => number; reset: () => void; close: () => Promise<void> }> {
  let bytes = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    // Without this the relay's own Nagle delays would dominate a sub-millisecond handshake.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.on('data', (d: Buffer) => {
        bytes += d.length;
        to.write(d);
      });
      from.on('close', () => to.destroy());
      from.on('error', () => to.destroy());
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    bytes: () => bytes,
    reset: () => {
      bytes = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

interface KindFigures {
  p50Ms: number;
  p99Ms: number;
  bytes: number;
  mbPerSecond: number;
}

async function measureKind(kind: Kind, say: (m: string) => void): Promise<KindFigures> {
  const { multiaddr } = await import('@multiformats/multiaddr');
  const server = await makeNode(kind);
  const client = await makeNode(kind);
  try {
    const serverAddr = server.getMultiaddrs()[0]!;
    const port = Number(/\/tcp\/(\d+)/.exec(serverAddr.toString())![1]);
    const relay = await countingRelay(port);
    const target = multiaddr(`/ip4/127.0.0.1/tcp/${relay.port}/p2p/${server.peerId.toString()}`);
    const times: number[] = [];
    const bytes: number[] = [];
    for (let i = 0; i < WARMUP + HANDSHAKES; i++) {
      relay.reset();
      const t0 = performance.now();
      await client.dial(target);
      const ms = performance.now() - t0;
      const b = relay.bytes();
      await client.hangUp(server.peerId);
      if (i >= WARMUP) {
        times.push(ms);
        bytes.push(b);
      }
    }
    times.sort((a, b) => a - b);
    bytes.sort((a, b) => a - b);
    await relay.close();

    // Throughput: one stream, THROUGHPUT_BYTES through the encrypter, time until the receiver has all.
    let received = 0;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    await server.handle(PROTO, async (stream) => {
      for await (const chunk of stream) {
        received += chunk.byteLength;
        if (received >= THROUGHPUT_BYTES) done();
      }
    });
    const stream = await client.dialProtocol(multiaddr(`${serverAddr.toString()}`), PROTO);
    const chunk = new Uint8Array(CHUNK).fill(0x5a);
    const t0 = performance.now();
    for (let sent = 0; sent < THROUGHPUT_BYTES; sent += CHUNK) {
      if (!stream.send(chunk)) await stream.onDrain();
    }
    await finished;
    const seconds = (performance.now() - t0) / 1000;
    await stream.close();
    const figures = { p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99), bytes: percentile(bytes, 0.5), mbPerSecond: THROUGHPUT_BYTES / 1e6 / seconds };
    say(`${kind}: handshake p50 ${figures.p50Ms.toFixed(2)} ms, ${figures.bytes} bytes, ${figures.mbPerSecond.toFixed(0)} MB/s`);
    return figures;
  } finally {
    await client.stop();
    await server.stop();
  }
}

/** Runs the P2P suite and prints its table. */
export async function runP2pBench(opts: { print?: boolean }): Promise<{ results: BenchResult[] }> {
  const say = (msg: string): void => {
    if (opts.print !== false) process.stderr.write(`  ${msg}\n`);
  };
  const plain = await measureKind('plain', say);
  const hybrid = await measureKind('hybrid', say);
  const timeRatio = hybrid.p50Ms / plain.p50Ms;
  const bytesRatio = hybrid.bytes / plain.bytes;
  const results: BenchResult[] = [
    { name: 'handshake p50, plain Noise XX', backend: `libp2p dial, ${HANDSHAKES} conns`, unit: 'ms', value: plain.p50Ms, note: `reference (p99 ${plain.p99Ms.toFixed(2)} ms)` },
    { name: 'handshake p50, Noise XX + ML-KEM-1024', backend: `libp2p dial, ${HANDSHAKES} conns`, unit: 'ms', value: hybrid.p50Ms, ratio: timeRatio, note: `${timeRatio.toFixed(2)}x plain (limit ${TIME_LIMIT_RATIO}x; p99 ${hybrid.p99Ms.toFixed(2)} ms)` },
    { name: 'handshake bytes, plain Noise XX', backend: 'both directions, to open', unit: 'bytes', value: plain.bytes, note: 'reference' },
    { name: 'handshake bytes, Noise XX + ML-KEM-1024', backend: 'both directions, to open', unit: 'bytes', value: hybrid.bytes, ratio: bytesRatio, note: `${bytesRatio.toFixed(2)}x plain; +${hybrid.bytes - plain.bytes} bytes (limit +${BYTES_LIMIT_EXTRA}: KEM ${KEM_BYTES} + protocol id)` },
    { name: 'encrypted stream, plain Noise', backend: `yamux, ${THROUGHPUT_BYTES / 2 ** 20} MiB`, unit: 'MB/s', value: plain.mbPerSecond, note: 'reference' },
    { name: 'encrypted stream, hybrid', backend: `yamux, ${THROUGHPUT_BYTES / 2 ** 20} MiB`, unit: 'MB/s', value: hybrid.mbPerSecond, ratio: hybrid.mbPerSecond / plain.mbPerSecond, note: `${(hybrid.mbPerSecond / plain.mbPerSecond).toFixed(2)}x plain (same ChaChaPoly transport)` },
  ];
  if (opts.print !== false) console.log(formatTable('P2P handshake (loopback, real libp2p nodes)', results));
  return { results };
}
