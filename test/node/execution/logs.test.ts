/**
 * The log index on real LevelDB stores (memory-level and classic-level): canonical put/revert in
 * one batch, reorgs at the same height, address and topic filters, reads in proportion to what a
 * query returns, range and result limits, and Ethereum's logs bloom.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogJson, Receipt } from '../../../src/api/execution.js';
import { toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { addressTopic, eventTopic } from '../../../src/core/codec/calldata.js';
import { keccak256 } from '../../../src/core/crypto/hash.js';
import { LogIndex, LogQueryError, logsBloom, topicsMatch } from '../../../src/node/execution/logs.js';
import { ChainStore, type Db, WriteBatch } from '../../../src/node/shared/store.js';
import { httpStatusOf } from '../../../src/api/errors.js';

const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'b2'.repeat(20);
const TRANSFER = eventTopic('Transfer');
const APPROVAL = eventTopic('Approval');
const hashOf = (height: number, branch = 0) => '0x' + height.toString(16).padStart(60, '0') + branch.toString(16).padStart(4, '0');

/** Receipts of a block whose logs are given as [emitter, topics] pairs, one transaction each. */
function receipts(height: number, hash: string, logs: Array<[string, string[]]>): Receipt[] {
  return logs.map(([address, topics], i) => {
    const log: LogJson = { address, topics, data: '0x' + i.toString(16).padStart(2, '0'), blockNumber: height, blockHash: hash, transactionHash: '0x' + 'ee'.repeat(31) + i.toString(16).padStart(2, '0'), transactionIndex: i, logIndex: i };
    return { transactionHash: log.transactionHash, transactionIndex: i, blockHash: hash, blockNumber: height, from: B, to: address, kind: 'contract_call', status: 1, gasUsed: 1, cumulativeGasUsed: 1, effectiveGasPrice: '1', fee: '1', contractAddress: null, logs: [log] };
  });
}

async function stores(): Promise<Array<{ name: string; store: ChainStore; close: () => Promise<void> }>> {
  const mem = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
  const dir = await mkdtemp(join(tmpdir(), 'svc-logs-'));
  const disk = new ClassicLevel<string, string>(join(dir, 'db'), { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
  await mem.open();
  await disk.open();
  return [
    { name: 'memory-level', store: new ChainStore(mem), close: () => mem.close() },
    { name: 'classic-level', store: new ChainStore(disk), close: async () => { await disk.close(); await rm(dir, { recursive: true, force: true }); } },
  ];
}

const index = suite('log index');

index('put, query by range, address and topics, revert and reorg at the same height', async () => {
  for (const { name, store, close } of await stores()) {
    try {
      const logs = new LogIndex(store);
      const batch = new WriteBatch();
      const blocks: Array<{ hash: string; index: number; receipts: Receipt[] }> = [];
      for (let h = 1; h <= 5; h++) {
        const hash = hashOf(h);
        const r = receipts(h, hash, h === 3 ? [] : [[A, [TRANSFER, addressTopic(A), addressTopic(B)]], [B, [APPROVAL]]]);
        blocks.push({ hash, index: h, receipts: r });
        logs.put(batch, { hash, index: h }, r);
      }
      await store.write(batch);
      const all = await logs.query({ fromBlock: 0, toBlock: 10 });
      assert.equal(all.map((l) => [l.blockNumber, l.logIndex]), [[1, 0], [1, 1], [2, 0], [2, 1], [4, 0], [4, 1], [5, 0], [5, 1]], name);
      assert.equal((await logs.query({ fromBlock: 2, toBlock: 4, addresses: [A] })).map((l) => l.blockNumber), [2, 4]);
      assert.equal((await logs.query({ fromBlock: 0, toBlock: 9, addresses: [B, A] })).map((l) => [l.blockNumber, l.address]), [1, 2, 4, 5].flatMap((h) => [[h, A], [h, B]]), 'many addresses merge in block order');
      assert.is((await logs.query({ fromBlock: 0, toBlock: 9, topics: [[APPROVAL]] })).length, 4);
      assert.is((await logs.query({ fromBlock: 0, toBlock: 9, topics: [[APPROVAL, TRANSFER]] })).length, 8, 'OR within a position');
      assert.is((await logs.query({ fromBlock: 0, toBlock: 9, topics: [null, [addressTopic(A)]] })).length, 4, 'null is a wildcard');
      assert.is((await logs.query({ fromBlock: 0, toBlock: 9, topics: [null, null, null, [TRANSFER]] })).length, 0, 'a missing topic does not match');
      assert.equal(await logs.ofBlock(blocks[0]!), blocks[0]!.receipts.flatMap((r) => r.logs));
      assert.equal(await logs.ofBlock(blocks[2]!), [], 'a block without logs has no entry');

      // A reorg at height 5: the new block's put and the old one's revert commute in one batch.
      const newHash = hashOf(5, 1);
      const replacement = receipts(5, newHash, [[B, [TRANSFER]]]);
      const reorg = new WriteBatch();
      logs.put(reorg, { hash: newHash, index: 5 }, replacement);
      logs.revert(reorg, blocks[4]!, blocks[4]!.receipts);
      await store.write(reorg);
      assert.equal((await logs.query({ fromBlock: 5, toBlock: 5 })).map((l) => [l.blockHash, l.address]), [[newHash, B]]);
      assert.equal(await logs.query({ fromBlock: 5, toBlock: 5, addresses: [A] }), [], 'the reverted block left no address entry');
      assert.equal(await logs.ofBlock(blocks[4]!), []);
    } finally {
      await close();
    }
  }
});

index('an address query reads one value per matching log; a query without address one per block with logs', async () => {
  const [{ store, close }] = await stores();
  try {
    const logs = new LogIndex(store);
    const batch = new WriteBatch();
    for (let h = 1; h <= 2000; h++) {
      const hash = hashOf(h);
      logs.put(batch, { hash, index: h }, receipts(h, hash, h % 500 === 0 ? [[A, [TRANSFER]], [B, [TRANSFER]]] : [[A, [TRANSFER]]]));
    }
    await store.write(batch);
    const before = logs.reads.values;
    assert.is((await logs.query({ fromBlock: 0, toBlock: 5000, addresses: [B] })).length, 4);
    assert.is(logs.reads.values - before, 4, 'B has 4 logs among 2,004');
    const mid = logs.reads.values;
    assert.is((await logs.query({ fromBlock: 100, toBlock: 199 })).length, 100);
    assert.is(logs.reads.values - mid, 100, 'one value per block in range');
  } finally {
    await close();
  }
});

index('range and result limits are LogQueryErrors with codes and clear messages', async () => {
  const [{ store, close }] = await stores();
  try {
    const logs = new LogIndex(store, { maxBlockRange: 100, maxResults: 3 });
    const batch = new WriteBatch();
    for (let h = 1; h <= 4; h++) logs.put(batch, { hash: hashOf(h), index: h }, receipts(h, hashOf(h), [[A, [TRANSFER]]]));
    await store.write(batch);
    const fails = async (f: Parameters<LogIndex['query']>[0], code: string, message: string) => {
      try {
        await logs.query(f);
        assert.unreachable('expected a LogQueryError');
      } catch (err) {
        assert.instance(err, LogQueryError);
        assert.is((err as LogQueryError).code, code);
        assert.is(httpStatusOf(err as LogQueryError), 400);
        assert.is((err as Error).message, message);
      }
    };
    await fails({ fromBlock: 0, toBlock: 100 }, 'LOG_RANGE_TOO_LARGE', 'log queries may span at most 100 blocks; this one spans 101 (narrow fromBlock..toBlock)');
    await fails({ fromBlock: 5, toBlock: 4 }, 'INVALID_LOG_RANGE', 'fromBlock 5 is after toBlock 4');
    await fails({ fromBlock: -1, toBlock: 4 }, 'INVALID_LOG_RANGE', 'log range bounds must be non-negative block numbers');
    await fails({ fromBlock: 0, toBlock: 10 }, 'LOG_RESULT_TOO_LARGE', 'the query matches more than 3 logs; narrow the block range, addresses or topics');
    assert.is((await logs.query({ fromBlock: 0, toBlock: 3 })).length, 3, 'exactly the limit is fine');
  } finally {
    await close();
  }
});

index('logsBloom is Ethereum\'s: the go-ethereum vector, three bits per item, empty for no logs', () => {
  // go-ethereum core/types/bloom9_test.go TestBloomExtensively: 100 items, Keccak-256 of the bloom.
  const items = Array.from({ length: 100 }, (_, i) => toHex(utf8(`xxxxxxxxxx data ${i} yyyyyyyyyyyyyy`)));
  const bloom = logsBloom(items.map((address) => ({ address, topics: [] })));
  assert.is(toHex(keccak256(bloom)), '0xc8d3ca65cdb4874300a9e39475508f23ed6da09fdbc487f89a2dcf50b09eb263');
  const one = logsBloom([{ address: A, topics: [] }]);
  const bits = [...one].reduce((n, b) => n + b.toString(2).replaceAll('0', '').length, 0);
  assert.ok(bits >= 1 && bits <= 3);
  assert.is(toHex(logsBloom([])), '0x' + '00'.repeat(256));
  assert.ok(topicsMatch({ topics: [TRANSFER] }, undefined));
  assert.ok(topicsMatch({ topics: [TRANSFER] }, [[]]), 'an empty alternative list matches anything, as in geth');
});

index.run();
