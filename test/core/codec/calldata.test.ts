/** The contract calldata codec: every tag's exact bytes, round trips, malformed input and CLI arguments. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import {
  addressTopic,
  type CallValue,
  CalldataError,
  decodeCall,
  decodeDeploy,
  decodeValues,
  encodeCall,
  encodeDeploy,
  encodeValue,
  encodeValues,
  eventTopic,
  parseCliArg,
  topicAddress,
  valueToJson,
} from '../../../src/core/codec/calldata.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { expectError } from '../../helpers/assert.js';

const ADDR = '0x' + 'ab'.repeat(20);
const B32 = '0x' + '11'.repeat(32);
const ALL: CallValue[] = [
  { type: 'bool', value: true },
  { type: 'bool', value: false },
  { type: 'u64', value: 0n },
  { type: 'u64', value: (1n << 64n) - 1n },
  { type: 'u256', value: 0n },
  { type: 'u256', value: (1n << 256n) - 1n },
  { type: 'address', value: ADDR },
  { type: 'bytes', value: new Uint8Array(0) },
  { type: 'bytes', value: Uint8Array.of(1, 2, 3) },
  { type: 'string', value: '' },
  { type: 'string', value: 'héllo ✓' },
  { type: 'bytes32', value: B32 },
];

test('each tag encodes to the documented bytes', () => {
  assert.is(toHex(encodeValue({ type: 'bool', value: true })), '0x0101');
  assert.is(toHex(encodeValue({ type: 'bool', value: false })), '0x0100');
  assert.is(toHex(encodeValue({ type: 'u64', value: 0x0102n })), '0x020201000000000000');
  assert.is(toHex(encodeValue({ type: 'u256', value: 0x0102n })), '0x03' + '00'.repeat(30) + '0102');
  assert.is(toHex(encodeValue({ type: 'address', value: ADDR })), '0x04' + 'ab'.repeat(20));
  assert.is(toHex(encodeValue({ type: 'bytes', value: Uint8Array.of(9, 8) })), '0x05020000000908');
  assert.is(toHex(encodeValue({ type: 'string', value: 'hi' })), '0x06020000006869');
  assert.is(toHex(encodeValue({ type: 'bytes32', value: B32 })), '0x07' + '11'.repeat(32));
});

test('values round-trip, one at a time and concatenated', () => {
  for (const v of ALL) assert.equal(decodeValues(encodeValue(v)), [v], v.type);
  assert.equal(decodeValues(encodeValues(ALL)), ALL);
  assert.equal(decodeValues(new Uint8Array(0)), []);
});

test('call data: length-prefixed method name, then the arguments', () => {
  const data = encodeCall('transfer', [{ type: 'address', value: ADDR }, { type: 'u256', value: 5n }]);
  assert.is(data[0], 8);
  assert.is(new TextDecoder().decode(data.subarray(1, 9)), 'transfer');
  const { method, args } = decodeCall(data);
  assert.is(method, 'transfer');
  assert.equal(decodeValues(args), [{ type: 'address', value: ADDR }, { type: 'u256', value: 5n }]);
  assert.is(decodeCall(encodeCall('x'.repeat(64))).method, 'x'.repeat(64));
});

test('deploy data: u32 LE code length, the code, then the constructor arguments', () => {
  const code = Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0);
  const data = encodeDeploy(code, [{ type: 'string', value: 'Token' }]);
  assert.is(toHex(data.subarray(0, 4)), '0x08000000');
  const d = decodeDeploy(data);
  assert.is(toHex(d.code), toHex(code));
  assert.equal(decodeValues(d.args), [{ type: 'string', value: 'Token' }]);
});

test('malformed input is a CalldataError naming the problem', () => {
  const bad = (bytes: number[], startsWith: string) => expectError(() => decodeValues(Uint8Array.from(bytes)), CalldataError, { code: 'CALLDATA_MALFORMED', status: 400, messageStartsWith: startsWith });
  bad([0x08], 'unknown value tag 0x08');
  bad([0x00], 'unknown value tag 0x00');
  bad([0x01], 'value 0 (bool) is truncated');
  bad([0x01, 0x02], 'value 0 (bool) must be 0 or 1');
  bad([0x02, 1, 2, 3], 'value 0 (u64) is truncated');
  bad([0x03, ...new Array(31).fill(0)], 'value 0 (u256) is truncated');
  bad([0x04, 1], 'value 0 (address) is truncated');
  bad([0x05, 1, 0], 'value 0 (bytes length) is truncated');
  bad([0x05, 3, 0, 0, 0, 1], 'value 0 (bytes) is truncated');
  bad([0x06, 1, 0, 0, 0, 0xff], 'value 0 (string) is not valid UTF-8');
  bad([0x01, 1, 0x07], 'value 1 (bytes32) is truncated');
  // A huge declared length is refused, not allocated.
  bad([0x05, 0xff, 0xff, 0xff, 0xff], 'value 0 (bytes) is truncated');

  expectError(() => decodeCall(new Uint8Array(0)), CalldataError, { messageStartsWith: 'call data is empty' });
  expectError(() => decodeCall(Uint8Array.of(0)), CalldataError, { messageStartsWith: 'method name length 0' });
  expectError(() => decodeCall(Uint8Array.of(65, ...new Array(65).fill(0x61))), CalldataError, { messageStartsWith: 'method name length 65' });
  expectError(() => decodeCall(Uint8Array.of(3, 0x61)), CalldataError, { messageStartsWith: 'call data ends inside the method name' });
  expectError(() => decodeCall(Uint8Array.of(2, 0x61, 0x20)), CalldataError, { messageStartsWith: 'method name must be' });
  expectError(() => decodeDeploy(Uint8Array.of(1, 0)), CalldataError, { messageStartsWith: 'deploy data is 2 bytes' });
  expectError(() => decodeDeploy(Uint8Array.of(0, 0, 0, 0)), CalldataError, { message: 'deploy data carries no code' });
  expectError(() => decodeDeploy(Uint8Array.of(5, 0, 0, 0, 1)), CalldataError, { messageStartsWith: 'deploy data ends inside the code' });

  expectError(() => encodeCall(''), CalldataError, { messageStartsWith: 'method name must be' });
  expectError(() => encodeCall('x'.repeat(65)), CalldataError);
  expectError(() => encodeCall('é'), CalldataError);
  expectError(() => encodeDeploy(new Uint8Array(0)), CalldataError);
  expectError(() => encodeValue({ type: 'u64', value: 1n << 64n }), CalldataError, { message: `u64 out of range: ${1n << 64n}` });
  expectError(() => encodeValue({ type: 'u64', value: -1n }), CalldataError);
  expectError(() => encodeValue({ type: 'u256', value: 1n << 256n }), CalldataError);
  expectError(() => encodeValue({ type: 'address', value: '0x12' }), CalldataError, { messageStartsWith: 'address must be 0x and 40 hex digits' });
  expectError(() => encodeValue({ type: 'bytes32', value: ADDR }), CalldataError);
});

test('parseCliArg infers types and honours explicit type:value', () => {
  assert.equal(parseCliArg(ADDR.toUpperCase().replace('0X', '0x')), { type: 'address', value: ADDR });
  assert.equal(parseCliArg('123'), { type: 'u256', value: 123n });
  assert.equal(parseCliArg('0'), { type: 'u256', value: 0n });
  assert.equal(parseCliArg('true'), { type: 'bool', value: true });
  assert.equal(parseCliArg('false'), { type: 'bool', value: false });
  assert.equal(parseCliArg('0x0102'), { type: 'bytes', value: Uint8Array.of(1, 2) });
  assert.equal(parseCliArg('0x'), { type: 'bytes', value: new Uint8Array(0) });
  assert.equal(parseCliArg('hello world'), { type: 'string', value: 'hello world' });
  assert.equal(parseCliArg('0123'), { type: 'string', value: '0123' }, 'a leading zero is not a canonical number');
  assert.equal(parseCliArg('-5'), { type: 'string', value: '-5' });
  assert.equal(parseCliArg('u64:5'), { type: 'u64', value: 5n });
  assert.equal(parseCliArg('u64:0x10'), { type: 'u64', value: 16n });
  assert.equal(parseCliArg('u256:' + ((1n << 256n) - 1n)), { type: 'u256', value: (1n << 256n) - 1n });
  assert.equal(parseCliArg('address:' + ADDR), { type: 'address', value: ADDR });
  assert.equal(parseCliArg('bytes32:' + B32), { type: 'bytes32', value: B32 });
  assert.equal(parseCliArg('bytes:0xff'), { type: 'bytes', value: Uint8Array.of(255) });
  assert.equal(parseCliArg('string:123'), { type: 'string', value: '123' });
  assert.equal(parseCliArg('string:a:b'), { type: 'string', value: 'a:b' });
  assert.equal(parseCliArg('bool:true'), { type: 'bool', value: true });
  assert.equal(parseCliArg('note:hi'), { type: 'string', value: 'note:hi' }, 'an unknown prefix is part of a string');
  expectError(() => parseCliArg('u64:18446744073709551616'), CalldataError, { messageStartsWith: 'u64 out of range' });
  expectError(() => parseCliArg('u64:-1'), CalldataError, { messageStartsWith: 'u64 must be a decimal or 0x hex number' });
  expectError(() => parseCliArg('u256:abc'), CalldataError);
  expectError(() => parseCliArg('address:0x12'), CalldataError, { messageStartsWith: 'address must be 0x and 40 hex digits' });
  expectError(() => parseCliArg('bytes32:0x12'), CalldataError);
  expectError(() => parseCliArg('bytes:0x1'), CalldataError, { messageStartsWith: 'bytes must be 0x' });
  expectError(() => parseCliArg('bool:yes'), CalldataError, { messageStartsWith: 'bool must be true or false' });
  expectError(() => parseCliArg('0x123'), CalldataError, { messageStartsWith: 'bytes must be 0x' });
});

test('JSON form and event topics', () => {
  assert.equal(ALL.map(valueToJson).slice(2, 8), [
    { type: 'u64', value: '0' },
    { type: 'u64', value: '18446744073709551615' },
    { type: 'u256', value: '0' },
    { type: 'u256', value: ((1n << 256n) - 1n).toString() },
    { type: 'address', value: ADDR },
    { type: 'bytes', value: '0x' },
  ]);
  assert.is(eventTopic('Transfer'), toHex(sha3(new TextEncoder().encode('Transfer'))));
  assert.is(addressTopic(ADDR), '0x' + '00'.repeat(12) + 'ab'.repeat(20));
  assert.is(topicAddress(addressTopic(ADDR)), ADDR);
  assert.is(topicAddress(B32), undefined);
});

test.run();
