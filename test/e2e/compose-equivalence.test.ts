/**
 * Equivalence of an exported network, without a container engine: `svc devnet export --format
 * compose` for 2 validators on 1 producing node and 1 follower (the smallest network with every
 * kind of service: genesis step, execution, beacon, validator, follower), then each service's
 * command and environment from compose.yaml run as local `svc` processes
 * (test/helpers/compose-local.ts: volumes are temp dirs, secrets their files) in depends_on order,
 * each health condition checked by the service's own healthcheck command where the service runs.
 *
 * One placement per run:
 * - netns (where network namespaces can be made: Linux, root, iproute2): each service in its own
 *   namespace on the lab's data network (test/helpers/netns.ts), with the Compose file's exact
 *   ports and listen addresses, and service names (`http://execution-0:8546`,
 *   `/dns4/beacon-0/tcp/9000/…`) resolved through the lab's hosts file, which the test first
 *   checks Node's resolver sees inside a namespace. The test reaches the beacons over the lab's
 *   management links. This is what a Compose network gives: a host per service, names by DNS.
 * - loopback (otherwise, or with SVC_COMPOSE_MODE=loopback): every service on 127.0.0.1, only host
 *   names and ports rewritten. SVC_COMPOSE_MODE=netns fails instead of falling back.
 * The test prints which placement ran and why.
 *
 * The network they form must finalise on both nodes, the follower over the /dns4 bootnodes and
 * provisioned peer keys the export named: proof that the exported commands, flags, ports,
 * secrets and bootnodes fit together.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PeersView } from '../../src/api/beacon.js';
import type { ComposeFile } from '../../src/devnet/export/compose.js';
import { cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { type LocalPlan, type LocalService, loopbackPlan, netnsPlan, startLocal } from '../helpers/compose-local.js';
import { NetnsLab } from '../helpers/netns.js';
import { type BeaconHead, ProcessGroup, getJson, waitFor } from '../helpers/network.js';

const SLOT_SECONDS = 2;
const SLOTS_PER_EPOCH = 2;
const IMAGE = 'svc:test';
const MODE = process.env.SVC_COMPOSE_MODE ?? '';
/** Arguments that are container paths (volumes, secrets): the only ones a local run may change. */
const CONTAINER_PATH = /^\/(svc|data|run\/secrets|app)(\/|$)/;

/** What Node's resolver answers for each of `names` inside a service's namespace (dns.lookup: /etc/hosts, as net.connect uses). */
function lookupsIn(svc: LocalService, names: readonly string[]): Promise<Record<string, string>> {
  const js = `const dns = require('node:dns').promises;
Promise.all(JSON.parse(process.argv[1]).map((n) => dns.lookup(n, { family: 4 }).then((r) => [n, r.address], (e) => [n, e.code])))
  .then((all) => process.stdout.write(JSON.stringify(Object.fromEntries(all))));`;
  const argv = [...svc.prefix, process.execPath, '-e', js, JSON.stringify(names)];
  return new Promise((resolve, reject) => {
    execFile(argv[0]!, argv.slice(1), { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`lookup in ${svc.name}: ${stderr.trim() || err.message}`)) : resolve(JSON.parse(stdout) as Record<string, string>)));
  });
}

test('the exported Compose network, run as local processes, finalises on the producer and the follower', async () => {
  if (MODE !== '' && MODE !== 'netns' && MODE !== 'loopback') throw new Error(`SVC_COMPOSE_MODE must be netns or loopback, got ${MODE}`);
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const out = join(dir, 'export');
    // Genesis a few seconds ahead: the first slots are not lost to start-up (namespaces take a few more).
    const genesisTime = Math.floor(Date.now() / 1000) + 15;
    const exported = expectJsonOk(
      await runCli(['devnet', 'export', '--format', 'compose', '--validators', '2', '--nodes', '1', '--followers', '1', '--slot-time', String(SLOT_SECONDS), '--slots-per-epoch', String(SLOTS_PER_EPOCH), '--genesis-time', String(genesisTime), '--image', IMAGE, '--out', out, '--json'], env),
    );
    const file = JSON.parse(await readFile(join(out, 'compose.yaml'), 'utf8')) as ComposeFile;
    const mine = Object.keys(file.services).filter((n) => file.services[n]!.image === IMAGE);

    let lab: NetnsLab | undefined;
    let why: string;
    if (MODE === 'loopback') {
      why = 'SVC_COMPOSE_MODE=loopback';
    } else {
      const made = await NetnsLab.create(mine.map((_n, k) => `s${k}`));
      if (typeof made === 'string') {
        if (MODE === 'netns') throw new Error(`SVC_COMPOSE_MODE=netns, but ${made}`);
        why = `no network namespaces: ${made}`;
      } else {
        lab = made;
        why = 'network namespaces available';
      }
    }
    const group = new ProcessGroup(env);
    try {
      const plan: LocalPlan = lab ? netnsPlan(file, IMAGE, out, dir, lab) : await loopbackPlan(file, IMAGE, out, dir);
      console.log(`  placement: ${lab ? 'netns (a namespace per service, exact ports, names through the lab hosts file)' : 'loopback (host names and ports rewritten)'}, because ${why}`);
      assert.equal([...plan.services.keys()].sort(), ['beacon-0', 'beacon-1', 'execution-0', 'execution-1', 'genesis', 'validators-0']);
      console.log(`  not run locally (other images): ${plan.skipped.join(', ')}`);
      if (lab) {
        // Inside a namespace, every service name is its namespace's data address, as Compose DNS would answer.
        const expected = Object.fromEntries(mine.map((n, k) => [n, lab!.hosts.get(`s${k}`)!.dataIp]));
        assert.equal(await lookupsIn(plan.services.get('beacon-1')!, mine), expected, 'service names resolve through the lab hosts file');
        // Nothing but mounted paths differs from the Compose command: ports, listen addresses and names are as exported.
        for (const s of plan.services.values()) {
          const command = file.services[s.name]!.command ?? [];
          assert.equal(s.args.filter((_a, i) => !CONTAINER_PATH.test(command[i]!)), command.filter((a) => !CONTAINER_PATH.test(a)), `${s.name} runs its exported command`);
        }
      }

      const epochMs = SLOT_SECONDS * SLOTS_PER_EPOCH * 1000;
      await startLocal(plan, group, 60_000);
      const beaconUrl = (name: string) => {
        const s = plan.services.get(name)!;
        return `http://${s.address}:${s.ports.get(8080)}`;
      };
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
      const followerPeer = peers.peers.find((p) => p.peer_id === exported.nodes[1].peer_ids.beacon);
      assert.ok(followerPeer, `the producer's peers ${JSON.stringify(peers.peers.map((p) => p.peer_id))} include the follower's exported id`);
      if (lab && followerPeer) {
        // Over the data network, between the two namespaces: the follower's own address (or the name it was dialled by).
        const followerIp = lab.hosts.get(`s${mine.indexOf('beacon-1')}`)!.dataIp;
        assert.ok(followerPeer.address.includes(`/ip4/${followerIp}/`) || followerPeer.address.includes('/dns4/beacon-1/'), `the follower connected from its namespace (${followerIp}): ${followerPeer.address}`);
      }
    } catch (err) {
      group.dumpLogs();
      throw err;
    } finally {
      await group.killAll();
      await lab?.destroy();
    }
  });
});

test.run();
