/**
 * The account trie's upper levels (state/top-levels.ts, StateDb.warm): a warm-up holds whole levels
 * within its byte budget so a restarted node reads one node (the leaf) per account; commits keep
 * one version per path current; reads of older states, side branches and pruning stay exact.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { ChainStore, WriteBatch } from '../../../../src/node/shared/store.js';
import { StateDb } from '../../../../src/node/execution/state/db.js';
import { TopLevels } from '../../../../src/node/execution/state/top-levels.js';
import { storedForm } from '../../../../src/node/execution/state/hashless.js';
import { EMPTY_REF, InternalNode, type NodeRef, accountNodeAt, nodeKey } from '../../../../src/node/execution/state/trie.js';
import { commitView as commit, memoryChainStore as memoryStore } from '../../../helpers/trie-state.js';

const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');


/** A store holding `n` accounts (balance i + 1) at the returned root. */
async function populated(n: number): Promise<{ store: ChainStore; root: NodeRef }> {
  const store = await memoryStore();
  const state = await StateDb.open(store);
  const v = state.view(EMPTY_REF);
  for (let i = 0; i < n; i++) v.addBalance(addr(i), BigInt(i + 1));
  const root = await commit(state, store, v, 1);
  await state.close();
  return { store, root };
}

/** Internal account-trie nodes reachable from `root`, by depth. */
function internalsByDepth(state: StateDb, root: NodeRef): number[] {
  const out: number[] = [];
  const walk = (version: number, path: string): void => {
    const n = state.nodes.node(`n:${version.toString(16).padStart(12, '0')}:a:${path}`, 104);
    if (n.kind !== 'internal') return;
    out[path.length] = (out[path.length] ?? 0) + 1;
    for (let i = 0; i < 16; i++) if (n.has(i) && !n.childIsLeaf(i)) walk(n.childVersion(i), path + i.toString(16));
  };
  walk(root.version, '');
  return out;
}

const top = suite('state trie upper levels');

top('a warm-up holds every internal level within budget: a restarted node then reads one node per account', async () => {
  const { store, root } = await populated(3000);
  // Cold: reading accounts costs more than one read each (internal nodes below the root and the leaf).
  const cold = await StateDb.open(store);
  for (let i = 0; i < 300; i++) assert.is(cold.view(root).account(addr(i)).balance, BigInt(i + 1));
  assert.ok(cold.nodes.syncReads > 300 * 1.5, `cold reads ${cold.nodes.syncReads}`);
  await cold.close();

  const state = await StateDb.open(store);
  const r = await state.warm(root);
  const levels = internalsByDepth(state, root);
  assert.is(r.levels, levels.length, 'every internal level fitted the default budget');
  assert.is(r.nodes, levels.reduce((a, b) => a + b, 0), 'exactly the internal nodes are held, leaves are not');
  assert.ok(r.bytes > 0 && r.bytes <= state.nodes.top.maxBytes);
  const before = state.nodes.syncReads;
  for (let i = 300; i < 600; i++) assert.is(state.view(root).account(addr(i)).balance, BigInt(i + 1));
  assert.is(state.nodes.syncReads - before, 300, 'one read (the leaf) per account');
  // A second warm-up is the same one.
  assert.is(await state.warm(root), r);
  await state.close();
});

top('a small budget stops the warm-up within it; reads stay exact', async () => {
  const { store, root } = await populated(3000);
  const budget = 40 * 1024;
  const state = await StateDb.open(store, undefined, budget);
  const r = await state.warm(root);
  const levels = internalsByDepth(state, root);
  assert.ok(r.levels < levels.length, `stopped after ${r.levels} of ${levels.length} levels`);
  assert.ok(state.nodes.top.stats().bytes <= budget);
  for (let i = 0; i < 3000; i += 13) assert.is(state.view(root).account(addr(i)).balance, BigInt(i + 1));
  await state.close();
});

top('commits keep one version per path current; side branches, older states and pruning stay exact', async () => {
  const { store, root: r1 } = await populated(2000);
  const state = await StateDb.open(store);
  await state.warm(r1);
  const depth = state.nodes.top.stats().depth;
  const expect = new Map<NodeRef, Map<number, bigint>>();
  const base = new Map(Array.from({ length: 2000 }, (_, i) => [i, BigInt(i + 1)] as [number, bigint]));
  expect.set(r1, base);
  const step = async (from: NodeRef, version: number, seed: number): Promise<NodeRef> => {
    const v = state.view(from);
    const next = new Map(expect.get(from)!);
    for (let k = 0; k < 150; k++) {
      const i = (seed * 7919 + k * 104729) % 2600;
      v.addBalance(addr(i), 5n);
      next.set(i, (next.get(i) ?? 0n) + 5n);
    }
    const root = await commit(state, store, v, version);
    expect.set(root, next);
    return root;
  };
  const a2 = await step(r1, 2, 1);
  const b2 = await step(r1, 3, 2); // a side branch on the same parent
  const a3 = await step(a2, 4, 3);
  const check = (root: NodeRef): void => {
    for (const [i, b] of expect.get(root)!) assert.is(state.view(root).account(addr(i)).balance, b, `account ${i}`);
  };
  for (const root of [r1, a2, b2, a3]) check(root);
  // One key per path, each an internal account node within the held levels.
  const held = state.nodes.top.held();
  assert.is(held.size, state.nodes.top.stats().entries);
  for (const [path, key] of held) {
    const at = accountNodeAt(key, depth);
    assert.ok(at && at.path === path, key);
    assert.is(state.nodes.cached(key)?.kind, 'internal');
  }
  // The newest import's root is held.
  assert.ok([...held.values()].some((k) => k.startsWith(`n:${(4).toString(16).padStart(12, '0')}:a:`) && accountNodeAt(k, 0)?.path === ''));
  // Finalise A2 (B2 orphaned): every held node is still stored, and the kept states read exactly.
  const batch = new WriteBatch();
  const deleted = await state.pruneTo(batch, [2], [3]);
  await store.write(batch);
  state.pruned(deleted);
  for (const key of state.nodes.top.held().values()) assert.ok((await store.getBytes(key)) !== undefined, `${key} is stored`);
  check(a2);
  check(a3);
  await state.close();
});

top('held nodes read back as stored; slots freed by newer versions are reused, so many commits do not grow the tier', async () => {
  // 2,000 accounts: levels 0 to 3 are indexed densely, level 4 (a few hundred nodes) sparsely.
  const { store, root: r1 } = await populated(2000);
  const state = await StateDb.open(store);
  const warmed = await state.warm(r1);
  assert.ok(warmed.levels >= 5, `levels ${warmed.levels}`);
  const after = state.nodes.top.stats();
  let root = r1;
  const balances = new Map<number, bigint>();
  for (let version = 2; version <= 31; version++) {
    const v = state.view(root);
    for (let k = 0; k < 200; k++) {
      const i = (version * 7919 + k * 104729) % 2000;
      v.addBalance(addr(i), 3n);
      balances.set(i, (balances.get(i) ?? BigInt(i + 1)) + 3n);
    }
    root = await commit(state, store, v, version);
  }
  const s = state.nodes.top.stats();
  // The same paths, rewritten 30 times: a node's child count may change its slot class, not the number of nodes.
  assert.is(s.entries, after.entries, 'one node per path');
  assert.ok(s.bytes <= after.bytes * 1.05, `bytes ${s.bytes} against ${after.bytes} after the warm-up`);
  for (const [, key] of state.nodes.top.held()) {
    const held = state.nodes.cached(key)!;
    assert.is(toHex(storedForm(key, held.bytes)), toHex((await store.getBytes(key))!), `${key} reads back as stored`);
  }
  const fresh = await StateDb.open(store);
  for (const [i, b] of balances) assert.is(state.view(root).account(addr(i)).balance, b, `account ${i}`);
  for (const [i, b] of balances) assert.is(fresh.view(root).account(addr(i)).balance, b, `account ${i} from disk`);
  await fresh.close();
  await state.close();
});

top('a kept view of an upper node follows its path: a newer version, a removal and a slot reused by another path are never read stale', () => {
  const child = (seed: number, version: number) => ({ hash: new Uint8Array(32).fill(seed), version, leaf: true });
  /** An internal node with children at nibbles `at`, each hash filled with `seed`. */
  const node = (seed: number, version: number, at: number[]): InternalNode =>
    InternalNode.build(Array.from({ length: 16 }, (_, i) => (at.includes(i) ? child(seed, version) : null)));
  const t = new TopLevels(1 << 20);
  // A level is indexed densely (where views are kept) when the level above was full enough as it was admitted.
  assert.ok(t.admitLevel(0));
  assert.ok(t.offer(nodeKey(1, 'a', ''), node(9, 1, [3, 4])));
  assert.ok(t.admitLevel(1));
  const a1 = node(1, 1, [0, 1]);
  assert.ok(t.offer(nodeKey(1, 'a', '3'), a1));
  const seen = t.getAt(1, '3')!;
  assert.is(toHex(seen.bytes), toHex(a1.bytes));
  assert.is(t.getAt(1, '3'), seen, 'a second lookup returns the kept view');
  // A newer version with another child count moves to another slot class: the old version is gone.
  const a2 = node(2, 2, [0, 1, 2]);
  assert.ok(t.offer(nodeKey(2, 'a', '3'), a2));
  assert.is(t.getAt(1, '3'), undefined);
  assert.is(toHex(t.getAt(2, '3')!.bytes), toHex(a2.bytes));
  // Removed, then its slot taken by another path's node of the same size: neither path reads the other's bytes.
  t.delete(nodeKey(2, 'a', '3'));
  assert.is(t.getAt(2, '3'), undefined);
  const b = node(3, 2, [4, 5, 6]);
  assert.ok(t.offer(nodeKey(2, 'a', '4'), b));
  assert.is(t.getAt(2, '3'), undefined);
  assert.is(toHex(t.getAt(2, '4')!.bytes), toHex(b.bytes));
  // Same path, same child count, new version: the slot is rewritten and the view shows the new bytes.
  const b2 = node(4, 3, [7, 8, 9]);
  assert.ok(t.offer(nodeKey(3, 'a', '4'), b2));
  assert.is(toHex(t.getAt(3, '4')!.bytes), toHex(b2.bytes));
  assert.is(t.getAt(3, '4')!.has(7), true);
  assert.is(t.getAt(3, '4')!.has(4), false);
});

top('below the kept levels, the views last made are kept per slot: a newer version, a removal and a path sharing the slot are never read stale', () => {
  const child = (seed: number, version: number) => ({ hash: new Uint8Array(32).fill(seed), version, leaf: true });
  const node = (seed: number, version: number, at: number[]): InternalNode =>
    InternalNode.build(Array.from({ length: 16 }, (_, i) => (at.includes(i) ? child(seed, version) : null)));
  const t = new TopLevels(64 << 20);
  // Levels 0 to 3 full enough (512 nodes at level 3) that level 4 is indexed densely as well.
  const counts = [1, 16, 256, 512];
  counts.forEach((count, d) => {
    assert.ok(t.admitLevel(d));
    for (let p = 0; p < count; p++) assert.ok(t.offer(nodeKey(1, 'a', d === 0 ? '' : p.toString(16).padStart(d, '0')), node(d, 1, [0, 1])));
  });
  assert.ok(t.admitLevel(4));
  // Path numbers 3 and 3 + 8,192 share a kept-view slot.
  const [p, q] = ['0003', '2003'];
  const a1 = node(1, 1, [0, 1]);
  const b1 = node(2, 1, [2, 3]);
  assert.ok(t.offer(nodeKey(1, 'a', p), a1));
  assert.ok(t.offer(nodeKey(1, 'a', q), b1));
  const seen = t.getAt(1, p)!;
  assert.is(toHex(seen.bytes), toHex(a1.bytes));
  assert.is(t.getAt(1, p), seen, 'a second lookup returns the kept view');
  assert.is(toHex(t.getAt(1, q)!.bytes), toHex(b1.bytes), 'the other path in the slot reads its own node');
  assert.is(toHex(t.getAt(1, p)!.bytes), toHex(a1.bytes), 'and back');
  // Same path, same child count, new version: the slot is rewritten and the view shows the new bytes.
  const a2 = node(3, 2, [4, 5]);
  assert.ok(t.offer(nodeKey(2, 'a', p), a2));
  assert.is(t.getAt(1, p), undefined);
  assert.is(t.getAt(2, p)!.has(4), true);
  assert.is(toHex(t.getAt(2, p)!.bytes), toHex(a2.bytes));
  // Removed, then its slot taken by the other path's newer node of the same size.
  t.delete(nodeKey(2, 'a', p));
  assert.is(t.getAt(2, p), undefined);
  const b2 = node(4, 2, [6, 7]);
  assert.ok(t.offer(nodeKey(2, 'a', q), b2));
  assert.is(t.getAt(2, p), undefined);
  assert.is(toHex(t.getAt(2, q)!.bytes), toHex(b2.bytes));
  assert.is(t.getAt(1, q), undefined);
});

top('close stops a warm-up in progress', async () => {
  const { store, root } = await populated(3000);
  const other = await StateDb.open(store);
  const levels = internalsByDepth(other, root).length;
  await other.close();
  const state = await StateDb.open(store);
  const warming = state.warm(root);
  await state.close();
  const r = await warming;
  assert.ok(levels > 2 && r.levels < levels, `stopped after ${r.levels} of ${levels} levels`);
});

top.run();
