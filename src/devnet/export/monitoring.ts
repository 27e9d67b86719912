/**
 * Monitoring of an exported network: the devnet's Prometheus configuration (monitoring.ts's
 * writer, with service names for targets), the shipped alert rules, and Grafana provisioned with
 * the shipped dashboard and Prometheus as its data source.
 */
import { CONTAINER_PORTS, type Addressing, type ExportNetwork } from './model.js';
import { type ScrapeTarget, prometheusConfig, targetsOf } from '../monitoring.js';

/** Prometheus image of the exported monitoring (a release with the rule syntax alerts.yml uses). */
export const PROMETHEUS_IMAGE = 'prom/prometheus:v2.53.0';
/** Grafana image of the exported monitoring. */
export const GRAFANA_IMAGE = 'grafana/grafana:11.1.0';
/** Where Grafana reads the dashboards its provisioning names. */
export const GRAFANA_DASHBOARDS_DIR = '/var/lib/grafana/dashboards';

/** Every metrics endpoint of the network by service name (`validatorHost` names validator V's host; default its Compose service). */
export function scrapeTargetsFor(net: ExportNetwork, at: Addressing, validatorHost: (validator: number, node: number) => string = (v) => `validator-${v}`): ScrapeTarget[] {
  return targetsOf(net.nodes, {
    execution: (i) => `${at.executionHost(i)}:${CONTAINER_PORTS.rest}`,
    beacon: (i) => `${at.beaconHost(i)}:${CONTAINER_PORTS.beacon}`,
    validator: (v, node) => `${validatorHost(v, node)}:${CONTAINER_PORTS.validatorMetrics}`,
  });
}

/** prometheus.yml of an exported network, its rules at `rulesFile`. */
export function exportPrometheusConfig(targets: readonly ScrapeTarget[], rulesFile: string, engine: string): string {
  return prometheusConfig('', targets, rulesFile, [`Prometheus scrape configuration written by svc devnet export for ${engine}.`, 'Targets are the services of the exported network; the alert rules are the shipped monitoring/prometheus/alerts.yml.']);
}

const q = (s: string): string => JSON.stringify(s);

/** Grafana data source provisioning: the network's Prometheus at `url`. */
export function grafanaDatasource(url: string): string {
  return ['# Grafana data source written by svc devnet export.', 'apiVersion: 1', 'datasources:', `  - name: ${q('Prometheus')}`, `    type: ${q('prometheus')}`, `    access: ${q('proxy')}`, `    url: ${q(url)}`, '    isDefault: true', ''].join('\n');
}

/** Grafana dashboard provisioning: every dashboard file in GRAFANA_DASHBOARDS_DIR. */
export function grafanaDashboardProvider(): string {
  return ['# Grafana dashboard provider written by svc devnet export.', 'apiVersion: 1', 'providers:', `  - name: ${q('svc')}`, `    type: ${q('file')}`, '    options:', `      path: ${q(GRAFANA_DASHBOARDS_DIR)}`, ''].join('\n');
}
