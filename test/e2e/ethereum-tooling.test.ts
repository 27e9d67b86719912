/**
 * Ethereum tooling against a real devnet (execution, beacon and validator processes): viem 2's
 * standard public reads and ethers 6's getTransaction / getBlock(n, true) parse what svc's
 * JSON-RPC answers, for a block that carries an ML-DSA-signed transfer.
 *
 * The "state reads" test covers estimateGas, call, getCode, getStorageAt, getProof and balances at
 * past blocks, before and after finality passes them (a devnet keeps every state: --history full).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { JsonRpcProvider, WebSocketProvider } from 'ethers';
import { createPublicClient, defineChain, http, InvalidParamsRpcError, type PublicClient, webSocket } from 'viem';
import { parseHex } from '../../src/core/codec/bytes.js';
import { type AccountProofWire, verifyProof } from '../../src/core/state/trie.js';
import { expectJsonOk, runCli } from '../helpers/cli.js';
import { type Devnet, getJson, waitFor, withDevnet } from '../helpers/network.js';

const TO = '0x00000000000000000000000000000000000000bb';
const DEVNET_PASSWORD = 'svc-devnet';
type Hex = `0x${string}`;

interface Ctx {
  net: Devnet;
  viem: PublicClient;
  from: Hex;
  hash: Hex;
  block: bigint;
}

/** Runs the suite's tests on one devnet with one included transfer. */
async function withTransfer(fn: (ctx: Ctx) => Promise<void>): Promise<void> {
  await withDevnet({ validators: 2 }, async (net) => {
    await net.startAll();
    const slotMs = net.slotMs;
    await net.waitHead('the first block', (h) => h.index >= 1, 20 * slotMs + 30_000);
    const sent = expectJsonOk(
      await runCli(['tx', 'send', '--from', join(net.net, 'accounts', 'account-0.json'), '--to', TO, '--value', '777', '--wait', '--timeout', String(Math.ceil((30 * slotMs) / 1000) + 60), '--execution-url', net.execUrl, '--json'], { ...net.env, SVC_PASSWORD: DEVNET_PASSWORD }),
    );
    const chain = defineChain({ id: net.genesis.network_id, name: 'svc devnet', nativeCurrency: { name: 'SVC', symbol: 'SVC', decimals: 18 }, rpcUrls: { default: { http: [net.rpcUrl] } } });
    const viem = createPublicClient({ chain, transport: http(net.rpcUrl) }) as PublicClient;
    await fn({ net, viem, from: sent.from as Hex, hash: sent.hash as Hex, block: BigInt(sent.block.number) });
  });
}

/** One devnet for the suite: started in `before`, held open until `after` releases it (withDevnet then kills and removes it). */
const test = suite<{ ctx: Ctx; release: () => void; done: Promise<void> }>('ethereum tooling: viem 2 and ethers 6');
test.before(async (s) => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  s.release = release;
  s.ctx = await new Promise<Ctx>((resolve, reject) => {
    s.done = withTransfer(async (ctx) => {
      resolve(ctx);
      await held;
    });
    s.done.catch(reject);
  });
});
test.after(async (s) => {
  s.release?.();
  await s.done;
});

test('viem standard reads and ethers getTransaction / getBlock(n, true)', async ({ ctx }) => {
  const { net, viem, from, hash, block } = ctx;
  // --- chain, blocks, transactions, receipts, fees ----------------------------------------
  assert.is(await viem.getChainId(), net.genesis.network_id);
  assert.ok((await viem.getBlockNumber()) >= block);
  const withTxs = await viem.getBlock({ blockNumber: block, includeTransactions: true });
  const tx = withTxs.transactions.find((t) => t.hash === hash);
  assert.ok(tx, 'the transfer is in its block');
  assert.is(tx!.from, from);
  assert.is(tx!.to, TO);
  assert.is(tx!.value, 777n);
  assert.is(tx!.r, `0x${'00'.repeat(32)}`, 'an ML-DSA transaction has r = 0: no ECDSA signature');
  const hashesOnly = await viem.getBlock({ blockNumber: block });
  assert.ok(hashesOnly.transactions.includes(hash));
  assert.ok(typeof (await viem.getBlock({ blockTag: 'finalized' })).number === 'bigint', 'the finalized tag resolves');
  assert.is((await viem.getTransaction({ hash })).hash, hash);
  const receipt = await viem.getTransactionReceipt({ hash });
  assert.is(receipt.status, 'success');
  assert.is(receipt.contractAddress, null);
  assert.equal(receipt.logs, []);
  assert.is(await viem.getGasPrice(), BigInt(net.genesis.config.min_gas_price));
  const fees = await viem.getFeeHistory({ blockCount: 4, blockTag: 'latest', rewardPercentiles: [50] });
  assert.is(fees.baseFeePerGas.length, fees.gasUsedRatio.length + 1);
  // viem has no action for eth_syncing; its raw request is what wallets use.
  const request = viem.request as unknown as (a: { method: string; params?: unknown[] }) => Promise<unknown>;
  assert.is(await request({ method: 'eth_syncing' }), false);
  assert.equal(await viem.getLogs({ fromBlock: 0n, toBlock: 'latest' }), [], 'no contract has emitted anything');
  assert.is(await viem.getBalance({ address: TO }), 777n);
  assert.is(await viem.getTransactionCount({ address: from }), 1);

  // --- ethers 6: transaction objects carry r, s, v (it refused them before) ---------------
  const ethers = new JsonRpcProvider(net.rpcUrl, undefined, { polling: false });
  try {
    const et = await ethers.getTransaction(hash);
    assert.ok(et, 'ethers finds the transaction');
    assert.is(et!.from.toLowerCase(), from);
    assert.is(et!.value, 777n);
    const eb = await ethers.getBlock(Number(block), true);
    assert.ok(eb!.prefetchedTransactions.some((t) => t.hash === hash));
    assert.is((await ethers.getTransactionReceipt(hash))!.status, 1);
  } finally {
    ethers.destroy();
  }
});

test('state reads at the head and at past blocks, also behind finality', async ({ ctx }) => {
  const { net, viem, from, block } = ctx;
  assert.is(await viem.getBalance({ address: TO, blockNumber: block - 1n }), 0n, 'balance before the transfer');
  assert.is(await viem.getTransactionCount({ address: from, blockTag: 'earliest' }), 0);
  assert.is(await viem.getCode({ address: TO }), undefined, 'an account without code');
  assert.is(await viem.getStorageAt({ address: TO, slot: '0x0' }), `0x${'00'.repeat(32)}`);
  assert.is(await viem.estimateGas({ account: from, to: TO, value: 1n }), 21_000n);
  assert.is((await viem.call({ account: from, to: TO, data: '0x' })).data, undefined);
  const proof = await viem.getProof({ address: TO, storageKeys: [`0x${'00'.repeat(32)}`], blockNumber: block });
  assert.is(proof.balance, 777n);
  assert.is(proof.storageProof.length, 1);
  await waitFor('the transfer Finalized', async () => ((await getJson(`${net.execUrl}/health`)).finalized_block >= Number(block) ? true : undefined), 60 * net.slotMs + 60_000);
  assert.is(await viem.getBalance({ address: TO, blockTag: 'finalized' }), 777n);
  // A devnet keeps every state (--history full): past blocks stay readable behind finality.
  assert.is(await viem.getBalance({ address: TO, blockNumber: block - 1n }), 0n, 'the balance before the transfer, behind finality');
  assert.is(await viem.getTransactionCount({ address: from, blockNumber: 0n }), 0, 'genesis state, behind finality');
});

test('dApp tooling: block and pending filters, history at block 0 through ethers, WebSocket subscriptions (viem and ethers), EIP-1559 fee reads, strict parameters, proofs as they are', async ({ ctx }) => {
  const { net, viem, block } = ctx;
  // A polled block filter sees the next block.
  const filter = await viem.createBlockFilter();
  const start = await viem.getBlockNumber();
  await net.waitHead('a block after the filter', (h) => h.index > Number(start), 20 * net.slotMs + 30_000);
  let hashes: readonly string[] = [];
  await waitFor('the block filter to report a block', async () => ((hashes = await viem.getFilterChanges({ filter })).length > 0 ? true : undefined), 20 * net.slotMs + 30_000);
  assert.match(hashes[0]!, /^0x[0-9a-f]{64}$/);
  assert.is(await viem.uninstallFilter({ filter }), true);

  // A pending-transaction filter sees a transfer as soon as the pool admits it.
  const pending = await viem.createPendingTransactionFilter();
  const queued = expectJsonOk(
    await runCli(['tx', 'send', '--from', join(net.net, 'accounts', 'account-0.json'), '--to', TO, '--value', '1', '--execution-url', net.execUrl, '--json'], { ...net.env, SVC_PASSWORD: DEVNET_PASSWORD }),
  );
  const seen: string[] = [];
  await waitFor('the pending filter to report the transfer', async () => {
    seen.push(...(await viem.getFilterChanges({ filter: pending })));
    return seen.includes(queued.hash as string) ? true : undefined;
  }, 20 * net.slotMs + 30_000);
  assert.is(await viem.uninstallFilter({ filter: pending }), true);

  // ethers reads history at block 0 too (a devnet keeps every state).
  const history = new JsonRpcProvider(net.rpcUrl, undefined, { polling: false });
  try {
    assert.is(await history.getBalance(TO, 0), 0n);
    assert.is(await history.getTransactionCount(ctx.from, 0), 0);
  } finally {
    history.destroy();
  }

  // viem's webSocket transport and ethers' WebSocketProvider, unmodified, on the JSON-RPC port.
  const wsUrl = net.rpcUrl.replace(/^http/, 'ws');
  const wsViem = createPublicClient({ transport: webSocket(wsUrl) });
  try {
    assert.ok((await wsViem.getBlockNumber()) >= block);
    const head = await new Promise<bigint>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no newHeads over viem webSocket')), 20 * net.slotMs + 30_000);
      const unwatch = wsViem.watchBlockNumber({
        emitOnBegin: false,
        onBlockNumber: (n) => {
          clearTimeout(timer);
          unwatch();
          resolve(n);
        },
        onError: reject,
      });
    });
    assert.ok(head > block);
  } finally {
    await wsViem.transport.getRpcClient().then((c) => c.close());
  }
  const ethersWs = new WebSocketProvider(wsUrl);
  try {
    assert.ok((await ethersWs.getBlockNumber()) >= Number(block));
    const n = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no block event over ethers WebSocketProvider')), 20 * net.slotMs + 30_000);
      void ethersWs.once('block', (b: number) => {
        clearTimeout(timer);
        resolve(b);
      });
    });
    assert.ok(n > Number(block));
  } finally {
    await ethersWs.destroy();
  }

  // EIP-1559 reads: the base fee is the chain's minimum gas price and the tip needed is zero.
  const floor = BigInt(net.genesis.config.min_gas_price);
  assert.is((await viem.getBlock()).baseFeePerGas, floor);
  const fees = await viem.estimateFeesPerGas();
  assert.ok(fees.maxFeePerGas >= floor, `maxFeePerGas ${fees.maxFeePerGas} covers the floor ${floor}`);
  assert.is(fees.maxPriorityFeePerGas, 0n);
  const ethers = new JsonRpcProvider(net.rpcUrl, undefined, { polling: false });
  try {
    const data = await ethers.getFeeData();
    assert.is(data.gasPrice, floor);
    assert.ok(data.maxFeePerGas !== null && data.maxFeePerGas >= floor);
  } finally {
    ethers.destroy();
  }

  // Strict parameter counts, as geth: viem surfaces -32602 as InvalidParamsRpcError.
  const request = viem.request as unknown as (a: { method: string; params?: unknown[] }) => Promise<unknown>;
  const refused = await request({ method: 'eth_getBalance', params: [TO, 'latest', 'extra'] }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(refused, InvalidParamsRpcError);
  const refusedBlockNumber = await request({ method: 'eth_blockNumber', params: ['x'] }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(refusedBlockNumber, InvalidParamsRpcError);

  // eth_getProof verifies as it is answered, at genesis too (a devnet keeps every state).
  for (const at of [0n, block]) {
    const proof = (await request({ method: 'eth_getProof', params: [TO, [`0x${'00'.repeat(32)}`], `0x${at.toString(16)}`] })) as AccountProofWire;
    const header = await viem.getBlock({ blockNumber: at });
    assert.ok(verifyProof(parseHex(header.stateRoot, 'stateRoot', 32), proof), `the proof at block ${at} verifies against its state root`);
  }
});

test.run();
