/**
 * The validator's proposer-duties cache (src/node/validator/duties.ts) on its own: which dependent
 * root a head implies for an epoch, one fetch per epoch without a reorg, a head event dropping the
 * epochs it draws differently, and an answer that disagrees with the last head event not cached.
 * The fetch is a recording function answering what the test scripts (a reorg at a chosen moment).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProposerDutiesView } from '../../../src/api/beacon.js';
import { dependentRootOn, type HeadRef, ProposerDutiesCache } from '../../../src/node/validator/duties.js';
import { silentLogger } from '../../../src/util/log.js';
import { devnet } from '../execution/fixture.js';

const { genesis } = devnet();
const SPE = genesis.config.slots_per_epoch;
const root = (n: number) => '0x' + n.toString(16).padStart(2, '0').repeat(32);

/** A head at `slot` whose own and next epochs depend on `deps` (tests put it in epoch 1: slot SPE + 1). */
function headAt(slot: number, r: string, deps: [string, string]): HeadRef {
  const e = Math.floor(slot / SPE);
  return { root: r, slot, proposer_dependent_roots: [{ epoch: e, root: deps[0] }, { epoch: e + 1, root: deps[1] }] };
}

/** A cache whose fetch answers `answer(epoch)` and records each call. */
function cacheWith(answer: (epoch: number) => string): { cache: ProposerDutiesCache; calls: number[] } {
  const calls: number[] = [];
  const cache = new ProposerDutiesCache({
    genesis,
    log: silentLogger,
    fetch: async (epoch): Promise<ProposerDutiesView> => {
      calls.push(epoch);
      return { epoch, dependent_root: answer(epoch), duties: [] };
    },
  });
  return { cache, calls };
}

test('dependentRootOn: the head names its epoch and the next; later epochs depend on the head itself; earlier ones are unknown', () => {
  const h = headAt(SPE + 1, root(0xa5), [root(0x01), root(0x03)]);
  assert.is(dependentRootOn(h, 1, genesis), root(0x01));
  assert.is(dependentRootOn(h, 2, genesis), root(0x03));
  assert.is(dependentRootOn(h, 3, genesis), root(0xa5));
  assert.is(dependentRootOn(h, 9, genesis), root(0xa5));
  assert.is(dependentRootOn(h, 0, genesis), undefined);
});

test('one fetch per epoch without a reorg; a head on a branch with another dependent root drops that epoch only', async () => {
  let onBranch = root(0xb1);
  const { cache, calls } = cacheWith((e) => (e === 2 ? onBranch : root(0x00)));
  await cache.get(1);
  await cache.get(2);
  await cache.get(2);
  assert.equal(calls, [1, 2]);
  // Same branch, newer head: nothing dropped.
  assert.equal(cache.onHead(headAt(SPE + 1, root(0xa5), [root(0x00), root(0xb1)])), []);
  // Another branch for epoch 2.
  onBranch = root(0xc1);
  assert.equal(cache.onHead(headAt(SPE + 1, root(0xc5), [root(0x00), root(0xc1)])), [2]);
  assert.is(cache.peek(2), undefined);
  assert.ok(cache.peek(1), 'epoch 1 depends on the same block on both branches');
  assert.is((await cache.get(2)).dependentRoot, root(0xc1));
  assert.equal(calls, [1, 2, 2]);
});

test('an answer that disagrees with the last head event is used but not cached, until the stream is gone', async () => {
  const { cache, calls } = cacheWith(() => root(0xb1));
  // The head event (branch C) was handled while the request, answered on branch B, was out.
  cache.onHead(headAt(SPE + 1, root(0xc5), [root(0x00), root(0xc1)]));
  assert.is((await cache.get(2)).dependentRoot, root(0xb1));
  assert.is(cache.peek(2), undefined, 'not cached');
  await cache.get(2);
  assert.equal(calls, [2, 2]);
  cache.forgetHead();
  await cache.get(2);
  assert.ok(cache.peek(2), 'cached once no head event is remembered');
});

test.run();
