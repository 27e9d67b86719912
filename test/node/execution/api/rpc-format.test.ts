/** JSON-RPC object shapes: a type-3 transaction shows its real secp256k1 r, s and v (a sender recovers from them); receipts' logs. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { concatBytes, parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { ecdsaAddressFromPublicKey } from '../../../../src/core/crypto/address.js';
import { GWEI } from '../../../../src/core/constants.js';
import { signEcdsaAuthorizedTx, txSigningHash } from '../../../../src/core/types/transaction.js';
import { txToJson } from '../../../../src/core/types/transaction-json.js';
import { rpcReceipt, rpcTx } from '../../../../src/node/execution/api/rpc-format.js';

test('a type-3 transaction shows its real r, s and v: the ECDSA signer recovers from them', () => {
  const key = secp256k1.utils.randomSecretKey();
  const tx = signEcdsaAuthorizedTx({ nonce: 3n, gasPrice: GWEI, gasLimit: 21_000n, to: new Uint8Array(20).fill(7), value: 5n, data: new Uint8Array(0), from: new Uint8Array(20).fill(9) }, key, 'svc-test');
  const o = rpcTx(txToJson(tx), 31337, undefined, undefined);
  assert.is(o.svcType, '0x3');
  assert.is(o.type, '0x0');
  assert.ok(o.v === '0x1b' || o.v === '0x1c');
  assert.is(o.yParity, o.v === '0x1b' ? '0x0' : '0x1');
  const compact = concatBytes(Uint8Array.of(Number(o.yParity)), parseHex(o.r, 'r', 32), parseHex(o.s, 's', 32));
  const pub = secp256k1.recoverPublicKey(compact, txSigningHash(tx, 'svc-test'), { prehash: false });
  const uncompressed = secp256k1.Point.fromBytes(pub).toBytes(false);
  assert.is(toHex(ecdsaAddressFromPublicKey(uncompressed)), toHex(ecdsaAddressFromPublicKey(secp256k1.getPublicKey(key, false))));
  assert.is(o.from, '0x' + '09'.repeat(20));
});

test('a receipt lists its logs in Ethereum form and its contract address', () => {
  const log = { address: '0x' + '11'.repeat(20), topics: ['0x' + '22'.repeat(32)], data: '0x01', blockNumber: 4, blockHash: '0x' + '33'.repeat(32), transactionHash: '0x' + '44'.repeat(32), transactionIndex: 2, logIndex: 5 };
  const r = rpcReceipt({ transactionHash: log.transactionHash, transactionIndex: 2, blockHash: log.blockHash, blockNumber: 4, from: log.address, to: null, kind: 'contract_deploy', status: 1, gasUsed: 50_000, cumulativeGasUsed: 90_000, effectiveGasPrice: '1000000000', fee: '0', contractAddress: '0x' + '55'.repeat(20), logs: [log] });
  assert.is(r.contractAddress, '0x' + '55'.repeat(20));
  assert.equal(r.logs, [{ ...log, blockNumber: '0x4', transactionIndex: '0x2', logIndex: '0x5', removed: false }]);
  assert.is.not(r.logsBloom, '0x' + '00'.repeat(256));
  const failed = rpcReceipt({ transactionHash: log.transactionHash, transactionIndex: 0, blockHash: log.blockHash, blockNumber: 4, from: log.address, to: log.address, kind: 'contract_call', status: 0, gasUsed: 1, cumulativeGasUsed: 1, effectiveGasPrice: '1', fee: '1', contractAddress: null, logs: [], error: 'revert: no' });
  assert.is(failed.status, '0x0');
  // Error(string) ABI: selector, offset 0x20, length 2, "no" right-padded to a word.
  assert.is(failed.revertReason, '0x08c379a0' + '20'.padStart(64, '0') + '2'.padStart(64, '0') + '6e6f'.padEnd(64, '0'));
  const trapped = rpcReceipt({ transactionHash: log.transactionHash, transactionIndex: 0, blockHash: log.blockHash, blockNumber: 4, from: log.address, to: log.address, kind: 'contract_call', status: 0, gasUsed: 1, cumulativeGasUsed: 1, effectiveGasPrice: '1', fee: '1', contractAddress: null, logs: [], error: 'out of gas' });
  assert.is(trapped.revertReason, undefined, 'no revert data when the run did not revert');
});

test.run();
