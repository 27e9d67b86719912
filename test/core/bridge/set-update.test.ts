/**
 * A bridge following a counterpart's validator-set changes (src/core/bridge/set-update.ts and the
 * rules in verify.ts): chain A grows from its 4 genesis validators to 8 by deposits, then the
 * genesis 4 exit two at a time, each change signed by 2/3 of the set B holds before it. Releases
 * are then checked against the held set, and the genesis set fails safe. Tampers: a change
 * signed by the new set, a skipped change, a stale one, a proof against another root, a forged
 * entry, a short node list, an unregistered counterpart, a BID signed by an exited validator.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { MalformedError } from '../../../src/core/errors.js';
import { type BidFields, BridgeError, BridgeOp, LockState, type SetUpdateBody, bidId, amountWord, ledgerSlot, lockSlot, setSlot, stateWord } from '../../../src/core/bridge/types.js';
import { decodeBridgeOp, encodeBridgeOp } from '../../../src/core/bridge/ops.js';
import { type HeldSet, genesisHeldSet, heldSetCommitment, heldSetFromJson, heldSetToJson } from '../../../src/core/bridge/set-update.js';
import { type BridgeState, bridgeGas, checkRelease, checkSetUpdate } from '../../../src/core/bridge/verify.js';
import { BRIDGE_BYTE_GAS, DILITHIUM_VERIFY_GAS, TX_BASE_GAS, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { bidSignatures, finalityProof, grownRegistry, setUpdate, testChain } from '../../helpers/bridge.js';
import { expectError, filled } from '../../helpers/assert.js';

const A = testChain('svc-sets-a', 5);
const B = testChain('svc-sets-b', 6);
// Validators 4-7 of A join by deposit; the test holds every key by index.
const joiners = Array.from({ length: 4 }, (_, i) => keygenFromSeed(filled(32, 0x40 + i)));
const keys = [...A.keys, ...joiners];

// Epoch 2: the registry holds 8, signed by 3 of the genesis 4 over the genesis set's 4 bits.
const toEight = setUpdate(A, grownRegistry(A, joiners), { finalizedEpoch: 2, signers: [0, 1, 2], registrySize: 4 });
// Epoch 5: 0 and 1 exited, signed by 6 of the 8.
const exitTwo = setUpdate(A, grownRegistry(A, joiners, [0, 1]), { finalizedEpoch: 5, signers: [0, 1, 2, 3, 4, 5], keys, registrySize: 8 });
// Epoch 8: 2 and 3 exited as well, signed by 4 of the 6 still active (exactly 2/3).
const exitFour = setUpdate(A, grownRegistry(A, joiners, [0, 1, 2, 3]), { finalizedEpoch: 8, signers: [4, 5, 6, 7], keys, registrySize: 8 });

const T0 = A.genesis.genesis_time + 100_000;
const fields: BidFields = { source: A.hash, destination: B.hash, lockTx: filled(32, 7), sender: filled(20, 0xa1), recipient: filled(20, 0xb2), amount: 5n * WEI_PER_TOKEN, timeout: T0 + 600 };
const bid = bidId(fields);

/** Chain B's state with A registered and the set `held` it holds for A. */
function onB(held?: HeldSet): BridgeState {
  return {
    self: B.hash,
    timestampMs: T0 * 1000,
    counterpart: (h) => (toHex(h) === toHex(A.hash) ? A.genesis : undefined),
    counterpartSet: (h, g) => held ?? genesisHeldSet(g, h),
    storage: (slot) => (toHex(slot) === toHex(ledgerSlot(A.hash)) ? amountWord(10n ** 24n) : new Uint8Array(32)),
    balance: () => 10n ** 24n,
    registry: { chainId: B.genesis.chain_id, validator: () => undefined, activeStake: () => 0n },
  };
}

const follow = (updates: SetUpdateBody[]): HeldSet => updates.reduce<HeldSet>((held, u) => checkSetUpdate(u, onB(held)).next, genesisHeldSet(A.genesis, A.hash));

function fails(fn: () => unknown, code: string, includes: string): BridgeError {
  const e = expectError(fn, BridgeError);
  assert.is(e.code, code, e.message);
  assert.ok(e.message.includes(includes), `${JSON.stringify(e.message)} should include ${JSON.stringify(includes)}`);
  return e;
}

/** A release of `fields` whose lock is proven at `epoch`, finalised by `signers` over a registry of `size`, with BID signatures of `bidSigners`. */
function release(o: { epoch: number; signers: number[]; size: number; bidSigners: number[] }) {
  const proof = finalityProof(A, { storage: [[lockSlot(bid), stateWord(LockState.Locked)]], slot: lockSlot(bid), finalizedEpoch: o.epoch, signers: o.signers, keys, registrySize: o.size });
  return { bid: fields, proof, signatures: bidSignatures(A, fields, o.bidSigners, keys) };
}

test('B follows A from 4 genesis validators to 8, then to the 4 that joined, each change signed by the set before it', () => {
  const eight = follow([toEight]);
  assert.is(eight.epoch, 2);
  assert.is(eight.validators.size, 8);
  assert.ok([...eight.validators.values()].every((v) => v.active));
  const final = follow([toEight, exitTwo, exitFour]);
  assert.is(final.epoch, 8);
  assert.equal([...final.validators.values()].filter((v) => v.active).map((v) => v.index), [4, 5, 6, 7]);
  // None of the genesis set remains; a release signed only by the joiners verifies against the held set.
  const r = release({ epoch: 9, signers: [4, 5, 6], size: 8, bidSigners: [4, 5, 6] });
  assert.is(toHex(checkRelease(r, onB(final))), toHex(bid));
  // The stored form round-trips to the same commitment, which binds epoch, root and every key.
  assert.is(toHex(heldSetCommitment(heldSetFromJson(JSON.parse(JSON.stringify(heldSetToJson(final)))))), toHex(heldSetCommitment(final)));
  assert.is.not(toHex(heldSetCommitment(final)), toHex(heldSetCommitment(eight)));
  assert.is.not(toHex(heldSetCommitment({ ...final, epoch: 9 })), toHex(heldSetCommitment(final)));
});

test('a chain still holding the genesis set fails safe on the grown chain, naming the light-client check', () => {
  const r = release({ epoch: 9, signers: [4, 5, 6], size: 8, bidSigners: [4, 5, 6] });
  fails(() => checkRelease(r, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_NONCANONICAL');
  // Against the 8-set the exits have not moved yet: the joiners alone hold 3 of 8, below 2/3.
  fails(() => checkRelease(r, onB(follow([toEight]))), 'BRIDGE_PROOF_INVALID', 'LIGHT_INSUFFICIENT_STAKE');
});

test('BID signatures count only active validators of the held set', () => {
  const final = follow([toEight, exitTwo, exitFour]);
  const withExited = release({ epoch: 9, signers: [4, 5, 6], size: 8, bidSigners: [0, 4, 5] });
  fails(() => checkRelease(withExited, onB(final)), 'BRIDGE_UNKNOWN_SIGNER', 'validator 0 is not an active validator');
  const short = release({ epoch: 9, signers: [4, 5, 6], size: 8, bidSigners: [4, 5] });
  fails(() => checkRelease(short, onB(final)), 'BRIDGE_INSUFFICIENT_SIGNATURES', 'below 2/3');
  // An exited validator's finality vote is refused too.
  fails(() => checkRelease(release({ epoch: 9, signers: [0, 4, 5, 6], size: 8, bidSigners: [4, 5, 6] }), onB(final)), 'BRIDGE_PROOF_INVALID', 'LIGHT_UNKNOWN_SIGNER');
});

test('tampered set updates are refused with BRIDGE_SET_UPDATE_INVALID naming the check', () => {
  const genesisHeld = genesisHeldSet(A.genesis, A.hash);
  const eight = follow([toEight]);
  // Signed by the new set instead of the held one: the joiners are nobody to the genesis set.
  const byNew = setUpdate(A, grownRegistry(A, joiners), { finalizedEpoch: 2, signers: [1, 2, 3], keys: [A.keys[0]!, ...joiners], registrySize: 4 });
  fails(() => checkSetUpdate(byNew, onB(genesisHeld)), 'BRIDGE_SET_UPDATE_INVALID', 'LIGHT_BAD_SIGNATURE');
  // A skipped change: the exit change's votes are over 8 bits and by validators the genesis set does not hold.
  fails(() => checkSetUpdate(exitTwo, onB(genesisHeld)), 'BRIDGE_SET_UPDATE_INVALID', 'LIGHT_NONCANONICAL');
  // Replayed: a change at or before the held checkpoint moves nothing.
  fails(() => checkSetUpdate(toEight, onB(eight)), 'BRIDGE_SET_UPDATE_INVALID', 'LIGHT_STALE_UPDATE');
  // A registry proven against another root than the signed header's.
  const other = setUpdate(A, grownRegistry(A, joiners.slice(0, 3)), { finalizedEpoch: 2, signers: [0, 1, 2], registrySize: 4 });
  fails(() => checkSetUpdate({ ...toEight, registry: other.registry }, onB(genesisHeld)), 'BRIDGE_SET_UPDATE_INVALID', 'LIGHT_PROOF_INVALID');
  // A forged entry: a joiner's stake raised, so its word no longer matches the state.
  const forged = structuredClone(toEight);
  forged.registry.entries[5]!.stake *= 100n;
  fails(() => checkSetUpdate(forged, onB(genesisHeld)), 'BRIDGE_SET_UPDATE_INVALID', "validator 5's entry");
  // A withheld entry's proof.
  const short = { ...toEight, registry: { ...toEight.registry, storageNodes: toEight.registry.storageNodes.slice(0, -1) } };
  fails(() => checkSetUpdate(short, onB(genesisHeld)), 'BRIDGE_SET_UPDATE_INVALID', 'needs 9');
  // For a chain B does not know.
  fails(() => checkSetUpdate({ ...toEight, counterpart: filled(32, 0xcc) }, onB(genesisHeld)), 'BRIDGE_UNKNOWN_COUNTERPART', 'is not a registered counterpart');
});

test('the update_set op round-trips through its SSZ codec, pays for its votes, and a misordered registry is malformed', () => {
  const data = encodeBridgeOp({ op: BridgeOp.UpdateSet, body: toEight });
  const back = decodeBridgeOp(data);
  assert.is(back.op, BridgeOp.UpdateSet);
  assert.equal(encodeBridgeOp(back), data);
  assert.is(bridgeGas(data), TX_BASE_GAS + BRIDGE_BYTE_GAS * BigInt(data.length) + 3n * DILITHIUM_VERIFY_GAS);
  const swapped = structuredClone(toEight);
  [swapped.registry.entries[1], swapped.registry.entries[2]] = [swapped.registry.entries[2]!, swapped.registry.entries[1]!];
  const e = expectError(() => decodeBridgeOp(encodeBridgeOp({ op: BridgeOp.UpdateSet, body: swapped })), MalformedError);
  assert.ok(e.message.includes('bridge.update_set.registry.entries[1].index'), e.message);
  expectError(() => decodeBridgeOp(data.subarray(0, 200)), MalformedError);
  // 4 → 8 validators: about 40 KB of transaction data, well inside the 256 KiB limit.
  assert.ok(data.length < 64 * 1024, `${data.length} bytes`);
});

test('the set slot and the held-set commitment match the worked values of docs/bridge.md', () => {
  const v = (i: number, byte: number, active: boolean) => [i, { index: i, publicKey: new Uint8Array(1952).fill(byte), stake: 32n * WEI_PER_TOKEN, active }] as const;
  const held: HeldSet = { epoch: 2, root: filled(32, 0x11), validators: new Map([v(0, 0xa0, false), v(1, 0xa1, true)]) };
  assert.is(toHex(heldSetCommitment(held)), '0x7d8897f0d2f2ccbdd88e8aceec90d3355307958772dbb53d6096fa8f489b31b2');
  assert.is(toHex(setSlot(filled(32, 0x22))), '0x7db64999cf2cb530727a251e6d82c5a5e78fb25ce909b46312186c9072531ad5');
});

test.run();
