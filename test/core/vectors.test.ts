/**
 * Frozen known-answer vectors (fixtures/vectors/*.json): every output is recomputed from the
 * file's inputs with the current code and must equal the frozen bytes, so an accidental change
 * to an encoding, hash, domain tag or signing rule fails CI.
 *
 * To regenerate: `npm run build && node dist/test/core/vectors/generate.js`.
 * Regenerating is a PROTOCOL CHANGE: it invalidates every signed object and every other
 * implementation's vectors. Do it only deliberately, review the fixture diff, update
 * docs/protocol.md and the ANCHORS below (which pin a few outputs in this file, so a silent
 * regeneration alone still fails).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMLDSA65, type MLDSA65 } from '@oqs/liboqs-js';
import { concatBytes, parseHex, toHex } from '../../src/core/codec/bytes.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { verifyRandaoReveal } from '../../src/core/crypto/randao.js';
import { vrfVerify } from '../../src/core/crypto/vrf.js';
import { attestationFromJson, verifyAttestation } from '../../src/core/types/attestation.js';
import { attestationLeaf, blockFromJson, blockToJson, bodyMerkleRoot, decodeBlock, encodeBlock, verifyBlockSignature } from '../../src/core/types/block.js';
import { decodeTx, encodeTx, txHash, verifyTxSignature } from '../../src/core/types/transaction.js';
import { txFromJson, txToJson } from '../../src/core/types/transaction-json.js';
import { verifyAccountProof, verifyProof } from '../../src/core/state/trie.js';
import {
  type Json,
  type JsonObject,
  type VectorFile,
  computeAttestation,
  computeBlock,
  computeKey,
  computeMerkle,
  computeRandao,
  computeSignedHeader,
  computeStandardTx,
  computeStateTrie,
  merkleLeaf,
  vectorsDir,
} from './vectors/compute.js';

/** A few outputs pinned in code as well as in the fixtures. */
const ANCHORS = {
  'keys.json': { address_00: '0xdbcc299108cc779dbeed196debdea877074a37aa', address_01: '0x503f050140e5740068248d7374461e0311a2728e' },
  'transfer.json': { signing_hash: '0xdd8e4dc158d0c73e5df5362331f274e9d53c0202970705fc3e281e608af15bc2', tx_hash: '0x7fa1dfbda89d2d6820a671551a2661226c1ee2ccbca86a61b503bb7ea9fd502b' },
  'deployment.json': { tx_hash: '0x2dcc7f5973afa71cb25f548330f3d9cfc2165ceebaa49217285ace3c9b9941fc' },
  'signed-header.json': { signing_hash: '0x40c0c16517b2aa9a88bed3808ef890c10edc076c6a68bdf8fdabebb127895773' },
  'block.json': { block_hash: '0x1fd2cbc432e4675bb571eb7d4a73547fbf47eb79e8e549ad4a93f6a2e4b5baa4' },
  'merkle.json': { root_0: '0x070fa1ab6fcc557ed14d42941f1967693048551eb9042a8d0a057afbd75e81e0', root_5: '0xd238cb25d943e979fb0b262389dfb47ec68caf960781a3bcfa6bbfca2c81e777' },
  'attestation.json': { signing_hash: '0xf505cd7ff90e942d443efcbd47762503542ed8f371b15027438b2e88455768ef' },
  'state-trie.json': { state_root: '0xe64397f0f3040e761ec12941efd606439ce771dcd3a11640d2ac1e2050db18ba' },
  'randao.json': { commitment: '0xb5bcba350956c7eb09fde255d5f1dcbb88722fc59b7eb3882dc5c746e7bbb58a' },
} as const;

function load(name: string): VectorFile {
  const file = JSON.parse(readFileSync(join(vectorsDir(), name), 'utf8')) as VectorFile;
  assert.type(file.description, 'string', `${name}: description`);
  assert.type(file.inputs, 'object', `${name}: inputs`);
  assert.type(file.outputs, 'object', `${name}: outputs`);
  return file;
}

/** Field-by-field comparison, so a failure names the output that changed. */
function assertSameOutputs(name: string, recomputed: JsonObject, frozen: JsonObject): void {
  assert.equal(Object.keys(recomputed).sort(), Object.keys(frozen).sort(), `${name}: output fields`);
  for (const key of Object.keys(frozen)) {
    assert.is(JSON.stringify(recomputed[key]), JSON.stringify(frozen[key]), `${name}: outputs.${key} changed`);
  }
}

const hexOf = (v: Json | undefined, name = 'vector'): Uint8Array => {
  if (typeof v !== 'string') throw new Error(`${name} is not a string`);
  return parseHex(v, name);
};
const o = (v: Json | undefined): JsonObject => v as JsonObject;

let oqs: MLDSA65;
test.before(async () => {
  oqs = await createMLDSA65();
});
test.after(() => oqs.destroy());

// ---------------------------------------------------------------------------------------------

test('keys.json: ML-DSA-65 keys from seeds 0x00..00 and 0x01..01', () => {
  const f = load('keys.json');
  const keys = f.outputs.keys as JsonObject[];
  assert.is(keys.length, 2);
  assert.equal(keys.map((k) => k.seed), f.inputs.seeds);
  for (const k of keys) {
    const { seed, ...frozen } = k;
    assertSameOutputs(`keys.json[${String(seed)}]`, computeKey({ seed: seed! }), frozen);
    assert.is(hexOf(k.public_key).length, 1952);
    assert.is(hexOf(k.secret_key).length, 4032);
    assert.is(k.secret_key_sha3, toHex(sha3(hexOf(k.secret_key))));
    assert.is(k.address, toHex(sha3(hexOf(k.public_key)).slice(12)));
  }
  assert.is(keys[0]!.address, ANCHORS['keys.json'].address_00);
  assert.is(keys[1]!.address, ANCHORS['keys.json'].address_01);
});

for (const name of ['transfer.json', 'deployment.json'] as const) {
  test(`${name}: recomputed byte for byte from its inputs`, () => {
    const f = load(name);
    assertSameOutputs(name, computeStandardTx(f.inputs), f.outputs);
    assert.is(f.outputs.tx_hash, ANCHORS[name].tx_hash);
  });

  test(`${name}: frozen envelope decodes, verifies (also under liboqs) and round-trips through JSON`, () => {
    const f = load(name);
    const chainId = f.inputs.chain_id as string;
    const env = hexOf(f.outputs.signed_envelope);
    assert.is(env.length, f.outputs.envelope_length);
    const tx = decodeTx(env);
    assert.is(toHex(encodeTx(tx)), f.outputs.signed_envelope);
    assert.is(toHex(txHash(tx)), f.outputs.tx_hash);
    assert.is(toHex(sha3(env)), f.outputs.tx_hash);
    assert.is(toHex(verifyTxSignature(tx, chainId)), f.outputs.from);
    const pk = keygenFromSeed(hexOf(f.inputs.key_seed)).publicKey;
    assert.ok(oqs.verify(hexOf(f.outputs.signing_hash), hexOf(f.outputs.signature), pk), 'liboqs verifies the frozen signature');
    assert.is(JSON.stringify(txToJson(tx)), JSON.stringify(f.outputs.json));
    assert.is(toHex(encodeTx(txFromJson(f.outputs.json))), f.outputs.signed_envelope);
    // The unsigned envelope differs from the signed one exactly in the signature and key fields.
    const unsigned = hexOf(f.outputs.unsigned_envelope);
    assert.is(toHex(unsigned.subarray(0, 65)), toHex(env.subarray(0, 65)));
    assert.ok(unsigned.subarray(65, 65 + 3309 + 1952).every((b) => b === 0));
    assert.is(toHex(unsigned.subarray(65 + 3309 + 1952)), toHex(env.subarray(65 + 3309 + 1952)));
  });
}

test('transfer.json / deployment.json: documented sizes', () => {
  assert.is(load('transfer.json').outputs.envelope_length, 5346);
  const d = load('deployment.json');
  const code = hexOf(o(d.inputs.tx).data);
  assert.is(d.outputs.envelope_length, 5326 + code.length);
  assert.is(d.outputs.intrinsic_gas, String(32000 + 200 * code.length));
  assert.is(o(d.outputs.json).to, null);
  assert.is(load('transfer.json').outputs.signing_hash, ANCHORS['transfer.json'].signing_hash);
});

test('signed-header.json: 100-byte SSZ, signing hash, deterministic signature, 3409-byte canonical', () => {
  const f = load('signed-header.json');
  assertSameOutputs('signed-header.json', computeSignedHeader(f.inputs), f.outputs);
  assert.is(f.outputs.ssz_length, 100);
  assert.is(f.outputs.canonical_length, 3409);
  assert.is(toHex(concatBytes(hexOf(f.outputs.ssz), hexOf(f.outputs.signature))), f.outputs.canonical);
  assert.is(f.outputs.signing_hash, ANCHORS['signed-header.json'].signing_hash);
  const pk = keygenFromSeed(hexOf(f.inputs.key_seed)).publicKey;
  assert.ok(oqs.verify(hexOf(f.outputs.signing_hash), hexOf(f.outputs.signature), pk));
});

test('block.json: recomputed byte for byte; frozen block decodes, verifies and round-trips', () => {
  const f = load('block.json');
  assertSameOutputs('block.json', computeBlock(f.inputs), f.outputs);
  assert.is(f.outputs.block_hash, ANCHORS['block.json'].block_hash);
  const chainId = f.inputs.chain_id as string;
  const key = keygenFromSeed(hexOf(f.inputs.key_seed));
  const bytes = hexOf(f.outputs.block_ssz);
  const block = decodeBlock(bytes);
  assert.is(toHex(encodeBlock(block)), f.outputs.block_ssz);
  assert.is(JSON.stringify(blockToJson(block)), JSON.stringify(f.outputs.json));
  assert.is(toHex(encodeBlock(blockFromJson(f.outputs.json))), f.outputs.block_ssz);
  assert.is(toHex(sha3(hexOf(f.outputs.header_ssz))), f.outputs.block_hash);
  assert.is(toHex(bodyMerkleRoot(block.transactions, block.attestations, block.slashings)), f.outputs.merkle_root);
  assert.is(block.attestations.length, 1);
  assert.equal(block.attestations.map((a) => toHex(attestationLeaf(a))), f.outputs.attestation_leaves);
  assert.ok(verifyBlockSignature(block, chainId, f.inputs.validator_index as number, key.publicKey));
  assert.ok(vrfVerify(key.publicKey, hexOf(f.outputs.vrf_seed), hexOf(f.outputs.vrf_proof), chainId));
  // The block carries exactly the transaction of transfer.json.
  assert.is(toHex(encodeTx(block.transactions[0]!)), load('transfer.json').outputs.signed_envelope);
});

test('merkle.json: roots for 0, 1, 2, 3 and 5 leaves', () => {
  const f = load('merkle.json');
  assert.equal(f.inputs.leaves, [0, 1, 2, 3, 4].map((i) => toHex(merkleLeaf(i))));
  assert.equal(f.inputs.counts, [0, 1, 2, 3, 5]);
  assertSameOutputs('merkle.json', computeMerkle(f.inputs), f.outputs);
  assert.is(f.outputs.root_0, toHex(sha3(new Uint8Array(64))));
  assert.is(f.outputs.root_0, ANCHORS['merkle.json'].root_0);
  assert.is(f.outputs.root_5, ANCHORS['merkle.json'].root_5);
});

test('state-trie.json: recomputed; its proofs verify with the standalone verifier, tampered ones do not', () => {
  const f = load('state-trie.json');
  assertSameOutputs('state-trie.json', computeStateTrie(f.inputs), f.outputs);
  assert.is(f.outputs.state_root, ANCHORS['state-trie.json'].state_root);
  const root = hexOf(f.outputs.state_root);
  const proven = f.inputs.proven_address as string;
  const account = (f.inputs.accounts as JsonObject[]).find((a) => a.address === proven)!;
  const storageRoot = o(f.outputs.storage_roots)[proven] as string;
  const proof = {
    address: proven,
    stateRoot: f.outputs.state_root as string,
    balance: account.balance as string,
    nonce: account.nonce as number,
    codeHash: toHex(sha3(hexOf(account.code))),
    storageHash: storageRoot,
    accountProof: f.outputs.account_proof as string[],
    storageProof: [
      { key: f.inputs.proven_slot as string, value: '0x' + 'ff'.repeat(32), proof: f.outputs.storage_proof as string[] },
      { key: f.inputs.absent_slot as string, value: '0x' + '00'.repeat(32), proof: f.outputs.absent_storage_proof as string[] },
    ],
  };
  assert.ok(verifyProof(root, proof));
  assert.not.ok(verifyProof(root, { ...proof, nonce: 2 }));
  assert.not.ok(verifyProof(root, { ...proof, storageProof: [{ ...proof.storageProof[0]!, value: '0x' + 'fe'.repeat(32) }] }));
  const absent = { address: f.inputs.absent_address as string, stateRoot: proof.stateRoot, balance: '0', nonce: 0, codeHash: toHex(sha3(new Uint8Array(0))), storageHash: '0x' + '00'.repeat(32), accountProof: f.outputs.absent_account_proof as string[], storageProof: [] };
  assert.ok(verifyAccountProof(root, absent));
  assert.not.ok(verifyAccountProof(root, { ...absent, balance: '1' }));
});

test('attestation.json: recomputed; frozen JSON parses and verifies', () => {
  const f = load('attestation.json');
  assertSameOutputs('attestation.json', computeAttestation(f.inputs), f.outputs);
  assert.is(f.outputs.signing_hash, ANCHORS['attestation.json'].signing_hash);
  assert.is(hexOf(f.outputs.message_ssz).length, 128);
  const att = attestationFromJson(f.outputs.json);
  const pk = keygenFromSeed(hexOf(f.inputs.key_seed)).publicKey;
  assert.ok(verifyAttestation(att, pk, f.inputs.chain_id as string));
  assert.ok(oqs.verify(hexOf(f.outputs.signing_hash), hexOf(f.outputs.signature), pk));
});

test('randao.json: recomputed; the frozen reveals chain back from the commitment', () => {
  const f = load('randao.json');
  assertSameOutputs('randao.json', computeRandao(f.inputs), f.outputs);
  assert.is(f.outputs.commitment, ANCHORS['randao.json'].commitment);
  let last = hexOf(f.outputs.commitment);
  for (const r of f.outputs.reveals as string[]) {
    assert.ok(verifyRandaoReveal(hexOf(r), last));
    last = hexOf(r);
  }
});

test.run();
