/** The persisted peer identity: created once, kept across restarts, derivable in advance from a seed. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreatePeerKey, peerIdFromKeyFile, peerIdFromSeed, peerKeyPath, writePeerKeyFileFromSeed, writePeerKeyFromSeed } from '../../../src/node/p2p/identity.js';
import { SvcError } from '../../../src/core/errors.js';
import { withHosts } from './fixture.js';

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-peerkey-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the key is created once (mode 0600) and loaded unchanged afterwards', async () => {
  await withDir(async (dir) => {
    assert.is(await peerIdFromKeyFile(dir), undefined);
    const first = await loadOrCreatePeerKey(dir);
    assert.is(first.type, 'Ed25519');
    assert.is((await stat(peerKeyPath(dir))).mode & 0o777, 0o600);
    const bytes = await readFile(peerKeyPath(dir));
    const again = await loadOrCreatePeerKey(dir);
    assert.ok(again.equals(first));
    assert.equal(await readFile(peerKeyPath(dir)), bytes, 'file untouched');
  });
});

test('concurrent first starts agree on one identity', async () => {
  await withDir(async (dir) => {
    const keys = await Promise.all([loadOrCreatePeerKey(dir), loadOrCreatePeerKey(dir), loadOrCreatePeerKey(dir)]);
    assert.ok(keys.every((k) => k.equals(keys[0]!)));
    const onDisk = await loadOrCreatePeerKey(dir);
    assert.ok(onDisk.equals(keys[0]!));
  });
});

test('a seed gives a known peer id in advance, and the host uses it', async () => {
  await withDir(async (dir) => {
    const seed = new Uint8Array(32).fill(5);
    const id = await writePeerKeyFromSeed(dir, seed);
    assert.is(await writePeerKeyFromSeed(join(dir, 'other'), seed), id, 'deterministic');
    assert.is(await peerIdFromKeyFile(dir), id);
    assert.is(await writePeerKeyFromSeed(dir, new Uint8Array(32).fill(6)) === id, false, 'replaces the key');
    await writePeerKeyFromSeed(dir, seed);
    await withHosts(async (start) => {
      const t = await start({ dataDir: dir });
      assert.is(t.host.peerId, id);
    });
    try {
      await writePeerKeyFromSeed(dir, new Uint8Array(31));
      assert.unreachable('short seed accepted');
    } catch (err) {
      assert.is((err as SvcError).code, 'P2P_PEER_KEY_SEED');
    }
  });
});

test('a provisioned key file (--p2p-key-file) is the identity, the data directory gets none, and a missing file is refused', async () => {
  await withDir(async (dir) => {
    const seed = new Uint8Array(32).fill(7);
    const file = join(dir, 'keys', 'node-0-beacon.key');
    const id = await writePeerKeyFileFromSeed(file, seed);
    assert.is(await peerIdFromSeed(seed), id, 'known without writing');
    assert.is((await stat(file)).mode & 0o777, 0o600);
    const data = join(dir, 'data');
    await withHosts(async (start) => {
      const t = await start({ dataDir: data, keyFile: file });
      assert.is(t.host.peerId, id);
    });
    assert.is(await peerIdFromKeyFile(data), undefined, 'no key created in the data directory');
    await withHosts(async (start) => {
      try {
        await start({ dataDir: data, keyFile: join(dir, 'keys', 'missing.key') });
        assert.unreachable('a missing provisioned key was replaced');
      } catch (err) {
        assert.is((err as SvcError).code, 'P2P_PEER_KEY_MISSING');
      }
    });
    assert.is(await peerIdFromKeyFile(data), undefined);
  });
});

test('a host restarted on the same data directory keeps its peer id', async () => {
  await withDir(async (dir) => {
    let id = '';
    await withHosts(async (start) => {
      id = (await start({ dataDir: dir })).host.peerId;
    });
    await withHosts(async (start) => {
      assert.is((await start({ dataDir: dir })).host.peerId, id);
    });
    assert.is(await peerIdFromKeyFile(dir), id);
  });
});

test('a damaged key file is an error, never silently replaced', async () => {
  await withDir(async (dir) => {
    await mkdir(join(dir, 'p2p'), { recursive: true });
    await writeFile(peerKeyPath(dir), 'not a key');
    try {
      await loadOrCreatePeerKey(dir);
      assert.unreachable('damaged key accepted');
    } catch (err) {
      assert.is((err as SvcError).code, 'P2P_PEER_KEY_INVALID');
    }
    assert.is((await readFile(peerKeyPath(dir), 'utf8')), 'not a key');
  });
});

test.run();
