/**
 * The worked example of docs/light-client.md stays true: the example chain (4 validators from the
 * public dev mnemonic) is rebuilt, its finality update, header chain and account proofs (present
 * and absent) recomputed and verified with the light client's checks, and then compared with both
 * fixtures/vectors/light-client.json (the full answers, which the document points to) and every
 * `name value` line between the document's light-example markers.
 *
 * After an intended change: npm run build && UPDATE_LIGHT_EXAMPLE=1 node scripts/test.mjs 'core/light/doc-example' --jobs 1
 * rewrites the fixture and prints the block to paste into the document.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { Domain, signingHash } from '../../../src/core/crypto/domain.js';
import { canonicalJson, epochOfSlot, genesisHash } from '../../../src/core/genesis/genesis.js';
import { finalityUpdateFromJson, trustedFromGenesis } from '../../../src/core/light/types.js';
import { participationBits, verifyAccountAgainstHeader, verifyAncestry, verifyFinalityUpdate } from '../../../src/core/light/verify.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, accountKey, encodeAccountValue, storageKey, trieProof, trieRoot, type AccountProofWire } from '../../../src/core/state/trie.js';
import { REGISTRY_ADDRESS, encodeRegistryEntry, genesisRegistry, registryCountSlot, registryEntrySlot, registryEntryWord, registryStorage } from '../../../src/core/consensus/registry.js';
import { type RegistryProofWire, verifyRegistryProof } from '../../../src/core/light/registry.js';
import { attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { type BlockHeader, blockHash, headerToJson } from '../../../src/core/types/block.js';
import { AttestationMessageSsz, BlockHeaderSsz } from '../../../src/core/types/ssz.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { REPO_ROOT } from '../../helpers/cli.js';

const DOC = join(REPO_ROOT, 'docs', 'light-client.md');
const FIXTURE = join(REPO_ROOT, 'fixtures', 'vectors', 'light-client.json');
const UPDATE = process.env.UPDATE_LIGHT_EXAMPLE === '1';
const BEGIN = '<!-- light-example:begin -->';
const END = '<!-- light-example:end -->';

function example() {
  const { genesis, keys } = buildGenesis({
    validators: 4,
    accounts: 1,
    preset: 'devnet',
    chainId: 'svc-example',
    networkId: 1337,
    genesisTime: 1_767_225_600,
    mnemonic: DEV_MNEMONIC,
    timing: { slotSeconds: 2, slotsPerEpoch: 4, randaoChainLength: 16 },
  });
  const gHash = genesisHash(genesis);
  const stateRoot = genesisStateRoot(genesis);
  // Block 1 at slot 4, the first slot of epoch 1: its epoch's checkpoint block. It executes on the genesis state.
  const header: BlockHeader = {
    index: 1,
    timestampMs: (genesis.genesis_time + 4 * genesis.config.slot_seconds) * 1000,
    parentHash: gHash,
    merkleRoot: new Uint8Array(32).fill(0x11),
    validatorId: parseHex(genesis.validators[0]!.address, 'address', 20),
    vrfProof: new Uint8Array(3309).fill(0x22),
    vrfSeed: new Uint8Array(32).fill(0x33),
    randaoReveal: new Uint8Array(32).fill(0x44),
    stateRoot,
  };
  const root = blockHash(header);
  const target = { epoch: 2, root: new Uint8Array(32).fill(0x99) };
  const data = { slot: 9, beaconBlockRoot: target.root, source: { epoch: 1, root }, target };
  const validatorKeys = keys.filter((k) => k.role === 'validator').sort((a, b) => a.index - b.index);
  const signers = [0, 1, 2];
  const attestations = signers.map((i) => signAttestation(i, data, validatorKeys[i]!.keys.mldsa, genesis.chain_id));
  const participation = participationBits(signers, genesis.validators.length);
  const update = { finalized: { epoch: 1, root: toHex(root) }, target: { epoch: 2, root: toHex(target.root) }, header: headerToJson(header), attestations: attestations.map(attestationToJson), participation: toHex(participation) };

  // The registry account: the genesis validators' words (docs/protocol.md "The registry in the state").
  const registryEntries = genesisRegistry(genesis);
  const registryWords = registryStorage(registryEntries).map(([slot, word]) => [storageKey(slot), word] as const);
  const registryRoot = trieRoot(registryWords);
  const entries = [
    ...genesis.alloc.filter((a) => BigInt(a.balance) > 0n).map((a) => [accountKey(a.address), encodeAccountValue({ balance: BigInt(a.balance), nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT })] as const),
    [accountKey(REGISTRY_ADDRESS), encodeAccountValue({ balance: 0n, nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: registryRoot })] as const,
  ];
  const registrySlots = [registryCountSlot(), ...registryEntries.map((e) => registryEntrySlot(e.index))];
  const registry: RegistryProofWire = {
    count: registryEntries.length,
    from: 0,
    entries: registryEntries,
    proof: {
      address: REGISTRY_ADDRESS,
      stateRoot: toHex(stateRoot),
      balance: '0',
      nonce: 0,
      codeHash: toHex(EMPTY_CODE_HASH),
      storageHash: toHex(registryRoot),
      accountProof: trieProof(entries, accountKey(REGISTRY_ADDRESS)).map(toHex),
      storageProof: registryStorage(registryEntries).map(([slot, word], i) => ({ key: toHex(registrySlots[i]!), value: toHex(word), proof: trieProof(registryWords, storageKey(slot)).map(toHex) })),
    },
  };
  const account = genesis.alloc.find((a) => !genesis.validators.some((v) => v.address === a.address) && a.address !== genesis.config.faucet.address)!;
  const absent = '0x' + '00'.repeat(19) + 'ee';
  const proofOf = (address: string, balance: bigint): AccountProofWire => ({
    address,
    stateRoot: toHex(stateRoot),
    balance: balance.toString(),
    nonce: 0,
    codeHash: toHex(EMPTY_CODE_HASH),
    storageHash: toHex(EMPTY_TRIE_ROOT),
    accountProof: trieProof(entries, accountKey(address)).map(toHex),
    storageProof: [],
  });
  const present = proofOf(account.address, BigInt(account.balance));
  const missing = proofOf(absent, 0n);

  // The example is one the light client accepts.
  const fin = verifyFinalityUpdate(finalityUpdateFromJson(update), trustedFromGenesis(genesis, gHash));
  assert.is(fin.signers, 3);
  assert.is(verifyAncestry(root, [header]).index, 1);
  assert.is(verifyAccountAgainstHeader(header, account.address, present).balance, BigInt(account.balance));
  assert.is(verifyAccountAgainstHeader(header, absent, missing).balance, 0n);
  assert.is(toHex(trieRoot(entries)), toHex(stateRoot));
  assert.equal([...verifyRegistryProof(stateRoot, registry).keys()], [0, 1, 2, 3]);
  const entry0 = encodeRegistryEntry(registryEntries[0]!);

  const ssz = BlockHeaderSsz.serialize(header);
  const message = AttestationMessageSsz.serialize({ validatorIndex: 0, data });
  const values: Array<[string, string]> = [
    ['chain_id', genesis.chain_id],
    ['genesis_canonical_json_sha3', toHex(sha3(Buffer.from(canonicalJson(genesis), 'utf8')))],
    ['genesis_hash', toHex(gHash)],
    ['genesis_state_root', toHex(stateRoot)],
    ['account', account.address],
    ['account_balance', account.balance],
    ['account_key', toHex(accountKey(account.address))],
    ['account_leaf_value', toHex(encodeAccountValue({ balance: BigInt(account.balance), nonce: 0n, codeHash: EMPTY_CODE_HASH, storageRoot: EMPTY_TRIE_ROOT }))],
    ...present.accountProof.map((n, i) => [`account_proof[${i}]`, n] as [string, string]),
    ['absent', absent],
    ['absent_key', toHex(accountKey(absent))],
    ...missing.accountProof.map((n, i) => [`absent_proof[${i}]`, n] as [string, string]),
    ['header_ssz_bytes', String(ssz.length)],
    ['header_ssz[0..100)', toHex(ssz.subarray(0, 100))],
    ['header_ssz[3409..3505)', toHex(ssz.subarray(3409))],
    ['header_hash', toHex(root)],
    ['attestation_slot_epoch', String(epochOfSlot(genesis, data.slot))],
    ['attestation_message_ssz', toHex(message)],
    ['attestation_signing_hash', toHex(signingHash(Domain.Attestation, genesis.chain_id, message))],
    ['attestation_signing_hash_check', toHex(sha3(Buffer.from(Domain.Attestation.padEnd(32, '\0')), Buffer.from(genesis.chain_id.padEnd(12, '\0')), message))],
    ['attestation_signature_sha3', toHex(sha3(attestations[0]!.signature))],
    ['participation', toHex(participation)],
    ['registry_address', REGISTRY_ADDRESS],
    ['registry_count_slot', toHex(registryCountSlot())],
    ['registry_count_word', registry.proof.storageProof[0]!.value],
    ['registry_entry_slot[0]', toHex(registryEntrySlot(0))],
    ['registry_entry_ssz[0]_bytes', String(entry0.length)],
    ['registry_entry_ssz[0][0..28)', toHex(entry0.subarray(0, 28))],
    ['registry_entry_ssz[0][1980..2046)', toHex(entry0.subarray(1980))],
    ['registry_entry_word[0]', toHex(registryEntryWord(registryEntries[0]!))],
    ['registry_storage_root', toHex(registryRoot)],
  ];
  return { fixture: { description: 'The worked example of docs/light-client.md (test/core/light/doc-example.test.ts): the example genesis, a finality update of block 1 signed by validators 0-2, its header chain, the proof answers of a present and an absent account, and the registry proof of the genesis set.', genesis, finality_update: update, headers: { headers: [headerToJson(header)] }, proof_present: { block_hash: toHex(root), header: headerToJson(header), proof: present }, proof_absent: { block_hash: toHex(root), header: headerToJson(header), proof: missing }, registry }, values };
}

test('the worked example of docs/light-client.md is what the code computes, and the light client accepts it', () => {
  const { fixture, values } = example();
  const block = values.map(([k, v]) => `${k} ${v}`).join('\n');
  if (UPDATE) {
    writeFileSync(FIXTURE, JSON.stringify(fixture, null, 2) + '\n');
    console.log(`${BEGIN}\n\`\`\`\n${block}\n\`\`\`\n${END}`);
  }
  assert.equal(JSON.parse(readFileSync(FIXTURE, 'utf8')), JSON.parse(JSON.stringify(fixture)), 'fixtures/vectors/light-client.json');
  const doc = readFileSync(DOC, 'utf8');
  const at = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  assert.ok(at >= 0 && end > at, 'the document has the example block');
  const documented = doc.slice(at + BEGIN.length, end).split('\n').filter((l) => l !== '' && !l.startsWith('```'));
  assert.equal(documented, block.split('\n'), 'the documented example values');
  // The sha3 of the canonical JSON is the genesis hash; the hand-made signing preimage is the code's.
  const v = new Map(values);
  assert.is(v.get('genesis_canonical_json_sha3'), v.get('genesis_hash'));
  assert.is(v.get('attestation_signing_hash_check'), v.get('attestation_signing_hash'));
});

test.run();
