/**
 * End to end: two devnets bridged on one machine (A `svc-a`, B `svc-b --counterpart A`, real
 * processes), driven through `svc bridge …` and the relayer as users run them. One file and one
 * pair of devnets for every case, to keep CI time down (docs/bridge.md, issue "What it must show"):
 * - a lock on A is released on B by the relayer and completed on A, balances moved;
 * - `bridge_bid_registered` is seen on A's /ws and the validators' signatures reach 2/3 of the
 *   stake within one slot of it (plus a margin for a loaded 2-core machine, SIGN_MARGIN_MS);
 * - a second relay of the same BID is refused (BRIDGE_ALREADY_RELEASED);
 * - a BID whose relayer stays stopped past its timeout is refunded on A (`svc bridge refund`) and
 *   can no longer be released on B (BRIDGE_EXPIRED);
 * - a counterpart registration without the validators' consent is refused
 *   (BRIDGE_REGISTRATION_UNAUTHORIZED); each chain's ledger for the other holds the devnet allowance;
 * - attacks refused with their code, balances unchanged: a forged vote signature and a forged
 *   storage proof node (BRIDGE_PROOF_INVALID), a proof from a non-finalised block (the head
 *   header: BRIDGE_PROOF_INVALID), BID signatures of B's validators (BRIDGE_BAD_SIGNATURE), a BID
 *   locked for a third chain (BRIDGE_WRONG_DESTINATION), and a replay after a restart of both
 *   chains (BRIDGE_ALREADY_RELEASED on B, BRIDGE_NOT_LOCKED on A).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { BRIDGE_ADDRESS } from '../../src/core/constants.js';
import { parseHex, toHex } from '../../src/core/codec/bytes.js';
import { headerFromJson } from '../../src/core/types/block.js';
import { BridgeOp, type ReleaseBody, bidId, bridgeAccountProofFromWire, lockSlot, signBid } from '../../src/core/bridge/types.js';
import { type BridgeOperation } from '../../src/core/bridge/ops.js';
import { readWallet } from '../../src/wallet/store.js';
import { unlockWallet } from '../../src/wallet/keystore.js';
import { DEVNET_PASSWORD } from '../../src/genesis/build.js';
import { loadGenesisFile } from '../../src/genesis/load.js';
import { bidFieldsFromJson } from '../../src/core/bridge/types.js';
import { type BridgeChain, type BridgeSigner, buildRelease, buildSettle, connectChain, submitBridgeOp, unlockSigner } from '../../src/client/bridge-ops.js';
import type { BidView, BridgeBidRegisteredEvent } from '../../src/api/bridge.js';
import { type BridgeDevnet, type BridgePair, startRelayer, svcJson, svcRun, withBridgeDevnets } from '../helpers/bridge-devnets.js';
import { waitFor } from '../helpers/network.js';

const VALIDATORS = 4;
/** Allowance beyond one slot for the validators' signatures: event delivery, ML-DSA signing and a POST per validator on a busy 2-core machine, and this test's 100 ms polling. */
const SIGN_MARGIN_MS = 2_000;
const TOKEN = 10n ** 18n;

async function chainOf(d: BridgeDevnet): Promise<BridgeChain> {
  return connectChain({ beaconUrl: d.beaconUrl, executionUrl: d.executionUrl, genesis: await loadGenesisFile(d.manifest.genesis) });
}

async function balance(d: BridgeDevnet, address: string): Promise<bigint> {
  const r = (await fetch(`${d.executionUrl}/api/v1/accounts/${address}`).then((x) => x.json())) as { data: { balance: string } };
  return BigInt(r.data.balance);
}

/** The BID as `d`'s beacon sees it, or undefined while it answers 404. */
async function bidOn(d: BridgeDevnet, id: string): Promise<BidView | undefined> {
  const r = await fetch(`${d.beaconUrl}/api/v1/bridge/bids/${id}`);
  if (r.status === 404) return undefined;
  const body = (await r.json()) as { success: boolean; data: BidView };
  return body.success ? body.data : undefined;
}

/** Waits until `d` shows the BID in `status`. */
function bidStatus(d: BridgeDevnet, id: string, status: BidView['status'], ms: number): Promise<BidView> {
  return waitFor(`BID ${id.slice(0, 10)}… ${status} on ${d.chainId}`, async () => {
    const v = await bidOn(d, id);
    return v?.status === status ? v : undefined;
  }, ms, 250);
}

/** Submits an operation that must be refused by admission with HTTP 400 and `code`. */
async function refused(chain: BridgeChain, signer: BridgeSigner, op: BridgeOperation, code: string, what: string): Promise<void> {
  try {
    const sent = await submitBridgeOp(chain, signer, op);
    assert.unreachable(`${what}: accepted as ${sent.hash}, expected ${code}`);
  } catch (err) {
    const e = err as { code?: string; httpStatus?: number; message?: string };
    assert.is(e.code, code, `${what}: ${e.message}`);
    assert.is(e.httpStatus, 400, `${what}: HTTP status`);
  }
}

/** Balances that an attack must leave alone. */
async function snapshot(d: BridgeDevnet, addresses: string[]): Promise<string[]> {
  return Promise.all(addresses.map(async (a) => `${a}=${await balance(d, a)}`));
}

/** Sends a lock through the CLI; returns its BID id. */
async function send(p: BridgePair, from: string, to: string, amount: string, timeout: string, chain: string): Promise<{ bid: string; tx_hash: string; timeout: number }> {
  return svcJson(['bridge', 'send', '--on', p.a.dir, '--from', from, '--to', to, '--amount', amount, '--chain', chain, '--timeout', timeout], p.env);
}

function flipByte(b: Uint8Array, at: number): Uint8Array {
  const c = b.slice();
  c[at % c.length]! ^= 0x01;
  return c;
}

test('two bridged devnets: lock → release → complete, signatures within a slot, refund after timeout, attacks and replays refused', async () => {
  await withBridgeDevnets({ validators: VALIDATORS }, async (p) => {
    const { env } = p;
    const epochMs = p.slotMs * p.slotsPerEpoch;
    // Finality of a block takes two to three epochs; allow twelve on a busy machine.
    const finalityMs = 12 * epochMs + 30_000;

    // Both chains know each other after `up` (registered before `started`).
    const cpA = (await fetch(`${p.a.executionUrl}/api/v1/bridge/counterparts`).then((x) => x.json())) as any;
    const cpB = (await fetch(`${p.b.beaconUrl}/api/v1/bridge/counterparts`).then((x) => x.json())) as any;
    assert.is(cpA.data.self.chain_id, 'svc-a');
    assert.ok(cpA.data.counterparts.some((c: any) => c.chain_id === 'svc-b'), JSON.stringify(cpA));
    assert.ok(cpB.data.counterparts.some((c: any) => c.chain_id === 'svc-a'), JSON.stringify(cpB));
    assert.is(p.b.manifest.counterpart?.chain_id, 'svc-a');
    // B's genesis lists A; A learnt B by a registration its validators signed.
    assert.is(cpB.data.counterparts.find((c: any) => c.chain_id === 'svc-a').source, 'genesis');
    assert.is(cpA.data.counterparts.find((c: any) => c.chain_id === 'svc-b').source, 'registration');
    // Each chain gave the other the devnet allowance as its ledger (docs/bridge.md "Liquidity").
    assert.is(cpB.data.counterparts.find((c: any) => c.chain_id === 'svc-a').ledger.allowance, (100_000n * TOKEN).toString());
    const ledgers = await svcJson(['bridge', 'status', '--on', p.a.dir], env);
    assert.is(ledgers.counterparts.find((c: any) => c.chain_id === 'svc-b').ledger.available, (100_000n * TOKEN).toString());
    // Distinct validator sets (one public mnemonic, distinct key ranges).
    const gA = await loadGenesisFile(p.a.manifest.genesis);
    const gB = await loadGenesisFile(p.b.manifest.genesis);
    assert.not.ok(gA.validators.some((v) => gB.validators.some((w) => w.public_key === v.public_key)), 'A and B share no validator key');
    assert.ok(gB.alloc.some((a) => a.address === BRIDGE_ADDRESS), 'B has a bridge reserve');

    const A = await chainOf(p.a);
    const B = await chainOf(p.b);
    const sender = p.a.account(1);
    const recipient1 = '0x' + 'b1'.repeat(20);
    const recipient2 = '0x' + 'b2'.repeat(20);

    // A third chain, never run: registered on A so a lock to it is possible.
    const dirC = join(p.root, 'c');
    await svcJson(['genesis', 'new', '--validators', '1', '--accounts', '0', '--chain-id', 'svc-c', '--out', dirC], env);
    // Issue 32: an ordinary account cannot register it. A's validator clients run without a policy
    // naming C, so none signs the request and the command gives up with the chain's code.
    // Meanwhile (it costs no time of its own), registering A on B, whose genesis lists A, is refused before anyone is asked to sign.
    const [hostile, again] = await Promise.all([
      svcRun(['bridge', 'register', '--genesis', join(dirC, 'genesis.json'), '--allowance', '1000', '--from', p.a.account(4).wallet, '--on', p.a.dir, '--sign-timeout', '3', '--json'], env),
      svcRun(['bridge', 'register', '--genesis', p.a.manifest.genesis, '--devnet-keys', '--from', p.b.account(4).wallet, '--on', p.b.dir, '--json'], env),
    ]);
    assert.is(again.code, 1, again.stdout + again.stderr);
    assert.is(JSON.parse(again.stdout).error.code, 'BRIDGE_ALREADY_REGISTERED');
    assert.match(JSON.parse(again.stdout).error.message, /source: genesis/);
    assert.is(hostile.code, 1, hostile.stdout + hostile.stderr);
    assert.is(JSON.parse(hostile.stdout).error.code, 'BRIDGE_REGISTRATION_UNAUTHORIZED');
    // The devnet holds its validators' keys: signed by all of them, C is registered (no allowance: lock-only).
    const regC = await svcJson(['bridge', 'register', '--genesis', join(dirC, 'genesis.json'), '--devnet-keys', '--from', p.a.account(4).wallet, '--on', p.a.dir, '--wait'], env);
    assert.is(regC.signers.length, VALIDATORS);

    // --- Lock L1 while listening on A's /ws.
    const ws = new WebSocket(p.a.wsUrl);
    const events: Array<{ type: string; data: any; at: number }> = [];
    ws.on('message', (m) => {
      const e = JSON.parse(m.toString()) as { type: string; data: unknown };
      events.push({ type: e.type, data: e.data, at: Date.now() });
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const senderBefore = await balance(p.a, sender.address);
    const l1 = await send(p, sender.wallet, recipient1, '5', '10m', 'svc-b');
    // L2 times out before any relayer runs (the first starts once L2 is EXPIRED): it is refunded below.
    // 20 s leaves a loaded machine ten slots to include the lock before its timeout.
    const l2 = await send(p, sender.wallet, recipient2, '2', '20s', 'svc-b');
    const registered = await waitFor('bridge_bid_registered of L1 on A /ws', async () => events.find((e) => e.type === 'bridge_bid_registered' && e.data.bid === l1.bid), 20 * p.slotMs, 50);
    const ev = registered.data as BridgeBidRegisteredEvent;
    assert.equal(ev, { bid: l1.bid, status: 'PENDING', amount: (5n * TOKEN).toString(), chain: 'svc-b' });
    const attested = await waitFor(
      'BID signatures of 2/3 of the stake within one slot of the event',
      async () => {
        const v = await bidOn(p.a, l1.bid);
        const s = v?.signatures;
        return s && 3n * BigInt(s.signed_stake) >= 2n * BigInt(s.active_stake) ? { v, at: Date.now() } : undefined;
      },
      Math.max(0, registered.at + p.slotMs + SIGN_MARGIN_MS - Date.now()),
      100,
    );
    assert.ok(attested.at - registered.at <= p.slotMs + SIGN_MARGIN_MS, `signed ${attested.at - registered.at} ms after the event`);
    ws.close();

    // --- L3: locked for the third chain.
    const l3 = await send(p, sender.wallet, recipient1, '1', '10m', 'svc-c');
    const v1 = await bidStatus(p.a, l1.bid, 'FINALIZED', finalityMs);
    assert.is(v1.direction, 'outgoing');
    assert.is(v1.fields.recipient, recipient1);
    assert.is(v1.fields.lock_tx, l1.tx_hash);
    assert.equal(v1.history.map((h) => h.status).filter((s, i, a) => a.indexOf(s) === i).slice(0, 1), ['PENDING']);
    // Amount and fee left the sender; the bridge on A holds the locks.
    assert.ok(senderBefore - (await balance(p.a, sender.address)) > 8n * TOKEN, 'L1 + L2 + L3 left the sender');

    // --- Attacks on B, with L1's genuine release as the base. Nothing may move.
    const attacker = await unlockSigner(p.b.account(2).wallet, async () => DEVNET_PASSWORD);
    const watched = [attacker.address, recipient1, recipient2, BRIDGE_ADDRESS];
    const before = await snapshot(p.b, watched);
    const { body: rel } = await buildRelease(A.beacon, v1);
    const release = (body: ReleaseBody): BridgeOperation => ({ op: BridgeOp.Release, body });

    const forgedVote = structuredClone(rel);
    forgedVote.proof.update.attestations[0]!.signature = flipByte(forgedVote.proof.update.attestations[0]!.signature, 100);
    await refused(B, attacker, release(forgedVote), 'BRIDGE_PROOF_INVALID', 'a forged finality vote');

    const forgedNode = structuredClone(rel);
    const nodes = forgedNode.proof.account.storageNodes;
    nodes[nodes.length - 1] = flipByte(nodes[nodes.length - 1]!, 7);
    await refused(B, attacker, release(forgedNode), 'BRIDGE_PROOF_INVALID', 'a forged storage proof node');

    // The head is above the finalised block: its header (and a proof against it) is not final.
    const head = ((await fetch(`${p.a.beaconUrl}/api/v1/beacon/head`).then((x) => x.json())) as any).data as { root: string };
    const l1Bytes = parseHex(l1.bid, 'bid', 32);
    const headProof = await A.beacon.storageProof(head.root, BRIDGE_ADDRESS, [toHex(lockSlot(l1Bytes))]);
    const notFinal = structuredClone(rel);
    notFinal.proof.update.header = headerFromJson(headProof.header, 'head');
    notFinal.proof.account = bridgeAccountProofFromWire(headProof.proof, lockSlot(l1Bytes));
    await refused(B, attacker, release(notFinal), 'BRIDGE_PROOF_INVALID', 'a proof from a non-finalised block');

    // BID signatures by B's own validators (indices that exist in A's set, keys that are not A's).
    const foreign = structuredClone(rel);
    foreign.signatures = [];
    for (let i = 0; i < VALIDATORS; i++) {
      const w = await readWallet(p.b.validatorWallet(i));
      if (w.wallet.kind !== 'v2') throw new Error('validator keystore is not v2');
      const keys = await unlockWallet(w.wallet.file, DEVNET_PASSWORD);
      foreign.signatures.push(signBid(l1Bytes, i, keys.mldsa, 'svc-a'));
    }
    await refused(B, attacker, release(foreign), 'BRIDGE_BAD_SIGNATURE', 'BID signatures of another validator set');

    const v3 = await bidStatus(p.a, l3.bid, 'FINALIZED', finalityMs);
    const { body: rel3 } = await buildRelease(A.beacon, v3);
    await refused(B, attacker, release(rel3), 'BRIDGE_WRONG_DESTINATION', 'a BID for another destination chain');
    assert.equal(await snapshot(p.b, watched), before, 'the attacks moved no balance on B');

    // --- Relayer (releases only: no source wallet), started while L2 is already past its timeout.
    const v2 = await bidStatus(p.a, l2.bid, 'EXPIRED', finalityMs);
    const relayer1 = startRelayer(['--from', p.b.account(1).wallet, '--source', p.a.dir, '--dest', p.b.dir], env);
    try {
      const inB = await bidStatus(p.b, l1.bid, 'COMPLETED', finalityMs);
      assert.is(inB.direction, 'incoming');
      assert.is(await balance(p.b, recipient1), 5n * TOKEN, 'the recipient on B received exactly the amount');
      await waitFor('the relayer to log the release in a block', async () => relayer1.actions.find((a) => a.action === 'included' && a.op === 'release' && a.bid === l1.bid && a.ok), 10 * p.slotMs);
      assert.ok(relayer1.actions.some((a) => a.action === 'submitted' && a.op === 'release' && a.bid === l1.bid));
      // Never L2 (expired) nor L3 (another destination).
      assert.not.ok(relayer1.actions.some((a) => a.action === 'submitted' && (a.bid === l2.bid || a.bid === l3.bid)), JSON.stringify(relayer1.actions));
    } finally {
      assert.is(await relayer1.stop(), 0, `the relayer exits 0 on SIGTERM: ${relayer1.stderr()}`);
    }
    assert.is(relayer1.actions[relayer1.actions.length - 1]?.action, 'stopped');

    // --- A second relay of L1 is refused; nothing moves.
    const afterRelease = await snapshot(p.b, watched);
    await refused(B, attacker, release(rel), 'BRIDGE_ALREADY_RELEASED', 'a second relay of the same BID');

    // --- L2: the relayer stayed away; refund once B has finalised past its timeout, then B refuses it.
    await waitFor('B finalised past L2 timeout', async () => {
      const u = ((await fetch(`${p.b.beaconUrl}/api/v1/light/finality_update`).then((x) => x.json())) as any).data;
      return u && u.header.timestamp >= l2.timeout * 1000 ? true : undefined;
    }, finalityMs, 500);
    const senderBeforeRefund = await balance(p.a, sender.address);
    const refund = await svcJson(['bridge', 'refund', l2.bid, '--from', p.a.account(3).wallet, '--source', p.a.dir, '--dest', p.b.dir, '--wait'], env);
    assert.is(refund.to, sender.address);
    await bidStatus(p.a, l2.bid, 'REFUNDED', 20 * p.slotMs);
    assert.is(await balance(p.a, sender.address), senderBeforeRefund + 2n * TOKEN, 'the refund paid the BID sender the amount');
    const { body: rel2 } = await buildRelease(A.beacon, v2);
    await refused(B, attacker, release(rel2), 'BRIDGE_EXPIRED', 'a release after the timeout (refunded BID)');
    assert.equal(await snapshot(p.b, watched), afterRelease, 'refused releases moved nothing on B');

    // --- A restarted relayer (now with a source wallet) completes L1 on A, and does not release it again.
    const relayer2 = startRelayer(['--from', p.b.account(1).wallet, '--source-from', p.a.account(2).wallet, '--source', p.a.dir, '--dest', p.b.dir], env);
    try {
      await bidStatus(p.a, l1.bid, 'COMPLETED', finalityMs);
      assert.ok(relayer2.actions.some((a) => a.action === 'submitted' && a.op === 'complete' && a.bid === l1.bid), JSON.stringify(relayer2.actions));
      assert.not.ok(relayer2.actions.some((a) => a.action === 'submitted' && a.op === 'release'), 'a restarted relayer does not release again');
    } finally {
      assert.is(await relayer2.stop(), 0, `the relayer exits 0 on SIGTERM: ${relayer2.stderr()}`);
    }
    const finalA = await bidOn(p.a, l1.bid);
    const seen = finalA!.history.map((h) => h.status);
    for (const s of ['PENDING', 'ATTESTED', 'FINALIZED', 'COMPLETED'] as const) assert.ok(seen.includes(s), `history ${seen.join(' → ')} has ${s}`);
    const status = await svcJson(['bridge', 'status', l1.bid, '--on', p.a.dir], env);
    assert.is(status.status, 'COMPLETED');
    const unknown = await svcRun(['bridge', 'status', '0x' + '00'.repeat(32), '--on', p.a.dir, '--json'], env);
    assert.is(unknown.code, 1);
    assert.is(JSON.parse(unknown.stdout).error.code, 'UNKNOWN_BID');

    // --- Replays after a restart of both chains.
    const settle2 = (await buildSettle(B.beacon, bidFieldsFromJson(v2.fields), parseHex(l2.bid, 'bid', 32))).body;
    const settle1 = (await buildSettle(B.beacon, bidFieldsFromJson(v1.fields), l1Bytes)).body;
    await Promise.all([svcJson(['devnet', 'down', '--dir', p.b.dir], env), svcJson(['devnet', 'down', '--dir', p.a.dir], env)]);
    await svcJson(['devnet', 'up', '--dir', p.a.dir, '--detach'], env);
    await svcJson(['devnet', 'up', '--dir', p.b.dir, '--detach'], env);
    p.refresh();
    const A2 = await chainOf(p.a);
    const B2 = await chainOf(p.b);
    const relaySigner = await unlockSigner(p.a.account(2).wallet, async () => DEVNET_PASSWORD);
    const afterRestartB = await snapshot(p.b, watched);
    const afterRestartA = await snapshot(p.a, [relaySigner.address, sender.address, BRIDGE_ADDRESS]);
    await refused(B2, attacker, release(rel), 'BRIDGE_ALREADY_RELEASED', 'a release replayed after B restarted');
    await refused(A2, relaySigner, { op: BridgeOp.Complete, body: settle1 }, 'BRIDGE_NOT_LOCKED', 'a completion replayed after A restarted');
    await refused(A2, relaySigner, { op: BridgeOp.Refund, body: settle2 }, 'BRIDGE_NOT_LOCKED', 'a refund replayed after A restarted');
    assert.equal(await snapshot(p.b, watched), afterRestartB);
    assert.equal(await snapshot(p.a, [relaySigner.address, sender.address, BRIDGE_ADDRESS]), afterRestartA);
    assert.is(await balance(p.b, recipient1), 5n * TOKEN, 'paid exactly once');
    assert.equal(toHex(bidId(bidFieldsFromJson(v1.fields))), l1.bid, 'the BID printed by send is the id of its fields');
  });
});

test.run();
