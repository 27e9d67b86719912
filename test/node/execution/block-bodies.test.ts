/**
 * Block bodies of a node with a data directory live in the append-only body file (body-file.ts):
 * every read (receipts, transactions, whole blocks, a reorg's reverted blocks) is served from it
 * across restarts, the database holds no `u:` entries, bytes a crash left past the indexed end
 * are cut on start, and blocks stored as `u:` entries before stay readable beside new ones.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFile, stat, truncate } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { GWEI } from '../../../src/core/constants.js';
import { BLOCK_BODIES_FILE, bodyBytes, decodeBodyIndex } from '../../../src/node/execution/body-file.js';
import { packEntries } from '../../../src/node/execution/blocks.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { Keys, EXECUTION_DB_OPTIONS } from '../../../src/node/execution/store.js';
import { ChainStore, type Db, WriteBatch } from '../../../src/node/shared/store.js';
import { devnet, expectOk, genesisRef, get, hashOf, importOk, makeBlock, mempoolHashes, post, startNode, submitOk, TOKEN, transfer, waitFor, withTempDir } from './fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const val1 = keys.validators[1]!;
const X = '0x00000000000000000000000000000000000000b1';
const Y = '0x00000000000000000000000000000000000000b2';

const receiptOf = async (node: ExecutionNode, hash: string) => expectOk(await get(node, `/api/v1/receipts/${hash}`));
const keysWith = async (node: ExecutionNode, prefix: string): Promise<string[]> => {
  const out: string[] = [];
  for await (const k of node.chain.store.db.keys({ gte: prefix, lt: prefix + '\xff' })) out.push(k);
  return out;
};
const bodyEnd = async (node: ExecutionNode): Promise<number> => (await node.chain.store.get<number>(Keys.meta('body_end'))) ?? 0;

const t = suite('block bodies on disk');

t('bodies go to the file, serve every read and a reorg, and survive a restart', async () => {
  await withTempDir(async (dir) => {
    const t1 = transfer(acc0, { nonce: 0, to: X, value: 1n * TOKEN, gasPrice: 2n * GWEI });
    const t2 = transfer(acc1, { nonce: 0, to: X, value: 2n * TOKEN, gasPrice: 2n * GWEI });
    const u1 = transfer(acc1, { nonce: 0, to: Y, value: 3n * TOKEN, gasPrice: 5n * GWEI });
    let node = await startNode({ dataDir: dir });
    let a1hash: string, b1hash: string;
    try {
      const g = await genesisRef(node);
      await submitOk(node, t1);
      const a1 = await importOk(node, makeBlock(g, { txs: [t1, t2] }));
      const b1 = await importOk(node, makeBlock(g, { txs: [u1], proposer: val1, salt: 1 }));
      assert.is(b1.result.canonical, false);
      a1hash = a1.ref.hash;
      b1hash = b1.ref.hash;
      assert.equal(await keysWith(node, 'u:'), [], 'no transaction entries in the database');
      assert.equal((await keysWith(node, 'j:')).sort(), [Keys.blockBody(a1hash), Keys.blockBody(b1hash)].sort());
      assert.is((await stat(join(dir, BLOCK_BODIES_FILE))).size, await bodyEnd(node));
      const r1 = await receiptOf(node, hashOf(t1));
      assert.equal(r1, a1.result.receipts[0]);
      const block = expectOk(await get(node, `/api/v1/blocks/${a1hash}`));
      assert.equal(block.transactions, [hashOf(t1), hashOf(t2)]);
      assert.equal(expectOk(await get(node, `/api/v1/transactions/${hashOf(t2)}`)).receipt, a1.result.receipts[1]);
      // B2 on B1 and a reorg onto it: A1's bodies are read back to re-pool its transactions.
      const b2 = await importOk(node, makeBlock(b1.ref, { txs: [] }));
      expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b2.ref.hash }));
      // Re-pooling goes through admission after the answer: wait for it, as forkchoice.test.ts does.
      await waitFor('the reverted block’s transaction pooled again', async () => (await mempoolHashes(node)).includes(hashOf(t1)));
      assert.equal(await receiptOf(node, hashOf(u1)), b1.result.receipts[0]);
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      assert.equal((await receiptOf(node, hashOf(u1))).blockHash, b1hash);
      const side = expectOk(await get(node, `/api/v1/blocks/${a1hash}`));
      assert.is(side.canonical, false);
      assert.equal(side.transactions, [hashOf(t1), hashOf(t2)]);
      assert.equal(expectOk(await get(node, '/api/v1/blocks/1')).hash, b1hash);
    } finally {
      await node.stop();
    }
  });
});

t('bytes a crash left past the indexed end are cut on start, and the next block imports over them', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, BLOCK_BODIES_FILE);
    const t1 = transfer(acc0, { nonce: 0, to: X, value: TOKEN });
    const t2 = transfer(acc0, { nonce: 1, to: Y, value: TOKEN });
    let node = await startNode({ dataDir: dir });
    let ref;
    try {
      ref = (await importOk(node, makeBlock(await genesisRef(node), { txs: [t1] }))).ref;
    } finally {
      await node.stop();
    }
    const end = (await stat(path)).size;
    // What a kill between a body's sync and its batch leaves: bytes no index names.
    await appendFile(path, randomBytes(20_000));
    node = await startNode({ dataDir: dir });
    try {
      assert.is((await stat(path)).size, end, 'cut back to the indexed end');
      assert.is((await receiptOf(node, hashOf(t1))).status, 1);
      await importOk(node, makeBlock(ref, { txs: [t2] }));
      assert.is((await bodyEnd(node)) > end, true);
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      assert.is((await receiptOf(node, hashOf(t1))).status, 1);
      assert.is((await receiptOf(node, hashOf(t2))).status, 1);
    } finally {
      await node.stop();
    }
    // A file shorter than the database's end is a damaged directory: the node refuses to start.
    await truncate(path, end - 1);
    try {
      const n = await startNode({ dataDir: dir });
      await n.stop();
      assert.unreachable('started on a truncated body file');
    } catch (err) {
      assert.is((err as { code?: string }).code, 'CORRUPT_DB');
    }
  });
});

t('blocks stored as u: entries before the body file stay readable beside new ones', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, BLOCK_BODIES_FILE);
    const t1 = transfer(acc0, { nonce: 0, to: X, value: TOKEN });
    const t2 = transfer(acc0, { nonce: 1, to: Y, value: TOKEN });
    let node = await startNode({ dataDir: dir });
    let ref, hash: string;
    try {
      const r = await importOk(node, makeBlock(await genesisRef(node), { txs: [t1] }));
      ref = r.ref;
      hash = r.ref.hash;
    } finally {
      await node.stop();
    }
    // Rewrite the block as an older node stored it: `u:` entries, no index, an empty body file.
    const db = new ClassicLevel<string, string>(join(dir, 'chain'), EXECUTION_DB_OPTIONS as never) as unknown as Db;
    await db.open();
    try {
      const store = new ChainStore(db);
      const ix = decodeBodyIndex((await store.getBytes(Keys.blockBody(hash)))!, 'j:');
      const { readFile } = await import('node:fs/promises');
      const file = await readFile(path);
      const envLen = ix.envelopeLengths[0]!;
      const envelope = file.subarray(ix.offset, ix.offset + envLen);
      const receipt = file.toString('utf8', ix.offset + envLen, ix.offset + bodyBytes(ix));
      const batch = new WriteBatch();
      batch.putBytes(Keys.blockEntry(hash, 0), packEntries([receipt], [envelope])[0]!);
      batch.del(Keys.blockBody(hash)).del(Keys.meta('body_end'));
      await store.write(batch);
    } finally {
      await db.close();
    }
    await truncate(path, 0);
    node = await startNode({ dataDir: dir });
    try {
      assert.equal(await keysWith(node, 'j:'), []);
      assert.is((await receiptOf(node, hashOf(t1))).blockHash, hash);
      assert.equal(expectOk(await get(node, `/api/v1/blocks/${hash}`)).transactions, [hashOf(t1)]);
      await importOk(node, makeBlock(ref, { txs: [t2] }));
      assert.is((await keysWith(node, 'j:')).length, 1, 'the new block went to the file');
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      assert.is((await receiptOf(node, hashOf(t1))).blockHash, hash);
      assert.is((await receiptOf(node, hashOf(t2))).status, 1);
    } finally {
      await node.stop();
    }
  });
});

t.run();
