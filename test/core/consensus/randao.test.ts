/**
 * Beacon RANDAO state: genesis mix, accepting and refusing reveals, immutability, deposits and
 * the JSON form.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { randaoCommitment, randaoReveal } from '../../../src/core/crypto/randao.js';
import { MalformedError } from '../../../src/core/errors.js';
import { applyReveal, genesisRandao, randaoFromJson, type RandaoState, RandaoError, randaoToJson, registerCommitment } from '../../../src/core/consensus/randao.js';
import { bytesIs, bytesNot, expectError, filled, flipByte } from '../../helpers/assert.js';

const LENGTH = 16;
const SEEDS = [filled(32, 1), filled(32, 2), filled(32, 3)];
const GENESIS_HASH = sha3(utf8('genesis document'));
const VALIDATORS = SEEDS.map((s, index) => ({ index, randao_commitment: toHex(randaoCommitment(s, LENGTH)) }));
/** Computed once and pasted: genesisRandao(SHA3("genesis document"), …).mix. */
const KNOWN_GENESIS_MIX = '0xb8c353f0eec2a5e2a48a0d76795509311c962a23bf6b6ae226fe781a8982e3ac';
const reveal = (validator: number, k: number) => randaoReveal(SEEDS[validator]!, LENGTH, k);

/** A deep, comparable picture of a state. */
function picture(state: RandaoState): string {
  return JSON.stringify(randaoToJson(state));
}

const genesis = suite('genesisRandao');

genesis('mix = SHA3-256("svc/randao-genesis" ‖ genesis hash); last = the commitments', () => {
  const s = genesisRandao(GENESIS_HASH, VALIDATORS);
  bytesIs(s.mix, sha3(utf8('svc/randao-genesis'), GENESIS_HASH));
  // Frozen: the genesis mix of this genesis hash, so a change of tag or order fails.
  assert.is(toHex(s.mix), KNOWN_GENESIS_MIX);
  assert.is(s.last.size, 3);
  for (const v of VALIDATORS) assert.is(toHex(s.last.get(v.index)!), v.randao_commitment);
  bytesNot(genesisRandao(sha3(utf8('another genesis')), VALIDATORS).mix, s.mix);
});

genesis('bad genesis hash, commitments or repeated indices are refused', () => {
  expectError(() => genesisRandao(new Uint8Array(31), VALIDATORS), MalformedError, { field: 'genesisHash' });
  expectError(() => genesisRandao(GENESIS_HASH, [{ index: 0, randao_commitment: '0x1234' }]), MalformedError, { field: 'validators[0].randao_commitment' });
  expectError(() => genesisRandao(GENESIS_HASH, [VALIDATORS[0]!, VALIDATORS[0]!]), RandaoError, { code: 'RANDAO_COMMITMENT_EXISTS' });
});

const reveals = suite('applyReveal');

reveals('a correct reveal is accepted: last updated, mix = SHA3(mix ‖ reveal), deterministic', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  const s1 = applyReveal(s0, 1, reveal(1, 1));
  bytesIs(s1.last.get(1)!, reveal(1, 1));
  bytesIs(s1.last.get(0)!, s0.last.get(0)!);
  bytesIs(s1.last.get(2)!, s0.last.get(2)!);
  bytesIs(s1.mix, sha3(s0.mix, reveal(1, 1)));
  bytesNot(s1.mix, s0.mix);
  // Same inputs, same result, on any node.
  assert.is(picture(applyReveal(genesisRandao(GENESIS_HASH, VALIDATORS), 1, reveal(1, 1))), picture(s1));
  // The next link follows on; several validators interleave.
  const s2 = applyReveal(applyReveal(s1, 0, reveal(0, 1)), 1, reveal(1, 2));
  bytesIs(s2.last.get(1)!, reveal(1, 2));
  bytesIs(s2.mix, sha3(sha3(s1.mix, reveal(0, 1)), reveal(1, 2)));
});

reveals('the mix depends on the order of reveals', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  const ab = applyReveal(applyReveal(s0, 0, reveal(0, 1)), 1, reveal(1, 1));
  const ba = applyReveal(applyReveal(s0, 1, reveal(1, 1)), 0, reveal(0, 1));
  bytesNot(ab.mix, ba.mix);
  assert.is(toHex(ab.last.get(0)!), toHex(ba.last.get(0)!));
});

reveals('a replayed reveal is refused with a message that says so', () => {
  const s1 = applyReveal(genesisRandao(GENESIS_HASH, VALIDATORS), 2, reveal(2, 1));
  expectError(() => applyReveal(s1, 2, reveal(2, 1)), RandaoError, {
    code: 'INVALID_RANDAO_REVEAL',
    message: 'RANDAO reveal of validator 2 replayed: it equals the last accepted value',
    status: 400,
  });
  // Replaying the commitment itself at genesis is the same fault.
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  expectError(() => applyReveal(s0, 0, s0.last.get(0)!), RandaoError, { code: 'INVALID_RANDAO_REVEAL', messageStartsWith: 'RANDAO reveal of validator 0 replayed' });
});

reveals('wrong reveals are refused: skipped link, older link, another validator, flipped bit, bad length', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  const s2 = applyReveal(applyReveal(s0, 0, reveal(0, 1)), 0, reveal(0, 2));
  const wrong = { code: 'INVALID_RANDAO_REVEAL', message: 'RANDAO reveal of validator 0 is not the preimage of its last accepted value' };
  expectError(() => applyReveal(s0, 0, reveal(0, 2)), RandaoError, wrong);
  expectError(() => applyReveal(s2, 0, reveal(0, 1)), RandaoError, wrong);
  expectError(() => applyReveal(s0, 0, reveal(1, 1)), RandaoError, wrong);
  expectError(() => applyReveal(s0, 0, flipByte(reveal(0, 1), 31)), RandaoError, wrong);
  expectError(() => applyReveal(s0, 0, reveal(0, 1).subarray(0, 31)), RandaoError, {
    code: 'INVALID_RANDAO_REVEAL',
    message: 'RANDAO reveal of validator 0 must be 32 bytes, got 31',
  });
  expectError(() => applyReveal(s0, 9, reveal(0, 1)), RandaoError, { code: 'UNKNOWN_RANDAO_VALIDATOR', message: 'validator 9 has no registered RANDAO commitment' });
  expectError(() => applyReveal(s0, -1, reveal(0, 1)), RandaoError, { code: 'UNKNOWN_RANDAO_VALIDATOR' });
});

reveals('the input state is never modified, by success or by failure', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  const before = picture(s0);
  const mixRef = s0.mix;
  const lastRef = s0.last;
  const s1 = applyReveal(s0, 0, reveal(0, 1));
  try {
    applyReveal(s0, 0, reveal(0, 2));
  } catch {
    // expected
  }
  assert.is(picture(s0), before);
  assert.is(s0.mix, mixRef);
  assert.is(s0.last, lastRef);
  assert.is.not(s1.last, s0.last);
  // Branching: two children of the same parent do not see each other.
  const left = applyReveal(s0, 1, reveal(1, 1));
  const right = applyReveal(s0, 2, reveal(2, 1));
  bytesIs(left.last.get(2)!, s0.last.get(2)!);
  bytesIs(right.last.get(1)!, s0.last.get(1)!);
});

reveals('an accepted reveal is stored as a copy: reusing the caller buffer cannot rewrite it', () => {
  const buf = reveal(0, 1);
  const s1 = applyReveal(genesisRandao(GENESIS_HASH, VALIDATORS), 0, buf);
  buf.fill(0);
  bytesIs(s1.last.get(0)!, reveal(0, 1));
});

const deposits = suite('registerCommitment');

deposits('adds a validator without changing the mix; its first reveal is then accepted', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  const seed = filled(32, 9);
  const s1 = registerCommitment(s0, 3, randaoCommitment(seed, LENGTH));
  assert.is(s0.last.has(3), false);
  bytesIs(s1.mix, s0.mix);
  bytesIs(s1.last.get(3)!, randaoCommitment(seed, LENGTH));
  const s2 = applyReveal(s1, 3, randaoReveal(seed, LENGTH, 1));
  bytesIs(s2.last.get(3)!, randaoReveal(seed, LENGTH, 1));
});

deposits('an index that already has a chain, or a bad commitment, is refused', () => {
  const s0 = genesisRandao(GENESIS_HASH, VALIDATORS);
  expectError(() => registerCommitment(s0, 1, filled(32, 7)), RandaoError, { code: 'RANDAO_COMMITMENT_EXISTS', message: 'validator 1 already has a RANDAO commitment' });
  expectError(() => registerCommitment(s0, 5, filled(33, 7)), RandaoError, { code: 'INVALID_RANDAO_COMMITMENT', message: 'RANDAO commitment must be 32 bytes, got 33' });
  expectError(() => registerCommitment(s0, 1.5, filled(32, 7)), RandaoError, { code: 'UNKNOWN_RANDAO_VALIDATOR' });
});

const json = suite('randaoToJson / randaoFromJson');

json('round trip, canonical order by index', () => {
  let s = genesisRandao(GENESIS_HASH, VALIDATORS);
  s = registerCommitment(s, 10, filled(32, 0xab));
  s = applyReveal(s, 2, reveal(2, 1));
  const j = randaoToJson(s);
  assert.equal(j.last.map((e) => e.index), [0, 1, 2, 10]);
  assert.is(j.mix, toHex(s.mix));
  assert.is(j.last[2]!.value, toHex(reveal(2, 1)));
  const back = randaoFromJson(JSON.parse(JSON.stringify(j)));
  assert.is(picture(back), picture(s));
  // The restored state keeps working: the next link is accepted, a replay is not.
  bytesIs(applyReveal(back, 2, reveal(2, 2)).mix, applyReveal(s, 2, reveal(2, 2)).mix);
  expectError(() => applyReveal(back, 2, reveal(2, 1)), RandaoError, { code: 'INVALID_RANDAO_REVEAL' });
});

json('strict: unknown keys, bad hex, wrong lengths, unsorted or repeated indices', () => {
  const good = randaoToJson(genesisRandao(GENESIS_HASH, VALIDATORS));
  const h32 = good.last[0]!.value;
  const cases: Array<[unknown, string]> = [
    [null, 'randao'],
    [[], 'randao'],
    [{ ...good, extra: 1 }, 'randao.extra'],
    [{ last: good.last }, 'randao.mix'],
    [{ ...good, mix: good.mix.slice(0, -2) }, 'randao.mix'],
    [{ ...good, mix: good.mix.slice(2) }, 'randao.mix'],
    [{ ...good, last: {} }, 'randao.last'],
    [{ ...good, last: [{ index: 0, value: h32, x: 1 }] }, 'randao.last[0].x'],
    [{ ...good, last: [{ index: '0', value: h32 }] }, 'randao.last[0].index'],
    [{ ...good, last: [{ index: -1, value: h32 }] }, 'randao.last[0].index'],
    [{ ...good, last: [{ index: 0, value: h32 + '00' }] }, 'randao.last[0].value'],
    [{ ...good, last: [{ index: 0 }] }, 'randao.last[0].value'],
    [{ ...good, last: [{ index: 1, value: h32 }, { index: 0, value: h32 }] }, 'randao.last[1].index'],
    [{ ...good, last: [{ index: 1, value: h32 }, { index: 1, value: h32 }] }, 'randao.last[1].index'],
  ];
  for (const [input, field] of cases) expectError(() => randaoFromJson(input), MalformedError, { field });
  // An empty registry is representable (all validators could be added by deposits later).
  assert.is(randaoFromJson({ mix: good.mix, last: [] }).last.size, 0);
});

genesis.run();
reveals.run();
deposits.run();
json.run();
