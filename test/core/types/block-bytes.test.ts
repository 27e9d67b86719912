/**
 * Reads of a stored block's SSZ without decoding it: the header, the signature and the
 * transaction envelopes are exactly what decoding and encoding give, for blocks with no, one and
 * many transactions and with attestations after them; offsets that do not fit are MALFORMED_INPUT.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { MalformedError } from '../../../src/core/errors.js';
import { signAttestation } from '../../../src/core/types/attestation.js';
import { type Block, blockMerkleRoot, bodyMerkleRoot, buildSignedBlock, encodeBlock } from '../../../src/core/types/block.js';
import { encodeTx, txHash } from '../../../src/core/types/transaction.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { envelopesOfBlockBytes, headerOfBlockBytes, signatureOfBlockBytes } from '../../../src/core/types/block-bytes.js';
import { filled } from '../../helpers/assert.js';
import { CHAIN_ID, devnet, transfer } from '../../node/execution/fixture.js';

const { keys } = devnet();

function block(txCount: number, withAttestation: boolean): Block {
  const txs = Array.from({ length: txCount }, (_, n) => transfer(keys.accounts[n % 2]!, { nonce: n, data: filled(n % 5, n) }));
  const attestations = withAttestation ? [signAttestation(1, { slot: 3, beaconBlockRoot: filled(32, 9), source: { epoch: 0, root: filled(32, 1) }, target: { epoch: 0, root: filled(32, 9) } }, keys.validators[1]!.mldsa, CHAIN_ID)] : [];
  return buildSignedBlock({ chainId: CHAIN_ID, index: 7, timestampMs: 1_700_000_014_000, parentHash: filled(32, 1), transactions: txs, key: keys.validators[0]!.mldsa, validatorIndex: 0, validatorId: parseHex(keys.validators[0]!.address, 'address', 20), vrfSeed: filled(32, 2), randaoReveal: filled(32, 3), stateRoot: filled(32, 4), attestations });
}

test('header, signature and envelopes read from the bytes equal the decoded block\'s', () => {
  for (const [n, att] of [[0, false], [1, false], [5, true], [40, false]] as const) {
    const b = block(n, att);
    // Inside a larger buffer, as a stored or received view may be.
    const inner = encodeBlock(b);
    const padded = new Uint8Array(inner.length + 10);
    padded.set(inner, 7);
    const bytes = padded.subarray(7, 7 + inner.length);
    assert.equal(headerOfBlockBytes(bytes), b.header, `${n} txs: header`);
    assert.equal(new Uint8Array(signatureOfBlockBytes(bytes)), b.signature, `${n} txs: signature`);
    const envelopes = envelopesOfBlockBytes(bytes).map((e) => new Uint8Array(e));
    assert.equal(envelopes, b.transactions.map(encodeTx), `${n} txs: envelopes`);
    assert.equal(envelopes.map((e) => sha3(e)), b.transactions.map(txHash));
    assert.equal(blockMerkleRoot(envelopes.map((e) => sha3(e)), b.attestations, b.slashings), bodyMerkleRoot(b.transactions, b.attestations, b.slashings));
  }
});

test('offsets that do not fit are MALFORMED_INPUT, never a read past the bytes', () => {
  const bytes = encodeBlock(block(3, false));
  const headerBytes = 3505;
  const spoil = (at: number, value: number): Uint8Array => {
    const copy = bytes.slice();
    new DataView(copy.buffer).setUint32(at, value, true);
    return copy;
  };
  const listStart = new DataView(bytes.buffer, bytes.byteOffset).getUint32(headerBytes, true);
  const cases: Uint8Array[] = [
    bytes.subarray(0, 100),
    spoil(headerBytes, bytes.length + 1), // list starts past the end
    spoil(headerBytes + 4 + 3309, bytes.length + 1), // list ends past the end
    spoil(listStart, 3), // first element offset not a multiple of 4
    spoil(listStart, 0),
    spoil(listStart + 4, 1_000_000), // second element past the list
  ];
  for (const c of cases) {
    assert.throws(() => envelopesOfBlockBytes(c), (e: unknown) => e instanceof MalformedError && e.code === 'MALFORMED_INPUT');
  }
  assert.throws(() => headerOfBlockBytes(bytes.subarray(0, 10)), (e: unknown) => e instanceof MalformedError);
});

test.run();
