/**
 * The pool journal of a node with a data directory: what admission accepts is journaled before it
 * is answered and pooled again on restart (ready and queued alike); what leaves the pool
 * (included, replaced, stale) leaves the journal; what became invalid while the node was down
 * (a removal a crash lost, a legacy `p:` key) is dropped on replay with a log line and a count.
 * Also the queue bounds on every ingress.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassicLevel } from 'classic-level';
import { join } from 'node:path';
import { encodeTx, type StandardTx } from '../../../../src/core/types/transaction.js';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { appendFile } from 'node:fs/promises';
import { readJournalFile } from '../../../../src/node/execution/txpool/journal.js';
import { encodeJournalValue } from '../../../../src/node/execution/txpool/journal-legacy.js';
import { encodeAdd } from '../../../../src/node/execution/txpool/journal-file.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { type Admitted, SubmitRefusal } from '../../../../src/node/execution/txpool/admission.js';
import type { SvcError } from '../../../../src/core/errors.js';
import type { FileHandle } from 'node:fs/promises';
import { flipByte } from '../../../helpers/assert.js';
import { Keys } from '../../../../src/node/execution/store.js';
import { createLogger } from '../../../../src/util/log.js';
import {
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  hashOf,
  http,
  importOk,
  makeBlock,
  mempoolHashes,
  MIN_GAS_PRICE,
  raw,
  startNode,
  submit,
  submitOk,
  transfer,
  withTempDir,
} from '../fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;

/** The journaled hashes, read back from the file as a restart would; each entry holds its transaction's envelope. */
async function journaled(node: ExecutionNode): Promise<string[]> {
  await node.admission.journal.drain();
  const entries = await readJournalFile(node.admission.journal.path!);
  for (const e of entries) assert.is(toHex(sha3(e.envelope)), e.hash, 'the entry holds the envelope of its hash');
  return entries.map((e) => e.hash).sort();
}

/** A logger that keeps its JSON lines. */
function capturingLogger(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { log: createLogger('execution', 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)), lines };
}

async function metric(node: ExecutionNode, name: string): Promise<string[]> {
  return (await node.metrics.text()).split('\n').filter((l) => l.startsWith(name));
}

const journal = suite('pool journal');

journal('admitted transactions survive a restart with their status; included, replaced and stale ones leave the journal', async () => {
  await withTempDir(async (dir) => {
    const a0 = transfer(acc0, { nonce: 0 });
    const a1 = transfer(acc0, { nonce: 1 });
    const a3 = transfer(acc0, { nonce: 3 }); // queued: nonce 2 is missing
    const b0 = transfer(acc1, { nonce: 0 });
    const b0bumped = transfer(acc1, { nonce: 0, gasPrice: 2n * MIN_GAS_PRICE });
    let node = await startNode({ dataDir: dir });
    try {
      await submitOk(node, a0);
      await submitOk(node, a1);
      await submitOk(node, a3, 'queued');
      await submitOk(node, b0);
      // Answered only once durable: the entries are on disk when the 202 arrives.
      assert.equal(await journaled(node), [a0, a1, a3, b0].map(hashOf).sort());
      // A replacement swaps the journal entries in one batch.
      assert.equal(expectOk(await submit(node, b0bumped), 202), { hash: hashOf(b0bumped), status: 'ready', replaced: hashOf(b0) });
      assert.equal(await journaled(node), [a0, a1, a3, b0bumped].map(hashOf).sort());
    } finally {
      await node.stop();
    }

    node = await startNode({ dataDir: dir });
    try {
      assert.equal((await mempoolHashes(node)).sort(), [a0, a1, a3, b0bumped].map(hashOf).sort());
      assert.is(node.admission.statusOf(node.admission.pool.get(hashOf(a3))!), 'queued');
      assert.is(node.admission.statusOf(node.admission.pool.get(hashOf(a1))!), 'ready');
      // A block includes a0 and another nonce-1 transaction from acc0: a0 leaves as included, a1 as stale.
      const other1 = transfer(acc0, { nonce: 1, value: 7n });
      await importOk(node, makeBlock(await genesisRef(node), { txs: [a0, other1] }));
      assert.equal((await mempoolHashes(node)).sort(), [a3, b0bumped].map(hashOf).sort());
      await node.admission.journal.drain();
      assert.equal(await journaled(node), [a3, b0bumped].map(hashOf).sort());
    } finally {
      await node.stop();
    }
  });
});

/** A data directory whose node admitted a0 and a1 (acc0, nonces 0 and 1), then imported a block with a0; stopped. */
async function a0IncludedA1Pooled(dir: string): Promise<{ a0: StandardTx; a1: StandardTx }> {
  const a0 = transfer(acc0, { nonce: 0 });
  const a1 = transfer(acc0, { nonce: 1 });
  const node = await startNode({ dataDir: dir });
  try {
    await submitOk(node, a0);
    await submitOk(node, a1);
    await importOk(node, makeBlock(await genesisRef(node), { txs: [a0] }));
  } finally {
    await node.stop();
  }
  return { a0, a1 };
}

journal('a data directory with legacy p: keys upgrades: they move into the journal file and leave the database; invalid ones are dropped, logged with hash and reason, and counted', async () => {
  await withTempDir(async (dir) => {
    const { a0, a1 } = await a0IncludedA1Pooled(dir);
    const b0 = transfer(acc1, { nonce: 0 });
    let node: ExecutionNode;
    // As if the process died between the block write and the journal cleanup, plus a value that
    // does not decode and one the node never admitted (b0: valid, so it is pooled).
    const db = new ClassicLevel<string, string>(join(dir, 'chain'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const garbage = '0x' + 'ee'.repeat(32);
    const put = (hash: string, envelope: Uint8Array, at: number) => ({ type: 'put' as const, key: Keys.poolTx(hash), value: encodeJournalValue(envelope, at), valueEncoding: 'view' as const });
    await db.batch([put(hashOf(a0), encodeTx(a0), 1), put(garbage, Uint8Array.of(0, 1, 2), 2), put(hashOf(b0), encodeTx(b0), 3)] as never);
    await db.close();

    const { log, lines } = capturingLogger();
    node = await startNode({ dataDir: dir, log });
    try {
      assert.equal((await mempoolHashes(node)).sort(), [a1, b0].map(hashOf).sort());
      const drops = lines.filter((l) => l.msg === 'journaled tx dropped').map((l) => ({ hash: l.hash, reason: l.reason }));
      assert.equal(drops.sort((x, y) => String(x.hash).localeCompare(String(y.hash))), [
        { hash: hashOf(a0), reason: 'NONCE_TOO_LOW' },
        { hash: garbage, reason: 'MALFORMED_INPUT' },
      ].sort((x, y) => x.hash.localeCompare(y.hash)));
      assert.equal((await metric(node, 'service_execution_pool_journal_dropped_total{')).sort(), [
        'service_execution_pool_journal_dropped_total{reason="MALFORMED_INPUT"} 1',
        'service_execution_pool_journal_dropped_total{reason="NONCE_TOO_LOW"} 1',
      ]);
      assert.equal(await journaled(node), [a1, b0].map(hashOf).sort(), 'the dropped entries left the journal');
    } finally {
      await node.stop();
    }
    const after = new ClassicLevel<string, string>(join(dir, 'chain'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await after.open();
    try {
      assert.equal(await after.keys({ gte: Keys.poolTx(''), lt: Keys.poolTx('') + '\xff' }).all(), [], 'the p: keys are deleted once moved');
    } finally {
      await after.close();
    }
    // Upgraded once: the next start finds the same pool, from the file alone.
    node = await startNode({ dataDir: dir });
    try {
      assert.equal((await mempoolHashes(node)).sort(), [a1, b0].map(hashOf).sort());
    } finally {
      await node.stop();
    }
  });
});

journal('removals a crash lost are harmless: an included transaction replayed is dropped as stale, a duplicated one is pooled once', async () => {
  await withTempDir(async (dir) => {
    const { a0, a1 } = await a0IncludedA1Pooled(dir);
    let node: ExecutionNode;
    // Removals are written without a sync of their own, so a crash can lose them: as if the
    // removal of a0 never reached the disk, and a1's add record were there twice.
    const path = join(dir, 'pool.journal');
    assert.equal((await readJournalFile(path)).map((e) => e.hash), [hashOf(a1)]);
    await appendFile(path, Buffer.concat([...encodeAdd(hashOf(a0), 1, encodeTx(a0)), ...encodeAdd(hashOf(a1), 2, encodeTx(a1))]));
    const { log, lines } = capturingLogger();
    node = await startNode({ dataDir: dir, log });
    try {
      assert.equal(await mempoolHashes(node), [hashOf(a1)]);
      assert.equal(lines.filter((l) => l.msg === 'journaled tx dropped').map((l) => ({ hash: l.hash, reason: l.reason })), [{ hash: hashOf(a0), reason: 'NONCE_TOO_LOW' }]);
      assert.equal(await journaled(node), [hashOf(a1)]);
    } finally {
      await node.stop();
    }
  });
});

journal('a replay into a smaller pool evicts as admission does, and the evicted entries leave the journal', async () => {
  await withTempDir(async (dir) => {
    const cheap = transfer(acc0, { nonce: 0 });
    const dear = transfer(acc1, { nonce: 0, gasPrice: 3n * MIN_GAS_PRICE });
    const mid = transfer(acc0, { nonce: 1, gasPrice: 2n * MIN_GAS_PRICE });
    let node = await startNode({ dataDir: dir });
    try {
      for (const t of [cheap, dear, mid]) await submitOk(node, t);
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir, poolCapacity: 2 });
    try {
      assert.equal((await mempoolHashes(node)).sort(), [dear, mid].map(hashOf).sort());
      await node.admission.journal.drain();
      assert.equal(await journaled(node), [dear, mid].map(hashOf).sort());
    } finally {
      await node.stop();
    }
  });
});

journal('concurrent submissions share synced batches and all come back', async () => {
  await withTempDir(async (dir) => {
    const txs = Array.from({ length: 40 }, (_, i) => transfer(i % 2 ? acc1 : acc0, { nonce: Math.floor(i / 2) }));
    let node = await startNode({ dataDir: dir });
    try {
      // Submitted in one turn, they are admitted in batches of at most 16 (3 here): at most one sync each, shared when they overlap.
      const results = await Promise.all(txs.map((t) => node.submit(t, 'rest')));
      assert.equal(results.map((r) => r.hash), txs.map(hashOf));
      const [syncs] = await metric(node, 'service_execution_pool_journal_syncs_total ');
      const [writes] = await metric(node, 'service_execution_pool_journal_writes_total ');
      assert.is(writes, 'service_execution_pool_journal_writes_total 40');
      const syncCount = Number(syncs!.split(' ')[1]);
      assert.ok(syncCount >= 1 && syncCount <= 3, `40 submissions of one turn share at most 3 synced writes, saw ${syncCount}`);
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      assert.equal((await mempoolHashes(node)).sort(), txs.map(hashOf).sort());
      assert.equal(node.admission.pool.counts(node.admission.accountNonce), { pending: 40, queued: 0 });
    } finally {
      await node.stop();
    }
  });
});

journal('a batch judges each submission alone, in order, and answers once its one write is synced', async () => {
  await withTempDir(async (dir) => {
    const node = await startNode({ dataDir: dir });
    try {
      const first = transfer(acc0, { nonce: 0 });
      const forged = { ...transfer(acc1, { nonce: 0 }), signature: flipByte(transfer(acc1, { nonce: 0 }).signature, 9) };
      const next = transfer(acc0, { nonce: 1 });
      const poor = transfer(keys.unfunded[0]!, { nonce: 0 });
      const out = await node.admission.submitMany([first, first, forged, next, poor].map((tx) => ({ tx, source: 'rest' as const, opts: { envelope: encodeTx(tx) } })));
      const codes = out.map((o) => (o instanceof SubmitRefusal ? (o.error as SvcError).code : (o as Admitted).status));
      // The duplicate sees the first pooled, and nonce 1 is ready because nonce 0 came before it in the batch.
      assert.equal(codes, ['ready', 'ALREADY_KNOWN', 'INVALID_SIGNATURE', 'ready', 'INSUFFICIENT_FUNDS']);
      assert.equal(mapHashes(out), [hashOf(first), undefined, undefined, hashOf(next), undefined]);
      // Durable when answered: the file holds both without waiting for anything queued.
      assert.equal((await readJournalFile(node.admission.journal.path!)).map((e) => e.hash).sort(), [hashOf(first), hashOf(next)].sort());
      assert.equal(await metric(node, 'service_execution_pool_journal_syncs_total '), ['service_execution_pool_journal_syncs_total 1']);
      const rejected = (await metric(node, 'service_execution_transactions_rejected_total{')).join('\n');
      for (const reason of ['ALREADY_KNOWN', 'INVALID_SIGNATURE', 'INSUFFICIENT_FUNDS']) assert.ok(rejected.includes(`reason="${reason}"} 1`), `${reason} counted once: ${rejected}`);
    } finally {
      await node.stop();
    }
  });
});

journal('a batch whose journal write fails is refused whole with POOL_JOURNAL_FAILED and leaves the pool', async () => {
  await withTempDir(async (dir) => {
    const node = await startNode({ dataDir: dir });
    try {
      // The file handle closed under the journal: its next write fails as a full or failing disk would.
      await (node.admission.journal as unknown as { fh: FileHandle }).fh.close();
      const txs = [transfer(acc0, { nonce: 0 }), transfer(acc1, { nonce: 0 })];
      const out = await node.admission.submitMany(txs.map((tx) => ({ tx, source: 'rest' as const, opts: {} })));
      for (const o of out) {
        assert.instance(o, SubmitRefusal);
        assert.is(((o as SubmitRefusal).error as SvcError).code, 'POOL_JOURNAL_FAILED');
      }
      assert.is(node.admission.pool.size, 0, 'nothing unacknowledged stays pooled');
      // The single path shares the pipeline: the same refusal.
      await node.submit(transfer(acc0, { nonce: 0 }), 'rest').then(
        () => assert.unreachable('a submission the journal could not keep was acknowledged'),
        (err: unknown) => assert.is((err as SvcError).code, 'POOL_JOURNAL_FAILED'),
      );
    } finally {
      await node.stop();
    }
  });
});

/** The hashes of the admitted outcomes (undefined for refusals). */
function mapHashes(out: ReadonlyArray<Admitted | SubmitRefusal>): Array<string | undefined> {
  return out.map((o) => (o instanceof SubmitRefusal ? undefined : o.hash));
}

const bounds = suite('pool queue bounds on every ingress');

bounds('a nonce more than accountQueue past the pending nonce is refused over REST and JSON-RPC; a ready run is not bounded', async () => {
  const node = await startNode({ poolQueue: { accountQueue: 4 } });
  try {
    // A contiguous run longer than the bound is ready, not queued.
    for (let n = 0; n < 6; n++) await submitOk(node, transfer(acc0, { nonce: n }));
    // Pending nonce is 6: 7..10 may queue, 11 may not.
    await submitOk(node, transfer(acc0, { nonce: 10 }), 'queued');
    const far = transfer(acc0, { nonce: 11 });
    const message = "nonce too high: 11 is more than 4 past the sender's next nonce 6; send the missing nonces first";
    expectEnvelope(await submit(node, far), 400, 'NONCE_TOO_HIGH', message);
    const r = await http(node.rpcUrl, '/', { json: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw(far).raw] } });
    assert.equal(r.body.error, { code: -32000, message, data: { code: 'NONCE_TOO_HIGH' } });
    const million = transfer(acc1, { nonce: 1_000_000 });
    expectEnvelope(await submit(node, million), 400, 'NONCE_TOO_HIGH', /^nonce too high: 1000000 is more than 4 past the sender's next nonce 0;/);
    assert.is(node.admission.pool.has(hashOf(million)), false);
  } finally {
    await node.stop();
  }
});

bounds('globalQueue caps queued transactions across senders; ready ones and replacements still enter', async () => {
  const node = await startNode({ poolQueue: { globalQueue: 2 } });
  try {
    await submitOk(node, transfer(acc0, { nonce: 2 }), 'queued');
    await submitOk(node, transfer(acc1, { nonce: 5 }), 'queued');
    expectEnvelope(await submit(node, transfer(acc0, { nonce: 3 })), 409, 'QUEUE_FULL', 'transaction pool queue is full (2 transactions wait for missing nonces): send nonce 0 first');
    // Same-nonce replacement of a queued entry is not a new queued entry.
    const bumped = transfer(acc0, { nonce: 2, gasPrice: 2n * MIN_GAS_PRICE });
    assert.is(expectOk(await submit(node, bumped), 202).status, 'queued');
    // Filling acc0's gap makes its queued entry ready, which frees a queue slot.
    await submitOk(node, transfer(acc0, { nonce: 0 }));
    await submitOk(node, transfer(acc0, { nonce: 1 }));
    await submitOk(node, transfer(acc0, { nonce: 4 }), 'queued');
    assert.equal(node.admission.pool.counts(node.admission.accountNonce), { pending: 3, queued: 2 });
  } finally {
    await node.stop();
  }
});

journal.run();
bounds.run();
