/**
 * Equivalence of an exported network, without a container engine: `svc devnet export --format
 * compose` for 2 validators on 1 producing node and 1 follower (the smallest network with every
 * kind of service: genesis step, execution, beacon, validator, follower), then each service's
 * command and environment from compose.yaml run as local `svc` processes (test/helpers/compose-local.ts:
 * volumes are temp dirs, secrets their files, services on loopback with only host names and ports
 * rewritten) in depends_on order, each health condition checked by the service's own healthcheck
 * command. The network they form must finalise on both nodes, the follower over the /dns4
 * bootnodes and provisioned peer keys the export named: proof that the exported commands, flags,
 * ports, secrets and bootnodes fit together.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PeersView } from '../../src/api/beacon.js';
import type { ComposeFile } from '../../src/devnet/export/compose.js';
import { cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { localPlan, startLocal } from '../helpers/compose-local.js';
import { type BeaconHead, ProcessGroup, getJson, waitFor } from '../helpers/network.js';

const SLOT_SECONDS = 2;
const SLOTS_PER_EPOCH = 2;
const IMAGE = 'svc:test';

test('the exported Compose network, run as local processes, finalises on the producer and the follower', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const out = join(dir, 'export');
    // Genesis a few seconds ahead: the first slots are not lost to start-up.
    const genesisTime = Math.floor(Date.now() / 1000) + 10;
    const exported = expectJsonOk(
      await runCli(['devnet', 'export', '--format', 'compose', '--validators', '2', '--nodes', '1', '--followers', '1', '--slot-time', String(SLOT_SECONDS), '--slots-per-epoch', String(SLOTS_PER_EPOCH), '--genesis-time', String(genesisTime), '--image', IMAGE, '--out', out, '--json'], env),
    );
    const file = JSON.parse(await readFile(join(out, 'compose.yaml'), 'utf8')) as ComposeFile;
    const plan = await localPlan(file, IMAGE, out, dir);
    assert.equal([...plan.services.keys()].sort(), ['beacon-0', 'beacon-1', 'execution-0', 'execution-1', 'genesis', 'validator-0', 'validator-1']);
    console.log(`  not run locally (other images): ${plan.skipped.join(', ')}`);

    const group = new ProcessGroup(env);
    const epochMs = SLOT_SECONDS * SLOTS_PER_EPOCH * 1000;
    try {
      await startLocal(plan, group, 60_000);
      const beaconUrl = (name: string) => `http://127.0.0.1:${plan.services.get(name)!.ports.get(8080)}`;
      const finalised = (name: string) =>
        waitFor(`${name} to finalise epoch 1`, async () => {
          const head = (await getJson(`${beaconUrl(name)}/api/v1/beacon/head`)).data as BeaconHead;
          return head.finalized.epoch >= 1 ? head : undefined;
        }, Math.max(0, genesisTime * 1000 - Date.now()) + 12 * epochMs + 30_000);
      const [producer, follower] = await Promise.all([finalised('beacon-0'), finalised('beacon-1')]);
      assert.ok(producer.finalized.epoch >= 1 && follower.finalized.epoch >= 1);
      const health = await getJson(`${beaconUrl('beacon-1')}/beacon/v1/node/health`);
      assert.ok(health.peers >= 1, `the follower has peers: ${JSON.stringify(health)}`);
      // The follower dialled with the key the genesis step provisioned: the producer sees the peer id the export announced.
      const peers = (await getJson(`${beaconUrl('beacon-0')}/api/v1/p2p/peers`)) as PeersView;
      assert.ok(peers.peers.some((p) => p.peer_id === exported.nodes[1].peer_ids.beacon), `the producer's peers ${JSON.stringify(peers.peers.map((p) => p.peer_id))} include the follower's exported id`);
    } catch (err) {
      group.dumpLogs();
      throw err;
    } finally {
      await group.killAll();
    }
  });
});

test.run();
