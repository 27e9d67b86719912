/**
 * Fuzzing helpers for the P2P tests (not a test file itself): a seeded generator of random and
 * mutated messages, a Prometheus text parser for the nodes' counters, and a test peer, a real
 * libp2p host made by the node's own `startP2p` (so it speaks the hybrid handshake), that sends
 * those messages on a gossip topic or a request/response protocol.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { toHex } from '../../src/core/codec/bytes.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { startP2p } from '../../src/node/p2p/host.js';
import { type P2pHost, PEER_EXCHANGE_PROTOCOL, type ProtocolLimits, type RequestHandler, type Topic } from '../../src/node/p2p/types.js';
import { silentLogger } from '../../src/util/log.js';

/** Seeded PRNG (mulberry32): a failing run is replayed by its printed seed. */
export class Rng {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = (this.next() * 256) | 0;
    return out;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
}

/** How a fuzz message was made (a label in failure messages and tallies). */
export type FuzzKind = 'empty' | 'random' | 'oversize' | 'bitflip' | 'truncate' | 'extend' | 'swap' | 'overwrite' | 'valid';

export interface FuzzMessage {
  kind: FuzzKind;
  data: Uint8Array;
}

export interface CorpusOptions {
  /** Valid encodings the mutations start from (e.g. a signed tx, a block, an attestation). */
  valid: readonly Uint8Array[];
  /** The receiver's size cap: oversize messages are just above it. */
  maxBytes: number;
  count: number;
  /** Valid encodings themselves are included once each (the receiver accepts or ignores them). */
  includeValid?: boolean;
  /**
   * Bytes spent on oversize messages in all (default 32 MiB): a block cap is megabytes, and
   * hundreds of messages above it would measure the loopback, not the validation.
   */
  oversizeBudget?: number;
}

function mutate(rng: Rng, v: Uint8Array): { kind: FuzzKind; data: Uint8Array } {
  const kind = rng.pick<FuzzKind>(['bitflip', 'truncate', 'extend', 'swap', 'overwrite']);
  const out = Uint8Array.from(v);
  switch (kind) {
    case 'bitflip': {
      const flips = rng.int(1, 8);
      for (let i = 0; i < flips; i++) {
        const at = rng.int(0, out.length - 1);
        out[at]! ^= 1 << rng.int(0, 7);
      }
      return { kind, data: out };
    }
    case 'truncate':
      return { kind, data: out.subarray(0, rng.int(0, Math.max(0, out.length - 1))) };
    case 'extend': {
      const tail = rng.bytes(rng.int(1, 256));
      const ext = new Uint8Array(out.length + tail.length);
      ext.set(out);
      ext.set(tail, out.length);
      return { kind, data: ext };
    }
    case 'swap': {
      // Two equal windows exchanged: in SSZ this moves fixed fields and offsets past each other.
      // A one-byte message has no two windows: returned as it is, the corpus drops it as a repeat.
      if (out.length < 2) return { kind, data: out };
      const len = rng.int(1, Math.max(1, Math.min(64, Math.floor(out.length / 2))));
      const a = rng.int(0, Math.max(0, out.length - 2 * len));
      const b = rng.int(a + len, Math.max(a + len, out.length - len));
      const tmp = out.slice(a, a + len);
      out.copyWithin(a, b, b + len);
      out.set(tmp, b);
      return { kind, data: out };
    }
    case 'overwrite': {
      // A 4-byte window set to an extreme value: length prefixes and SSZ offsets pointing anywhere.
      const at = rng.int(0, Math.max(0, out.length - 4));
      const fill = rng.pick([0x00, 0xff, rng.int(0, 255)]);
      out.fill(fill, at, Math.min(out.length, at + 4));
      return { kind, data: out };
    }
    default:
      throw new Error(`unreachable mutation ${kind}`);
  }
}

/**
 * `count` distinct messages (distinct by SHA3-256, the gossip message id, so no two collapse into
 * one on the wire): the valid encodings once each when asked, first (so they arrive before the
 * sender is penalised), and one message just above the cap; then in random order one empty
 * message, a few more above the cap, and otherwise half random bytes of random lengths, half
 * mutations of the valid encodings.
 */
export function fuzzCorpus(rng: Rng, o: CorpusOptions): FuzzMessage[] {
  const seen = new Set<string>();
  const out: FuzzMessage[] = [];
  const add = (m: FuzzMessage): void => {
    const id = toHex(sha3(m.data));
    if (seen.has(id) || out.length >= o.count) return;
    seen.add(id);
    out.push(m);
  };
  add({ kind: 'empty', data: new Uint8Array(0) });
  if (o.includeValid) for (const v of o.valid) add({ kind: 'valid', data: v });
  const oversize = Math.max(2, Math.min(Math.floor(o.count / 50), Math.floor((o.oversizeBudget ?? 32 * 1024 * 1024) / (o.maxBytes + 1024))));
  for (let i = 0; i < oversize; i++) add({ kind: 'oversize', data: rng.bytes(o.maxBytes + rng.int(1, 1024)) });
  const maxRandom = Math.min(o.maxBytes, Math.max(...o.valid.map((v) => v.length), 64) * 2);
  let guard = 0;
  while (out.length < o.count) {
    if (++guard > o.count * 20) throw new Error('fuzzCorpus: could not make enough distinct messages');
    if (rng.next() < 0.5) add({ kind: 'random', data: rng.bytes(rng.int(1, maxRandom)) });
    else add(mutate(rng, rng.pick(o.valid)));
  }
  // Valid encodings first, then one message above the cap: both are sent whatever the budget.
  const head = [...(o.includeValid ? out.filter((m) => m.kind === 'valid') : []), out.find((m) => m.kind === 'oversize')!];
  const rest = out.filter((m) => !head.includes(m));
  for (let i = rest.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  return [...head, ...rest];
}

/** Counts of messages per kind. */
export function tally(messages: readonly FuzzMessage[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const m of messages) t[m.kind] = (t[m.kind] ?? 0) + 1;
  return t;
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the lines a `/metrics` endpoint serves). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples named `name` whose labels include `match`. */
export function metricSum(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}

/** Samples named `name` whose labels include `match`, summed per value of `label`. */
export function metricBy(samples: readonly Sample[], name: string, label: string, match: Record<string, string> = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name || !Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    const key = s.labels[label] ?? '';
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

/** Fetches and parses a `/metrics` endpoint. */
export async function scrape(url: string): Promise<Sample[]> {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!r.ok) throw new Error(`GET ${url}: ${r.status}`);
  return parseMetrics(await r.text());
}

/** A request/response protocol the test peer serves (e.g. answering the beacon's status requests like an honest peer). */
export interface ServedProtocol {
  protocol: string;
  handler: RequestHandler;
  limits: ProtocolLimits;
}

/** The part of the host's libp2p node the test peer reads: who subscribes to a topic, and which protocols it already serves. */
interface SubscriberView {
  node?: { services?: { pubsub?: { getSubscribers(topic: string): Array<{ toString(): string }> } }; getProtocols?(): string[]; unhandle?(protocol: string): Promise<void> };
}

/**
 * A real libp2p host with its own temp data dir (fresh peer key) on a free loopback port, dialling
 * `bootnodes`; `layer` only labels its own metrics.
 */
export class FuzzPeer {
  private constructor(
    readonly host: P2pHost,
    readonly metrics: Registry,
    private readonly dir: string,
  ) {}

  /** Starts the peer; the caller stops it. */
  static async start(o: { layer: 'execution' | 'beacon'; genesisHash: string; bootnodes: string[]; serve?: ServedProtocol[] }): Promise<FuzzPeer> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-fuzz-peer-'));
    const metrics = new Registry();
    try {
      // A test peer that answers peer exchange itself must not ask for peers either (its host would
      // once the handshake confirms the node): every peer-exchange request the node serves is then
      // one the test sent. With the layer's chain check, never run, the node is never confirmed.
      const answersPex = (o.serve ?? []).some((s) => s.protocol === PEER_EXCHANGE_PROTOCOL);
      const host = await startP2p({ layer: o.layer, host: '127.0.0.1', port: 0, bootnodes: o.bootnodes, dataDir: dir, genesisHash: o.genesisHash, metrics, log: silentLogger, ...(answersPex ? { chainCheck: 'layer' as const } : {}) });
      for (const s of o.serve ?? []) {
        // A protocol every host serves (peer exchange) is replaced: the test peer answers it itself.
        const node = (host as unknown as SubscriberView).node;
        if (node?.getProtocols?.().includes(s.protocol)) {
          if (!node.unhandle) throw new Error(`FuzzPeer: the P2P host serves ${s.protocol} and no longer exposes node.unhandle; update the test peer`);
          await node.unhandle(s.protocol);
        }
        host.handle(s.protocol, s.handler, s.limits);
      }
      return new FuzzPeer(host, metrics, dir);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  get peerId(): string {
    return this.host.peerId;
  }

  /** Whether `peer` is connected to us right now. */
  connectedTo(peer: string): boolean {
    return this.host.peers().some((p) => p.peer_id === peer);
  }

  /**
   * Whether `peer`'s subscription to `topic` has reached us, so a publish goes to it. The host
   * contract has no such query; the test peer reads its own gossipsub (H1's host keeps it in
   * `node.services.pubsub`), and says so loudly if that ever moves.
   */
  subscribed(topic: Topic, peer: string): boolean {
    const pubsub = (this.host as unknown as SubscriberView).node?.services?.pubsub;
    if (!pubsub) throw new Error('FuzzPeer: the P2P host no longer exposes node.services.pubsub; update the test peer');
    return pubsub.getSubscribers(topic).some((p) => p.toString() === peer);
  }

  /** Waits (polling, observable) until `peer` is connected and subscribed to `topic`. */
  async waitSubscribed(topic: Topic, peer: string, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (this.connectedTo(peer) && this.subscribed(topic, peer)) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }

  /** Publishes one message: the number of peers it went to (0: no subscribed peer is connected); throws if our own host refuses it. */
  publish(topic: Topic, data: Uint8Array): Promise<number> {
    return this.host.publish(topic, data);
  }

  async stop(): Promise<void> {
    try {
      await this.host.stop();
    } finally {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}
