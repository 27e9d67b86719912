/**
 * Polled filters and WebSocket subscriptions on the JSON-RPC port. On a real in-process node:
 * block and pending-transaction filters over HTTP, eth_subscribe over WebSocket, bad input to
 * every new method, and the strict parameter count. On the filter store itself (with its feed):
 * log matching with `removed` on a reorg, expiry of unpolled filters, the change cap and the
 * filter cap.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import type { LogJson } from '../../../../src/api/execution.js';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { encodeTx } from '../../../../src/core/types/transaction.js';
import type { BlockRecord } from '../../../../src/node/execution/blocks.js';
import type { CanonicalChange } from '../../../../src/node/execution/chain.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { RpcFeed } from '../../../../src/node/execution/api/rpc-feed.js';
import { RpcFilters } from '../../../../src/node/execution/api/rpc-filters.js';
import { logFilter } from '../../../../src/node/execution/api/rpc-params.js';
import { silentLogger } from '../../../../src/util/log.js';
import { devnet, genesisRef, hashOf, importOk, makeBlock, type ParentRef, rpc, rpcResult, startNode, transfer } from '../fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;

// ---- the filter store, fed by a feed over hand-made changes -------------------------------------

const record = (index: number, hash: string): BlockRecord => ({ hash, index, tx_count: 1 }) as BlockRecord;
const logAt = (block: BlockRecord, address: string, topic: string, logIndex: number): LogJson => ({
  address,
  topics: [topic],
  data: '0x',
  blockNumber: block.index,
  blockHash: block.hash,
  transactionHash: '0x' + 'ee'.repeat(32),
  transactionIndex: 0,
  logIndex,
});
const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'b2'.repeat(20);
const T1 = '0x' + '01'.repeat(32);
const T2 = '0x' + '02'.repeat(32);
const b1 = record(1, '0x' + '11'.repeat(32));
const b2 = record(2, '0x' + '22'.repeat(32));
const b2x = record(2, '0x' + '2f'.repeat(32));
const LOGS = new Map<string, LogJson[]>([
  [b1.hash, [logAt(b1, A, T1, 0), logAt(b1, B, T1, 1)]],
  [b2.hash, [logAt(b2, A, T2, 0)]],
  [b2x.hash, [logAt(b2x, A, T1, 0)]],
]);
const applied = (...rs: BlockRecord[]) => rs.map((r) => ({ record: r, txHashes: [], senders: [], slashed: 0 }));
const reverted = (...rs: BlockRecord[]) => rs.map((r) => ({ record: r, txHashes: [], transactions: [], senders: [] }));

function store(opts: ConstructorParameters<typeof RpcFilters>[1] = {}) {
  let reads = 0;
  const feed = new RpcFeed(async (r) => {
    reads++;
    return LOGS.get(r.hash) ?? [];
  }, silentLogger);
  const filters = new RpcFilters(feed, opts);
  const change = async (c: CanonicalChange) => {
    feed.canonical(c);
    await feed.drained();
  };
  return { feed, filters, change, reads: () => reads };
}

const unit = suite('rpc filters: the store');

unit('a log filter gets matching logs in order, and a reorg reports the left block\'s logs as removed', async () => {
  const s = store();
  try {
    const id = s.filters.install('logs', {}, logFilter({ address: A }));
    await s.change({ applied: applied(b1, b2), reverted: [] });
    const first = s.filters.changes(id) as Array<{ blockHash: string; topics: string[]; removed: boolean }>;
    assert.equal(first.map((l) => [l.blockHash, l.topics[0], l.removed]), [[b1.hash, T1, false], [b2.hash, T2, false]]);
    assert.equal(s.filters.changes(id), [], 'a poll empties the filter');
    await s.change({ applied: applied(b2x), reverted: reverted(b2) });
    const reorg = s.filters.changes(id) as Array<{ blockHash: string; removed: boolean }>;
    assert.equal(reorg.map((l) => [l.blockHash, l.removed]), [[b2.hash, true], [b2x.hash, false]]);
    // Topics narrow it; a numeric range bounds it.
    const t2 = s.filters.install('logs', {}, logFilter({ topics: [T2] }));
    const upTo1 = s.filters.install('logs', {}, logFilter({ fromBlock: '0x0', toBlock: '0x1' }));
    await s.change({ applied: applied(b1, b2), reverted: [] });
    assert.equal((s.filters.changes(t2) as Array<{ blockHash: string }>).map((l) => l.blockHash), [b2.hash]);
    assert.equal((s.filters.changes(upTo1) as Array<{ blockNumber: string }>).map((l) => l.blockNumber), ['0x1', '0x1']);
  } finally {
    s.filters.close();
  }
});

unit('logs are read only while a log filter is installed', async () => {
  const s = store();
  try {
    const blocks = s.filters.install('block');
    await s.change({ applied: applied(b1), reverted: [] });
    assert.is(s.reads(), 0, 'a block filter alone reads no receipts');
    assert.equal(s.filters.changes(blocks), [b1.hash]);
    const logs = s.filters.install('logs', {}, logFilter({}));
    await s.change({ applied: applied(b2), reverted: [] });
    assert.is(s.reads(), 1);
    s.filters.uninstall(logs);
    await s.change({ applied: applied(b1), reverted: [] });
    assert.is(s.reads(), 1, 'none once it is uninstalled');
  } finally {
    s.filters.close();
  }
});

unit('an unpolled filter expires, an overfull one is dropped, and the store is capped; each says why', async () => {
  let now = 1_000_000;
  const s = store({ now: () => now, timeoutMs: 60_000, maxChanges: 3, maxFilters: 4 });
  try {
    const idle = s.filters.install('block');
    const polled = s.filters.install('block');
    now += 40_000;
    s.filters.changes(polled);
    now += 30_000;
    s.filters.sweep();
    assert.throws(() => s.filters.changes(idle), /filter not found: .* was dropped because it was not polled for 60 s/);
    assert.equal(s.filters.changes(polled), [], 'a poll within the deadline keeps it');
    for (let i = 0; i < 3; i++) s.feed.pending('0x' + String(i).repeat(64));
    assert.is(s.filters.size, 1);
    const pend = s.filters.install('pending');
    for (let i = 0; i < 4; i++) s.feed.pending('0x' + String(i).repeat(64));
    assert.throws(() => s.filters.changes(pend), /dropped because more than 3 changes were not polled/);
    assert.throws(() => s.filters.changes('0x1234'), /^filter not found$/);
    for (let i = s.filters.size; i < 4; i++) s.filters.install('block');
    assert.throws(() => s.filters.install('block'), /too many filters installed \(4\)/);
    assert.ok(s.filters.uninstall(polled));
    assert.not.ok(s.filters.uninstall(polled), 'uninstalling twice answers false');
    s.filters.install('block');
  } finally {
    s.filters.close();
  }
});

unit.run();

// ---- a real node over HTTP and WebSocket -------------------------------------------------------

interface Ctx {
  node: ExecutionNode;
  /** The head after the first test's block, which the WebSocket test builds on. */
  ref: ParentRef;
}
const live = suite<Ctx>('rpc filters and subscriptions: a real node', {} as Ctx);
live.before(async (ctx) => {
  ctx.node = await startNode();
});
live.after(async (ctx) => ctx.node?.stop());

/** A WebSocket JSON-RPC client that keeps every message it receives. */
async function wsClient(url: string) {
  const ws = new WebSocket(url.replace(/^http/, 'ws'));
  const inbox: any[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (d) => {
    inbox.push(JSON.parse(String(d)));
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async (pred: (m: any) => boolean, what: string, ms = 30_000): Promise<any> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = inbox.findIndex(pred);
      if (i >= 0) return inbox.splice(i, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(inbox)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, left).unref();
      });
    }
  };
  let id = 0;
  const call = async (method: string, params: unknown[] = []) => {
    const my = ++id;
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: my, method, params }));
    return next((m) => m.id === my, `answer to ${method}`);
  };
  return { ws, call, next, send: (s: string) => ws.send(s) };
}

live('block and pending filters over HTTP follow imports and admissions', async (ctx) => {
  const { node } = ctx;
  const blocks = await rpcResult(node, 'eth_newBlockFilter');
  const pending = await rpcResult(node, 'eth_newPendingTransactionFilter');
  assert.match(blocks, /^0x[0-9a-f]{32}$/);
  const tx = transfer(acc0, { nonce: 0 });
  await rpcResult(node, 'eth_sendRawTransaction', [toHex(encodeTx(tx))]);
  assert.equal(await rpcResult(node, 'eth_getFilterChanges', [pending]), [hashOf(tx)]);
  const { result, ref } = await importOk(node, makeBlock(await genesisRef(node), { txs: [tx] }));
  ctx.ref = ref;
  const deadline = Date.now() + 10_000;
  let got: string[] = [];
  while (got.length === 0 && Date.now() < deadline) got = await rpcResult(node, 'eth_getFilterChanges', [blocks]);
  assert.equal(got, [result.block_hash]);
  assert.equal(await rpcResult(node, 'eth_getFilterChanges', [blocks]), []);
  const logs = await rpcResult(node, 'eth_newFilter', [{ fromBlock: '0x0' }]);
  assert.equal(await rpcResult(node, 'eth_getFilterLogs', [logs]), [], 'a transfer logs nothing');
  assert.is(await rpcResult(node, 'eth_uninstallFilter', [blocks]), true);
  assert.is(await rpcResult(node, 'eth_uninstallFilter', [blocks]), false);
  assert.equal((await rpc(node, 'eth_getFilterChanges', [blocks])).error, { code: -32000, message: 'filter not found' });
});

live('bad input to the filter methods is -32602 naming the parameter; too many parameters are refused as geth does', async ({ node }) => {
  const err = async (method: string, params: unknown[]) => (await rpc(node, method, params)).error;
  assert.equal(await err('eth_getFilterChanges', ['nope']), { code: -32602, message: 'invalid filter id: expected a 0x hex filter id, got "nope"' });
  assert.equal(await err('eth_getFilterChanges', []), { code: -32602, message: 'invalid filter id: expected a 0x hex filter id, got undefined' });
  assert.is((await err('eth_newFilter', [{ fromBlock: 'soon' }])).code, -32602);
  assert.equal(await err('eth_newFilter', [{ blockHash: '0x' + '00'.repeat(32) }]), { code: -32602, message: 'invalid filter: blockHash cannot be used with eth_newFilter (use eth_getLogs)' });
  assert.is((await err('eth_newPendingTransactionFilter', [true])).code, -32602);
  const block = await rpcResult(node, 'eth_newBlockFilter');
  assert.equal(await err('eth_getFilterLogs', [block]), { code: -32000, message: `filter ${block} is a block filter, not a log filter` });
  assert.equal(await err('eth_blockNumber', ['x']), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.equal(await err('eth_getBalance', [acc0.address, 'latest', 'extra']), { code: -32602, message: 'too many arguments, want at most 2' });
  assert.equal(await err('eth_newBlockFilter', [1]), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.is((await err('eth_subscribe', ['newHeads'])).code, -32601, 'over HTTP, subscriptions need a WebSocket');
});

live('eth_subscribe over WebSocket: newHeads and newPendingTransactions notify; unsubscribe stops them; ordinary calls work', async ({ node, ref }) => {
  const c = await wsClient(node.rpcUrl);
  try {
    assert.is((await c.call('eth_chainId')).result, '0x7a69');
    const heads = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    const pending = (await c.call('eth_subscribe', ['newPendingTransactions'])).result as string;
    const tx = transfer(acc0, { nonce: 1 });
    await rpcResult(node, 'eth_sendRawTransaction', [toHex(encodeTx(tx))]);
    const p = await c.next((m) => m.method === 'eth_subscription' && m.params.subscription === pending, 'pending notification');
    assert.is(p.params.result, hashOf(tx));
    const { result } = await importOk(node, makeBlock(ref, { txs: [tx] }));
    const h = await c.next((m) => m.method === 'eth_subscription' && m.params.subscription === heads, 'newHeads notification');
    assert.is(h.params.result.hash, result.block_hash);
    assert.is(h.params.result.number, '0x' + result.block_number.toString(16));
    assert.is(h.params.result.transactions, undefined, 'a header carries no transactions');
    assert.match(h.params.result.baseFeePerGas, /^0x[0-9a-f]+$/);
    assert.is((await c.call('eth_unsubscribe', [heads])).result, true);
    assert.is((await c.call('eth_unsubscribe', [heads])).result, false);
  } finally {
    c.ws.close();
  }
});

live('bad WebSocket input: bad JSON, unknown subscriptions, bad criteria and other paths get clear errors and the connection stays', async ({ node }) => {
  const c = await wsClient(node.rpcUrl);
  try {
    c.send('{bad');
    assert.equal(await c.next((m) => m.error?.code === -32700, 'parse error'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error: message is not valid JSON' } });
    assert.match((await c.call('eth_subscribe', ['everything'])).error.message, /unknown subscription "everything"/);
    assert.match((await c.call('eth_subscribe', ['logs', { fromBlock: '0x1' }])).error.message, /address and topics only/);
    assert.match((await c.call('eth_subscribe', ['logs', { address: '0x12' }])).error.message, /invalid logs criteria/);
    assert.match((await c.call('eth_subscribe', ['newHeads', 1, 2])).error.message, /too many arguments/);
    assert.match((await c.call('eth_unsubscribe', [])).error.message, /expected one subscription id/);
    const logs = (await c.call('eth_subscribe', ['logs', { address: acc0.address, topics: [null] }])).result;
    assert.match(logs, /^0x[0-9a-f]{32}$/);
    assert.is((await c.call('eth_blockNumber', ['x'])).error.code, -32602);
  } finally {
    c.ws.close();
  }
  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(node.rpcUrl.replace(/^http/, 'ws') + '/elsewhere');
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
  assert.is(refused, 404);
});

live.run();
