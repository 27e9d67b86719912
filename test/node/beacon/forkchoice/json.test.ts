/**
 * The persisted fork-choice store (json.ts through ForkChoice.toJson/fromJson): round
 * trips and the strict parser.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError } from '../../../../src/core/errors.js';
import { ForkChoice } from '../../../../src/node/beacon/forkchoice/fork-choice.js';
import { expectError } from '../../../helpers/assert.js';
import { add, cp, finalizedFixture, root, vote } from './fixture.js';

const persistence = suite('forkchoice: persistence');

persistence('JSON round trip preserves head, justified, finalized, weights and slashing memory', () => {
  for (const pruned of [false, true]) {
    const { fc, c } = finalizedFixture();
    const n = add(fc, 0x200, c[3]!, 13);
    vote(fc, 0, n, 14, cp(2, c[2]!)); // 1/4 toward (3,c12): must survive the restart
    assert.is(vote(fc, 1, c[2]!, 10, cp(1, c[1]!)).status, 'slashable'); // second target-epoch-2 vote
    if (pruned) fc.prune();
    const json = JSON.parse(JSON.stringify(fc.toJson()));
    const back = ForkChoice.fromJson(json);
    assert.is(back.head(), fc.head());
    assert.equal(back.justified(), fc.justified());
    assert.equal(back.finalized(), fc.finalized());
    assert.is(back.weight(c[1]!), fc.weight(c[1]!));
    assert.is(back.totalActiveStake, 4n);
    assert.equal(back.slashable(), fc.slashable());
    assert.equal(back.toJson(), fc.toJson());
    // Behaviour after restart matches: the same new double vote is caught by both...
    for (const f of [fc, back]) assert.is(vote(f, 2, c[2]!, 11, cp(1, c[1]!)).status, 'slashable');
    // ...and validator 0's restored link vote completes the supermajority for (3,c12) in both.
    for (const f of [fc, back]) for (const v of [2, 3]) vote(f, v, n, 14, cp(2, c[2]!));
    for (const f of [fc, back]) {
      assert.equal(f.justified(), cp(3, c[3]!));
      assert.equal(f.finalized(), cp(2, c[2]!));
      assert.is(f.head(), n);
    }
    assert.equal(back.toJson(), fc.toJson());
  }
});

persistence('fromJson is strict', () => {
  const { fc } = finalizedFixture();
  const good = () => JSON.parse(JSON.stringify(fc.toJson()));
  ForkChoice.fromJson(good());
  const bad = (mutate: (j: any) => void, field: string) => {
    const j = good();
    mutate(j);
    expectError(() => ForkChoice.fromJson(j), MalformedError, { field });
  };
  bad((j) => (j.extra = 1), 'forkchoice.extra');
  bad((j) => delete j.votes, 'forkchoice.votes');
  bad((j) => (j.version = 2), 'forkchoice.version');
  bad((j) => (j.blocks[1].root = 'c4'), 'forkchoice.blocks[1].root');
  bad((j) => (j.blocks[0].slot = 3), 'forkchoice.blocks[0].slot');
  bad((j) => ([j.blocks[1], j.blocks[2]] = [j.blocks[2], j.blocks[1]]), 'forkchoice.blocks[1].parent_root');
  bad((j) => (j.balances[0].stake = 1), 'forkchoice.balances[0].stake');
  bad((j) => (j.finalized.root = root(0x999)), 'forkchoice.finalized.root');
  bad((j) => (j.votes[0].target.x = 0), 'forkchoice.votes[0].target.x');
  bad((j) => j.votes.push(j.votes[0]), `forkchoice.votes[${fc.toJson().votes.length}]`);
  bad((j) => (j.slots_per_epoch = 0), 'forkchoice.slots_per_epoch');
  expectError(() => ForkChoice.fromJson([]), MalformedError, { field: 'forkchoice' });
});

persistence.run();
