/**
 * The Prometheus files `svc devnet up` writes (src/devnet/monitoring.ts): one scrape target per
 * execution, beacon and validator metrics endpoint with the ports the devnet chose, at 5 s, the
 * shipped rules and dashboard copied beside it, values quoted so no path can break the YAML; a
 * prepared devnet (real genesis, temp dir, nothing started) has the file on disk with the
 * manifest's ports, and promtool accepts it (skipped where promtool is absent).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { devnetLayout } from '../../src/devnet/layout.js';
import { prepareDevnet } from '../../src/devnet/lifecycle.js';
import type { DevnetManifest } from '../../src/devnet/manifest.js';
import { SHIPPED_ALERT_RULES, SHIPPED_DASHBOARD, monitoringPaths, prometheusConfig, scrapeTargets } from '../../src/devnet/monitoring.js';
import { promtool, promtoolMissing } from '../helpers/promtool.js';
import { sampleManifest, withSvcHome, withTempDir } from './fixture.js';

/** `[job, target, labels]` of each static target in a config this module wrote (every value is a JSON string). */
function targetsIn(yaml: string): Array<[string, string, Record<string, string>]> {
  const out: Array<[string, string, Record<string, string>]> = [];
  let job = '';
  let current: Record<string, string> | undefined;
  for (const line of yaml.split('\n')) {
    let m = /^ {2}- job_name: (".*")$/.exec(line);
    if (m) job = JSON.parse(m[1]!) as string;
    m = /^ {6}- targets: \[(".*")\]$/.exec(line);
    if (m) {
      current = {};
      out.push([job, JSON.parse(m[1]!) as string, current]);
    }
    m = /^ {10}([a-z_]+): (".*")$/.exec(line);
    if (m && current) current[m[1]!] = JSON.parse(m[2]!) as string;
  }
  return out;
}

test('scrapeTargets: each node\'s execution and beacon, each validator\'s metrics port on its node', () => {
  const m = sampleManifest('/srv/devnets/alpha');
  assert.equal(scrapeTargets(m), [
    { job: 'svc-execution', target: '127.0.0.1:8546', labels: { node: '0', role: 'producer' } },
    { job: 'svc-beacon', target: '127.0.0.1:8080', labels: { node: '0', role: 'producer' } },
    { job: 'svc-validator', target: '127.0.0.1:8547', labels: { node: '0', validator: '0' } },
    { job: 'svc-validator', target: '127.0.0.1:8548', labels: { node: '0', validator: '1' } },
  ]);
  // Two producers (validators round-robin) and a follower.
  const two = structuredClone(m);
  const node = (index: number, role: 'producer' | 'follower', base: number, validators: number[]) => ({
    ...structuredClone(m.nodes[0]!),
    index,
    role,
    validators,
    ports: { rest: base, rpc: base - 1, beacon: base + 100 },
  });
  two.nodes = [node(0, 'producer', 8546, [0, 2]), node(1, 'producer', 8646, [1]), node(2, 'follower', 8746, [])];
  two.ports.validator_metrics = [8547, 8548, 8549];
  assert.equal(
    scrapeTargets(two).map((t) => [t.job, t.target, t.labels.node, t.labels.validator ?? t.labels.role]),
    [
      ['svc-execution', '127.0.0.1:8546', '0', 'producer'],
      ['svc-beacon', '127.0.0.1:8646', '0', 'producer'],
      ['svc-execution', '127.0.0.1:8646', '1', 'producer'],
      ['svc-beacon', '127.0.0.1:8746', '1', 'producer'],
      ['svc-execution', '127.0.0.1:8746', '2', 'follower'],
      ['svc-beacon', '127.0.0.1:8846', '2', 'follower'],
      ['svc-validator', '127.0.0.1:8547', '0', '0'],
      ['svc-validator', '127.0.0.1:8549', '0', '2'],
      ['svc-validator', '127.0.0.1:8548', '1', '1'],
    ],
  );
  // Packed: validators of one process share its port, scraped once; no validator label (the
  // process labels each key's series itself), unless it holds one validator.
  const packed = structuredClone(two);
  packed.ports.validator_metrics = [8547, 8548, 8547];
  assert.equal(
    scrapeTargets(packed).filter((t) => t.job === 'svc-validator'),
    [
      { job: 'svc-validator', target: '127.0.0.1:8547', labels: { node: '0' } },
      { job: 'svc-validator', target: '127.0.0.1:8548', labels: { node: '1', validator: '1' } },
    ],
  );
  // A manifest from before single-process validators had metrics ports: execution and the beacon only.
  const older: DevnetManifest = { ...structuredClone(m), mode: 'single-process', ports: { ...m.ports, validator_metrics: [] } };
  assert.equal(scrapeTargets(older).map((t) => t.job), ['svc-execution', 'svc-beacon']);
});

test('prometheusConfig: 5 s scrape and evaluation, the rule file, one job per kind; a hostile directory name stays a comment', () => {
  const m = sampleManifest('/srv/devnets/alpha');
  const text = prometheusConfig('/srv/x\n  injected: true', scrapeTargets(m), 'alerts.yml');
  assert.match(text, /^global:\n {2}scrape_interval: 5s\n {2}evaluation_interval: 5s\n/m);
  assert.match(text, /^rule_files:\n {2}- "alerts\.yml"\n/m);
  assert.not.match(text, /^ {2}injected/m);
  assert.equal(targetsIn(text), [
    ['svc-execution', '127.0.0.1:8546', { node: '0', role: 'producer' }],
    ['svc-beacon', '127.0.0.1:8080', { node: '0', role: 'producer' }],
    ['svc-validator', '127.0.0.1:8547', { node: '0', validator: '0' }],
    ['svc-validator', '127.0.0.1:8548', { node: '0', validator: '1' }],
  ]);
});

test('prepareDevnet --single-process: svc node all serves its validator client\'s metrics on the port the scrape config lists', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'single');
      const prep = await prepareDevnet({ dir, accounts: 1, kdfMemoryKib: 64, fresh: false, singleProcess: true, validators: 2 });
      const m = prep.manifest;
      const all = prep.groups.flat().find((s) => s.name === 'node')!;
      const port = Number(all.args[all.args.indexOf('--validator-metrics-port') + 1]);
      assert.equal(m.ports.validator_metrics, [port, port]);
      const config = await readFile(monitoringPaths(devnetLayout(dir)).config, 'utf8');
      // One validator client for both keys: one target, its series labelled per key by the client.
      assert.equal(targetsIn(config).filter(([job]) => job === 'svc-validator').map(([, target, labels]) => [target, labels.validator]), [[`127.0.0.1:${port}`, undefined]]);
    }),
  ),
);

test('prepareDevnet writes DIR/monitoring/prometheus.yml with the ports it chose, the rules and dashboard beside it; promtool accepts it', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net with space');
      const prep = await prepareDevnet({ dir, accounts: 1, kdfMemoryKib: 64, fresh: false, singleProcess: false, validators: 3 });
      const m = prep.manifest;
      const paths = monitoringPaths(devnetLayout(dir));
      const config = await readFile(paths.config, 'utf8');
      // One packed validator process: its one metrics port, scraped once.
      const spec = prep.groups.flat().find((s) => s.name === 'validators')!;
      const port = Number(spec.args[spec.args.indexOf('--metrics-port') + 1]);
      assert.equal(m.ports.validator_metrics, [port, port, port]);
      const want = [
        ['svc-execution', `127.0.0.1:${m.ports.rest}`],
        ['svc-beacon', `127.0.0.1:${m.ports.beacon}`],
        ['svc-validator', `127.0.0.1:${port}`],
      ];
      assert.equal(targetsIn(config).map(([job, target]) => [job, target]), want);
      assert.is(await readFile(paths.rules, 'utf8'), await readFile(SHIPPED_ALERT_RULES, 'utf8'));
      assert.is(await readFile(paths.dashboard, 'utf8'), await readFile(SHIPPED_DASHBOARD, 'utf8'));
      const r = promtool(['check', 'config', paths.config]);
      if (!r) return console.log(promtoolMissing('promtool check config'));
      assert.is(r.status, 0, r.output);
      assert.match(r.output, /SUCCESS: 1 rule files found/);
      // promtool really reads the file: a broken copy is refused.
      const broken = join(tmp, 'broken.yml');
      await writeFile(broken, config.replace('scrape_interval: 5s', 'scrape_interval: [5s'));
      assert.is.not(promtool(['check', 'config', broken])!.status, 0);
    }),
  ),
);

test.run();
