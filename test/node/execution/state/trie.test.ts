/**
 * The state trie: incremental updates give the root a from-scratch build gives, whatever the
 * order; proofs of presence and absence verify against the root with the standalone verifier and
 * fail when tampered; the view's journal undoes exactly what follows a checkpoint; storage tries
 * commit into the account leaf; pruning at finality leaves exactly the nodes the kept states use.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryLevel } from 'memory-level';
import { commitView as commit } from '../../../helpers/trie-state.js';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import {
  ACCOUNT_VALUE_BYTES,
  EMPTY_CODE_HASH,
  EMPTY_TRIE_ROOT,
  STORAGE_VALUE_BYTES,
  accountKey,
  encodeAccountValue,
  trieRoot,
  verifyAccountProof,
  verifyProof,
  verifyStorageProof,
} from '../../../../src/core/state/trie.js';
import { ChainStore, type Db, WriteBatch } from '../../../../src/node/shared/store.js';
import { StateDb } from '../../../../src/node/execution/state/db.js';
import { EMPTY_REF, type NodeRef, nodeKey, staleKey } from '../../../../src/node/execution/state/trie.js';
import type { View } from '../../../../src/node/execution/state/view.js';

const addr = (i: number): string => '0x' + i.toString(16).padStart(40, '0');
const word = (i: number | bigint): Uint8Array => parseHex('0x' + BigInt(i).toString(16).padStart(64, '0'), 'word', 32);

/** A deterministic pseudo-random sequence (xorshift), so failures reproduce. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

async function openState(cacheBytes?: number): Promise<{ state: StateDb; store: ChainStore }> {
  const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
  await db.open();
  const store = new ChainStore(db);
  return { state: await StateDb.open(store, cacheBytes), store };
}


/** Applies balances (0 deletes) to a fresh view of `root`. */
function withBalances(state: StateDb, root: NodeRef, balances: Map<number, bigint>): View {
  const v = state.view(root);
  for (const [i, b] of balances) v.addBalance(addr(i), b - v.account(addr(i)).balance);
  return v;
}

/** Every stored node key reachable from `root` (account trie and storage tries). */
function reachable(state: StateDb, root: NodeRef, out = new Set<string>()): Set<string> {
  const walk = (tree: string, valueBytes: number, version: number, path: string, onLeaf?: (value: Uint8Array, extra: Uint8Array) => void): void => {
    const key = nodeKey(version, tree, path);
    out.add(key);
    const n = state.nodes.node(key, valueBytes);
    if (n.kind === 'leaf') return onLeaf?.(n.value, n.extra);
    n.children().forEach((c, i) => c && walk(tree, valueBytes, c.version, path + i.toString(16), onLeaf));
  };
  if (toHex(root.hash) === toHex(EMPTY_TRIE_ROOT)) return out;
  walk('a', ACCOUNT_VALUE_BYTES, root.version, '', () => undefined);
  return out;
}

async function storedNodeKeys(store: ChainStore): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const k of store.db.keys({ gte: 'n:', lt: 'n:\xff' })) out.add(k);
  return out;
}

const trie = suite('state trie');

trie('incremental updates in any order give the from-scratch root; deletes restore earlier roots', async () => {
  const { state, store } = await openState();
  const next = rng(7);
  const balances = new Map<number, bigint>();
  let root = EMPTY_REF;
  const roots: string[] = [toHex(root.hash)];
  for (let version = 1; version <= 30; version++) {
    const changes = new Map<number, bigint>();
    for (let k = 0; k < 25; k++) {
      const i = next() % 300;
      changes.set(i, next() % 4 === 0 ? 0n : BigInt(1 + (next() % 1000)));
    }
    root = await commit(state, store, withBalances(state, root, changes), version);
    for (const [i, b] of changes) b === 0n ? balances.delete(i) : balances.set(i, b);
    // A fresh database, all current accounts in one update, in another order.
    const fresh = await openState();
    const scratch = fresh.state.view(EMPTY_REF);
    for (const i of [...balances.keys()].reverse()) scratch.addBalance(addr(i), balances.get(i)!);
    const scratchRoot = fresh.state.commit(scratch, 1).root;
    assert.is(toHex(root.hash), toHex(scratchRoot.hash), `version ${version}`);
    // And the core's independent from-scratch builder (what the vectors and light clients use).
    const entries = [...balances].map(([i, b]) => [accountKey(addr(i)), encodeAccountValue({ balance: b, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT })] as const);
    assert.is(toHex(root.hash), toHex(trieRoot(entries)), `version ${version}: core trieRoot`);
    roots.push(toHex(root.hash));
  }
  // Removing everything gives the empty root.
  const clear = new Map([...balances.keys()].map((i) => [i, 0n] as [number, bigint]));
  root = await commit(state, store, withBalances(state, root, clear), 31);
  assert.is(toHex(root.hash), toHex(EMPTY_TRIE_ROOT));
  assert.is(new Set(roots).size, roots.length, 'every version has its own root');
});

trie('proofs of presence and absence verify; a tampered node, value, key or root fails', async () => {
  const { state, store } = await openState();
  const v = state.view(EMPTY_REF);
  for (let i = 1; i <= 200; i++) v.addBalance(addr(i), BigInt(i) * 1000n);
  for (let i = 1; i <= 20; i++) v.incrementNonce(addr(i));
  const root = await commit(state, store, v, 1);
  for (const i of [1, 17, 150, 200, 201, 5000, 0xffffff]) {
    const p = await state.proof(root, addr(i), []);
    const present = i <= 200;
    assert.ok(verifyAccountProof(root.hash, p), `proof of ${addr(i)}`);
    assert.is(p.balance, present ? String(i * 1000) : '0');
    assert.is(p.nonce, present && i <= 20 ? 1 : 0);
    assert.ok(p.accountProof.length >= 1);
    assert.not.ok(verifyAccountProof(root.hash, { ...p, balance: String(i * 1000 + 1) }), 'tampered balance');
    assert.not.ok(verifyAccountProof(root.hash, { ...p, nonce: p.nonce + 1 }), 'tampered nonce');
    assert.not.ok(verifyAccountProof(root.hash, { ...p, codeHash: toHex(sha3(EMPTY_CODE_HASH)) }), 'tampered code hash');
    assert.not.ok(verifyAccountProof(root.hash, { ...p, address: addr(i + 1) }), 'another key');
    assert.not.ok(verifyAccountProof(sha3(root.hash), { ...p, stateRoot: toHex(sha3(root.hash)) }), 'another root');
    assert.not.ok(verifyAccountProof(root.hash, { ...p, accountProof: p.accountProof.slice(0, -1) }), 'a truncated proof');
    for (let n = 0; n < p.accountProof.length; n++) {
      const bytes = parseHex(p.accountProof[n], 'node');
      for (const at of [0, 1, bytes.length - 1]) {
        const t = bytes.slice();
        t[at] = t[at]! ^ 0x10;
        const proof = [...p.accountProof];
        proof[n] = toHex(t);
        assert.not.ok(verifyAccountProof(root.hash, { ...p, accountProof: proof }), `tampered node ${n} byte ${at}`);
      }
    }
  }
  // The empty trie: absence needs no node.
  const empty = await state.proof(EMPTY_REF, addr(1), [word(1)]);
  assert.equal(empty.accountProof, []);
  assert.ok(verifyProof(EMPTY_TRIE_ROOT, empty));
});

trie('the journal undoes exactly what follows a checkpoint; storage and code commit into the account', async () => {
  const { state, store } = await openState();
  const c = addr(0xc0);
  const v = state.view(EMPTY_REF);
  v.addBalance(addr(1), 100n);
  const cp = v.checkpoint();
  v.addBalance(addr(1), 50n);
  v.incrementNonce(addr(1));
  v.setStorage(c, word(1), word(11));
  const code = Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0);
  v.setCode(c, code, Uint8Array.of(9, 9));
  assert.is(v.account(addr(1)).balance, 150n);
  assert.equal(v.storage(c, word(1)), word(11));
  assert.equal(v.code(c), code);
  v.revertTo(cp);
  assert.equal(v.account(addr(1)), { balance: 100n, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT });
  assert.equal(v.storage(c, word(1)), new Uint8Array(32));
  assert.is(v.code(c), undefined);
  assert.throws(() => v.revertTo(cp + 1), RangeError);

  v.setCode(c, code, Uint8Array.of(9, 9));
  for (let k = 1; k <= 40; k++) v.setStorage(c, word(k), word(k * 7));
  v.setStorage(c, word(40), new Uint8Array(32));
  const root1 = await commit(state, store, v, 1);
  const after = state.view(root1);
  const acc = after.account(c);
  assert.equal(acc.codeHash, sha3(code));
  assert.not.equal(acc.storageRoot, EMPTY_TRIE_ROOT);
  assert.equal(after.code(c), code);
  assert.equal(after.instrumented(acc.codeHash), Uint8Array.of(9, 9));
  assert.equal(after.storage(c, word(3)), word(21));
  assert.equal(after.storage(c, word(40)), new Uint8Array(32), 'a zero write removes the slot');
  // A second block changes one slot: the storage root moves, other slots stay readable.
  const v2 = state.view(root1);
  v2.setStorage(c, word(3), word(99));
  const root2 = await commit(state, store, v2, 2);
  const s2 = state.view(root2);
  assert.equal(s2.storage(c, word(3)), word(99));
  assert.equal(s2.storage(c, word(4)), word(28));
  assert.equal(state.view(root1).storage(c, word(3)), word(21), 'the parent state is untouched');
  // Storage proofs, present and absent, against the proven storage root.
  const p = await state.proof(root2, c, [word(3), word(40), word(1000)]);
  assert.ok(verifyProof(root2.hash, p));
  assert.equal(p.storageProof.map((s) => s.value), [toHex(word(99)), toHex(new Uint8Array(32)), toHex(new Uint8Array(32))]);
  const storageRoot = parseHex(p.storageHash, 'root', 32);
  assert.not.ok(verifyStorageProof(storageRoot, { ...p.storageProof[0]!, value: toHex(word(98)) }), 'tampered slot value');
  assert.not.ok(verifyStorageProof(storageRoot, { ...p.storageProof[1]!, value: toHex(word(1)) }), 'an absent slot proven set');
  assert.not.ok(verifyStorageProof(storageRoot, { ...p.storageProof[0]!, key: toHex(word(4)) }), 'another slot');
  assert.not.ok(verifyProof(root2.hash, { ...p, storageHash: toHex(sha3(storageRoot)) }), 'another storage root');
  void STORAGE_VALUE_BYTES;
});

trie('finality prunes exactly the nodes no kept state uses; kept states stay whole', async () => {
  const { state, store } = await openState();
  const next = rng(99);
  const random = (root: NodeRef, n: number): View => {
    const v = state.view(root);
    for (let k = 0; k < n; k++) v.addBalance(addr(next() % 500), BigInt(1 + (next() % 9)));
    v.setStorage(addr(0xc0 + (next() % 3)), word(next() % 50), word(1 + (next() % 50)));
    return v;
  };
  // Versions: G 0, A1 1, B1 2, A2 3, B2 4, A3 5.
  const g = await commit(state, store, random(EMPTY_REF, 400), 0);
  const a1 = await commit(state, store, random(g, 40), 1);
  const b1 = await commit(state, store, random(g, 40), 2);
  const a2 = await commit(state, store, random(a1, 40), 3);
  const b2 = await commit(state, store, random(b1, 40), 4);
  const a3 = await commit(state, store, random(a2, 40), 5);
  const accountsAt = (root: NodeRef) => Array.from({ length: 500 }, (_, i) => state.view(root).account(addr(i)).balance);
  const before = { a2: accountsAt(a2), a3: accountsAt(a3) };
  // Finalise A2: A1 and A2 finalised; B1 and B2 orphaned (B2 once finality passes height 2).
  const batch = new WriteBatch();
  const deleted = await state.pruneTo(batch, [1, 3], [2, 4]);
  await store.write(batch);
  state.pruned(deleted);
  const kept = reachable(state, a2, reachable(state, a3));
  // Storage nodes are not walked by reachable(): count them apart, by tree.
  const stored = await storedNodeKeys(store);
  const accountNodes = new Set([...stored].filter((k) => k.split(':')[2] === 'a'));
  assert.equal([...accountNodes].sort(), [...kept].sort(), 'stored account nodes are exactly those of A2 and A3');
  assert.equal(accountsAt(a2), before.a2);
  assert.equal(accountsAt(a3), before.a3);
  for (const i of [0, 1, 2]) {
    for (let k = 0; k < 50; k++) state.view(a3).storage(addr(0xc0 + i), word(k));
  }
  // The pruned states are gone: reading them is a typed error, not a wrong answer.
  assert.throws(() => accountsAt(b2), (e: Error & { code?: string }) => e.code === 'STATE_NODE_MISSING');
  assert.throws(() => accountsAt(g), (e: Error & { code?: string }) => e.code === 'STATE_NODE_MISSING');
  const staleOf = async (version: number): Promise<number> => (await store.get<string[]>(staleKey(version)))?.length ?? 0;
  for (const [b, v] of [['A1', 1], ['A2', 3], ['B1', 2], ['B2', 4]] as const) assert.is(await staleOf(v), 0, `${b}’s stale index is gone`);
  assert.ok((await staleOf(5)) > 0, 'the unfinalised block keeps its stale index');
});

trie('a commit drops the nodes it replaced from the cache; the parent state still reads them, from disk', async () => {
  const { state, store } = await openState();
  const r1 = await commit(state, store, withBalances(state, EMPTY_REF, new Map(Array.from({ length: 40 }, (_, i) => [i, BigInt(i + 1)]))), 1);
  const v = withBalances(state, r1, new Map([[7, 700n]]));
  const c = state.commit(v, 2);
  const batch = new WriteBatch();
  state.queue(batch, c);
  await store.write(batch);
  const replaced = c.stale.filter((k) => state.nodes.cached(k) !== undefined && state.nodes.cached(k)!.kind === 'leaf');
  assert.ok(replaced.length === 1, 'the replaced leaf was cached: the view read it');
  state.committed(c);
  assert.is(state.nodes.cached(replaced[0]!), undefined, 'dropped once the commit is durable');
  for (const [k] of c.puts) if (k.startsWith('n:')) assert.ok(state.nodes.cached(k) !== undefined, `${k} written and cached`);
  const before = state.nodes.syncReads;
  assert.is(state.view(r1).account(addr(7)).balance, 8n);
  assert.ok(state.nodes.syncReads - before >= 1, 'the parent state reads its replaced nodes from disk');
  assert.is(state.view(c.root).account(addr(7)).balance, 700n);
  await state.close();
});

trie('memory is bounded by the cache: a small cache still reads every account (misses go to the reader)', async () => {
  const { state, store } = await openState(64 * 1024);
  const v = state.view(EMPTY_REF);
  for (let i = 0; i < 3000; i++) v.addBalance(addr(i), BigInt(i + 1));
  const root = await commit(state, store, v, 1);
  const misses = state.nodes.syncReads;
  for (let i = 0; i < 3000; i += 7) assert.is(state.view(root).account(addr(i)).balance, BigInt(i + 1));
  assert.ok(state.nodes.stats().bytes <= 64 * 1024);
  assert.ok(state.nodes.syncReads > misses, 'reads beyond the cache went to the synchronous reader');
});

trie.run();
