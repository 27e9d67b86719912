/**
 * Upper account-trie nodes stored without their internal children's hashes (hashless.ts,
 * node-store.ts expand): what is stored, that a data directory of the previous (full) form and a
 * mix of both read back exactly (values and proofs at every kept state, cold, warmed, and with
 * caches too small to hold the upper levels), and that a writer SIGKILLed at an arbitrary point
 * leaves every acknowledged non-finalised state, side branches included, readable with the
 * proofs it answered before.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { SvcError } from '../../../../src/core/errors.js';
import { StateDb } from '../../../../src/node/execution/state/db.js';
import { HASHLESS_MAX_DEPTH, HashlessNode, storedForm } from '../../../../src/node/execution/state/hashless.js';
import { EMPTY_REF, type NodeRef, accountNodeAt, staleKey } from '../../../../src/node/execution/state/trie.js';
import type { View } from '../../../../src/node/execution/state/view.js';
import { EXECUTION_DB_OPTIONS, STATE_DB_DIR } from '../../../../src/node/execution/store.js';
import { ChainStore, type Db, WriteBatch } from '../../../../src/node/shared/store.js';
import { commitView, memoryChainStore } from '../../../helpers/trie-state.js';
import type { WriterMessage } from './hashless-writer.js';

const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');

/** Commits as the previous build did: every node in its full stored form. */
async function commitFull(state: StateDb, store: ChainStore, view: View, version: number): Promise<NodeRef> {
  const c = state.commit(view, version);
  const batch = new WriteBatch();
  for (const [k, v] of c.puts) batch.putBytes(k, v);
  if (c.stale.length > 0) batch.put(staleKey(version), c.stale);
  await store.write(batch);
  state.committed(c);
  return c.root;
}

/** Proofs of `addresses` at `root`, as JSON text. */
async function proofs(state: StateDb, root: NodeRef, addresses: string[]): Promise<string> {
  return JSON.stringify(await Promise.all(addresses.map((a) => state.proof(root, a, []))));
}

const hashless = suite('state: hashless upper nodes');

hashless('upper account-trie nodes are stored without internal children hashes, and expand to the full node', async () => {
  const store = await memoryChainStore();
  const state = await StateDb.open(store);
  const v = state.view(EMPTY_REF);
  for (let i = 0; i < 6000; i++) v.addBalance(addr(i), BigInt(i + 1));
  const c = state.commit(v, 1);
  let upper = 0;
  let leafChildren = 0;
  let internalChildren = 0;
  for (const [key, full] of c.puts) {
    const at = accountNodeAt(key, 64);
    const stored = storedForm(key, full);
    if (!at || full[0] !== 1 || at.path.length > HASHLESS_MAX_DEPTH) {
      assert.is(stored, full, `${key} is stored as it is`);
      continue;
    }
    upper++;
    const n = HashlessNode.decode(stored);
    assert.ok(n, `${key} is hashless`);
    // The hashes given back are the full node's: the expansion is byte for byte the full node.
    const hashOf = (i: number): Uint8Array => {
      const j = [...Array(i).keys()].filter((b) => n!.has(b)).length;
      return full.subarray(3 + j * 32, 3 + (j + 1) * 32);
    };
    let internal = 0;
    for (let i = 0; i < 16; i++) if (n!.has(i)) (n!.childIsLeaf(i) ? leafChildren++ : internal++);
    internalChildren += internal;
    assert.is(stored.length, full.length - internal * 32, `${key}: the internal children's hashes are left out`);
    assert.is(toHex(n!.expand(hashOf).bytes), toHex(full));
  }
  assert.ok(upper > 272 && leafChildren > 0 && internalChildren > 0, `${upper} upper nodes, ${leafChildren} leaf and ${internalChildren} internal children`);
  // Malformed hashless bytes are no node.
  const some = [...c.puts].find(([k, b]) => b[0] === 1 && accountNodeAt(k, 0) !== null)!;
  const stored = storedForm(some[0], some[1]);
  assert.is(HashlessNode.decode(stored.subarray(0, stored.length - 1)), null);
  assert.is(HashlessNode.decode(Uint8Array.of(2, 0, 0)), null);
  await state.close();
});

hashless('a cold prefetch reads what expanding hashless nodes needs in batches: the reads after it read nothing one by one', async () => {
  const store = await memoryChainStore();
  const state = await StateDb.open(store);
  const v = state.view(EMPTY_REF);
  for (let i = 0; i < 6000; i++) v.addBalance(addr(i), BigInt(i + 1));
  const root = await commitView(state, store, v, 1);
  await state.close();
  const cold = await StateDb.open(store);
  const some = Array.from({ length: 40 }, (_, k) => addr(k * 149));
  await cold.prefetch(root, some);
  const before = cold.nodes.syncReads;
  for (let k = 0; k < 40; k++) assert.is(cold.view(root).account(addr(k * 149)).balance, BigInt(k * 149 + 1));
  assert.is(cold.nodes.syncReads - before, 0, 'no synchronous read after the prefetch');
  await cold.close();
});

hashless('a malformed hashless node, or one under a key below level 3, is a typed CORRUPT_DB error', async () => {
  const store = await memoryChainStore();
  const state = await StateDb.open(store);
  const v = state.view(EMPTY_REF);
  for (let i = 0; i < 3000; i++) v.addBalance(addr(i), BigInt(i + 1));
  const c = state.commit(v, 1);
  const root = await commitView(state, store, v, 1);
  await state.close();
  const rootKey = [...c.puts.keys()].find((k) => accountNodeAt(k, 0) !== null)!;
  const good = (await store.getBytes(rootKey))!;
  const deep = [...c.puts].find(([k, b]) => b[0] === 1 && (accountNodeAt(k, 64)?.path.length ?? 0) > HASHLESS_MAX_DEPTH)!;
  for (const [key, bytes] of [
    [rootKey, good.subarray(0, good.length - 1)],
    [deep[0], storedForm(rootKey, good)],
  ] as const) {
    const batch = new WriteBatch();
    batch.putBytes(key, bytes);
    if (key === deep[0]) batch.putBytes(rootKey, good);
    await store.write(batch);
    const s = await StateDb.open(store);
    try {
      for (let i = 0; i < 3000; i++) s.view(root).account(addr(i));
      assert.unreachable('a damaged node must not read');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'CORRUPT_DB', key);
    }
    await s.close();
  }
});

hashless('a directory of full upper nodes (the previous build), then hashless ones on top, reads back exactly at every kept state', async () => {
  const store = await memoryChainStore();
  const state = await StateDb.open(store);
  const genesis = state.view(EMPTY_REF);
  for (let i = 0; i < 5000; i++) genesis.addBalance(addr(i), BigInt(i + 1));
  const roots: NodeRef[] = [await commitFull(state, store, genesis, 1)];
  const step = async (from: NodeRef, version: number, full: boolean): Promise<NodeRef> => {
    const v = state.view(from);
    for (let k = 0; k < 200; k++) v.addBalance(addr((version * 7919 + k * 104_729) % 5300), 7n);
    return full ? commitFull(state, store, v, version) : commitView(state, store, v, version);
  };
  roots.push(await step(roots[0]!, 2, true));
  roots.push(await step(roots[1]!, 3, true));
  // The new build from here, with a side branch on an old-format parent and one on a new-format one.
  roots.push(await step(roots[2]!, 4, false));
  roots.push(await step(roots[2]!, 5, false));
  roots.push(await step(roots[3]!, 6, false));
  roots.push(await step(roots[3]!, 7, false));
  roots.push(await step(roots[5]!, 8, false));
  const sample = [addr(0), addr(17), addr(4999), addr(5200), addr(9999), ...Array.from({ length: 20 }, (_, k) => addr((8 * 7919 + k * 104_729) % 5300))];
  const expected = await Promise.all(roots.map((r) => proofs(state, r, sample)));
  await state.close();

  const reopen = async (label: string, s: StateDb, warmAt?: NodeRef): Promise<void> => {
    if (warmAt) await s.warm(warmAt);
    // Oldest first and newest first: an expansion must not depend on what an earlier read cached.
    for (const order of [roots.map((_, i) => i), roots.map((_, i) => roots.length - 1 - i)]) {
      for (const i of order) assert.is(await proofs(s, roots[i]!, sample), expected[i], `${label}: proofs at root ${i}`);
    }
    await s.close();
  };
  await reopen('cold', await StateDb.open(store));
  await reopen('warmed at the head', await StateDb.open(store), roots[roots.length - 1]);
  await reopen('warmed at a side branch', await StateDb.open(store), roots[4]);
  // No upper level held and a cache of a few nodes: every upper node is expanded from disk, each time.
  await reopen('tiny caches', await StateDb.open(store, 16 * 1024, 0), roots[roots.length - 1]);
});

hashless('a writer SIGKILLed at an arbitrary point leaves every acknowledged non-finalised state and side branch readable', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-hashless-'));
  try {
    const got: WriterMessage[] = [];
    const child = fork(fileURLToPath(new URL('./hashless-writer.js', import.meta.url)), [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    // Killed while it writes: after the twelfth main-chain block's answer, which comes while the next write is under way.
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: WriterMessage) => {
        got.push(m);
        if (got.filter((g) => g.kind === 'block' && g.owner.startsWith('b')).length === 13) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      void exited.then(() => reject(new Error('the writer exited before it was killed')));
    });
    assert.is(await exited, 'SIGKILL');

    const height = (owner: string): number => Number(owner.slice(1));
    const finalised = Math.max(-1, ...got.filter((g) => g.kind === 'final').map((g) => height(g.owner)));
    // The writer may have pruned one block further than it said before it was killed.
    const kept = got.filter(
      (g): g is Extract<WriterMessage, { kind: 'block' }> => g.kind === 'block' && (g.owner.startsWith('b') ? height(g.owner) > finalised + 1 : height(g.owner) > finalised + 2),
    );
    assert.ok(kept.some((g) => g.owner.startsWith('s')) && kept.length >= 4, `kept ${kept.map((g) => g.owner).join(', ')}`);
    const db = new ClassicLevel<string, string>(join(dir, STATE_DB_DIR), EXECUTION_DB_OPTIONS as never) as unknown as Db;
    await db.open();
    try {
      const store = new ChainStore(db);
      const head = kept.filter((g) => g.owner.startsWith('b')).at(-1)!;
      for (const warm of [false, true]) {
        const state = await StateDb.open(store);
        if (warm) await state.warm({ version: head.root.version, hash: parseHex(head.root.hash, 'root', 32) });
        for (const g of kept) {
          const root = { version: g.root.version, hash: parseHex(g.root.hash, 'root', 32) };
          const again = await Promise.all(g.proofs.map((p) => state.proof(root, p.address, [])));
          assert.is(JSON.stringify(again), JSON.stringify(g.proofs), `${g.owner} (${warm ? 'warmed' : 'cold'})`);
        }
        // And the head state takes a new block, which reads back.
        const headRoot = { version: head.root.version, hash: parseHex(head.root.hash, 'root', 32) };
        const before = state.view(headRoot).account(addr(3)).balance;
        const view = state.view(headRoot);
        view.addBalance(addr(3), 1n);
        const next = await commitView(state, store, view, 1_000_000 + (warm ? 1 : 0));
        assert.is(state.view(next).account(addr(3)).balance, before + 1n);
        await state.close();
      }
    } finally {
      await db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

hashless.run();
