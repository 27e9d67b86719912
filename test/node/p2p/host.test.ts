/** Host life cycle: start-up errors, peer-connected listeners, explicit disconnects, bootnode redial. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SvcError } from '../../../src/core/errors.js';
import type { P2pOptions } from '../../../src/node/p2p/types.js';
import { addrOf, metricValue, portOf, until, withHosts } from './fixture.js';

test('a port already in use is P2P_PORT_IN_USE at start-up', async () => {
  await withHosts(async (start) => {
    const a = await start({ layer: 'execution' });
    try {
      await start({ layer: 'execution', port: portOf(a) });
      assert.unreachable('second host started on a busy port');
    } catch (err) {
      assert.is((err as SvcError).code, 'P2P_PORT_IN_USE');
      assert.match((err as Error).message, String(portOf(a)));
    }
  });
});

test('a fresh host reports zero connections and zero peers', async () => {
  await withHosts(async (start) => {
    const a = await start();
    assert.is(a.host.peerCount(), 0);
    assert.equal(a.host.peers(), []);
    assert.match(await a.registry.metrics(), /service_p2p_peer_connections_active\{layer="beacon"\} 0/);
    assert.ok(a.host.multiaddrs().every((m) => m.endsWith(`/p2p/${a.host.peerId}`)));
  });
});

test('bad bootnodes and genesis hashes are refused at start-up', async () => {
  await withHosts(async (start) => {
    const cases: Array<[Partial<P2pOptions>, string]> = [
      [{ bootnodes: ['not-a-multiaddr'] }, 'P2P_BAD_BOOTNODE'],
      [{ bootnodes: ['/ip4/127.0.0.1/tcp/9'] }, 'P2P_BAD_BOOTNODE'],
      [{ genesisHash: '0x1234' }, 'P2P_BAD_GENESIS_HASH'],
    ];
    for (const [opts, code] of cases) {
      try {
        await start(opts);
        assert.unreachable(`started with ${JSON.stringify(opts)}`);
      } catch (err) {
        assert.is((err as SvcError).code, code);
      }
    }
  });
});

test('listeners hear of each new peer; disconnect closes it and keeps it away for a while', async () => {
  await withHosts(async (start) => {
    const a = await start();
    const connected: string[] = [];
    a.host.onPeerConnected((p) => connected.push(p));
    const b = await start({ bootnodes: [addrOf(a)] });
    await until('A heard of B', () => connected.includes(b.host.peerId));
    assert.is(a.host.peerCount(), 1);
    await a.host.disconnect(b.host.peerId, 'wrong_chain');
    await until('B gone', () => a.host.peerCount() === 0 && b.host.peerCount() === 0);
    assert.is(await metricValue(a.registry, 'service_p2p_peer_disconnects_total', { reason: 'wrong_chain' }), 1);
    assert.is(await metricValue(a.registry, 'service_p2p_peer_connections_active'), 0);
  });
});

test('a bootnode that was down is dialled again once it is up', async () => {
  await withHosts(async (start) => {
    const a = await start();
    const aAddr = addrOf(a);
    const port = portOf(a);
    const aDir = a.dataDir;
    await a.host.stop();
    const b = await start({ bootnodes: [aAddr] });
    await until('a failed dial', async () => (await metricValue(b.registry, 'service_p2p_bootnode_dials_total', { result: 'failed' })) >= 1);
    const a2 = await start({ dataDir: aDir, port });
    assert.is(a2.host.peerId, a.host.peerId);
    await until('B reconnected to A', () => b.host.peerCount() === 1, 30_000);
    // One bootnode is one discovery, however often it is redialled.
    assert.is(await metricValue(b.registry, 'service_p2p_peer_discovery_total', { source: 'bootnode' }), 1);
    assert.ok((await metricValue(b.registry, 'service_p2p_bootnode_dials_total', { result: 'ok' })) >= 1);
  });
});

test.run();
