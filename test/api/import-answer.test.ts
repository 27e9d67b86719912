/**
 * The compact newPayload answer (src/api/import-answer.ts): the hand-written encoder writes
 * exactly the SSZ of ImportAnswerSsz, the decoder gives back the JSON answer's shape (receipts
 * parsed on access), and malformed bytes are MalformedError.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError } from '../../src/core/errors.js';
import { decodeImportAnswer, encodeImportAnswer, ImportAnswerSsz } from '../../src/api/import-answer.js';
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
const result = (receipts: Receipt[]): ImportResult => ({ status: 'VALID', block_hash: '0x' + 'ab'.repeat(32), block_number: 7, state_root: '0x' + 'cd'.repeat(32), gas_used: 21000 * receipts.length, receipts, canonical: true, already_known: false });

test('the encoder writes ImportAnswerSsz exactly, and the decoder returns the JSON answer', () => {
  for (const receipts of [[], [receipt(0)], [receipt(0), receipt(1, { error: 'ünïcode “quoted” \\ error', status: 0 }), receipt(2)]]) {
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
      receipts: json.map((j) => new Uint8Array(Buffer.from(j, 'utf8'))),
    });
    assert.equal(new Uint8Array(bytes), new Uint8Array(viaLibrary));
    const decoded = decodeImportAnswer(bytes);
    assert.equal(JSON.parse(JSON.stringify(decoded)), r, 'the same JSON as the JSON answer');
    assert.equal(decoded.receipts, receipts);
  }
});

test('malformed answers are MalformedError', () => {
  const good = encodeImportAnswer(result([receipt(0), receipt(1)]), [receipt(0), receipt(1)].map((x) => JSON.stringify(x)));
  const flipped = (at: number, v: number) => {
    const b = good.slice();
    b[at] = v;
    return b;
  };
  const badOffset = good.slice();
  Buffer.from(badOffset.buffer).writeUInt32LE(good.length, 86 + 4);
  const notJson = encodeImportAnswer(result([receipt(0)]), ['{not json']);
  for (const [what, bytes, lazy] of [
    ['empty', new Uint8Array(0), false],
    ['truncated fixed part', good.subarray(0, 80), false],
    ['boolean 2', flipped(80, 2), false],
    ['receipts offset', flipped(82, 90), false],
    ['first list offset not a multiple of 4', flipped(86, 9), false],
    ['list offset past the end', badOffset, false],
    ['a receipt that is not JSON', notJson, true],
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
