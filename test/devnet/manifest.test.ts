/**
 * The devnet manifest (`DIR/devnet.json`): strict parsing (every bad input is a DevnetError with
 * code DEVNET_MANIFEST_INVALID naming the field), atomic writes, the directory other commands
 * target, and whether the devnet in it is running.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  DevnetError,
  MANIFEST_FILE,
  MANIFEST_VERSION,
  currentDevnetDir,
  currentPointerPath,
  defaultDevnetDir,
  manifestPath,
  parseManifest,
  pidAlive,
  readManifest,
  runningDevnet,
  writeManifest,
  type DevnetManifest,
} from '../../src/devnet/manifest.js';
import { expectError } from '../helpers/assert.js';
import { jsonCopy, sampleManifest, withSvcHome, withTempDir } from './fixture.js';

const PATH = '/nowhere/devnet.json';

/** Asserts DEVNET_MANIFEST_INVALID whose message names `mentions` and the file. */
function expectInvalid(fn: () => unknown, mentions: string, path = PATH): void {
  const err = expectError(fn, DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
  assert.ok(err.message.includes(mentions), `message ${JSON.stringify(err.message)} should mention ${JSON.stringify(mentions)}`);
  assert.ok(err.message.includes(path), `message ${JSON.stringify(err.message)} should name ${path}`);
}

/** The sample manifest as JSON with `edit` applied. */
function edited(edit: (m: Record<string, unknown>) => void): Record<string, unknown> {
  const m = jsonCopy(sampleManifest('/nowhere'));
  edit(m);
  return m;
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  assert.type(pid, 'number');
  await new Promise<void>((res, rej) => {
    child.once('error', rej);
    child.once('exit', () => res());
  });
  return pid!;
}

// ---------------------------------------------------------------------------------------------
// parseManifest

test('parseManifest accepts a valid manifest and returns it unchanged', () => {
  const m = sampleManifest('/nowhere');
  assert.is(parseManifest(m, PATH), m);
  const json = jsonCopy(m);
  assert.equal(parseManifest(json, PATH), m);
});

test('parseManifest accepts every state and a live supervisor record', () => {
  for (const state of ['starting', 'running', 'stopping', 'stopped', 'failed'] as const) {
    const m = { ...sampleManifest('/nowhere'), state, supervisor: { pid: 4242, started_at: '2024-01-01T00:00:00.000Z' } };
    assert.is(parseManifest(m, PATH).state, state);
  }
});

test('parseManifest rejects what is not a JSON object', () => {
  for (const v of [null, undefined, 42, 'devnet', true, [], [sampleManifest('/nowhere')]]) {
    expectInvalid(() => parseManifest(v, PATH), 'not a JSON object');
  }
});

test('parseManifest rejects a missing or wrong version', () => {
  for (const v of [undefined, null, 0, 1, 4, '3', '2', 1.5]) {
    const m = edited((j) => {
      if (v === undefined) delete j.version;
      else j.version = v;
    });
    expectInvalid(() => parseManifest(m, PATH), 'version');
  }
});

const STRING_FIELDS = ['dir', 'state', 'mode', 'chain_id', 'genesis', 'validator_token_file', 'keystore_password', 'mnemonic'];
const INTEGER_FIELDS = ['network_id', 'genesis_time', 'slot_seconds', 'slots_per_epoch'];

test('parseManifest rejects each string field missing or not a string', () => {
  for (const k of STRING_FIELDS) {
    for (const bad of [undefined, null, 42, ['x'], { v: 'x' }]) {
      const m = edited((j) => {
        if (bad === undefined) delete j[k];
        else j[k] = bad;
      });
      expectInvalid(() => parseManifest(m, PATH), `${k} must be a string`);
    }
  }
});

test('parseManifest rejects each integer field missing, a string, fractional or unsafe', () => {
  for (const k of INTEGER_FIELDS) {
    for (const bad of [undefined, null, '1', 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const m = edited((j) => {
        if (bad === undefined) delete j[k];
        else j[k] = bad;
      });
      expectInvalid(() => parseManifest(m, PATH), `${k} must be an integer`);
    }
  }
});

test('parseManifest rejects missing or ill-typed endpoints', () => {
  for (const bad of [undefined, null, 'http://127.0.0.1:8546', 7, []]) {
    const m = edited((j) => {
      if (bad === undefined) delete j.endpoints;
      else j.endpoints = bad;
    });
    expectInvalid(() => parseManifest(m, PATH), 'endpoints.execution must be a string');
  }
  for (const k of ['execution', 'rpc', 'beacon', 'ws']) {
    for (const bad of [undefined, null, 8546]) {
      const m = edited((j) => {
        const e = j.endpoints as Record<string, unknown>;
        if (bad === undefined) delete e[k];
        else e[k] = bad;
      });
      expectInvalid(() => parseManifest(m, PATH), `endpoints.${k} must be a string`);
    }
  }
});

test('parseManifest rejects missing or ill-typed ports', () => {
  for (const bad of [undefined, null, 8546, 'ports']) {
    const m = edited((j) => {
      if (bad === undefined) delete j.ports;
      else j.ports = bad;
    });
    expectInvalid(() => parseManifest(m, PATH), 'ports.rest must be an integer');
  }
  for (const k of ['rest', 'rpc', 'beacon']) {
    for (const bad of [undefined, null, '8080', 80.5]) {
      const m = edited((j) => {
        const p = j.ports as Record<string, unknown>;
        if (bad === undefined) delete p[k];
        else p[k] = bad;
      });
      expectInvalid(() => parseManifest(m, PATH), `ports.${k} must be an integer`);
    }
  }
  for (const bad of [undefined, null, 8547, '8547', { 0: 8547 }]) {
    const m = edited((j) => {
      const p = j.ports as Record<string, unknown>;
      if (bad === undefined) delete p.validator_metrics;
      else p.validator_metrics = bad;
    });
    expectInvalid(() => parseManifest(m, PATH), 'ports.validator_metrics must be an array');
  }
});

test('parseManifest rejects an unknown state', () => {
  for (const bad of ['exploded', 'RUNNING', '', 'running ']) {
    expectInvalid(() => parseManifest(edited((j) => (j.state = bad)), PATH), `unknown state ${JSON.stringify(bad)}`);
  }
});

test('parseManifest rejects processes that are not a list of {name, log, ...}', () => {
  const good = { name: 'execution', pid: null, status: 'stopped', restarts: 0, log: '/nowhere/logs/execution.log', data_dir: '/nowhere/data/execution', port: null };
  const bads: unknown[] = [
    undefined,
    null,
    'execution',
    { 0: good },
    [null],
    [good, 1],
    [good, 'execution'],
    [[good]],
    [{ ...good, name: undefined }],
    [{ ...good, name: 7 }],
    [{ ...good, log: undefined }],
    [{ ...good, log: null }],
    [good, { log: '/x.log' }],
  ];
  for (const bad of bads) {
    const m = edited((j) => {
      if (bad === undefined) delete j.processes;
      else j.processes = JSON.parse(JSON.stringify(bad)) as unknown;
    });
    expectInvalid(() => parseManifest(m, PATH), 'processes must be a list');
  }
  // An empty list is a (degenerate) list.
  assert.equal(parseManifest(edited((j) => (j.processes = [])), PATH).processes, []);
});

test('parseManifest rejects validators, accounts or faucet entries without index, address and wallet', () => {
  for (const k of ['validators', 'accounts']) {
    for (const entry of [null, 'x', {}, { index: 0, address: '0x1' }, { index: '0', address: '0x1', wallet: '/w' }]) {
      expectInvalid(() => parseManifest(edited((j) => (j[k] = [entry])), PATH), `${k} must be a list of {index, address, wallet}`);
    }
  }
  expectInvalid(() => parseManifest(edited((j) => (j.faucet = { index: 0 })), PATH), 'faucet must be null or {index, address, wallet}');
  assert.is(parseManifest(edited((j) => (j.faucet = null)), PATH).faucet, null);
});

test('parseManifest rejects validators or accounts that are not lists', () => {
  for (const k of ['validators', 'accounts']) {
    for (const bad of [undefined, null, 'x', 3, { 0: {} }]) {
      const m = edited((j) => {
        if (bad === undefined) delete j[k];
        else j[k] = bad;
      });
      expectInvalid(() => parseManifest(m, PATH), `${k} must be a list of {index, address, wallet}`);
    }
  }
});

test('parseManifest rejects a supervisor that is neither null nor {pid, started_at}', () => {
  for (const bad of [undefined, 'x', 42, true, [], [4242], {}, { pid: '4242' }, { pid: null }, { pid: 1.5 }, { started_at: '2024-01-01T00:00:00.000Z' }]) {
    const m = edited((j) => {
      if (bad === undefined) delete j.supervisor;
      else j.supervisor = bad;
    });
    expectInvalid(() => parseManifest(m, PATH), 'supervisor must be null or {pid, started_at}');
  }
});

// ---------------------------------------------------------------------------------------------
// nodes and P2P

/** The sample manifest with a second, follower node (no validators, no token). */
function withFollower(j: Record<string, unknown>): Record<string, unknown>[] {
  const nodes = j.nodes as Record<string, unknown>[];
  const follower = JSON.parse(JSON.stringify(nodes[0])) as Record<string, unknown>;
  follower.index = 1;
  follower.role = 'follower';
  follower.validators = [];
  follower.validator_token_file = null;
  nodes.push(follower);
  return nodes;
}

test('parseManifest accepts several nodes, followers included, and a devnet without P2P', () => {
  const m = parseManifest(edited((j) => void withFollower(j)), PATH);
  assert.equal(m.nodes.map((n) => n.role), ['producer', 'follower']);
  const off = parseManifest(
    edited((j) => {
      j.p2p = false;
      for (const n of j.nodes as Record<string, unknown>[]) n.p2p = null;
    }),
    PATH,
  );
  assert.is(off.p2p, false);
  assert.is(off.nodes[0]!.p2p, null);
});

test('parseManifest rejects a missing p2p flag or node list', () => {
  for (const bad of [undefined, null, 'yes', 1]) expectInvalid(() => parseManifest(edited((j) => (bad === undefined ? delete j.p2p : (j.p2p = bad))), PATH), 'p2p must be a boolean');
  for (const bad of [undefined, null, {}, [], 'node']) expectInvalid(() => parseManifest(edited((j) => (bad === undefined ? delete j.nodes : (j.nodes = bad))), PATH), 'nodes must be a non-empty list');
});

test('parseManifest rejects each malformed node field, naming it', () => {
  const node = (j: Record<string, unknown>, i = 0) => (j.nodes as Record<string, unknown>[])[i]!;
  const peer = (j: Record<string, unknown>, layer: string) => (node(j).p2p as Record<string, Record<string, unknown>>)[layer]!;
  const cases: Array<[(j: Record<string, unknown>) => unknown, string]> = [
    [(j) => ((j.nodes as unknown[])[0] = 'node'), 'nodes[0] must be an object'],
    [(j) => (node(j).index = 1), 'nodes[0].index must be 0'],
    [(j) => (withFollower(j)[1]!.index = 0), 'nodes[1].index must be 1'],
    [(j) => (node(j).role = 'validator'), 'nodes[0].role must be producer or follower'],
    [(j) => (node(j).processes = { execution: 'execution' }), 'nodes[0].processes must be {execution, beacon} strings'],
    [(j) => (node(j).data_dirs = null), 'nodes[0].data_dirs must be {execution, beacon} strings'],
    [(j) => delete (node(j).endpoints as Record<string, unknown>).ws, 'nodes[0].endpoints.ws must be a string'],
    [(j) => ((node(j).ports as Record<string, unknown>).beacon = 0), 'nodes[0].ports.beacon must be a port number'],
    [(j) => ((node(j).ports as Record<string, unknown>).rest = 70000), 'nodes[0].ports.rest must be a port number'],
    [(j) => (node(j).validators = [0, -1]), 'nodes[0].validators must be a list of validator indices'],
    [(j) => (node(j).validators = '0,1'), 'nodes[0].validators must be a list of validator indices'],
    [(j) => (withFollower(j)[1]!.validators = [3]), 'nodes[1] is a follower but lists validators'],
    [(j) => (node(j).validator_token_file = 7), 'nodes[0].validator_token_file must be null or a string'],
    [(j) => (node(j).p2p = null), 'nodes[0].p2p must be {execution, beacon}'],
    [(j) => (j.p2p = false), 'nodes[0].p2p must be null when p2p is off'],
    [(j) => delete (node(j).p2p as Record<string, unknown>).beacon, 'nodes[0].p2p.beacon must be {port, peer_id, multiaddr, bootnodes}'],
    [(j) => (peer(j, 'execution').port = '9001'), 'nodes[0].p2p.execution.port must be a port number'],
    [(j) => (peer(j, 'beacon').peer_id = ''), 'nodes[0].p2p.beacon.peer_id must be a non-empty string'],
    [(j) => (peer(j, 'beacon').multiaddr = '/ip4/127.0.0.1/tcp/9000/p2p/someone-else'), 'nodes[0].p2p.beacon.multiaddr must end with /p2p/<peer_id>'],
    [(j) => (peer(j, 'execution').bootnodes = '/ip4/127.0.0.1/tcp/9003'), 'nodes[0].p2p.execution.bootnodes must be a list of multiaddrs'],
    [(j) => (peer(j, 'execution').bootnodes = [42]), 'nodes[0].p2p.execution.bootnodes must be a list of multiaddrs'],
  ];
  for (const [edit, message] of cases) expectInvalid(() => parseManifest(edited((j) => void edit(j)), PATH), message);
});

test('a version 1 manifest (before several nodes) is refused with the way out', () => {
  const err = expectError(() => parseManifest(edited((j) => (j.version = 1)), PATH), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
  assert.ok(err.message.includes('version 1, expected 3') && err.message.includes('--fresh'), err.message);
});

test('a version 2 manifest (one process per validator) reads as per-validator, each validator-K holding K', () => {
  const v2 = edited((j) => {
    j.version = 2;
    delete j.validator_processes;
    for (const p of j.processes as Array<Record<string, unknown>>) delete p.validators;
  });
  const m = parseManifest(v2, PATH);
  assert.is(m.version, MANIFEST_VERSION);
  assert.is(m.validator_processes, 'per-validator');
  assert.equal(m.processes.map((p) => [p.name, p.validators]), [
    ['execution', undefined],
    ['beacon', undefined],
    ['validator-0', [0]],
    ['validator-1', [1]],
  ]);
});

test('validator_processes and processes[].validators are checked', () => {
  expectInvalid(() => parseManifest(edited((j) => (j.validator_processes = 'per-host')), PATH), 'validator_processes must be per-node or per-validator');
  expectInvalid(() => parseManifest(edited((j) => delete j.validator_processes), PATH), 'validator_processes must be per-node or per-validator');
  expectInvalid(() => parseManifest(edited((j) => ((j.processes as Array<Record<string, unknown>>)[2]!.validators = [-1])), PATH), 'processes[2].validators must be a list of validator indices');
  expectInvalid(() => parseManifest(edited((j) => ((j.processes as Array<Record<string, unknown>>)[3]!.validators = '1')), PATH), 'processes[3].validators must be a list of validator indices');
});

test('the error tells how to recover (the directory of the file)', () => {
  const err = expectError(() => parseManifest([], '/some/devnet/devnet.json'), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
  assert.ok(err.message.includes('svc devnet up --fresh --dir /some/devnet'), err.message);
});

// ---------------------------------------------------------------------------------------------
// readManifest / writeManifest

test('manifestPath is DIR/devnet.json, absolute', () => {
  assert.is(manifestPath('/a/b'), join('/a/b', MANIFEST_FILE));
  assert.is(manifestPath('rel/dir'), join(resolve('rel/dir'), 'devnet.json'));
});

test('readManifest: undefined when there is no manifest (or no directory)', () =>
  withTempDir((dir) => {
    assert.is(readManifest(dir), undefined);
    assert.is(readManifest(join(dir, 'missing', 'deeper')), undefined);
  }),
);

test('readManifest rejects a file that is not JSON, empty, truncated or a JSON array/scalar', () =>
  withTempDir(async (dir) => {
    const path = manifestPath(dir);
    const full = JSON.stringify(sampleManifest(dir), null, 2);
    const cases: Array<[string, string]> = [
      ['not json', 'this is not json'],
      ['empty', ''],
      ['truncated', full.slice(0, Math.floor(full.length / 2))],
      ['array', JSON.stringify([sampleManifest(dir)])],
      ['null', 'null'],
      ['string', '"devnet"'],
      ['number', '1'],
    ];
    for (const [label, text] of cases) {
      await writeFile(path, text);
      const err = expectError(() => readManifest(dir), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
      assert.ok(err.message.includes(path), `${label}: ${err.message}`);
    }
  }),
);

test('readManifest rejects a valid-JSON manifest with a bad field (parseManifest runs)', () =>
  withTempDir(async (dir) => {
    const m = jsonCopy(sampleManifest(dir));
    m.version = 99;
    await writeFile(manifestPath(dir), JSON.stringify(m));
    expectInvalid(() => readManifest(dir), 'version 99', manifestPath(dir));
  }),
);

test('readManifest rejects a directory where the manifest should be', () =>
  withTempDir(async (dir) => {
    await mkdir(manifestPath(dir));
    expectError(() => readManifest(dir), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
  }),
);

test('writeManifest creates the directory, stamps updated_at and reads back equal', () =>
  withTempDir(async (tmp) => {
    const dir = join(tmp, 'nested', 'devnet');
    const m = sampleManifest(dir);
    const before = Date.now();
    await writeManifest(m);
    assert.ok(m.updated_at !== '', 'updated_at is stamped');
    const stamped = Date.parse(m.updated_at);
    assert.ok(stamped >= before - 1 && stamped <= Date.now(), `updated_at ${m.updated_at}`);
    assert.equal(readManifest(dir), m);
    assert.is((await stat(manifestPath(dir))).mode & 0o777, 0o644);
    assert.ok((await readFile(manifestPath(dir), 'utf8')).endsWith('}\n'));
  }),
);

test('writeManifest replaces an existing manifest atomically (new file renamed in, no temp files left)', () =>
  withTempDir(async (dir) => {
    const m = sampleManifest(dir);
    await writeManifest(m);
    const first = await stat(manifestPath(dir));
    const next: DevnetManifest = { ...m, state: 'running', supervisor: { pid: process.pid, started_at: new Date().toISOString() } };
    await writeManifest(next);
    const second = await stat(manifestPath(dir));
    assert.is.not(second.ino, first.ino, 'the manifest is a new file renamed over the old one, not rewritten in place');
    assert.equal(readManifest(dir), next);
    assert.equal(await readdir(dir), [MANIFEST_FILE]);
  }),
);

test('writeManifest: concurrent writes leave one complete, valid manifest', () =>
  withTempDir(async (dir) => {
    const writes = Array.from({ length: 8 }, (_, i) => writeManifest({ ...sampleManifest(dir), network_id: 1000 + i }));
    await Promise.all(writes);
    const m = readManifest(dir);
    assert.ok(m && m.network_id >= 1000 && m.network_id < 1008);
    assert.equal(await readdir(dir), [MANIFEST_FILE]);
  }),
);

// ---------------------------------------------------------------------------------------------
// currentDevnetDir

test('currentDevnetDir: $SVC_HOME/devnet without SVC_DEVNET or a pointer', () =>
  withTempDir((home) =>
    withSvcHome(home, () => {
      assert.is(defaultDevnetDir(), join(home, 'devnet'));
      assert.is(currentPointerPath(), join(home, 'current-devnet'));
      assert.is(currentDevnetDir({}), join(home, 'devnet'));
    }),
  ),
);

test('currentDevnetDir: the pointer file (trimmed) when there is no SVC_DEVNET', () =>
  withTempDir((home) =>
    withSvcHome(home, async () => {
      await writeFile(currentPointerPath(), '  /srv/devnets/alpha \n');
      assert.is(currentDevnetDir({}), '/srv/devnets/alpha');
      assert.is(currentDevnetDir({ SVC_DEVNET: '' }), '/srv/devnets/alpha', 'an empty SVC_DEVNET does not count');
    }),
  ),
);

test('currentDevnetDir: an empty pointer file falls back to $SVC_HOME/devnet', () =>
  withTempDir((home) =>
    withSvcHome(home, async () => {
      await writeFile(currentPointerPath(), ' \n');
      assert.is(currentDevnetDir({}), join(home, 'devnet'));
    }),
  ),
);

test('currentDevnetDir: SVC_DEVNET wins over the pointer, resolved to an absolute path', () =>
  withTempDir((home) =>
    withSvcHome(home, async () => {
      await writeFile(currentPointerPath(), '/srv/devnets/alpha\n');
      assert.is(currentDevnetDir({ SVC_DEVNET: '/srv/devnets/beta' }), '/srv/devnets/beta');
      assert.is(currentDevnetDir({ SVC_DEVNET: 'rel/devnet' }), resolve('rel/devnet'));
    }),
  ),
);

test('currentDevnetDir reads process.env by default', () =>
  withTempDir((home) =>
    withSvcHome(home, () => {
      const saved = process.env.SVC_DEVNET;
      try {
        process.env.SVC_DEVNET = join(home, 'from-env');
        assert.is(currentDevnetDir(), join(home, 'from-env'));
        delete process.env.SVC_DEVNET;
        assert.is(currentDevnetDir(), join(home, 'devnet'));
      } finally {
        if (saved === undefined) delete process.env.SVC_DEVNET;
        else process.env.SVC_DEVNET = saved;
      }
    }),
  ),
);

// ---------------------------------------------------------------------------------------------
// pidAlive / runningDevnet

test('pidAlive: true for this process (and for pid 1, which exists even if it is not ours)', () => {
  assert.is(pidAlive(process.pid), true);
  assert.is(pidAlive(1), true);
});

test('pidAlive: false for a process that has exited', async () => {
  assert.is(pidAlive(await deadPid()), false);
});

test('pidAlive: false for 0, null, undefined and negative pids (never probes a process group)', () => {
  assert.is(pidAlive(0), false);
  assert.is(pidAlive(null), false);
  assert.is(pidAlive(undefined), false);
  assert.is(pidAlive(-1), false);
  assert.is(pidAlive(-process.pid), false);
});

test('runningDevnet: undefined without a manifest', () =>
  withTempDir((dir) => {
    assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined);
  }),
);

test('runningDevnet: undefined for a stopped (or failed, stopping) manifest even with a live supervisor', () =>
  withTempDir(async (dir) => {
    for (const state of ['stopped', 'failed', 'stopping'] as const) {
      await writeManifest({ ...sampleManifest(dir), state, supervisor: { pid: process.pid, started_at: new Date().toISOString() } });
      assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined, state);
    }
  }),
);

test('runningDevnet: undefined for a running manifest whose supervisor is dead or absent', () =>
  withTempDir(async (dir) => {
    await writeManifest({ ...sampleManifest(dir), state: 'running', supervisor: { pid: await deadPid(), started_at: new Date().toISOString() } });
    assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined);
    await writeManifest({ ...sampleManifest(dir), state: 'running', supervisor: null });
    assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined);
  }),
);

test('runningDevnet: undefined (not a throw) for a broken manifest', () =>
  withTempDir(async (dir) => {
    await writeFile(manifestPath(dir), '{"version": 1, "state": "running"');
    assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined);
    await writeFile(manifestPath(dir), JSON.stringify({ ...sampleManifest(dir), state: 'running', supervisor: { pid: '1' } }));
    assert.is(runningDevnet({ SVC_DEVNET: dir }), undefined);
  }),
);

test('runningDevnet: the manifest when running (or starting) with a live supervisor', () =>
  withTempDir(async (dir) => {
    for (const state of ['running', 'starting'] as const) {
      const m: DevnetManifest = { ...sampleManifest(dir), state, supervisor: { pid: process.pid, started_at: new Date().toISOString() } };
      await writeManifest(m);
      assert.equal(runningDevnet({ SVC_DEVNET: dir }), m, state);
    }
  }),
);

test('runningDevnet: finds the devnet through the $SVC_HOME pointer without SVC_DEVNET', () =>
  withTempDir(async (tmp) => {
    const home = join(tmp, 'home');
    const dir = join(tmp, 'elsewhere');
    await mkdir(home);
    const m: DevnetManifest = { ...sampleManifest(dir), state: 'running', supervisor: { pid: process.pid, started_at: new Date().toISOString() } };
    await writeManifest(m);
    await withSvcHome(home, async () => {
      assert.is(runningDevnet({}), undefined, 'no pointer: $SVC_HOME/devnet has nothing');
      await writeFile(currentPointerPath(), dir + '\n');
      assert.equal(runningDevnet({}), m);
    });
  }),
);

test.run();
