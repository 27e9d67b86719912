/** Bridge recipient recognition (core/bridge/gas.ts): block import asks it of every transaction, as bytes. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { isBridgeAddress } from '../../../src/core/bridge/gas.js';
import { BRIDGE_ADDRESS, DEPOSIT_ADDRESS, EXIT_ADDRESS, RANDAO_COMMIT_ADDRESS } from '../../../src/core/constants.js';

test('isBridgeAddress: the bridge address as bytes or hex (any case), nothing else', () => {
  const bridge = parseHex(BRIDGE_ADDRESS, 'bridge', 20);
  assert.ok(isBridgeAddress(bridge));
  assert.ok(isBridgeAddress(BRIDGE_ADDRESS));
  assert.ok(isBridgeAddress(BRIDGE_ADDRESS.toUpperCase().replace('0X', '0x')));
  // A view into a larger buffer, as decoded transactions hold their recipient.
  const framed = new Uint8Array(40);
  framed.set(bridge, 7);
  assert.ok(isBridgeAddress(framed.subarray(7, 27)));
  assert.not.ok(isBridgeAddress(null));
  for (const other of [DEPOSIT_ADDRESS, EXIT_ADDRESS, RANDAO_COMMIT_ADDRESS]) {
    assert.not.ok(isBridgeAddress(other), other);
    assert.not.ok(isBridgeAddress(parseHex(other, 'other', 20)), other);
  }
  // Same leading bytes, another length: not the address.
  assert.not.ok(isBridgeAddress(bridge.subarray(0, 19)));
  assert.not.ok(isBridgeAddress(new Uint8Array([...bridge, 0])));
  assert.not.ok(isBridgeAddress(new Uint8Array(20)));
});

test.run();
