/**
 * TxPool as a pure data structure: queued/ready, same-nonce replacement, capacity eviction,
 * build order, stale drops, pending nonces and counts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StandardTx } from '../../../../src/core/types/transaction.js';
import { DEFAULT_POOL_OPTIONS, PoolError, type PoolEntry, TxPool } from '../../../../src/node/execution/txpool/pool.js';
import { expectError } from '../../../helpers/assert.js';

const A = '0x' + 'aa'.repeat(20);
const B = '0x' + 'bb'.repeat(20);
const C = '0x' + 'cc'.repeat(20);
const D = '0x' + 'dd'.repeat(20);

let counter = 0;
/** A pool input; the pool never looks inside `tx`. */
function entry(sender: string, nonce: number, gasPrice: bigint | number, gasLimit: bigint | number = 21_000n, tag = ''): Omit<PoolEntry, 'seq'> {
  return {
    tx: {} as StandardTx,
    envelope: new Uint8Array(0),
    hash: `0x${sender.slice(2, 6)}-${nonce}-${gasPrice}-${tag}-${counter++}`,
    sender,
    nonce: BigInt(nonce),
    gasPrice: BigInt(gasPrice),
    gasLimit: BigInt(gasLimit),
    size: 5000,
    receivedAt: 0,
  };
}

const zero = () => 0n;
const label = (es: PoolEntry[]) => es.map((e) => `${e.sender.slice(2, 3)}${e.nonce}`);

/** `n` distinct sender addresses 0x…01, 0x…02, …. */
function senderAddresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => '0x' + (i + 1).toString(16).padStart(40, '0'));
}

/** A deterministic pseudo-random sequence (xorshift32), so a failing case can be replayed. */
function rng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

/** Reference pending nonce: walk the sender's pooled nonces from the account nonce. */
function brutePending(p: TxPool, sender: string, accountNonce: bigint): bigint {
  const nonces = new Set(p.entries().filter((e) => e.sender === sender).map((e) => e.nonce));
  let n = accountNonce;
  while (nonces.has(n)) n++;
  return n;
}

/** Reference pending/queued counts from a walk over every sender. */
function bruteCounts(p: TxPool, nonceOf: (s: string) => bigint): { pending: number; queued: number } {
  let pending = 0;
  for (const s of new Set(p.entries().map((e) => e.sender))) pending += Number(brutePending(p, s, nonceOf(s)) - nonceOf(s));
  return { pending, queued: p.size - pending };
}

/** Reference eviction victim: the cheapest of every sender's highest-nonce entry, the newest on ties (the former linear scan). */
function bruteVictim(p: TxPool): PoolEntry | undefined {
  const tails = new Map<string, PoolEntry>();
  for (const e of p.entries()) {
    const t = tails.get(e.sender);
    if (!t || e.nonce > t.nonce) tails.set(e.sender, e);
  }
  let victim: PoolEntry | undefined;
  for (const t of tails.values()) if (!victim || t.gasPrice < victim.gasPrice || (t.gasPrice === victim.gasPrice && t.seq > victim.seq)) victim = t;
  return victim;
}

/** Reference build order (spec) by linear scans: each sender from its account nonce, richest head first, submission order on ties. */
function bruteBuild(p: TxPool, nonceOf: (s: string) => bigint, maxGas: bigint): PoolEntry[] {
  const bySender = new Map<string, Map<bigint, PoolEntry>>();
  for (const e of p.entries()) {
    if (!bySender.has(e.sender)) bySender.set(e.sender, new Map());
    bySender.get(e.sender)!.set(e.nonce, e);
  }
  const heads: PoolEntry[] = [];
  for (const [s, q] of bySender) if (q.has(nonceOf(s))) heads.push(q.get(nonceOf(s))!);
  const out: PoolEntry[] = [];
  let gas = 0n;
  while (heads.length > 0) {
    let best = 0;
    for (let i = 1; i < heads.length; i++) {
      const a = heads[i]!;
      const b = heads[best]!;
      if (a.gasPrice > b.gasPrice || (a.gasPrice === b.gasPrice && a.seq < b.seq)) best = i;
    }
    const [e] = heads.splice(best, 1);
    if (gas + e!.gasLimit > maxGas) continue;
    gas += e!.gasLimit;
    out.push(e!);
    if (maxGas - gas < 21_000n) break;
    const next = bySender.get(e!.sender)!.get(e!.nonce + 1n);
    if (next) heads.push(next);
  }
  return out;
}

const pool = suite('txpool');

pool('defaults: capacity 50,000, a 10% replacement bump, geth queue bounds (64 per account, 1024 in all)', () => {
  assert.equal(DEFAULT_POOL_OPTIONS, { capacity: 50_000, replaceBumpPercent: 10n, accountQueue: 64, globalQueue: 1024 });
});

pool('a future nonce is queued, and becomes ready when its predecessor arrives', () => {
  const p = new TxPool();
  const n1 = p.add(entry(A, 1, 10)).entry;
  assert.is(p.status(n1, 0n), 'queued');
  assert.is(p.pendingNonce(A, 0n), 0n);
  assert.equal(p.counts(zero), { pending: 0, queued: 1 });
  assert.equal(p.buildOrder(zero, 30_000_000n), [], 'the builder does not include a queued transaction');

  const n0 = p.add(entry(A, 0, 10)).entry;
  assert.is(p.status(n0, 0n), 'ready');
  assert.is(p.status(n1, 0n), 'ready');
  assert.is(p.pendingNonce(A, 0n), 2n);
  assert.equal(p.counts(zero), { pending: 2, queued: 0 });
  assert.equal(label(p.buildOrder(zero, 30_000_000n)), ['a0', 'a1']);
});

pool('status follows the account nonce: an entry at the account nonce is ready', () => {
  const p = new TxPool();
  const e5 = p.add(entry(A, 5, 10)).entry;
  assert.is(p.status(e5, 0n), 'queued');
  assert.is(p.status(e5, 5n), 'ready');
  assert.equal(label(p.buildOrder(() => 5n, 30_000_000n)), ['a5']);
});

pool('same nonce: below +10% is REPLACEMENT_UNDERPRICED and the pool is unchanged; exactly +10% replaces', () => {
  const p = new TxPool();
  const old = p.add(entry(A, 0, 1000)).entry;
  expectError(() => p.add(entry(A, 0, 1099)), PoolError, {
    code: 'REPLACEMENT_UNDERPRICED',
    message: 'replacement transaction underpriced: needs a gas price of at least 1100 wei (+10%)',
    status: 409,
  });
  expectError(() => p.add(entry(A, 0, 1000)), PoolError, { code: 'REPLACEMENT_UNDERPRICED' });
  assert.is(p.size, 1);
  assert.is(p.atNonce(A, 0n), old);

  const next = entry(A, 0, 1100);
  const r = p.add(next);
  assert.is(r.replaced, old);
  assert.equal(r.evicted, []);
  assert.is(p.size, 1);
  assert.not.ok(p.has(old.hash), 'the replaced entry is gone');
  assert.is(p.atNonce(A, 0n)?.hash, next.hash);
});

pool('replacement bump rounds up: 1001 wei needs 1102', () => {
  const p = new TxPool();
  p.add(entry(A, 0, 1001));
  expectError(() => p.add(entry(A, 0, 1101)), PoolError, {
    code: 'REPLACEMENT_UNDERPRICED',
    message: 'replacement transaction underpriced: needs a gas price of at least 1102 wei (+10%)',
  });
  assert.is(p.add(entry(A, 0, 1102)).entry.gasPrice, 1102n);
});

pool('replacement at 1 gwei needs 1.1 gwei; a replacement keeps the pool size at capacity', () => {
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 1 });
  p.add(entry(A, 0, 1_000_000_000n));
  expectError(() => p.add(entry(A, 0, 1_099_999_999n)), PoolError, {
    message: 'replacement transaction underpriced: needs a gas price of at least 1100000000 wei (+10%)',
  });
  const r = p.add(entry(A, 0, 1_100_000_000n));
  assert.ok(r.replaced);
  assert.equal(r.evicted, [], 'a replacement at capacity evicts nothing');
  assert.is(p.size, 1);
});

pool('the same hash twice is ALREADY_KNOWN', () => {
  const p = new TxPool();
  const e = entry(A, 0, 10);
  p.add(e);
  expectError(() => p.add(e), PoolError, { code: 'ALREADY_KNOWN', message: 'already known', status: 409 });
  assert.is(p.size, 1);
});

pool('at capacity the cheapest tail is evicted (a tail, not a cheaper middle entry)', () => {
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 3 });
  p.add(entry(A, 0, 5));
  const b0 = p.add(entry(B, 0, 2)).entry; // cheapest overall, but not a tail
  const b1 = p.add(entry(B, 1, 3)).entry; // B's tail
  const c0 = entry(C, 0, 4);
  const r = p.add(c0);
  assert.equal(r.evicted.map((e) => e.hash), [b1.hash]);
  assert.is(p.size, 3);
  assert.ok(p.has(b0.hash));
  assert.not.ok(p.has(b1.hash));
  assert.ok(p.has(c0.hash));
});

pool('at capacity a newcomer that is not pricier than the cheapest tail is refused with POOL_FULL', () => {
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 2 });
  const a0 = p.add(entry(A, 0, 7)).entry;
  const b0 = p.add(entry(B, 0, 3)).entry;
  for (const price of [3, 1]) {
    expectError(() => p.add(entry(C, 0, price)), PoolError, {
      code: 'POOL_FULL',
      message: 'transaction pool is full (2): gas price must exceed 3 wei',
      status: 409,
    });
  }
  assert.equal(p.entries().map((e) => e.hash), [a0.hash, b0.hash], 'nothing was evicted');
  const r = p.add(entry(C, 0, 4));
  assert.equal(r.evicted.map((e) => e.hash), [b0.hash]);
});

pool('eviction tie on price: the newest tail goes', () => {
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 2 });
  const a0 = p.add(entry(A, 0, 3)).entry;
  const b0 = p.add(entry(B, 0, 3)).entry;
  const r = p.add(entry(C, 0, 9));
  assert.equal(r.evicted.map((e) => e.hash), [b0.hash]);
  assert.ok(p.has(a0.hash));
});

pool('build order: gas price descending across senders, submission order on ties, nonce ascending per sender', () => {
  const p = new TxPool();
  p.add(entry(A, 0, 10)); // seq 0
  p.add(entry(C, 0, 10)); // seq 1
  p.add(entry(B, 0, 20)); // seq 2
  p.add(entry(A, 1, 10)); // seq 3
  p.add(entry(D, 1, 1000)); // pricier, but D's nonce 1 waits for nonce 0
  p.add(entry(D, 0, 1)); // seq 5: cheapest head, then its pricey successor
  assert.equal(label(p.buildOrder(zero, 30_000_000n)), ['b0', 'a0', 'c0', 'a1', 'd0', 'd1']);
});

pool('build order starts at each sender account nonce and leaves out queued gaps', () => {
  const p = new TxPool();
  p.add(entry(A, 3, 10)); // below A's account nonce 4: never built
  p.add(entry(A, 4, 10));
  p.add(entry(A, 6, 50)); // gap at 5
  p.add(entry(B, 0, 5));
  const nonceOf = (s: string) => (s === A ? 4n : 0n);
  assert.equal(label(p.buildOrder(nonceOf, 30_000_000n)), ['a4', 'b0']);
});

pool('packing under maxGas: a sender whose next transaction does not fit is skipped from then on', () => {
  const p = new TxPool();
  p.add(entry(A, 0, 30, 21_000));
  p.add(entry(A, 1, 25, 21_000));
  p.add(entry(B, 0, 20, 50_000)); // does not fit after A0 + A1
  p.add(entry(B, 1, 19, 1)); // would fit, but B0 is missing from the block
  p.add(entry(C, 0, 10, 21_000)); // fits
  const maxGas = 21_000n * 3n + 10_000n;
  const out = p.buildOrder(zero, maxGas);
  assert.equal(label(out), ['a0', 'a1', 'c0']);
  assert.ok(out.reduce((g, e) => g + e.gasLimit, 0n) <= maxGas);
  assert.equal(label(p.buildOrder(zero, 21_000n)), ['a0']);
  assert.equal(label(p.buildOrder(zero, 20_999n)), []);
});

pool('packing with a take callback: a refused entry uses no gas and skips its sender from then on', () => {
  const p = new TxPool();
  p.add(entry(A, 0, 30, 21_000));
  p.add(entry(A, 1, 29, 21_000)); // refused
  p.add(entry(A, 2, 28, 21_000)); // never asked: its predecessor is missing
  p.add(entry(B, 0, 20, 21_000));
  p.add(entry(C, 0, 10, 21_000));
  const asked: string[] = [];
  const out = p.buildOrder(zero, 63_000n, (e) => {
    asked.push(`${e.sender.slice(2, 3)}${e.nonce}`);
    return !(e.sender === A && e.nonce === 1n);
  });
  assert.equal(label(out), ['a0', 'b0', 'c0'], 'the refused entry left room for C');
  assert.equal(asked, ['a0', 'a1', 'b0', 'c0']);
  // Entries that do not fit are not offered to take.
  const offered: string[] = [];
  p.buildOrder(zero, 21_000n, (e) => (offered.push(e.hash), true));
  assert.is(offered.length, 1);
});

pool('dropStale removes only the sender entries below the account nonce and returns them', () => {
  const p = new TxPool();
  for (let n = 0; n < 4; n++) p.add(entry(A, n, 10));
  const b0 = p.add(entry(B, 0, 10)).entry;
  const dropped = p.dropStale(A, 2n);
  assert.equal(dropped.map((e) => Number(e.nonce)).sort(), [0, 1]);
  assert.is(p.size, 3);
  assert.is(p.atNonce(A, 0n), undefined);
  assert.ok(p.atNonce(A, 2n));
  assert.ok(p.has(b0.hash));
  assert.equal(p.dropStale(C, 10n), [], 'unknown sender');
  assert.equal(p.dropStale(A, 2n), [], 'nothing more to drop');
  assert.equal(p.dropStale(B, 5n).map((e) => e.hash), [b0.hash]);
  assert.equal(p.senders(), [A], 'a sender with no entries is forgotten');
});

pool('pendingNonce: highest contiguous nonce + 1 from the account nonce', () => {
  const p = new TxPool();
  for (const n of [0, 1, 3]) p.add(entry(A, n, 10));
  assert.is(p.pendingNonce(A, 0n), 2n);
  assert.is(p.pendingNonce(A, 2n), 2n);
  assert.is(p.pendingNonce(A, 3n), 4n);
  assert.is(p.pendingNonce(B, 7n), 7n, 'no entries: the account nonce');
});

pool('counts: pending = contiguous from each account nonce, queued = the rest', () => {
  const p = new TxPool();
  for (const n of [0, 1, 3]) p.add(entry(A, n, 10)); // 2 pending, 1 queued
  for (const n of [5, 6]) p.add(entry(B, n, 10)); // account nonce 5: 2 pending
  p.add(entry(C, 2, 10)); // account nonce 0: queued
  const nonceOf = (s: string) => (s === B ? 5n : 0n);
  assert.equal(p.counts(nonceOf), { pending: 4, queued: 2 });
  assert.equal(new TxPool().counts(zero), { pending: 0, queued: 0 });
});

pool('remove, get, has and entries in submission order', () => {
  const p = new TxPool();
  const b = p.add(entry(B, 0, 1)).entry;
  const a = p.add(entry(A, 0, 99)).entry;
  assert.equal(p.entries().map((e) => e.hash), [b.hash, a.hash]);
  assert.is(p.get(a.hash), a);
  assert.is(p.remove(a.hash), a);
  assert.is(p.remove(a.hash), undefined);
  assert.not.ok(p.has(a.hash));
  assert.is(p.size, 1);
});

pool('queue bounds: at most accountQueue past the pending nonce, at most globalQueue queued; ready runs and replacements are not bounded', () => {
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, accountQueue: 3, globalQueue: 4 });
  // A ready run longer than accountQueue.
  for (let n = 0; n < 10; n++) p.add(entry(A, n, 10), zero);
  p.add(entry(A, 13, 10), zero); // pending nonce 10: 11..13 may queue
  expectError(() => p.add(entry(A, 14, 10), zero), PoolError, { code: 'NONCE_TOO_HIGH', status: 400 });
  expectError(() => p.add(entry(B, 1_000_000, 10), zero), PoolError, { code: 'NONCE_TOO_HIGH', status: 400 });
  // Without account nonces (the bench's synthetic pools) the bounds do not apply.
  assert.ok(p.add(entry(D, 1_000_000, 10)).entry);
  assert.is(p.queuedCount(zero), 2);
  p.add(entry(B, 2, 10), zero);
  p.add(entry(C, 1, 10), zero);
  assert.is(p.queuedCount(zero), 4);
  expectError(() => p.add(entry(C, 2, 10), zero), PoolError, { code: 'QUEUE_FULL', status: 409 });
  p.add(entry(C, 1, 20), zero); // replacement of a queued entry
  p.add(entry(C, 0, 10), zero); // fills C's gap: C1 is ready now
  assert.is(p.queuedCount(zero), 3);
  p.add(entry(C, 3, 10), zero);
  assert.is(p.queuedCount(zero), 4);
  assert.equal(p.counts(zero), bruteCounts(p, zero), 'the incremental count equals a full recount');
});

pool('the queued count follows account nonces: senders are recounted when touched or dropStale runs', () => {
  const p = new TxPool();
  let nonceA = 0n;
  const nonceOf = (s: string) => (s === A ? nonceA : 0n);
  for (const n of [2, 3]) p.add(entry(A, n, 10), nonceOf);
  assert.is(p.queuedCount(nonceOf), 2);
  nonceA = 2n; // a block applied A's nonces 0 and 1 (not from this pool)
  p.dropStale(A, nonceA);
  assert.is(p.queuedCount(nonceOf), 0);
  nonceA = 1n; // reorganised back: A2 and A3 wait for nonce 1 again
  p.touch(A);
  assert.is(p.queuedCount(nonceOf), 2);
  for (const e of p.entries()) p.remove(e.hash);
  assert.is(p.queuedCount(nonceOf), 0);
});

pool('random pools: eviction at capacity picks the same victim as a scan of every sender tail', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed);
    const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 40 });
    const senders = senderAddresses(12);
    for (let step = 0; step < 600; step++) {
      const sender = senders[r(senders.length)]!;
      const op = r(10);
      if (op === 0 && p.size > 0) {
        const all = p.entries();
        p.remove(all[r(all.length)]!.hash);
        continue;
      }
      const expected = p.size >= p.options.capacity ? bruteVictim(p) : undefined;
      const input = entry(sender, r(30), 1 + r(8));
      try {
        const { evicted, replaced } = p.add(input);
        if (!replaced && expected) assert.equal(evicted.map((e) => e.hash), [expected.hash], `seed ${seed} step ${step}: victim`);
        if (replaced || !expected) assert.is(evicted.length, 0);
      } catch (err) {
        if (!(err instanceof PoolError)) throw err;
        if (err.code === 'POOL_FULL') assert.ok(expected && expected.gasPrice >= input.gasPrice, `seed ${seed} step ${step}: refused while a cheaper tail existed`);
      }
      assert.ok(p.size <= p.options.capacity);
    }
  }
});

pool('random adds, removals, replacements and nonce moves: status, pending nonces, counts and build order match a recomputation', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed * 7919);
    const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 60, accountQueue: 8, globalQueue: 25 });
    const senders = senderAddresses(6);
    const accountNonce = new Map<string, bigint>(senders.map((s) => [s, 0n]));
    const nonceOf = (s: string): bigint => accountNonce.get(s) ?? 0n;
    for (let step = 0; step < 500; step++) {
      const sender = senders[r(senders.length)]!;
      const op = r(12);
      if (op === 0 && p.size > 0) {
        const all = p.entries();
        p.remove(all[r(all.length)]!.hash);
      } else if (op === 1) {
        // A block moved the nonce forward (some of it maybe from elsewhere); stale entries go.
        accountNonce.set(sender, nonceOf(sender) + BigInt(r(4)));
        p.dropStale(sender, nonceOf(sender));
      } else if (op === 2) {
        // A reorganisation moved it back.
        accountNonce.set(sender, nonceOf(sender) - BigInt(Math.min(Number(nonceOf(sender)), r(3))));
        p.touch(sender);
      } else {
        try {
          p.add(entry(sender, Number(nonceOf(sender)) + r(12), 1 + r(6), [21_000n, 21_000n, 5_000_000n, 12_000_000n][r(4)]), r(2) === 0 ? nonceOf : undefined);
        } catch (err) {
          if (!(err instanceof PoolError)) throw err;
        }
      }
      for (const e of p.entries()) assert.is(p.status(e, nonceOf(e.sender)), brutePending(p, e.sender, nonceOf(e.sender)) > e.nonce ? 'ready' : 'queued', `seed ${seed} step ${step}: status of ${e.sender} ${e.nonce}`);
      for (const s of senders) assert.is(p.pendingNonce(s, nonceOf(s)), brutePending(p, s, nonceOf(s)), `seed ${seed} step ${step}: pending nonce`);
      assert.equal(p.counts(nonceOf), bruteCounts(p, nonceOf), `seed ${seed} step ${step}: counts`);
      const maxGas = [30_000_000n, 17_000_000n, 63_000n][r(3)]!;
      assert.equal(p.buildOrder(nonceOf, maxGas).map((e) => e.hash), bruteBuild(p, nonceOf, maxGas).map((e) => e.hash), `seed ${seed} step ${step}: build order`);
      const seqs = p.entries().map((e) => e.seq);
      assert.equal(seqs, [...seqs].sort((a, b) => a - b), 'entries come in submission order');
    }
  }
});

pool('removeMany (a block\'s included transactions) leaves the pool as removing each in turn does', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed * 104_729);
    const opts = { ...DEFAULT_POOL_OPTIONS, capacity: 80, accountQueue: 40, globalQueue: 80 };
    const batch = new TxPool(opts);
    const single = new TxPool(opts);
    const senders = senderAddresses(5);
    const accountNonce = new Map<string, bigint>(senders.map((s) => [s, 0n]));
    const nonceOf = (s: string): bigint => accountNonce.get(s) ?? 0n;
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 12; i++) {
        const sender = senders[r(senders.length)]!;
        const input = entry(sender, Number(nonceOf(sender)) + r(16), 1 + r(6));
        let refused = false;
        try {
          batch.add(input, nonceOf);
        } catch (err) {
          if (!(err instanceof PoolError)) throw err;
          refused = true;
        }
        // The same input is refused by both or by neither, so the two pools hold the same entries.
        if (refused) assert.throws(() => single.add(input, nonceOf), (err: unknown) => err instanceof PoolError);
        else single.add(input, nonceOf);
      }
      // A block: runs of some senders' lowest nonces, plus random entries, an unknown hash and a repeat.
      const included: string[] = [];
      for (const s of senders) {
        if (r(2) === 0) continue;
        const own = batch.entries().filter((e) => e.sender === s).sort((a, b) => Number(a.nonce - b.nonce));
        for (const e of own.slice(0, r(own.length + 1))) included.push(e.hash);
      }
      const all = batch.entries();
      for (let i = r(4); i > 0 && all.length > 0; i--) included.push(all[r(all.length)]!.hash);
      included.push('0xnot-pooled');
      if (included.length > 1) included.push(included[0]!);
      const expected = included.flatMap((h) => single.remove(h) ?? []);
      assert.equal(batch.removeMany(included).map((e) => e.hash), expected.map((e) => e.hash), `seed ${seed} round ${round}: removed`);
      // The block moved account nonces (maybe past entries from elsewhere): as the node does after an import.
      for (const s of senders) {
        if (r(3) === 0) accountNonce.set(s, nonceOf(s) + BigInt(r(3)));
        assert.equal(batch.dropStale(s, nonceOf(s)).map((e) => e.hash), single.dropStale(s, nonceOf(s)).map((e) => e.hash));
      }
      const at = `seed ${seed} round ${round}`;
      assert.equal(batch.entries().map((e) => e.hash), single.entries().map((e) => e.hash), `${at}: entries`);
      assert.equal(batch.counts(nonceOf), bruteCounts(batch, nonceOf), `${at}: counts`);
      assert.equal(batch.counts(nonceOf), single.counts(nonceOf), `${at}: counts of both`);
      for (const s of senders) assert.is(batch.pendingNonce(s, nonceOf(s)), brutePending(batch, s, nonceOf(s)), `${at}: pending nonce`);
      for (const e of batch.entries()) assert.is(batch.status(e, nonceOf(e.sender)), single.status(e, nonceOf(e.sender)), `${at}: status`);
      assert.equal(batch.buildOrder(nonceOf, 30_000_000n).map((e) => e.hash), bruteBuild(batch, nonceOf, 30_000_000n).map((e) => e.hash), `${at}: build order`);
      // The tails heap: at capacity both evict the entry a scan of the tails picks.
      if (batch.size >= opts.capacity) {
        const victim = bruteVictim(batch)!;
        // A sender of its own, a new nonce each round: an addition, never a replacement.
        const rich = entry(A, round, 1_000);
        assert.equal(batch.add(rich).evicted.map((e) => e.hash), [victim.hash], `${at}: victim`);
        assert.equal(single.add(rich).evicted.map((e) => e.hash), [victim.hash], `${at}: victim of both`);
      }
    }
  }
});

pool('page: a window of the entries in submission order', () => {
  const p = new TxPool();
  for (let n = 0; n < 5; n++) p.add(entry(A, n, 10));
  p.add(entry(A, 1, 20, 21_000, 'bump')); // a replacement is the newest submission
  const all = p.entries();
  assert.equal(p.page(0, 100), all);
  assert.equal(p.page(1, 2), all.slice(1, 3));
  assert.equal(p.page(4, 10), all.slice(4));
  assert.equal(p.page(5, 10), []);
  assert.is(all[all.length - 1]!.gasPrice, 20n);
});

pool('the sliced build gives the same order as the synchronous one and lets the event loop run between slices', async () => {
  const r = rng(4242);
  const p = new TxPool({ ...DEFAULT_POOL_OPTIONS, capacity: 5_000 });
  const senders = senderAddresses(400);
  for (let i = 0; i < 4_000; i++) p.add(entry(senders[i % senders.length]!, Math.floor(i / senders.length), 1 + r(20)));
  const nonceOf = (s: string): bigint => (s === senders[7] ? 1n : 0n); // sender 7's nonce 0 is stale...
  p.dropStale(senders[7]!, 1n); // ...and dropped, as a canonical change does
  const expected = p.buildOrder(nonceOf, 30_000_000n).map((e) => e.hash);
  assert.equal(expected, bruteBuild(p, nonceOf, 30_000_000n).map((e) => e.hash));
  let turns = 0;
  const tick = (): void => {
    turns++;
    if (turns < 1000) setImmediate(tick);
  };
  setImmediate(tick);
  const stats = { slices: 0, longestMs: 0 };
  const sliced = await p.buildOrderSliced(nonceOf, 30_000_000n, undefined, 0, stats);
  assert.equal(sliced.map((e) => e.hash), expected);
  assert.ok(turns >= 2, `the event loop ran ${turns} times during the build`);
  assert.ok(stats.slices >= 2 && stats.slices <= turns + 1, `${stats.slices} slices reported for ${turns} loop turns`);
  assert.ok(stats.longestMs > 0);
});

pool('an entry that leaves the pool during a sliced build is left out with the rest of its sender run', async () => {
  const p = new TxPool();
  const senders = senderAddresses(200);
  // Sender 199 pays the least, so its run comes last, well after the first slice.
  senders.forEach((s, i) => [0, 1].forEach((n) => p.add(entry(s, n, 1_000 - i))));
  const last = senders[199]!;
  const building = p.buildOrderSliced(zero, 30_000_000n, undefined, 0);
  p.remove(p.atNonce(last, 0n)!.hash); // included elsewhere meanwhile
  const out = await building;
  assert.is(out.length, 398);
  assert.not.ok(out.some((e) => e.sender === last));
});

pool('since: a cursor over admissions in order; a replacement comes after, removals leave no gap in the walk', () => {
  const p = new TxPool();
  const a0 = p.add(entry(A, 0, 10)).entry;
  const b0 = p.add(entry(B, 0, 10)).entry;
  const c0 = p.add(entry(C, 0, 10)).entry;
  const first = p.since(0, 2);
  assert.equal(label(first.entries), ['a0', 'b0']);
  assert.ok(first.more);
  assert.is(first.next, b0.seq + 1);
  const replaced = p.add(entry(A, 0, 20, 21_000n, 'r')).entry;
  p.remove(c0.hash);
  const rest = p.since(first.next, 10);
  assert.equal(rest.entries.map((e) => e.hash), [replaced.hash], 'c0 is gone; the replacement of a0 is new');
  assert.not.ok(rest.more);
  assert.equal(p.since(rest.next, 10), { entries: [], next: rest.next, more: false }, 'nothing new since');
  assert.ok(a0.seq < rest.next);
});

pool.run();
