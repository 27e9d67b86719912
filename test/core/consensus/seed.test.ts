/**
 * The O(1) seed-mix rule (seedMixFor / nextEpochMixes) against the rule as written: the seed mix
 * of epoch e is the mix after the latest block of the branch below slot (e-1) × slots_per_epoch,
 * found by walking back (the beacon's walk), on random branches with skipped slots and epochs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, u64LE } from '../../../src/core/codec/bytes.js';
import { type EpochMixes, genesisEpochMixes, genesisMix, nextEpochMixes, seedMixFor } from '../../../src/core/consensus/randao.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { MalformedError } from '../../../src/core/errors.js';
import { expectError } from '../../helpers/assert.js';

const test = suite('consensus: seed mix in O(1) per block');

interface Node {
  slot: number;
  mix: Uint8Array;
  mixes: EpochMixes;
}

/** The rule as written: walk back from the tip to the latest block below (e-1) × spe (genesis at the latest). */
function walkedSeedMix(branch: readonly Node[], slot: number, spe: number): Uint8Array {
  const limit = (Math.floor(slot / spe) - 1) * spe;
  let i = branch.length - 1;
  while (i > 0 && branch[i]!.slot >= limit) i--;
  return branch[i]!.mix;
}

/** A small deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('every candidate slot of every block on random branches gets the walked seed mix', () => {
  for (const spe of [1, 2, 4, 32]) {
    for (let run = 0; run < 10; run++) {
      const next = rng(run * 7919 + spe);
      const g = genesisMix(sha3(u64LE(run)));
      const branch: Node[] = [{ slot: 0, mix: g, mixes: genesisEpochMixes(g) }];
      for (let b = 0; b < 60; b++) {
        const tip = branch[branch.length - 1]!;
        // Every slot up to three epochs ahead: the same epoch, the next, and skipped epochs.
        for (let s = tip.slot + 1; s <= tip.slot + 3 * spe + 1; s++) {
          assert.is(toHex(seedMixFor(tip.mixes, tip.slot, s, spe)), toHex(walkedSeedMix(branch, s, spe)), `spe ${spe} run ${run} block ${b} slot ${s}`);
        }
        // Mostly consecutive slots, sometimes a gap of up to three epochs.
        const gap = next() < 0.7 ? 1 : 1 + Math.floor(next() * 3 * spe);
        const slot = tip.slot + gap;
        const mix = sha3(tip.mix, u64LE(slot));
        branch.push({ slot, mix, mixes: nextEpochMixes(tip.mixes, tip.slot, slot, spe, mix) });
        assert.is(toHex(branch[branch.length - 1]!.mixes.mix), toHex(mix));
      }
    }
  }
});

test('epochs 0 and 1 draw from the genesis mix', () => {
  const g = genesisMix(sha3(u64LE(1)));
  const m = genesisEpochMixes(g);
  for (const slot of [1, 3, 4, 7]) assert.is(toHex(seedMixFor(m, 0, slot, 4)), toHex(g));
  const after1 = nextEpochMixes(m, 0, 1, 4, sha3(g));
  assert.is(toHex(seedMixFor(after1, 1, 5, 4)), toHex(g), 'epoch 1 still uses the genesis mix');
  assert.is(toHex(seedMixFor(after1, 1, 8, 4)), toHex(sha3(g)), 'epoch 2 uses the mix after epoch 0');
});

test('a slot that is not after the parent is refused', () => {
  const m = genesisEpochMixes(genesisMix(sha3(u64LE(2))));
  expectError(() => seedMixFor(m, 5, 5, 4), MalformedError, { code: 'MALFORMED_INPUT' });
  expectError(() => nextEpochMixes(m, 5, 4, 4, m.mix), MalformedError, { code: 'MALFORMED_INPUT' });
  expectError(() => seedMixFor(m, 0, 1, 0), MalformedError, { code: 'MALFORMED_INPUT' });
});

test.run();
