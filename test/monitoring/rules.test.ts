/**
 * The shipped monitoring files (monitoring/): the alert rules state the spec's five alerts
 * exactly (condition, `for`, severity); `promtool check rules` accepts them and `promtool test
 * rules` makes each fire and stay silent on synthetic series (and fails once a threshold is
 * changed, so the test file can fail); the scrape configuration template is valid at the spec's
 * 5 s interval and ports; the Grafana dashboard parses and is well formed. The promtool parts
 * skip with a note where promtool is not installed. Which metric names the dashboard and rules
 * use, and that the nodes export them, is names.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT, withTempDir } from '../helpers/cli.js';
import { promtool, promtoolMissing } from '../helpers/promtool.js';

const PROM = join(REPO_ROOT, 'monitoring', 'prometheus');
const RULES = join(PROM, 'alerts.yml');
const RULE_TESTS = join(PROM, 'alerts.test.yml');
const TEMPLATE = join(PROM, 'prometheus.yml');
const DASHBOARD = join(REPO_ROOT, 'monitoring', 'grafana', 'svc-dashboard.json');

/** SPEC.md "Metrics", alert conditions: name, PromQL of the condition, for, severity. */
const SPEC_ALERTS = [
  ['CanonicalBytesLengthIncorrect', 'quantum_canonical_bytes_len != 3409', '1m', 'critical'],
  ['LowValidatorParticipation', 'service_beacon_active_validators < 3', '5m', 'warning'],
  ['MempoolOverflow', 'service_execution_mempool_size > 10000', '2m', 'warning'],
  ['BlockProductionStalled', 'rate(service_beacon_blocks_proposed_total[5m]) == 0', '1m', 'critical'],
  ['HighVRFFailureRate', 'rate(quantum_canonical_vrf_fail_total[5m]) > 0.1', '2m', 'warning'],
] as const;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('alerts.yml: exactly the five spec alerts, each with the spec condition, for duration and severity', async () => {
  const text = await readFile(RULES, 'utf8');
  const names = [...text.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]);
  assert.equal(names, SPEC_ALERTS.map((a) => a[0]));
  for (const [name, expr, forDuration, severity] of SPEC_ALERTS) {
    const rule = new RegExp(`- alert: ${name}\\n\\s+expr: ${escape(expr)}\\n\\s+for: ${forDuration}\\n\\s+labels:\\n\\s+severity: ${severity}\\n`);
    assert.match(text, rule, `${name}: expr ${expr}, for ${forDuration}, severity ${severity}`);
  }
});

test('promtool check rules accepts alerts.yml', () => {
  const r = promtool(['check', 'rules', RULES]);
  if (!r) return console.log(promtoolMissing('promtool check rules'));
  assert.is(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS: 5 rules found/);
});

test('promtool test rules: every alert fires on its synthetic series and stays silent on the others', async () => {
  // Every alert appears in the test file with a firing case and a silent one.
  const tests = await readFile(RULE_TESTS, 'utf8');
  for (const [name] of SPEC_ALERTS) {
    const cases = [...tests.matchAll(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:(.*)`, 'g'))].map((m) => m[1]!.trim());
    assert.ok(cases.includes('[]'), `${name} has a case where it must not fire`);
    assert.ok(cases.includes(''), `${name} has a case where it must fire`);
  }
  const r = promtool(['test', 'rules', RULE_TESTS]);
  if (!r) return console.log(promtoolMissing('promtool test rules'));
  assert.is(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS/);
});

test('promtool test rules fails when a rule drifts from the spec (the tests can fail)', async () => {
  if (!promtool(['--version'])) return console.log(promtoolMissing('the drifted-rule check'));
  await withTempDir(async (dir) => {
    await copyFile(RULE_TESTS, join(dir, 'alerts.test.yml'));
    const rules = await readFile(RULES, 'utf8');
    for (const [from, to] of [
      ['service_execution_mempool_size > 10000', 'service_execution_mempool_size > 20000'],
      ['service_beacon_active_validators < 3', 'service_beacon_active_validators < 2'],
      ['quantum_canonical_bytes_len != 3409', 'quantum_canonical_bytes_len != 3408'],
    ] as const) {
      assert.ok(rules.includes(from));
      await writeFile(join(dir, 'alerts.yml'), rules.replace(from, to));
      const r = promtool(['test', 'rules', join(dir, 'alerts.test.yml')])!;
      assert.is.not(r.status, 0, `${to} passed the rule tests`);
    }
  });
});

test('prometheus.yml template: the spec ports (execution 8546, beacon 8080, validators 8547-8549) every 5 s, valid for promtool', async () => {
  const text = await readFile(TEMPLATE, 'utf8');
  assert.match(text, /^ {2}scrape_interval: 5s$/m);
  assert.match(text, /^rule_files:\n {2}- alerts\.yml$/m);
  for (const port of [8546, 8080, 8547, 8548, 8549]) assert.match(text, new RegExp(`"127\\.0\\.0\\.1:${port}"`), `target ${port}`);
  const r = promtool(['check', 'config', TEMPLATE]);
  if (!r) return console.log(promtoolMissing('promtool check config'));
  assert.is(r.status, 0, r.output);
});

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string }>;
}

test('svc-dashboard.json parses: a datasource variable, seven sections, unique ids, a PromQL target on every panel', async () => {
  const d = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { uid: string; title: string; refresh: string; templating: { list: Array<{ name: string; type: string; query: string }> }; panels: Panel[] };
  assert.is(d.uid, 'svc-devnet');
  assert.is(d.refresh, '5s', 'refreshes at the scrape interval');
  assert.ok(d.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource' && v.query === 'prometheus'));
  const rows = d.panels.filter((p) => p.type === 'row').map((p) => p.title);
  assert.equal(rows, ['Beacon', 'Execution', 'Canonical encoding (ML-DSA-65)', 'P2P', 'Validators', 'Slashing, RANDAO and light client', 'Bridge']);
  const ids = d.panels.map((p) => p.id);
  assert.is(new Set(ids).size, ids.length, 'panel ids are unique');
  for (const p of d.panels.filter((x) => x.type !== 'row')) {
    assert.equal(p.datasource, { type: 'prometheus', uid: '${datasource}' }, p.title);
    assert.ok(p.gridPos.w > 0 && p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits the 24-column grid`);
    assert.ok((p.targets ?? []).length > 0, `${p.title} has a query`);
    for (const t of p.targets!) assert.match(t.expr, /\b(service|quantum)_[a-z0-9_]+/, `${p.title}: ${t.expr}`);
  }
});

test.run();
