/**
 * Known-answer vector computation shared by the generator (generate.ts) and the checker
 * (../vectors.test.ts). Every function maps a vector's `inputs` (plain JSON) to its `outputs`
 * (plain JSON, hex strings); the checker recomputes outputs from the frozen inputs and compares
 * them with the frozen outputs.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHex, toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { addressFromPublicKey } from '../../../src/core/crypto/address.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { keygenFromSeed, sign } from '../../../src/core/crypto/mldsa.js';
import { hashChain, mixRandao, randaoCommitment, randaoReveal, randaoSecret } from '../../../src/core/crypto/randao.js';
import { vrfProve, vrfSeed } from '../../../src/core/crypto/vrf.js';
import { attestationFromJson, attestationSigningHash, attestationToJson, signAttestation, type AttestationData } from '../../../src/core/types/attestation.js';
import {
  type BlockHeader,
  type SignedHeader,
  blockHash,
  blockToJson,
  canonicalHeaderBytes,
  encodeBlock,
  encodeSignedHeader,
  headerSigningHash,
  signBlock,
  attestationLeaf,
  bodyMerkleRoot,
} from '../../../src/core/types/block.js';
import { merkleRoot } from '../../../src/core/types/merkle.js';
import { EMPTY_CODE_HASH, accountKey, encodeAccountValue, storageKey, trieProof, trieRoot } from '../../../src/core/state/trie.js';
import { AttestationMessageSsz, BlockHeaderSsz } from '../../../src/core/types/ssz.js';
import { type StandardTx, decodeTx, encodeTx, encodeUnsignedTx, txHash, txSender, txSigningHash } from '../../../src/core/types/transaction.js';
import { intrinsicGas } from '../../../src/core/gas.js';
import { parseValueFields, txToJson } from '../../../src/core/types/transaction-json.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A frozen vector file: what went in, what must come out. */
export interface VectorFile {
  description: string;
  inputs: JsonObject;
  outputs: JsonObject;
}

/** Repository root: the nearest ancestor of this module holding package.json (works from src and dist). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

export function vectorsDir(): string {
  return join(repoRoot(), 'fixtures', 'vectors');
}

const str = (v: Json | undefined, name: string): string => {
  if (typeof v !== 'string') throw new Error(`vector input ${name} must be a string`);
  return v;
};
const num = (v: Json | undefined, name: string): number => {
  if (typeof v !== 'number') throw new Error(`vector input ${name} must be a number`);
  return v;
};
const obj = (v: Json | undefined, name: string): JsonObject => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`vector input ${name} must be an object`);
  return v;
};
const hex = (v: Json | undefined, name: string, length?: number): Uint8Array => parseHex(str(v, name), name, length);
const keyOf = (inputs: JsonObject) => keygenFromSeed(hex(inputs.key_seed, 'key_seed', 32));

// ---------------------------------------------------------------------------------------------

/** keys.json, per seed: ML-DSA-65 key pair from ξ = seed, its address. */
export function computeKey(inputs: JsonObject): JsonObject {
  const key = keygenFromSeed(hex(inputs.seed, 'seed', 32));
  return {
    public_key: toHex(key.publicKey),
    secret_key: toHex(key.secretKey),
    secret_key_sha3: toHex(sha3(key.secretKey)),
    address: toHex(addressFromPublicKey(key.publicKey)),
  };
}

/**
 * transfer.json / deployment.json: a type-0 transaction with a DETERMINISTIC signature
 * (wallets sign hedged; the vector must be reproducible).
 */
export function computeStandardTx(inputs: JsonObject): JsonObject {
  const chainId = str(inputs.chain_id, 'chain_id');
  const key = keyOf(inputs);
  const fields = parseValueFields(obj(inputs.tx, 'tx'));
  const unsigned: StandardTx = { type: 0, ...fields, signature: new Uint8Array(3309), publicKey: key.publicKey };
  const signingHash = txSigningHash(unsigned, chainId);
  const signature = sign(key.secretKey, signingHash, { deterministic: true });
  const tx: StandardTx = { ...unsigned, signature };
  const envelope = encodeTx(tx);
  return {
    unsigned_envelope: toHex(encodeUnsignedTx(tx)),
    signing_hash: toHex(signingHash),
    signature: toHex(signature),
    signed_envelope: toHex(envelope),
    envelope_length: envelope.length,
    tx_hash: toHex(txHash(tx)),
    from: toHex(txSender(tx)),
    intrinsic_gas: intrinsicGas(tx).toString(),
    json: txToJson(tx) as unknown as JsonObject,
  };
}

function signedHeaderFromInputs(o: JsonObject): SignedHeader {
  return {
    chainId: str(o.chain_id, 'signed_header.chain_id'),
    index: num(o.index, 'signed_header.index'),
    timestamp: num(o.timestamp, 'signed_header.timestamp'),
    parentHash: hex(o.parent_hash, 'signed_header.parent_hash', 32),
    merkleRoot: hex(o.merkle_root, 'signed_header.merkle_root', 32),
    validatorIndex: num(o.validator_index, 'signed_header.validator_index'),
  };
}

/** signed-header.json: SignedHeader SSZ, signing hash, deterministic signature, canonical bytes. */
export function computeSignedHeader(inputs: JsonObject): JsonObject {
  const key = keyOf(inputs);
  const sh = signedHeaderFromInputs(obj(inputs.signed_header, 'signed_header'));
  const ssz = encodeSignedHeader(sh);
  const hash = headerSigningHash(sh);
  const signature = sign(key.secretKey, hash, { deterministic: true });
  const canonical = canonicalHeaderBytes(sh, signature);
  return {
    ssz: toHex(ssz),
    ssz_length: ssz.length,
    signing_hash: toHex(hash),
    signature: toHex(signature),
    canonical: toHex(canonical),
    canonical_length: canonical.length,
  };
}

/**
 * block.json: a block with one deterministic-signature transfer (inputs from transfer.json's
 * shape), VRF seed and proof, RANDAO reveal, the block hash, the proposer signature and the
 * wire JSON and SSZ.
 */
export function computeBlock(inputs: JsonObject): JsonObject {
  const chainId = str(inputs.chain_id, 'chain_id');
  const proposer = keyOf(inputs);
  const txIn = obj(inputs.transaction, 'transaction');
  const txOut = computeStandardTx({ chain_id: chainId, key_seed: str(txIn.key_seed, 'transaction.key_seed'), tx: obj(txIn.tx, 'transaction.tx') });
  const txBytes = parseHex(str(txOut.signed_envelope, 'signed_envelope'), 'signed_envelope');
  const txs = [decodeTx(txBytes)];
  // Included votes, each signed like attestation.json (deterministic signature over its data).
  const attestations = ((inputs.attestations ?? []) as Json[]).map((a, i) => {
    const o = obj(a, `attestations[${i}]`);
    const index = num(o.validator_index, `attestations[${i}].validator_index`);
    const data = attestationFromJson({ validator_index: index, data: o.data, signature: toHex(new Uint8Array(3309)) }).data;
    return signAttestation(index, data, keygenFromSeed(hex(o.key_seed, `attestations[${i}].key_seed`, 32)), chainId);
  });
  const slot = num(inputs.slot, 'slot');
  const mix = hex(inputs.randao_mix, 'randao_mix', 32);
  const seed = vrfSeed(mix, slot);
  const h = obj(inputs.header, 'header');
  const header: BlockHeader = {
    index: num(h.index, 'header.index'),
    timestampMs: num(h.timestamp, 'header.timestamp'),
    parentHash: hex(h.parent_hash, 'header.parent_hash', 32),
    merkleRoot: bodyMerkleRoot(txs, attestations, []),
    validatorId: addressFromPublicKey(proposer.publicKey),
    vrfProof: vrfProve(proposer, seed, chainId),
    vrfSeed: seed,
    randaoReveal: randaoReveal(hex(inputs.key_seed, 'key_seed', 32), num(inputs.randao_chain_length, 'randao_chain_length'), 1),
    stateRoot: hex(h.state_root, 'header.state_root', 32),
  };
  const validatorIndex = num(inputs.validator_index, 'validator_index');
  const block = signBlock(header, txs, proposer, chainId, validatorIndex, attestations);
  return {
    attestation_leaves: attestations.map((a) => toHex(attestationLeaf(a))),
    vrf_seed: toHex(seed),
    vrf_proof: toHex(header.vrfProof),
    merkle_root: toHex(header.merkleRoot),
    header_ssz: toHex(BlockHeaderSsz.serialize(header)),
    block_hash: toHex(blockHash(header)),
    signature: toHex(block.signature),
    block_ssz: toHex(encodeBlock(block)),
    json: blockToJson(block) as unknown as JsonObject,
  };
}

/** merkle.json: roots over the first `count` leaves, leaves = H("svc merkle leaf " ‖ i). */
export function merkleLeaf(i: number): Uint8Array {
  return sha3(utf8(`svc merkle leaf ${i}`));
}

export function computeMerkle(inputs: JsonObject): JsonObject {
  const leaves = (inputs.leaves as Json[]).map((l, i) => hex(l, `leaves[${i}]`, 32));
  const counts = (inputs.counts as Json[]).map((c, i) => num(c, `counts[${i}]`));
  return Object.fromEntries(counts.map((n) => [`root_${n}`, toHex(merkleRoot(leaves.slice(0, n)))]));
}

/** state-trie.json: storage roots, the state root, and proofs of a present and an absent account and slot. */
export function computeStateTrie(inputs: JsonObject): JsonObject {
  const accounts = (inputs.accounts as Json[]).map((a, i) => {
    const o = a as JsonObject;
    const slots = Object.entries((o.storage ?? {}) as JsonObject).map(([k, v]) => [storageKey(hex(k, `accounts[${i}].storage key`, 32)), hex(v, `accounts[${i}].storage value`, 32)] as const);
    const code = o.code === undefined ? undefined : hex(o.code, `accounts[${i}].code`);
    return {
      address: str(o.address, `accounts[${i}].address`),
      slots,
      value: {
        balance: BigInt(str(o.balance, `accounts[${i}].balance`)),
        nonce: BigInt(num(o.nonce, `accounts[${i}].nonce`)),
        codeHash: code ? sha3(code) : EMPTY_CODE_HASH,
        storageRoot: trieRoot(slots),
      },
    };
  });
  const entries = accounts.map((a) => [accountKey(a.address), encodeAccountValue(a.value)] as const);
  const proven = str(inputs.proven_address, 'proven_address');
  const absent = str(inputs.absent_address, 'absent_address');
  const withStorage = accounts.find((a) => a.address === proven)!;
  const slot = (k: Json | undefined, name: string) => storageKey(hex(k, name, 32));
  return {
    storage_roots: Object.fromEntries(accounts.map((a) => [a.address, toHex(a.value.storageRoot)])),
    state_root: toHex(trieRoot(entries)),
    account_proof: trieProof(entries, accountKey(proven)).map(toHex),
    absent_account_proof: trieProof(entries, accountKey(absent)).map(toHex),
    storage_proof: trieProof(withStorage.slots, slot(inputs.proven_slot, 'proven_slot')).map(toHex),
    absent_storage_proof: trieProof(withStorage.slots, slot(inputs.absent_slot, 'absent_slot')).map(toHex),
  };
}

/** attestation.json: SSZ message, signing hash, deterministic signature, JSON. */
export function computeAttestation(inputs: JsonObject): JsonObject {
  const chainId = str(inputs.chain_id, 'chain_id');
  const key = keyOf(inputs);
  const validatorIndex = num(inputs.validator_index, 'validator_index');
  // Parse the vote through the strict JSON reader (signature slot filled with zeros).
  const parsed = attestationFromJson({ validator_index: validatorIndex, data: inputs.data, signature: toHex(new Uint8Array(3309)) });
  const data: AttestationData = parsed.data;
  const att = signAttestation(validatorIndex, data, key, chainId);
  return {
    message_ssz: toHex(AttestationMessageSsz.serialize({ validatorIndex, data })),
    signing_hash: toHex(attestationSigningHash(validatorIndex, data, chainId)),
    signature: toHex(att.signature),
    json: attestationToJson(att) as unknown as JsonObject,
  };
}

/** randao.json: secret, commitment H^n(secret), first reveals and the mix after them. */
export function computeRandao(inputs: JsonObject): JsonObject {
  const seed = hex(inputs.key_seed, 'key_seed', 32);
  const n = num(inputs.chain_length, 'chain_length');
  const reveals = (inputs.reveal_ks as Json[]).map((k, i) => randaoReveal(seed, n, num(k, `reveal_ks[${i}]`)));
  let mix = hex(inputs.initial_mix, 'initial_mix', 32);
  for (const r of reveals) mix = mixRandao(mix, r);
  return {
    secret: toHex(randaoSecret(seed)),
    commitment: toHex(randaoCommitment(seed, n)),
    reveals: reveals.map(toHex),
    mix_after_reveals: toHex(mix),
    h1_of_secret: toHex(hashChain(randaoSecret(seed), 1)),
  };
}
