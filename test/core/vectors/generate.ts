/**
 * Writes the frozen known-answer vectors in fixtures/vectors/*.json.
 *
 *   npm run build && node dist/test/core/vectors/generate.js
 *
 * Regenerating changes the files only if an encoding, hash or signing rule changed: that is a
 * PROTOCOL CHANGE (every node, wallet and signed object is affected). Do it deliberately, review
 * the diff of fixtures/vectors/, and document the change in docs/protocol.md.
 *
 * The keys are test keys derived from public seeds; never use them for anything else.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '../../../src/core/codec/bytes.js';
import {
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
} from './compute.js';

const CHAIN_ID = 'svc-test';
const SEED_00 = '0x' + '00'.repeat(32);
const SEED_01 = '0x' + '01'.repeat(32);

function vector(description: string, inputs: JsonObject, compute: (inputs: JsonObject) => JsonObject): VectorFile {
  return { description, inputs, outputs: compute(inputs) };
}

const transferInputs: JsonObject = {
  chain_id: CHAIN_ID,
  key_seed: SEED_01,
  tx: {
    nonce: 7,
    gasPrice: '2000000000',
    gasLimit: 21000,
    to: '0x00000000000000000000000000000000000000aa',
    value: '1500000000000000000',
    data: '0x',
  },
};

// A minimal init code (returns an empty runtime); contents are arbitrary for the vector.
const DEPLOY_CODE = '0x6080604052348015600f57600080fd5b50603f80601d6000396000f3fe6080604052600080fdfea164736f6c6343000813000a';

const files: Record<string, VectorFile> = {
  'keys.json': {
    description: 'ML-DSA-65 keys from 32-byte seeds ξ (FIPS 204 ML-DSA.KeyGen_internal); address = SHA3-256(public key)[12..32]. Test keys only.',
    inputs: { seeds: [SEED_00, SEED_01] },
    outputs: { keys: [SEED_00, SEED_01].map((seed) => ({ seed, ...computeKey({ seed }) })) },
  },
  'transfer.json': vector(
    'Type-0 transfer signed DETERMINISTICALLY (rnd = 0^32) with the key of seed 0x01..01 on chain "svc-test". unsigned_envelope has signature and public key zero-filled; signing_hash = SHA3-256(tag32("svc/tx/v1") ‖ chain_id12 ‖ unsigned_envelope); tx_hash = SHA3-256(signed_envelope).',
    transferInputs,
    computeStandardTx,
  ),
  'deployment.json': vector(
    'Type-0 contract deployment (to = null, encoded as an empty ByteList) signed deterministically with the key of seed 0x01..01; gasLimit = intrinsic gas 32000 + 200 × len(data).',
    {
      chain_id: CHAIN_ID,
      key_seed: SEED_01,
      tx: { nonce: 0, gasPrice: '1000000000', gasLimit: 32000 + 200 * ((DEPLOY_CODE.length - 2) / 2), to: null, value: '0', data: DEPLOY_CODE },
    },
    computeStandardTx,
  ),
  'signed-header.json': vector(
    'SignedHeader (100-byte SSZ), block signing hash SHA3-256(tag32("svc/block/v1") ‖ chain_id12 ‖ SSZ), deterministic ML-DSA-65 signature by the key of seed 0x01..01, and the 3409-byte canonical encoding SSZ ‖ signature.',
    {
      key_seed: SEED_01,
      signed_header: {
        chain_id: CHAIN_ID,
        index: 12,
        timestamp: 1700000024,
        parent_hash: '0x' + '11'.repeat(32),
        merkle_root: '0x' + '22'.repeat(32),
        validator_index: 1,
      },
    },
    computeSignedHeader,
  ),
  'block.json': vector(
    'A block with the transfer of transfer.json and one attestation (validator 3, key of seed 0x00..00, signed like attestation.json), proposed by the key of seed 0x01..01 as validator 1: merkle_root over [tx hash, SHA3-256("svc/attestation-leaf" ‖ SHA3-256(SSZ(attestation)))], vrf_seed = SHA3-256("vrf" ‖ randao_mix ‖ uint64_le(slot)), deterministic VRF proof, first RANDAO reveal of a chain of randao_chain_length, block hash = SHA3-256(SSZ(header)), deterministic block signature, wire JSON and SSZ.',
    {
      chain_id: CHAIN_ID,
      key_seed: SEED_01,
      validator_index: 1,
      slot: 12,
      randao_mix: '0x' + '5a'.repeat(32),
      randao_chain_length: 16,
      header: { index: 12, timestamp: 1700000024000, parent_hash: '0x' + '11'.repeat(32), state_root: '0x' + '44'.repeat(32) },
      transaction: { key_seed: SEED_01, tx: transferInputs.tx! },
      attestations: [
        {
          key_seed: SEED_00,
          validator_index: 3,
          data: { slot: 11, beacon_block_root: '0x' + '11'.repeat(32), source: { epoch: 0, root: '0x' + '33'.repeat(32) }, target: { epoch: 1, root: '0x' + '44'.repeat(32) } },
        },
      ],
    },
    computeBlock,
  ),
  'merkle.json': vector(
    'Transactions Merkle root over the first `count` leaves (leaf i = SHA3-256("svc merkle leaf " ‖ decimal i)), padded with zero leaves to a power of two, count mixed in as uint256_le.',
    { leaves: [0, 1, 2, 3, 4].map((i) => toHex(merkleLeaf(i))), counts: [0, 1, 2, 3, 5] },
    computeMerkle,
  ),
  'state-trie.json': vector(
    'State trie (docs/protocol.md, State trie): 16-ary Jellyfish-style Merkle trie over SHA3-256; account key = SHA3-256(address), value = balance (32 B BE) ‖ nonce (8 B BE) ‖ code_hash ‖ storage_root; storage key = SHA3-256(slot), value = the 32-byte word; leaf = 0x00 ‖ key ‖ value, internal = 0x01 ‖ u16 BE child bitmap ‖ child hashes; node hash = SHA3-256(encoding); empty root = 32 zero bytes. Proofs are node encodings from the root down.',
    {
      accounts: [
        { address: '0x00000000000000000000000000000000000000aa', balance: '1000000000000000000000', nonce: 0 },
        { address: '0x503f050140e5740068248d7374461e0311a2728e', balance: '5', nonce: 3 },
        { address: '0xdbcc299108cc779dbeed196debdea877074a37aa', balance: '0', nonce: 1, code: '0x0061736d01000000', storage: { ['0x' + '00'.repeat(31) + '01']: '0x' + '00'.repeat(31) + '2a', ['0x' + '00'.repeat(31) + '02']: '0x' + 'ff'.repeat(32), ['0x' + '11'.repeat(32)]: '0x' + '00'.repeat(31) + '07' } },
        { address: '0x0000000000000000000000000000000000001000', balance: '32000000000000000000', nonce: 0 },
        { address: '0x1111111111111111111111111111111111111111', balance: '1', nonce: 0 },
      ],
      proven_address: '0xdbcc299108cc779dbeed196debdea877074a37aa',
      absent_address: '0x00000000000000000000000000000000000000bb',
      proven_slot: '0x' + '00'.repeat(31) + '02',
      absent_slot: '0x' + '00'.repeat(31) + '03',
    },
    computeStateTrie,
  ),
  'attestation.json': vector(
    'Attestation by validator 3 with the key of seed 0x00..00: SSZ message {validator_index, data} (128 bytes), signing hash under "svc/attestation/v1", deterministic signature, JSON.',
    {
      chain_id: CHAIN_ID,
      key_seed: SEED_00,
      validator_index: 3,
      data: {
        slot: 17,
        beacon_block_root: '0x' + 'bb'.repeat(32),
        source: { epoch: 3, root: '0x' + '33'.repeat(32) },
        target: { epoch: 4, root: '0x' + '44'.repeat(32) },
      },
    },
    computeAttestation,
  ),
  'randao.json': vector(
    'Hash-chain RANDAO for the key seed 0x01..01: secret = SHA3-256("svc/randao-secret/v1" ‖ seed), commitment = H^n(secret), reveal k = H^(n-k)(secret), mix\' = SHA3-256(mix ‖ reveal).',
    { key_seed: SEED_01, chain_length: 16, reveal_ks: [1, 2, 3], initial_mix: '0x' + '00'.repeat(32) },
    computeRandao,
  ),
};

const dir = vectorsDir();
mkdirSync(dir, { recursive: true });
for (const [name, file] of Object.entries(files)) {
  writeFileSync(join(dir, name), JSON.stringify(file, null, 2) + '\n');
  console.log(`wrote ${join(dir, name)}`);
}
