/**
 * The beacon's `/api/v1/bridge/...` routes on a real beacon and execution pair: every bad query,
 * parameter and body is a 4xx envelope naming the field; a BID (fed to the beacon's state machine
 * as a lock receipt: this branch's execution does not apply bridge operations) is listed, gathers
 * its validators' signatures over HTTP (202 added, 200 known, 400 refused), is announced on /ws,
 * and is still there after the beacon restarts. The counterparts route serves execution's view.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { type BidFields, bidId, signBid } from '../../../../src/core/bridge/types.js';
import { BeaconNode } from '../../../../src/node/beacon/node.js';
import { silentLogger } from '../../../../src/util/log.js';
import { filled } from '../../../helpers/assert.js';
import { waitFor } from '../../../helpers/network.js';
import { expectEnvelope, http } from '../../execution/fixture.js';
import { bridgeReceipt } from './fixture.js';
import { type Harness, bget, bpost, beaconHead, okData, startHarness, stopHarness } from '../fixture.js';

function lockFields(h: Harness, n: number): BidFields {
  return { source: parseHex(h.beacon.chain.genesisRoot, 'genesis', 32), destination: filled(32, 0xbb), lockTx: filled(32, 0x30 + n), sender: parseHex(h.accounts[0]!.address, 'a', 20), recipient: filled(20, 0xb0), amount: 10n ** 18n, timeout: Math.floor(Date.now() / 1000) + 3600 };
}

/** Feeds a lock in the head block to the beacon's state machine, as newPayload's receipts would. */
async function lock(h: Harness, f: BidFields): Promise<string> {
  const head = await beaconHead(h);
  await h.beacon.chain.bridge.importBlock([bridgeReceipt('bridge_lock', 'Locked', f, { hash: head.root, index: head.index })], { hash: head.root, index: head.index });
  return toHex(bidId(f));
}

test('bridge routes: bad input of every route is a 4xx envelope naming the field; unknown BIDs are 404 UNKNOWN_BID', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 4 });
  try {
    const unknown = `0x${'ab'.repeat(32)}`;
    assert.equal(okData(await bget(h, '/api/v1/bridge/bids')), { bids: [] });
    for (const [q, field] of [
      ['status=NOPE', 'status'],
      ['status=pending', 'status'],
      ['direction=sideways', 'direction'],
      ['address=0x1234', 'address'],
      ['address=' + 'ab'.repeat(20), 'address'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=01', 'limit'],
      ['limit=', 'limit'],
      ['status=PENDING&status=ATTESTED', 'status'],
      ['colour=red', 'colour'],
    ] as const) {
      expectEnvelope(await bget(h, `/api/v1/bridge/bids?${q}`), 400, 'MALFORMED_INPUT', new RegExp(`^malformed ${field}`));
    }
    for (const path of ['/api/v1/bridge/bids/0x1234', `/api/v1/bridge/bids/${'ab'.repeat(32)}`, '/api/v1/bridge/bids/0x1234/signatures', `/api/v1/bridge/bids/0x${'zz'.repeat(32)}/signatures`]) {
      expectEnvelope(await bget(h, path), 400, 'MALFORMED_INPUT', /^malformed bid/);
    }
    expectEnvelope(await bget(h, `/api/v1/bridge/bids/${unknown}`), 404, 'UNKNOWN_BID');
    expectEnvelope(await bget(h, `/api/v1/bridge/bids/${unknown}/signatures`), 404, 'UNKNOWN_BID');
    const good = { validator_index: 0, signature: toHex(filled(3309, 1)) };
    const post = (bid: string, body: unknown) => bpost(h, `/api/v1/bridge/bids/${bid}/signatures`, body, null);
    expectEnvelope(await post(unknown, good), 404, 'UNKNOWN_BID');
    expectEnvelope(await post('0x12', good), 400, 'MALFORMED_INPUT', /^malformed bid/);
    for (const [body, field] of [
      ['a string', 'body'],
      [[good], 'body'],
      [null, 'body'],
      [{ signature: good.signature }, 'validator_index'],
      [{ ...good, validator_index: -1 }, 'validator_index'],
      [{ ...good, validator_index: 1.5 }, 'validator_index'],
      [{ ...good, validator_index: '0' }, 'validator_index'],
      [{ ...good, validator_index: 2 ** 32 }, 'validator_index'],
      [{ validator_index: 0 }, 'signature'],
      [{ ...good, signature: toHex(filled(3308, 1)) }, 'signature'],
      [{ ...good, signature: 'zz' }, 'signature'],
      [{ ...good, extra: 1 }, 'extra'],
    ] as const) {
      expectEnvelope(await post(unknown, body), 400, 'MALFORMED_INPUT', new RegExp(`^malformed ${field}`));
    }
    const raw = await http(h.beacon.url, `/api/v1/bridge/bids/${unknown}/signatures`, { method: 'POST', body: '{"validator_index": ', headers: { 'content-type': 'application/json' } });
    assert.is(raw.status, 400);
    // The beacon serves execution's view of the counterparts: the same answer, or execution's refusal as a 5xx.
    const exec = await http(h.exec.restUrl, '/api/v1/bridge/counterparts');
    const beacon = await bget(h, '/api/v1/bridge/counterparts');
    if (exec.status === 200) {
      assert.equal(okData(beacon), okData(exec));
      assert.equal(okData(beacon).self, { chain_id: h.genesis.chain_id, genesis_hash: h.beacon.chain.genesisRoot });
    } else {
      expectEnvelope(beacon, 502, exec.body.error.code);
    }
  } finally {
    await stopHarness(h);
  }
});

test('a BID over HTTP: listed with its history, announced on /ws, signed by the validators (202, 200 known, 400 refused) until ATTESTED; kept across a restart', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 4 });
  const ws = new WebSocket(`${h.beacon.url.replace('http', 'ws')}/ws`);
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  ws.on('message', (d) => events.push(JSON.parse(String(d)) as { type: string; data: Record<string, unknown> }));
  try {
    await new Promise<void>((ok, fail) => ws.once('open', () => ok()).once('error', fail));
    const f = lockFields(h, 1);
    const bid = await lock(h, f);
    const registered = await waitFor('bridge_bid_registered on /ws', async () => events.find((e) => e.type === 'bridge_bid_registered'), 10_000);
    // No counterpart named it on this execution: the chain is named by its genesis hash.
    assert.equal(registered.data, { bid, status: 'PENDING', amount: f.amount.toString(), chain: toHex(filled(32, 0xbb)) });
    const list = okData(await bget(h, `/api/v1/bridge/bids?status=PENDING&direction=outgoing&address=${h.accounts[0]!.address.toUpperCase().replace('0X', '0x')}`));
    assert.equal(list.bids.map((b: { bid: string }) => b.bid), [bid]);
    const view = okData(await bget(h, `/api/v1/bridge/bids/${bid.toUpperCase().replace('0X', '0x')}`));
    assert.equal([view.status, view.direction, view.fields.lock_tx, view.history.length, view.history[0].tx_hash], ['PENDING', 'outgoing', toHex(f.lockTx), 1, toHex(f.lockTx)]);
    const chain = h.genesis.chain_id;
    const sign = (v: number, as = v, c = chain) => ({ validator_index: as, signature: toHex(signBid(bidId(f), v, h.validators[v]!.mldsa, c).signature) });
    const post = (body: unknown) => bpost(h, `/api/v1/bridge/bids/${bid}/signatures`, body, null);
    expectEnvelope(await post(sign(0, 0, 'svc-other')), 400, 'BRIDGE_BAD_SIGNATURE');
    expectEnvelope(await post(sign(0, 1)), 400, 'BRIDGE_BAD_SIGNATURE');
    expectEnvelope(await post(sign(0, 5)), 400, 'BRIDGE_UNKNOWN_SIGNER');
    const first = okData(await post(sign(0)), 202);
    assert.equal([first.added, first.status, first.signers], [true, 'PENDING', 1]);
    assert.equal([okData(await post(sign(0))).added], [false], 'known: 200');
    assert.equal(okData(await post(sign(1)), 202).status, 'ATTESTED');
    await waitFor('bridge_bid_status on /ws', async () => events.find((e) => e.type === 'bridge_bid_status'), 10_000);
    assert.equal(events.find((e) => e.type === 'bridge_bid_status')!.data, { bid, status: 'ATTESTED', previous: 'PENDING', direction: 'outgoing' });
    const sigs = okData(await bget(h, `/api/v1/bridge/bids/${bid}/signatures`));
    assert.equal(sigs.signatures.map((s: { validator_index: number }) => s.validator_index), [0, 1]);
    const metrics = await (await fetch(`${h.beacon.url}/metrics`)).text();
    assert.match(metrics, /^service_beacon_bridge_bids\{status="ATTESTED",direction="outgoing"\} 1$/m);
    const before = okData(await bget(h, `/api/v1/bridge/bids/${bid}`));
    await h.beacon.stop();
    h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir: join(h.dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
    assert.equal(okData(await bget(h, `/api/v1/bridge/bids/${bid}`)), before);
    assert.equal(okData(await bget(h, `/api/v1/bridge/bids/${bid}/signatures`)), sigs);
    assert.equal(okData(await bget(h, '/api/v1/bridge/bids?status=ATTESTED')).bids.length, 1);
  } finally {
    ws.close();
    await stopHarness(h);
  }
});

test.run();
