/**
 * Crafted fork-choice trees and votes shared by the fork-choice suites (forkchoice, justification,
 * json tests).
 */
import * as assert from 'uvu/assert';
import { type AttestationOutcome, type CheckpointHex, ForkChoice, type Root } from '../../../../src/node/beacon/forkchoice/fork-choice.js';

/** Slots per epoch of the crafted trees. */
export const SPE = 4;

/** A distinct root per label; `root(n)` sorts like `n`. */
export function root(n: number): Root {
  return '0x' + n.toString(16).padStart(64, '0');
}

/** The genesis root of every crafted store. */
export const G = root(0xfffff);

/** A fresh store at genesis `G`. */
export function store(spe = SPE): ForkChoice {
  return new ForkChoice(G, spe);
}

/** Imports a block whose root is `root(id)`; returns the root. */
export function add(fc: ForkChoice, id: number, parent: Root, slot: number): Root {
  const r = root(id);
  fc.onBlock({ root: r, parentRoot: parent, slot });
  return r;
}

/** Stakes of validators 0, 1, 2, ... in order. */
export function stakes(...s: (number | bigint)[]): Map<number, bigint> {
  return new Map(s.map((x, i) => [i, BigInt(x)]));
}

/** An honest-looking vote: target is the head's checkpoint for the slot's epoch, source defaults to the justified checkpoint. */
export function vote(fc: ForkChoice, v: number, head: Root, slot: number, source: CheckpointHex = fc.justified()): AttestationOutcome {
  const epoch = Math.floor(slot / fc.slotsPerEpoch);
  return fc.onAttestation({ validatorIndex: v, slot, beaconBlockRoot: head, source, target: { epoch, root: fc.checkpointFor(head, epoch) } });
}

/** `vote` for each of `voters`, all with the same source (the justified checkpoint before the first). */
export function votes(fc: ForkChoice, voters: number[], head: Root, slot: number, source: CheckpointHex = fc.justified()): void {
  for (const v of voters) vote(fc, v, head, slot, source);
}

/** A checkpoint. */
export function cp(epoch: number, r: Root): CheckpointHex {
  return { epoch, root: r };
}

/** G(0) → c4 → c8 → c12 → c16 → c20: one block at each epoch start (SPE = 4). */
export function epochChain(fc: ForkChoice, epochs = 5): Root[] {
  const out = [G];
  for (let e = 1; e <= epochs; e++) out.push(add(fc, 0x100 + e, out[e - 1]!, e * SPE));
  return out;
}


/** G(0) → c4 → c8 → c12 plus side blocks d2 → d5 and c4 → e6, four equal stakes, (1,c4) finalized and (2,c8) justified. */
export function finalizedFixture(): { fc: ForkChoice; c: Root[]; d5: Root; e6: Root } {
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
