/**
 * Bridge operations in a real execution node (LevelDB data directory, engine API, REST and
 * JSON-RPC submission): a genesis with a bridge reserve; a counterpart X whose genesis (and
 * validator keys) the test holds is registered; a lock moves value into the bridge; a release
 * from X carries a finality proof (X's bridge state trie, a header naming its root, finality
 * votes and BID signatures by X's validators) and pays the recipient once; refund and completion
 * settle locks against proofs about X's release slot. Each doomed operation is refused at
 * admission with its code, and fails in a block (status 0, gas charged, nothing else moved) when
 * a proposer includes it anyway; a replay after a restart is refused too.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../../src/core/constants.js';
import { type Genesis, genesisHash } from '../../../src/core/genesis/genesis.js';
import { type BlockHeader, blockHash } from '../../../src/core/types/block.js';
import { signAttestation } from '../../../src/core/types/attestation.js';
import { participationBits } from '../../../src/core/light/verify.js';
import type { FinalityUpdate } from '../../../src/core/light/types.js';
import { type StandardTx, encodeTx } from '../../../src/core/types/transaction.js';
import { type BidFields, BridgeOp, LockState, RELEASED_WORD, type ReleaseBody, bidId, bridgeAccountProofFromWire, signBid, counterpartSlot, lockSlot, parseBridgeLog, releaseSlot, wordState } from '../../../src/core/bridge/types.js';
import { type BridgeOperation, encodeBridgeOp } from '../../../src/core/bridge/ops.js';
import { bridgeGas } from '../../../src/core/bridge/verify.js';
import { verdictOfRefusal } from '../../../src/node/execution/p2p.js';
import { bidSignatures } from '../../helpers/bridge.js';
import {
  CHAIN_ID,
  account,
  expectOk,
  get,
  hashOf,
  rpc,
  startNode,
  submitOk,
  withTempDir,
} from './fixture.js';

import { ALLOWANCE, G, Harness, NOW, RECIPIENT, RESERVE, SELF, TIMEOUT, TOKEN, X, Y, alice, bob, incoming, keys, lockOp, refused, registerOp, settleProof } from './bridge-harness.js';

test('bridge operations: register, lock, release once, refund, complete; refused at admission, failing in blocks; a replay after a restart is refused', async () => {
  await withTempDir(async (dir) => {
    let h = await Harness.start(dir);
    try {
      // Genesis allocated the reserve to the bridge account.
      assert.is((await account(h.node, BRIDGE_ADDRESS)).balance, RESERVE);
      let view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      assert.equal(view, { self: { chain_id: CHAIN_ID, genesis_hash: toHex(SELF) }, reserve: { balance: RESERVE.toString(), unallocated: RESERVE.toString() }, counterparts: [] });

      // Bad input at admission, for each op: MALFORMED_INPUT naming bridge.*.
      const bad: Array<[Uint8Array, RegExp]> = [
        [new Uint8Array(0), /bridge\.op/],
        [Uint8Array.of(9), /bridge\.op/],
        [Uint8Array.of(BridgeOp.Register), /bridge\.register/],
        [encodeBridgeOp(lockOp(X.hash)).subarray(0, 20), /bridge\.lock/],
        [encodeBridgeOp(incoming(TOKEN).op).subarray(0, 300), /bridge\.release/],
        [Uint8Array.of(BridgeOp.Refund, 1, 2, 3), /bridge\.refund/],
        [Uint8Array.of(BridgeOp.Complete, 1, 2, 3), /bridge\.complete/],
      ];
      for (const [data, msg] of bad) {
        await refused(h, h.op(alice, data), 'MALFORMED_INPUT', msg);
        h.unuse(alice);
      }
      // A register whose document is not a genesis, or is this chain's own.
      await refused(h, h.op(alice, { op: BridgeOp.Register, body: { genesisJson: utf8('{"chain_id": 5}'), allowance: 0n, signatures: [] } }), 'BRIDGE_COUNTERPART_INVALID', /genesis\.chain_id/);
      h.unuse(alice);
      await refused(h, h.op(alice, registerOp(G)), 'BRIDGE_COUNTERPART_INVALID', /own genesis/);
      h.unuse(alice);
      // A lock to a chain nobody registered; value on a register; gas below bridgeGas.
      await refused(h, h.op(alice, lockOp(X.hash), 5n * TOKEN), 'BRIDGE_UNKNOWN_COUNTERPART');
      h.unuse(alice);
      await refused(h, h.op(alice, registerOp(X.genesis), 1n), 'BRIDGE_MALFORMED', /carries no value/);
      h.unuse(alice);
      const regData = encodeBridgeOp(registerOp(X.genesis));
      await refused(h, h.op(alice, regData, 0n, bridgeGas(regData) - 1n), 'GAS_TOO_LOW');
      h.unuse(alice);
      // JSON-RPC submission refuses with the same code.
      const rpcTx = h.op(alice, lockOp(X.hash), TOKEN);
      const r = await rpc(h.node, 'eth_sendRawTransaction', [toHex(encodeTx(rpcTx))]);
      assert.is(r.error?.data?.code, 'BRIDGE_UNKNOWN_COUNTERPART', JSON.stringify(r));
      h.unuse(alice);

      // Register X (and Y, whose keys sign forgeries below).
      const reg = h.op(alice, registerOp(X.genesis));
      const regY = h.op(alice, registerOp(Y.genesis));
      await submitOk(h.node, reg);
      await submitOk(h.node, regY);
      let receipts = await h.block([reg, regY]);
      assert.is(receipts[0].kind, 'bridge_register');
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(receipts[0].gasUsed, Number(bridgeGas(encodeBridgeOp(registerOp(X.genesis)))));
      const regLog = parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data);
      assert.ok(regLog?.event === 'Registered' && regLog.chainId === 'svc-bridge-x' && toHex(regLog.genesisHash) === toHex(X.hash));
      assert.is(receipts[0].logs[0].address, BRIDGE_ADDRESS);
      assert.is(wordState(h.slot(counterpartSlot(X.hash))), 1);
      view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      assert.equal(view.counterparts.map((c: { chain_id: string }) => c.chain_id), ['svc-bridge-x', 'svc-bridge-y']);
      assert.equal(view.counterparts[0], {
        chain_id: 'svc-bridge-x',
        genesis_hash: toHex(X.hash),
        validators: 4,
        active_stake: (4n * 32n * TOKEN).toString(),
        slots_per_epoch: X.genesis.config.slots_per_epoch,
        slot_seconds: X.genesis.config.slot_seconds,
        source: 'registration',
        ledger: { allowance: ALLOWANCE.toString(), available: ALLOWANCE.toString(), escrow: '0' },
        set_epoch: 0,
      });
      assert.equal(view.reserve, { balance: RESERVE.toString(), unallocated: (RESERVE - 2n * ALLOWANCE).toString() });

      // Lock 5 tokens from bob to X.
      const bobBefore = (await account(h.node, bob.address)).balance;
      await refused(h, h.op(bob, lockOp(X.hash, NOW - 1), 5n * TOKEN), 'BRIDGE_BAD_LOCK', /not after/);
      h.unuse(bob);
      const lock = h.op(bob, lockOp(X.hash), 5n * TOKEN);
      await submitOk(h.node, lock);
      receipts = await h.block([lock]);
      assert.is(receipts[0].kind, 'bridge_lock');
      assert.is(receipts[0].status, 1, receipts[0].error);
      const locked = parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data);
      assert.ok(locked && locked.event === 'Locked');
      const lockFields = (locked as { fields: BidFields }).fields;
      assert.is(toHex(lockFields.source), toHex(SELF));
      assert.is(toHex(lockFields.destination), toHex(X.hash));
      assert.is(toHex(lockFields.lockTx), hashOf(lock));
      assert.is(toHex(lockFields.sender), bob.address);
      assert.is(toHex(lockFields.recipient), RECIPIENT);
      assert.is(lockFields.amount, 5n * TOKEN);
      assert.is(lockFields.timeout, TIMEOUT);
      const lockBid = bidId(lockFields);
      assert.is(wordState(h.slot(lockSlot(lockBid))), LockState.Locked);
      assert.is((await account(h.node, bob.address)).balance, bobBefore - 5n * TOKEN - BigInt(receipts[0].fee));
      assert.is((await account(h.node, BRIDGE_ADDRESS)).balance, RESERVE + 5n * TOKEN);

      // Release from X: 7 tokens to RECIPIENT.
      const rel = incoming(7n * TOKEN);
      // Attacks, refused at admission: a forged vote, another destination, BID signatures and votes from Y's set.
      const forged = incoming(7n * TOKEN);
      if (forged.op.op !== BridgeOp.Release) throw new Error('unreachable');
      const sig = forged.op.body.proof.update.attestations[1]!.signature.slice();
      sig[0]! ^= 1;
      forged.op.body.proof.update.attestations[1] = { ...forged.op.body.proof.update.attestations[1]!, signature: sig };
      await refused(h, h.op(alice, forged.op), 'BRIDGE_PROOF_INVALID', /LIGHT_BAD_SIGNATURE/);
      h.unuse(alice);
      await refused(h, h.op(alice, incoming(7n * TOKEN, { destination: Y.hash }).op), 'BRIDGE_WRONG_DESTINATION');
      h.unuse(alice);
      await refused(h, h.op(alice, incoming(7n * TOKEN, { signer: Y }).op), 'BRIDGE_PROOF_INVALID', /LIGHT_BAD_SIGNATURE/);
      h.unuse(alice);
      const badSigs = incoming(7n * TOKEN);
      if (badSigs.op.op !== BridgeOp.Release) throw new Error('unreachable');
      badSigs.op.body.signatures = bidSignatures(X, badSigs.fields, [0, 1, 2], Y.keys);
      await refused(h, h.op(alice, badSigs.op), 'BRIDGE_BAD_SIGNATURE');
      h.unuse(alice);
      // A release of more than X's ledger holds, though the bridge holds far more.
      await refused(h, h.op(alice, incoming(ALLOWANCE + 1n).op), 'BRIDGE_INSUFFICIENT_LIQUIDITY', /the ledger of svc-bridge-x/);
      h.unuse(alice);

      const recipientBefore = (await account(h.node, RECIPIENT)).balance;
      const release = h.op(alice, rel.op);
      await submitOk(h.node, release);
      // The same release again in the same block fails there: paid once.
      const again = h.op(bob, rel.op);
      receipts = await h.block([release, again]);
      assert.is(receipts[0].kind, 'bridge_release');
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(receipts[0].gasUsed, Number(bridgeGas(encodeBridgeOp(rel.op))));
      assert.ok(receipts[0].gasUsed > 21_000 + 6 * 50_000);
      const released = parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data);
      assert.ok(released?.event === 'Released' && toHex(released.bid) === toHex(bidId(rel.fields)));
      assert.is(receipts[1].status, 0);
      assert.is(receipts[1].kind, 'bridge_release');
      assert.match(receipts[1].error, /^BRIDGE_ALREADY_RELEASED: /);
      assert.equal(receipts[1].logs, []);
      assert.is((await account(h.node, RECIPIENT)).balance, recipientBefore + 7n * TOKEN);
      assert.is((await account(h.node, BRIDGE_ADDRESS)).balance, RESERVE + 5n * TOKEN - 7n * TOKEN);
      assert.is(toHex(h.slot(releaseSlot(bidId(rel.fields)))), toHex(RELEASED_WORD));
      // A third attempt is refused at admission.
      await refused(h, h.op(alice, rel.op), 'BRIDGE_ALREADY_RELEASED');
      h.unuse(alice);

      // Refund of bob's lock: refused before X finalised past the timeout, and when X released it; then refunded.
      await refused(h, h.op(alice, { op: BridgeOp.Refund, body: { bid: lockFields, proof: settleProof(lockFields, false, TIMEOUT * 1000 - 1) } }), 'BRIDGE_TIMEOUT_NOT_REACHED');
      h.unuse(alice);
      await refused(h, h.op(alice, { op: BridgeOp.Refund, body: { bid: lockFields, proof: settleProof(lockFields, true) } }), 'BRIDGE_RELEASED_BEFORE_TIMEOUT');
      h.unuse(alice);
      await refused(h, h.op(alice, { op: BridgeOp.Complete, body: { bid: lockFields, proof: settleProof(lockFields, false) } }), 'BRIDGE_RELEASE_NOT_PROVEN');
      h.unuse(alice);
      const bobBeforeRefund = (await account(h.node, bob.address)).balance;
      const refund = h.op(alice, { op: BridgeOp.Refund, body: { bid: lockFields, proof: settleProof(lockFields, false) } });
      await submitOk(h.node, refund);
      // A completion of the same BID, included anyway after the refund, fails: never both.
      const late = h.op(alice, { op: BridgeOp.Complete, body: { bid: lockFields, proof: settleProof(lockFields, true) } });
      receipts = await h.block([refund, late]);
      assert.is(receipts[0].kind, 'bridge_refund');
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data)?.event, 'Refunded');
      assert.is(receipts[1].kind, 'bridge_complete');
      assert.match(receipts[1].error, /^BRIDGE_NOT_LOCKED: .*already refunded/);
      assert.is((await account(h.node, bob.address)).balance, bobBeforeRefund + 5n * TOKEN);
      assert.is(wordState(h.slot(lockSlot(lockBid))), LockState.Refunded);

      // Completion: a second lock, completed against X's release.
      const lock2 = h.op(bob, lockOp(X.hash), 2n * TOKEN);
      await submitOk(h.node, lock2);
      receipts = await h.block([lock2]);
      const f2 = (parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data) as { fields: BidFields }).fields;
      const bridgeBefore = (await account(h.node, BRIDGE_ADDRESS)).balance;
      const complete = h.op(alice, { op: BridgeOp.Complete, body: { bid: f2, proof: settleProof(f2, true, NOW * 1000) } });
      await submitOk(h.node, complete);
      receipts = await h.block([complete]);
      assert.is(receipts[0].kind, 'bridge_complete');
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(wordState(h.slot(lockSlot(bidId(f2)))), LockState.Completed);
      assert.is((await account(h.node, BRIDGE_ADDRESS)).balance, bridgeBefore);
      await refused(h, h.op(alice, { op: BridgeOp.Refund, body: { bid: f2, proof: settleProof(f2, false) } }), 'BRIDGE_NOT_LOCKED', /already completed/);
      h.unuse(alice);

      const metrics = (await get(h.node, '/metrics')).text;
      for (const [op, result, n] of [['register', 'ok', 2], ['lock', 'ok', 2], ['release', 'ok', 1], ['release', 'failed', 1], ['refund', 'ok', 1], ['complete', 'ok', 1], ['complete', 'failed', 1], ['malformed', 'failed', 0]] as const) {
        assert.ok(metrics.includes(`service_execution_bridge_operations_total{op="${op}",result="${result}"} ${n}\n`), `${op}/${result} = ${n} in\n${metrics.split('\n').filter((l) => l.includes('bridge')).join('\n')}`);
      }
      assert.ok(metrics.includes('service_execution_transactions_rejected_total{reason="BRIDGE_ALREADY_RELEASED"} 1\n'));

      // Restart: the release stays consumed, the counterpart registered, and its document readable.
      await h.node.stop();
      const parent = h.parent;
      h = new Harness(await startNode({ dataDir: dir, genesis: G }));
      h.parent = parent;
      (h as unknown as { nonces: Map<string, bigint> }).nonces = new Map([[alice.address, BigInt((await account(h.node, alice.address)).nonce)], [bob.address, BigInt((await account(h.node, bob.address)).nonce)]]);
      await refused(h, h.op(alice, rel.op), 'BRIDGE_ALREADY_RELEASED');
      h.unuse(alice);
      view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      assert.is(view.counterparts.length, 2);
      // The document is read back from the database (nothing cached after the restart): a lock to X is admitted and applied.
      const lock3 = h.op(bob, lockOp(X.hash), TOKEN);
      await submitOk(h.node, lock3);
      receipts = await h.block([lock3]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      // A release whose BID signatures are a minority fails in a block too, with nothing paid.
      const few = incoming(3n * TOKEN);
      if (few.op.op !== BridgeOp.Release) throw new Error('unreachable');
      few.op.body.signatures = few.op.body.signatures.slice(0, 2);
      const recipientMid = (await account(h.node, RECIPIENT)).balance;
      receipts = await h.block([h.op(alice, few.op)]);
      assert.match(receipts[0].error, /^BRIDGE_INSUFFICIENT_SIGNATURES: /);
      assert.is((await account(h.node, RECIPIENT)).balance, recipientMid);
    } finally {
      await h.node.stop();
    }
  });
});

test('gossip: a bridge payload that does not decode is rejected (the bytes prove it), a doomed operation ignored (it depends on state)', async () => {
  const h = new Harness(await startNode({ genesis: G }), G);
  try {
    const verdict = async (tx: StandardTx) => {
      try {
        await h.node.admission.submit(tx, 'p2p');
      } catch (err) {
        return verdictOfRefusal(err);
      }
      assert.unreachable('admitted');
    };
    assert.equal(await verdict(h.op(alice, encodeBridgeOp(lockOp(X.hash)).subarray(0, 40))), { verdict: 'reject', reason: 'MALFORMED_INPUT' });
    h.unuse(alice);
    assert.equal(await verdict(h.op(alice, lockOp(X.hash), TOKEN)), { verdict: 'ignore', reason: 'BRIDGE_UNKNOWN_COUNTERPART' });
    h.unuse(alice);
    assert.equal(await verdict(h.op(alice, incoming(TOKEN).op)), { verdict: 'ignore', reason: 'BRIDGE_UNKNOWN_COUNTERPART' });
  } finally {
    await h.node.stop();
  }
});

/**
 * A finality update finalising `header` as its chain's validators (the fixture's two, both
 * signing: 2/3 of two equal stakes needs both) would sign it, under `chainId`.
 */
function finalizing(header: BlockHeader, g: Genesis): FinalityUpdate {
  const spe = g.config.slots_per_epoch;
  const epoch = Math.floor(slotOfMs(g, header.timestampMs) / spe) + 1;
  const root = blockHash(header);
  const target = { epoch: epoch + 1, root: new Uint8Array(32).fill(0xab) };
  const data = { slot: (epoch + 1) * spe, beaconBlockRoot: target.root, source: { epoch, root }, target };
  const attestations = keys.validators.map((k, i) => signAttestation(i, data, k.mldsa, g.chain_id));
  return { finalized: { epoch, root }, target, header, attestations, participation: participationBits([0, 1], 2) };
}

const slotOfMs = (g: Genesis, ms: number) => Math.floor((ms - g.genesis_time * 1000) / (g.config.slot_seconds * 1000));

test('two execution nodes: a lock on A, proven from A\'s own state trie, is released on B; the release, proven from B\'s, completes the lock on A', async () => {
  // Two chains of the same validators and chain id, told apart by genesis (their hashes differ).
  const GA = G;
  const GB: Genesis = { ...G, genesis_time: G.genesis_time + 2 };
  const hashA = genesisHash(GA);
  const hashB = genesisHash(GB);
  await withTempDir(async (dirA) => {
    await withTempDir(async (dirB) => {
      const a = await Harness.start(dirA, GA);
      let b: Harness | undefined;
      try {
        b = await Harness.start(dirB, GB);
        let receipts = await a.block([a.op(alice, registerOp(GB, ALLOWANCE, hashA))]);
        assert.is(receipts[0].status, 1, receipts[0].error);
        receipts = await b.block([b.op(alice, registerOp(GA, ALLOWANCE, hashB))]);
        assert.is(receipts[0].status, 1, receipts[0].error);

        // Lock 4 tokens on A for B.
        const lock = a.op(bob, lockOp(hashB, TIMEOUT, RECIPIENT), 4n * TOKEN);
        await submitOk(a.node, lock);
        receipts = await a.block([lock]);
        const lockBlock = a.parent.hash;
        const fields = (parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data) as { fields: BidFields }).fields;
        const bid = bidId(fields);
        assert.is(toHex(fields.source), toHex(hashA));
        // The next block's header names the lock block's post-state: that header is the one finalised.
        await a.block([]);
        const headerA = a.last!.header;
        assert.is(toHex(headerA.stateRoot), (await a.node.chain.record(lockBlock))!.state_root);
        // The proof A's node serves (what GET /api/v1/light/proof relays) of the lock slot in that state.
        const wireA = expectOk(await get(a.node, `/api/v1/accounts/${BRIDGE_ADDRESS}/proof?block=${lockBlock}&keys=${toHex(lockSlot(bid))}`));
        const release: BridgeOperation = {
          op: BridgeOp.Release,
          body: {
            bid: fields,
            proof: { update: finalizing(headerA, GA), account: bridgeAccountProofFromWire(wireA, lockSlot(bid)) },
            signatures: keys.validators.map((k, i) => signBid(bid, i, k.mldsa, GA.chain_id)),
          },
        };
        // A header that is not the finalised one (the lock block's own, unfinalised) is refused.
        const early: BridgeOperation = { ...release, body: { ...(release as { body: ReleaseBody }).body, proof: { ...(release as { body: ReleaseBody }).body.proof, update: { ...finalizing(headerA, GA), header: (await a.node.chain.blocks.block(lockBlock))!.header } } } } as BridgeOperation;
        await refused(b, b.op(alice, early), 'BRIDGE_PROOF_INVALID', /LIGHT_HEADER_MISMATCH/);
        b.unuse(alice);
        const before = (await account(b.node, RECIPIENT)).balance;
        const relTx = b.op(alice, release);
        await submitOk(b.node, relTx);
        receipts = await b.block([relTx]);
        assert.is(receipts[0].status, 1, receipts[0].error);
        assert.is((await account(b.node, RECIPIENT)).balance, before + 4n * TOKEN);
        // The same BID cannot be released twice, nor released on A (its own source).
        await refused(b, b.op(alice, release), 'BRIDGE_ALREADY_RELEASED');
        b.unuse(alice);
        await refused(a, a.op(alice, release), 'BRIDGE_WRONG_DESTINATION');
        a.unuse(alice);

        // Complete on A against B's state: the release block's post-state, named by B's next header.
        const releaseBlock = b.parent.hash;
        await b.block([]);
        const wireB = expectOk(await get(b.node, `/api/v1/accounts/${BRIDGE_ADDRESS}/proof?block=${releaseBlock}&keys=${toHex(releaseSlot(bid))}`));
        const settle = { bid: fields, proof: { update: finalizing(b.last!.header, GB), account: bridgeAccountProofFromWire(wireB, releaseSlot(bid)) } };
        // B's finalised header is before the timeout: no refund.
        await refused(a, a.op(alice, { op: BridgeOp.Refund, body: settle }), 'BRIDGE_TIMEOUT_NOT_REACHED');
        a.unuse(alice);
        const complete = a.op(alice, { op: BridgeOp.Complete, body: settle });
        await submitOk(a.node, complete);
        receipts = await a.block([complete]);
        assert.is(receipts[0].status, 1, receipts[0].error);
        assert.is(wordState(a.slot(lockSlot(bid))), LockState.Completed);
        // Settled once: completing or refunding it again is refused.
        await refused(a, a.op(alice, { op: BridgeOp.Complete, body: settle }), 'BRIDGE_NOT_LOCKED', /already completed/);
        a.unuse(alice);
      } finally {
        await a.node.stop();
        await b?.node.stop();
      }
    });
  });
});

test.run();
