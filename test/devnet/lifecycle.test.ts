/**
 * Preparing a multi-node devnet without starting it (real genesis, real peer keys, temp dirs):
 * the manifest's nodes, ports, peer ids and bootnodes, and the processes planned with the node
 * flags they get. Also the node counts `up` accepts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { DevnetError, isSvcProcess, readManifest, writeManifest, type DevnetManifest, type ValidatorProcesses } from '../../src/devnet/manifest.js';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { type PreparedDevnet, prepareDevnet } from '../../src/devnet/lifecycle.js';
import { devnetShape } from '../../src/devnet/plan.js';
import { peerIdFromKeyFile } from '../../src/node/p2p/identity.js';
import type { ProcessSpec } from '../../src/devnet/supervisor.js';
import { expectError } from '../helpers/assert.js';
import { withSvcHome, withTempDir } from './fixture.js';

/** Prepares a devnet in `dir` with small keystores; nothing is started. */
function prepare(dir: string, extra: { nodes?: number; followers?: number; p2p?: boolean; fresh?: boolean; validators?: number; singleProcess?: boolean; validatorProcesses?: ValidatorProcesses } = {}): Promise<PreparedDevnet> {
  const { fresh = false, singleProcess = false, ...rest } = extra;
  return prepareDevnet({ dir, accounts: 1, kdfMemoryKib: 64, fresh, singleProcess, ...rest });
}

/** As if the supervisor that prepared it had stopped (so the directory can be prepared again). */
async function markStopped(m: DevnetManifest): Promise<void> {
  await writeManifest({ ...m, state: 'stopped', supervisor: null });
}

/** The value after `flag` in a process's arguments. */
function flag(spec: ProcessSpec, name: string): string | undefined {
  const i = spec.args.indexOf(name);
  return i < 0 ? undefined : spec.args[i + 1];
}

/** Every value of a repeated flag. */
function flags(spec: ProcessSpec, name: string): string[] {
  return spec.args.flatMap((a, i) => (a === name ? [spec.args[i + 1]!] : []));
}

function spec(prep: PreparedDevnet, name: string): ProcessSpec {
  const s = prep.groups.flat().find((p) => p.name === name);
  assert.ok(s, `no process ${name} in ${prep.groups.flat().map((p) => p.name).join(', ')}`);
  return s;
}

test('devnetShape: flags, else the resumed devnet, else one producer; impossible shapes refused', () => {
  const base = { singleProcess: false };
  assert.equal(devnetShape(base), { producers: 1, followers: 0, p2p: true });
  assert.equal(devnetShape({ ...base, nodes: 3, followers: 2 }), { producers: 3, followers: 2, p2p: true });
  const previous = { p2p: true, nodes: [{ role: 'producer' }, { role: 'producer' }, { role: 'follower' }] } as Pick<DevnetManifest, 'nodes' | 'p2p'>;
  assert.equal(devnetShape(base, previous), { producers: 2, followers: 1, p2p: true });
  assert.equal(devnetShape({ ...base, followers: 0 }, previous), { producers: 2, followers: 0, p2p: true });
  assert.equal(devnetShape({ ...base, p2p: false }), { producers: 1, followers: 0, p2p: false });
  assert.equal(devnetShape({ singleProcess: true }), { producers: 1, followers: 0, p2p: true });
  for (const bad of [
    { ...base, nodes: 2, p2p: false },
    { ...base, followers: 1, p2p: false },
    { singleProcess: true, nodes: 2 },
    { singleProcess: true, followers: 1 },
    { ...base, nodes: 0 },
    { ...base, followers: -1 },
  ]) {
    expectError(() => devnetShape(bad), DevnetError, { code: 'USAGE' });
  }
});

test('prepareDevnet --nodes 2 --followers 1: nodes, validators round-robin, peer ids in the key files, bootnodes, node flags', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net');
      const prep = await prepare(dir, { validators: 4, nodes: 2, followers: 1 });
      const m = prep.manifest;
      assert.equal(readManifest(dir), m, 'written as prepared');
      assert.is(m.p2p, true);
      assert.equal(m.nodes.map((n) => [n.index, n.role, n.validators]), [
        [0, 'producer', [0, 2]],
        [1, 'producer', [1, 3]],
        [2, 'follower', []],
      ]);
      // Node 0 is the default target of every other command.
      assert.equal(m.endpoints, m.nodes[0]!.endpoints);
      assert.is(m.validator_token_file, m.nodes[0]!.validator_token_file);
      assert.is(m.nodes[2]!.validator_token_file, null);
      assert.ok(existsSync(m.nodes[1]!.validator_token_file!));

      // Every port distinct.
      const ports = [...m.nodes.flatMap((n) => [n.ports.rest, n.ports.rpc, n.ports.beacon, n.p2p!.execution.port, n.p2p!.beacon.port]), ...new Set(m.ports.validator_metrics)];
      assert.is(new Set(ports).size, ports.length, ports.join(', '));

      // The peer ids in the manifest are those of the keys written into each layer's data directory.
      const ids: string[] = [];
      for (const n of m.nodes) {
        for (const layer of ['execution', 'beacon'] as const) {
          const p = n.p2p![layer];
          assert.is(await peerIdFromKeyFile(n.data_dirs[layer]), p.peer_id, `node ${n.index} ${layer}`);
          assert.is(p.multiaddr, `/ip4/127.0.0.1/tcp/${p.port}/p2p/${p.peer_id}`);
          ids.push(p.peer_id);
        }
      }
      assert.is(new Set(ids).size, ids.length, 'six distinct identities');
      const addr = (i: number, layer: 'execution' | 'beacon') => m.nodes[i]!.p2p![layer].multiaddr;
      for (const layer of ['execution', 'beacon'] as const) {
        assert.equal(m.nodes[0]!.p2p![layer].bootnodes, [addr(1, layer), addr(2, layer)]);
        assert.equal(m.nodes[1]!.p2p![layer].bootnodes, [addr(0, layer)]);
        assert.equal(m.nodes[2]!.p2p![layer].bootnodes, [addr(0, layer), addr(1, layer)]);
      }

      // Processes: names, start order, and the flags each node gets.
      assert.is(m.validator_processes, 'per-node');
      assert.equal(prep.groups.map((g) => g.map((p) => p.name)), [
        ['execution'],
        ['beacon', 'validators', 'execution-1'],
        ['beacon-1', 'validators-1', 'execution-2'],
        ['beacon-2'],
      ]);
      assert.equal(m.processes.map((p) => p.name), prep.groups.flat().map((p) => p.name));
      assert.equal(m.processes.map((p) => p.validators), [undefined, undefined, [0, 2], undefined, undefined, [1, 3], undefined, undefined]);
      // Validators of one process share its metrics port.
      const [p0, p1] = [spec(prep, 'validators').port, spec(prep, 'validators-1').port];
      assert.equal(m.ports.validator_metrics, [p0, p1, p0, p1]);
      const b1 = spec(prep, 'beacon-1');
      assert.is(flag(b1, '--p2p-port'), String(m.nodes[1]!.p2p!.beacon.port));
      assert.is(flag(b1, '--p2p-host'), '127.0.0.1');
      assert.is(flag(b1, '--bootnodes'), addr(0, 'beacon'));
      assert.is(flag(b1, '--execution-url'), m.nodes[1]!.endpoints.execution);
      assert.is(flag(b1, '--data-dir'), join(dir, 'data', 'node-1', 'beacon'));
      assert.is(flag(b1, '--validator-token-file'), m.nodes[1]!.validator_token_file);
      const e2 = spec(prep, 'execution-2');
      assert.is(flag(e2, '--bootnodes'), `${addr(0, 'execution')},${addr(1, 'execution')}`);
      assert.is(flag(e2, '--rest-port'), String(m.nodes[2]!.ports.rest));
      assert.is(flag(spec(prep, 'beacon-2'), '--validator-token-file'), undefined, 'a follower serves no validators');
      const v1 = spec(prep, 'validators-1');
      assert.equal(flags(v1, '--keystore'), [m.validators[1]!.wallet, m.validators[3]!.wallet]);
      assert.is(flag(v1, '--beacon-url'), m.nodes[1]!.endpoints.beacon);
      assert.is(flag(v1, '--execution-url'), undefined, 'the validator talks only to its beacon (issue 28: no execution URL)');
      assert.is(flag(v1, '--token-file'), m.nodes[1]!.validator_token_file);
      assert.is(flag(v1, '--data-dir'), join(dir, 'data', 'node-1', 'validator'));
      assert.is(flag(v1, '--metrics-port'), String(p1));
      assert.equal(v1.healthUrls, [`http://127.0.0.1:${p1}/metrics`]);
      assert.is(flag(spec(prep, 'validators'), '--data-dir'), join(dir, 'data', 'validator'), 'node 0: the directory svc node all uses');
      assert.is(flag(spec(prep, 'execution'), '--bootnodes'), `${addr(1, 'execution')},${addr(2, 'execution')}`);

      // Resumed: the same identities and ports, and the node counts of the previous run.
      await markStopped(m);
      const again = await prepare(dir);
      assert.is(again.resumed, true);
      assert.equal(again.manifest.nodes.map((n) => n.p2p), m.nodes.map((n) => n.p2p));
      assert.equal(again.manifest.nodes.map((n) => n.ports), m.nodes.map((n) => n.ports));

      // More producers than validators cannot run.
      await markStopped(again.manifest);
      const refused = await prepare(dir, { nodes: 5 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expectError(() => {
        throw refused ?? new Error('prepareDevnet accepted 5 producers for 4 validators');
      }, DevnetError, { code: 'USAGE', messageStartsWith: '--nodes 5 needs' });
    }),
  ),
);

test('prepareDevnet with one node: the processes of before, P2P on with no bootnodes; --no-p2p passes --no-p2p', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net');
      const prep = await prepare(dir, { validators: 2 });
      assert.equal(prep.groups.map((g) => g.map((p) => p.name)), [['execution'], ['beacon', 'validators']]);
      const node = prep.manifest.nodes[0]!;
      assert.equal(node.data_dirs, { execution: join(dir, 'data', 'execution'), beacon: join(dir, 'data', 'beacon') });
      assert.equal(node.p2p!.beacon.bootnodes, []);
      assert.is(flag(spec(prep, 'beacon'), '--bootnodes'), undefined);
      assert.is(flag(spec(prep, 'beacon'), '--p2p-port'), String(node.p2p!.beacon.port));
      assert.is(flag(spec(prep, 'beacon'), '--validator-token-file'), join(dir, 'validator-token'));

      await markStopped(prep.manifest);
      const off = await prepare(dir, { p2p: false });
      assert.is(off.manifest.p2p, false);
      assert.is(off.manifest.nodes[0]!.p2p, null);
      for (const s of off.groups.flat().filter((p) => p.args[1] !== 'validator')) assert.ok(s.args.includes('--no-p2p'), s.name);

      await markStopped(off.manifest);
      const single = await prepare(dir, { singleProcess: true });
      const node0 = single.manifest.nodes[0]!;
      const all = spec(single, 'node');
      assert.is(flag(all, '--p2p-port'), String(node0.p2p!.beacon.port));
      assert.is(flag(all, '--execution-p2p-port'), String(node0.p2p!.execution.port));
      assert.is(await peerIdFromKeyFile(join(dir, 'data', 'beacon')), node0.p2p!.beacon.peer_id, 'svc node all reads the same key files');
      assert.is(single.manifest.validator_processes, 'per-node', 'svc node all runs one validator client for every key');
      const port = Number(flag(all, '--validator-metrics-port'));
      assert.equal(single.manifest.ports.validator_metrics, [port, port], 'one metrics server for both keys');
    }),
  ),
);

test('--validator-processes per-validator: one process, data directory and metrics port per validator, as before packing', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net');
      const prep = await prepare(dir, { validators: 4, nodes: 2, validatorProcesses: 'per-validator' });
      const m = prep.manifest;
      assert.is(m.validator_processes, 'per-validator');
      assert.equal(prep.groups.map((g) => g.map((p) => p.name)), [['execution'], ['beacon', 'validator-0', 'validator-2', 'execution-1'], ['beacon-1', 'validator-1', 'validator-3']]);
      const v3 = spec(prep, 'validator-3');
      assert.equal(flags(v3, '--keystore'), [m.validators[3]!.wallet]);
      assert.is(flag(v3, '--data-dir'), join(dir, 'data', `validator-${m.validators[3]!.address}`));
      assert.is(flag(v3, '--beacon-url'), m.nodes[1]!.endpoints.beacon);
      assert.is(new Set(m.ports.validator_metrics).size, 4, 'a metrics port each');
      assert.equal(m.processes.filter((p) => p.validators).map((p) => [p.name, p.validators, p.port]), [0, 2, 1, 3].map((v) => [`validator-${v}`, [v], m.ports.validator_metrics[v]]));
    }),
  ),
);

test('a resumed devnet keeps the layout its slashing protection is in; another layout or node count is refused', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net');
      const packed = await prepare(dir, { validators: 4, nodes: 2 });
      // Until a validator has run there is no protection to lose: any layout may follow.
      await markStopped(packed.manifest);
      const before = await prepare(dir, { validatorProcesses: 'per-validator' });
      assert.is(before.manifest.validator_processes, 'per-validator');
      await markStopped(before.manifest);
      const again = await prepare(dir, { validatorProcesses: 'per-node' });
      // The packed processes ran (their data directories exist).
      await mkdir(join(dir, 'data', 'validator'), { recursive: true });
      await mkdir(join(dir, 'data', 'node-1', 'validator'), { recursive: true });
      await markStopped(again.manifest);
      const resumed = await prepare(dir);
      assert.is(resumed.manifest.validator_processes, 'per-node');
      for (const [opts, says] of [
        [{ validatorProcesses: 'per-validator' as const }, '--validator-processes per-validator would start its validators without their slashing-protection history'],
        [{ singleProcess: true, nodes: 1 }, 'packs its validators into the processes of 2 producing node(s); --nodes 1 would move'],
        [{ nodes: 1 }, 'packs its validators into the processes of 2 producing node(s); --nodes 1 would move'],
      ] as const) {
        await markStopped(resumed.manifest);
        const err = await prepare(dir, opts).then(() => undefined, (e: unknown) => e);
        expectError(() => {
          throw err ?? new Error(`prepareDevnet accepted ${JSON.stringify(opts)}`);
        }, DevnetError, { code: 'DEVNET_MISMATCH' });
        assert.ok((err as Error).message.includes(says), (err as Error).message);
        assert.ok((err as Error).message.includes('--fresh'), (err as Error).message);
      }
      // --fresh starts over in any layout.
      const fresh = await prepare(dir, { fresh: true, validators: 2, validatorProcesses: 'per-validator' });
      assert.is(fresh.manifest.validator_processes, 'per-validator');
    }),
  ),
);

test('a devnet of the previous version (manifest 2, a data directory per validator) resumes with a process per validator', () =>
  withTempDir((tmp) =>
    withSvcHome(tmp, async () => {
      const dir = join(tmp, 'net');
      const prep = await prepare(dir, { validators: 2, validatorProcesses: 'per-validator' });
      const m = prep.manifest;
      for (const v of m.validators) await mkdir(join(dir, 'data', `validator-${v.address}`), { recursive: true });
      // What the previous version wrote: version 2, no validator_processes, no processes[].validators.
      const old = JSON.parse(JSON.stringify({ ...m, version: 2, state: 'stopped', supervisor: null })) as Record<string, unknown>;
      delete old.validator_processes;
      for (const p of old.processes as Array<Record<string, unknown>>) delete p.validators;
      await writeFile(join(dir, 'devnet.json'), JSON.stringify(old));
      const resumed = await prepare(dir);
      assert.is(resumed.resumed, true);
      assert.is(resumed.manifest.validator_processes, 'per-validator');
      assert.equal(resumed.groups.flat().map((p) => p.name), ['execution', 'beacon', 'validator-0', 'validator-1']);
      assert.equal(resumed.manifest.ports.validator_metrics, m.ports.validator_metrics, 'the same metrics ports');
      await markStopped(resumed.manifest);
      const err = await prepare(dir, { validatorProcesses: 'per-node' }).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof DevnetError && err.code === 'DEVNET_MISMATCH' && err.message.includes('one validator process per validator'), String(err));
      // svc node all adopts per-key directories into its shared one, so single-process may follow.
      const single = await prepare(dir, { singleProcess: true });
      assert.is(single.manifest.validator_processes, 'per-node');
    }),
  ),
);

test('isSvcProcess: node running run.js or the svc bin link (npx, global installs) is svc; another node process is not', async () => {
  await withTempDir(async (dir) => {
    const script = join(dir, 'run.js');
    await writeFile(script, 'setInterval(() => {}, 1000);\n');
    await symlink(script, join(dir, 'svc'));
    await writeFile(join(dir, 'other.js'), 'setInterval(() => {}, 1000);\n');
    const kids = ['run.js', 'svc', 'other.js'].map((f) => spawn(process.execPath, [join(dir, f), 'devnet', 'up'], { stdio: 'ignore' }));
    try {
      await Promise.all(kids.map((k) => once(k, 'spawn')));
      assert.equal(kids.map((k) => isSvcProcess(k.pid!)), [true, true, false]);
    } finally {
      for (const k of kids) k.kill('SIGKILL');
    }
  });
});

test.run();
