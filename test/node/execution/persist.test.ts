/**
 * A node on a LevelDB data directory: the faucet (claims, cooldown) and everything a restart must
 * keep: head, balances, finality, receipts, reward epochs, faucet cooldowns; start-up refusals
 * release the directory.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { SvcError } from '../../../src/core/errors.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { txFromJson } from '../../../src/core/types/transaction-json.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import {
  account,
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  get,
  hashOf,
  height,
  importOk,
  makeBlock,
  mempoolHashes,
  MIN_GAS_PRICE,
  post,
  startNode,
  submitOk,
  TOKEN,
  transfer,
  withTempDir,
} from './fixture.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
const val0 = keys.validators[0]!;
const faucet = keys.faucet;
const Z = '0x00000000000000000000000000000000000000e1';
const W = '0x00000000000000000000000000000000000000e2';
const U = '0x00000000000000000000000000000000000000e3';
const AMOUNT = (10n * TOKEN).toString();
const COOLDOWN = /^faucet cooldown: (0x[0-9a-f]{40}) can claim again after (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/;

/** Asserts a 429 cooldown for `address`, ending about 24 h after a claim made at `claimedAt` (ms). */
function expectCooldown(r: Awaited<ReturnType<typeof post>>, address: string, claimedAt: number): void {
  const msg = expectEnvelope(r, 429, 'FAUCET_COOLDOWN', COOLDOWN);
  const [, who, until] = COOLDOWN.exec(msg)!;
  assert.is(who, address);
  const end = Date.parse(until!);
  assert.ok(Math.abs(end - (claimedAt + genesis.config.faucet.cooldown_seconds * 1000)) < 60_000, `cooldown ends ${until}`);
}

async function expectStartFails(p: Promise<ExecutionNode>, code: string, message: string): Promise<void> {
  let node: ExecutionNode | undefined;
  try {
    node = await p;
  } catch (err) {
    assert.instance(err, SvcError);
    assert.is((err as SvcError).code, code);
    assert.is((err as SvcError).message, message);
    return;
  }
  await node.stop();
  assert.unreachable(`expected the start to fail with ${code}`);
}

const persist = suite('persistence: faucet and restart');

persist('faucet claim pools a transfer, a second claim is 429; after a restart head, balances, finality, receipts, credits and cooldowns are kept', async () => {
  await withTempDir(async (dir) => {
    let node = await startNode({ dataDir: dir });
    let claimedAt: number;
    let snapshot: Record<string, unknown>;
    try {
      claimedAt = Date.now();
      const claim = await post(node, '/api/v1/faucet/claim', { address: Z });
      assert.is(claim.status, 200, claim.text);
      assert.equal(Object.keys(claim.body).sort(), ['address', 'amount', 'success', 'tx_hash']);
      assert.is(claim.body.success, true);
      assert.is(claim.body.amount, AMOUNT);
      assert.is(claim.body.address, Z);
      const pooled = (await get(node, '/api/v1/execution/mempool')).body.transactions;
      assert.equal(
        pooled.map((t: any) => [t.hash, t.from, t.to, t.value, t.nonce, t.status]),
        [[claim.body.tx_hash, faucet.address, Z, AMOUNT, 0, 'ready']],
      );
      expectCooldown(await post(node, '/api/v1/faucet/claim', { address: Z }), Z, claimedAt);
      expectCooldown(await post(node, '/faucet', { address: Z.toUpperCase().replace('0X', '0x') }), Z, claimedAt);
      // The older endpoint, with its own shape.
      const old = await post(node, '/faucet', { address: W });
      assert.is(old.status, 200, old.text);
      assert.equal(Object.keys(old.body).sort(), ['address', 'amount', 'tx_hash']);
      assert.is(old.body.amount, AMOUNT);
      assert.equal(await mempoolHashes(node), [claim.body.tx_hash, old.body.tx_hash]);
      assert.is((await account(node, faucet.address)).pending_nonce, 2);

      const pending = expectOk(await get(node, '/api/v1/engine/getPendingTransactions')).transactions;
      const b1 = makeBlock(await genesisRef(node), { txs: pending.map((t: unknown) => txFromJson(t)) });
      const r1 = await importOk(node, b1);
      const t2 = transfer(acc0, { nonce: 0, to: Z, value: 5n });
      await submitOk(node, t2);
      const r2 = await importOk(node, makeBlock(r1.ref, { txs: [t2] }));
      expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: r2.ref.hash, finalized_block_hash: r1.ref.hash }));
      assert.is((await account(node, Z)).balance, 10n * TOKEN + 5n);
      assert.is((await account(node, W)).balance, 10n * TOKEN);
      snapshot = {
        health: (await get(node, '/health')).body,
        blocks: [expectOk(await get(node, '/api/v1/blocks/1')), expectOk(await get(node, '/api/v1/blocks/2'))],
        accounts: await Promise.all([Z, W, faucet.address, acc0.address, val0.address].map((a) => account(node, a))),
        proof: expectOk(await get(node, `/api/v1/accounts/${Z}/proof`)),
        claimTx: expectOk(await get(node, `/api/v1/transactions/${claim.body.tx_hash}`)),
        registry: expectOk(await get(node, '/api/v1/engine/registry')),
      };
      assert.is((snapshot.health as { latest_block: number }).latest_block, 2);
    } finally {
      await node.stop();
    }

    node = await startNode({ dataDir: dir });
    try {
      const health = (await get(node, '/health')).body;
      assert.equal(health, { ...(snapshot.health as object), mempool: 0 });
      assert.is(await height(node), 2);
      assert.equal([expectOk(await get(node, '/api/v1/blocks/1')), expectOk(await get(node, '/api/v1/blocks/2'))], snapshot.blocks);
      assert.equal(await Promise.all([Z, W, faucet.address, acc0.address, val0.address].map((a) => account(node, a))), snapshot.accounts);
      assert.equal(expectOk(await get(node, `/api/v1/accounts/${Z}/proof`)), snapshot.proof);
      const claimTx = expectOk(await get(node, `/api/v1/transactions/${(snapshot.claimTx as { hash: string }).hash}`));
      assert.equal(claimTx, snapshot.claimTx);
      assert.is(claimTx.state, 'Finalized');
      assert.equal(expectOk(await get(node, '/api/v1/engine/registry')), snapshot.registry);
      // Faucet cooldowns survive the restart.
      expectCooldown(await post(node, '/api/v1/faucet/claim', { address: Z }), Z, claimedAt!);
      expectCooldown(await post(node, '/api/v1/faucet/claim', { address: W }), W, claimedAt!);
      // A new address can claim; the faucet continues from its persisted nonce.
      const fresh = await post(node, '/api/v1/faucet/claim', { address: U });
      assert.is(fresh.status, 200, fresh.text);
      const entry = (await get(node, '/api/v1/execution/mempool')).body.transactions.find((t: { hash: string }) => t.hash === fresh.body.tx_hash);
      assert.is(entry.nonce, 2);
      // Finality survives too: the finalized block cannot be reverted after the restart.
      expectEnvelope(
        await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: node.chain.genesisHash }),
        409,
        'REORG_PAST_FINALIZED',
        'cannot reorganise below the finalized block 1',
      );
    } finally {
      await node.stop();
    }
  });
});

persist('a claim\'s transfer is journaled: it is back after a restart and holds the cooldown; evicted, it no longer does', async () => {
  await withTempDir(async (dir) => {
    let node = await startNode({ dataDir: dir });
    let claimed: string;
    try {
      const r = await post(node, '/api/v1/faucet/claim', { address: Z });
      assert.is(r.status, 200, r.text);
      claimed = r.body.tx_hash;
      expectEnvelope(await post(node, '/api/v1/faucet/claim', { address: Z }), 429, 'FAUCET_COOLDOWN', COOLDOWN);
    } finally {
      await node.stop();
    }
    // A one-slot pool: a better-paying transfer evicts the claim's, which leaves the journal too.
    node = await startNode({ dataDir: dir, poolCapacity: 1 });
    const rich = transfer(acc0, { nonce: 0, gasPrice: 2n * MIN_GAS_PRICE });
    try {
      assert.equal(await mempoolHashes(node), [claimed], 'the transfer was replayed from the journal');
      expectEnvelope(await post(node, '/api/v1/faucet/claim', { address: Z }), 429, 'FAUCET_COOLDOWN', COOLDOWN);
      await submitOk(node, rich);
      assert.equal(await mempoolHashes(node), [hashOf(rich)]);
    } finally {
      await node.stop();
    }
    node = await startNode({ dataDir: dir });
    try {
      assert.equal(await mempoolHashes(node), [hashOf(rich)], 'the evicted transfer left the journal');
      // Its transfer is neither pooled nor on chain: the claim no longer holds the address.
      const again = await post(node, '/api/v1/faucet/claim', { address: Z });
      assert.is(again.status, 200, again.text);
      assert.equal((await mempoolHashes(node)).sort(), [hashOf(rich), again.body.tx_hash].sort());
      expectEnvelope(await post(node, '/api/v1/faucet/claim', { address: Z }), 429, 'FAUCET_COOLDOWN', COOLDOWN);
    } finally {
      await node.stop();
    }
  });
});

persist('start-up refusals (another genesis, a foreign faucet key, a directory in use) release the directory', async () => {
  await withTempDir(async (dir) => {
    const first = await startNode({ dataDir: dir });
    const stored = first.chain.genesisHash;
    try {
      await expectStartFails(startNode({ dataDir: dir }), 'DB_OPEN_FAILED', `cannot open the database in ${dir}: IO error: lock ${dir}/chain/LOCK: already held by process (is another node using this data directory?)`);
    } finally {
      await first.stop();
    }
    const other = { ...genesis, network_id: genesis.network_id + 1 };
    await expectStartFails(startNode({ dataDir: dir, genesis: other }), 'GENESIS_MISMATCH', `data directory belongs to genesis ${stored}, not ${toHex(genesisHash(other))}`);
    await expectStartFails(
      startNode({ dataDir: dir, faucet: { key: acc0.mldsa, address: acc0.address } }),
      'FAUCET_KEY_MISMATCH',
      `faucet keystore address ${acc0.address} is not the genesis faucet ${faucet.address}`,
    );
    // The failed starts closed the database: the directory opens again.
    const again = await startNode({ dataDir: dir });
    try {
      assert.is(again.chain.genesisHash, stored);
    } finally {
      await again.stop();
    }
  });
});

persist.run();
