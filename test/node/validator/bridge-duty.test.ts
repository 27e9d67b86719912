/**
 * The validator's bridge duty. On a real beacon and execution: two validator clients whose timers
 * never fire (so neither the slot phases nor the epoch poll run) sign a BID as soon as the beacon
 * announces `bridge_bid_registered` on /ws, and the beacon attests it. Against a real HTTP server
 * in the test speaking the beacon's wire types (only here: a real beacon never lists such BIDs): a
 * listed BID whose fields do not hash to its id, or whose source is another chain, is refused and
 * logged, never signed; a good one is signed once and its signature verifies.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { type BidFields, bidFieldsToJson, bidId, verifyBidSignature } from '../../../src/core/bridge/types.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { BeaconClient } from '../../../src/client/beacon.js';
import { BridgeDuty } from '../../../src/node/validator/bridge-duty.js';
import { type Timers, ValidatorClient } from '../../../src/node/validator/client.js';
import { ValidatorMetrics } from '../../../src/node/validator/metrics.js';
import { SlashingProtectionDb } from '../../../src/node/validator/slashing/protection.js';
import { filled } from '../../helpers/assert.js';
import { captureLog } from '../../helpers/log.js';
import { waitFor } from '../../helpers/network.js';
import { bridgeReceipt } from '../beacon/bridge/fixture.js';
import { beaconHead, bget, okData, randaoChain, sample, startHarness, stopHarness } from '../beacon/fixture.js';
import { devnet } from '../execution/fixture.js';

/** Timers that never fire: whatever the client does, an event made it do it. */
const frozen: Timers = { setTimeout: () => ({}), clearTimeout: () => undefined };

function fieldsOn(source: Uint8Array, n: number): BidFields {
  return { source, destination: filled(32, 0xbb), lockTx: filled(32, 0x40 + n), sender: filled(20, 0xa1), recipient: filled(20, 0xb0), amount: 7n * 10n ** 17n, timeout: Math.floor(Date.now() / 1000) + 3600 };
}

test('a bridge_bid_registered event on a real beacon makes both validators sign at once; the BID is ATTESTED', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 4 });
  const running: Array<{ client: ValidatorClient; sp: SlashingProtectionDb }> = [];
  try {
    for (const i of [0, 1]) {
      const sp = await SlashingProtectionDb.open({ memory: true });
      const client = new ValidatorClient({ genesis: h.genesis, keys: h.validators[i]!, beaconUrl: h.beacon.url, token: h.token, slashingDb: sp, log: captureLog().log, randaoChain: randaoChain(h, i), timers: frozen });
      running.push({ client, sp });
      await client.start();
    }
    await waitFor('both clients on /ws', async () => (running.every((r) => r.client.eventsConnected) && h.beacon.events.clients === 2 ? true : undefined), 10_000);
    // The start-up pass found nothing: what follows comes from the event.
    for (const r of running) await r.client.idle();
    const f = fieldsOn(genesisHash(h.genesis), 1);
    const bid = toHex(bidId(f));
    const head = await beaconHead(h);
    await h.beacon.chain.bridge.importBlock([bridgeReceipt('bridge_lock', 'Locked', f, { hash: head.root, index: head.index })], { hash: head.root, index: head.index });
    const view = await waitFor('the BID attested by both signatures', async () => {
      const v = okData(await bget(h, `/api/v1/bridge/bids/${bid}`));
      return v.status === 'ATTESTED' && v.signatures.signers === 2 ? v : undefined;
    }, 20_000);
    assert.equal(view.history.map((t: { status: string }) => t.status), ['PENDING', 'ATTESTED']);
    for (const r of running) {
      const text = await r.client.metrics.text();
      assert.is(sample(text, 'service_validator_bridge_signatures_total', 'result="added"'), 1);
      assert.is(sample(text, 'quantum_canonical_sig_generated_total', 'kind="bridge_bid"'), 1);
    }
    // Another event (a second BID) signs only the new one: the first is remembered.
    const g = fieldsOn(genesisHash(h.genesis), 2);
    await h.beacon.chain.bridge.importBlock([bridgeReceipt('bridge_lock', 'Locked', g, { hash: head.root, index: head.index })], { hash: head.root, index: head.index });
    await waitFor('the second BID attested', async () => (okData(await bget(h, `/api/v1/bridge/bids/${toHex(bidId(g))}`)).status === 'ATTESTED' ? true : undefined), 20_000);
    for (const r of running) {
      await r.client.idle();
      const text = await r.client.metrics.text();
      assert.is(sample(text, 'service_validator_bridge_signatures_total', 'result="added"'), 2);
      assert.is(sample(text, 'service_validator_bridge_signatures_total', 'result="known"'), undefined, 'nothing posted twice');
    }
  } finally {
    for (const r of running) {
      await r.client.stop();
      await r.sp.close();
    }
    await stopHarness(h);
  }
});

test('BIDs whose id does not match their fields, or from another source chain, are refused and logged; a good one is signed once', async () => {
  const { genesis, keys } = devnet();
  const self = genesisHash(genesis);
  const good = fieldsOn(self, 1);
  const forged = fieldsOn(self, 2);
  const foreign = fieldsOn(filled(32, 0xcc), 3);
  const listing = [
    { bid: toHex(bidId(good)), status: 'PENDING', direction: 'outgoing', fields: bidFieldsToJson(good) },
    // The beacon (or whoever answers in its place) claims another amount than the id commits to.
    { bid: toHex(bidId(forged)), status: 'PENDING', direction: 'outgoing', fields: bidFieldsToJson({ ...forged, amount: forged.amount * 10n }) },
    { bid: toHex(bidId(foreign)), status: 'PENDING', direction: 'outgoing', fields: bidFieldsToJson(foreign) },
  ];
  const posts: Array<{ path: string; body: { validator_index: number; signature: string } }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'GET' && url.pathname === '/api/v1/bridge/bids') return send(200, { success: true, data: { bids: url.searchParams.get('status') === 'PENDING' ? listing : [] } });
      const m = /^\/api\/v1\/bridge\/bids\/(0x[0-9a-f]{64})\/signatures$/.exec(url.pathname);
      if (req.method === 'POST' && m) {
        posts.push({ path: url.pathname, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { validator_index: number; signature: string } });
        return send(202, { success: true, data: { bid: m[1], added: true, status: 'PENDING', signers: 1, signed_stake: '1', active_stake: '4' } });
      }
      send(404, { success: false, error: { code: 'NOT_FOUND', message: 'no route' } });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const { log, lines } = captureLog();
  const metrics = new ValidatorMetrics();
  const me = keys.validators[0]!;
  const duty = new BridgeDuty({ genesis, beacon: new BeaconClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), log, metrics, signers: () => [{ index: 0, key: me.mldsa }], clock: () => Date.now(), timers: frozen });
  try {
    duty.start();
    await duty.idle();
    duty.onRegistered({ bid: listing[0]!.bid });
    await duty.idle();
    assert.equal(posts.map((p) => p.path), [`/api/v1/bridge/bids/${listing[0]!.bid}/signatures`], 'signed once, the others never');
    assert.is(posts[0]!.body.validator_index, 0);
    assert.ok(verifyBidSignature(bidId(good), { validatorIndex: 0, signature: parseHex(posts[0]!.body.signature, 'signature') }, me.mldsa.publicKey, genesis.chain_id));
    const refusals = lines.filter((l) => l.msg === 'refusing to sign a BID the beacon listed');
    assert.equal(refusals.map((l) => l.fields.bid), [listing[1]!.bid, listing[2]!.bid], 'each logged once');
    assert.match(String(refusals[0]!.fields.reason), /hash to/);
    assert.match(String(refusals[1]!.fields.reason), /source/);
    const text = await metrics.text();
    assert.is(sample(text, 'service_validator_bridge_signatures_total', 'result="refused"'), 2);
    assert.is(sample(text, 'service_validator_bridge_signatures_total', 'result="added"'), 1);
  } finally {
    await duty.stop();
    await new Promise<void>((ok) => server.close(() => ok()));
  }
});

test.run();
