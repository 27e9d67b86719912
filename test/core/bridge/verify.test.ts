/**
 * The bridge's pure rules (src/core/bridge/verify.ts) against a real counterpart: a genesis with
 * four validators built by the genesis builder, a state trie of its bridge account, a header
 * naming that trie's root, finality votes and BID signatures made with ML-DSA by its validators.
 * A valid release, refund and completion pass; each rule's failure is refused with its code, in
 * the order of docs/bridge.md's tables. Gas, counterpart parsing and the payload codec too.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS, MAX_BRIDGE_TIMEOUT_SECONDS, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { canonicalJson } from '../../../src/core/genesis/genesis.js';
import { MalformedError } from '../../../src/core/errors.js';
import { signStandardTx } from '../../../src/core/types/transaction.js';
import { intrinsicGas } from '../../../src/core/gas.js';
import { type BidFields, BridgeError, BridgeOp, LockState, RELEASED_WORD, bidId, amountWord, ledgerSlot, lockSlot, releaseSlot, stateWord } from '../../../src/core/bridge/types.js';
import { type BridgeOperation, decodeBridgeOp, encodeBridgeOp } from '../../../src/core/bridge/ops.js';
import { type BridgeState, bridgeGas, checkComplete, checkLock, checkRefund, checkRelease, parseCounterpart, verifyFinalityProof } from '../../../src/core/bridge/verify.js';
import { genesisHeldSet, trustedFromHeld } from '../../../src/core/bridge/set-update.js';
import { bidSignatures, finalityProof, testChain } from '../../helpers/bridge.js';
import { expectError } from '../../helpers/assert.js';

// Source chain A (4 validators) locks; destination chain B releases. C is a third chain whose keys sign forgeries.
const A = testChain('svc-bridge-a', 1);
const B = testChain('svc-bridge-b', 2);
const C = testChain('svc-bridge-c', 3);
const T0 = A.genesis.genesis_time + 1_000;
const fields: BidFields = {
  source: A.hash,
  destination: B.hash,
  lockTx: new Uint8Array(32).fill(7),
  sender: new Uint8Array(20).fill(0xa1),
  recipient: new Uint8Array(20).fill(0xb2),
  amount: 5n * WEI_PER_TOKEN,
  timeout: T0 + 600,
};
const bid = bidId(fields);
const lockedStorage = [[lockSlot(bid), stateWord(LockState.Locked)], [lockSlot(new Uint8Array(32).fill(1)), stateWord(LockState.Locked)]] as const;

/** A chain's state as the rules read it: registered counterparts, bridge storage, balance and time. */
function state(self: Uint8Array, o: { registered?: typeof A[]; storage?: Map<string, Uint8Array>; balance?: bigint; ledger?: bigint; timestampMs?: number } = {}): BridgeState {
  const reg = o.registered ?? [];
  // Each registered counterpart's ledger holds `ledger` (default a million tokens) unless `storage` says otherwise.
  const ledgers = new Map(reg.map((c) => [toHex(ledgerSlot(c.hash)), amountWord(o.ledger ?? 1_000_000n * WEI_PER_TOKEN)]));
  return {
    self,
    timestampMs: o.timestampMs ?? T0 * 1000,
    counterpart: (h) => reg.find((c) => toHex(c.hash) === toHex(h))?.genesis,
    counterpartSet: (h, g) => genesisHeldSet(g, h),
    storage: (slot) => o.storage?.get(toHex(slot)) ?? ledgers.get(toHex(slot)) ?? new Uint8Array(32),
    balance: () => o.balance ?? 1_000_000n * WEI_PER_TOKEN,
    registry: { chainId: 'unused', validator: () => undefined, activeStake: () => 0n },
  };
}

const onB = (o: Parameters<typeof state>[1] = {}) => state(B.hash, { registered: [A], ...o });
const onA = (o: Parameters<typeof state>[1] = {}) => state(A.hash, { registered: [B], storage: new Map([[toHex(lockSlot(bid)), stateWord(LockState.Locked)]]), ...o });

const release = (o: Partial<{ f: BidFields; proof: ReturnType<typeof finalityProof>; sigs: ReturnType<typeof bidSignatures> }> = {}) => {
  const f = o.f ?? fields;
  return { bid: f, proof: o.proof ?? finalityProof(A, { storage: lockedStorage, slot: lockSlot(bidId(f)) }), signatures: o.sigs ?? bidSignatures(A, f) };
};

function fails(fn: () => unknown, code: string, includes?: string): BridgeError {
  const e = expectError(fn, BridgeError);
  assert.is(e.code, code, e.message);
  if (includes) assert.ok(e.message.includes(includes), `${JSON.stringify(e.message)} should include ${JSON.stringify(includes)}`);
  return e;
}

test('a release with a finality proof of the lock and a 2/3 quorum of BID signatures passes', () => {
  assert.is(toHex(checkRelease(release(), onB())), toHex(bid));
  // A release proof from a later finalised header (any epoch) is as good.
  assert.is(toHex(checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: lockSlot(bid), finalizedEpoch: 40 }) }), onB())), toHex(bid));
  // All four signing also passes; the proof's value is returned by verifyFinalityProof.
  assert.is(toHex(checkRelease(release({ sigs: bidSignatures(A, fields, [3, 2, 1, 0]) }), onB())), toHex(bid));
  const v = verifyFinalityProof(release().proof, trustedFromHeld(A.genesis, genesisHeldSet(A.genesis, A.hash)), lockSlot(bid));
  assert.is(toHex(v.value), toHex(stateWord(LockState.Locked)));
});

test('release: wrong destination, unknown source, expired, already released — in that order', () => {
  const forC = { ...fields, destination: C.hash };
  fails(() => checkRelease(release({ f: forC }), onB()), 'BRIDGE_WRONG_DESTINATION', toHex(C.hash));
  fails(() => checkRelease(release(), onB({ registered: [C] })), 'BRIDGE_UNKNOWN_COUNTERPART', toHex(A.hash));
  fails(() => checkRelease(release(), onB({ timestampMs: fields.timeout * 1000 })), 'BRIDGE_EXPIRED');
  assert.is(toHex(checkRelease(release(), onB({ timestampMs: fields.timeout * 1000 - 1 }))), toHex(bid));
  fails(() => checkRelease(release(), onB({ storage: new Map([[toHex(releaseSlot(bid)), RELEASED_WORD]]) })), 'BRIDGE_ALREADY_RELEASED');
  // Order: an expired, already-released BID for another chain names the destination first.
  fails(() => checkRelease(release({ f: forC }), onB({ timestampMs: fields.timeout * 1000, storage: new Map([[toHex(releaseSlot(bidId(forC))), RELEASED_WORD]]) })), 'BRIDGE_WRONG_DESTINATION');
});

test('release: forged votes, a non-finalised header, another validator set, a tampered state proof → BRIDGE_PROOF_INVALID naming the light-client check', () => {
  // A vote whose signature is flipped.
  const forged = release();
  const sig = forged.proof.update.attestations[0]!.signature.slice();
  sig[10]! ^= 1;
  forged.proof.update.attestations[0] = { ...forged.proof.update.attestations[0]!, signature: sig };
  fails(() => checkRelease(forged, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_BAD_SIGNATURE');
  // The header is not the finalised one: another header (say, a later, unfinalised block holding the lock) under the same votes.
  const unfinal = release();
  unfinal.proof.update = { ...unfinal.proof.update, header: { ...unfinal.proof.update.header, index: unfinal.proof.update.header.index + 5 } };
  fails(() => checkRelease(unfinal, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_HEADER_MISMATCH');
  // Votes made by C's validators (a set that is not A's), under A's chain id.
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: lockSlot(bid), keys: C.keys }) }), onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_BAD_SIGNATURE');
  // A's keys voting on another chain's id do not verify as A's either.
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: lockSlot(bid), chainId: 'svc-bridge-c' }) }), onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_BAD_SIGNATURE');
  // Too few votes.
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: lockSlot(bid), signers: [0, 1] }) }), onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_INSUFFICIENT_STAKE');
  // A vote from an index beyond A's set: its bit lies outside A's canonical bitfield.
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: lockSlot(bid), signers: [0, 1, 2, 4], keys: [...A.keys, C.keys[0]!] }) }), onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_NONCANONICAL');
  // The storage proof's value claimed LOCKED where the trie holds nothing (a lock that never happened).
  const noLock = release({ proof: finalityProof(A, { storage: lockedStorage.slice(1), slot: lockSlot(bid) }) });
  noLock.proof.account = { ...noLock.proof.account, value: stateWord(LockState.Locked) };
  fails(() => checkRelease(noLock, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_PROOF_INVALID');
  // A storage trie node altered.
  const tampered = release();
  const node = tampered.proof.account.storageNodes[tampered.proof.account.storageNodes.length - 1]!.slice();
  node[node.length - 1]! ^= 1;
  tampered.proof.account.storageNodes[tampered.proof.account.storageNodes.length - 1] = node;
  fails(() => checkRelease(tampered, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_PROOF_INVALID');
  // The account's balance misstated (account proof fails).
  const rich = release();
  rich.proof.account = { ...rich.proof.account, balance: rich.proof.account.balance + 1n };
  fails(() => checkRelease(rich, onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_PROOF_INVALID');
});

test('release: the source state must hold the lock as LOCKED', () => {
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage.slice(1), slot: lockSlot(bid) }) }), onB()), 'BRIDGE_LOCK_NOT_PROVEN');
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: [[lockSlot(bid), stateWord(LockState.Refunded)]], slot: lockSlot(bid) }) }), onB()), 'BRIDGE_LOCK_NOT_PROVEN');
  // A proof of another BID's lock slot (valid in itself) does not speak for this one.
  const other = lockSlot(new Uint8Array(32).fill(1));
  fails(() => checkRelease(release({ proof: finalityProof(A, { storage: lockedStorage, slot: other }) }), onB()), 'BRIDGE_PROOF_INVALID', 'LIGHT_PROOF_INVALID');
});

test('release: BID signatures — unknown signer, duplicate signer, bad signature, other set, below 2/3', () => {
  const sigs = bidSignatures(A, fields);
  fails(() => checkRelease(release({ sigs: [...sigs.slice(0, 2), { validatorIndex: 9, signature: sigs[2]!.signature }] }), onB()), 'BRIDGE_UNKNOWN_SIGNER', 'validator 9');
  fails(() => checkRelease(release({ sigs: [sigs[0]!, sigs[1]!, sigs[0]!] }), onB()), 'BRIDGE_DUPLICATE_SIGNER', 'validator 0');
  fails(() => checkRelease(release({ sigs: bidSignatures(A, fields, [0, 1, 2], C.keys) }), onB()), 'BRIDGE_BAD_SIGNATURE', 'validator 0');
  // Signatures over another BID.
  fails(() => checkRelease(release({ sigs: bidSignatures(A, { ...fields, amount: fields.amount + 1n }) }), onB()), 'BRIDGE_BAD_SIGNATURE');
  fails(() => checkRelease(release({ sigs: sigs.slice(0, 2) }), onB()), 'BRIDGE_INSUFFICIENT_SIGNATURES', 'below 2/3');
  fails(() => checkRelease(release({ sigs: [] }), onB()), 'BRIDGE_INSUFFICIENT_SIGNATURES');
});

test('release: the bridge must hold the amount', () => {
  // Liquidity is the source's ledger, whatever the bridge account holds.
  fails(() => checkRelease(release(), onB({ ledger: fields.amount - 1n, balance: 10n ** 30n })), 'BRIDGE_INSUFFICIENT_LIQUIDITY', 'the ledger of svc-bridge-a');
  assert.is(toHex(checkRelease(release(), onB({ ledger: fields.amount, balance: fields.amount }))), toHex(bid));
});

const settleProof = (o: { released?: boolean; atMs?: number } = {}) =>
  finalityProof(B, { storage: o.released ? [[releaseSlot(bid), RELEASED_WORD]] : [[releaseSlot(new Uint8Array(32).fill(5)), RELEASED_WORD]], slot: releaseSlot(bid), timestampMs: o.atMs ?? fields.timeout * 1000 });

test('refund: after the timeout, with the destination proven not to have released', () => {
  assert.is(toHex(checkRefund({ bid: fields, proof: settleProof() }, onA())), toHex(bid));
  fails(() => checkRefund({ bid: fields, proof: settleProof({ atMs: fields.timeout * 1000 - 1 }) }, onA()), 'BRIDGE_TIMEOUT_NOT_REACHED');
  fails(() => checkRefund({ bid: fields, proof: settleProof({ released: true }) }, onA()), 'BRIDGE_RELEASED_BEFORE_TIMEOUT');
  fails(() => checkRefund({ bid: fields, proof: settleProof() }, onB()), 'BRIDGE_WRONG_SOURCE');
  fails(() => checkRefund({ bid: fields, proof: settleProof() }, onA({ registered: [C] })), 'BRIDGE_UNKNOWN_COUNTERPART');
  fails(() => checkRefund({ bid: fields, proof: settleProof() }, onA({ storage: new Map() })), 'BRIDGE_NOT_LOCKED', 'never locked');
  fails(() => checkRefund({ bid: fields, proof: settleProof() }, onA({ storage: new Map([[toHex(lockSlot(bid)), stateWord(LockState.Refunded)]]) })), 'BRIDGE_NOT_LOCKED', 'already refunded');
  // A proof signed by A's own validators about B is no proof about B.
  fails(() => checkRefund({ bid: fields, proof: finalityProof(B, { storage: [], slot: releaseSlot(bid), timestampMs: fields.timeout * 1000, keys: A.keys }) }, onA()), 'BRIDGE_PROOF_INVALID');
});

test('complete: the destination proven to have released; refused when it has not', () => {
  assert.is(toHex(checkComplete({ bid: fields, proof: settleProof({ released: true, atMs: T0 * 1000 }) }, onA())), toHex(bid));
  fails(() => checkComplete({ bid: fields, proof: settleProof() }, onA()), 'BRIDGE_RELEASE_NOT_PROVEN');
  fails(() => checkComplete({ bid: fields, proof: settleProof({ released: true }) }, onA({ storage: new Map([[toHex(lockSlot(bid)), stateWord(LockState.Completed)]]) })), 'BRIDGE_NOT_LOCKED', 'already completed');
});

test('lock: amount, destination, timeout bounds', () => {
  const tx = { sender: fields.sender, txHash: fields.lockTx, amount: fields.amount };
  const body = { destination: B.hash, recipient: fields.recipient, timeout: fields.timeout };
  const f = checkLock(body, tx, onA());
  assert.is(toHex(bidId(f)), toHex(bid));
  fails(() => checkLock(body, { ...tx, amount: 0n }, onA()), 'BRIDGE_BAD_LOCK', 'above 0');
  fails(() => checkLock({ ...body, destination: A.hash }, tx, onA()), 'BRIDGE_BAD_LOCK', 'this chain');
  fails(() => checkLock({ ...body, destination: C.hash }, tx, onA()), 'BRIDGE_UNKNOWN_COUNTERPART');
  fails(() => checkLock({ ...body, timeout: T0 }, tx, onA()), 'BRIDGE_BAD_LOCK', 'not after');
  assert.ok(checkLock({ ...body, timeout: T0 + MAX_BRIDGE_TIMEOUT_SECONDS }, tx, onA()));
  fails(() => checkLock({ ...body, timeout: T0 + MAX_BRIDGE_TIMEOUT_SECONDS + 1 }, tx, onA()), 'BRIDGE_BAD_LOCK', 'more than');
});

test('parseCounterpart: a genesis document parses to its hash; its own chain, bad JSON and bad fields are refused', () => {
  const p = parseCounterpart(utf8(canonicalJson(A.genesis)), B.hash);
  assert.is(toHex(p.hash), toHex(A.hash));
  assert.is(p.genesis.chain_id, 'svc-bridge-a');
  // Pretty-printed JSON names the same chain (the hash is over the canonical form).
  assert.is(toHex(parseCounterpart(utf8(JSON.stringify(A.genesis, null, 2)), B.hash).hash), toHex(A.hash));
  fails(() => parseCounterpart(utf8(canonicalJson(A.genesis)), A.hash), 'BRIDGE_COUNTERPART_INVALID', 'own genesis');
  fails(() => parseCounterpart(utf8('{"chain_id":'), B.hash), 'BRIDGE_COUNTERPART_INVALID', 'not UTF-8 JSON');
  fails(() => parseCounterpart(Uint8Array.of(0xff, 0xfe), B.hash), 'BRIDGE_COUNTERPART_INVALID', 'not UTF-8 JSON');
  fails(() => parseCounterpart(utf8(JSON.stringify({ ...A.genesis, validators: [] })), B.hash), 'BRIDGE_COUNTERPART_INVALID', 'genesis.validators');
  fails(() => parseCounterpart(utf8(JSON.stringify({ ...A.genesis, extra: 1 })), B.hash), 'BRIDGE_COUNTERPART_INVALID', 'extra');
  fails(() => parseCounterpart(utf8(JSON.stringify({ ...A.genesis, genesis_time: -1 })), B.hash), 'BRIDGE_COUNTERPART_INVALID', 'genesis_time');
});

test('bridgeGas: 21,000 + 16/byte + 50,000 per signature carried; the transaction rule prices bridge transactions by it', () => {
  const rel = encodeBridgeOp({ op: BridgeOp.Release, body: release() });
  assert.is(bridgeGas(rel), 21_000n + 16n * BigInt(rel.length) + 50_000n * 6n);
  const ref = encodeBridgeOp({ op: BridgeOp.Refund, body: { bid: fields, proof: settleProof() } });
  assert.is(bridgeGas(ref), 21_000n + 16n * BigInt(ref.length) + 50_000n * 3n);
  const lock = encodeBridgeOp({ op: BridgeOp.Lock, body: { destination: B.hash, recipient: fields.recipient, timeout: 1 } });
  assert.is(bridgeGas(lock), 21_000n + 16n * BigInt(lock.length));
  // Undecodable data pays its bytes.
  assert.is(bridgeGas(Uint8Array.of(3, 1, 2)), 21_000n + 48n);
  assert.is(bridgeGas(new Uint8Array(0)), 21_000n);
  const key = A.keys[0]!;
  const tx = (to: string, data: Uint8Array) => signStandardTx({ nonce: 0n, gasPrice: 1n, gasLimit: 1n, to: Buffer.from(to.slice(2), 'hex'), value: 0n, data }, key, 'svc-bridge-a');
  assert.is(intrinsicGas(tx(BRIDGE_ADDRESS, rel)), bridgeGas(rel));
  assert.is(intrinsicGas(tx('0x' + '12'.repeat(20), rel)), 21_000n);
});

test('encodeBridgeOp/decodeBridgeOp round-trip every op', () => {
  const ops: BridgeOperation[] = [
    { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(A.genesis)), allowance: 7n, signatures: bidSignatures(A, fields) } },
    { op: BridgeOp.Lock, body: { destination: B.hash, recipient: fields.recipient, timeout: fields.timeout } },
    { op: BridgeOp.Release, body: release() },
    { op: BridgeOp.Refund, body: { bid: fields, proof: settleProof() } },
    { op: BridgeOp.Complete, body: { bid: fields, proof: settleProof({ released: true }) } },
  ];
  for (const o of ops) {
    const bytes = encodeBridgeOp(o);
    assert.is(bytes[0], o.op);
    const back = decodeBridgeOp(bytes);
    assert.is(toHex(encodeBridgeOp(back)), toHex(bytes), `op ${o.op}`);
  }
  // The decoded release still verifies.
  const back = decodeBridgeOp(encodeBridgeOp(ops[2]!));
  assert.ok(back.op === BridgeOp.Release && toHex(checkRelease(back.body, onB())) === toHex(bid));
});

test('malformed bridge data is a MalformedError naming bridge.* for each op', () => {
  expectError(() => decodeBridgeOp(new Uint8Array(0)), MalformedError, { field: 'bridge.op' });
  expectError(() => decodeBridgeOp(Uint8Array.of(9)), MalformedError, { field: 'bridge.op' });
  expectError(() => decodeBridgeOp(Uint8Array.of(BridgeOp.Register)), MalformedError, { field: 'bridge.register' });
  const cut = (op: BridgeOperation, keep: number) => encodeBridgeOp(op).subarray(0, keep);
  expectError(() => decodeBridgeOp(cut({ op: BridgeOp.Lock, body: { destination: B.hash, recipient: fields.recipient, timeout: 1 } }, 30)), MalformedError, { field: 'bridge.lock' });
  expectError(() => decodeBridgeOp(cut({ op: BridgeOp.Release, body: release() }, 200)), MalformedError, { field: 'bridge.release' });
  expectError(() => decodeBridgeOp(cut({ op: BridgeOp.Refund, body: { bid: fields, proof: settleProof() } }, 100)), MalformedError, { field: 'bridge.refund' });
  expectError(() => decodeBridgeOp(cut({ op: BridgeOp.Complete, body: { bid: fields, proof: settleProof() } }, 100)), MalformedError, { field: 'bridge.complete' });
  // A timeout beyond 2^53 is refused by name.
  const big = encodeBridgeOp({ op: BridgeOp.Lock, body: { destination: B.hash, recipient: fields.recipient, timeout: 1 } });
  big.fill(0xff, big.length - 8);
  expectError(() => decodeBridgeOp(big), MalformedError, { field: 'bridge.lock.timeout' });
  // Trailing bytes after a fixed-size lock body are malformed, not ignored.
  const long = new Uint8Array(big.length + 1);
  long.set(encodeBridgeOp({ op: BridgeOp.Lock, body: { destination: B.hash, recipient: fields.recipient, timeout: 1 } }));
  expectError(() => decodeBridgeOp(long), MalformedError, { field: 'bridge.lock' });
});

test.run();
