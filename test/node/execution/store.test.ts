/**
 * Storage layout: a transaction, receipt or status lookup reads bytes of its own size, not its
 * block's (counted through ChainStore.reads, so the test is exact rather than timed); block views
 * without full transactions read no transaction; caches are bounded by bytes and reported in
 * metrics; a data directory of another layout is refused before anything is read or written.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassicLevel } from 'classic-level';
import { EXIT_ADDRESS, MAX_TX_DATA_BYTES } from '../../../src/core/constants.js';
import { SvcError } from '../../../src/core/errors.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { Keys, SCHEMA_VERSION, STATE_DB_DIR } from '../../../src/node/execution/store.js';
import { staleKey, versionPrefix } from '../../../src/node/execution/state/trie.js';
import { unpackEntry } from '../../../src/node/execution/blocks.js';
import { devnet, expectOk, genesisRef, get, hashOf, importOk, makeBlock, metricValue, rpcResult, startNode, transfer, withNode, withTempDir } from './fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const X = '0x00000000000000000000000000000000000000b1';

/** Bytes the node's store reads while `fn` runs. */
async function bytesRead(node: ExecutionNode, fn: () => Promise<unknown>): Promise<number> {
  const before = node.chain.store.reads.bytes;
  await fn();
  return node.chain.store.reads.bytes - before;
}

/** Every public way to look a transaction up, each with the bytes it read. */
async function lookups(node: ExecutionNode, hash: string): Promise<Record<string, number>> {
  return {
    status: await bytesRead(node, async () => assert.is(expectOk(await get(node, `/api/v1/transactions/${hash}`)).state, 'Confirmed')),
    rest_receipt: await bytesRead(node, async () => assert.is(expectOk(await get(node, `/api/v1/transactions/${hash}/receipt`)).transactionHash, hash)),
    rpc_receipt: await bytesRead(node, async () => assert.is((await rpcResult(node, 'eth_getTransactionReceipt', [hash])).transactionHash, hash)),
    rpc_tx: await bytesRead(node, async () => assert.is((await rpcResult(node, 'eth_getTransactionByHash', [hash])).hash, hash)),
  };
}

const storage = suite('storage layout');

storage('a receipt, transaction or status lookup reads its own bytes whether its block is 1 transaction or ~3 MB', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const lone = transfer(acc0, { nonce: 0, to: X, value: 7n });
    const small = await importOk(node, makeBlock(g, { txs: [lone] }));
    // Twelve maximum-size transactions around one small transfer: the block is ~3 MB of SSZ.
    const data = new Uint8Array(MAX_TX_DATA_BYTES).fill(0xcd);
    const bulky = Array.from({ length: 12 }, (_, i) => transfer(acc1, { nonce: i, to: EXIT_ADDRESS, value: 0n, data }));
    const inBig = transfer(acc0, { nonce: 1, to: X, value: 7n });
    const big = await importOk(node, makeBlock(small.ref, { txs: [...bulky.slice(0, 6), inBig, ...bulky.slice(6)] }));
    const record = (await node.chain.record(big.ref.hash))!;
    assert.ok(record.size > 12 * MAX_TX_DATA_BYTES, `big block is ${record.size} bytes`);

    const a = await lookups(node, hashOf(lone));
    const b = await lookups(node, hashOf(inBig));
    for (const [what, n] of Object.entries(b)) {
      // Same-sized answers from a block 1,000 times larger: the receipt's numbers differ by a few digits.
      assert.ok(n > 0 && n <= a[what]! + 64, `${what}: ${n} bytes read in the big block, ${a[what]} in the small one`);
      assert.ok(n < 16_384, `${what}: ${n} bytes read`);
    }

    // Without full transactions a block answer reads the record, the header and the hash list.
    const header = await bytesRead(node, async () => assert.is((await rpcResult(node, 'eth_getBlockByHash', [big.ref.hash, false])).transactions.length, 13));
    assert.ok(header < 16_384, `eth_getBlockByHash(false) read ${header} bytes of a ${record.size}-byte block`);
    // The full answers carry every transaction, reassembled in order from their own keys.
    const full = await rpcResult(node, 'eth_getBlockByHash', [big.ref.hash, true]);
    assert.equal(
      full.transactions.map((t: { hash: string }) => t.hash),
      [...bulky.slice(0, 6), inBig, ...bulky.slice(6)].map(hashOf),
    );
    const view = expectOk(await get(node, `/api/v1/blocks/${big.ref.hash}`));
    assert.is(view.block.transactions.length, 13);
    assert.equal(view.transactions, full.transactions.map((t: { hash: string }) => t.hash));
    assert.is(Number(BigInt(full.size)), record.size);
  });
});

storage('a block stored with one x: envelope and one r: receipt key per transaction (before u: entries) reads the same', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const txs = [transfer(acc0, { nonce: 0, to: X, value: 7n }), transfer(acc1, { nonce: 0, to: X, value: 8n })];
    const { ref } = await importOk(node, makeBlock(g, { txs }));
    const answers = async () => ({
      lookups: await Promise.all(txs.map(async (tx) => [expectOk(await get(node, `/api/v1/transactions/${hashOf(tx)}`)), await rpcResult(node, 'eth_getTransactionByHash', [hashOf(tx)])])),
      block: await rpcResult(node, 'eth_getBlockByHash', [ref.hash, true]),
      receipts: await node.chain.blocks.receipts(ref.hash),
    });
    const before = await answers();
    // Rewrite the block as the earlier layout stored it.
    const db = node.chain.store.db;
    for (let i = 0; i < txs.length; i++) {
      const key = Keys.blockEntry(ref.hash, i);
      const { receiptJson, envelope } = unpackEntry((await node.chain.store.getBytes(key))!, key);
      await db.batch([
        { type: 'del', key },
        { type: 'put', key: Keys.blockTx(ref.hash, i), value: envelope as never, valueEncoding: 'view' } as never,
        { type: 'put', key: Keys.receipt(ref.hash, i), value: receiptJson },
      ]);
    }
    assert.is((await node.chain.store.scanBytes(Keys.blockEntryPrefix(ref.hash))).length, 0);
    assert.equal(await answers(), before);
    assert.is(before.receipts.length, 2);
  });
});

storage('a damaged transaction entry is CORRUPT_DB, not a crash or a wrong answer', async () => {
  await withNode(async (node) => {
    const tx = transfer(acc0, { nonce: 0, to: X, value: 7n });
    const { ref } = await importOk(node, makeBlock(await genesisRef(node), { txs: [tx] }));
    // A receipt length past the value's end.
    await node.chain.store.db.put(Keys.blockEntry(ref.hash, 0), Uint8Array.of(0, 0, 0x10, 0, 0x7b) as never, { valueEncoding: 'view' } as never);
    try {
      await node.chain.blocks.receipt(ref.hash, 0);
      assert.unreachable('expected CORRUPT_DB');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'CORRUPT_DB');
    }
  });
});

storage('caches are bounded by bytes and reported in /metrics; evicted blocks are read back from storage', async () => {
  const bound = 2_000;
  await withNode(
    async (node) => {
      let parent = await genesisRef(node);
      const hashes: string[] = [];
      for (let i = 0; i < 8; i++) {
        const tx = transfer(acc0, { nonce: i, to: X, value: 1n });
        parent = (await importOk(node, makeBlock(parent, { txs: [tx] }))).ref;
        hashes.push(hashOf(tx));
      }
      const stats = node.chain.blocks.cacheStats().records;
      assert.ok(stats.bytes <= bound && stats.entries < 8, `records cache: ${JSON.stringify(stats)}`);
      const text = (await get(node, '/metrics')).text;
      assert.is(metricValue(text, 'service_execution_cache_max_bytes', 'cache="records"'), bound);
      const reported = metricValue(text, 'service_execution_cache_bytes', 'cache="records"')!;
      assert.ok(reported > 0 && reported <= bound, `reported ${reported}`);
      assert.ok(metricValue(text, 'service_execution_cache_entries', 'cache="records"')! >= 1);
      assert.ok(metricValue(text, 'service_execution_cache_entries', 'cache="verified_signers"')! >= 8);
      assert.ok(metricValue(text, 'service_execution_cache_bytes', 'cache="changes"')! > 0);
      // One sender: its key is expanded once per verifier thread that saw it, then found.
      const keys = metricValue(text, 'service_execution_cache_entries', 'cache="signature_keys"')!;
      const misses = metricValue(text, 'service_execution_signature_key_cache_lookups_total', 'result="miss"')!;
      const hits = metricValue(text, 'service_execution_signature_key_cache_lookups_total', 'result="hit"')!;
      assert.ok(keys >= 1 && misses === keys && hits + misses >= 8, `signature keys: ${keys} cached, ${hits} hits, ${misses} misses`);
      assert.is(metricValue(text, 'service_execution_cache_bytes', 'cache="signature_keys"'), keys * 38_912);
      // The first block's record was evicted; its views still answer.
      assert.is(expectOk(await get(node, '/api/v1/blocks/1')).transactions[0], hashes[0]);
    },
    { cacheBytes: { recordBytes: bound } },
  );
});

async function expectSchemaRefused(dir: string, found: number): Promise<void> {
  try {
    const node = await startNode({ dataDir: dir });
    await node.stop();
  } catch (err) {
    assert.instance(err, SvcError);
    assert.is((err as SvcError).code, 'DB_SCHEMA_MISMATCH');
    assert.is(
      (err as SvcError).message,
      `data directory uses storage layout ${found}, this node reads layout ${SCHEMA_VERSION}: start with a fresh data directory (svc devnet up --fresh, or another --data-dir)`,
    );
    return;
  }
  assert.unreachable('expected DB_SCHEMA_MISMATCH');
}

/** Runs `fn` on the raw LevelDB of a data directory (the chain's, or `which`). */
async function onDb(dir: string, fn: (db: ClassicLevel<string, string>) => Promise<void>, which = 'chain'): Promise<void> {
  const db = new ClassicLevel<string, string>(`${dir}/${which}`, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

storage('a data directory of another storage layout (older or newer) is refused with DB_SCHEMA_MISMATCH and left as it was', async () => {
  await withTempDir(async (dir) => {
    const first = await startNode({ dataDir: dir });
    const genesisRecord = first.chain.genesisHash;
    await first.stop();
    // Layout 1 had no schema key and kept whole blocks (receipts, base64 SSZ) under b:.
    await onDb(dir, async (db) => {
      await db.del(Keys.meta('schema'));
      await db.put(Keys.block(genesisRecord), JSON.stringify({ hash: genesisRecord, index: 0, tx_hashes: [], receipts: [], ssz: '' }));
    });
    await expectSchemaRefused(dir, 1);
    await onDb(dir, async (db) => {
      assert.is(await db.get(Keys.meta('schema')), undefined, 'the refusal wrote nothing');
      await db.put(Keys.meta('schema'), String(SCHEMA_VERSION + 1));
    });
    await expectSchemaRefused(dir, SCHEMA_VERSION + 1);
    // Layout 7 is the last before the registry was committed in the state: its state roots are not this node's.
    await onDb(dir, async (db) => db.put(Keys.meta('schema'), String(SCHEMA_VERSION - 1)));
    await expectSchemaRefused(dir, SCHEMA_VERSION - 1);
  });
  // A fresh directory starts and records the current layout.
  await withTempDir(async (dir) => {
    const node = await startNode({ dataDir: dir });
    await node.stop();
    await onDb(dir, async (db) => assert.is(await db.get(Keys.meta('schema')), String(SCHEMA_VERSION)));
  });
});

storage('state an import wrote above the chain\'s version (a crash between the two batches) is deleted on open', async () => {
  await withTempDir(async (dir) => {
    const first = await startNode({ dataDir: dir });
    const b1 = await importOk(first, makeBlock(await genesisRef(first), { txs: [transfer(acc0, { nonce: 0, to: X, value: 7n })] }));
    await first.stop();
    // What an import cut short between its state batch (durable) and its chain batch leaves.
    const orphan = [`${versionPrefix(2)}a:`, `${versionPrefix(2)}a:0123456789abcdef`, staleKey(2), `${versionPrefix(9)}a:`];
    await onDb(dir, async (db) => {
      for (const k of orphan) await db.put(k, 'left by a crash');
    }, STATE_DB_DIR);
    const again = await startNode({ dataDir: dir });
    try {
      // The next import reuses version 2 and reads back whole.
      const b2 = await importOk(again, makeBlock(b1.ref, { txs: [transfer(acc0, { nonce: 1, to: X, value: 5n })] }));
      assert.is(again.chain.head().hash, b2.ref.hash);
      assert.is(expectOk(await get(again, `/api/v1/accounts/${X}`)).balance, '12');
    } finally {
      await again.stop();
    }
    await onDb(dir, async (db) => {
      assert.is(await db.get(`${versionPrefix(2)}a:0123456789abcdef`), undefined, 'a node no state names is gone');
      assert.is(await db.get(`${versionPrefix(9)}a:`), undefined);
      assert.not.equal(await db.get(`${versionPrefix(2)}a:`), 'left by a crash', 'version 2 is the second block\'s now');
    }, STATE_DB_DIR);
  });
});

storage.run();
