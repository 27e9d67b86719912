/** Blocks: Merkle root, SignedHeader (100 + 3309 = 3409 bytes), signatures, wire JSON and SSZ. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GWEI, MAX_BLOCK_ATTESTATIONS, SIGNATURE_BYTES } from '../../src/core/constants.js';
import { concatBytes, toHex, u64LE, utf8 } from '../../src/core/codec/bytes.js';
import { addressFromPublicKey } from '../../src/core/crypto/address.js';
import { chainIdBytes, Domain, domainTagBytes } from '../../src/core/crypto/domain.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { randaoReveal } from '../../src/core/crypto/randao.js';
import { vrfProve, vrfSeed } from '../../src/core/crypto/vrf.js';
import { BLOCK_ERRORS, BlockError, CryptoError, MalformedError, SvcError } from '../../src/core/errors.js';
import {
  type Block,
  type BlockHeader,
  blockFromJson,
  blockHash,
  blockToJson,
  canonicalHeaderBytes,
  decodeBlock,
  decodeBlockWithEnvelopes,
  encodeBlock,
  encodeSignedHeader,
  headerSigningHash,
  signBlock,
  signedHeaderOf,
  txMerkleRoot,
  verifyBlockSignature,
  attestationLeaf,
  blockMerkleRoot,
  bodyMerkleRoot,
} from '../../src/core/types/block.js';
import { merkleRoot } from '../../src/core/types/merkle.js';
import { attestationHash, attestationToJson, signAttestation } from '../../src/core/types/attestation.js';
import { BlockHeaderSsz } from '../../src/core/types/ssz.js';
import { encodeTx, signStandardTx, txHash } from '../../src/core/types/transaction.js';
import { bytesIs, bytesNot, expectError, filled, flipByte } from '../helpers/assert.js';
import { httpStatusOf } from '../../src/api/errors.js';

const CHAIN = 'svc-test';
const VALIDATOR_INDEX = 3;
const proposer = keygenFromSeed(filled(32, 1));
const user = keygenFromSeed(filled(32, 2));
const other = keygenFromSeed(filled(32, 3));

const txs = [
  signStandardTx({ nonce: 0n, gasPrice: GWEI, gasLimit: 21_000n, to: filled(20, 0xab), value: 1n, data: new Uint8Array(0) }, user, CHAIN),
  signStandardTx({ nonce: 1n, gasPrice: 2n * GWEI, gasLimit: 60_000n, to: null, value: 0n, data: Uint8Array.of(0x60, 0x00) }, user, CHAIN),
];

const SLOT = 42;
const seed = vrfSeed(filled(32, 0x33), SLOT);
const header: BlockHeader = {
  index: 7,
  timestampMs: 1_700_000_123_456,
  parentHash: filled(32, 0x11),
  merkleRoot: txMerkleRoot(txs),
  validatorId: addressFromPublicKey(proposer.publicKey),
  vrfProof: vrfProve(proposer, seed, CHAIN),
  vrfSeed: seed,
  randaoReveal: randaoReveal(filled(32, 1), 16, 1),
  stateRoot: filled(32, 0x44),
};
const block = signBlock(header, txs, proposer, CHAIN, VALIDATOR_INDEX);

// A block that includes two votes: its merkle_root covers transactions then attestation leaves.
const voter = keygenFromSeed(filled(32, 4));
const vote = (index: number, slot: number, target: number) =>
  signAttestation(index, { slot, beaconBlockRoot: filled(32, 0x21), source: { epoch: target - 1, root: filled(32, 0x22) }, target: { epoch: target, root: filled(32, 0x23) } }, voter, CHAIN);
const votes = [vote(5, 40, 5), vote(6, 41, 5)];
const votingHeader: BlockHeader = { ...header, merkleRoot: bodyMerkleRoot(txs, votes, []) };
const votingBlock = signBlock(votingHeader, txs, proposer, CHAIN, VALIDATOR_INDEX, votes);

function jsonOf(b: Block): Record<string, unknown> & { header: Record<string, unknown> } {
  return JSON.parse(JSON.stringify(blockToJson(b))) as Record<string, unknown> & { header: Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------
// Merkle root

const leaf = (i: number) => sha3(utf8(`leaf-${i}`));
const ZERO32 = new Uint8Array(32);
const countWord = (n: number) => concatBytes(u64LE(n), new Uint8Array(24));

test('merkle: the empty list has the defined root SHA3(0^32 ‖ 0^32), stable across calls', () => {
  bytesIs(merkleRoot([]), sha3(new Uint8Array(64)));
  bytesIs(merkleRoot([]), merkleRoot([]));
  bytesIs(txMerkleRoot([]), sha3(new Uint8Array(64)));
  assert.is(toHex(merkleRoot([])), toHex(sha3(ZERO32, ZERO32)));
});

test('merkle: 1, 2 and 3 leaves follow the padded binary tree with the count mixed in', () => {
  const [a, b, c] = [leaf(0), leaf(1), leaf(2)];
  bytesIs(merkleRoot([a]), sha3(a, countWord(1)));
  bytesIs(merkleRoot([a, b]), sha3(sha3(a, b), countWord(2)));
  bytesIs(merkleRoot([a, b, c]), sha3(sha3(sha3(a, b), sha3(c, ZERO32)), countWord(3)));
  const five = [0, 1, 2, 3, 4].map(leaf);
  const l1 = [sha3(five[0]!, five[1]!), sha3(five[2]!, five[3]!), sha3(five[4]!, ZERO32), sha3(ZERO32, ZERO32)];
  bytesIs(merkleRoot(five), sha3(sha3(sha3(l1[0]!, l1[1]!), sha3(l1[2]!, l1[3]!)), countWord(5)));
});

test('merkle: any leaf count gives the root of the fully padded tree (the padding shortcut changes nothing)', () => {
  const padded = (leaves: Uint8Array[]): Uint8Array => {
    let level = leaves.length === 0 ? [ZERO32] : [...leaves];
    let width = 1;
    while (width < level.length) width <<= 1;
    while (level.length < width) level.push(ZERO32);
    while (level.length > 1) level = Array.from({ length: level.length / 2 }, (_, i) => sha3(level[2 * i]!, level[2 * i + 1]!));
    return sha3(level[0]!, countWord(leaves.length));
  };
  for (const n of [...Array.from({ length: 40 }, (_, i) => i), 63, 64, 65, 1428]) {
    const leaves = Array.from({ length: n }, (_, i) => leaf(i));
    bytesIs(merkleRoot(leaves), padded(leaves), `${n} leaves`);
  }
});

test('merkle: roots for 0..4 leaves are pairwise distinct; order matters; padding is not a leaf', () => {
  const roots = [0, 1, 2, 3, 4].map((n) => toHex(merkleRoot(Array.from({ length: n }, (_, i) => leaf(i)))));
  assert.is(new Set(roots).size, 5);
  bytesNot(merkleRoot([leaf(0), leaf(1)]), merkleRoot([leaf(1), leaf(0)]));
  bytesNot(merkleRoot([leaf(0), leaf(1), leaf(2)]), merkleRoot([leaf(0), leaf(1), leaf(2), ZERO32]));
  bytesNot(merkleRoot([]), merkleRoot([ZERO32]));
});

test('txMerkleRoot: Merkle root over the tx hashes in block order', () => {
  bytesIs(txMerkleRoot(txs), merkleRoot(txs.map(txHash)));
  bytesNot(txMerkleRoot(txs), txMerkleRoot([txs[1]!, txs[0]!]));
});

// ---------------------------------------------------------------------------------------------
// SignedHeader

test('signedHeaderOf: timestamp is floor(ms / 1000)', () => {
  const at = (ms: number) => signedHeaderOf({ ...header, timestampMs: ms }, CHAIN, 0).timestamp;
  assert.is(at(1_700_000_123_456), 1_700_000_123);
  assert.is(at(1_700_000_123_999), 1_700_000_123);
  assert.is(at(1_700_000_124_000), 1_700_000_124);
  assert.is(at(999), 0);
  assert.is(at(1000), 1);
  assert.is(at(0), 0);
  const sh = signedHeaderOf(header, CHAIN, VALIDATOR_INDEX);
  assert.equal(
    { chainId: sh.chainId, index: sh.index, validatorIndex: sh.validatorIndex, parent: toHex(sh.parentHash), root: toHex(sh.merkleRoot) },
    { chainId: CHAIN, index: 7, validatorIndex: VALIDATOR_INDEX, parent: toHex(header.parentHash), root: toHex(header.merkleRoot) },
  );
});

test('encodeSignedHeader: 100 bytes, fixed layout', () => {
  const sh = signedHeaderOf(header, CHAIN, VALIDATOR_INDEX);
  const ssz = encodeSignedHeader(sh);
  assert.is(ssz.length, 100);
  bytesIs(ssz.subarray(0, 12), concatBytes(utf8(CHAIN), new Uint8Array(4)), 'chain id, zero-padded');
  bytesIs(ssz.subarray(12, 20), u64LE(7), 'index');
  bytesIs(ssz.subarray(20, 28), u64LE(1_700_000_123), 'timestamp seconds');
  bytesIs(ssz.subarray(28, 60), header.parentHash, 'parent hash');
  bytesIs(ssz.subarray(60, 92), header.merkleRoot, 'merkle root');
  bytesIs(ssz.subarray(92, 100), u64LE(VALIDATOR_INDEX), 'validator index');
});

test('encodeSignedHeader: invalid chain ids are refused', () => {
  const sh = signedHeaderOf(header, CHAIN, 0);
  expectError(() => encodeSignedHeader({ ...sh, chainId: 'x'.repeat(13) }), CryptoError, { code: 'CRYPTO_ERROR' });
  expectError(() => encodeSignedHeader({ ...sh, chainId: '' }), CryptoError, { code: 'CRYPTO_ERROR' });
});

test('canonicalHeaderBytes: exactly 3409 bytes = SignedHeader SSZ ‖ signature', () => {
  const sh = signedHeaderOf(header, CHAIN, VALIDATOR_INDEX);
  const canon = canonicalHeaderBytes(sh, block.signature);
  assert.is(canon.length, 3409);
  bytesIs(canon.subarray(0, 100), encodeSignedHeader(sh));
  bytesIs(canon.subarray(100), block.signature);
  // Length does not depend on the content.
  assert.is(canonicalHeaderBytes({ ...sh, chainId: 'a', index: 0, timestamp: 0, validatorIndex: 0 }, new Uint8Array(SIGNATURE_BYTES)).length, 3409);
});

test('canonicalHeaderBytes: a signature of any other length is refused', () => {
  const sh = signedHeaderOf(header, CHAIN, VALIDATOR_INDEX);
  for (const n of [0, 3293, 3308, 3310]) {
    expectError(() => canonicalHeaderBytes(sh, new Uint8Array(n)), MalformedError, { field: 'block.signature', message: 'malformed block.signature: expected 3309 bytes' });
  }
});

test('headerSigningHash = SHA3-256(block tag ‖ chain id ‖ SignedHeader SSZ)', () => {
  const sh = signedHeaderOf(header, CHAIN, VALIDATOR_INDEX);
  bytesIs(headerSigningHash(sh), sha3(domainTagBytes(Domain.Block), chainIdBytes(CHAIN), encodeSignedHeader(sh)));
});

// ---------------------------------------------------------------------------------------------
// signatures

test('signBlock / verifyBlockSignature: valid for the proposer key, index and chain', () => {
  assert.is(block.signature.length, SIGNATURE_BYTES);
  assert.ok(verifyBlockSignature(block, CHAIN, VALIDATOR_INDEX, proposer.publicKey));
  assert.is(block.transactions, txs);
  assert.is(block.header, header);
});

test('verifyBlockSignature: wrong validator index, chain id or key is false', () => {
  assert.is(verifyBlockSignature(block, CHAIN, VALIDATOR_INDEX + 1, proposer.publicKey), false);
  assert.is(verifyBlockSignature(block, CHAIN, 0, proposer.publicKey), false);
  assert.is(verifyBlockSignature(block, 'svc-other', VALIDATOR_INDEX, proposer.publicKey), false);
  assert.is(verifyBlockSignature(block, CHAIN, VALIDATOR_INDEX, other.publicKey), false);
});

test('verifyBlockSignature: tampering with any signed field or the signature is false', () => {
  const bad: Array<[string, Block]> = [
    ['index', { ...block, header: { ...header, index: 8 } }],
    ['timestamp second', { ...block, header: { ...header, timestampMs: header.timestampMs + 1000 } }],
    ['parent', { ...block, header: { ...header, parentHash: flipByte(header.parentHash, 0) } }],
    ['merkle root', { ...block, header: { ...header, merkleRoot: flipByte(header.merkleRoot, 31) } }],
    ['signature', { ...block, signature: flipByte(block.signature, 100) }],
    ['short signature', { ...block, signature: block.signature.slice(0, 3293) }],
  ];
  for (const [what, b] of bad) assert.is(verifyBlockSignature(b, CHAIN, VALIDATOR_INDEX, proposer.publicKey), false, what);
});

test('verifyBlockSignature: fields outside SignedHeader are not covered by the proposer signature', () => {
  // Documented consequence of the spec's SignedHeader: importers must check these fields separately
  // (timestamp = slot start, validator_id = registry address, VRF proof, RANDAO reveal).
  const unsignedFieldChanges: BlockHeader[] = [
    { ...header, timestampMs: header.timestampMs + 1 },
    { ...header, vrfSeed: flipByte(header.vrfSeed, 0) },
    { ...header, randaoReveal: flipByte(header.randaoReveal, 0) },
    { ...header, validatorId: filled(20, 0) },
    { ...header, stateRoot: flipByte(header.stateRoot, 0) },
  ];
  for (const h of unsignedFieldChanges) {
    assert.ok(verifyBlockSignature({ ...block, header: h }, CHAIN, VALIDATOR_INDEX, proposer.publicKey));
    bytesNot(blockHash(h), blockHash(header));
  }
});

test('signBlock is deterministic: same block signed twice gives the identical signature', () => {
  const again = signBlock(header, txs, proposer, CHAIN, VALIDATOR_INDEX);
  bytesIs(again.signature, block.signature);
  // A different block for the same slot gives a different signature (double-proposal evidence).
  const conflicting = signBlock({ ...header, parentHash: filled(32, 0x22) }, txs, proposer, CHAIN, VALIDATOR_INDEX);
  bytesNot(conflicting.signature, block.signature);
});

// ---------------------------------------------------------------------------------------------
// block hash, SSZ

test('blockHash = SHA3-256(SSZ wire header); independent of the proposer signature', () => {
  bytesIs(blockHash(header), sha3(BlockHeaderSsz.serialize(header)));
  // index 8 + timestamp 8 + parent 32 + root 32 + validator 20 + vrf proof 3309 + vrf seed 32 + reveal 32
  assert.is(BlockHeaderSsz.serialize(header).length, 3505);
  const resigned = signBlock(header, txs, proposer, CHAIN, VALIDATOR_INDEX + 1);
  bytesNot(resigned.signature, block.signature);
  bytesIs(blockHash(resigned.header), blockHash(block.header));
});

test('encodeBlock / decodeBlock round trip', () => {
  const bytes = encodeBlock(block);
  const back = decodeBlock(bytes);
  bytesIs(encodeBlock(back), bytes);
  assert.is(back.transactions.length, 2);
  bytesIs(txMerkleRoot(back.transactions), header.merkleRoot);
  bytesIs(back.signature, block.signature);
  assert.is(back.header.index, 7);
  assert.is(back.header.timestampMs, 1_700_000_123_456);
  assert.ok(verifyBlockSignature(back, CHAIN, VALIDATOR_INDEX, proposer.publicKey));
  assert.is(JSON.stringify(blockToJson(back)), JSON.stringify(blockToJson(block)));
  const empty = signBlock({ ...header, merkleRoot: txMerkleRoot([]) }, [], proposer, CHAIN, VALIDATOR_INDEX);
  bytesIs(encodeBlock(decodeBlock(encodeBlock(empty))), encodeBlock(empty));
});

test('decodeBlockWithEnvelopes: the block decodeBlock gives, and each envelope byte for byte as encoded', () => {
  const bytes = encodeBlock(block);
  const { block: back, envelopes } = decodeBlockWithEnvelopes(bytes);
  assert.is(JSON.stringify(blockToJson(back)), JSON.stringify(blockToJson(decodeBlock(bytes))));
  assert.is(envelopes.length, txs.length);
  envelopes.forEach((e, i) => bytesIs(e, encodeTx(txs[i]!)));
  bytesIs(encodeBlock(back, envelopes), bytes);
  expectError(() => decodeBlockWithEnvelopes(bytes.slice(0, 100)), MalformedError, { field: 'block' });
});

test('decodeBlock: truncated bytes are malformed block', () => {
  const bytes = encodeBlock(block);
  // header 3505 | offset(transactions) 4 | signature 3309 | tx offsets 2 × 4 | envelopes
  for (const n of [0, 10, 3505, 3509, 6817, 6818 + 2, 6818 + 8 + 100]) {
    expectError(() => decodeBlock(bytes.slice(0, n)), MalformedError, { messageStartsWith: 'malformed ' });
  }
  expectError(() => decodeBlock(bytes.slice(0, 100)), MalformedError, { field: 'block', messageStartsWith: 'malformed block: ' });
});

test('decodeBlock: cutting bytes off the end is malformed (the attestation list, last, bounds the last envelope)', () => {
  const bytes = encodeBlock(block);
  expectError(() => decodeBlock(bytes.slice(0, bytes.length - 1)), MalformedError, { field: 'block' });
  const withVotes = encodeBlock(votingBlock);
  // Attestations are fixed-size: a partial one cannot decode.
  expectError(() => decodeBlock(withVotes.slice(0, withVotes.length - 1)), MalformedError, { field: 'block' });
});

test('decodeBlock: index or timestamp at or above 2^53 is malformed block.header', () => {
  // The header is fixed-size and first in the container (after no offsets), so index is bytes 0..8.
  const bytes = encodeBlock(block);
  const bad = bytes.slice();
  bad.set(new Uint8Array(8).fill(0xff), 0);
  expectError(() => decodeBlock(bad), MalformedError, { field: 'block.header', message: 'malformed block.header: index and timestamp must be below 2^53' });
  const bad2 = bytes.slice();
  bad2.set(u64LE(1n << 53n), 8);
  expectError(() => decodeBlock(bad2), MalformedError, { field: 'block.header', message: 'malformed block.header: index and timestamp must be below 2^53' });
});

// ---------------------------------------------------------------------------------------------
// wire JSON

test('blockToJson: wire shape (ms timestamp, 0x hex, validator_id = address)', () => {
  const j = blockToJson(block);
  assert.equal(Object.keys(j), ['header', 'transactions', 'signature', 'attestations', 'slashings']);
  assert.equal(j.attestations, []);
  assert.equal(Object.keys(j.header), ['index', 'timestamp', 'parent_hash', 'merkle_root', 'validator_id', 'vrf_proof', 'vrf_seed', 'randao_reveal', 'state_root']);
  assert.is(j.header.index, 7);
  assert.is(j.header.timestamp, 1_700_000_123_456);
  assert.is(j.header.validator_id, toHex(addressFromPublicKey(proposer.publicKey)));
  assert.is(j.header.merkle_root, toHex(txMerkleRoot(txs)));
  assert.is(j.signature, toHex(block.signature));
  assert.is(j.transactions.length, 2);
});

test('blockToJson → blockFromJson → blockToJson is byte-identical JSON', () => {
  const text = JSON.stringify(blockToJson(block));
  const back = blockFromJson(JSON.parse(text));
  assert.is(JSON.stringify(blockToJson(back)), text);
  bytesIs(encodeBlock(back), encodeBlock(block));
  assert.ok(verifyBlockSignature(back, CHAIN, VALIDATOR_INDEX, proposer.publicKey));
});

test('BlockError: code is the BLOCK_ERRORS key; message is the spec phrase, optionally with detail', () => {
  assert.equal({ ...BLOCK_ERRORS }, {
    MERKLE_ROOT_MISMATCH: 'Block Merkle root mismatch',
    INVALID_BLOCK_SIGNATURE: 'DILITHIUM SIGNATURE VERIFICATION FAILED',
    INVALID_TRANSACTION: 'Transaction verification failed',
    UNKNOWN_VALIDATOR: 'Unknown validator',
    MISSING_SIGNATURE: 'Block missing Dilithium signature',
    SIGNED_HEADER_FAILED: 'Failed to create SignedHeader',
    MISSING_VRF_PROOF: 'Block missing VRF proof',
    INVALID_VRF_PROOF: 'VRF proof verification failed',
    UNKNOWN_PARENT: 'Unknown parent block',
    INVALID_HEIGHT: 'Block index does not follow its parent',
    INVALID_TIMESTAMP: 'Block timestamp is not the start of a slot after its parent',
    INVALID_VRF_SEED: 'Block vrf_seed is not the seed of its slot',
    WRONG_PROPOSER: 'Block proposer is not the validator drawn for its slot',
    INVALID_RANDAO_REVEAL: "Block randao_reveal is not the preimage of the proposer's last RANDAO value",
    INVALID_ATTESTATION: 'Block includes an invalid attestation',
    INVALID_SLASHING: 'Block includes invalid slashing evidence',
    PARENT_STATE_PRUNED: 'Block parent is not a descendant of the finalized block (its state is pruned)',
    STATE_ROOT_MISMATCH: 'Block state root mismatch',
  });
  const e = new BlockError('MERKLE_ROOT_MISMATCH', 'expected 0x01, got 0x02');
  assert.ok(e instanceof SvcError);
  assert.is(e.name, 'BlockError');
  assert.is(e.code, 'MERKLE_ROOT_MISMATCH');
  assert.is(httpStatusOf(e), 400);
  assert.is(e.message, 'Block Merkle root mismatch: expected 0x01, got 0x02');
  assert.is(new BlockError('UNKNOWN_VALIDATOR').message, 'Unknown validator');
});

test('blockFromJson: missing signature is BlockError MISSING_SIGNATURE', () => {
  for (const sig of ['0x', '', null, undefined]) {
    const j = jsonOf(block);
    if (sig === undefined) delete j.signature;
    else j.signature = sig;
    expectError(() => blockFromJson(j), BlockError, { code: 'MISSING_SIGNATURE', message: 'Block missing Dilithium signature', status: 400 });
  }
});

test('blockFromJson: missing VRF proof is BlockError MISSING_VRF_PROOF', () => {
  for (const proof of ['0x', '', null, undefined]) {
    const j = jsonOf(block);
    if (proof === undefined) delete j.header.vrf_proof;
    else j.header.vrf_proof = proof;
    expectError(() => blockFromJson(j), BlockError, { code: 'MISSING_VRF_PROOF', message: 'Block missing VRF proof' });
  }
});

test('blockFromJson: wrong-length signature or VRF proof is malformed, not missing', () => {
  const j = jsonOf(block);
  j.signature = toHex(block.signature.slice(0, 3293));
  expectError(() => blockFromJson(j), MalformedError, { field: 'block.signature', message: 'malformed block.signature: expected 3309 bytes, got 3293' });
  const k = jsonOf(block);
  k.header.vrf_proof = '0x00';
  expectError(() => blockFromJson(k), MalformedError, { field: 'block.header.vrf_proof', message: 'malformed block.header.vrf_proof: expected 3309 bytes, got 1' });
});

test('blockFromJson: strict header fields', () => {
  const cases: Array<[string, unknown, string]> = [
    ['index', '7', 'malformed block.header.index: expected a non-negative integer'],
    ['timestamp', -1, 'malformed block.header.timestamp: expected a non-negative integer'],
    ['timestamp', 1.5, 'malformed block.header.timestamp: expected a non-negative integer'],
    ['parent_hash', '0x00', 'malformed block.header.parent_hash: expected 32 bytes, got 1'],
    ['merkle_root', 'abc', 'malformed block.header.merkle_root: expected 0x-prefixed hex with an even number of digits'],
    ['validator_id', '0x' + '00'.repeat(21), 'malformed block.header.validator_id: expected 20 bytes, got 21'],
    ['vrf_seed', undefined, 'malformed block.header.vrf_seed: expected a 0x-prefixed hex string'],
    ['randao_reveal', '0x' + '00'.repeat(31), 'malformed block.header.randao_reveal: expected 32 bytes, got 31'],
    ['state_root', undefined, 'malformed block.header.state_root: expected a 0x-prefixed hex string'],
    ['state_root', '0x' + '00'.repeat(33), 'malformed block.header.state_root: expected 32 bytes, got 33'],
    ['extra', 1, 'malformed block.header.extra: unknown field'],
  ];
  for (const [field, value, message] of cases) {
    const j = jsonOf(block);
    j.header[field] = value;
    expectError(() => blockFromJson(j), MalformedError, { code: 'MALFORMED_INPUT', message });
  }
});

test('blockFromJson: strict envelope', () => {
  const j = jsonOf(block);
  j.hash = '0x';
  expectError(() => blockFromJson(j), MalformedError, { message: 'malformed block.hash: unknown field' });
  const k = jsonOf(block);
  k.transactions = {};
  expectError(() => blockFromJson(k), MalformedError, { field: 'block.transactions', message: 'malformed block.transactions: expected an array' });
  const m = jsonOf(block);
  (m.transactions as Array<Record<string, unknown>>)[0]!.value = 1;
  expectError(() => blockFromJson(m), MalformedError, { field: 'tx.Value', message: 'malformed tx.Value' });
  expectError(() => blockFromJson([]), MalformedError, { message: 'malformed block: expected an object' });
  const n = jsonOf(block) as Record<string, unknown>;
  n.header = null;
  expectError(() => blockFromJson(n), MalformedError, { message: 'malformed block.header: expected an object' });
});

test('blockFromJson does not validate: a wrong Merkle root still parses (the importer checks it)', () => {
  const j = jsonOf(block);
  j.header.merkle_root = '0x' + '00'.repeat(32);
  const b = blockFromJson(j);
  bytesNot(b.header.merkleRoot, txMerkleRoot(b.transactions));
});

// ---------------------------------------------------------------------------------------------
// Included attestations: bound by merkle_root, so by the proposer's signature

test('blockMerkleRoot: without attestations it is the transactions\' root (old blocks keep their root)', () => {
  bytesIs(blockMerkleRoot(txs.map(txHash), [], []), txMerkleRoot(txs));
  bytesIs(bodyMerkleRoot([], [], []), merkleRoot([]));
});

test('blockMerkleRoot: transaction hashes then domain-separated attestation leaves', () => {
  bytesIs(attestationLeaf(votes[0]!), sha3(utf8('svc/attestation-leaf'), attestationHash(votes[0]!)));
  bytesIs(bodyMerkleRoot(txs, votes, []), merkleRoot([...txs.map(txHash), ...votes.map(attestationLeaf)]));
  // A leaf is never the bare attestation hash, so a vote cannot pose as a transaction.
  bytesNot(attestationLeaf(votes[0]!), attestationHash(votes[0]!));
});

test('block with attestations: SSZ and JSON round trip, signature verifies, root matches', () => {
  const back = decodeBlock(encodeBlock(votingBlock));
  assert.is(back.attestations.length, 2);
  bytesIs(encodeBlock(back), encodeBlock(votingBlock));
  bytesIs(bodyMerkleRoot(back.transactions, back.attestations, back.slashings), back.header.merkleRoot);
  assert.ok(verifyBlockSignature(back, CHAIN, VALIDATOR_INDEX, proposer.publicKey));
  const json = blockToJson(votingBlock);
  assert.equal(json.attestations, votes.map(attestationToJson));
  bytesIs(encodeBlock(blockFromJson(JSON.parse(JSON.stringify(json)))), encodeBlock(votingBlock));
});

test('block with attestations: dropping, adding, swapping or altering a vote breaks the root; re-rooting breaks the signature', () => {
  const variants: Array<[string, typeof votes]> = [
    ['dropped', [votes[0]!]],
    ['added', [...votes, vote(7, 41, 5)]],
    ['swapped', [votes[1]!, votes[0]!]],
    ['replaced', [votes[0]!, vote(6, 39, 4)]],
    ['none', []],
  ];
  for (const [what, atts] of variants) {
    const forged: Block = { ...votingBlock, attestations: atts };
    bytesNot(bodyMerkleRoot(forged.transactions, forged.attestations, forged.slashings), forged.header.merkleRoot, `${what}: root must not match`);
    // Fixing the root changes the SignedHeader, which the proposer's signature no longer covers.
    const reRooted: Block = { ...forged, header: { ...forged.header, merkleRoot: bodyMerkleRoot(forged.transactions, atts, []) } };
    assert.not.ok(verifyBlockSignature(reRooted, CHAIN, VALIDATOR_INDEX, proposer.publicKey), `${what}: signature must fail`);
  }
  // A flipped byte in an included vote's signature changes its leaf too.
  const tampered = { ...votes[0]!, signature: flipByte(votes[0]!.signature, 5) };
  bytesNot(bodyMerkleRoot(txs, [tampered, votes[1]!], []), votingHeader.merkleRoot);
});

test('blockFromJson: absent attestations mean none; a non-array or too many is malformed', () => {
  const j = jsonOf(block);
  delete (j as Record<string, unknown>).attestations;
  assert.equal(blockFromJson(j).attestations, []);
  const k = jsonOf(block);
  k.attestations = {};
  expectError(() => blockFromJson(k), MalformedError, { field: 'block.attestations' });
  const m = jsonOf(votingBlock);
  m.attestations = Array.from({ length: MAX_BLOCK_ATTESTATIONS + 1 }, () => attestationToJson(votes[0]!));
  expectError(() => blockFromJson(m), MalformedError, { field: 'block.attestations' });
});

test.run();
