#!/usr/bin/env node
// Container health probe (Dockerfile HEALTHCHECK, exported Compose healthchecks): exits 0 when
// the URL (argument, else SVC_HEALTH_URL, else execution's /health) answers 2xx within 3 s.
// Plain Node: no shell, curl or wget in the slim image, and no svc start-up cost per probe.
const url = process.argv[2] ?? process.env.SVC_HEALTH_URL ?? 'http://127.0.0.1:8546/health';
try {
  const r = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  await r.arrayBuffer();
  process.exit(r.ok ? 0 : 1);
} catch (err) {
  process.stderr.write(`${url}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
