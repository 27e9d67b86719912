/**
 * RandaoChainBuilder: a chain built in the worker thread is the chain built on the main thread
 * (same commitment and reveals), jobs answer in order, and after close() chains are still built
 * (on the main thread).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RandaoChain } from '../../../../src/node/validator/randao/chain.js';
import { RandaoChainBuilder } from '../../../../src/node/validator/randao/builder.js';

const N = 1 << 12;

test('worker-built chains equal main-thread chains; close() falls back to the main thread', async () => {
  const seeds = [1, 2, 3].map((n) => new Uint8Array(32).fill(n));
  const builder = new RandaoChainBuilder();
  try {
    const built = await Promise.all(seeds.map((s, g) => builder.build(s, N, 6, g)));
    seeds.forEach((s, g) => {
      const local = new RandaoChain(s, N, 6, g);
      assert.equal(built[g]!.commitment(), local.commitment(), `seed ${g}: commitment`);
      assert.equal(built[g]!.reveal(77), local.reveal(77), `seed ${g}: a reveal`);
      assert.is(built[g]!.generation, g);
    });
  } finally {
    await builder.close();
  }
  const after = await builder.build(seeds[0]!, N, 6, 0);
  assert.equal(after.commitment(), new RandaoChain(seeds[0]!, N, 6, 0).commitment());
});

test.run();
