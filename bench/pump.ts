/** A bounded-concurrency request loop with latency percentiles, shared by the REST load worker and the in-process rows. */
import http from 'node:http';

/** What a pump run did. */
export interface PumpResult {
  ok: number;
  failed: number;
  seconds: number;
  /** Per-request latency percentiles, milliseconds. */
  p50Ms: number;
  p99Ms: number;
  firstError?: string;
}

/**
 * Calls `fn` on every item with at most `concurrency` calls in flight. `fn` resolves to undefined
 * on success or to an error message; a rejection counts as a failure with its message.
 */
export async function pump<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<string | undefined>): Promise<PumpResult> {
  const latencies: number[] = [];
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      const t = performance.now();
      let error: string | undefined;
      try {
        error = await fn(item);
      } catch (err) {
        error = (err as Error).message;
      }
      latencies.push(performance.now() - t);
      if (error === undefined) ok++;
      else {
        failed++;
        firstError ??= error;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { ok, failed, seconds, p50Ms: pct(0.5), p99Ms: pct(0.99), ...(firstError === undefined ? {} : { firstError }) };
}

/**
 * A POST of JSON bodies to `url` over node:http with a keep-alive agent (about half the client
 * CPU of fetch per request): resolves undefined on 202, else the status and the start of the body.
 */
export function httpPoster(url: URL, agent: http.Agent): (body: string) => Promise<string | undefined> {
  return (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(res.statusCode === 202 ? undefined : `HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
