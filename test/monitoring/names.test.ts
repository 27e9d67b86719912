/**
 * Every metric name the Grafana dashboard and the alert rules query exists on a real endpoint:
 * an execution node, a beacon node with its libp2p host (the service_p2p_* series) and a
 * validator client with its metrics server, all in-process on ephemeral loopback ports. Names
 * are read from each endpoint's `# TYPE` lines (a series declared but still without samples
 * counts), histograms also as their _bucket, _sum and _count series. Also: every metric SPEC.md
 * names is served by one of them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidatorClient } from '../../src/node/validator/client.js';
import { openValidatorDataDir } from '../../src/node/validator/data-dir.js';
import { silentLogger } from '../../src/util/log.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { SPEC_METRICS } from '../helpers/spec-metrics.js';
import { startHarness, stopHarness } from '../node/beacon/fixture.js';


/** Series names an exposition declares: each `# TYPE` name, and a histogram's three series. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, kind] = m;
    names.add(name!);
    if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** Metric names in a PromQL expression (the project's prefixes; functions and labels are not metrics). */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b(?:service|quantum)_[a-z0-9_]+\b/g)].map((m) => m[0]);
}

/** Every PromQL expression of the dashboard's panels. */
async function dashboardExprs(): Promise<string[]> {
  const d = JSON.parse(await readFile(join(REPO_ROOT, 'monitoring', 'grafana', 'svc-dashboard.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

/** Every rule expression of alerts.yml (one line each). */
async function ruleExprs(): Promise<string[]> {
  const text = await readFile(join(REPO_ROOT, 'monitoring', 'prometheus', 'alerts.yml'), 'utf8');
  return [...text.matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1]!);
}

async function scrape(url: string): Promise<string> {
  const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.is(r.status, 200, url);
  return r.text();
}

test('every metric the dashboard and the alert rules query is served by execution, the beacon (with P2P) or a validator; every SPEC metric is served', async () => {
  const h = await startHarness({ p2p: { host: '127.0.0.1', port: 0, bootnodes: [] } });
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-names-'));
  const sp = await openValidatorDataDir(dataDir, h.genesis);
  const client = new ValidatorClient({
    genesis: h.genesis,
    keys: h.validators[0]!,
    beaconUrl: h.beacon.url,
    token: h.token,
    slashingDb: sp,
    log: silentLogger,
    metricsPort: 0,
  });
  try {
    await client.start();
    const served = new Map<string, Set<string>>([
      ['execution', exposedNames(await scrape(h.exec.restUrl))],
      ['beacon', exposedNames(await scrape(h.beacon.url))],
      ['validator', exposedNames(await scrape(client.metricsUrl!))],
    ]);
    const where = (name: string) => [...served].filter(([, names]) => names.has(name)).map(([endpoint]) => endpoint);

    const exprs = [...(await dashboardExprs()).map((e) => ['dashboard', e] as const), ...(await ruleExprs()).map((e) => ['alerts.yml', e] as const)];
    assert.ok(exprs.length > 30, `${exprs.length} expressions read`);
    const missing: string[] = [];
    for (const [file, expr] of exprs) {
      const names = metricsIn(expr);
      assert.ok(names.length > 0, `${file}: ${expr} names no metric`);
      for (const n of names) if (where(n).length === 0) missing.push(`${file}: ${n} (in ${expr})`);
    }
    assert.equal(missing, [], 'queried metrics no endpoint serves');
    for (const n of SPEC_METRICS) assert.ok(where(n).length > 0, `SPEC metric ${n} is served`);
    // The names the alerts need are where the alerts look for them.
    assert.ok(where('service_beacon_blocks_proposed_total').includes('beacon'));
    assert.ok(where('service_execution_mempool_size').includes('execution'));
    assert.equal(where('quantum_canonical_sig_generated_total'), ['execution', 'validator']);
    assert.equal(where('quantum_canonical_bytes_len'), ['execution', 'beacon', 'validator']);
  } finally {
    await client.stop();
    await sp.close();
    await rm(dataDir, { recursive: true, force: true });
    await stopHarness(h);
  }
});

test.run();
