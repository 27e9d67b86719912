/**
 * Set changes (src/core/light/set-change.ts, registry.ts): a client holding set A moves to set B
 * only on a finality update signed by ≥ 2/3 of A whose header's state_root proves B's registry.
 * Tampers: a change signed by the new set, a skipped change, a proof against another root, a
 * forged entry, a withheld entry, a registry with nobody active, a stale checkpoint.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { type RegistryEntry } from '../../../src/core/consensus/registry.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { standaloneRegistryProof, verifyRegistryProof } from '../../../src/core/light/registry.js';
import { type SetChange, applySetChange, followSetChanges, setChangeFromJson } from '../../../src/core/light/set-change.js';
import { LightClientError, type TrustedState, type TrustedValidator } from '../../../src/core/light/types.js';
import { participationBits } from '../../../src/core/light/verify.js';
import { attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { type BlockHeader, blockHash, headerToJson } from '../../../src/core/types/block.js';
import { expectError, filled } from '../../helpers/assert.js';

const CHAIN = 'svc-sets';
const SPE = 4;
const STAKE = 32n * 10n ** 18n;
// Validators 0-3 are the genesis set; 4-7 join by deposit.
const keys: Array<ReturnType<typeof keygenFromSeed>> = Array.from({ length: 8 }, (_, i) => keygenFromSeed(filled(32, i + 1)));

const entry = (i: number, active = true, slashed = false): RegistryEntry => ({
  index: i, address: toHex(filled(20, 0x10 + i)), public_key: toHex(keys[i]!.publicKey), stake: STAKE.toString(), randao_commitment: toHex(filled(32, i)), active, slashed,
});

const registryState = standaloneRegistryProof;

function header(index: number, stateRoot: Uint8Array): BlockHeader {
  return { index, timestampMs: 1_000 * index, parentHash: filled(32, index), merkleRoot: filled(32, index), validatorId: filled(20, 1), vrfProof: filled(3309, 2), vrfSeed: filled(32, 3), randaoReveal: filled(32, 4), stateRoot };
}

/** The set change finalising a checkpoint at `epoch` whose state holds `entries`, signed by `signers` over a registry of `n`. */
function change(epoch: number, entries: RegistryEntry[], signers: number[], n: number): SetChange & { stateRoot: Uint8Array } {
  const { stateRoot, proof } = registryState(entries);
  const h = header(epoch * SPE, stateRoot);
  const finalized = { epoch, root: blockHash(h) };
  const target = { epoch: epoch + 1, root: filled(32, 0x70 + epoch) };
  const attestations = signers.map((i) => signAttestation(i, { slot: (epoch + 1) * SPE + 1, beaconBlockRoot: target.root, source: finalized, target }, keys[i]!, CHAIN));
  return { stateRoot, registry: proof, finality: { finalized, target, header: h, attestations, participation: participationBits(signers, n) } };
}

const genesisSet = new Map<number, TrustedValidator>([0, 1, 2, 3].map((i) => [i, { index: i, publicKey: keys[i]!.publicKey, stake: STAKE, active: true }]));
const genesis: TrustedState = { chainId: CHAIN, slotsPerEpoch: SPE, root: filled(32, 0xee), validators: genesisSet };

// Epoch 2: 0-3 plus deposits 4-7 (the registry holds 8), signed by 3 of the genesis 4.
const grown = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => entry(i));
const toEight = change(2, grown, [0, 1, 2], 4);
// Epoch 5: 0 and 1 exited; signed by 6 of the 8 (2/3 of 8 validators' stake is 5.33).
const shrunk = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => entry(i, i > 1));
const toSix = change(5, shrunk, [0, 1, 2, 3, 4, 5], 8);

function fails(fn: () => unknown, code: string, includes: string): void {
  const e = expectError(fn, LightClientError);
  assert.is(e.code, code, e.message);
  assert.ok(e.message.includes(includes), `${JSON.stringify(e.message)} should include ${JSON.stringify(includes)}`);
}

test('a set change signed by 2/3 of the held set moves the client to the proven set, and the next one is checked against it', () => {
  const eight = applySetChange(genesis, toEight);
  assert.is(eight.epoch, 2);
  assert.equal(eight.root, toEight.finality.finalized.root);
  assert.is(eight.validators.size, 8);
  assert.ok([...eight.validators.values()].every((v) => v.active));
  const six = followSetChanges(genesis, [toEight, toSix]);
  assert.is(six.epoch, 5);
  assert.equal([...six.validators.values()].filter((v) => v.active).map((v) => v.index), [2, 3, 4, 5, 6, 7]);
  // Parsing the wire form (as the beacon serves it) gives the same change.
  const wire = JSON.parse(JSON.stringify({ finality: finalityJson(toEight), registry: toEight.registry, validators: 8, active_stake: '256' }));
  assert.equal(applySetChange(genesis, setChangeFromJson(wire)).root, eight.root);
});

test('refused: a change signed by the new set, or by a validator the held set has exited', () => {
  // The new validators' bits lie past the held set's registry: not its canonical form.
  fails(() => applySetChange(genesis, change(2, grown, [4, 5, 6, 7], 8)), 'LIGHT_NONCANONICAL', '');
  // After the exits, 0 and 1 sign no more for the client.
  const six = followSetChanges(genesis, [toEight, toSix]);
  fails(() => applySetChange(six, change(7, shrunk, [0, 1, 2, 3, 4, 5], 8)), 'LIGHT_UNKNOWN_SIGNER', 'validator 0');
});

test('refused: a change skipped (the later one is framed on, and signed by, a set the client never took)', () => {
  fails(() => applySetChange(genesis, toSix), 'LIGHT_NONCANONICAL', '');
});

test('refused: a registry proven against another state root than the finalised header\'s', () => {
  const other = registryState([0, 1, 2, 3].map((i) => entry(i)));
  const lying: SetChange = { finality: toEight.finality, registry: other.proof };
  fails(() => applySetChange(genesis, lying), 'LIGHT_PROOF_INVALID', 'does not verify against state_root');
});

test('refused: a forged entry, a withheld entry, a key for another slot, a registry with nobody active', () => {
  const forged = structuredClone(toEight.registry);
  forged.entries[5] = { ...forged.entries[5]!, public_key: toHex(keys[0]!.publicKey) };
  fails(() => verifyRegistryProof(toEight.stateRoot, forged), 'LIGHT_PROOF_INVALID', "validator 5's entry as served");
  const staked = structuredClone(toEight.registry);
  staked.entries[4] = { ...staked.entries[4]!, stake: (STAKE * 1000n).toString() };
  fails(() => verifyRegistryProof(toEight.stateRoot, staked), 'LIGHT_PROOF_INVALID', "validator 4's entry");
  const withheld = structuredClone(toEight.registry);
  withheld.entries.pop();
  withheld.proof.storageProof.pop();
  withheld.count = 7;
  fails(() => verifyRegistryProof(toEight.stateRoot, withheld), 'LIGHT_PROOF_INVALID', 'count word is 8');
  const reordered = structuredClone(toEight.registry);
  [reordered.proof.storageProof[1], reordered.proof.storageProof[2]] = [reordered.proof.storageProof[2]!, reordered.proof.storageProof[1]!];
  fails(() => verifyRegistryProof(toEight.stateRoot, reordered), 'LIGHT_PROOF_INVALID', 'storage proof 1 is for slot');
  const wrongAccount = structuredClone(toEight.registry);
  wrongAccount.proof.address = toHex(filled(20, 0x42));
  fails(() => verifyRegistryProof(toEight.stateRoot, wrongAccount), 'LIGHT_PROOF_INVALID', 'not the registry account');
  // Slashed counts as inactive; nobody active is refused rather than trusted.
  const withSlashed = registryState([entry(0, true, true), entry(1)]);
  assert.is(verifyRegistryProof(withSlashed.stateRoot, withSlashed.proof).get(0)!.active, false);
  const empty = change(2, [0, 1, 2, 3].map((i) => entry(i, false)), [0, 1, 2], 4);
  fails(() => applySetChange(genesis, empty), 'LIGHT_PROOF_INVALID', 'no active validator');
});

test('refused: a change for a checkpoint not newer than the held one', () => {
  const eight = applySetChange(genesis, toEight);
  fails(() => applySetChange(eight, toEight), 'LIGHT_STALE_UPDATE', '');
});

function finalityJson(c: SetChange): unknown {
  const f = c.finality;
  const cp = (x: { epoch: number; root: Uint8Array }) => ({ epoch: x.epoch, root: toHex(x.root) });
  return {
    finalized: cp(f.finalized), target: cp(f.target), header: headerToJson(f.header), attestations: f.attestations.map(attestationToJson),
    participation: toHex(f.participation), signers: f.attestations.length, signed_stake: '0', active_stake: '0', size_bytes: 0,
  };
}

test.run();
