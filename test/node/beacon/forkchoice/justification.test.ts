/**
 * FFG on crafted trees (justification.ts through the ForkChoice store): justification thresholds
 * (exact bigint 2/3), k = 1 finalization, which votes count, the > 1/3 source inference.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ForkChoiceError } from '../../../../src/node/beacon/forkchoice/fork-choice.js';
import { expectError } from '../../../helpers/assert.js';
import { add, cp, epochChain, G, root, stakes, store, vote, votes } from './fixture.js';

const ffg = suite('forkchoice: justification and finalization');

/** Votes (0,G) → (1,c4) from `voters`; returns whether (1,c4) became justified. */
function justifies(s: (number | bigint)[] | null, voters: number[]): boolean {
  const fc = store();
  const [, c4] = epochChain(fc, 1);
  if (s) fc.setBalances(stakes(...s));
  for (const v of voters) vote(fc, v, c4!, 5);
  const ok = fc.isJustified(cp(1, c4!));
  assert.is(fc.justified().epoch === 1, ok, 'justified() agrees with isJustified');
  return ok;
}

ffg('justification exactly at 2/3 of stake, not just below (exact bigint arithmetic)', () => {
  assert.not.ok(justifies([3, 3, 3], [0]));
  assert.ok(justifies([3, 3, 3], [0, 1]), '6/9 is exactly 2/3');
  assert.not.ok(justifies([1, 1, 1, 1], [0, 1]), '2/4 < 2/3');
  assert.ok(justifies([1, 1, 1, 1], [0, 1, 2]));
  assert.ok(justifies([5, 3, 2, 2], [0, 1]), '8/12 exactly');
  assert.not.ok(justifies([5, 3, 2, 2], [0, 2]), '7/12');
  assert.not.ok(justifies([5, 3, 2, 2], [1, 2, 3]), '7/12 from three validators');
  assert.not.ok(justifies([2, 2, 3], [0, 1]), '4/7: 12 < 14');
  assert.ok(justifies([2, 2, 3], [0, 2]), '5/7: 15 ≥ 14');
  const E = 10n ** 24n;
  assert.ok(justifies([2n * E, E], [0]), 'exactly 2/3 at 10^24 scale');
  assert.not.ok(justifies([2n * E - 1n, E + 1n], [0]), 'one wei below 2/3');
  assert.not.ok(justifies(null, [0, 1, 2]), 'no active stake justifies nothing');
  assert.not.ok(justifies([3, 3, 0, 0, 0], [2, 3, 4]), 'zero-stake votes count nothing');
  assert.not.ok(justifies([3, 3], [0, 7, 8]), 'validators outside the active set count nothing');
});

ffg('justification by a balance change; source must be justified', () => {
  const fc = store();
  const [, c4] = epochChain(fc, 2);
  fc.setBalances(stakes(1, 1, 1, 1));
  vote(fc, 0, c4!, 5);
  vote(fc, 1, c4!, 5);
  assert.not.ok(fc.isJustified(cp(1, c4!)));
  fc.setBalances(stakes(1, 1, 1, 0)); // validator 3 left: 2/3 now
  assert.ok(fc.isJustified(cp(1, c4!)));

  // A vote from the unjustified (1,d4) waits for its source: with (0,G) → (2,d8) from two of
  // four validators the target has 3/4 of stake voting, but only 2/4 from a justified source.
  const fc2 = store();
  const [, d4, d8] = epochChain(fc2, 2);
  fc2.setBalances(stakes(1, 1, 1, 1));
  assert.equal(vote(fc2, 0, d8!, 9, cp(1, d4!)), { status: 'applied', lmd: true, ffg: true });
  votes(fc2, [1, 2], d8!, 9, cp(0, G));
  assert.not.ok(fc2.isJustified(cp(2, d8!)));
  assert.not.ok(fc2.isJustified(cp(1, d4!)));
  assert.is(fc2.justified().epoch, 0);
});

ffg('finalization after two consecutive justified epochs, not after a skipped epoch', () => {
  const fc = store();
  const [, c4, c8] = epochChain(fc, 4);
  fc.setBalances(stakes(1, 1, 1));
  votes(fc, [0, 1, 2], c4!, 5); // (0,G) → (1,c4)
  assert.equal(fc.justified(), cp(1, c4!));
  assert.equal(fc.finalized(), cp(0, G));
  vote(fc, 0, c8!, 9);
  assert.equal(fc.finalized(), cp(0, G), 'one vote is not a supermajority');
  vote(fc, 1, c8!, 9); // (1,c4) → (2,c8) at 2/3
  assert.equal(fc.justified(), cp(2, c8!));
  assert.equal(fc.finalized(), cp(1, c4!));

  // Skipped epoch: 1 justified, then 1 → 3 justifies 3 but finalizes nothing; 3 → 4 finalizes 3.
  const fc2 = store();
  const [, d4, , d12, d16] = epochChain(fc2, 4);
  fc2.setBalances(stakes(1, 1, 1));
  votes(fc2, [0, 1, 2], d4!, 5);
  votes(fc2, [0, 1, 2], d12!, 13);
  assert.equal(fc2.justified(), cp(3, d12!));
  assert.equal(fc2.finalized(), cp(0, G));
  votes(fc2, [0, 1, 2], d16!, 17);
  assert.equal(fc2.justified(), cp(4, d16!));
  assert.equal(fc2.finalized(), cp(3, d12!));
});

ffg('links waiting for their source count when the source is justified', () => {
  const fc = store();
  const [, c4, c8] = epochChain(fc, 2);
  fc.setBalances(stakes(1, 1, 1, 1));
  vote(fc, 0, c8!, 9, cp(1, c4!)); // 1/4 from (1,c4): proves nothing about it
  votes(fc, [1, 2], c8!, 9, cp(0, G));
  assert.is(fc.justified().epoch, 0);
  votes(fc, [0, 1], c4!, 5, cp(0, G));
  assert.is(fc.justified().epoch, 0, '2/4 into (1,c4)');
  vote(fc, 2, c4!, 5, cp(0, G)); // (1,c4) justified → cascade: (2,c8) has 3/4 from justified sources
  assert.equal(fc.justified(), cp(2, c8!));
  assert.equal(fc.finalized(), cp(0, G), 'the 1 → 2 link alone is 1/4: nothing finalized');
  assert.is(fc.head(), c8);
});

ffg('votes of more than 1/3 of stake from a source justify it, though this node never saw its votes', () => {
  const fc = store();
  const [, c4, c8, c12] = epochChain(fc, 3);
  fc.setBalances(stakes(1, 1, 1, 1));
  vote(fc, 0, c8!, 9, cp(1, c4!));
  assert.is(fc.justified().epoch, 0, '1/4 proves nothing');
  vote(fc, 1, c8!, 9, cp(1, c4!));
  assert.ok(fc.isJustified(cp(1, c4!)), '2/4 > 1/3 includes an honest voter');
  assert.not.ok(fc.isJustified(cp(2, c8!)), 'the target still needs 2/3');
  vote(fc, 2, c8!, 9, cp(1, c4!));
  assert.equal(fc.justified(), cp(2, c8!));
  assert.equal(fc.finalized(), cp(1, c4!), 'k = 1 over the 3/4 link');
  votes(fc, [0, 1, 2], c12!, 13, cp(2, c8!));
  assert.equal(fc.finalized(), cp(2, c8!), 'and finality goes on from there');

  // Exactly 1/3 is not more than 1/3.
  const fc2 = store();
  const [, d4, d8] = epochChain(fc2, 2);
  fc2.setBalances(stakes(1, 1, 1));
  vote(fc2, 0, d8!, 9, cp(1, d4!));
  assert.not.ok(fc2.isJustified(cp(1, d4!)));
  fc2.setBalances(stakes(2, 1, 1)); // a balance change re-evaluates: 2/4 now
  assert.ok(fc2.isJustified(cp(1, d4!)));
});

ffg('after a partition: validators voting from an old and from an unseen newer source still justify and finalize', () => {
  // This node (like the partitioned side) holds only (0,G) justified; validators 2-3 saw (2,c8)
  // justified elsewhere. Their sources differ, the target is the same: 4/4 into (3,c12).
  const fc = store();
  const [, , c8, c12, c16] = epochChain(fc, 4);
  fc.setBalances(stakes(1, 1, 1, 1));
  votes(fc, [0, 1], c12!, 13, cp(0, G));
  votes(fc, [2, 3], c12!, 13, cp(2, c8!));
  assert.equal(fc.justified(), cp(3, c12!));
  assert.equal(fc.finalized(), cp(0, G), 'the 2 → 3 link is only 2/4');
  votes(fc, [0, 1, 2, 3], c16!, 17, cp(3, c12!)); // everyone now votes from the same source
  assert.equal(fc.finalized(), cp(3, c12!));
});

ffg('finalized never moves backwards', () => {
  const fc = store();
  const [, c4, c8, c12, c16, c20] = epochChain(fc, 5);
  fc.setBalances(stakes(1, 1, 1, 0));
  votes(fc, [0, 1, 2], c4!, 5);
  votes(fc, [0, 1, 2], c12!, 13); // 1 → 3
  votes(fc, [0, 1, 2], c16!, 17); // 3 → 4: finalizes 3
  assert.equal(fc.finalized(), cp(3, c12!));
  // A late supermajority 1 → 2 would finalize epoch 1 under k = 1; finality must stay at 3.
  for (const v of [0, 1, 2]) assert.equal(vote(fc, v, c8!, 9, cp(1, c4!)), { status: 'applied', lmd: false, ffg: false });
  assert.equal(fc.finalized(), cp(3, c12!));
  assert.equal(fc.justified(), cp(4, c16!));
  // A later balance change (which re-evaluates every link) does not move it back either.
  fc.setBalances(stakes(2, 2, 2, 0));
  assert.equal(fc.finalized(), cp(3, c12!));
  // A link from a source older than the finalized epoch never counts, even to a new target.
  assert.equal(vote(fc, 3, c20!, 21, cp(1, c4!)), { status: 'applied', lmd: true, ffg: false });
});

ffg('blocks conflicting with the finalized checkpoint are refused', () => {
  const fc = store();
  const [, c4, c8] = epochChain(fc, 2);
  const d2 = add(fc, 0xd2, G, 2);
  const c5 = add(fc, 0xc5, c4!, 5);
  fc.setBalances(stakes(1, 1, 1));
  votes(fc, [0, 1, 2], c4!, 5);
  votes(fc, [0, 1, 2], c8!, 9);
  assert.equal(fc.finalized(), cp(1, c4!));
  expectError(() => fc.onBlock({ root: root(0xd9), parentRoot: d2, slot: 9 }), ForkChoiceError, { code: 'FINALIZED_CONFLICT', status: 409 });
  expectError(() => fc.onBlock({ root: root(0xd3), parentRoot: G, slot: 3 }), ForkChoiceError, { code: 'FINALIZED_CONFLICT' });
  add(fc, 0xc6, c5, 6); // descends from the finalized block: fine
});

ffg('finalized block before its epoch start: a child at or before that start conflicts', () => {
  const fc = store();
  const f3 = add(fc, 0xf3, G, 3);
  const x4 = add(fc, 0xf4, f3, 4); // fine while nothing is finalized
  const f8 = add(fc, 0xf8, f3, 8);
  fc.setBalances(stakes(1, 1, 1));
  votes(fc, [0, 1, 2], f3, 5); // (0,G) → (1,f3): slot 4 of the voters' branch is empty
  votes(fc, [0, 1, 2], f8, 9); // (1,f3) → (2,f8)
  assert.equal(fc.finalized(), cp(1, f3));
  // Its epoch-1 checkpoint would be itself, not f3.
  expectError(() => fc.onBlock({ root: root(0xf5), parentRoot: f3, slot: 4 }), ForkChoiceError, { code: 'FINALIZED_CONFLICT' });
  add(fc, 0xf6, f3, 5);
  fc.prune();
  assert.is(fc.getBlock(x4), undefined, 'prune drops such a block imported before finality');
  assert.ok(fc.getBlock(root(0xf6)));
  assert.is(fc.head(), f8);
});


ffg.run();
