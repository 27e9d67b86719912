/**
 * The bridge client's pure parts (src/client/bridge.ts, bridge-ops.ts) and the CLI's parsers
 * (src/cli/bridge-flags.ts): BID ids and fields from a beacon's answer parsed strictly, BID
 * signatures ordered and deduplicated, a signed bridge transaction whose gas limit is exactly
 * bridgeGas of its data, chain specs (URLs or a devnet directory), token amounts and durations.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BRIDGE_ADDRESS } from '../../src/core/constants.js';
import { toHex } from '../../src/core/codec/bytes.js';
import { SvcError } from '../../src/core/errors.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { bridgeGas } from '../../src/core/bridge/verify.js';
import { BridgeOp, bidFieldsToJson } from '../../src/core/bridge/types.js';
import { decodeBridgeOp } from '../../src/core/bridge/ops.js';
import { type StandardTx, TxType, decodeTx } from '../../src/core/types/transaction.js';
import { parseBidId } from '../../src/client/bridge.js';
import { bidFieldsFromJson } from '../../src/core/bridge/types.js';
import { bidSignaturesFromJson, parseChainSpec, signBridgeTx } from '../../src/client/bridge-ops.js';
import { UsageError } from '../../src/cli/base.js';
import { parseDuration, parseTokens, parseWei } from '../../src/cli/bridge-flags.js';
import { expectError } from '../helpers/assert.js';
import { withTempDir } from '../helpers/cli.js';

const FIELDS = {
  source: new Uint8Array(32).fill(1),
  destination: new Uint8Array(32).fill(2),
  lockTx: new Uint8Array(32).fill(3),
  sender: new Uint8Array(20).fill(4),
  recipient: new Uint8Array(20).fill(5),
  amount: 5n * 10n ** 18n,
  timeout: 1_800_000_000,
};

test('parseBidId accepts 0x + 64 hex (lowercased) and refuses anything else with MALFORMED_INPUT', () => {
  assert.is(parseBidId('0x' + 'AB'.repeat(32)), '0x' + 'ab'.repeat(32));
  for (const bad of ['', '0x', 'ab'.repeat(32), '0x' + 'ab'.repeat(31), '0x' + 'zz'.repeat(32), '0x' + 'ab'.repeat(33)]) {
    expectError(() => parseBidId(bad), SvcError, { code: 'MALFORMED_INPUT', status: 400 });
  }
});

test('bidFieldsFromJson inverts bidFieldsToJson and refuses a malformed field, naming it', () => {
  const j = bidFieldsToJson(FIELDS);
  assert.equal(bidFieldsFromJson(j), FIELDS);
  const cases: Array<[Partial<typeof j>, string]> = [
    [{ source: '0x12' }, 'fields.source'],
    [{ recipient: '0x' + '00'.repeat(32) }, 'fields.recipient'],
    [{ amount: '-1' }, 'fields.amount'],
    [{ amount: '1.5' }, 'fields.amount'],
    [{ timeout: -1 }, 'fields.timeout'],
    [{ timeout: 1.5 }, 'fields.timeout'],
  ];
  for (const [edit, field] of cases) {
    let thrown: unknown;
    try {
      bidFieldsFromJson({ ...j, ...edit });
    } catch (err) {
      thrown = err;
    }
    assert.ok(thrown instanceof SvcError, `${JSON.stringify(edit)} refused`);
    assert.ok((thrown as Error).message.includes(field), `${(thrown as Error).message} names ${field}`);
  }
});

test('bidSignaturesFromJson orders by validator and keeps one signature per validator', () => {
  const sig = (b: number) => '0x' + b.toString(16).padStart(2, '0').repeat(4);
  const out = bidSignaturesFromJson([
    { validator_index: 3, signature: sig(3) },
    { validator_index: 1, signature: sig(1) },
    { validator_index: 3, signature: sig(9) },
  ]);
  assert.equal(out.map((s) => s.validatorIndex), [1, 3]);
  assert.is(toHex(out[1]!.signature), sig(3));
});

test('signBridgeTx: to the bridge address, gas limit exactly bridgeGas(data), the op decodes back', () => {
  const key = keygenFromSeed(new Uint8Array(32).fill(7));
  const op = { op: BridgeOp.Lock, body: { destination: FIELDS.destination, recipient: FIELDS.recipient, timeout: FIELDS.timeout } } as const;
  const tx = signBridgeTx(op, { signer: { address: '0x' + '00'.repeat(20), key }, chainId: 'svc-a', nonce: 4n, gasPrice: 10n ** 9n, value: FIELDS.amount });
  assert.is(tx.gasLimit, bridgeGas(tx.data));
  const any = decodeTx(Buffer.from(tx.raw.slice(2), 'hex'));
  assert.is(any.type, TxType.Standard);
  const decoded = any as StandardTx;
  assert.is(toHex(decoded.to!), BRIDGE_ADDRESS);
  assert.is(decoded.value, FIELDS.amount);
  assert.is(decoded.nonce, 4n);
  assert.is(decoded.gasLimit, tx.gasLimit);
  const back = decodeBridgeOp(decoded.data);
  assert.is(back.op, BridgeOp.Lock);
  if (back.op === BridgeOp.Lock) assert.is(back.body.timeout, FIELDS.timeout);
});

test('parseChainSpec: two URLs, or a devnet directory; anything else is refused', async () => {
  const s = await parseChainSpec('http://127.0.0.1:8080/, http://127.0.0.1:8546', '--source');
  assert.equal(s, { beaconUrl: 'http://127.0.0.1:8080', executionUrl: 'http://127.0.0.1:8546' });
  const usage = await parseChainSpec('http://127.0.0.1:8080', '--source').then(() => undefined, (e: SvcError) => e);
  assert.is(usage?.code, 'USAGE');
  const badUrl = await parseChainSpec('ftp://x,http://127.0.0.1:1', '--dest').then(() => undefined, (e: SvcError) => e);
  assert.is(badUrl?.code, 'INVALID_URL');
  await withTempDir(async (dir) => {
    const none = await parseChainSpec(dir, '--dest').then(() => undefined, (e: SvcError) => e);
    assert.is(none?.code, 'DEVNET_NOT_FOUND');
    assert.ok(none?.message.includes('--dest') && none.message.includes(dir), none?.message);
  });
});

test('token amounts, durations and wei parse strictly (USAGE otherwise)', () => {
  assert.is(parseTokens('5'), 5n * 10n ** 18n);
  assert.is(parseTokens('0.25'), 25n * 10n ** 16n);
  assert.is(parseTokens('1.000000000000000001'), 10n ** 18n + 1n);
  for (const bad of ['', '-1', '1.', '.5', '1e3', '0x10', '1.0000000000000000001', '01']) expectError(() => parseTokens(bad), UsageError, { code: 'USAGE' });
  assert.is(parseDuration('90s', '--timeout'), 90);
  assert.is(parseDuration('90', '--timeout'), 90);
  assert.is(parseDuration('10m', '--timeout'), 600);
  assert.is(parseDuration('2h', '--timeout'), 7200);
  assert.is(parseDuration('1d', '--timeout'), 86_400);
  for (const bad of ['', '0s', '-5m', '1.5h', '10y', 'm']) expectError(() => parseDuration(bad, '--timeout'), UsageError, { code: 'USAGE' });
  assert.is(parseWei(undefined, '--gas-price'), undefined);
  assert.is(parseWei('1000', '--gas-price'), 1000n);
  expectError(() => parseWei('1.5', '--gas-price'), UsageError, { code: 'USAGE' });
});

test.run();
