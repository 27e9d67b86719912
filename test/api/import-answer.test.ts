/**
 * The compact newPayload answer (src/api/import-answer.ts): the hand-written encoder writes
 * exactly the SSZ of ImportAnswerSsz, the decoder gives back the JSON answer's shape (receipts
 * parsed on access) and every receipt's outcome without parsing it, receiptsWhere parses only
 * the receipts it keeps, and malformed bytes are MalformedError.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError } from '../../src/core/errors.js';
import { decodeImportAnswer, encodeImportAnswer, ImportAnswerSsz, receiptsWhere } from '../../src/api/import-answer.js';
import type { ImportResult, Receipt } from '../../src/api/execution.js';

const receipt = (i: number, extra: Partial<Receipt> = {}): Receipt => ({
  transactionHash: '0x' + String(i).padStart(64, '0'),
  transactionIndex: i,
  blockHash: '0x' + 'ab'.repeat(32),
  blockNumber: 7,
  from: '0x' + '11'.repeat(20),
  to: '0x' + '22'.repeat(20),
  kind: 'transfer',
  status: 1,
  gasUsed: 21000,
  cumulativeGasUsed: 21000 * (i + 1),
  effectiveGasPrice: '1000000000',
  fee: '21000000000000',
  contractAddress: null,
  logs: [],
  ...extra,
});
const result = (receipts: Receipt[]): ImportResult => ({ status: 'VALID', block_hash: '0x' + 'ab'.repeat(32), block_number: 7, state_root: '0x' + 'cd'.repeat(32), gas_used: 21000 * receipts.length, receipts, canonical: true, already_known: false, registry_changed: true });

test('the encoder writes ImportAnswerSsz exactly, and the decoder returns the JSON answer', () => {
  // The last list: kinds of one length that differ (contract_call, bridge_refund), repeats and changes.
  const mixed = [receipt(0, { kind: 'contract_call' }), receipt(1, { kind: 'bridge_refund' }), receipt(2, { kind: 'bridge_refund' }), receipt(3), receipt(4, { kind: 'contract_call' })];
  for (const receipts of [[], [receipt(0)], [receipt(0), receipt(1, { error: 'ünïcode “quoted” \\ error', status: 0 }), receipt(2)], mixed]) {
    const r = result(receipts);
    const json = receipts.map((x) => JSON.stringify(x));
    const bytes = encodeImportAnswer(r, json);
    const viaLibrary = ImportAnswerSsz.serialize({
      blockHash: Buffer.from(r.block_hash.slice(2), 'hex'),
      stateRoot: Buffer.from(r.state_root.slice(2), 'hex'),
      blockNumber: r.block_number,
      gasUsed: r.gas_used,
      canonical: r.canonical,
      alreadyKnown: r.already_known,
      registryChanged: r.registry_changed,
      receipts: json.map((j) => new Uint8Array(Buffer.from(j, 'utf8'))),
      statuses: new Uint8Array(receipts.map((x) => x.status)),
      kinds: receipts.map((x) => new Uint8Array(Buffer.from(x.kind, 'latin1'))),
    });
    assert.equal(new Uint8Array(bytes), new Uint8Array(viaLibrary));
    // The receipts' bytes as the body file encoded them give the same answer.
    const encoded = { bytes: new Uint8Array(Buffer.from(json.join(''), 'utf8')), lengths: Uint32Array.from(json, (j) => Buffer.byteLength(j, 'utf8')) };
    assert.equal(new Uint8Array(encodeImportAnswer(r, encoded)), new Uint8Array(bytes), 'pre-encoded receipts');
    if (receipts.length > 0) assert.throws(() => encodeImportAnswer(r, { bytes: encoded.bytes.subarray(1), lengths: encoded.lengths }), (err: unknown) => err instanceof RangeError);
    const decoded = decodeImportAnswer(bytes);
    assert.equal(JSON.parse(JSON.stringify(decoded)), r, 'the same JSON as the JSON answer');
    assert.equal(decoded.receipts, receipts);
    assert.equal(decoded.outcomes, receipts.map((x) => ({ status: x.status, kind: x.kind })));
  }
});

test('receiptsWhere parses only the receipts whose outcome it keeps, and filters a JSON answer alike', () => {
  const receipts = [receipt(0), receipt(1, { kind: 'bridge_lock' }), receipt(2, { kind: 'bridge_lock', status: 0, error: 'revert: no' }), receipt(3)];
  const json = receipts.map((x) => JSON.stringify(x));
  // Receipt 0's JSON is broken: were it parsed, the selection would throw.
  json[0] = json[0]!.slice(0, -1);
  const decoded = decodeImportAnswer(encodeImportAnswer(result(receipts), json));
  const keep = (o: { status: number; kind: string }) => o.status === 1 && o.kind === 'bridge_lock';
  assert.equal(receiptsWhere(decoded, keep), [receipts[1]]);
  assert.equal(decoded.outcomes, receipts.map((x) => ({ status: x.status, kind: x.kind })));
  assert.equal(receiptsWhere(result(receipts), keep), [receipts[1]]);
  assert.throws(() => decoded.receipt(0), (err: unknown) => err instanceof MalformedError);
  assert.throws(() => decoded.receipt(4), (err: unknown) => err instanceof RangeError);
});

test('malformed answers are MalformedError', () => {
  const good = encodeImportAnswer(result([receipt(0), receipt(1)]), [receipt(0), receipt(1)].map((x) => JSON.stringify(x)));
  const flipped = (at: number, v: number) => {
    const b = good.slice();
    b[at] = v;
    return b;
  };
  const view = Buffer.from(good.buffer, good.byteOffset, good.byteLength);
  const statusesAt = view.readUInt32LE(87);
  const kindsAt = view.readUInt32LE(91);
  const withU32 = (at: number, v: number) => {
    const b = good.slice();
    Buffer.from(b.buffer, b.byteOffset, b.byteLength).writeUInt32LE(v, at);
    return b;
  };
  // One status byte more (the kinds list moves up by one): 3 statuses for 2 receipts.
  const extraStatus = new Uint8Array([...good.subarray(0, kindsAt), 1, ...good.subarray(kindsAt)]);
  Buffer.from(extraStatus.buffer).writeUInt32LE(kindsAt + 1, 91);
  const notJson = encodeImportAnswer(result([receipt(0)]), ['{not json']);
  const mislabelled = encodeImportAnswer(result([receipt(0)]), [JSON.stringify(receipt(0, { kind: 'bridge_lock' }))]);
  const misstatused = encodeImportAnswer(result([receipt(0)]), [JSON.stringify(receipt(0, { status: 0 }))]);
  const notAnObject = encodeImportAnswer(result([receipt(0)]), ['null']);
  const badKind = encodeImportAnswer(result([receipt(0, { kind: 'Trans fer' as Receipt['kind'] })]), [JSON.stringify(receipt(0))]);
  const longKind = encodeImportAnswer(result([receipt(0, { kind: 'x'.repeat(65) as Receipt['kind'] })]), [JSON.stringify(receipt(0))]);
  for (const [what, bytes, lazy] of [
    ['empty', new Uint8Array(0), false],
    ['truncated fixed part', good.subarray(0, 80), false],
    ['boolean 2', flipped(80, 2), false],
    ['boolean 2 (registry_changed)', flipped(82, 2), false],
    ['receipts offset', flipped(83, 91), false],
    ['statuses offset before the receipts', withU32(87, 94), false],
    ['kinds offset before the statuses', withU32(91, statusesAt - 1), false],
    ['kinds offset past the end', withU32(91, good.length + 1), false],
    ['first list offset not a multiple of 4', flipped(95, 9), false],
    ['list offset past the end', withU32(95 + 4, statusesAt), false],
    ['more statuses than receipts', extraStatus, false],
    ['fewer kinds than receipts', withU32(kindsAt, 4), false],
    ['kinds list cut short', good.subarray(0, kindsAt + 2), false],
    ['status 2', flipped(statusesAt, 2), false],
    ['a kind that is not a kind name', badKind, false],
    ['a kind over 64 bytes', longKind, false],
    ['a receipt that is not JSON', notJson, true],
    ['a receipt whose kind disagrees with its column', mislabelled, true],
    ['a receipt whose status disagrees with its column', misstatused, true],
    ['a receipt that is not an object', notAnObject, true],
  ] as const) {
    try {
      const d = decodeImportAnswer(bytes);
      if (lazy) void d.receipts;
      assert.unreachable(`${what} decoded`);
    } catch (err) {
      assert.instance(err, MalformedError, `${what}: ${(err as Error).message}`);
    }
  }
});

test.run();
