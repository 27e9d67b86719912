/**
 * The bridge's trust model in a real execution node (docs/bridge.md "Who may register",
 * "Liquidity"): the drain of issue 32 (an ordinary account registers a chain it generated, then
 * releases from it) is refused at admission and fails in a block with nothing stored; a
 * registration needs ≥ 2/3 of this chain's stake; a counterpart whose keys are stolen pays out at
 * most its own ledger, never another counterpart's, the escrow of open locks, nor the reserve;
 * two relays of one BID pay once; the ledgers survive a restart.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalJson } from '../../../src/core/genesis/genesis.js';
import { utf8 } from '../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../../src/core/constants.js';
import { type BidFields, BridgeOp, counterpartSlot, ledgerSlot, parseBridgeLog, wordAmount, wordState } from '../../../src/core/bridge/types.js';
import { type BridgeOperation } from '../../../src/core/bridge/ops.js';
import { testChain } from '../../helpers/bridge.js';
import { registrationTerms, signRegistration } from '../../../src/core/bridge/registration.js';
import { G, Harness, RECIPIENT, RESERVE, SELF, TOKEN, X, Y, alice, bob, lockOp, refused, registerOp, releaseFrom, settleProof } from './bridge-harness.js';
import { account, expectOk, get, startNode, submitOk, withTempDir } from './fixture.js';

/** A chain the attacker generated a moment ago: its genesis and its one validator's key are the attacker's. */
const Z = testChain('svc-evil', 9, 1);

/** A release from `chain` to this chain that its own validators sign (for Z: the attacker; for X: whoever stole its keys). */
const forgedRelease = (chain: typeof Z, amount: bigint, seq: number): BridgeOperation => releaseFrom(chain, amount, seq);

const balance = async (h: Harness, a: string) => (await account(h.node, a)).balance;
const ledger = (h: Harness, c: typeof X) => wordAmount(h.slot(ledgerSlot(c.hash)));

test('the drain of issue 32: an ordinary account cannot register a chain it made, so its forged release is refused; nothing is stored', async () => {
  await withTempDir(async (dir) => {
    const h = await Harness.start(dir);
    try {
      // Before any registration the release is refused as from an unknown chain.
      await refused(h, h.op(alice, forgedRelease(Z, RESERVE - TOKEN, 1)), 'BRIDGE_UNKNOWN_COUNTERPART');
      h.unuse(alice);
      // The attacker's registration: no signatures, or its own chain's validator signing as validator 0.
      const hostile: BridgeOperation = { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(Z.genesis)), allowance: RESERVE, signatures: [] } };
      await refused(h, h.op(alice, hostile), 'BRIDGE_REGISTRATION_UNAUTHORIZED', /needs signatures of validators holding ≥ 2\/3/);
      h.unuse(alice);
      // Z's own key signing the real terms, claiming to be this chain's validators 0 and 1.
      const terms = registrationTerms(SELF, Z.genesis, Z.hash, RESERVE);
      const bySelf: BridgeOperation = { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(Z.genesis)), allowance: RESERVE, signatures: [0, 1].map((i) => signRegistration(terms, i, Z.keys[0]!, G.chain_id)) } };
      await refused(h, h.op(alice, bySelf), 'BRIDGE_BAD_SIGNATURE', /validator 0/);
      h.unuse(alice);
      // A proposer includes it anyway: status 0, and neither the counterpart nor a ledger is stored.
      const receipts = await h.block([h.op(alice, hostile)]);
      assert.is(receipts[0].kind, 'bridge_register');
      assert.is(receipts[0].status, 0);
      assert.match(receipts[0].error, /^BRIDGE_REGISTRATION_UNAUTHORIZED: /);
      assert.is(wordState(h.slot(counterpartSlot(Z.hash))), 0);
      assert.is(ledger(h, Z), 0n);
      assert.equal(expectOk(await get(h.node, '/api/v1/bridge/counterparts')).counterparts, []);
      // So the release still finds no counterpart, and the bridge keeps its reserve.
      await refused(h, h.op(alice, forgedRelease(Z, RESERVE - TOKEN, 1)), 'BRIDGE_UNKNOWN_COUNTERPART');
      h.unuse(alice);
      assert.is(await balance(h, BRIDGE_ADDRESS), RESERVE);
    } finally {
      await h.node.stop();
    }
  });
});

test('a registration signed by validators below 2/3 of the stake is refused; with 2/3 it is accepted and funds the ledger from the reserve', async () => {
  await withTempDir(async (dir) => {
    const h = await Harness.start(dir);
    try {
      // The fixture's two validators hold equal stake: one is half, both are all of it.
      await refused(h, h.op(alice, registerOp(X.genesis, 10n * TOKEN, SELF, [0])), 'BRIDGE_REGISTRATION_UNAUTHORIZED', /1 signer\(s\)/);
      h.unuse(alice);
      await refused(h, h.op(alice, registerOp(X.genesis, 10n * TOKEN, SELF, [0, 0])), 'BRIDGE_DUPLICATE_SIGNER');
      h.unuse(alice);
      await refused(h, h.op(alice, registerOp(X.genesis, RESERVE + 1n)), 'BRIDGE_INSUFFICIENT_RESERVE');
      h.unuse(alice);
      const reg = h.op(alice, registerOp(X.genesis, 10n * TOKEN));
      await submitOk(h.node, reg);
      const receipts = await h.block([reg]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data)?.event, 'Registered');
      assert.is(ledger(h, X), 10n * TOKEN);
      // The same signed registration again is refused: it never moves a second allowance.
      await refused(h, h.op(bob, registerOp(X.genesis, 10n * TOKEN)), 'BRIDGE_ALREADY_REGISTERED');
      h.unuse(bob);
      const view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      assert.equal(view.reserve, { balance: RESERVE.toString(), unallocated: (RESERVE - 10n * TOKEN).toString() });
    } finally {
      await h.node.stop();
    }
  });
});

test('a registered counterpart whose keys are stolen pays out at most its ledger; other ledgers, open locks and the reserve are safe; two relays pay once; ledgers survive a restart', async () => {
  await withTempDir(async (dir) => {
    let h = await Harness.start(dir);
    try {
      let receipts = await h.block([h.op(alice, registerOp(X.genesis, 10n * TOKEN)), h.op(alice, registerOp(Y.genesis, 50n * TOKEN))]);
      assert.ok(receipts.every((r) => r.status === 1), JSON.stringify(receipts.map((r) => r.error)));
      // bob locks 3 tokens toward X: held in X's escrow, not its ledger.
      receipts = await h.block([h.op(bob, lockOp(X.hash), 3n * TOKEN)]);
      const lockFields = (parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data) as { fields: BidFields }).fields;
      const recipientBefore = await balance(h, RECIPIENT);

      // X's keys stolen: every release below is "valid" by X's validators. 6 tokens, then 5 (over the 4 left), then 4.
      await refused(h, h.op(alice, forgedRelease(X, 11n * TOKEN, 1)), 'BRIDGE_INSUFFICIENT_LIQUIDITY', /ledger of svc-bridge-x holds 10000000000000000000 wei/);
      h.unuse(alice);
      // Two relayers race with the same release: both admitted, one pays, the other fails in the block.
      const first = forgedRelease(X, 6n * TOKEN, 2);
      const a = h.op(alice, first);
      const b = h.op(bob, first);
      await Promise.all([submitOk(h.node, a), submitOk(h.node, b)]);
      receipts = await h.block([a, b]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.match(receipts[1].error, /^BRIDGE_ALREADY_RELEASED: /);
      assert.is(await balance(h, RECIPIENT), recipientBefore + 6n * TOKEN);
      await refused(h, h.op(alice, forgedRelease(X, 5n * TOKEN, 3)), 'BRIDGE_INSUFFICIENT_LIQUIDITY');
      h.unuse(alice);
      // Included anyway, it fails there and pays nothing.
      receipts = await h.block([h.op(alice, forgedRelease(X, 5n * TOKEN, 3)), h.op(bob, forgedRelease(X, 4n * TOKEN, 4))]);
      assert.match(receipts[0].error, /^BRIDGE_INSUFFICIENT_LIQUIDITY: /);
      assert.is(receipts[1].status, 1, receipts[1].error);
      assert.is(ledger(h, X), 0n);
      // Drained: not one wei more, though the bridge holds the reserve, Y's ledger and bob's escrow.
      await refused(h, h.op(alice, forgedRelease(X, 1n, 5)), 'BRIDGE_INSUFFICIENT_LIQUIDITY');
      h.unuse(alice);
      assert.is(await balance(h, RECIPIENT), recipientBefore + 10n * TOKEN);
      assert.is(await balance(h, BRIDGE_ADDRESS), RESERVE + 3n * TOKEN - 10n * TOKEN);
      assert.is(ledger(h, Y), 50n * TOKEN);
      // Y's own releases still pay from Y's ledger.
      receipts = await h.block([h.op(alice, forgedRelease(Y, 2n * TOKEN, 6))]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      // bob's lock toward X can still be refunded from its escrow.
      receipts = await h.block([h.op(alice, { op: BridgeOp.Refund, body: { bid: lockFields, proof: settleProof(lockFields, false) } })]);
      assert.is(receipts[0].status, 1, receipts[0].error);

      const view = expectOk(await get(h.node, '/api/v1/bridge/counterparts'));
      const byId = Object.fromEntries(view.counterparts.map((c: { chain_id: string; ledger: unknown }) => [c.chain_id, c.ledger]));
      assert.equal(byId, {
        'svc-bridge-x': { allowance: (10n * TOKEN).toString(), available: '0', escrow: '0' },
        'svc-bridge-y': { allowance: (50n * TOKEN).toString(), available: (48n * TOKEN).toString(), escrow: '0' },
      });
      assert.equal(view.reserve, { balance: (RESERVE - 12n * TOKEN).toString(), unallocated: (RESERVE - 60n * TOKEN).toString() });

      // A lock toward X that completes becomes X's liquidity here: then, and only up to it, X can release again.
      receipts = await h.block([h.op(bob, lockOp(X.hash), 2n * TOKEN)]);
      const f2 = (parseBridgeLog(receipts[0].logs[0].topics, receipts[0].logs[0].data) as { fields: BidFields }).fields;
      await refused(h, h.op(alice, forgedRelease(X, 1n, 7)), 'BRIDGE_INSUFFICIENT_LIQUIDITY');
      h.unuse(alice);
      receipts = await h.block([h.op(alice, { op: BridgeOp.Complete, body: { bid: f2, proof: settleProof(f2, true, Date.now()) } })]);
      assert.is(receipts[0].status, 1, receipts[0].error);
      assert.is(ledger(h, X), 2n * TOKEN);

      // Restart: the ledgers are state, read back as they were.
      await h.node.stop();
      const parent = h.parent;
      h = new Harness(await startNode({ dataDir: dir, genesis: G }));
      h.parent = parent;
      (h as unknown as { nonces: Map<string, bigint> }).nonces = new Map([[alice.address, BigInt((await account(h.node, alice.address)).nonce)]]);
      assert.is(ledger(h, X), 2n * TOKEN);
      assert.is(ledger(h, Y), 48n * TOKEN);
      await refused(h, h.op(alice, forgedRelease(X, 2n * TOKEN + 1n, 8)), 'BRIDGE_INSUFFICIENT_LIQUIDITY');
    } finally {
      await h.node.stop();
    }
  });
});

test.run();
