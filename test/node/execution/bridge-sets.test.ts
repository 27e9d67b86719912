/**
 * Set updates in a real execution node (LevelDB data directory, REST submission, engine import):
 * counterpart X grows from its 4 genesis validators to 8 and then loses the genesis 4 to exits.
 * Each update_set is judged against the set the chain holds for X (refused at admission with
 * BRIDGE_SET_UPDATE_INVALID otherwise, and failing in a block when included anyway), two updates
 * in one block chain through the set the first one stored, the counterparts view reports the held
 * set, and after a restart (nothing cached) a release signed by the validators that joined pays
 * while one signed by the exited genesis set is refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { type BidFields, BridgeOp, LockState, bidId, lockSlot, parseBridgeLog, setSlot, stateWord } from '../../../src/core/bridge/types.js';
import type { BridgeOperation } from '../../../src/core/bridge/ops.js';
import { bidSignatures, finalityProof, grownRegistry, setUpdate } from '../../helpers/bridge.js';
import { filled } from '../../helpers/assert.js';
import { account, drawnSlot, expectOk, get, importOk, makeBlock, post, startNode, submitOk, withTempDir } from './fixture.js';
import { slotStartMs } from '../../../src/core/genesis/genesis.js';
import { G, Harness, RECIPIENT, SELF, TIMEOUT, TOKEN, X, alice, refused, registerOp } from './bridge-harness.js';

const joiners = Array.from({ length: 4 }, (_, i) => keygenFromSeed(filled(32, 0x50 + i)));
const keys = [...X.keys, ...joiners];
const toEight = setUpdate(X, grownRegistry(X, joiners), { finalizedEpoch: 2, signers: [0, 1, 2], registrySize: 4 });
const exitTwo = setUpdate(X, grownRegistry(X, joiners, [0, 1]), { finalizedEpoch: 5, signers: [0, 1, 2, 3, 4, 5], keys, registrySize: 8 });
const exitFour = setUpdate(X, grownRegistry(X, joiners, [0, 1, 2, 3]), { finalizedEpoch: 8, signers: [4, 5, 6, 7], keys, registrySize: 8 });

/** A release of `amount` from X whose lock is finalised at epoch 9 by `signers` of X's 8-validator registry, BID-signed by them. */
function release(signers: number[], amount: bigint, seq: number): BridgeOperation {
  const fields: BidFields = { source: X.hash, destination: SELF, lockTx: filled(32, seq), sender: filled(20, 0x5e), recipient: Buffer.from(RECIPIENT.slice(2), 'hex'), amount, timeout: TIMEOUT };
  return { op: BridgeOp.Release, body: { bid: fields, proof: finalityProof(X, { storage: [[lockSlot(bidId(fields)), stateWord(LockState.Locked)]], slot: lockSlot(bidId(fields)), finalizedEpoch: 9, signers, keys, registrySize: 8 }), signatures: bidSignatures(X, fields, signers, keys) } };
}

test('update_set moves the set held for X; releases are then checked against it, before and after a restart', async () => {
  await withTempDir(async (dir) => {
    let h = await Harness.start(dir);
    try {
      const upd = (body: typeof toEight): BridgeOperation => ({ op: BridgeOp.UpdateSet, body });

      // Before X is registered, an update for it names no counterpart.
      await refused(h, h.op(alice, upd(toEight)), 'BRIDGE_UNKNOWN_COUNTERPART');
      h.unuse(alice);
      const reg = h.op(alice, registerOp(X.genesis));
      await submitOk(h.node, reg);
      assert.is((await h.block([reg]))[0].status, 1);
      assert.is(toHex(h.slot(setSlot(X.hash))), toHex(new Uint8Array(32)), 'the genesis set is held without a word');

      // Out of order: the exit change is over 8 bits, which the genesis set of 4 cannot weigh.
      await refused(h, h.op(alice, upd(exitTwo)), 'BRIDGE_SET_UPDATE_INVALID', /LIGHT_NONCANONICAL/);
      h.unuse(alice);
      // Signed by keys that are not the held set's.
      const forged = setUpdate(X, grownRegistry(X, joiners), { finalizedEpoch: 2, signers: [1, 2, 3], keys: [X.keys[0]!, ...joiners], registrySize: 4 });
      await refused(h, h.op(alice, upd(forged)), 'BRIDGE_SET_UPDATE_INVALID', /LIGHT_BAD_SIGNATURE/);
      h.unuse(alice);
      // A release the grown set signed fails safe while the genesis set is held.
      await refused(h, h.op(alice, release([4, 5, 6, 7, 2, 3].sort(), 2n * TOKEN, 1)), 'BRIDGE_PROOF_INVALID', /LIGHT_NONCANONICAL/);
      h.unuse(alice);

      const first = h.op(alice, upd(toEight));
      await submitOk(h.node, first);
      let receipts = await h.block([first]);
      assert.is(receipts[0].kind, 'bridge_update_set');
      assert.is(receipts[0].status, 1, receipts[0].error);
      const log = parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data);
      assert.ok(log?.event === 'SetUpdated' && log.epoch === 2 && toHex(log.genesisHash) === toHex(X.hash), JSON.stringify(log));
      assert.is(toHex(h.slot(setSlot(X.hash))), toHex(log.commitment));
      let cp = expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts[0];
      assert.equal([cp.validators, cp.active_stake, cp.set_epoch], [8, (8n * 32n * TOKEN).toString(), 2]);
      // The same update again is stale.
      await refused(h, h.op(alice, upd(toEight)), 'BRIDGE_SET_UPDATE_INVALID', /LIGHT_STALE_UPDATE/);
      h.unuse(alice);

      // Both exit changes in one block: the second is judged against the set the first moved to
      // (at admission, against the head, it would be refused: 4 of 8 is below 2/3).
      await refused(h, h.op(alice, upd(exitFour)), 'BRIDGE_SET_UPDATE_INVALID', /LIGHT_INSUFFICIENT_STAKE/);
      h.unuse(alice);
      receipts = await h.block([h.op(alice, upd(exitTwo)), h.op(alice, upd(exitFour))]);
      assert.equal(receipts.map((r) => [r.status, r.error ?? null]), [[1, null], [1, null]]);
      cp = expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts[0];
      assert.equal([cp.validators, cp.active_stake, cp.set_epoch], [8, (4n * 32n * TOKEN).toString(), 8]);

      // Restart: the held set is read back from the database by its commitment.
      await h.node.stop();
      const parent = h.parent;
      h = new Harness(await startNode({ dataDir: dir, genesis: G }));
      h.parent = parent;
      (h as unknown as { nonces: Map<string, bigint> }).nonces = new Map([[alice.address, BigInt((await account(h.node, alice.address)).nonce)]]);
      cp = expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts[0];
      assert.is(cp.set_epoch, 8);

      // The genesis validators exited: their votes and BID signatures no longer count.
      await refused(h, h.op(alice, release([0, 1, 2, 3], 2n * TOKEN, 2)), 'BRIDGE_PROOF_INVALID', /LIGHT_UNKNOWN_SIGNER/);
      h.unuse(alice);
      // Signed by 3 of the 4 that joined: paid once.
      const before = (await account(h.node, RECIPIENT)).balance;
      const paid = h.op(alice, release([4, 5, 6], 2n * TOKEN, 3));
      await submitOk(h.node, paid);
      receipts = await h.block([paid]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is((await account(h.node, RECIPIENT)).balance, before + 2n * TOKEN);
    } finally {
      await h.node.stop();
    }
  });
});

test('a reorganisation moves the held set with the branch: each branch\'s set slot names its own set', async () => {
  await withTempDir(async (dir) => {
    const h = await Harness.start(dir);
    try {
      const reg = h.op(alice, registerOp(X.genesis));
      await submitOk(h.node, reg);
      assert.is((await h.block([reg]))[0].status, 1);
      const fork = h.parent;
      // Branch A updates the set; branch B, a sibling block at the same slot, does not.
      const upd = h.op(alice, { op: BridgeOp.UpdateSet, body: toEight });
      await submitOk(h.node, upd);
      assert.is((await h.block([upd]))[0].status, 1);
      const a = h.parent;
      const { slot } = drawnSlot(G, fork.branch, 0);
      const b = await importOk(h.node, makeBlock(fork, { txs: [], slot, timestampMs: slotStartMs(G, slot), salt: 1 }));
      assert.is(b.result.canonical, false);
      const held = async () => expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts[0].set_epoch;
      assert.is(await held(), 2);
      expectOk(await post(h.node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: b.ref.hash }));
      assert.is(toHex(h.slot(setSlot(X.hash))), toHex(new Uint8Array(32)), 'branch B holds the genesis set');
      assert.is(await held(), 0);
      expectOk(await post(h.node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: a.hash }));
      // Back on A: the set it stored is read again by its commitment.
      assert.is(await held(), 2);
      await refused(h, h.op(alice, { op: BridgeOp.UpdateSet, body: toEight }), 'BRIDGE_SET_UPDATE_INVALID', /LIGHT_STALE_UPDATE/);
    } finally {
      await h.node.stop();
    }
  });
});

test.run();
