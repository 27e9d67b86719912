/**
 * Transactions: typed envelope encoding, signing and verification, strict JSON, gas rules.
 *
 * Size of a standard (type 0) transfer envelope, with an empty `data`:
 *   1     type byte
 *   5325  SSZ fixed part: nonce 8 + gasPrice 8 + gasLimit 8 + offset(to) 4 + value 32
 *         + offset(data) 4 + ML-DSA-65 signature 3309 + ML-DSA-65 public key 1952
 *   20    `to` (ByteList[20])
 *   0     `data`
 *   = 5346 bytes (a deployment is 1 + 5325 + len(code) bytes).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { GWEI, MAX_TX_BYTES, PUBLIC_KEY_BYTES, SIGNATURE_BYTES, WEI_PER_TOKEN } from '../../src/core/constants.js';
import { bigintToBytesBE, bytesToBigintBE, concatBytes, parseHex, toHex, u64LE } from '../../src/core/codec/bytes.js';
import { addressFromPublicKey, ecdsaAddressFromPublicKey } from '../../src/core/crypto/address.js';
import { chainIdBytes, Domain, domainTagBytes } from '../../src/core/crypto/domain.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { MalformedError, SvcError, TX_ERRORS, TxError, type TxErrorName } from '../../src/core/errors.js';
import { StandardTxSsz } from '../../src/core/types/ssz.js';
import {
  type AuthorizationTx,
  type EcdsaAuthorizedTx,
  type StandardTx,
  type Transaction,
  type ValueTxFields,
  checkGasPrice,
  decodeTx,
  decodeTxViews,
  encodeTx,
  encodeUnsignedTx,
  EnvelopeVerifier,
  maxCost,
  signAuthorizationTx,
  signEcdsaAuthorizedTx,
  signStandardTx,
  txHash,
  txKind,
  txSender,
  txSigningHash,
  verifyEnvelope,
  verifyTxSignature,
} from '../../src/core/types/transaction.js';
import { checkGasLimit, intrinsicGas } from '../../src/core/gas.js';
import { type ValueTxJson, txFromJson, txToJson } from '../../src/core/types/transaction-json.js';
import { bytesIs, bytesNot, expectError, filled, flipByte } from '../helpers/assert.js';
import { httpStatusOf } from '../../src/api/errors.js';

const CHAIN = 'svc-test';
const OTHER_CHAIN = 'svc-other';
const key = keygenFromSeed(filled(32, 1));
const otherKey = keygenFromSeed(filled(32, 2));
const sender = addressFromPublicKey(key.publicKey);
const TO = filled(20, 0xab);
const MAX_GAS = 30_000_000n;

const transferFields: ValueTxFields = {
  nonce: 0n,
  gasPrice: GWEI,
  gasLimit: 21_000n,
  to: TO,
  value: WEI_PER_TOKEN,
  data: new Uint8Array(0),
};

const transfer = signStandardTx(transferFields, key, CHAIN);

/** An unsigned value tx for gas-rule tests (signatures are irrelevant there). */
function unsignedTx(fields: Partial<ValueTxFields>): StandardTx {
  return { type: 0, ...transferFields, ...fields, signature: new Uint8Array(SIGNATURE_BYTES), publicKey: new Uint8Array(PUBLIC_KEY_BYTES) };
}

/** txToJson as a mutable plain record (through JSON text, as a client would send it). */
function jsonOf(tx: Transaction): Record<string, unknown> {
  return JSON.parse(JSON.stringify(txToJson(tx))) as Record<string, unknown>;
}

function expectInvalidSignature(fn: () => unknown): void {
  expectError(fn, TxError, { specName: 'ErrInvalidSignature', code: 'INVALID_SIGNATURE', message: 'invalid transaction signature', status: 400 });
}

// ---------------------------------------------------------------------------------------------
// standard transfer: encoding

test('transfer: envelope is type byte 0 + SSZ, exactly 5346 bytes', () => {
  const env = encodeTx(transfer);
  assert.is(env.length, 5346);
  assert.is(env[0], 0);
  bytesIs(env.subarray(1), StandardTxSsz.serialize({
    nonce: transfer.nonce,
    gasPrice: transfer.gasPrice,
    gasLimit: transfer.gasLimit,
    to: TO,
    value: bigintToBytesBE(transfer.value, 32),
    data: new Uint8Array(0),
    signature: transfer.signature,
    publicKey: transfer.publicKey,
  }));
});

test('transfer: SSZ field order is Nonce, GasPrice, GasLimit, To, Value, Data, Signature, PublicKey', () => {
  const tx = signStandardTx({ ...transferFields, nonce: 7n, gasPrice: 3n * GWEI, gasLimit: 50_000n, data: Uint8Array.of(0xca, 0xfe) }, key, CHAIN);
  const env = encodeTx(tx);
  const body = env.subarray(1);
  bytesIs(body.subarray(0, 8), u64LE(7n), 'nonce uint64 LE');
  bytesIs(body.subarray(8, 16), u64LE(3n * GWEI), 'gasPrice uint64 LE');
  bytesIs(body.subarray(16, 24), u64LE(50_000n), 'gasLimit uint64 LE');
  bytesIs(body.subarray(24, 28), Uint8Array.of(0xcd, 0x14, 0, 0), 'offset(to) = 5325');
  bytesIs(body.subarray(28, 60), bigintToBytesBE(WEI_PER_TOKEN, 32), 'value 32-byte big-endian');
  bytesIs(body.subarray(60, 64), Uint8Array.of(0xe1, 0x14, 0, 0), 'offset(data) = 5345');
  bytesIs(body.subarray(64, 64 + SIGNATURE_BYTES), tx.signature, 'signature');
  bytesIs(body.subarray(3373, 3373 + PUBLIC_KEY_BYTES), tx.publicKey, 'public key');
  bytesIs(body.subarray(5325, 5345), TO, 'to');
  bytesIs(body.subarray(5345), Uint8Array.of(0xca, 0xfe), 'data');
  assert.is(env.length, 5348);
});

test('transfer: encode → decode round trip', () => {
  const env = encodeTx(transfer);
  const back = decodeTx(env) as StandardTx;
  assert.is(back.type, 0);
  assert.is(back.nonce, 0n);
  assert.is(back.gasPrice, GWEI);
  assert.is(back.gasLimit, 21_000n);
  bytesIs(back.to!, TO);
  assert.is(back.value, WEI_PER_TOKEN);
  bytesIs(back.data, new Uint8Array(0));
  bytesIs(back.signature, transfer.signature);
  bytesIs(back.publicKey, key.publicKey);
  bytesIs(encodeTx(back), env);
});

test('decodeTx copies its byte fields out of a Node Buffer, which the caller may reuse; decodeTxViews keeps views', () => {
  const withData = signStandardTx({ ...transferFields, data: filled(64, 7) }, key, CHAIN);
  const env = encodeTx(withData);
  // A Buffer, as file reads and HTTP bodies are: its slice() is a view, not a copy.
  const buf = Buffer.from(env);
  const copied = decodeTx(buf) as StandardTx;
  const viewed = decodeTxViews(Buffer.from(env)) as StandardTx;
  buf.fill(0);
  bytesIs(copied.to!, TO);
  bytesIs(copied.data, filled(64, 7));
  bytesIs(copied.signature, withData.signature);
  bytesIs(copied.publicKey, key.publicKey);
  for (const f of [copied.to!, copied.data, copied.signature, copied.publicKey]) assert.ok(f.byteLength === f.buffer.byteLength, 'a buffer of its own');
  assert.is(viewed.signature.buffer, viewed.publicKey.buffer, 'views share the envelope');
});

test('transfer: txHash = SHA3-256(signed envelope); sender = address of the public key', () => {
  bytesIs(txHash(transfer), sha3(encodeTx(transfer)));
  bytesIs(txSender(transfer), sender);
  bytesIs(sender, sha3(key.publicKey).slice(12));
});

test('transfer: unsigned form zero-fills signature and public key', () => {
  const unsigned = encodeUnsignedTx(transfer);
  assert.is(unsigned.length, 5346);
  const body = unsigned.subarray(1);
  assert.ok(body.subarray(64, 64 + SIGNATURE_BYTES + PUBLIC_KEY_BYTES).every((b) => b === 0));
  bytesIs(body.subarray(0, 64), encodeTx(transfer).subarray(1, 65));
  // The unsigned form does not depend on who signed.
  bytesIs(encodeUnsignedTx(signStandardTx(transferFields, otherKey, CHAIN)), unsigned);
});

test('transfer: signing hash = SHA3-256(tag32 ‖ chainId12 ‖ unsigned envelope)', () => {
  const tag = new Uint8Array(32);
  tag.set(new TextEncoder().encode('svc/tx/v1'));
  const chain = new Uint8Array(12);
  chain.set(new TextEncoder().encode(CHAIN));
  bytesIs(txSigningHash(transfer, CHAIN), sha3(tag, chain, encodeUnsignedTx(transfer)));
  bytesIs(txSigningHash(transfer, CHAIN), sha3(domainTagBytes(Domain.Tx), chainIdBytes(CHAIN), encodeUnsignedTx(transfer)));
});

test('transfer: signing hash changes with the chain id and with every field', () => {
  const base = toHex(txSigningHash(transfer, CHAIN));
  assert.is.not(toHex(txSigningHash(transfer, OTHER_CHAIN)), base);
  const variants: Partial<ValueTxFields>[] = [
    { nonce: 1n }, { gasPrice: GWEI + 1n }, { gasLimit: 21_001n }, { to: filled(20, 0xac) }, { to: null }, { value: WEI_PER_TOKEN + 1n }, { data: Uint8Array.of(0) },
  ];
  const seen = new Set([base]);
  for (const v of variants) {
    const h = toHex(txSigningHash({ ...transfer, ...v }, CHAIN));
    assert.not.ok(seen.has(h), `signing hash must change for ${Object.keys(v)[0]}`);
    seen.add(h);
  }
});

// ---------------------------------------------------------------------------------------------
// standard transfer: signatures

test('transfer: verifyTxSignature returns the sender address', () => {
  bytesIs(verifyTxSignature(transfer, CHAIN), sender);
  bytesIs(verifyTxSignature(decodeTx(encodeTx(transfer)), CHAIN), sender);
});

test('transfer: signing is hedged (two signatures differ) and both verify', () => {
  const again = signStandardTx(transferFields, key, CHAIN);
  bytesNot(again.signature, transfer.signature);
  bytesNot(txHash(again), txHash(transfer));
  bytesIs(verifyTxSignature(again, CHAIN), sender);
});

test('transfer: a signature made for chain A is an invalid transaction signature on chain B', () => {
  expectInvalidSignature(() => verifyTxSignature(transfer, OTHER_CHAIN));
  const onB = signStandardTx(transferFields, key, OTHER_CHAIN);
  bytesIs(verifyTxSignature(onB, OTHER_CHAIN), sender);
  expectInvalidSignature(() => verifyTxSignature(onB, CHAIN));
});

test('transfer: tampered fields fail verification', () => {
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, value: transfer.value + 1n }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, nonce: 1n }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, gasPrice: transfer.gasPrice * 2n }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, to: filled(20, 0xac) }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, data: Uint8Array.of(1) }, CHAIN));
});

test('transfer: tampered signature or substituted public key fails', () => {
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, signature: flipByte(transfer.signature, 0) }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, signature: flipByte(transfer.signature, SIGNATURE_BYTES - 1) }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, publicKey: otherKey.publicKey }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, signature: new Uint8Array(SIGNATURE_BYTES) }, CHAIN));
});

test('transfer: a signature of the wrong size is invalid, not a crash', () => {
  expectInvalidSignature(() => verifyTxSignature({ ...transfer, signature: transfer.signature.slice(0, 3293) }, CHAIN));
});

// ---------------------------------------------------------------------------------------------
// JSON

test('JSON: canonical shape and key order of a transfer', () => {
  const j = txToJson(transfer) as ValueTxJson;
  assert.equal(Object.keys(j), ['type', 'nonce', 'gasPrice', 'gasLimit', 'to', 'value', 'data', 'from', 'hash', 'publicKey', 'signature']);
  assert.is(j.type, 0);
  assert.is(j.nonce, 0);
  assert.is(j.gasPrice, '1000000000');
  assert.is(j.gasLimit, 21000);
  assert.is(j.to, '0x' + 'ab'.repeat(20));
  assert.is(j.value, '1000000000000000000');
  assert.is(j.data, '0x');
  assert.is(j.from, toHex(sender));
  assert.is(j.hash, toHex(txHash(transfer)));
  assert.is(j.publicKey, toHex(key.publicKey));
  assert.is(j.signature, toHex(transfer.signature));
});

test('JSON: txToJson → txFromJson → identical envelope and identical JSON text', () => {
  const text = JSON.stringify(txToJson(transfer));
  const back = txFromJson(JSON.parse(text));
  bytesIs(encodeTx(back), encodeTx(transfer));
  assert.is(JSON.stringify(txToJson(back)), text);
});

test('JSON: type, data, from and hash are optional; mixed-case hex accepted', () => {
  const j = jsonOf(transfer);
  delete j.type;
  delete j.from;
  delete j.hash;
  delete j.data;
  j.to = (j.to as string).toUpperCase().replace('0X', '0x');
  bytesIs(encodeTx(txFromJson(j)), encodeTx(transfer));
  const k = jsonOf(transfer);
  k.from = '0x' + (k.from as string).slice(2).toUpperCase();
  bytesIs(encodeTx(txFromJson(k)), encodeTx(transfer));
});

const BAD_WEI: Array<[string, unknown]> = [
  ['number', 1000000000],
  ['big number', 1e18],
  ['hex', '0x3b9aca00'],
  ['float', '1.5'],
  ['negative', '-1'],
  ['empty', ''],
  ['plus sign', '+1'],
  ['leading zero', '01'],
  ['exponent', '1e9'],
  ['null', null],
  ['missing', undefined],
];

test('JSON: value not a canonical base-10 string is exactly "malformed tx.Value"', () => {
  for (const [what, bad] of BAD_WEI) {
    const j = jsonOf(transfer);
    j.value = bad;
    const err = expectError(() => txFromJson(j), MalformedError, { code: 'MALFORMED_INPUT', field: 'tx.Value', status: 400 });
    assert.is(err.message, 'malformed tx.Value', what);
  }
});

test('JSON: gasPrice not a canonical base-10 string is exactly "malformed tx.GasPrice"', () => {
  for (const [what, bad] of BAD_WEI) {
    const j = jsonOf(transfer);
    j.gasPrice = bad;
    const err = expectError(() => txFromJson(j), MalformedError, { code: 'MALFORMED_INPUT', field: 'tx.GasPrice' });
    assert.is(err.message, 'malformed tx.GasPrice', what);
  }
});

test('JSON: value and gasPrice out of range', () => {
  const j = jsonOf(transfer);
  j.value = (1n << 256n).toString();
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.Value: exceeds 256-bit range' });
  const k = jsonOf(transfer);
  k.gasPrice = (1n << 64n).toString();
  expectError(() => txFromJson(k), MalformedError, { message: 'malformed tx.GasPrice: exceeds 64-bit range' });
});

test('JSON: nonce as a string is malformed tx.Nonce', () => {
  for (const bad of ['0', '1', 1.5, -1, null]) {
    const j = jsonOf(transfer);
    j.nonce = bad;
    expectError(() => txFromJson(j), MalformedError, { field: 'tx.Nonce', message: 'malformed tx.Nonce: expected a non-negative integer' });
  }
});

test('JSON: negative or non-integer gasLimit is malformed tx.GasLimit', () => {
  for (const bad of [-1, -21000, 21000.5, '21000', 2 ** 53]) {
    const j = jsonOf(transfer);
    j.gasLimit = bad;
    expectError(() => txFromJson(j), MalformedError, { field: 'tx.GasLimit', message: 'malformed tx.GasLimit: expected a non-negative integer' });
  }
});

test('JSON: bad `to`', () => {
  const j = jsonOf(transfer);
  j.to = '0x' + 'ab'.repeat(19);
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.To', message: 'malformed tx.To: expected 20 bytes, got 19' });
  j.to = '0x' + 'ab'.repeat(21);
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.To', message: 'malformed tx.To: expected 20 bytes, got 21' });
  j.to = 'ab'.repeat(20);
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.To: expected 0x-prefixed hex with an even number of digits' });
  j.to = '0x';
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.To: expected 20 bytes, got 0' });
  delete j.to;
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.To', message: 'malformed tx.To: required (null deploys a contract)' });
});

test('JSON: odd-length data is malformed tx.Data', () => {
  const j = jsonOf(transfer);
  j.data = '0xabc';
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Data', message: 'malformed tx.Data: expected 0x-prefixed hex with an even number of digits' });
  j.data = 12;
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Data', message: 'malformed tx.Data: expected a 0x-prefixed hex string' });
});

test('JSON: a 3293-byte (round-3 Dilithium3) signature is rejected', () => {
  const j = jsonOf(transfer);
  j.signature = toHex(transfer.signature.slice(0, 3293));
  expectError(() => txFromJson(j), MalformedError, { code: 'MALFORMED_INPUT', field: 'tx.Signature', message: 'malformed tx.Signature: expected 3309 bytes, got 3293' });
  j.signature = toHex(concatBytes(transfer.signature, Uint8Array.of(0)));
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.Signature: expected 3309 bytes, got 3310' });
  delete j.signature;
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.Signature: expected a 0x-prefixed hex string' });
});

test('JSON: wrong-length public key is malformed tx.PublicKey', () => {
  const j = jsonOf(transfer);
  j.publicKey = toHex(key.publicKey.slice(0, 1951));
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.PublicKey', message: 'malformed tx.PublicKey: expected 1952 bytes, got 1951' });
});

test('JSON: unknown fields are rejected by name', () => {
  for (const name of ['gas', 'Value', 'dilithiumSignature', 'ecdsaSignature', 'chainId']) {
    const j = jsonOf(transfer);
    j[name] = '1';
    expectError(() => txFromJson(j), MalformedError, { field: `tx.${name}`, message: `malformed tx.${name}: unknown field` });
  }
});

test('JSON: a `from` that does not derive from the public key is ErrInvalidSender', () => {
  const j = jsonOf(transfer);
  j.from = toHex(addressFromPublicKey(otherKey.publicKey));
  expectError(() => txFromJson(j), TxError, {
    specName: 'ErrInvalidSender',
    code: 'INVALID_SENDER',
    message: 'invalid sender: address derived from the public key does not match from',
  });
  j.from = '0x1234';
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.From', message: 'malformed tx.From: expected 20 bytes, got 2' });
});

test('JSON: a `hash` that does not match is malformed tx.Hash', () => {
  const j = jsonOf(transfer);
  j.hash = toHex(flipByte(txHash(transfer), 31));
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Hash', message: 'malformed tx.Hash: does not match the transaction' });
  j.hash = '0x00';
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Hash', message: 'malformed tx.Hash: expected 32 bytes, got 1' });
  // A stale hash after editing a field is caught too.
  const k = jsonOf(transfer);
  k.value = '2';
  expectError(() => txFromJson(k), MalformedError, { message: 'malformed tx.Hash: does not match the transaction' });
});

test('JSON: bad type and non-object input', () => {
  const j = jsonOf(transfer);
  j.type = 4;
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Type', message: 'malformed tx.Type: exceeds 3' });
  j.type = '0';
  expectError(() => txFromJson(j), MalformedError, { field: 'tx.Type', message: 'malformed tx.Type: expected a non-negative integer' });
  for (const bad of [null, [], 'tx', 5]) expectError(() => txFromJson(bad), MalformedError, { field: 'tx', message: 'malformed tx: expected an object' });
});

// ---------------------------------------------------------------------------------------------
// decodeTx

test('decodeTx: truncated envelopes are malformed tx.Envelope', () => {
  const env = encodeTx(transfer);
  for (const n of [2, 100, 5325, env.length - 1]) {
    expectError(() => decodeTx(env.slice(0, n)), MalformedError, { code: 'MALFORMED_INPUT', field: 'tx.Envelope', messageStartsWith: 'malformed tx.Envelope: ' });
  }
  expectError(() => decodeTx(new Uint8Array(0)), MalformedError, { field: 'tx.Envelope', message: 'malformed tx.Envelope: too short' });
  expectError(() => decodeTx(Uint8Array.of(0)), MalformedError, { field: 'tx.Envelope', message: 'malformed tx.Envelope: too short' });
});

test('decodeTx: unknown type byte is malformed tx.Type', () => {
  const env = encodeTx(transfer);
  for (const t of [4, 9, 0x7f, 0xff]) {
    const bad = env.slice();
    bad[0] = t;
    expectError(() => decodeTx(bad), MalformedError, { field: 'tx.Type', message: `malformed tx.Type: unknown transaction type ${t}` });
  }
});

test('decodeTx: trailing bytes after a fixed-size payload are malformed tx.Envelope', () => {
  const auth = signAuthorizationTx(1, { nonce: 0n, ecdsaAddress: filled(20, 9) }, key, CHAIN);
  const env = encodeTx(auth);
  bytesIs(encodeTx(decodeTx(env)), env);
  expectError(() => decodeTx(concatBytes(env, Uint8Array.of(0))), MalformedError, { field: 'tx.Envelope', messageStartsWith: 'malformed tx.Envelope: ' });
});

test('decodeTx: bytes appended to a type-0 envelope become `data` (SSZ: last variable field) and break the signature', () => {
  const env = concatBytes(encodeTx(transfer), Uint8Array.of(0x5a));
  const tx = decodeTx(env) as StandardTx;
  bytesIs(tx.data, Uint8Array.of(0x5a));
  expectInvalidSignature(() => verifyTxSignature(tx, CHAIN));
});

test('decodeTx: a `to` of 1..19 bytes (valid SSZ ByteList[20]) is malformed tx.To', () => {
  const body = StandardTxSsz.serialize({
    nonce: 0n, gasPrice: GWEI, gasLimit: 21_000n, to: filled(5, 1), value: new Uint8Array(32), data: new Uint8Array(0),
    signature: transfer.signature, publicKey: transfer.publicKey,
  });
  expectError(() => decodeTx(concatBytes(Uint8Array.of(0), body)), MalformedError, { field: 'tx.To', message: 'malformed tx.To: expected 20 bytes' });
});

test('decodeTx: whatever it accepts is the canonical encoding of what it returns (offsets moved every way)', () => {
  const withTo = signStandardTx({ ...transferFields, data: filled(7, 3) }, key, CHAIN);
  const deploy = signStandardTx({ ...transferFields, to: null, data: filled(40, 4) }, key, CHAIN);
  const authorized = signEcdsaAuthorizedTx({ ...transferFields, from: sender, data: filled(3, 5) }, filled(32, 7), CHAIN);
  for (const tx of [transfer, withTo, deploy, authorized]) {
    const env = encodeTx(tx);
    bytesIs(encodeTx(decodeTx(env)), env);
    // The `to` offset at 1+24 and the `data` offset at 1+24+4+32, moved either way. Moving a
    // deployment's data offset by 20 is another transaction's canonical encoding (its first 20
    // data bytes become `to`): accepted, and it encodes back to exactly these bytes.
    let refused = 0;
    for (const at of [25, 61]) {
      for (const delta of [-4, -1, 1, 3, 20]) {
        const moved = env.slice();
        const view = new DataView(moved.buffer);
        view.setUint32(at, view.getUint32(at, true) + delta, true);
        let back: Transaction | undefined;
        try {
          back = decodeTx(moved);
        } catch (err) {
          assert.instance(err, MalformedError);
          refused++;
        }
        if (back) bytesIs(encodeTx(back), moved);
      }
    }
    assert.ok(refused >= 9, `${refused} refused`);
  }
});

test('decodeTx and decodeTxViews read a type-0 envelope field for field as the SSZ schema does (views share the bytes, copies do not)', () => {
  const cases = [
    transfer,
    signStandardTx({ ...transferFields, to: null, data: filled(300, 9) }, key, CHAIN),
    signStandardTx({ ...transferFields, nonce: (1n << 53n) - 1n, gasPrice: (1n << 64n) - 1n, value: (1n << 256n) - 1n, data: filled(1, 1) }, key, CHAIN),
    signStandardTx({ ...transferFields, nonce: 0n, gasPrice: 0n, gasLimit: 0n, value: 0n }, key, CHAIN),
  ];
  for (const tx of cases) {
    const env = encodeTx(tx);
    const v = StandardTxSsz.deserialize(env.subarray(1));
    for (const decoded of [decodeTx(env), decodeTxViews(env)] as StandardTx[]) {
      assert.is(decoded.type, 0);
      assert.is(decoded.nonce, v.nonce);
      assert.is(decoded.gasPrice, v.gasPrice);
      assert.is(decoded.gasLimit, v.gasLimit);
      assert.is(decoded.value, bytesToBigintBE(v.value));
      if (v.to.length === 0) assert.is(decoded.to, null);
      else bytesIs(decoded.to!, v.to);
      bytesIs(decoded.data, v.data);
      bytesIs(decoded.signature, v.signature);
      bytesIs(decoded.publicKey, v.publicKey);
    }
    assert.is((decodeTxViews(env) as StandardTx).signature.buffer, env.buffer);
    assert.is.not((decodeTx(env) as StandardTx).signature.buffer, env.buffer);
  }
});

test('decodeTx: envelopes above MAX_TX_BYTES are refused before parsing', () => {
  const big = new Uint8Array(MAX_TX_BYTES + 1);
  expectError(() => decodeTx(big), MalformedError, { field: 'tx.Envelope', message: `malformed tx.Envelope: larger than ${MAX_TX_BYTES} bytes` });
  assert.is(MAX_TX_BYTES, 270_336);
});

test('encodeTx: refuses ill-formed in-memory transactions', () => {
  expectError(() => encodeTx({ ...transfer, signature: transfer.signature.slice(0, 3293) }), MalformedError, { message: 'malformed tx.Signature: expected 3309 bytes, got 3293' });
  expectError(() => encodeTx({ ...transfer, nonce: -1n }), MalformedError, { field: 'tx.Nonce', message: 'malformed tx.Nonce: must be an integer in [0, 2^53-1]' });
  expectError(() => encodeTx({ ...transfer, nonce: 1n << 53n }), MalformedError, { field: 'tx.Nonce' });
  expectError(() => encodeTx({ ...transfer, value: 1n << 256n }), MalformedError, { message: 'malformed tx.Value: exceeds 256-bit range' });
  expectError(() => encodeTx({ ...transfer, gasPrice: 1n << 64n }), MalformedError, { message: 'malformed tx.GasPrice: exceeds 64-bit range' });
  expectError(() => encodeTx({ ...transfer, type: 7 } as unknown as Transaction), MalformedError, { message: 'malformed tx.Type: unknown transaction type 7' });
});

// ---------------------------------------------------------------------------------------------
// gas rules

test('TxError: every spec error name has its machine code and the spec message by default', () => {
  const expected: Array<[TxErrorName, string, string]> = [
    ['ErrInvalidSignature', 'INVALID_SIGNATURE', 'invalid transaction signature'],
    ['ErrInvalidSender', 'INVALID_SENDER', 'invalid sender: address derived from the public key does not match from'],
    ['ErrInvalidNonce', 'NONCE_TOO_LOW', 'nonce too low'],
    ['ErrInsufficientFunds', 'INSUFFICIENT_FUNDS', 'insufficient balance for value + gas'],
    ['ErrGasTooLow', 'GAS_TOO_LOW', 'intrinsic gas too low'],
    ['ErrGasTooHigh', 'GAS_TOO_HIGH', 'gas limit exceeds protocol max'],
    ['ErrGasPriceTooLow', 'GAS_PRICE_TOO_LOW', 'gas price below minimum'],
  ];
  assert.equal(Object.keys(TX_ERRORS).sort(), expected.map((e) => e[0]).sort());
  for (const [name, code, message] of expected) {
    const err = new TxError(name);
    assert.ok(err instanceof SvcError);
    assert.is(err.name, 'TxError');
    assert.is(err.specName, name);
    assert.is(err.code, code);
    assert.is(err.message, message);
    assert.is(httpStatusOf(err), 400);
  }
  assert.is(new TxError('ErrGasTooLow', 'custom').message, 'custom');
});

test('intrinsic gas: transfer and call 21000, deployment 32000 + 200 × len(code), authorisation 0', () => {
  assert.is(intrinsicGas(unsignedTx({})), 21_000n);
  assert.is(intrinsicGas(unsignedTx({ data: filled(100, 1) })), 21_000n);
  assert.is(intrinsicGas(unsignedTx({ to: null })), 32_000n);
  assert.is(intrinsicGas(unsignedTx({ to: null, data: filled(100, 1) })), 52_000n);
  assert.is(intrinsicGas(unsignedTx({ to: null, data: filled(149_840, 1) })), 30_000_000n);
  const auth: AuthorizationTx = { type: 1, nonce: 0n, ecdsaAddress: filled(20, 1), signature: new Uint8Array(SIGNATURE_BYTES), publicKey: new Uint8Array(PUBLIC_KEY_BYTES) };
  assert.is(intrinsicGas(auth), 0n);
  checkGasLimit(auth, MAX_GAS);
  checkGasPrice(auth, GWEI);
  assert.is(maxCost(auth), 0n);
});

test('checkGasLimit: 20999 is ErrGasTooLow', () => {
  checkGasLimit(unsignedTx({ gasLimit: 21_000n }), MAX_GAS);
  expectError(() => checkGasLimit(unsignedTx({ gasLimit: 20_999n }), MAX_GAS), TxError, {
    specName: 'ErrGasTooLow',
    code: 'GAS_TOO_LOW',
    messageStartsWith: 'intrinsic gas too low',
    message: 'intrinsic gas too low: gas limit 20999 < 21000',
  });
  expectError(() => checkGasLimit(unsignedTx({ gasLimit: 0n }), MAX_GAS), TxError, { specName: 'ErrGasTooLow' });
});

test('checkGasLimit: deployment below 32000 + 200 × len is ErrGasTooLow', () => {
  checkGasLimit(unsignedTx({ to: null, data: filled(100, 1), gasLimit: 52_000n }), MAX_GAS);
  expectError(() => checkGasLimit(unsignedTx({ to: null, data: filled(100, 1), gasLimit: 51_999n }), MAX_GAS), TxError, {
    specName: 'ErrGasTooLow',
    message: 'intrinsic gas too low: gas limit 51999 < 52000',
  });
});

test('checkGasLimit: above the max is ErrGasTooHigh with both numbers', () => {
  checkGasLimit(unsignedTx({ gasLimit: 30_000_000n }), MAX_GAS);
  expectError(() => checkGasLimit(unsignedTx({ gasLimit: 30_000_001n }), MAX_GAS), TxError, {
    specName: 'ErrGasTooHigh',
    code: 'GAS_TOO_HIGH',
    message: 'gas limit 30000001 exceeds protocol max 30000000',
  });
});

test('checkGasPrice: below 1 gwei is "gas price below minimum"', () => {
  checkGasPrice(unsignedTx({ gasPrice: GWEI }), GWEI);
  for (const p of [GWEI - 1n, 0n]) {
    expectError(() => checkGasPrice(unsignedTx({ gasPrice: p }), GWEI), TxError, {
      specName: 'ErrGasPriceTooLow',
      code: 'GAS_PRICE_TOO_LOW',
      message: 'gas price below minimum',
    });
  }
});

test('maxCost = value + gasLimit × gasPrice; txKind classification', () => {
  assert.is(maxCost(unsignedTx({})), WEI_PER_TOKEN + 21_000n * GWEI);
  assert.is(txKind(unsignedTx({})), 'transfer');
  assert.is(txKind(unsignedTx({ data: Uint8Array.of(1) })), 'contract_call');
  assert.is(txKind(unsignedTx({ to: null })), 'contract_deploy');
});

// ---------------------------------------------------------------------------------------------
// types 1 and 2: ECDSA (de)authorisation

const ECDSA_PRIV = filled(32, 7);
const ECDSA_ADDR = ecdsaAddressFromPublicKey(secp256k1.getPublicKey(ECDSA_PRIV, false));

for (const type of [1, 2] as const) {
  test(`type ${type}: sign, encode → decode, verify, JSON round trip`, () => {
    const tx = signAuthorizationTx(type, { nonce: 5n, ecdsaAddress: ECDSA_ADDR }, key, CHAIN);
    const env = encodeTx(tx);
    assert.is(env[0], type);
    // 1 + nonce 8 + address 20 + signature 3309 + public key 1952
    assert.is(env.length, 5290);
    const back = decodeTx(env) as AuthorizationTx;
    assert.is(back.type, type);
    assert.is(back.nonce, 5n);
    bytesIs(back.ecdsaAddress, ECDSA_ADDR);
    bytesIs(encodeTx(back), env);
    bytesIs(verifyTxSignature(back, CHAIN), sender);
    bytesIs(txSender(back), sender);
    assert.is(txKind(tx), type === 1 ? 'ecdsa_authorization' : 'ecdsa_revocation');
    // Authorisations use their own domain tag.
    bytesIs(txSigningHash(tx, CHAIN), sha3(domainTagBytes(Domain.Authorization), chainIdBytes(CHAIN), encodeUnsignedTx(tx)));
    const j = txToJson(tx);
    assert.equal(Object.keys(j), ['type', 'nonce', 'ecdsaAddress', 'from', 'hash', 'publicKey', 'signature']);
    const text = JSON.stringify(j);
    const fromJson = txFromJson(JSON.parse(text));
    bytesIs(encodeTx(fromJson), env);
    assert.is(JSON.stringify(txToJson(fromJson)), text);
    expectInvalidSignature(() => verifyTxSignature(tx, OTHER_CHAIN));
  });
}

test('types 1/2: an authorisation signature does not verify as a revocation, nor with another address', () => {
  const tx = signAuthorizationTx(1, { nonce: 0n, ecdsaAddress: ECDSA_ADDR }, key, CHAIN);
  expectInvalidSignature(() => verifyTxSignature({ ...tx, type: 2 }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...tx, ecdsaAddress: filled(20, 1) }, CHAIN));
  expectInvalidSignature(() => verifyTxSignature({ ...tx, nonce: 1n }, CHAIN));
});

test('types 1/2: JSON rejections', () => {
  const tx = signAuthorizationTx(2, { nonce: 0n, ecdsaAddress: ECDSA_ADDR }, key, CHAIN);
  const j = jsonOf(tx);
  j.value = '0';
  expectError(() => txFromJson(j), MalformedError, { message: 'malformed tx.value: unknown field' });
  const k = jsonOf(tx);
  k.ecdsaAddress = '0x1234';
  expectError(() => txFromJson(k), MalformedError, { field: 'tx.EcdsaAddress', message: 'malformed tx.EcdsaAddress: expected 20 bytes, got 2' });
  const m = jsonOf(tx);
  m.from = toHex(ECDSA_ADDR);
  expectError(() => txFromJson(m), TxError, { specName: 'ErrInvalidSender' });
});

// ---------------------------------------------------------------------------------------------
// type 3: ECDSA-authorised value transaction

const type3Fields = { ...transferFields, nonce: 2n, from: sender };
const type3 = signEcdsaAuthorizedTx(type3Fields, ECDSA_PRIV, CHAIN);

test('type 3: sign, encode → decode, verify returns the ECDSA key address', () => {
  const env = encodeTx(type3);
  assert.is(env[0], 3);
  // 1 + fixed (24 + 4 + 32 + 4 + from 20 + signature 65 = 149) + to 20
  assert.is(env.length, 170);
  const back = decodeTx(env) as EcdsaAuthorizedTx;
  assert.is(back.type, 3);
  bytesIs(back.from, sender);
  bytesIs(back.ecdsaSignature, type3.ecdsaSignature);
  bytesIs(encodeTx(back), env);
  bytesIs(verifyTxSignature(back, CHAIN), ECDSA_ADDR);
  // The account acted for is `from`, not the ECDSA key.
  bytesIs(txSender(back), sender);
});

test('type 3: signature is r ‖ s ‖ v over the signing hash, low-s, verifiable with plain secp256k1', () => {
  const sig = type3.ecdsaSignature;
  assert.is(sig.length, 65);
  assert.ok(sig[64] === 0 || sig[64] === 1);
  const hash = txSigningHash(type3, CHAIN);
  bytesIs(hash, sha3(domainTagBytes(Domain.Tx), chainIdBytes(CHAIN), encodeUnsignedTx(type3)));
  assert.ok(secp256k1.verify(sig.subarray(0, 64), hash, secp256k1.getPublicKey(ECDSA_PRIV), { prehash: false }));
});

test('type 3: flipped signature byte fails or recovers a different address', () => {
  for (const i of [0, 5, 31, 32, 50, 63]) {
    const bad = { ...type3, ecdsaSignature: flipByte(type3.ecdsaSignature, i) };
    let recovered: Uint8Array | undefined;
    try {
      recovered = verifyTxSignature(bad, CHAIN);
    } catch (err) {
      assert.ok(err instanceof TxError && err.specName === 'ErrInvalidSignature', `byte ${i}: ${(err as Error).message}`);
    }
    if (recovered) bytesNot(recovered, ECDSA_ADDR, `byte ${i}`);
  }
});

test('type 3: recovery id above 1 is an invalid signature', () => {
  const sig = type3.ecdsaSignature.slice();
  sig[64] = 27;
  expectInvalidSignature(() => verifyTxSignature({ ...type3, ecdsaSignature: sig }, CHAIN));
  sig[64] = 2;
  expectInvalidSignature(() => verifyTxSignature({ ...type3, ecdsaSignature: sig }, CHAIN));
});

test('type 3: the high-s twin (r, n - s, v ^ 1) is rejected (EIP-2), so the tx hash is not malleable', () => {
  const n = secp256k1.Point.CURVE().n;
  const sig = type3.ecdsaSignature;
  const s = bytesToBigintBE(sig.subarray(32, 64));
  const twin = concatBytes(sig.subarray(0, 32), bigintToBytesBE(n - s, 32), Uint8Array.of(sig[64]! ^ 1));
  expectInvalidSignature(() => verifyTxSignature({ ...type3, ecdsaSignature: twin }, CHAIN));
});

test('type 3: another chain id or tampered value does not recover the signer', () => {
  for (const [tx, chain] of [[type3, OTHER_CHAIN], [{ ...type3, value: 2n }, CHAIN]] as const) {
    let recovered: Uint8Array | undefined;
    try {
      recovered = verifyTxSignature(tx, chain);
    } catch (err) {
      assert.ok(err instanceof TxError && err.specName === 'ErrInvalidSignature');
    }
    if (recovered) bytesNot(recovered, ECDSA_ADDR);
  }
});

test('type 3: JSON round trip; `from` is required', () => {
  const j = txToJson(type3);
  assert.equal(Object.keys(j), ['type', 'nonce', 'gasPrice', 'gasLimit', 'to', 'value', 'data', 'from', 'hash', 'ecdsaSignature']);
  const text = JSON.stringify(j);
  const back = txFromJson(JSON.parse(text));
  bytesIs(encodeTx(back), encodeTx(type3));
  assert.is(JSON.stringify(txToJson(back)), text);
  const k = jsonOf(type3);
  delete k.from;
  expectError(() => txFromJson(k), MalformedError, { field: 'tx.From', message: 'malformed tx.From: expected a 0x-prefixed hex string' });
  const m = jsonOf(type3);
  m.ecdsaSignature = '0x' + '00'.repeat(64);
  expectError(() => txFromJson(m), MalformedError, { field: 'tx.EcdsaSignature', message: 'malformed tx.EcdsaSignature: expected 65 bytes, got 64' });
  const p = jsonOf(type3);
  p.signature = toHex(transfer.signature);
  expectError(() => txFromJson(p), MalformedError, { message: 'malformed tx.signature: unknown field' });
});

test('deployment: to = null round-trips through SSZ (empty ByteList) and JSON', () => {
  const code = parseHex('0x6080604052348015600f57600080fd5b50', 'code');
  const tx = signStandardTx({ ...transferFields, to: null, value: 0n, gasLimit: 32_000n + 200n * BigInt(code.length), data: code }, key, CHAIN);
  const env = encodeTx(tx);
  assert.is(env.length, 1 + 5325 + code.length);
  const back = decodeTx(env) as StandardTx;
  assert.is(back.to, null);
  bytesIs(back.data, code);
  assert.is(txKind(back), 'contract_deploy');
  checkGasLimit(back, MAX_GAS);
  const j = txToJson(tx) as ValueTxJson;
  assert.is(j.to, null);
  bytesIs(encodeTx(txFromJson(JSON.parse(JSON.stringify(j)))), env);
  bytesIs(verifyTxSignature(back, CHAIN), sender);
});

test('verifyEnvelope (no decode) agrees with verifyTxSignature: signer, tampering, chain id, other types', () => {
  const env = encodeTx(transfer);
  bytesIs(verifyEnvelope(env, CHAIN)!, sender);
  assert.is(verifyEnvelope(env, 'svc-other'), null);
  for (const at of [1, 40, 70, 3380, env.length - 1]) assert.is(verifyEnvelope(flipByte(env, at), CHAIN), null, `flipped byte ${at}`);
  // A Node Buffer view must verify exactly like a plain Uint8Array (liboqs-js refuses Buffers).
  bytesIs(verifyEnvelope(Buffer.from(env), CHAIN)!, sender);
  const deploy = signStandardTx({ ...transferFields, to: null, gasLimit: 40_000n, data: filled(7, 9) }, key, CHAIN);
  bytesIs(verifyEnvelope(encodeTx(deploy), CHAIN)!, sender);
  const t3 = signEcdsaAuthorizedTx({ ...transferFields, from: sender }, new Uint8Array(32).fill(3), CHAIN);
  bytesIs(verifyEnvelope(encodeTx(t3), CHAIN)!, verifyTxSignature(t3, CHAIN));
  assert.is(verifyEnvelope(Uint8Array.of(9, 9, 9), CHAIN), null);
});

test('EnvelopeVerifier (one reused preimage buffer, hex signer) agrees with verifyEnvelope, whatever it verified before', () => {
  const v = new EnvelopeVerifier(CHAIN);
  const hex = toHex(sender);
  const env = encodeTx(transfer);
  const original = new Uint8Array(env);
  // A long deployment first, so the shorter envelopes after it run on a buffer holding older bytes past their end.
  const deploy = encodeTx(signStandardTx({ ...transferFields, to: null, gasLimit: 500_000n, data: filled(2000, 9) }, key, CHAIN));
  const t3 = signEcdsaAuthorizedTx({ ...transferFields, from: sender }, new Uint8Array(32).fill(3), CHAIN);
  const cases: Array<[string, Uint8Array]> = [
    ['deployment', deploy],
    ['transfer', env],
    ...[1, 40, 70, 3380, env.length - 1].map((at): [string, Uint8Array] => [`flipped byte ${at}`, flipByte(env, at)]),
    ['Node Buffer', Buffer.from(env)],
    ['view into a larger buffer', concatBytes(new Uint8Array(7), env, new Uint8Array(5)).subarray(7, 7 + env.length)],
    ['truncated', env.subarray(0, env.length - 1)],
    ['type 3', encodeTx(t3)],
    ['garbage', Uint8Array.of(9, 9, 9)],
    ['transfer again', env],
  ];
  for (const [what, e] of cases) {
    const want = verifyEnvelope(e, CHAIN);
    assert.is(v.signer(e), want && toHex(want), what);
  }
  assert.is(v.signer(env), hex);
  assert.is(v.signer(deploy), hex);
  assert.is(new EnvelopeVerifier(OTHER_CHAIN).signer(env), null, 'the chain id is part of the preimage');
  bytesIs(env, original, 'the envelope is read, never zeroed in place');
});

test('EnvelopeVerifier: remembered signer addresses are confirmed by the whole key, and the memory stays bounded', () => {
  const v = new EnvelopeVerifier(CHAIN);
  const address = (pk: Uint8Array): string => (v as unknown as { address(pk: Uint8Array): string }).address(pk);
  const two = encodeTx(signStandardTx(transferFields, otherKey, CHAIN));
  for (let i = 0; i < 3; i++) {
    assert.is(v.signer(encodeTx(transfer)), toHex(sender));
    assert.is(v.signer(two), toHex(addressFromPublicKey(otherKey.publicKey)));
  }
  // Same leading bytes (the memory's key), another key: its own address, and the first one's stays right.
  const lookalike = new Uint8Array(key.publicKey);
  lookalike[lookalike.length - 1]! ^= 1;
  assert.is(address(lookalike), toHex(addressFromPublicKey(lookalike)));
  assert.is(address(key.publicKey), toHex(sender));
  // Far more distinct keys than it holds: every answer is still the key's own address.
  const keys = Array.from({ length: 1500 }, (_, i) => {
    const pk = new Uint8Array(key.publicKey);
    new DataView(pk.buffer).setUint32(0, i);
    return pk;
  });
  for (const pk of [...keys, ...keys.slice(0, 10)]) assert.is(address(pk), toHex(addressFromPublicKey(pk)));
  assert.ok((v as unknown as { addresses: Map<string, unknown> }).addresses.size <= 1024, 'bounded');
});

test.run();
