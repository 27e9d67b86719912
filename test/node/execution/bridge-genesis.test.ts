/**
 * Bridge counterparts listed in genesis (docs/bridge.md "Genesis counterparts") in a real
 * execution node: the genesis state holds their registration words (and its root is the one the
 * document alone gives), a release from one pays from its ledger only and is refused beyond it, a
 * later registration of it is BRIDGE_ALREADY_REGISTERED, the counterparts view says `source:
 * genesis`, and two nodes on the same genesis agree on every state root.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../../src/core/constants.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import { REGISTERED_WORD, counterpartSlot, ledgerSlot, wordAmount } from '../../../src/core/bridge/types.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { G, Harness, NOW, RECIPIENT, RESERVE, TOKEN, X, Y, alice, bob, incoming, refused, registerOp, releaseFrom } from './bridge-harness.js';
import { CHAIN_ID, NETWORK_ID, UNIT_SLOTS_PER_EPOCH, account, expectOk, get, importOk, startNode, submitOk, withTempDir } from './fixture.js';

const ALLOWANCE_X = 10n * TOKEN;
/** G with X listed as a genesis counterpart (the same keys, reserve and time). */
const GX = buildGenesis({
  validators: 2,
  accounts: 2,
  preset: 'devnet',
  chainId: CHAIN_ID,
  networkId: NETWORK_ID,
  genesisTime: G.genesis_time,
  mnemonic: DEV_MNEMONIC,
  bridgeReserve: RESERVE,
  timing: { slotsPerEpoch: UNIT_SLOTS_PER_EPOCH },
  bridgeCounterparts: [{ genesis: X.genesis, allowance: ALLOWANCE_X }],
}).genesis;
const SELF_X = genesisHash(GX);

test('the genesis lists X: the node starts with X registered and its ledger funded from the reserve; the state root is the one the document gives', async () => {
  assert.ok(G.genesis_time < NOW);
  // Listing a counterpart is part of the chain's identity and of its genesis state.
  assert.is.not(toHex(SELF_X), toHex(genesisHash(G)));
  assert.is.not(toHex(genesisStateRoot(GX)), toHex(genesisStateRoot(G)));
  await withTempDir(async (dir) => {
    const h = await Harness.start(dir, GX);
    try {
      assert.is(h.parent.stateRoot, toHex(genesisStateRoot(GX)));
      assert.equal(h.slot(counterpartSlot(X.hash)), REGISTERED_WORD);
      assert.is(wordAmount(h.slot(ledgerSlot(X.hash))), ALLOWANCE_X);
      const view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      assert.equal(view.self, { chain_id: GX.chain_id, genesis_hash: toHex(SELF_X) });
      assert.equal(view.reserve, { balance: RESERVE.toString(), unallocated: (RESERVE - ALLOWANCE_X).toString() });
      assert.is(view.counterparts.length, 1);
      assert.equal(view.counterparts[0], {
        chain_id: X.genesis.chain_id,
        genesis_hash: toHex(X.hash),
        validators: X.genesis.validators.length,
        active_stake: X.genesis.validators.reduce((s, v) => s + BigInt(v.stake), 0n).toString(),
        slots_per_epoch: X.genesis.config.slots_per_epoch,
        slot_seconds: X.genesis.config.slot_seconds,
        source: 'genesis',
        ledger: { allowance: ALLOWANCE_X.toString(), available: ALLOWANCE_X.toString(), escrow: '0' },
        set_epoch: 0,
      });
    } finally {
      await h.node.stop();
    }
  });
});

test('without a reserve, a lock-only genesis counterpart (allowance 0) still gives the bridge account its storage: the node and the document agree on the root', async () => {
  const lockOnly = buildGenesis({ validators: 2, accounts: 2, preset: 'devnet', chainId: CHAIN_ID, networkId: NETWORK_ID, genesisTime: G.genesis_time, mnemonic: DEV_MNEMONIC, timing: { slotsPerEpoch: UNIT_SLOTS_PER_EPOCH }, bridgeCounterparts: [{ genesis: X.genesis, allowance: 0n }] }).genesis;
  await withTempDir(async (dir) => {
    const h = await Harness.start(dir, lockOnly);
    try {
      assert.is(h.parent.stateRoot, toHex(genesisStateRoot(lockOnly)));
      assert.equal(h.slot(counterpartSlot(X.hash)), REGISTERED_WORD);
      assert.equal(expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts[0].ledger, { allowance: '0', available: '0', escrow: '0' });
    } finally {
      await h.node.stop();
    }
  });
});

test('a release from a genesis counterpart pays from its ledger only, one beyond it is refused, a registration of it is BRIDGE_ALREADY_REGISTERED, others stay unknown; a second node agrees on every root; a restart keeps it', async () => {
  await withTempDir(async (dir) => {
    let h = await Harness.start(`${dir}/a`, GX);
    const other = await Harness.start(`${dir}/b`, GX);
    // Every block goes to both nodes, which must agree on its post-state root.
    const block = async (txs: Parameters<Harness['block']>[0]) => {
      const receipts = await h.block(txs);
      const { result } = await importOk(other.node, h.last!);
      assert.is(result.state_root, h.parent.stateRoot);
      return receipts;
    };
    try {
      assert.is(other.parent.stateRoot, h.parent.stateRoot);
      const recipientBefore = (await account(h.node, RECIPIENT)).balance;
      const tx = h.op(alice, incoming(6n * TOKEN, { destination: SELF_X }).op);
      await submitOk(h.node, tx);
      let receipts = await block([tx]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is((await account(h.node, RECIPIENT)).balance, recipientBefore + 6n * TOKEN);
      assert.is(wordAmount(h.slot(ledgerSlot(X.hash))), ALLOWANCE_X - 6n * TOKEN);
      assert.is((await account(h.node, BRIDGE_ADDRESS)).balance, RESERVE - 6n * TOKEN);
      // 5 tokens exceed the 4 left in X's ledger, though the bridge holds 994.
      await refused(h, h.op(alice, incoming(5n * TOKEN, { destination: SELF_X }).op), 'BRIDGE_INSUFFICIENT_LIQUIDITY', /ledger of svc-bridge-x holds 4000000000000000000 wei/);
      h.unuse(alice);
      // Included anyway, it fails in the block and pays nothing.
      receipts = await block([h.op(alice, incoming(5n * TOKEN, { destination: SELF_X }).op)]);
      assert.match(receipts[0].error, /^BRIDGE_INSUFFICIENT_LIQUIDITY: /);
      // A signed registration of X would move a second allowance: refused, at admission and in a block.
      await refused(h, h.op(bob, registerOp(X.genesis, TOKEN, SELF_X)), 'BRIDGE_ALREADY_REGISTERED');
      h.unuse(bob);
      receipts = await block([h.op(bob, registerOp(X.genesis, TOKEN, SELF_X))]);
      assert.match(receipts[0].error, /^BRIDGE_ALREADY_REGISTERED: /);
      assert.is(wordAmount(h.slot(ledgerSlot(X.hash))), 4n * TOKEN);
      // Y is not in the genesis: a release from it finds no counterpart.
      await refused(h, h.op(alice, releaseFrom(Y, TOKEN, 1, SELF_X)), 'BRIDGE_UNKNOWN_COUNTERPART');
      h.unuse(alice);
      assert.is(expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts.length, 1);
      assert.is(wordAmount(h.slot(ledgerSlot(Y.hash))), 0n);

      // A restart reads X's document from the genesis again: its releases are still judged against its ledger.
      await h.node.stop();
      const parent = h.parent;
      h = new Harness(await startNode({ dataDir: `${dir}/a`, genesis: GX }), GX);
      h.parent = parent;
      (h as unknown as { nonces: Map<string, bigint> }).nonces = new Map([[alice.address, BigInt((await account(h.node, alice.address)).nonce)]]);
      assert.is(wordAmount(h.slot(ledgerSlot(X.hash))), 4n * TOKEN);
      receipts = await block([h.op(alice, incoming(4n * TOKEN, { destination: SELF_X }).op)]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      await refused(h, h.op(alice, incoming(1n, { destination: SELF_X }).op), 'BRIDGE_INSUFFICIENT_LIQUIDITY');
    } finally {
      await h.node.stop();
      await other.node.stop();
    }
  });
});

test.run();
