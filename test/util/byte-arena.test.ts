/**
 * ByteArena and `detached` (util/byte-arena.ts), and the state trie's use of them: nodes a commit
 * builds in the arena are kept by the node cache, the in-memory database and its reader only as
 * copies of their own, and later commits (which carve the same chunk) never change a kept node.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ByteArena, detached } from '../../src/util/byte-arena.js';
import { StateDb } from '../../src/node/execution/state/db.js';
import { EMPTY_REF, type NodeRef } from '../../src/node/execution/state/trie.js';
import type { ChainStore } from '../../src/node/shared/store.js';
import { commitView, memoryChainStore, openStateDir } from '../helpers/trie-state.js';

const arena = suite('util/byte-arena');

const owns = (b: Uint8Array): boolean => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
const addr = (i: number): string => '0x' + (i + 1).toString(16).padStart(40, '0');

arena('alloc gives zeroed, disjoint views, a new chunk when one is full, and large requests their own buffer', () => {
  const a = new ByteArena(1024);
  const views = Array.from({ length: 20 }, (_, i) => {
    const v = a.alloc(100);
    assert.ok(v.every((x) => x === 0), `view ${i} is zeroed`);
    v.fill(i + 1);
    return v;
  });
  views.forEach((v, i) => assert.ok(v.every((x) => x === i + 1), `view ${i} was not overwritten by a later one`));
  // 10 views of 100 bytes fit a 1,024-byte chunk: the 11th starts the next one.
  assert.is(views[0]!.buffer, views[9]!.buffer);
  assert.is.not(views[9]!.buffer, views[10]!.buffer);
  const big = a.alloc(300);
  assert.ok(owns(big), 'over a quarter of a chunk gets a buffer of its own');
  assert.is(big.length, 300);
});

arena('detached returns a buffer-spanning array as it is and copies a view', () => {
  const own = new Uint8Array([1, 2, 3]);
  assert.is(detached(own), own);
  const view = new ByteArena(64).alloc(3);
  view.set([4, 5, 6]);
  const copy = detached(view);
  assert.is.not(copy, view);
  assert.ok(owns(copy));
  assert.equal([...copy], [4, 5, 6]);
});

/** Commits `blocks` blocks of `perBlock` balance changes each; returns the roots and the state. */
async function run(state: StateDb, chain: ChainStore, blocks: number, perBlock: number): Promise<NodeRef[]> {
  const roots: NodeRef[] = [];
  let root = EMPTY_REF;
  for (let b = 1; b <= blocks; b++) {
    await state.prefetch(root, Array.from({ length: perBlock }, (_, i) => addr(i)));
    const v = state.view(root);
    for (let i = 0; i < perBlock; i++) v.addBalance(addr(i), BigInt(b));
    v.setStorage(addr(0), new Uint8Array(32).fill(b), new Uint8Array(32).fill(b));
    root = await commitView(state, chain, v, b);
    roots.push(root);
  }
  return roots;
}

arena('nodes a commit built are cached and stored in memory as copies, and later commits leave them intact', async () => {
  const chain = await memoryChainStore();
  // No room for the held upper levels: every internal node goes to the node cache.
  const state = await StateDb.open(chain, 64 * 1024 * 1024, 0);
  const roots = await run(state, chain, 6, 400);
  const stored = new Map<string, Uint8Array>();
  for await (const [k, v] of chain.db.iterator<string, Uint8Array>({ gte: 'n:', lt: 'n:\xff', valueEncoding: 'view' })) stored.set(k, v as Uint8Array);
  assert.ok(stored.size > 500);
  let cachedInternal = 0;
  for (const [k, v] of stored) {
    assert.ok(owns(v) || v.buffer.byteLength <= 8192, `${k}: the in-memory database keeps a copy, not an arena chunk`);
    const n = state.nodes.cached(k);
    if (!n) continue;
    if (n.kind === 'internal') cachedInternal++;
    assert.ok(owns(n.bytes), `${k}: the cache keeps a copy of its own`);
  }
  assert.ok(cachedInternal > 50, `internal nodes were cached (${cachedInternal})`);
  // Every state still reads back as written, through a fresh store over the same database.
  const reopened = await StateDb.open(chain);
  for (let b = 0; b < roots.length; b++) {
    const want = await state.proof(roots[b]!, addr(7), [new Uint8Array(32).fill(b + 1)]);
    assert.equal(await reopened.proof(roots[b]!, addr(7), [new Uint8Array(32).fill(b + 1)]), want, `block ${b + 1}`);
    assert.is(want.balance, String(((b + 1) * (b + 2)) / 2));
  }
  await state.close();
  await reopened.close();
});

arena('on disk: a cold reopen proves the same states the arena-built commits wrote', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-arena-'));
  const open = () => openStateDir(dir);
  try {
    let roots: NodeRef[];
    const proofs: unknown[] = [];
    {
      const { db, chain, state } = await open();
      roots = await run(state, chain, 6, 1500);
      for (const r of roots) proofs.push(await state.proof(r, addr(3), [new Uint8Array(32).fill(1)]));
      await state.close();
      await db.close();
    }
    const { db, state } = await open();
    for (let b = 0; b < roots.length; b++) assert.equal(await state.proof(roots[b]!, addr(3), [new Uint8Array(32).fill(1)]), proofs[b], `block ${b + 1}`);
    await state.close();
    await db.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

arena.run();
