/**
 * What the WebSocket fan-out benchmark (bench/ws.ts) and its client processes
 * (bench/ws-client.ts) share: the clock both read, the latency histogram the clients fill and the
 * parent merges, and the messages a client sends. Apart from both so the client process loads
 * none of the hub's code, and neither imports the other.
 */

/** Milliseconds on the monotonic clock every process on the machine shares (uv_hrtime). */
export function nowMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

/** Latency histogram: 10 µs buckets below 100 ms, 1 ms buckets up to 60 s, then one overflow bucket. */
export class LatencyHistogram {
  private static readonly FINE = 10_000;
  private static readonly COARSE = 59_900;
  readonly counts: Uint32Array;

  constructor(counts?: Uint32Array) {
    this.counts = counts ?? new Uint32Array(LatencyHistogram.FINE + LatencyHistogram.COARSE + 1);
  }

  record(ms: number): void {
    const v = ms > 0 ? ms : 0;
    const i = v < 100 ? Math.floor(v * 100) : Math.min(LatencyHistogram.FINE + Math.floor(v) - 100, LatencyHistogram.FINE + LatencyHistogram.COARSE);
    this.counts[i]!++;
  }

  /** Upper bound of bucket `i`, ms. */
  private static upper(i: number): number {
    return i < LatencyHistogram.FINE ? (i + 1) / 100 : i - LatencyHistogram.FINE + 101;
  }

  get total(): number {
    let n = 0;
    for (const c of this.counts) n += c;
    return n;
  }

  /** The `q` quantile (0..1), as the upper bound of its bucket; NaN when empty. */
  quantile(q: number): number {
    const total = this.total;
    if (total === 0) return NaN;
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return LatencyHistogram.upper(i);
    }
    return Infinity;
  }

  /** Sparse `[bucket, count]` pairs (IPC). */
  toJSON(): [number, number][] {
    const out: [number, number][] = [];
    this.counts.forEach((c, i) => {
      if (c) out.push([i, c]);
    });
    return out;
  }

  add(pairs: readonly [number, number][]): void {
    for (const [i, c] of pairs) this.counts[i]! += c;
  }
}

/** What a client process reports. */
export interface WsClientResult {
  histogram: [number, number][];
  /** Measured deliveries. */
  received: number;
  /** Connections the hub closed during the run. */
  closed: number;
  /** Every open connection had every measured event by the deadline. */
  complete: boolean;
  cpuSeconds: number;
}

/** Messages a client process sends. */
export type WsClientMessage = { ready: number } | { error: string } | { result: WsClientResult };
