/** What `svc devnet up` prints once the network is up: the `started` event and its text form. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import type { DevnetManifest } from '../../src/devnet/manifest.js';
import { startedEvent, startedLines, type StartedEvent } from '../../src/devnet/summary.js';
import { PEER_BEACON, PEER_EXECUTION, WEI, sampleManifest } from './fixture.js';

const DIR = '/srv/devnets/alpha';
const A0 = '0x' + 'aa'.repeat(20);
const A1 = '0x' + 'bb'.repeat(20);

/** The sample manifest, running under supervisor 4242 with live pids on two processes. */
function manifest(): DevnetManifest {
  const m = sampleManifest(DIR);
  m.state = 'running';
  m.supervisor = { pid: 4242, started_at: '2024-05-01T12:00:00.000Z' };
  m.processes[0]!.pid = 5001;
  m.processes[1]!.pid = 5002;
  m.processes[0]!.status = 'healthy';
  return m;
}

/** Genesis balances: 1 000 000 tokens, a 21-digit amount with a wei remainder, and unrelated entries. */
const GENESIS = {
  alloc: [
    { address: '0x' + '11'.repeat(20), balance: (32n * WEI).toString() },
    { address: A0, balance: (1_000_000n * WEI).toString() },
    { address: A1, balance: (123_456_789_012_345_678_901n * WEI + 999n).toString() },
  ],
};

function event(m = manifest(), resumed = false): StartedEvent {
  return startedEvent(m, GENESIS, resumed);
}

test('startedEvent copies the manifest facts and adds the genesis balances of the accounts', () => {
  const m = manifest();
  const before = Date.now();
  const e = startedEvent(m, GENESIS, false);
  assert.is(e.event, 'started');
  assert.ok(Date.parse(e.time) >= before - 1 && Date.parse(e.time) <= Date.now(), e.time);
  assert.equal(
    { ...e, time: '' },
    {
      event: 'started',
      time: '',
      dir: DIR,
      resumed: false,
      mode: 'multi-process',
      validator_processes: 'per-validator',
      chain_id: 'svc-devnet',
      network_id: 1337,
      slot_seconds: 2,
      slots_per_epoch: 8,
      endpoints: m.endpoints,
      supervisor_pid: 4242,
      processes: [
        { name: 'execution', pid: 5001, log: join(DIR, 'logs', 'execution.log') },
        { name: 'beacon', pid: 5002, log: join(DIR, 'logs', 'beacon.log') },
        { name: 'validator-0', pid: null, log: join(DIR, 'logs', 'validator-0.log'), validators: [0] },
        { name: 'validator-1', pid: null, log: join(DIR, 'logs', 'validator-1.log'), validators: [1] },
      ],
      nodes: [{ index: 0, role: 'producer', endpoints: m.endpoints, validators: [0, 1], p2p: { execution: m.nodes[0]!.p2p!.execution.multiaddr, beacon: m.nodes[0]!.p2p!.beacon.multiaddr } }],
      validators: m.validators,
      accounts: [
        { ...m.accounts[0]!, balance: (1_000_000n * WEI).toString() },
        { ...m.accounts[1]!, balance: (123_456_789_012_345_678_901n * WEI + 999n).toString() },
      ],
      faucet: m.faucet,
      keystore_password: 'svc-devnet',
      mnemonic: m.mnemonic,
      prometheus_config: join(DIR, 'monitoring', 'prometheus.yml'),
    },
  );
});

test('startedEvent: resumed flag, no supervisor, and an account missing from genesis has balance 0', () => {
  const m = manifest();
  m.supervisor = null;
  m.accounts.push({ index: 2, address: '0x' + 'cc'.repeat(20), wallet: join(DIR, 'genesis', 'accounts', 'account-2.json') });
  const e = event(m, true);
  assert.is(e.resumed, true);
  assert.is(e.supervisor_pid, null);
  assert.is(e.accounts[2]!.balance, '0');
});

test('startedEvent is JSON-safe (no bigint, no undefined)', () => {
  const e = event();
  assert.equal(JSON.parse(JSON.stringify(e)), e);
});

test('startedLines: header, directory and endpoints', () => {
  const lines = startedLines(event());
  assert.is(lines[0], 'svc devnet started: 2 validators, chain svc-devnet (network id 1337), 2 s slots, 8-slot epochs, multi-process, validator processes per-validator');
  assert.ok(lines.includes(`Directory       ${DIR}`));
  assert.ok(lines.includes('Execution REST  http://127.0.0.1:8546'));
  assert.ok(lines.includes('JSON-RPC        http://127.0.0.1:8545'));
  assert.ok(lines.includes('Beacon REST     http://127.0.0.1:8080'));
  assert.ok(lines.includes('Events          ws://127.0.0.1:8080/ws'));
  assert.ok(startedLines(event(manifest(), true))[0]!.startsWith('svc devnet resumed: '));
});

test('startedLines: one line per process with its pid (or -) and log file', () => {
  const lines = startedLines(event());
  const i = lines.indexOf('Processes');
  assert.ok(i > 0);
  assert.equal(lines.slice(i + 1, i + 5), [
    `  execution     pid 5001     ${join(DIR, 'logs', 'execution.log')}`,
    `  beacon        pid 5002     ${join(DIR, 'logs', 'beacon.log')}`,
    `  validator-0   pid -        ${join(DIR, 'logs', 'validator-0.log')}`,
    `  validator-1   pid -        ${join(DIR, 'logs', 'validator-1.log')}`,
  ]);
});

test('startedLines: a packed validator process lists the validators it holds', () => {
  const m = manifest();
  m.validator_processes = 'per-node';
  m.processes = [...m.processes.slice(0, 2), { ...m.processes[2]!, name: 'validators', log: join(DIR, 'logs', 'validators.log'), validators: [0, 1] }];
  const lines = startedLines(event(m));
  assert.ok(lines[0]!.endsWith('multi-process, validator processes per-node'), lines[0]);
  assert.ok(lines.includes(`  validators    pid -        ${join(DIR, 'logs', 'validators.log')}  (validators 0, 1)`), lines.join('\n'));
});

test('startedLines: prefunded accounts with whole-token amounts (thousands separated) and wallet paths', () => {
  const lines = startedLines(event());
  const i = lines.indexOf('Prefunded accounts (wallet files, password "svc-devnet")');
  assert.ok(i > 0, lines.join('\n'));
  assert.equal(lines.slice(i + 1, i + 3), [
    `  (0) ${A0}  1,000,000 tokens  ${join(DIR, 'genesis', 'accounts', 'account-0.json')}`,
    `  (1) ${A1}  123,456,789,012,345,678,901 tokens  ${join(DIR, 'genesis', 'accounts', 'account-1.json')}`,
  ]);
});

test('startedLines: no accounts section without accounts; an account missing from genesis shows 0 tokens', () => {
  const none = manifest();
  none.accounts = [];
  assert.ok(!startedLines(event(none)).some((l) => l.startsWith('Prefunded accounts')));
  const extra = manifest();
  extra.accounts = [{ index: 0, address: '0x' + 'cc'.repeat(20), wallet: '/w/account-0.json' }];
  assert.ok(startedLines(event(extra)).includes(`  (0) ${'0x' + 'cc'.repeat(20)}  0 tokens  /w/account-0.json`));
});

test('startedLines: the faucet line when there is a faucet, none otherwise; the mnemonic last', () => {
  const lines = startedLines(event());
  assert.ok(lines.includes(`Faucet          ${'0x' + 'fa'.repeat(20)}  (svc faucet claim <address or wallet name>)`));
  const m = manifest();
  m.faucet = null;
  assert.ok(!startedLines(event(m)).some((l) => l.startsWith('Faucet')));
  assert.is(lines[lines.length - 2], `Mnemonic        ${m.mnemonic}`);
  assert.ok(lines[lines.length - 1]!.includes('never use these keys on a real network'));
});

test('startedLines: the Prometheus configuration of the devnet, with where the rules and dashboard are', () => {
  const lines = startedLines(event());
  const i = lines.indexOf(`Prometheus      ${join(DIR, 'monitoring', 'prometheus.yml')}`);
  assert.ok(i > 0, lines.join('\n'));
  assert.match(lines[i + 1]!, /alert rules and the Grafana dashboard svc-dashboard\.json beside it/);
});

test('startedLines: node 0\'s bootnodes; a nodes section only with several nodes, followers read-only', () => {
  const one = startedLines(event());
  assert.ok(!one.some((l) => l.startsWith('Nodes')));
  const i = one.indexOf(`P2P bootnodes   beacon /ip4/127.0.0.1/tcp/9000/p2p/${PEER_BEACON}`);
  assert.ok(i > 0, one.join('\n'));
  assert.is(one[i + 1], `                execution /ip4/127.0.0.1/tcp/9001/p2p/${PEER_EXECUTION}`);

  const m = manifest();
  const follower = structuredClone(m.nodes[0]!);
  Object.assign(follower, { index: 1, role: 'follower', validators: [], endpoints: { execution: 'http://127.0.0.1:8646', rpc: 'http://127.0.0.1:8645', beacon: 'http://127.0.0.1:8180', ws: 'ws://127.0.0.1:8180/ws' } });
  m.nodes.push(follower);
  const lines = startedLines(event(m));
  const n = lines.indexOf('Nodes (node 0 is the default target of other commands)');
  assert.ok(n > 0, lines.join('\n'));
  assert.equal(lines.slice(n + 1, n + 3), ['  node 0  execution http://127.0.0.1:8546  beacon http://127.0.0.1:8080  validators 0, 1', '  node 1  execution http://127.0.0.1:8646  beacon http://127.0.0.1:8180  read-only']);

  const off = manifest();
  off.p2p = false;
  off.nodes[0]!.p2p = null;
  assert.ok(!startedLines(event(off)).some((l) => l.startsWith('P2P')));
});

test('startedLines: single-process mode and custom password appear as given', () => {
  const m = manifest();
  m.mode = 'single-process';
  m.keystore_password = 'hunter2';
  m.processes = [{ name: 'node', pid: 6000, status: 'healthy', restarts: 0, log: join(DIR, 'logs', 'node.log'), data_dir: join(DIR, 'data'), port: null }];
  const lines = startedLines(event(m));
  assert.ok(lines[0]!.endsWith(', single-process'));
  assert.ok(lines.includes('Prefunded accounts (wallet files, password "hunter2")'));
  assert.ok(lines.includes(`  node          pid 6000     ${join(DIR, 'logs', 'node.log')}`));
});

test.run();
