/**
 * Preparing a multi-node devnet without starting it (real genesis, real peer keys, temp dirs):
 * the manifest's nodes, ports, peer ids and bootnodes, and the processes planned with the node
 * flags they get. Also the node counts `up` accepts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DevnetError, readManifest, writeManifest, type DevnetManifest } from '../../src/devnet/manifest.js';
import { type PreparedDevnet, prepareDevnet } from '../../src/devnet/lifecycle.js';
import { devnetShape } from '../../src/devnet/plan.js';
import { peerIdFromKeyFile } from '../../src/node/p2p/identity.js';
import type { ProcessSpec } from '../../src/devnet/supervisor.js';
import { expectError } from '../helpers/assert.js';
import { withSvcHome, withTempDir } from './fixture.js';

/** Prepares a devnet in `dir` with small keystores; nothing is started. */
function prepare(dir: string, extra: { nodes?: number; followers?: number; p2p?: boolean; fresh?: boolean; validators?: number; singleProcess?: boolean } = {}): Promise<PreparedDevnet> {
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
      const ports = [...m.nodes.flatMap((n) => [n.ports.rest, n.ports.rpc, n.ports.beacon, n.p2p!.execution.port, n.p2p!.beacon.port]), ...m.ports.validator_metrics];
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
      assert.equal(prep.groups.map((g) => g.map((p) => p.name)), [
        ['execution'],
        ['beacon', 'validator-0', 'validator-2', 'execution-1'],
        ['beacon-1', 'validator-1', 'validator-3', 'execution-2'],
        ['beacon-2'],
      ]);
      assert.equal(m.processes.map((p) => p.name), prep.groups.flat().map((p) => p.name));
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
      const v3 = spec(prep, 'validator-3');
      assert.is(flag(v3, '--beacon-url'), m.nodes[1]!.endpoints.beacon);
      assert.is(flag(v3, '--execution-url'), m.nodes[1]!.endpoints.execution);
      assert.is(flag(v3, '--token-file'), m.nodes[1]!.validator_token_file);
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
      assert.equal(prep.groups.map((g) => g.map((p) => p.name)), [['execution'], ['beacon', 'validator-0', 'validator-1']]);
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
    }),
  ),
);

test.run();
