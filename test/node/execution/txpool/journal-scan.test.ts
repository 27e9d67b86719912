/**
 * Property test of the pool journal's read path: random journals (adds of random sizes up to a
 * maximal envelope, removals, re-adds) of random lengths that cross the scan's 1 MiB read buffer
 * many times, one of them over 20 MB, each cut at a random point, read back exactly as a model
 * of the records before the cut says: same transactions, order, arrival times and envelope
 * bytes. The opener cuts the torn tail where the last whole record ends, and appending resumes
 * there. A failing run is replayed with SVC_TEST_SEED.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryLevel } from 'memory-level';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { MAX_TX_BYTES } from '../../../../src/core/constants.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { type JournalEntry, PoolJournal, readJournalFile } from '../../../../src/node/execution/txpool/journal.js';
import { encodeAdd, encodeRemove, JOURNAL_MAGIC } from '../../../../src/node/execution/txpool/journal-file.js';
import { ChainStore, type Db } from '../../../../src/node/shared/store.js';
import { silentLogger } from '../../../../src/util/log.js';
import { Rng } from '../../../helpers/fuzz.js';
import { withTempDir } from '../fixture.js';

const MIB = 1 << 20;
/** Journal lengths of the rounds: one past 20 MB, the others random. */
const ROUNDS = [21 * MIB, 0, 0, 0, 0, 0];
const SEED = Number(process.env.SVC_TEST_SEED ?? Date.now() % 2 ** 31);

/** A random journal: its records' bytes, and the live set after each record (as the opener replays them). */
function randomJournal(rng: Rng, targetBytes: number): { records: Uint8Array[]; ends: number[]; liveAfter: (n: number) => JournalEntry[] } {
  const records: Uint8Array[] = [];
  const ends: number[] = [];
  const ops: Array<{ add: JournalEntry } | { remove: string[] }> = [];
  const known: JournalEntry[] = [];
  let size = JOURNAL_MAGIC.length;
  const push = (parts: Uint8Array[], op: (typeof ops)[number]): void => {
    for (const p of parts) {
      records.push(p);
      size += p.length;
    }
    ends.push(size);
    ops.push(op);
  };
  while (size < targetBytes) {
    const roll = rng.next();
    if (roll < 0.12 && known.length > 0) {
      // Removals: live and already-removed hashes and some never journaled, now and then past one record's bound.
      const n = rng.next() < 0.02 ? rng.int(4000, 5000) : rng.int(1, 40);
      const hashes = Array.from({ length: n }, () => (rng.next() < 0.8 ? rng.pick(known).hash : toHex(rng.bytes(32))));
      const parts = encodeRemove(hashes);
      // A removal past one record's bound is several records: the model sees each on its own.
      let at = 0;
      for (const part of parts) {
        const count = (part.length - 9) / 32;
        push([part], { remove: hashes.slice(at, at + count) });
        at += count;
      }
    } else if (roll < 0.17 && known.length > 0) {
      // A re-add (a replay of a removed or live one): it moves to the end.
      const e = { ...rng.pick(known), receivedAt: rng.int(0, 2 ** 50) };
      push(encodeAdd(e.hash, e.receivedAt, e.envelope), { add: e });
    } else {
      const r = rng.next();
      const bytes = r < 0.005 ? rng.int(MAX_TX_BYTES - 4096, MAX_TX_BYTES) : r < 0.025 ? rng.int(20_000, 100_000) : r < 0.2 ? rng.int(1, 400) : rng.int(5000, 5600);
      const envelope = rng.bytes(bytes);
      const e: JournalEntry = { hash: toHex(sha3(envelope)), envelope, receivedAt: rng.int(0, 2 ** 50) };
      known.push(e);
      push(encodeAdd(e.hash, e.receivedAt, e.envelope), { add: e });
    }
  }
  const liveAfter = (n: number): JournalEntry[] => {
    const live = new Map<string, JournalEntry>();
    for (const op of ops.slice(0, n)) {
      if ('add' in op) {
        live.delete(op.add.hash);
        live.set(op.add.hash, op.add);
      } else for (const h of op.remove) live.delete(h);
    }
    return [...live.values()];
  };
  return { records, ends, liveAfter };
}

function same(actual: JournalEntry[], expected: JournalEntry[], what: string): void {
  assert.is(actual.length, expected.length, `${what}: entries`);
  assert.equal(actual.map((e) => e.hash), expected.map((e) => e.hash), `${what}: order`);
  assert.equal(actual.map((e) => e.receivedAt), expected.map((e) => e.receivedAt), `${what}: arrival times`);
  const bad = actual.filter((e, i) => !Buffer.from(e.envelope).equals(expected[i]!.envelope)).length;
  assert.is(bad, 0, `${what}: ${bad} of ${actual.length} envelopes differ from what was written`);
}

const scan = suite('pool journal read path (property)');

scan(`random journals up to 21 MiB, cut at random points, read back as written (seed ${SEED})`, async () => {
  const rng = new Rng(SEED);
  await withTempDir(async (dir) => {
    for (const [round, fixed] of ROUNDS.entries()) {
      const target = fixed > 0 ? fixed : rng.int(MIB / 2, 8 * MIB);
      const { records, ends, liveAfter } = randomJournal(rng, target);
      const whole = Buffer.concat([JOURNAL_MAGIC, ...records]);
      // Sometimes whole, sometimes cut at a record's end, mostly inside one (a torn tail); the
      // long round's cut is in its last maximal envelope's length, so over 20 MB are read.
      const r = rng.next();
      const from = fixed > 0 ? whole.length - MAX_TX_BYTES : JOURNAL_MAGIC.length;
      const cut = r < 0.15 ? whole.length : r < 0.3 ? rng.pick(ends.filter((e) => e >= from)) : rng.int(from, whole.length);
      const kept = ends.filter((e) => e <= cut).length;
      const end = kept === 0 ? JOURNAL_MAGIC.length : ends[kept - 1]!;
      const what = `seed ${SEED} round ${round}: ${ends.length} records (${kept} before the cut), ${whole.length} bytes cut at ${cut}`;
      const path = join(dir, `pool-${round}.journal`);
      await writeFile(path, whole.subarray(0, cut));
      const expected = liveAfter(kept);
      same(await readJournalFile(path), expected, `${what}, read-only`);

      const store = new ChainStore(new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db);
      const journal = await PoolJournal.open({ path, store, log: silentLogger });
      same(journal.entries(), expected, `${what}, opened`);
      assert.is((await stat(path)).size, end, `${what}: the torn tail is cut where the last whole record ends`);
      const extra = rng.bytes(5300);
      const added: JournalEntry = { hash: toHex(sha3(extra)), envelope: extra, receivedAt: 1 };
      await journal.add(added);
      await journal.close();
      same(await readJournalFile(path), [...expected.filter((e) => e.hash !== added.hash), added], `${what}, appended after the cut`);
    }
  });
});

scan.run();
