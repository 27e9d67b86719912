/**
 * The Prometheus files `svc devnet up` writes into DIR/monitoring/: a scrape configuration for
 * the ports this devnet chose (every execution, beacon and validator metrics endpoint it starts,
 * every 5 seconds as SPEC.md "Metrics" says), a copy of the shipped alert rules it references, so
 * `prometheus --config.file=DIR/monitoring/prometheus.yml` needs nothing else, and a copy of the
 * Grafana dashboard to import.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../util/fs.js';
import type { DevnetLayout } from './layout.js';
import type { DevnetManifest } from './manifest.js';

/** The shipped monitoring/ directory (alert rules, their tests, the Grafana dashboard); dist/src/devnet → repository root. */
export const SHIPPED_MONITORING_DIR = fileURLToPath(new URL('../../../monitoring', import.meta.url));
/** The shipped alert rules (SPEC.md alert conditions). */
export const SHIPPED_ALERT_RULES = join(SHIPPED_MONITORING_DIR, 'prometheus', 'alerts.yml');
/** The shipped Grafana dashboard. */
export const SHIPPED_DASHBOARD = join(SHIPPED_MONITORING_DIR, 'grafana', 'svc-dashboard.json');
/** The spec's default scrape interval. */
export const SCRAPE_INTERVAL_SECONDS = 5;

/** Scrape jobs, one per kind of process (dashboards and alerts tell them apart by `job`). */
export type ScrapeJob = 'svc-execution' | 'svc-beacon' | 'svc-validator';

/** One metrics endpoint of the devnet. */
export interface ScrapeTarget {
  job: ScrapeJob;
  /** `host:port` (Prometheus scrapes `/metrics` there). */
  target: string;
  labels: Record<string, string>;
}

/** Where the devnet's Prometheus files live. */
export function monitoringPaths(layout: Pick<DevnetLayout, 'monitoring'>): { config: string; rules: string; dashboard: string } {
  return { config: join(layout.monitoring, 'prometheus.yml'), rules: join(layout.monitoring, 'alerts.yml'), dashboard: join(layout.monitoring, 'svc-dashboard.json') };
}

/**
 * Every metrics endpoint the devnet's processes serve: each node's execution REST port and beacon
 * port, and each validator process's metrics port (a packed process's once, a validator's own
 * process's, or in single-process mode the one `svc node all --validator-metrics-port` starts for
 * its validator client). A manifest without validator ports
 * (written before single-process validators had them) lists execution and the beacon only.
 */
export function scrapeTargets(m: Pick<DevnetManifest, 'nodes' | 'ports'>): ScrapeTarget[] {
  const ports = new Map(m.nodes.map((n) => [n.index, n.ports]));
  return targetsOf(m.nodes, {
    execution: (i) => `127.0.0.1:${ports.get(i)!.rest}`,
    beacon: (i) => `127.0.0.1:${ports.get(i)!.beacon}`,
    validator: (v) => {
      const port = m.ports.validator_metrics[v];
      return port === undefined ? undefined : `127.0.0.1:${port}`;
    },
  });
}

/**
 * The scrape targets of a network's nodes (execution and beacon of each, then each producer's
 * validator metrics endpoints), `at` naming each endpoint's `host:port`: loopback ports on a
 * devnet, service names in an exported one. Validators served by one endpoint (a packed validator
 * process) make one target; it is labelled with its validator only when it serves one (a packed
 * process labels its series per key itself). A validator without an endpoint is left out.
 */
export function targetsOf(nodes: ReadonlyArray<{ index: number; role: 'producer' | 'follower'; validators: readonly number[] }>, at: { execution(node: number): string; beacon(node: number): string; validator(validator: number, node: number): string | undefined }): ScrapeTarget[] {
  const out: ScrapeTarget[] = [];
  for (const n of nodes) {
    const labels = { node: String(n.index), role: n.role };
    out.push({ job: 'svc-execution', target: at.execution(n.index), labels });
    out.push({ job: 'svc-beacon', target: at.beacon(n.index), labels });
  }
  for (const n of nodes) {
    const served = new Map<string, number[]>();
    for (const v of n.validators) {
      const target = at.validator(v, n.index);
      if (target === undefined) continue;
      const list = served.get(target);
      if (list) list.push(v);
      else served.set(target, [v]);
    }
    for (const [target, vs] of served) out.push({ job: 'svc-validator', target, labels: vs.length === 1 ? { node: String(n.index), validator: String(vs[0]) } : { node: String(n.index) } });
  }
  return out;
}

// Every string is written as a JSON string, which is a valid YAML double-quoted scalar: no
// value (a path with spaces or a colon) can change the document's structure.
const q = (s: string): string => JSON.stringify(s);

/**
 * The scrape configuration for `targets`, with `rulesFile` (relative to the configuration's
 * directory, or absolute) as its rule file; `header` replaces the devnet's comment lines.
 */
export function prometheusConfig(dir: string, targets: readonly ScrapeTarget[], rulesFile: string, header?: readonly string[]): string {
  const lines = [
    ...(header ?? [
      `# Prometheus scrape configuration written by svc devnet up for the devnet in ${q(dir)}.`,
      '# Rewritten on every up (ports can change when one is taken). Run:',
      '#   prometheus --config.file=<this file> --web.listen-address=127.0.0.1:9090',
      '# Alert rules: alerts.yml beside this file (a copy of the shipped monitoring/prometheus/alerts.yml).',
    ]).map((l) => (l.startsWith('#') ? l : `# ${l}`)),
    'global:',
    `  scrape_interval: ${SCRAPE_INTERVAL_SECONDS}s`,
    `  evaluation_interval: ${SCRAPE_INTERVAL_SECONDS}s`,
    'rule_files:',
    `  - ${q(rulesFile)}`,
    'scrape_configs:',
  ];
  for (const job of ['svc-execution', 'svc-beacon', 'svc-validator'] as const) {
    const mine = targets.filter((t) => t.job === job);
    if (mine.length === 0) continue;
    lines.push(`  - job_name: ${q(job)}`, '    static_configs:');
    for (const t of mine) {
      lines.push(`      - targets: [${q(t.target)}]`, '        labels:');
      for (const [k, v] of Object.entries(t.labels)) lines.push(`          ${k}: ${q(v)}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** Writes DIR/monitoring/prometheus.yml for the manifest's ports and copies the alert rules and the dashboard beside it. */
export async function writeMonitoring(layout: DevnetLayout, m: Pick<DevnetManifest, 'nodes' | 'ports'>): Promise<{ config: string; rules: string; dashboard: string }> {
  const paths = monitoringPaths(layout);
  await writeFileAtomic(paths.rules, await readFile(SHIPPED_ALERT_RULES, 'utf8'), { force: true, mode: 0o644 });
  await writeFileAtomic(paths.dashboard, await readFile(SHIPPED_DASHBOARD, 'utf8'), { force: true, mode: 0o644 });
  await writeFileAtomic(paths.config, prometheusConfig(layout.dir, scrapeTargets(m), 'alerts.yml'), { force: true, mode: 0o644 });
  return paths;
}
