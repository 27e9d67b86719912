/**
 * Proposer selection: the exact draw, purity, eligibility, stake weighting, epoch duties and
 * frozen known answers.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bytesToBigintBE, utf8 } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { vrfSeed } from '../../../src/core/crypto/vrf.js';
import { type ProposerCandidate, ProposerError, proposerDuties, proposerForSlot, selectProposer } from '../../../src/core/consensus/proposer.js';
import { bytesIs, expectError, filled } from '../../helpers/assert.js';

const TOKEN = 10n ** 18n;
const MIX = sha3(utf8('test mix'));

// Computed once from this implementation and pasted: they pin the draw across refactors.
/** Proposers of slots 0..15 for KNOWN_SET and SHA3("svc/known-answer-mix"). */
const KNOWN_SLOTS = [3, 3, 1, 0, 4, 4, 3, 4, 0, 0, 0, 3, 0, 3, 4, 3];
/** selectProposer(stakes 1:1:2:4, seed = 32 bytes of b) for b = 0..7. */
const KNOWN_FILLED = [3, 1, 3, 3, 3, 1, 3, 3];

const v = (index: number, stake: bigint, active = true): ProposerCandidate => ({ index, stake, active });

/** The rule written out naively (linear walk), to check the implementation against. */
function reference(validators: ProposerCandidate[], seed: Uint8Array): number {
  const eligible = [...validators].sort((a, b) => a.index - b.index).filter((x) => x.active && x.stake > 0n);
  const total = eligible.reduce((s, x) => s + x.stake, 0n);
  let r = bytesToBigintBE(sha3(utf8('proposer'), seed)) % total;
  for (const x of eligible) {
    if (r < x.stake) return x.index;
    r -= x.stake;
  }
  throw new Error('unreachable');
}

/** A deterministic pseudo-random stake set (no Math.random, so a failure reproduces). */
function stakes(count: number, tag: string): ProposerCandidate[] {
  return Array.from({ length: count }, (_, i) => {
    const h = sha3(utf8(`${tag}/${i}`));
    return v(i, BigInt(h[0]! % 7) * TOKEN + BigInt(h[1]!), h[2]! % 5 !== 0);
  });
}

const draw = suite('selectProposer');

draw('matches the naive walk of the rule on 1,000 seeds and random stake sets', () => {
  for (let i = 0; i < 1000; i++) {
    const set = stakes(1 + (i % 13), `set-${i}`);
    if (!set.some((x) => x.active && x.stake > 0n)) continue;
    const seed = sha3(utf8(`seed-${i}`));
    assert.is(selectProposer(set, seed), reference(set, seed), `seed ${i}`);
  }
});

draw('r < stake boundaries: with stakes 1:1:2:4 each residue r maps to its exact owner', () => {
  // Find seeds whose residue mod 8 is each of 0..7; the owner is fixed by the cumulative totals
  // 1, 2, 4, 8, so an off-by-one (r <= cumulative) would move some residues to a neighbour.
  const set = [v(0, 1n), v(1, 1n), v(2, 2n), v(3, 4n)];
  const owner = [0, 1, 2, 2, 3, 3, 3, 3];
  const seen = new Set<number>();
  for (let i = 0; seen.size < 8; i++) {
    const seed = sha3(utf8(`residue-${i}`));
    const r = Number(bytesToBigintBE(sha3(utf8('proposer'), seed)) % 8n);
    seen.add(r);
    assert.is(selectProposer(set, seed), owner[r], `residue ${r}`);
  }
});

draw('pure: same inputs give the same answer, input order does not matter, input untouched', () => {
  const set = [v(3, 40n * TOKEN), v(0, 32n * TOKEN), v(2, 33n * TOKEN, false), v(1, 100n * TOKEN)];
  const snapshot = JSON.stringify(set, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  const sorted = [...set].sort((a, b) => a.index - b.index);
  for (let i = 0; i < 200; i++) {
    const seed = vrfSeed(MIX, i);
    const a = selectProposer(set, seed);
    assert.is(selectProposer(set, seed.slice()), a);
    assert.is(selectProposer(sorted, seed), a);
    assert.is(selectProposer(structuredClone(set), seed), a);
  }
  assert.is(JSON.stringify(set, (_, x) => (typeof x === 'bigint' ? x.toString() : x)), snapshot);
  assert.equal(set.map((x) => x.index), [3, 0, 2, 1]);
});

draw('inactive and zero-stake validators are never chosen, however large their stake', () => {
  const set = [v(0, 10n ** 30n, false), v(1, 0n), v(2, 32n * TOKEN), v(3, 10n ** 30n, false), v(4, 0n, true), v(5, 64n * TOKEN)];
  const counts = new Map<number, number>();
  for (let slot = 0; slot < 3000; slot++) {
    const index = selectProposer(set, vrfSeed(MIX, slot));
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  assert.equal([...counts.keys()].sort(), [2, 5]);
});

draw('a single eligible validator is always chosen', () => {
  const set = [v(0, 5n, false), v(7, 1n), v(9, 0n)];
  for (let slot = 0; slot < 50; slot++) assert.is(selectProposer(set, vrfSeed(MIX, slot)), 7);
});

draw('stake-weighted: 1:1:2:4 over 20,000 slots, each share within 4 standard deviations', () => {
  // Each draw picks validator i with probability p_i = stake_i / 8 (the modulo bias is
  // 8 / 2^256). Over N independent draws the share has standard deviation sqrt(p(1-p)/N):
  // 0.0023 for p = 1/8, 0.0031 for 1/4, 0.0035 for 1/2. A 4-sigma band leaves a correct
  // implementation a < 2.6e-4 chance (4 shares x 6.3e-5) of failing on these fixed seeds,
  // while ignoring stake (shares 1/4 each) misses by >= 0.125, i.e. 36 sigma.
  const N = 20_000;
  for (const unit of [1n, 32n * TOKEN]) {
    const set = [v(0, 1n * unit), v(1, 1n * unit), v(2, 2n * unit), v(3, 4n * unit)];
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < N; i++) {
      // Varied mixes and slots, as on a real chain: the mix changes each epoch.
      const mix = sha3(utf8(`epoch-${Math.floor(i / 32)}`));
      counts[selectProposer(set, vrfSeed(mix, i))]!++;
    }
    [1 / 8, 1 / 8, 1 / 4, 1 / 2].forEach((p, i) => {
      const share = counts[i]! / N;
      const sigma = Math.sqrt((p * (1 - p)) / N);
      assert.ok(Math.abs(share - p) <= 4 * sigma, `unit ${unit}: validator ${i} share ${share}, expected ${p} +- ${4 * sigma}`);
    });
  }
});

draw('frozen known answers: a change to the draw (prefix, endianness, order) fails here', () => {
  const set = [v(0, 32n * TOKEN), v(1, 48n * TOKEN), v(2, 100n * TOKEN, false), v(3, 32n * TOKEN), v(4, 64n * TOKEN)];
  const mix = sha3(utf8('svc/known-answer-mix'));
  assert.equal(Array.from({ length: 16 }, (_, slot) => selectProposer(set, vrfSeed(mix, slot))), KNOWN_SLOTS);
  assert.equal(Array.from({ length: 8 }, (_, b) => selectProposer([v(0, 1n), v(1, 1n), v(2, 2n), v(3, 4n)], filled(32, b))), KNOWN_FILLED);
  assert.equal(proposerDuties(set, mix, 1, 8).map((d) => d.index), KNOWN_SLOTS.slice(8));
});

draw('errors: no active validator, bad sets, bad seeds', () => {
  const seed = filled(32, 1);
  const none = { code: 'NO_ACTIVE_VALIDATORS', message: 'no active validator with positive stake: no proposer can be selected', status: 500 };
  expectError(() => selectProposer([], seed), ProposerError, none);
  expectError(() => selectProposer([v(0, 32n, false), v(1, 0n)], seed), ProposerError, none);
  expectError(() => selectProposer([v(0, 1n), v(0, 2n)], seed), ProposerError, { code: 'INVALID_VALIDATOR_SET', message: 'validator index 0 appears twice' });
  expectError(() => selectProposer([v(0, -1n)], seed), ProposerError, { code: 'INVALID_VALIDATOR_SET' });
  expectError(() => selectProposer([v(-1, 1n)], seed), ProposerError, { code: 'INVALID_VALIDATOR_SET' });
  expectError(() => selectProposer([v(0, 1n)], new Uint8Array(31)), ProposerError, { code: 'INVALID_SEED', message: 'proposer seed must be 32 bytes, got 31' });
});

const slots = suite('proposerForSlot and proposerDuties');

const SET = [v(0, 32n * TOKEN), v(1, 64n * TOKEN), v(2, 32n * TOKEN), v(3, 96n * TOKEN, false), v(4, 128n * TOKEN)];

slots('proposerForSlot seeds the draw with vrfSeed(mix, slot) and returns that seed', () => {
  for (const slot of [0, 1, 31, 32, 1_000_000]) {
    const { index, seed } = proposerForSlot(SET, MIX, slot);
    bytesIs(seed, vrfSeed(MIX, slot));
    assert.is(index, selectProposer(SET, vrfSeed(MIX, slot)));
  }
  // Another mix gives another sequence (not a constant function of the slot).
  const a = Array.from({ length: 32 }, (_, s) => proposerForSlot(SET, MIX, s).index);
  const b = Array.from({ length: 32 }, (_, s) => proposerForSlot(SET, sha3(utf8('other mix')), s).index);
  assert.not.equal(a, b);
});

slots('proposerDuties lists every slot of the epoch with its proposer', () => {
  const duties = proposerDuties(SET, MIX, 3, 4);
  assert.equal(duties.map((d) => d.slot), [12, 13, 14, 15]);
  for (const d of duties) assert.is(d.index, proposerForSlot(SET, MIX, d.slot).index);
  assert.equal(proposerDuties(SET, MIX, 0, 1), [{ slot: 0, index: proposerForSlot(SET, MIX, 0).index }]);
  const mainnet = proposerDuties(SET, MIX, 7, 32);
  assert.is(mainnet.length, 32);
  assert.is(mainnet[0]!.slot, 224);
  assert.is(mainnet[31]!.slot, 255);
  assert.ok(mainnet.every((d) => d.index !== 3), 'the inactive validator has no duty');
});

slots('invalid slots, epochs, mixes and an empty set are refused', () => {
  expectError(() => proposerForSlot(SET, MIX, -1), ProposerError, { code: 'INVALID_SLOT', status: 400 });
  expectError(() => proposerForSlot(SET, MIX, 1.5), ProposerError, { code: 'INVALID_SLOT' });
  expectError(() => proposerForSlot(SET, new Uint8Array(16), 0), ProposerError, { code: 'INVALID_SEED', message: 'RANDAO mix must be 32 bytes, got 16' });
  expectError(() => proposerDuties(SET, MIX, -1, 4), ProposerError, { code: 'INVALID_SLOT', message: 'epoch must be a non-negative integer, got -1' });
  expectError(() => proposerDuties(SET, MIX, 0, 0), ProposerError, { code: 'INVALID_SLOT', message: 'slots per epoch must be a positive integer, got 0' });
  expectError(() => proposerDuties(SET, MIX, Number.MAX_SAFE_INTEGER, 32), ProposerError, { code: 'INVALID_SLOT' });
  expectError(() => proposerDuties([v(0, 1n, false)], MIX, 0, 4), ProposerError, { code: 'NO_ACTIVE_VALIDATORS' });
});

draw.run();
slots.run();
