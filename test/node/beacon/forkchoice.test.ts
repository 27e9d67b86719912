/**
 * Fork choice on crafted trees: LMD-GHOST head selection and tie-break, latest-message rules,
 * FFG justification thresholds (exact bigint 2/3), k = 1 finalization, slashable votes,
 * justified-rooted head, pruning and JSON persistence.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MalformedError } from '../../../src/core/errors.js';
import { type AttestationOutcome, type CheckpointHex, ForkChoice, ForkChoiceError, type Root, toForkChoiceAttestation } from '../../../src/node/beacon/forkchoice.js';
import { expectError } from '../../helpers/assert.js';

const SPE = 4;

/** A distinct root per label; `root(n)` sorts like `n`. */
function root(n: number): Root {
  return '0x' + n.toString(16).padStart(64, '0');
}

const G = root(0xfffff);

function store(spe = SPE): ForkChoice {
  return new ForkChoice(G, spe);
}

/** Imports a block whose root is `root(id)`; returns the root. */
function add(fc: ForkChoice, id: number, parent: Root, slot: number): Root {
  const r = root(id);
  fc.onBlock({ root: r, parentRoot: parent, slot });
  return r;
}

function stakes(...s: (number | bigint)[]): Map<number, bigint> {
  return new Map(s.map((x, i) => [i, BigInt(x)]));
}

/** An honest-looking vote: target is the head's checkpoint for the slot's epoch, source defaults to the justified checkpoint. */
function vote(fc: ForkChoice, v: number, head: Root, slot: number, source: CheckpointHex = fc.justified()): AttestationOutcome {
  const epoch = Math.floor(slot / fc.slotsPerEpoch);
  return fc.onAttestation({ validatorIndex: v, slot, beaconBlockRoot: head, source, target: { epoch, root: fc.checkpointFor(head, epoch) } });
}

/** `vote` for each of `voters`, all with the same source (the justified checkpoint before the first). */
function votes(fc: ForkChoice, voters: number[], head: Root, slot: number, source: CheckpointHex = fc.justified()): void {
  for (const v of voters) vote(fc, v, head, slot, source);
}

function cp(epoch: number, r: Root): CheckpointHex {
  return { epoch, root: r };
}

/** G(0) → c4 → c8 → c12 → c16 → c20: one block at each epoch start (SPE = 4). */
function epochChain(fc: ForkChoice, epochs = 5): Root[] {
  const out = [G];
  for (let e = 1; e <= epochs; e++) out.push(add(fc, 0x100 + e, out[e - 1]!, e * SPE));
  return out;
}

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
const rooted = suite('forkchoice: justified root, pruning, persistence');

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

function finalizedFixture(): { fc: ForkChoice; c: Root[]; d5: Root; e6: Root } {
  const fc = store();
  const c = epochChain(fc, 3);
  const d2 = add(fc, 0xd2, G, 2);
  const d5 = add(fc, 0xd5, d2, 5);
  const e6 = add(fc, 0xe6, c[1]!, 6);
  fc.setBalances(stakes(1, 1, 1, 1));
  votes(fc, [0, 1, 2], c[1]!, 5); // justifies (1,c4)
  votes(fc, [0, 1, 2], c[2]!, 9); // justifies (2,c8), finalizes (1,c4)
  // After finality, so its pre-finality source makes it LMD-only.
  assert.equal(vote(fc, 3, d5, 6, cp(0, G)), { status: 'applied', lmd: true, ffg: false });
  return { fc, c, d5, e6 };
}

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

rooted('JSON round trip preserves head, justified, finalized, weights and slashing memory', () => {
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

rooted('fromJson is strict', () => {
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

lmd.run();
ffg.run();
slashing.run();
rooted.run();
