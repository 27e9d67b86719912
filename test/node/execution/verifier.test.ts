/** The verifier's worker pool: results, cache, and recovery when a thread dies. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SignatureVerifier } from '../../../src/node/execution/verifier.js';
import { toHex } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
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

test('envelope-keyed cache: a known envelope is a hit without its hash; a changed one with the same signature is verified and refused', async () => {
  let hits = 0;
  let verified = 0;
  const v = await SignatureVerifier.start(CHAIN_ID, { threads: 1, observer: { verified: () => verified++, cacheHit: () => hits++ } });
  try {
    const tx = transfer(keys.accounts[1]!, { nonce: 0 });
    const envelope = encodeTx(tx);
    const hash = toHex(sha3(envelope));
    const [first] = await v.verifyMany([tx], { envelopes: [envelope] });
    assert.equal({ ...first }, { hash, signer: keys.accounts[1]!.address, cached: false, size: envelope.length });
    // A fresh copy of the same bytes (as a block body carries them) is answered from the cache, with the hash.
    const [again] = await v.verifyMany([tx], { envelopes: [new Uint8Array(envelope)] });
    assert.equal({ ...again }, { hash, signer: keys.accounts[1]!.address, cached: true, size: envelope.length });
    assert.is(hits, 1);
    assert.is(verified, 1);
    // Same signature bytes (so the same cache key), another value: never taken from the cache.
    const forged = encodeTx({ ...tx, value: tx.value + 1n });
    const [f] = await v.verifyMany([{ ...tx, value: tx.value + 1n }], { envelopes: [forged] });
    assert.is(f!.cached, false);
    assert.is(f!.signer, null);
    assert.is(f!.hash, toHex(sha3(forged)));
    assert.is(verified, 2);
    // The hash-keyed cache still answers callers that pass hashes.
    const [byHash] = await v.verifyMany([tx], { envelopes: [envelope], hashes: [sha3(envelope)] });
    assert.is(byHash!.cached, true);
    assert.is(byHash!.signer, keys.accounts[1]!.address);
  } finally {
    await v.close();
  }
});

test('transfer buffers come back from the worker and carry later batches of other sizes correctly', async () => {
  const v = await SignatureVerifier.start(CHAIN_ID, { threads: 1 });
  const spare = (): ArrayBuffer[] => (v as unknown as { spare: ArrayBuffer[] }).spare;
  try {
    const sender = keys.accounts[0]!;
    const txs = Array.from({ length: 6 }, (_, nonce) => transfer(sender, { nonce }));
    const forged = { ...transfer(sender, { nonce: 6 }), value: 999n };
    const [first] = await v.verifyMany(txs.slice(0, 1));
    assert.is(first!.signer, sender.address);
    assert.is(spare().length, 1, 'the worker handed its buffer back');
    // Sent again, this buffer detaches (length 0): what comes back each time is a buffer of its size.
    const size = spare()[0]!.byteLength;
    // Longer and shorter batches than the last, in the same buffer: stale bytes past a batch's end are never read.
    for (const batch of [[...txs.slice(1, 5), forged], txs.slice(5, 6), [forged]]) {
      const out = await v.verifyMany(batch);
      assert.equal(
        out.map((r) => [r.hash, r.signer]),
        batch.map((tx) => [toHex(sha3(encodeTx(tx))), tx === forged ? null : sender.address]),
      );
      assert.is(spare().length, 1);
      assert.is(spare()[0]!.byteLength, size, 'one buffer serves every batch');
    }
  } finally {
    await v.close();
  }
});

test.run();
