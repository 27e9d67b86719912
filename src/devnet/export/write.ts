/**
 * `svc devnet export` as a library function: plans the network, keeps or creates its secrets,
 * and writes the chosen format's files into the output directory (atomically, file by file).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEVNET_PASSWORD } from '../../genesis/build.js';
import { writeFileAtomic } from '../../util/fs.js';
import { SHIPPED_ALERT_RULES, SHIPPED_DASHBOARD } from '../monitoring.js';
import { COMPOSE_FILES, composeAddressing, composeFile, composeValidatorHost } from './compose.js';
import { k8sManifests } from './k8s.js';
import { type ExportFormat, type ExportNetwork, type ExportOptions, SECRET_FILE_MODE, SECRET_NAMES, SECRETS_DIR_MODE, type SecretName, planExport } from './model.js';
import { exportPrometheusConfig, grafanaDashboardProvider, grafanaDatasource, scrapeTargetsFor } from './monitoring.js';

/** What an export wrote. */
export interface ExportResult {
  format: ExportFormat;
  out: string;
  genesis_hash: string;
  genesis_time: number;
  /** Files written, relative to `out`, sorted. */
  files: string[];
  /** Secret files created now (existing ones are kept, so a re-export does not rotate a running network's tokens). */
  secrets_created: SecretName[];
  nodes: Array<{ index: number; role: 'producer' | 'follower'; validators: number[]; peer_ids: { execution: string; beacon: string } }>;
}

/** A fresh value of each generated secret; the keystore password is the devnet's unless given. */
function newSecret(name: SecretName, password: string | undefined): string {
  if (name === 'keystore-password') return password ?? DEVNET_PASSWORD;
  // Same shapes `svc devnet up` (validator token) and `svc node … --engine-jwt-secret` (32-byte hex) use.
  return randomBytes(32).toString('hex');
}

/**
 * Reads `out/secrets/*`, creating the missing ones; every secret file gets SECRET_FILE_MODE and the
 * directory SECRETS_DIR_MODE, existing ones too (so exporting again repairs an older export's 0600
 * files, which the image's user could not read).
 */
async function ensureSecrets(out: string, password: string | undefined): Promise<{ values: Record<SecretName, string>; created: SecretName[] }> {
  const values = {} as Record<SecretName, string>;
  const created: SecretName[] = [];
  const dir = join(out, 'secrets');
  await mkdir(dir, { recursive: true, mode: SECRETS_DIR_MODE });
  await chmod(dir, SECRETS_DIR_MODE);
  for (const name of SECRET_NAMES) {
    const path = join(dir, name);
    if (existsSync(path)) {
      values[name] = (await readFile(path, 'utf8')).replace(/\r?\n$/, '');
    } else {
      values[name] = newSecret(name, password);
      await writeFileAtomic(path, values[name] + '\n', { mode: SECRET_FILE_MODE });
      created.push(name);
    }
    // Explicitly: the creation mode is masked by the umask.
    await chmod(path, SECRET_FILE_MODE);
  }
  return { values, created };
}

/** The files of one format, by path relative to the output directory. */
export async function renderExport(net: ExportNetwork, format: ExportFormat, secrets: Record<SecretName, string>): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const alerts = await readFile(SHIPPED_ALERT_RULES, 'utf8');
  const dashboard = await readFile(SHIPPED_DASHBOARD, 'utf8');
  if (format === 'compose') {
    // JSON is YAML (1.2): no YAML writer is a dependency, and JSON cannot be mis-indented.
    files.set('compose.yaml', JSON.stringify(composeFile(net), null, 2) + '\n');
    const m = COMPOSE_FILES.monitoring.replace(/^\.\//, '');
    files.set(`${m}/prometheus.yml`, exportPrometheusConfig(scrapeTargetsFor(net, composeAddressing, composeValidatorHost(net)), 'alerts.yml', 'Docker Compose'));
    files.set(`${m}/alerts.yml`, alerts);
    files.set(`${m}/grafana/dashboards/svc-dashboard.json`, dashboard);
    files.set(`${m}/grafana/provisioning/datasources/datasource.yml`, grafanaDatasource('http://prometheus:9090'));
    files.set(`${m}/grafana/provisioning/dashboards/dashboards.yml`, grafanaDashboardProvider());
  } else {
    for (const { file, object } of k8sManifests(net, secrets, { alerts, dashboard })) files.set(`manifests/${file}`, JSON.stringify(object, null, 2) + '\n');
  }
  return files;
}

/** Plans the network and writes `format`'s files into `out` (secrets under `out/secrets/`, kept when present). */
export async function exportNetwork(o: ExportOptions & { format: ExportFormat; out: string; password?: string }): Promise<ExportResult> {
  const net = await planExport(o);
  const { values, created } = await ensureSecrets(o.out, o.password);
  const files = await renderExport(net, o.format, values);
  for (const [rel, text] of files) {
    // The Secret manifest carries the secrets' values and no container mounts it: the exporter's alone.
    const secret = rel.includes('-secret-');
    // Readable directories: Prometheus and Grafana read the bind-mounted monitoring files as their own users.
    await mkdir(dirname(join(o.out, rel)), { recursive: true, mode: 0o755 });
    await writeFileAtomic(join(o.out, rel), text, { force: true, mode: secret ? 0o600 : 0o644 });
  }
  return {
    format: o.format,
    out: o.out,
    genesis_hash: net.genesisHash,
    genesis_time: o.genesisTime,
    files: [...files.keys(), ...SECRET_NAMES.map((s) => `secrets/${s}`)].sort(),
    secrets_created: created,
    nodes: net.nodes.map((n) => ({ index: n.index, role: n.role, validators: n.validators, peer_ids: n.peerIds })),
  };
}
