/**
 * Golden files of the exported 4-validator, 2-node, 1-follower network in both formats
 * (test/devnet/golden/compose and test/devnet/golden/k8s). A change to what the export writes
 * shows up here as a diff to review. Regenerate after an intended change with
 *   npm run build && UPDATE_GOLDEN=1 node scripts/test.mjs 'devnet/export/golden' --jobs 1
 * The shipped monitoring files are not duplicated: Compose copies of them must equal the shipped
 * files, and Kubernetes ConfigMaps embedding them are compared with a placeholder in their place.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, withTempDir } from '../../helpers/cli.js';
import { promtool, promtoolMissing } from '../../helpers/promtool.js';
import { goldenFiles, shippedMonitoring } from './fixture.js';

const GOLDEN_DIR = join(REPO_ROOT, 'test', 'devnet', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** The comparable form of a format's files: shipped copies checked and dropped, embedded ones replaced by a placeholder. */
async function comparable(format: 'compose' | 'k8s'): Promise<Map<string, string>> {
  const shipped = await shippedMonitoring();
  const placeholders = new Map([
    [shipped.alerts, '<the shipped monitoring/prometheus/alerts.yml>'],
    [shipped.dashboard, '<the shipped monitoring/grafana/svc-dashboard.json>'],
  ]);
  const out = new Map<string, string>();
  for (const [path, text] of await goldenFiles(format)) {
    const copy = placeholders.get(text);
    if (copy !== undefined) continue; // a verbatim copy of a shipped file (Compose bind-mounts them)
    if (format === 'k8s') {
      const o = JSON.parse(text) as { kind: string; data?: Record<string, string> };
      if (o.kind === 'ConfigMap' && o.data) for (const [k, v] of Object.entries(o.data)) o.data[k] = placeholders.get(v) ?? v;
      out.set(path, JSON.stringify(o, null, 2) + '\n');
    } else {
      out.set(path, text);
    }
  }
  return out;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

for (const format of ['compose', 'k8s'] as const) {
  test(`${format}: the generated files equal the golden files`, async () => {
    const files = await comparable(format);
    const dir = join(GOLDEN_DIR, format);
    if (UPDATE) {
      await rm(dir, { recursive: true, force: true });
      for (const [path, text] of files) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      console.log(`  updated ${files.size} golden files in ${relative(REPO_ROOT, dir)}`);
    }
    assert.equal(listFiles(dir), [...files.keys()].sort(), `golden file list of ${format} (regenerate with UPDATE_GOLDEN=1 if the change is intended)`);
    for (const [path, text] of files) assert.fixture(text, await readFile(join(dir, path), 'utf8'), `${format}/${path}`);
  });
}

test('compose: copies of the shipped alert rules and dashboard are verbatim', async () => {
  const files = await goldenFiles('compose');
  const shipped = await shippedMonitoring();
  assert.is(files.get('monitoring/alerts.yml'), shipped.alerts);
  assert.is(files.get('monitoring/grafana/dashboards/svc-dashboard.json'), shipped.dashboard);
});

test('the exported Prometheus configurations (Compose file, Kubernetes ConfigMap) pass promtool check config with their alert rules', async () => {
  const configs = new Map<string, string>([['compose', (await goldenFiles('compose')).get('monitoring/prometheus.yml')!]]);
  for (const text of (await goldenFiles('k8s')).values()) {
    const o = JSON.parse(text) as { kind: string; data?: Record<string, string> };
    if (o.kind === 'ConfigMap' && o.data?.['prometheus.yml']) configs.set('k8s', o.data['prometheus.yml']);
  }
  assert.equal([...configs.keys()], ['compose', 'k8s']);
  const shipped = await shippedMonitoring();
  await withTempDir(async (dir) => {
    for (const [format, config] of configs) {
      await mkdir(join(dir, format));
      await writeFile(join(dir, format, 'prometheus.yml'), config);
      await writeFile(join(dir, format, 'alerts.yml'), shipped.alerts);
      const r = promtool(['check', 'config', join(dir, format, 'prometheus.yml')]);
      if (!r) {
        console.log(promtoolMissing('the exported Prometheus configurations'));
        return;
      }
      assert.is(r.status, 0, `${format}: ${r.output}`);
    }
  });
});

test('no absolute path of this machine in any generated file', async () => {
  for (const format of ['compose', 'k8s'] as const) {
    for (const [path, text] of await goldenFiles(format)) assert.not.ok(text.includes(REPO_ROOT) || text.includes('/tmp/'), `${format}/${path} names a local path`);
  }
});

test.run();
