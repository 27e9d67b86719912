/**
 * A JSON-RPC read flood in a process of its own (e2e/vm-read-flood): the test's own event loop,
 * which times `/health`, must not be the one busy sending the flood, or the figure would be the
 * client's queueing rather than the node's answer. Argument: a JSON FloodPlan. Prints the
 * outcomes ({"eth_call result": n, …}) as one JSON line when the duration is over.
 */
export interface FloodPlan {
  url: string;
  durationMs: number;
  /** Concurrent connections; even ones send `call`, odd ones `estimate`. */
  connections: number;
  call: unknown[];
  estimate: unknown[];
}

/** One JSON-RPC request; the answer's result or error, whichever it is. */
async function rpc(url: string, method: string, params: unknown[]): Promise<string> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(30_000) });
  if (r.status !== 200) return `HTTP ${r.status}`;
  const body = (await r.json()) as { result?: unknown; error?: { code: number; message: string } };
  // Errors by code and the start of their message without figures (out of gas, busy, timed out, …), for the report.
  if (body.error) return `rpc ${body.error.code} (${body.error.message.replace(/0x[0-9a-f]+|\d+/gi, 'N').slice(0, 48)})`;
  return 'result';
}

/** Runs the plan's connections until its duration is over; the count of each outcome. */
export async function flood(plan: FloodPlan): Promise<Record<string, number>> {
  const end = Date.now() + plan.durationMs;
  const outcomes: Record<string, number> = {};
  const connection = async (i: number) => {
    const [method, params] = i % 2 === 0 ? ['eth_call', plan.call] : ['eth_estimateGas', plan.estimate];
    while (Date.now() < end) {
      const o = await rpc(plan.url, method as string, params as unknown[]).catch((e: Error) => e.name);
      const key = `${method} ${o}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: plan.connections }, (_, i) => connection(i)));
  return outcomes;
}

if (process.argv[2]) {
  const outcomes = await flood(JSON.parse(process.argv[2]) as FloodPlan);
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
}
