/**
 * Fork choice on crafted trees: LMD-GHOST head selection and tie-break, latest-message rules,
 * slashable votes, justified-rooted head and pruning (FFG: justification.test.ts; persistence:
 * json.test.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError } from '../../../../src/core/errors.js';
import { ForkChoice, ForkChoiceError, type Root, toForkChoiceAttestation } from '../../../../src/node/beacon/forkchoice/fork-choice.js';
import { expectError } from '../../../helpers/assert.js';

import { add, cp, epochChain, finalizedFixture, G, root, stakes, store, vote, votes } from './fixture.js';

// ---------------------------------------------------------------------------------------------
const lmd = suite('forkchoice: LMD-GHOST');

lmd('single chain: the head is the tip, with or without votes', () => {
  const fc = store();
  assert.is(fc.head(), G);
  const a = add(fc, 1, G, 1);
  const b = add(fc, 2, a, 2);
  const c = add(fc, 3, b, 3);
  assert.is(fc.head(), c);
  fc.setBalances(stakes(7));
  vote(fc, 0, b, 3);
  // Voting for an ancestor does not stop GHOST from descending to the tip.
  assert.is(fc.head(), c);
  assert.is(fc.weight(b), 7n);
  assert.is(fc.weight(G), 7n);
  assert.is(fc.weight(c), 0n);
});

lmd('fork: the heavier subtree wins, not the longer chain nor the heaviest single block', () => {
  const fc = store();
  const a1 = add(fc, 0xa1, G, 1);
  const a2x = add(fc, 0xa2, a1, 2);
  const a2y = add(fc, 0xa3, a1, 2);
  const a3 = add(fc, 0xa4, a2x, 3);
  const b1 = add(fc, 0xb1, G, 1);
  fc.setBalances(stakes(4, 2, 5));
  vote(fc, 0, a3, 3);
  vote(fc, 1, a2y, 3);
  vote(fc, 2, b1, 3);
  // A-subtree 6 > B 5, although B1 alone outweighs every A block; inside A, 4 > 2.
  assert.is(fc.weight(a1), 6n);
  assert.is(fc.weight(b1), 5n);
  assert.is(fc.head(), a3);

  const fc2 = store();
  const l1 = add(fc2, 0xa1, G, 1);
  const l3 = add(fc2, 0xa3, add(fc2, 0xa2, l1, 2), 3);
  const s1 = add(fc2, 0xb1, G, 1);
  fc2.setBalances(stakes(1, 1, 1));
  vote(fc2, 0, l3, 3);
  vote(fc2, 1, s1, 3);
  vote(fc2, 2, s1, 3);
  assert.is(fc2.head(), s1, 'heavier short branch beats the longer light one');
  // A balance change moves weight without any new vote.
  fc2.setBalances(stakes(5, 1, 1));
  assert.is(fc2.weight(l1), 5n);
  assert.is(fc2.head(), l3);
});

lmd('latest message: a newer target epoch moves the weight, an older one does not', () => {
  const fc = store();
  const a = add(fc, 0xa1, G, 1);
  const b = add(fc, 0xb1, G, 2);
  fc.setBalances(stakes(3, 2)); // 3/5 < 2/3: nothing gets justified here
  vote(fc, 1, b, 3);
  assert.equal(vote(fc, 0, a, 5), { status: 'applied', lmd: true, ffg: true });
  assert.is(fc.head(), a);
  assert.equal(fc.latestMessage(0), { root: a, epoch: 1 });

  assert.equal(vote(fc, 0, b, 13), { status: 'applied', lmd: true, ffg: true }); // epoch 3
  assert.is(fc.head(), b);
  assert.is(fc.weight(a), 0n);
  assert.is(fc.weight(b), 5n);

  // Epoch 2 is older than the latest message's epoch 3: recorded, but LMD ignores it.
  const late = vote(fc, 0, a, 9);
  assert.equal(late, { status: 'applied', lmd: false, ffg: true });
  assert.is(fc.head(), b);
  assert.equal(fc.latestMessage(0), { root: b, epoch: 3 });

  // Re-sending the same attestation is a no-op.
  assert.equal(vote(fc, 0, b, 13), { status: 'duplicate' });
  assert.is(fc.weight(b), 5n);
});

lmd('tie-break: equal subtree weights go to the lexicographically greater root', () => {
  const fc = store();
  const hi = '0xbb' + '00'.repeat(31);
  const lo = '0xaa' + 'ff'.repeat(31);
  // Import the greater root first, then the smaller, so insertion order cannot be what decides.
  fc.onBlock({ root: hi, parentRoot: G, slot: 1 });
  fc.onBlock({ root: lo, parentRoot: G, slot: 1 });
  assert.is(fc.head(), hi);
  fc.setBalances(stakes(2, 2));
  vote(fc, 0, lo, 2);
  assert.is(fc.head(), lo);
  vote(fc, 1, hi, 2);
  assert.is(fc.head(), hi, 'non-zero tie');
  // Mixed-case input names the same block.
  assert.is(fc.getBlock(hi.toUpperCase().replace('0X', '0x'))?.root, hi);
});

lmd('blocks: unknown parent, non-increasing slot, duplicates, conflicts', () => {
  const fc = store();
  const a = add(fc, 1, G, 2);
  expectError(() => fc.onBlock({ root: root(2), parentRoot: root(99), slot: 3 }), ForkChoiceError, { code: 'UNKNOWN_PARENT', status: 400 });
  assert.is(fc.getBlock(root(2)), undefined);
  expectError(() => fc.onBlock({ root: root(2), parentRoot: a, slot: 2 }), ForkChoiceError, { code: 'INVALID_SLOT' });
  fc.onBlock({ root: a, parentRoot: G, slot: 2 }); // idempotent
  assert.is(fc.size, 2);
  expectError(() => fc.onBlock({ root: a, parentRoot: G, slot: 3 }), ForkChoiceError, { code: 'BLOCK_CONFLICT', status: 409 });
  expectError(() => fc.onBlock({ root: '0x12', parentRoot: G, slot: 3 }), MalformedError, { field: 'block.root' });
  assert.equal(fc.getBlock(a), { root: a, parentRoot: G, slot: 2 });
  assert.equal(fc.getBlock(G), { root: G, parentRoot: null, slot: 0 });
});

lmd('checkpointFor: the epoch start block, or the latest block before it; blockAtSlot; isDescendant', () => {
  const fc = store();
  const a3 = add(fc, 3, G, 3);
  const a6 = add(fc, 6, a3, 6);
  const a8 = add(fc, 8, a6, 8);
  const a9 = add(fc, 9, a8, 9);
  const b5 = add(fc, 0xb5, a3, 5);
  assert.is(fc.checkpointFor(a9, 0), G);
  assert.is(fc.checkpointFor(a9, 1), a3, 'slot 4 is empty: latest before it');
  assert.is(fc.checkpointFor(a9, 2), a8, 'block exactly at the start slot');
  assert.is(fc.checkpointFor(a9, 3), a9, 'future epoch: the head itself');
  assert.is(fc.checkpointFor(b5, 2), b5);
  assert.is(fc.checkpointFor(a6, 1), a3);
  expectError(() => fc.checkpointFor(root(77), 1), ForkChoiceError, { code: 'UNKNOWN_BLOCK', status: 404 });

  assert.is(fc.blockAtSlot(a9, 9), a9, 'the head at its own slot');
  assert.is(fc.blockAtSlot(a9, 20), a9, 'a later slot: still the head');
  assert.is(fc.blockAtSlot(a9, 7), a6, 'an earlier slot: the latest ancestor at or before it');
  assert.is(fc.blockAtSlot(a9, 2), G);
  assert.is(fc.blockAtSlot(b5, 4), a3);
  expectError(() => fc.blockAtSlot(root(77), 1), ForkChoiceError, { code: 'UNKNOWN_BLOCK' });

  assert.ok(fc.isDescendant(G, a9));
  assert.ok(fc.isDescendant(a3, b5));
  assert.ok(fc.isDescendant(a9, a9));
  assert.not.ok(fc.isDescendant(a6, b5));
  assert.not.ok(fc.isDescendant(a9, a3));
  expectError(() => fc.isDescendant(root(77), a3), ForkChoiceError, { code: 'UNKNOWN_BLOCK' });
});

lmd('checkpointFor and isDescendant agree with a naive parent walk on random trees, before and after pruning', () => {
  let seed = 12345;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (const spe of [1, 3, 8]) {
    const fc = store(spe);
    const all: Root[] = [G];
    for (let k = 1; k <= 300; k++) {
      const parent = all[all.length - 1 - rand(Math.min(all.length, 12))]!;
      all.push(add(fc, k, parent, fc.getBlock(parent)!.slot + 1 + rand(spe * 2)));
    }
    const naive = (r: Root, slot: number): Root | undefined => {
      let b = fc.getBlock(r);
      while (b && b.slot > slot) b = b.parentRoot === null ? undefined : fc.getBlock(b.parentRoot);
      return b?.root;
    };
    const check = (held: Root[]) => {
      for (let t = 0; t < 400; t++) {
        const r = held[rand(held.length)]!;
        const epoch = rand(Math.floor(fc.getBlock(r)!.slot / spe) + 2);
        const want = naive(r, epoch * spe);
        if (want === undefined) expectError(() => fc.checkpointFor(r, epoch), ForkChoiceError, { code: 'CHECKPOINT_UNAVAILABLE' });
        else assert.is(fc.checkpointFor(r, epoch), want);
        const other = held[rand(held.length)]!;
        assert.is(fc.isDescendant(other, r), naive(r, fc.getBlock(other)!.slot) === other);
      }
    };
    check(all);
    // Force a finalized checkpoint deep in the tree via JSON, prune, and check again.
    const j = fc.toJson();
    const f = all[200]!;
    const fEpoch = Math.floor(fc.getBlock(f)!.slot / spe) + 1;
    const fcp = { epoch: fEpoch, root: f };
    const forced = ForkChoice.fromJson({ ...j, justified: fcp, finalized: fcp, justified_checkpoints: [...j.justified_checkpoints, fcp] });
    forced.prune();
    const held = all.filter((r) => forced.getBlock(r));
    assert.ok(held.length < all.length && held.includes(f));
    check(held);
    for (const r of held) assert.ok(forced.isDescendant(f, r));
  }
});

lmd('attestations: inconsistent ones are refused and leave no trace', () => {
  const fc = store();
  const [, c4, c8] = epochChain(fc, 2);
  const d5 = add(fc, 0xd5, c4, 5);
  fc.setBalances(stakes(1, 1));
  const base = { validatorIndex: 0, slot: 9, beaconBlockRoot: c8!, source: cp(0, G), target: cp(2, c8!) };
  expectError(() => fc.onAttestation({ ...base, target: cp(2, d5) }), ForkChoiceError, { code: 'INVALID_ATTESTATION' });
  expectError(() => fc.onAttestation({ ...base, target: cp(1, c4!) }), ForkChoiceError, { code: 'INVALID_ATTESTATION' }); // epoch ≠ slot's
  expectError(() => fc.onAttestation({ ...base, slot: 7, target: cp(1, c4!) }), ForkChoiceError, { code: 'INVALID_ATTESTATION' }); // block after slot
  expectError(() => fc.onAttestation({ ...base, source: cp(1, d5) }), ForkChoiceError, { code: 'INVALID_ATTESTATION' }); // source off-branch
  expectError(() => fc.onAttestation({ ...base, source: cp(2, c8!) }), ForkChoiceError, { code: 'INVALID_ATTESTATION' }); // source = target
  const unknown = root(0xdead);
  expectError(() => fc.onAttestation({ ...base, beaconBlockRoot: unknown }), ForkChoiceError, { code: 'UNKNOWN_BLOCK' });
  expectError(() => fc.onAttestation({ ...base, target: cp(2, unknown) }), ForkChoiceError, { code: 'UNKNOWN_BLOCK' });
  expectError(() => fc.onAttestation({ ...base, beaconBlockRoot: 'c8' }), MalformedError, { field: 'attestation.beaconBlockRoot' });
  // Nothing above was recorded: the valid vote is neither a duplicate nor slashable.
  assert.equal(fc.onAttestation(base), { status: 'applied', lmd: true, ffg: true });
  assert.is(fc.weight(c8!), 1n);
  // Genesis-epoch votes ({0,G} → {0,G}) count for LMD only.
  assert.equal(fc.onAttestation({ validatorIndex: 1, slot: 0, beaconBlockRoot: G, source: cp(0, G), target: cp(0, G) }), { status: 'applied', lmd: true, ffg: false });
});

lmd('toForkChoiceAttestation converts the core type', () => {
  const b = (x: number) => new Uint8Array(32).fill(x);
  const got = toForkChoiceAttestation({ validatorIndex: 3, data: { slot: 9, beaconBlockRoot: b(1), source: { epoch: 1, root: b(2) }, target: { epoch: 2, root: b(0xab) } }, signature: new Uint8Array(0) });
  assert.equal(got, { validatorIndex: 3, slot: 9, beaconBlockRoot: '0x' + '01'.repeat(32), source: cp(1, '0x' + '02'.repeat(32)), target: cp(2, '0x' + 'ab'.repeat(32)) });
});

lmd('long chain: head and weights without recursion limits', () => {
  const fc = store(32);
  let tip = G;
  for (let s = 1; s <= 20_000; s++) tip = add(fc, s, tip, s);
  fc.setBalances(new Map(Array.from({ length: 500 }, (_, i) => [i, 32n] as [number, bigint])));
  for (let v = 0; v < 500; v++) vote(fc, v, root(19_000 + v), 19_600);
  assert.is(fc.head(), tip);
  assert.is(fc.weight(G), 500n * 32n);
  assert.is(fc.weight(root(19_250)), 250n * 32n);
});

// ---------------------------------------------------------------------------------------------
const slashing = suite('forkchoice: slashable votes');

slashing('double vote: reported, not counted, and the equivocator loses its LMD weight', () => {
  const fc = store();
  const a4 = add(fc, 0xa4, G, 4);
  const b4 = add(fc, 0xb4, G, 4);
  fc.setBalances(stakes(1, 1, 1));
  vote(fc, 0, a4, 5);
  const first = { slot: 5, beaconBlockRoot: a4, source: cp(0, G), target: cp(1, a4) };
  const out = vote(fc, 0, b4, 6);
  assert.equal(out, {
    status: 'slashable',
    evidence: { kind: 'double_vote', validatorIndex: 0, previous: first, conflicting: { slot: 6, beaconBlockRoot: b4, source: cp(0, G), target: cp(1, b4) } },
  });
  vote(fc, 1, b4, 5);
  // Counted, validator 0's second vote would give b4 2/3.
  assert.not.ok(fc.isJustified(cp(1, b4)));
  assert.is(fc.weight(b4), 1n);
  assert.is(fc.weight(a4), 0n, 'equivocator weight dropped');
  assert.is(fc.latestMessage(0)?.root, a4);
  // Same data, different slot in the same epoch is also a double vote.
  assert.is(vote(fc, 1, b4, 7).status, 'slashable');
  assert.equal(fc.slashable().map((e) => [e.validatorIndex, e.kind]), [[0, 'double_vote'], [1, 'double_vote']]);
  // Later non-conflicting votes of an equivocator still count for FFG but not for LMD.
  const b8 = add(fc, 0xb8, b4, 8);
  assert.equal(vote(fc, 0, b8, 9, cp(0, G)), { status: 'applied', lmd: false, ffg: true });
  assert.is(fc.weight(b8), 0n);
});

slashing('surround vote (both directions): reported and not counted', () => {
  const fc = store();
  const [, c4, c8, c12, c16] = epochChain(fc, 4);
  fc.setBalances(stakes(1, 1, 1));
  assert.is(vote(fc, 0, c12!, 13, cp(1, c4!)).status, 'applied'); // 1 → 3
  const outer = vote(fc, 0, c16!, 17, cp(0, G)); // 0 → 4 surrounds 1 → 3
  assert.equal(outer, {
    status: 'slashable',
    evidence: {
      kind: 'surround_vote',
      validatorIndex: 0,
      previous: { slot: 13, beaconBlockRoot: c12!, source: cp(1, c4!), target: cp(3, c12!) },
      conflicting: { slot: 17, beaconBlockRoot: c16!, source: cp(0, G), target: cp(4, c16!) },
    },
  });
  vote(fc, 1, c16!, 17, cp(0, G));
  assert.not.ok(fc.isJustified(cp(4, c16!)), 'the surround vote would have made 2/3');
  assert.is(fc.weight(c16!), 1n);

  // Surrounded: 0 → 4 first, then 1 → 2 inside it.
  assert.is(vote(fc, 2, c16!, 17, cp(0, G)).status, 'applied');
  const inner = vote(fc, 2, c8!, 9, cp(1, c4!));
  assert.is(inner.status, 'slashable');
  assert.is(inner.status === 'slashable' && inner.evidence.kind, 'surround_vote');
  assert.is(inner.status === 'slashable' && inner.evidence.previous.target.epoch, 4);
  // Same source or same target epoch range edges are not surround votes.
  const fc2 = store();
  const [, d4, d8, d12] = epochChain(fc2, 3);
  fc2.setBalances(stakes(1));
  assert.is(vote(fc2, 0, d8!, 9, cp(0, G)).status, 'applied');
  assert.is(vote(fc2, 0, d12!, 13, cp(0, G)).status, 'applied');
  assert.is(vote(fc2, 0, d4!, 5, cp(0, G)).status, 'applied');
});

// ---------------------------------------------------------------------------------------------
const rooted = suite('forkchoice: justified root, pruning');

rooted('head starts from the justified checkpoint: a heavier branch outside it loses', () => {
  const fc = store();
  const b1 = add(fc, 0xb1, G, 1);
  const b4 = add(fc, 0xb4, b1, 4);
  const b5 = add(fc, 0xb5, b4, 5);
  const c2 = add(fc, 0xc2, G, 2);
  const c5 = add(fc, 0xc5, c2, 5);
  const c9 = add(fc, 0xc9, c5, 9);
  fc.setBalances(stakes(1, 1, 1, 1));
  votes(fc, [0, 1, 2], b5, 5);
  assert.equal(fc.justified(), cp(1, b4));
  vote(fc, 0, c9, 9, cp(0, G));
  vote(fc, 1, c9, 9, cp(0, G)); // 2/4: (2,c5) is not justified
  assert.not.ok(fc.isJustified(cp(2, c5)));
  assert.ok(fc.weight(c2) > fc.weight(b1), 'plain GHOST from genesis would pick the C branch');
  assert.is(fc.head(), b5);
});

rooted('head skips children of the justified block that precede the justified epoch start', () => {
  const fc = store();
  const j = add(fc, 0x13, G, 3);
  const k = add(fc, 0x14, j, 4); // slot 4 = epoch 1 start: its branch's epoch-1 checkpoint is k, not j
  const l = add(fc, 0x15, j, 5);
  fc.setBalances(stakes(1, 1, 1, 1));
  votes(fc, [0, 1, 2], j, 5);
  assert.equal(fc.justified(), cp(1, j));
  vote(fc, 3, k, 6, cp(0, G));
  assert.is(fc.weight(k), 1n);
  assert.is(fc.head(), l);
});


rooted('prune: keeps the finalized block, its descendants and the head; drops the rest', () => {
  const { fc, c, d5, e6 } = finalizedFixture();
  assert.equal(fc.finalized(), cp(1, c[1]!));
  const head = fc.head();
  assert.is(head, c[3]);
  const w = fc.weight(c[1]!);
  assert.is(fc.size, 7);
  fc.prune();
  assert.is(fc.size, 4);
  for (const gone of [G, root(0xd2), d5]) assert.is(fc.getBlock(gone), undefined);
  for (const kept of [c[1]!, c[2]!, c[3]!, e6]) assert.ok(fc.getBlock(kept));
  assert.is(fc.head(), head);
  assert.is(fc.weight(c[1]!), w);
  assert.equal(fc.finalized(), cp(1, c[1]!));
  assert.equal(fc.justified(), cp(2, c[2]!));
  expectError(() => fc.onBlock({ root: root(0xd9), parentRoot: d5, slot: 9 }), ForkChoiceError, { code: 'UNKNOWN_PARENT' });
  expectError(() => fc.checkpointFor(c[3]!, 0), ForkChoiceError, { code: 'CHECKPOINT_UNAVAILABLE' });
  // The store keeps working: votes (1,c4) → (3,e10) justify e10's branch and move the head.
  const e10 = add(fc, 0xe10, e6, 10);
  for (const v of [0, 1, 2]) vote(fc, v, e10, 13, cp(1, c[1]!));
  assert.equal(fc.justified(), cp(3, e10));
  assert.is(fc.head(), e10);
  fc.prune();
  assert.is(fc.head(), e10);
  assert.is(fc.size, 5);
});

lmd.run();
slashing.run();
rooted.run();
