/**
 * The node store's batched reads (state/node-store.ts) on a real classic-level directory opened as
 * the node opens it: a prefetch large enough to be read in parallel runs caches every node under
 * its own key (no run's answers land on another run's keys), a key that is not stored stays
 * uncached, and the reads after it are served from the cache without a synchronous read.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { ChainStore, WriteBatch } from '../../../../src/node/shared/store.js';
import { StateDb } from '../../../../src/node/execution/state/db.js';
import { EMPTY_REF, nodeKey } from '../../../../src/node/execution/state/trie.js';
import { commitView, memoryChainStore, openStateDir } from '../../../helpers/trie-state.js';

const store = suite('state: node store reads');

const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');

store('a prefetch of thousands of leaves, read in parallel runs, caches each under its own key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-node-store-'));
  const open = () => openStateDir(dir);
  try {
    const n = 3000;
    let root = EMPTY_REF;
    {
      const { db, chain, state } = await open();
      const v = state.view(EMPTY_REF);
      for (let i = 0; i < n; i++) v.addBalance(addr(i), BigInt(i + 1));
      root = await commitView(state, chain, v, 1);
      await state.close();
      await db.close();
    }
    const { db, state } = await open();
    try {
      // As after a restart: the upper levels warmed, then every account's leaf read by one
      // prefetch, about 3,000 keys in a level (several runs at once wherever there is more than one core).
      await state.warm(root);
      assert.ok(state.nodes.top.stats().entries > 100);
      await state.prefetch(root, Array.from({ length: n }, (_, i) => addr(i)));
      const before = state.nodes.syncReads;
      for (let i = 0; i < n; i++) assert.is(state.view(root).account(addr(i)).balance, BigInt(i + 1), `account ${i}`);
      assert.is(state.nodes.syncReads - before, 0, 'every node the reads needed was cached by the prefetch');
      // Keys not stored, mixed into a batch large enough for parallel runs, stay uncached; the others are cached as stored.
      const absent = Array.from({ length: 600 }, (_, i) => nodeKey(9, 'a', i.toString(16)));
      const cold = await StateDb.open(new ChainStore(db));
      try {
        const present = [...state.nodes.top.held().values()];
        const got = await cold.nodes.prefetch([...absent, ...present], 104);
        assert.is(got.filter((x) => x === undefined).length, absent.length);
        for (const k of absent) assert.is(cold.nodes.cached(k), undefined, k);
        for (const k of present) assert.is(toHex(cold.nodes.cached(k)!.bytes), toHex(state.nodes.cached(k)!.bytes), k);
      } finally {
        await cold.close();
      }
    } finally {
      await state.close();
      await db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

store('a cold prefetch walks its cursors in chunks, each chunk reading as it goes, and reads a node that several chunks stop at once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-node-store-'));
  try {
    const n = 2000;
    let root = EMPTY_REF;
    {
      const { db, chain, state } = await openStateDir(dir);
      const v = state.view(EMPTY_REF);
      for (let i = 0; i < n; i++) v.addBalance(addr(i), BigInt(i + 1));
      root = await commitView(state, chain, v, 1);
      await state.close();
      await db.close();
    }
    const { db, state } = await openStateDir(dir);
    try {
      // Not warmed: every cursor of every chunk stops at the root first, then at the upper nodes.
      const requested: string[] = [];
      const getMany = db.getMany.bind(db) as (keys: string[], opts: unknown) => Promise<unknown>;
      (db as unknown as { getMany: typeof getMany }).getMany = (keys, opts) => {
        requested.push(...keys);
        return getMany(keys, opts);
      };
      await state.prefetch(root, Array.from({ length: n }, (_, i) => addr(i)));
      assert.ok(requested.length > n, `the prefetch read the leaves and the nodes above them (${requested.length} keys)`);
      assert.is(new Set(requested).size, requested.length, 'no node was read twice');
      const before = state.nodes.syncReads;
      for (let i = 0; i < n; i++) assert.is(state.view(root).account(addr(i)).balance, BigInt(i + 1), `account ${i}`);
      assert.is(state.nodes.syncReads - before, 0, 'every node the reads needed was cached by the prefetch');
    } finally {
      await state.close();
      await db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

store('a commit drops the nodes it replaced from the cache, whether or not the upper levels hold them', async () => {
  for (const warm of [true, false]) {
    const chain = await memoryChainStore();
    const state = await StateDb.open(chain);
    const v = state.view(EMPTY_REF);
    for (let i = 0; i < 2000; i++) v.addBalance(addr(i), 1n);
    const r1 = await commitView(state, chain, v, 1);
    // Warmed, the internal nodes sit in the upper levels; not warmed, in the generations beside the leaves.
    if (warm) await state.warm(r1);
    const touched = Array.from({ length: 300 }, (_, k) => addr((k * 7919) % 2000));
    await state.prefetch(r1, touched);
    const next = state.view(r1);
    for (const a of touched) next.addBalance(a, 1n);
    const c = state.commit(next, 2);
    const batch = new WriteBatch();
    state.queue(batch, c);
    await chain.write(batch);
    assert.ok(c.stale.length > 300 && c.evict.length >= 300 && c.evict.length <= c.stale.length);
    assert.is(c.evict.length === c.stale.length, !warm, 'only nodes the upper levels do not hold are looked up to evict');
    state.committed(c);
    for (const k of c.stale) assert.is(state.nodes.cached(k), undefined, `${k} (replaced) is not cached`);
    for (const k of c.puts.keys()) assert.ok(state.nodes.cached(k), `${k} (written) is cached`);
    for (let i = 0; i < 2000; i++) assert.is(state.view(c.root).account(addr(i)).balance, touched.includes(addr(i)) ? 2n : 1n);
    await state.close();
  }
});

store.run();
