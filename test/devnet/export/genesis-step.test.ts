/**
 * The genesis step (`svc devnet genesis`, library form): the peer keys it writes are the ones the
 * export named in advance, each validator's per-node keystore copy is that validator's, a second
 * run on the same volume keeps everything, and a volume holding another chain is refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { runGenesisStep } from '../../../src/devnet/export/genesis-step.js';
import { ExportError, nodeKeystoreFile, peerKeyFile, planExport } from '../../../src/devnet/export/model.js';
import { loadPeerKeyFile } from '../../../src/node/p2p/identity.js';
import { SvcError } from '../../../src/core/errors.js';
import { withTempDir } from '../../helpers/cli.js';

const SHAPE = { validators: 3, producers: 2, followers: 1, genesisTime: 1_767_225_600, kdfMemoryKib: 256 } as const;

test('writes the genesis and P2P keys the export announced, and copies keystores per node', async () => {
  await withTempDir(async (out) => {
    const net = await planExport({ ...SHAPE, image: 'svc' });
    const r = await runGenesisStep({ ...SHAPE, out, password: 'pw' });
    assert.is(r.genesis_hash, net.genesisHash);
    assert.ok(r.created);
    for (const n of net.nodes) {
      const step = r.nodes[n.index]!;
      assert.equal([step.role, step.ordinal], [n.role, n.ordinal]);
      for (const layer of ['execution', 'beacon'] as const) {
        assert.is(step[layer].peer_id, n.peerIds[layer]);
        const key = await loadPeerKeyFile(peerKeyFile(out, n.role, n.ordinal, layer));
        assert.is(peerIdFromPrivateKey(key).toString(), n.peerIds[layer], `${layer} key of node ${n.index} on disk`);
      }
    }
    // Validators 0 and 2 on node 0, 1 on node 1: ordinal o of node n is validator n + 2·o.
    for (const [node, ordinal, validator] of [[0, 0, 0], [0, 1, 2], [1, 0, 1]] as const) {
      const copy = JSON.parse(await readFile(nodeKeystoreFile(out, node, ordinal), 'utf8')) as { address?: string; addresses?: unknown };
      const original = JSON.parse(await readFile(`${out}/keystores/validator-${validator}.json`, 'utf8')) as unknown;
      assert.equal(copy, original, `node ${node} ordinal ${ordinal} is validator ${validator}`);
    }
    const again = await runGenesisStep({ ...SHAPE, out, password: 'pw' });
    assert.not.ok(again.created, 'a second run keeps the keystores');
    assert.equal(again.nodes, r.nodes);
  });
});

test('refuses a volume holding another chain, naming the genesis file', async () => {
  await withTempDir(async (out) => {
    await runGenesisStep({ ...SHAPE, validators: 2, producers: 1, followers: 0, out, password: 'pw' });
    try {
      await runGenesisStep({ ...SHAPE, validators: 2, producers: 1, followers: 0, genesisTime: SHAPE.genesisTime + 1, out, password: 'pw' });
      assert.unreachable('another chain was accepted');
    } catch (err) {
      assert.instance(err, ExportError);
      assert.is((err as ExportError).code, 'GENESIS_MISMATCH');
      assert.match((err as Error).message, `${out}/genesis.json`);
    }
  });
});

test('a provisioned peer key file that does not exist is refused, not replaced', async () => {
  await withTempDir(async (dir) => {
    try {
      await loadPeerKeyFile(`${dir}/missing.key`);
      assert.unreachable('a missing key was accepted');
    } catch (err) {
      assert.is((err as SvcError).code, 'P2P_PEER_KEY_MISSING');
    }
  });
});

test.run();
