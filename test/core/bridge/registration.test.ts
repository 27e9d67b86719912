/**
 * Who may register a counterpart (src/core/bridge/registration.ts and checkRegister): chain B's
 * validators (a real genesis, ML-DSA keys) sign the terms of registering A; execution's rule
 * accepts signers holding ≥ 2/3 of B's active stake and refuses anything else with its code:
 * no signatures (an ordinary account's registration), a minority, duplicates, unknown, exited
 * and slashed signers, signatures of another domain, chain or allowance, an allowance above the
 * unallocated reserve, a chain registered already. The register payload's decoder refuses
 * truncated, oversized and mutated bytes with a MalformedError naming bridge.register, never
 * anything else.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { MAX_BRIDGE_SIGNERS, MAX_TX_DATA_BYTES, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { Domain, signingHash } from '../../../src/core/crypto/domain.js';
import { sign } from '../../../src/core/crypto/mldsa.js';
import { canonicalJson } from '../../../src/core/genesis/genesis.js';
import { MalformedError } from '../../../src/core/errors.js';
import { type BidSignature, BridgeError, BridgeOp, type RegisterBody, REGISTERED_WORD, amountWord, committedSlot, counterpartSlot } from '../../../src/core/bridge/types.js';
import { decodeBridgeOp, encodeBridgeOp } from '../../../src/core/bridge/ops.js';
import { genesisHeldSet } from '../../../src/core/bridge/set-update.js';
import { RegistrationTermsSsz, type RegistryView, registrationTerms, signRegistration, validatorSetCommitment } from '../../../src/core/bridge/registration.js';
import { type BridgeState, checkRegister } from '../../../src/core/bridge/verify.js';
import { expectError } from '../../helpers/assert.js';
import { testChain } from '../../helpers/bridge.js';
import { Rng, fuzzCorpus } from '../../helpers/fuzz.js';

const A = testChain('svc-bridge-a', 1);
const B = testChain('svc-bridge-b', 2);
const C = testChain('svc-bridge-c', 3);
const TOKEN = WEI_PER_TOKEN;
const STAKE = 32n * TOKEN;
const ALLOWANCE = 1_000n * TOKEN;

interface Signer {
  stake?: bigint;
  active?: boolean;
  slashed?: boolean;
}

/** B's registry as execution holds it: its four genesis validators, each changed as `changes` says. */
function registry(changes: Record<number, Signer> = {}): RegistryView {
  const entries = B.keys.map((k, i) => ({ stake: changes[i]?.stake ?? STAKE, active: changes[i]?.active ?? true, slashed: changes[i]?.slashed ?? false, publicKey: () => k.publicKey }));
  return {
    chainId: B.genesis.chain_id,
    validator: (i) => entries[i],
    activeStake: () => entries.reduce((s, e) => (e.active && !e.slashed ? s + e.stake : s), 0n),
  };
}

/** Chain B's state: `registered` counterparts, the bridge balance and its committed word. */
function onB(o: { reg?: RegistryView; registered?: boolean; balance?: bigint; committed?: bigint } = {}): BridgeState {
  return {
    self: B.hash,
    timestampMs: Date.now(),
    counterpart: (h) => (o.registered && toHex(h) === toHex(A.hash) ? A.genesis : undefined),
    counterpartSet: (h, g) => genesisHeldSet(g, h),
    storage: (slot) => (toHex(slot) === toHex(committedSlot()) ? amountWord(o.committed ?? 0n) : o.registered && toHex(slot) === toHex(counterpartSlot(A.hash)) ? REGISTERED_WORD : new Uint8Array(32)),
    balance: () => o.balance ?? 1_000_000n * TOKEN,
    registry: o.reg ?? registry(),
  };
}

const terms = (allowance = ALLOWANCE) => registrationTerms(B.hash, A.genesis, A.hash, allowance);
const sigs = (signers: number[], allowance = ALLOWANCE, keys = B.keys, chainId = B.genesis.chain_id): BidSignature[] => signers.map((i) => signRegistration(terms(allowance), i, keys[i]!, chainId));
const body = (signatures: BidSignature[], allowance = ALLOWANCE): RegisterBody => ({ genesisJson: utf8(canonicalJson(A.genesis)), allowance, signatures });

function fails(fn: () => unknown, code: string, includes?: string): void {
  const e = expectError(fn, BridgeError);
  assert.is(e.code, code, e.message);
  if (includes) assert.ok(e.message.includes(includes), `${JSON.stringify(e.message)} should include ${JSON.stringify(includes)}`);
}

test('a registration from an ordinary account (no validator signatures) is refused: BRIDGE_REGISTRATION_UNAUTHORIZED', () => {
  fails(() => checkRegister(body([]), onB()), 'BRIDGE_REGISTRATION_UNAUTHORIZED', '0 signer(s) hold 0');
  // A chain the attacker made itself, signed by that chain's own validators: they are not B's.
  fails(() => checkRegister({ genesisJson: utf8(canonicalJson(C.genesis)), allowance: ALLOWANCE, signatures: [] }, onB()), 'BRIDGE_REGISTRATION_UNAUTHORIZED');
  fails(() => checkRegister(body(sigs([0, 1, 2], ALLOWANCE, C.keys)), onB()), 'BRIDGE_BAD_SIGNATURE');
});

test('signers below 2/3 of the active stake are refused; at 2/3 the registration is accepted, stake-weighted', () => {
  fails(() => checkRegister(body(sigs([0, 1])), onB()), 'BRIDGE_REGISTRATION_UNAUTHORIZED', `hold ${2n * STAKE}`);
  const ok = checkRegister(body(sigs([0, 1, 2])), onB());
  assert.is(toHex(ok.hash), toHex(A.hash));
  assert.is(ok.genesis.chain_id, A.genesis.chain_id);
  assert.is(toHex(ok.terms.validatorSet), toHex(validatorSetCommitment(A.genesis)));
  assert.ok(checkRegister(body(sigs([3, 2, 1, 0])), onB()));
  // Weighted by stake: one validator with 5/8 of the stake is short, with 2/3 it suffices alone.
  fails(() => checkRegister(body(sigs([0])), onB({ reg: registry({ 0: { stake: 5n * STAKE } }) })), 'BRIDGE_REGISTRATION_UNAUTHORIZED');
  assert.ok(checkRegister(body(sigs([0])), onB({ reg: registry({ 0: { stake: 6n * STAKE } }) })));
  // The denominator is the active stake: with validator 3 exited, 0 and 1 hold 2/3.
  assert.ok(checkRegister(body(sigs([0, 1])), onB({ reg: registry({ 3: { active: false } }) })));
  // No active stake at all: nobody can register.
  fails(() => checkRegister(body([]), onB({ reg: registry({ 0: { active: false }, 1: { active: false }, 2: { active: false }, 3: { active: false } }) })), 'BRIDGE_REGISTRATION_UNAUTHORIZED');
});

test('duplicate, unknown, exited and slashed signers are refused by name', () => {
  const [s0, s1] = sigs([0, 1]);
  fails(() => checkRegister(body([s0!, s1!, s0!]), onB()), 'BRIDGE_DUPLICATE_SIGNER', 'validator 0');
  fails(() => checkRegister(body([...sigs([0, 1]), { validatorIndex: 9, signature: s0!.signature }]), onB()), 'BRIDGE_UNKNOWN_SIGNER', 'signer 9');
  fails(() => checkRegister(body(sigs([0, 1, 2])), onB({ reg: registry({ 2: { active: false } }) })), 'BRIDGE_UNKNOWN_SIGNER', 'exited');
  fails(() => checkRegister(body(sigs([0, 1, 2])), onB({ reg: registry({ 2: { slashed: true, active: false } }) })), 'BRIDGE_UNKNOWN_SIGNER', 'slashed');
});

test('signatures of another domain, chain, allowance or counterpart do not verify: BRIDGE_BAD_SIGNATURE', () => {
  const t = terms();
  const bytes = RegistrationTermsSsz.serialize({ ...t, counterpartChainId: utf8(t.counterpartChainId) });
  // The same terms signed as a BID (another domain tag) by a quorum.
  const asBid = [0, 1, 2].map((i) => ({ validatorIndex: i, signature: sign(B.keys[i]!.secretKey, signingHash(Domain.BridgeBid, B.genesis.chain_id, bytes), { deterministic: true }) }));
  fails(() => checkRegister(body(asBid), onB()), 'BRIDGE_BAD_SIGNATURE', 'validator 0');
  // Signed under another chain id, or for another allowance than the operation names.
  fails(() => checkRegister(body(sigs([0, 1, 2], ALLOWANCE, B.keys, 'svc-other')), onB()), 'BRIDGE_BAD_SIGNATURE');
  fails(() => checkRegister(body(sigs([0, 1, 2], ALLOWANCE), 2n * ALLOWANCE), onB()), 'BRIDGE_BAD_SIGNATURE');
  // Consent to A does not register C.
  fails(() => checkRegister({ genesisJson: utf8(canonicalJson(C.genesis)), allowance: ALLOWANCE, signatures: sigs([0, 1, 2]) }, onB()), 'BRIDGE_BAD_SIGNATURE');
  // One bad signature among a quorum of good ones spoils it.
  const mixed = sigs([0, 1, 2, 3]);
  mixed[3] = { ...mixed[3]!, signature: mixed[0]!.signature };
  fails(() => checkRegister(body(mixed), onB()), 'BRIDGE_BAD_SIGNATURE', 'validator 3');
});

test('the allowance must fit the unallocated reserve; a registered chain is not registered again', () => {
  const quorum = (allowance: bigint) => body(sigs([0, 1, 2], allowance), allowance);
  fails(() => checkRegister(quorum(ALLOWANCE), onB({ balance: 1_500n * TOKEN, committed: 600n * TOKEN })), 'BRIDGE_INSUFFICIENT_RESERVE', `${900n * TOKEN}`);
  assert.ok(checkRegister(quorum(900n * TOKEN), onB({ balance: 1_500n * TOKEN, committed: 600n * TOKEN })));
  assert.ok(checkRegister(quorum(0n), onB({ balance: 0n })));
  // Replaying a registration (the same signed terms again) is refused, so it never moves a second allowance.
  fails(() => checkRegister(quorum(ALLOWANCE), onB({ registered: true })), 'BRIDGE_ALREADY_REGISTERED');
  // This chain's own genesis, or a document that is no genesis.
  fails(() => checkRegister({ genesisJson: utf8(canonicalJson(B.genesis)), allowance: 0n, signatures: [] }, onB()), 'BRIDGE_COUNTERPART_INVALID', 'own genesis');
  fails(() => checkRegister({ genesisJson: utf8('{"chain_id": 5}'), allowance: 0n, signatures: [] }, onB()), 'BRIDGE_COUNTERPART_INVALID');
});

test('register payloads: truncated, oversized, empty and mutated bytes are a MalformedError naming bridge.register, never a crash', () => {
  const valid = encodeBridgeOp({ op: BridgeOp.Register, body: body(sigs([0, 1, 2])) });
  const back = decodeBridgeOp(valid);
  assert.ok(back.op === BridgeOp.Register && back.body.signatures.length === 3 && back.body.allowance === ALLOWANCE);
  for (const keep of [1, 5, 40, valid.length - 1]) expectError(() => decodeBridgeOp(valid.subarray(0, keep)), MalformedError, { field: 'bridge.register' });
  expectError(() => decodeBridgeOp(encodeBridgeOp({ op: BridgeOp.Register, body: { genesisJson: new Uint8Array(0), allowance: 0n, signatures: [] } })), MalformedError, { field: 'bridge.register.genesis_json' });
  // More signatures than the list holds.
  const s = sigs([0])[0]!;
  const many = Array.from({ length: MAX_BRIDGE_SIGNERS + 1 }, (_, i) => ({ validatorIndex: i, signature: s.signature }));
  expectError(() => decodeBridgeOp(encodeBridgeOp({ op: BridgeOp.Register, body: body(many) })), MalformedError, { field: 'bridge.register' });
  assert.ok(decodeBridgeOp(encodeBridgeOp({ op: BridgeOp.Register, body: body(many.slice(0, MAX_BRIDGE_SIGNERS)) })));
  // Mutations and random bytes after the op code: either a decoded operation or a MalformedError.
  const rng = new Rng(0xb41d);
  const corpus = fuzzCorpus(rng, { valid: [valid.subarray(1)], maxBytes: MAX_TX_DATA_BYTES, count: 300, oversizeBudget: 2 * MAX_TX_DATA_BYTES });
  let decoded = 0;
  for (const m of corpus) {
    const data = new Uint8Array(1 + m.data.length);
    data[0] = BridgeOp.Register;
    data.set(m.data, 1);
    try {
      const o = decodeBridgeOp(data);
      decoded++;
      // What decodes is judged by the rule, which refuses it with a bridge code.
      try {
        if (o.op === BridgeOp.Register) checkRegister(o.body, onB());
      } catch (err) {
        assert.instance(err, BridgeError, `${m.kind}: ${(err as Error).message}`);
      }
    } catch (err) {
      assert.instance(err, MalformedError, `${m.kind}: ${(err as Error).message}`);
      assert.match((err as MalformedError).field, /^bridge\.register/);
    }
  }
  assert.ok(decoded < corpus.length);
});

test.run();
