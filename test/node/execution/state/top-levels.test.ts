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
import { EMPTY_REF, type NodeRef, accountNodeAt } from '../../../../src/node/execution/state/trie.js';
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
  const deleted = await state.pruneTo(batch, ['block2'], [{ hash: 'block3', version: 3 }]);
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
    assert.is(toHex(held.bytes), toHex((await store.getBytes(key))!), `${key} reads back as stored`);
  }
  const fresh = await StateDb.open(store);
  for (const [i, b] of balances) assert.is(state.view(root).account(addr(i)).balance, b, `account ${i}`);
  for (const [i, b] of balances) assert.is(fresh.view(root).account(addr(i)).balance, b, `account ${i} from disk`);
  await fresh.close();
  await state.close();
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
