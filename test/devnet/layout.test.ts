/** Where a devnet keeps its files, and what `down --clean` / `up --fresh` may remove. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { devnetLayout, devnetOwnedPaths, logPath, nodeDataDirs, nodeProcessNames, nodeTokenPath, validatorDataDir, type DevnetLayout } from '../../src/devnet/layout.js';

const DIR = '/srv/devnets/alpha';

/** Whether `p` is strictly inside `dir` (not `dir` itself, not outside it). */
function strictlyInside(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel);
}

/** Whether `p` is `owner` or inside it. */
function covered(owner: string, p: string): boolean {
  const rel = relative(owner, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function layoutPaths(l: DevnetLayout): string[] {
  return [l.genesisDir, l.genesis, l.keystores, l.data, l.logs, l.token, l.manifest, l.supervisorLog, l.monitoring];
}

test('devnetLayout: the documented names under the directory', () => {
  const l = devnetLayout(DIR);
  assert.equal(l, {
    dir: DIR,
    genesisDir: join(DIR, 'genesis'),
    genesis: join(DIR, 'genesis', 'genesis.json'),
    keystores: join(DIR, 'genesis', 'keystores'),
    data: join(DIR, 'data'),
    logs: join(DIR, 'logs'),
    token: join(DIR, 'validator-token'),
    manifest: join(DIR, 'devnet.json'),
    supervisorLog: join(DIR, 'supervisor.log'),
    monitoring: join(DIR, 'monitoring'),
  });
});

test('devnetLayout resolves relative and unnormalised directories', () => {
  assert.is(devnetLayout('rel/devnet').dir, resolve('rel/devnet'));
  assert.is(devnetLayout('/srv/x/../devnets/alpha/').dir, DIR);
  for (const p of layoutPaths(devnetLayout('rel/devnet'))) assert.ok(isAbsolute(p), p);
});

test('devnetOwnedPaths: genesis, data, logs, token, manifest, monitoring files and the supervisor log', () => {
  const l = devnetLayout(DIR);
  assert.equal(devnetOwnedPaths(l), [l.genesisDir, l.data, l.logs, l.token, l.manifest, l.monitoring, l.supervisorLog]);
  assert.equal(devnetOwnedPaths(l, {}), devnetOwnedPaths(l));
  assert.equal(devnetOwnedPaths(l, { keepSupervisorLog: false }), devnetOwnedPaths(l));
});

test('devnetOwnedPaths with keepSupervisorLog leaves only the supervisor log out', () => {
  const l = devnetLayout(DIR);
  const kept = devnetOwnedPaths(l, { keepSupervisorLog: true });
  assert.ok(!kept.includes(l.supervisorLog));
  assert.equal(kept, devnetOwnedPaths(l).filter((p) => p !== l.supervisorLog));
});

test('devnetOwnedPaths: everything strictly inside the directory, never the directory itself, no duplicates', () => {
  for (const dir of [DIR, 'rel/devnet', '/srv/x/../devnets/alpha/', '/']) {
    const l = devnetLayout(dir);
    for (const keepSupervisorLog of [false, true]) {
      const owned = devnetOwnedPaths(l, { keepSupervisorLog });
      assert.is(new Set(owned).size, owned.length);
      for (const p of owned) {
        assert.ok(isAbsolute(p), p);
        assert.ok(strictlyInside(l.dir, p), `${p} is not strictly inside ${l.dir}`);
      }
    }
  }
});

test('devnetOwnedPaths covers every file the devnet writes (genesis, keystores, data dirs, logs)', () => {
  const l = devnetLayout(DIR);
  const owned = devnetOwnedPaths(l);
  const written = [
    ...layoutPaths(l),
    logPath(l, 'execution'),
    logPath(l, 'validator-3'),
    logPath(l, 'beacon-2'),
    validatorDataDir(l, '0x' + 'ab'.repeat(20)),
    ...Object.values(nodeDataDirs(l, 0)),
    ...Object.values(nodeDataDirs(l, 3)),
    nodeTokenPath(l, 0),
    nodeTokenPath(l, 2),
  ];
  for (const p of written) assert.ok(owned.some((o) => covered(o, p)), `${p} would survive down --clean`);
});

test('logPath and validatorDataDir name files inside logs/ and data/', () => {
  const l = devnetLayout(DIR);
  assert.is(logPath(l, 'beacon'), join(DIR, 'logs', 'beacon.log'));
  const addr = '0x' + 'ab'.repeat(20);
  assert.is(validatorDataDir(l, addr), join(DIR, 'data', `validator-${addr}`));
});

test('nodes: node 0 keeps the single-node layout and names; others get data/node-I/ and an own token', () => {
  const l = devnetLayout(DIR);
  assert.equal(nodeDataDirs(l, 0), { execution: join(DIR, 'data', 'execution'), beacon: join(DIR, 'data', 'beacon') });
  assert.equal(nodeDataDirs(l, 2), { execution: join(DIR, 'data', 'node-2', 'execution'), beacon: join(DIR, 'data', 'node-2', 'beacon') });
  assert.is(nodeTokenPath(l, 0), l.token);
  assert.is(nodeTokenPath(l, 1), join(DIR, 'data', 'node-1', 'validator-token'));
  assert.equal(nodeProcessNames(0), { execution: 'execution', beacon: 'beacon' });
  assert.equal(nodeProcessNames(3), { execution: 'execution-3', beacon: 'beacon-3' });
  const dirs = [0, 1, 2, 3].flatMap((i) => Object.values(nodeDataDirs(l, i)));
  assert.is(new Set(dirs).size, dirs.length, 'no two layers share a data directory');
  const tokens = [0, 1, 2, 3].map((i) => nodeTokenPath(l, i));
  assert.is(new Set(tokens).size, tokens.length);
});

test.run();
