/** The verifier's worker pool: results, cache, and recovery when a thread dies. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SignatureVerifier } from '../../../src/node/execution/verifier.js';
import { CHAIN_ID, devnet, transfer } from './fixture.js';

const { keys } = devnet();

test('verifies, caches by hash, and survives a worker thread dying', async () => {
  let hits = 0;
  const v = await SignatureVerifier.start(CHAIN_ID, { threads: 1, observer: { verified() {}, cacheHit: () => hits++ } });
  try {
    const good = transfer(keys.accounts[0]!, { nonce: 0 });
    const bad = { ...transfer(keys.accounts[0]!, { nonce: 1 }), value: 999n };
    const [a, b] = await v.verifyMany([good, bad]);
    assert.is(a!.signer, keys.accounts[0]!.address);
    assert.is(b!.signer, null);
    await v.verifyMany([good]);
    assert.is(hits, 1, 'the second check of a verified hash is a cache hit');
    // Kill the only thread from outside, as a crash would.
    const workers = (v as unknown as { workers: Array<{ terminate(): Promise<number> }> }).workers;
    await workers[0]!.terminate();
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('verification hung after the thread died')), 10_000).unref());
    const [c] = await Promise.race([v.verifyMany([transfer(keys.accounts[0]!, { nonce: 2 })]), deadline]);
    assert.is(c!.signer, keys.accounts[0]!.address, 'a replacement thread verifies');
  } finally {
    await v.close();
  }
});

test.run();
