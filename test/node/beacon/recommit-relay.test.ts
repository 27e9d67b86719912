/**
 * The beacon's RANDAO re-commitment relay on a real beacon and execution: a registered
 * validator's re-commitment reaches execution's pool through it, and nothing else does. Strangers
 * (no token, an account that is no validator), transactions that are not re-commitments, forged
 * signatures, malformed and oversized bodies are refused with the envelope, and execution never
 * sees what the beacon refused.
 */
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { toHex } from '../../../src/core/codec/bytes.js';
import { RANDAO_COMMIT_ADDRESS, TX_BASE_GAS } from '../../../src/core/constants.js';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { type StandardTx, encodeTx, signStandardTx, txHash } from '../../../src/core/types/transaction.js';
import { routeUrl } from '../../../src/api/routes/route.js';
import { validatorRoutes } from '../../../src/api/routes/validator.js';
import { BeaconClient, BeaconClientError } from '../../../src/client/beacon.js';
import { ExecutionClient } from '../../../src/client/execution.js';
import { RELAY_BODY_LIMIT } from '../../../src/node/beacon/recommit-relay.js';
import type { WalletKeys } from '../../../src/wallet/derivation.js';
import { type Harness, bget, bpost, harnessSuite } from './fixture.js';
import { http } from '../execution/fixture.js';

const test = harnessSuite('beacon: RANDAO re-commitment relay', { validators: 2 });

function harness(ctx: { h?: Harness; startError?: unknown }): Harness {
  if (!ctx.h) throw ctx.startError;
  return ctx.h;
}

/** A signed type-0 transaction of `key` to `to` with `data` (a re-commitment when to is RANDAO_COMMIT_ADDRESS and data 32 bytes). */
function tx(h: Harness, key: WalletKeys, nonce: bigint, o: { to?: string; data?: Uint8Array; value?: bigint } = {}): StandardTx {
  return signStandardTx(
    { nonce, gasPrice: BigInt(h.genesis.config.min_gas_price), gasLimit: TX_BASE_GAS, to: parseHex(o.to ?? RANDAO_COMMIT_ADDRESS, 'to', 20), value: o.value ?? 0n, data: o.data ?? new Uint8Array(randomBytes(32)) },
    key.mldsa,
    h.genesis.chain_id,
  );
}

/** Execution's own view of a transaction: what the relay really forwarded. */
async function executionState(h: Harness, t: StandardTx): Promise<string> {
  return (await new ExecutionClient(h.exec.restUrl).txStatus(toHex(txHash(t)))).state;
}

/** The refusal of `p` (a BeaconClient call) as [HTTP status, code]. */
async function refusal(p: Promise<unknown>): Promise<[number | undefined, string]> {
  const err = await p.then(
    () => assert.unreachable('expected a refusal'),
    (e: unknown) => e,
  );
  assert.instance(err, BeaconClientError);
  return [(err as BeaconClientError).httpStatus, (err as BeaconClientError).code];
}

test("a validator's re-commitment reaches execution's pool: nonce, submission and status through the beacon", async (ctx) => {
  const h = harness(ctx);
  const beacon = new BeaconClient(h.beacon.url, { token: h.token });
  const v = h.validators[0]!;
  const account = await beacon.recommitAccount(v.address);
  assert.equal(account, { address: v.address, pending_nonce: 0 });
  const t = tx(h, v, BigInt(account.pending_nonce));
  const sent = await beacon.submitRecommit(toHex(encodeTx(t)));
  assert.is(sent.hash, toHex(txHash(t)));
  assert.is.not(await executionState(h, t), 'unknown', 'execution holds the transaction');
  const status = await beacon.recommitStatus(sent.hash);
  assert.is(status.hash, sent.hash);
  assert.ok(status.state === 'Pending' || status.state === 'Confirmed' || status.state === 'Finalized', status.state);
  // The pool counts it: the next nonce the relay reports moved on.
  assert.is((await beacon.recommitAccount(v.address)).pending_nonce, 1);
  // The same envelope again is execution's refusal, passed on under its code (the engine link
  // answers any refusal of execution's that is not a fault of its own with 400).
  assert.equal(await refusal(beacon.submitRecommit(toHex(encodeTx(t)))), [400, 'ALREADY_KNOWN']);
});

test('without the validator token every relay route is 401 UNAUTHORIZED', async (ctx) => {
  const h = harness(ctx);
  const v = h.validators[1]!;
  const t = tx(h, v, 0n);
  for (const token of [null, 'not-the-token-0123456789']) {
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    const answers = [
      await bget(h, routeUrl(validatorRoutes.recommitAccount, { address: v.address }), headers),
      await bpost(h, validatorRoutes.submitRecommit.path, { raw: toHex(encodeTx(t)) }, token),
      await bget(h, routeUrl(validatorRoutes.recommitStatus, { hash: toHex(txHash(t)) }), headers),
    ];
    for (const r of answers) assert.equal([r.status, r.body?.error?.code], [401, 'UNAUTHORIZED'], r.text);
  }
  assert.is(await executionState(h, t), 'unknown', 'nothing reached execution');
});

test('a stranger is refused: no nonce for an account that is no validator, no relay of its re-commitment', async (ctx) => {
  const h = harness(ctx);
  const beacon = new BeaconClient(h.beacon.url, { token: h.token });
  const stranger = h.accounts[0]!;
  assert.equal(await refusal(beacon.recommitAccount(stranger.address)), [400, 'UNKNOWN_VALIDATOR']);
  const t = tx(h, stranger, 0n);
  const [status, code] = await refusal(beacon.submitRecommit(toHex(encodeTx(t))));
  assert.equal([status, code], [400, 'INVALID_RANDAO_RECOMMIT']);
  assert.is(await executionState(h, t), 'unknown', 'execution never saw it');
});

test("only re-commitments are relayed: a validator's transfer, a re-commitment with value or the wrong data size are refused", async (ctx) => {
  const h = harness(ctx);
  const beacon = new BeaconClient(h.beacon.url, { token: h.token });
  const v = h.validators[1]!;
  const cases: Array<[string, StandardTx]> = [
    ['a transfer', tx(h, v, 0n, { to: h.accounts[0]!.address, value: 1n, data: new Uint8Array(0) })],
    ['value', tx(h, v, 0n, { value: 1n })],
    ['31 bytes of data', tx(h, v, 0n, { data: new Uint8Array(31).fill(7) })],
    ['33 bytes of data', tx(h, v, 0n, { data: new Uint8Array(33).fill(7) })],
    ['an all-zero commitment', tx(h, v, 0n, { data: new Uint8Array(32) })],
  ];
  for (const [what, t] of cases) {
    assert.equal(await refusal(beacon.submitRecommit(toHex(encodeTx(t)))), [400, 'INVALID_RANDAO_RECOMMIT'], what);
    assert.is(await executionState(h, t), 'unknown', `${what}: execution never saw it`);
  }
});

test("a forged re-commitment (a validator's key, another key's signature) is execution's refusal, passed on", async (ctx) => {
  const h = harness(ctx);
  const beacon = new BeaconClient(h.beacon.url, { token: h.token });
  const signed = tx(h, h.accounts[0]!, 0n);
  const forged: StandardTx = { ...signed, publicKey: h.validators[1]!.mldsa.publicKey };
  assert.equal(await refusal(beacon.submitRecommit(toHex(encodeTx(forged)))), [400, 'INVALID_SIGNATURE']);
  assert.is(await executionState(h, forged), 'unknown');
});

test('malformed input is MALFORMED_INPUT and a body over the limit 413, on a beacon that keeps serving', async (ctx) => {
  const h = harness(ctx);
  const path = validatorRoutes.submitRecommit.path;
  const t = toHex(encodeTx(tx(h, h.validators[1]!, 0n)));
  const bodies: unknown[] = [{}, { raw: 7 }, { raw: 'not hex' }, { raw: '0x' }, { raw: t.slice(0, 200) }, { raw: t, extra: 1 }, [t], 'raw'];
  for (const body of bodies) {
    const r = await bpost(h, path, body);
    assert.equal([r.status, r.body?.error?.code], [400, 'MALFORMED_INPUT'], `${JSON.stringify(body).slice(0, 60)}: ${r.text}`);
  }
  const auth = { authorization: `Bearer ${h.token}` };
  for (const address of ['0x12', 'validator', `0x${'g'.repeat(40)}`]) {
    const r = await bget(h, routeUrl(validatorRoutes.recommitAccount, { address }), auth);
    assert.equal([r.status, r.body?.error?.code], [400, 'MALFORMED_INPUT'], address);
  }
  for (const hash of ['0x12', `0x${'z'.repeat(64)}`]) {
    const r = await bget(h, routeUrl(validatorRoutes.recommitStatus, { hash }), auth);
    assert.equal([r.status, r.body?.error?.code], [400, 'MALFORMED_INPUT'], hash);
  }
  // One byte over the relay's limit, and one well over it (both cross the server's read buffers).
  for (const size of [RELAY_BODY_LIMIT + 1, 4 * RELAY_BODY_LIMIT]) {
    const raw = `0x${'ab'.repeat(Math.ceil(size / 2))}`;
    const r = await http(h.beacon.url, path, { json: { raw }, headers: auth });
    assert.equal([r.status, r.body?.error?.code], [413, 'BODY_TOO_LARGE'], `${size} bytes`);
  }
  // Still serving: a real re-commitment goes through after all of that.
  const beacon = new BeaconClient(h.beacon.url, { token: h.token });
  const v = h.validators[1]!;
  const good = tx(h, v, BigInt((await beacon.recommitAccount(v.address)).pending_nonce));
  assert.is((await beacon.submitRecommit(toHex(encodeTx(good)))).hash, toHex(txHash(good)));
});

test.run();
