/**
 * End to end: `svc devnet up --validators 4 --nodes 2 --followers 1` with real processes over
 * libp2p on loopback. Both producers and the read-only follower reach the same head, every node
 * reports peers, the follower's peer list shows the hybrid handshake, and `down --clean` leaves
 * no process behind (checked by pid).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { getJson, waitFor } from '../helpers/network.js';
import { pidAlive, readManifest } from '../../src/devnet/manifest.js';
import { DEVNET_COMMAND_CEILING_MS, devnetStatus, manifestPids } from '../helpers/devnet-cli.js';
import type { DevnetStatus } from '../../src/devnet/status.js';
import { HYBRID_NOISE_PROTOCOL } from '../../src/node/p2p/protocol-id.js';

/** Slot length of this devnet: short, so heads move quickly, yet long enough for 13 processes on 2 busy cores. */
const SLOT_SECONDS = 2;
const SLOTS_PER_EPOCH = 4;

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

test('devnet up --nodes 2 --followers 1: same head on all three nodes, peers on each, down --clean leaves nothing', async () => {
  await withTempDir(async (tmp) => {
    const env = cliEnv(tmp);
    const dir = join(tmp, 'net');
    const seen = new Set<number>();
    const slotMs = SLOT_SECONDS * 1000;
    try {
      const up = expectJsonOk(
        await runCli(['devnet', 'up', '--validators', '4', '--nodes', '2', '--followers', '1', '--slot-time', String(SLOT_SECONDS), '--slots-per-epoch', String(SLOTS_PER_EPOCH), '--dir', dir, '--detach', '--json'], env, { timeoutMs: DEVNET_COMMAND_CEILING_MS }),
      );
      assert.is(up.event, 'started');
      assert.equal(
        up.processes.map((p: { name: string }) => p.name),
        ['execution', 'beacon', 'validators', 'execution-1', 'beacon-1', 'validators-1', 'execution-2', 'beacon-2'],
      );
      // Each producing node's validators in one process.
      assert.equal(up.processes.filter((p: { validators?: number[] }) => p.validators).map((p: { validators: number[] }) => p.validators), [[0, 2], [1, 3]]);
      manifestPids(dir).forEach((p) => seen.add(p));
      assert.is(seen.size, 9, 'supervisor and eight processes');

      const m = readManifest(dir)!;
      assert.equal(m.nodes.map((n) => n.role), ['producer', 'producer', 'follower']);

      // Every node connected: beacon and execution each have a peer.
      await waitFor(
        'every node to report P2P peers',
        async () => {
          const s = await devnetStatus<DevnetStatus>(env, dir);
          return s.nodes.every((n) => (n.peers.beacon ?? 0) > 0 && (n.peers.execution ?? 0) > 0) ? s : undefined;
        },
        20 * slotMs,
        1_000,
      );

      // All three on one head, a few blocks past genesis (the follower imported them from its peers).
      const converged = await waitFor(
        'all three nodes on the same head, at height 3 or more',
        async () => {
          const s = await devnetStatus<DevnetStatus>(env, dir);
          const roots = new Set(s.nodes.map((n) => n.head?.root ?? 'none'));
          return roots.size === 1 && (s.nodes[0]!.head?.index ?? 0) >= 3 ? s : undefined;
        },
        40 * slotMs,
        // A status command costs about half a second of CPU: polled faster, it slows the nodes it waits for.
        Math.max(1_000, slotMs / 2),
      );
      assert.is(converged.nodes.length, 3);
      assert.equal(converged.nodes[2]!.validators, []);

      // The text report lists each node, the follower as read-only.
      const text = await runCli(['devnet', 'status', '--dir', dir], env);
      assert.match(text.stdout, /\n  node 0 +producer \(validators 0, 2\)  head slot \d+/);
      assert.match(text.stdout, /\n  node 1 +producer \(validators 1, 3\)/);
      assert.match(text.stdout, /\n  node 2 +read-only  head slot \d+ · height \d+ · 0x[0-9a-f]{8}…  finalized epoch \d+  peers [1-9]\d* beacon \/ [1-9]\d* execution/);

      // The follower's peers were reached over the hybrid handshake, not plain Noise.
      const peers = (await getJson(`${m.nodes[2]!.endpoints.beacon}/api/v1/p2p/peers`)) as { peers: Array<{ peer_id: string; handshake: string }> };
      assert.ok(peers.peers.length > 0);
      const known = new Set(m.nodes.map((n) => n.p2p!.beacon.peer_id));
      for (const p of peers.peers) {
        assert.ok(known.has(p.peer_id), `unexpected peer ${p.peer_id}`);
        assert.is(p.handshake, HYBRID_NOISE_PROTOCOL, 'hybrid handshake, not plain Noise');
      }

      const down = expectJsonOk(await runCli(['devnet', 'down', '--dir', dir, '--clean', '--json'], env));
      assert.is(down.cleaned, true);
      await waitFor('every devnet process to exit', async () => ([...seen].some((p) => pidAlive(p)) ? undefined : true), 30_000, 100);
      assert.not.ok(existsSync(dir), 'down --clean removed the directory');
    } finally {
      killAll([...seen, ...manifestPids(dir)]);
    }
  });
});

test.run();
