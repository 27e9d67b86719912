/**
 * The pool journal file on its own (a real file in a temp directory, a real chain store):
 * records round-trip in order; a torn tail (cut mid-record, garbage appended, a flipped byte)
 * is cut on open with the records before it kept, and appending resumes after them; concurrent
 * adds share a sync; compaction keeps exactly the live set, including what is added and removed
 * while it runs; legacy `p:` keys move into the file once; the faucet's extra writes are in the
 * store once the add is durable; a file that is not a journal refuses to open.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryLevel } from 'memory-level';
import { appendFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { SvcError } from '../../../../src/core/errors.js';
import { type JournalEntry, PoolJournal, readJournalFile } from '../../../../src/node/execution/txpool/journal.js';
import { encodeJournalValue } from '../../../../src/node/execution/txpool/journal-legacy.js';
import { addRecordBytes, encodeAdd, encodeAddInto, encodeRemove, isRecordableHash, JOURNAL_MAGIC, MAX_REMOVALS_PER_RECORD } from '../../../../src/node/execution/txpool/journal-file.js';
import { Keys } from '../../../../src/node/execution/store.js';
import { ChainStore, type Db, WriteBatch } from '../../../../src/node/shared/store.js';
import { createLogger } from '../../../../src/util/log.js';
import { withTempDir } from '../fixture.js';

/** A journal entry with `size` bytes of envelope derived from `i` (its hash is the envelope's SHA3, as admission's is). */
function entry(i: number, size = 5300): JournalEntry {
  const envelope = new Uint8Array(size);
  for (let j = 0; j < size; j++) envelope[j] = (i * 31 + j * 7) & 0xff;
  envelope[0] = i & 0xff;
  envelope[1] = (i >> 8) & 0xff;
  return { hash: toHex(sha3(envelope)), envelope, receivedAt: 1_700_000_000_000 + i };
}

/** The bytes of `e`'s add record. */
function record(e: JournalEntry): Buffer {
  return Buffer.concat(encodeAdd(e.hash, e.receivedAt, e.envelope));
}

function memoryStore(): ChainStore {
  return new ChainStore(new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db);
}

/** A logger keeping its JSON lines. */
function capture(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { log: createLogger('execution', 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)), lines };
}

async function openJournal(path: string, store = memoryStore(), extra: { compactMinBytes?: number; synced?: (writes: number) => void } = {}) {
  const { log, lines } = capture();
  const journal = await PoolJournal.open({ path, store, log, ...extra });
  return { journal, lines, store };
}

function same(actual: JournalEntry[], expected: JournalEntry[]): void {
  assert.equal(actual.map((e) => e.hash), expected.map((e) => e.hash));
  assert.equal(actual.map((e) => e.receivedAt), expected.map((e) => e.receivedAt));
  actual.forEach((e, i) => assert.ok(Buffer.from(e.envelope).equals(expected[i]!.envelope), `envelope ${i} intact`));
}

const file = suite('pool journal file');

file('adds, displacements and removals round-trip through a reopen, in journal order', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const [a, b, c, d] = [entry(1), entry(2), entry(3), entry(4)];
    let { journal } = await openJournal(path);
    await journal.add(a!);
    await journal.add(b!);
    // c replaces b: one write, the removal after the add.
    await journal.add(c!, [b!.hash]);
    await journal.add(d!);
    journal.remove([a!.hash, 'not journaled']);
    same(journal.entries(), [c!, d!]);
    await journal.close();
    same(await readJournalFile(path), [c!, d!]);
    ({ journal } = await openJournal(path));
    same(journal.entries(), [c!, d!]);
    // Re-added after its removal: it comes back, at the end.
    await journal.add(a!);
    await journal.close();
    same(await readJournalFile(path), [c!, d!, a!]);
  });
});

file('a torn tail is cut on open, every record before it is kept, and appends resume after them', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const es = [entry(1), entry(2), entry(3)];
    let { journal } = await openJournal(path);
    for (const e of es) await journal.add(e);
    await journal.close();
    // The file is exactly the documented format: the magic, then one record per add.
    const intact = Buffer.concat([JOURNAL_MAGIC, ...es.map(record)]);
    assert.ok((await readFile(path)).equals(intact), 'magic, then CRC32C | length | body per add');
    const lastRecord = record(es[2]!).length;
    const lastStart = intact.length - lastRecord;
    /** `intact` with the byte at `at` flipped. */
    const flipped = (at: number) => {
      const b = Buffer.from(intact);
      b[at]! ^= 0x40;
      return b;
    };

    const [e0, e1, e2] = es as [JournalEntry, JournalEntry, JournalEntry];
    // [damage, the records read back, whether the file is cut (else a record is skipped)]
    const cases: Array<[string, JournalEntry[], boolean, () => Promise<void>]> = [
      ['cut mid-record', [e0, e1], true, () => truncate(path, intact.length - 100)],
      ['cut mid-header', [e0, e1], true, () => truncate(path, lastStart + 3)],
      ['garbage appended', es, true, () => appendFile(path, Buffer.from('this is not a record, just bytes a crash left behind'))],
      ['zeros appended', es, true, () => appendFile(path, Buffer.alloc(4096))],
      ["a flipped bit in the last record's length", [e0, e1], true, () => writeFile(path, flipped(lastStart + 5))],
      ["a flipped bit in the last record's arrival time", [e0, e1], true, () => writeFile(path, flipped(lastStart + 45))],
      // The envelope is covered by its hash: the record is skipped, the file is not cut.
      ["a flipped bit in the last record's envelope", [e0, e1], false, () => writeFile(path, flipped(intact.length - 10))],
      ["a flipped bit in the middle record's envelope", [e0, e2], false, () => writeFile(path, flipped(lastStart - 10))],
      ["the last record's envelope never written (zeros)", [e0, e1], false, () => writeFile(path, Buffer.concat([intact.subarray(0, lastStart + 49), Buffer.alloc(lastRecord - 49)]))],
    ];
    for (const [name, kept, cut, damage] of cases) {
      await writeFile(path, intact);
      await damage();
      const damaged = (await stat(path)).size;
      const keepsThird = kept.includes(e2) && cut;
      const opened = await openJournal(path);
      journal = opened.journal;
      same(journal.entries(), kept);
      assert.is(opened.lines.some((l) => l.msg === 'pool journal torn tail cut'), cut, `${name}: a cut is logged`);
      assert.is(opened.lines.some((l) => l.msg === 'pool journal records skipped: envelope does not match its hash'), !cut, `${name}: a skipped record is logged`);
      assert.is((await stat(path)).size, cut ? (keepsThird ? intact.length : lastStart) : damaged, `${name}: the file is cut where the valid records end`);
      const extra = entry(10);
      await journal.add(extra);
      await journal.close();
      same(await readJournalFile(path), [...kept, extra]);
    }
  });
});

file('a journal longer than the scan\'s read buffer reopens with every envelope intact', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    // 400 transfers of 5.3 KB: about 2 MB, so the scan refills its 1 MiB buffer twice.
    const es = Array.from({ length: 400 }, (_, i) => entry(i));
    let { journal } = await openJournal(path);
    await journal.addMany(es.map((tx) => ({ tx, displaced: [] })));
    await journal.close();
    assert.ok((await stat(path)).size > 2 * (1 << 20), 'the file spans more than two read buffers');
    same(await readJournalFile(path), es);
    ({ journal } = await openJournal(path));
    same(journal.entries(), es);
    await journal.close();
  });
});

file('a group write is the records byte for byte: adds encoded in place, removals after their replacement, in submission order', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const { journal } = await openJournal(path);
    const [a, b, c] = [entry(1), entry(2, 300), entry(3, 7000)];
    // One turn: a and b, then c displacing a, share one write.
    await Promise.all([journal.add(a!), journal.add(b!), journal.add(c!, [a!.hash])]);
    await journal.close();
    const expected = Buffer.concat([JOURNAL_MAGIC, ...encodeAdd(a!.hash, a!.receivedAt, a!.envelope), ...encodeAdd(b!.hash, b!.receivedAt, b!.envelope), ...encodeAdd(c!.hash, c!.receivedAt, c!.envelope), ...encodeRemove([a!.hash])]);
    assert.ok((await readFile(path)).equals(expected), 'the file holds exactly the encoded records');
    same(await readJournalFile(path), [b!, c!]);
  });
  // In place at an offset, the same bytes as the parts, and nothing around them touched.
  const e = entry(9, 1000);
  const out = Buffer.alloc(addRecordBytes(e.envelope.length) + 10, 0xee);
  assert.is(encodeAddInto(out, 5, e.hash, e.receivedAt, e.envelope), 5 + addRecordBytes(e.envelope.length));
  assert.ok(out.subarray(5, out.length - 5).equals(Buffer.concat(encodeAdd(e.hash, e.receivedAt, e.envelope))));
  assert.ok(out.subarray(0, 5).equals(Buffer.alloc(5, 0xee)) && out.subarray(out.length - 5).equals(Buffer.alloc(5, 0xee)));
});

file('a recordable hash is exactly 0x and 64 lowercase hex digits', () => {
  const h = entry(1).hash;
  assert.ok(isRecordableHash(h));
  assert.ok(isRecordableHash('0x' + '0123456789abcdef'.repeat(4)));
  // Every character just outside the accepted ranges ('/' ':' '`' 'g'), uppercase, and bad framing.
  for (const c of ['/', ':', '`', 'g', 'A', 'F', ' ']) assert.is(isRecordableHash(h.slice(0, 40) + c + h.slice(41)), false, `refuses ${JSON.stringify(c)}`);
  for (const bad of [h.slice(0, 65), h + '0', '0X' + h.slice(2), '00' + h.slice(2), h.slice(2) + '00', '', '0x']) assert.is(isRecordableHash(bad), false, `refuses ${bad}`);
});

file('an add whose hash no record can hold is refused alone, before anything is queued', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const { journal } = await openJournal(path);
    const good = entry(1);
    assert.throws(() => journal.addMany([{ tx: { ...good, hash: '0x1234' }, displaced: [] }]), /not a 32-byte hash/);
    await journal.add(good);
    await journal.close();
    same(await readJournalFile(path), [good]);
  });
});

file('concurrent adds share one write and sync; removal-only records cost no sync until something carries them', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const syncs: number[] = [];
    const { journal } = await openJournal(path, memoryStore(), { synced: (writes) => syncs.push(writes) });
    const es = Array.from({ length: 50 }, (_, i) => entry(i, 300));
    await Promise.all(es.map((e) => journal.add(e)));
    assert.ok(syncs.length >= 1 && syncs.length <= 2, `50 adds in one turn took ${syncs.length} syncs`);
    assert.is(syncs.reduce((x, y) => x + y, 0), 50);
    const before = syncs.length;
    journal.remove(es.slice(0, 10).map((e) => e.hash));
    await journal.add(entry(100, 300));
    assert.is(syncs.length, before + 1, 'the removal took no sync of its own');
    assert.is(syncs.at(-1), 2, 'the next add carried the removal');
    await journal.close();
    same(await readJournalFile(path), [...es.slice(10), entry(100, 300)]);
  });
});

file('compaction rewrites exactly the live set, including what is added and removed while it runs, and reopens to it', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const { journal, lines } = await openJournal(path, memoryStore(), { compactMinBytes: 256 << 10 });
    const es = Array.from({ length: 120 }, (_, i) => entry(i));
    await Promise.all(es.map((e) => journal.add(e)));
    const full = (await stat(path)).size;
    // 100 of 120 leave: dead bytes are 5x the live ones, past the 256 KB floor.
    journal.remove(es.slice(0, 100).map((e) => e.hash));
    // While the compaction runs: more adds, a replacement and a removal of a snapshot entry.
    const more = Array.from({ length: 5 }, (_, i) => entry(1000 + i));
    await Promise.all(more.map((e) => journal.add(e)));
    await journal.add(entry(2000), [es[100]!.hash]);
    journal.remove([es[101]!.hash, more[0]!.hash]);
    const expected = [...es.slice(102), ...more.slice(1), entry(2000)];
    same(journal.entries(), expected);
    await journal.close();
    assert.ok(lines.some((l) => l.msg === 'pool journal compacted'), 'a compaction ran');
    const size = (await stat(path)).size;
    assert.ok(size < full / 3, `compacted to ${size} of ${full} bytes`);
    same(
      (await readJournalFile(path)).sort((x, y) => x.hash.localeCompare(y.hash)),
      expected.sort((x, y) => x.hash.localeCompare(y.hash)),
    );
    // A compaction a crash cut short leaves its file behind: the journal is still the old file.
    await writeFile(`${path}.compact`, 'half a compaction');
    const reopened = await openJournal(path, memoryStore(), { compactMinBytes: 64 << 10 });
    assert.is(reopened.journal.entries().length, expected.length);
    await stat(`${path}.compact`).then(() => assert.unreachable('the leftover is deleted'), () => undefined);
    assert.is(reopened.lines.some((l) => l.msg === 'pool journal torn tail cut'), false, 'the compacted file is whole');
    // Compacted again from what was read back: the records read are rewritten as they were.
    reopened.journal.remove(expected.slice(0, 17).map((e) => e.hash));
    await reopened.journal.close();
    assert.ok(reopened.lines.some((l) => l.msg === 'pool journal compacted'), 'a second compaction ran');
    same(
      (await readJournalFile(path)).sort((x, y) => x.hash.localeCompare(y.hash)),
      expected.slice(17).sort((x, y) => x.hash.localeCompare(y.hash)),
    );
  });
});

file('legacy p: keys move into the file once and leave the database; a key no record can hold is only deleted', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    const store = memoryStore();
    await store.db.open();
    const [a, b] = [entry(1), entry(2)];
    const put = (key: string, value: Uint8Array) => ({ type: 'put' as const, key, value, valueEncoding: 'view' as const });
    await store.db.batch([put(Keys.poolTx(a.hash), encodeJournalValue(a.envelope, a.receivedAt)), put(Keys.poolTx(b.hash), encodeJournalValue(b.envelope, b.receivedAt)), put(Keys.poolTx('junk'), Uint8Array.of(1))] as never);
    const { journal, lines } = await openJournal(path, store);
    same(journal.entries().sort((x, y) => x.hash.localeCompare(y.hash)), [a, b].sort((x, y) => x.hash.localeCompare(y.hash)));
    assert.ok(lines.some((l) => l.msg === 'pool journal upgraded from database keys' && l.keys === 3 && l.moved === 2));
    assert.equal(await store.db.keys({ gte: Keys.poolTx(''), lt: Keys.poolTx('') + '\xff' }).all(), []);
    await journal.close();
    assert.is((await readJournalFile(path)).length, 2, 'durable in the file');
    const again = await openJournal(path, store);
    assert.is(again.journal.entries().length, 2);
    assert.is(again.lines.some((l) => l.msg === 'pool journal upgraded from database keys'), false, 'once');
    await again.journal.close();
  });
});

file('extra writes (the faucet claim) are in the store once the add resolves, with or without a file', async () => {
  await withTempDir(async (dir) => {
    for (const path of [join(dir, 'pool.journal'), undefined]) {
      const store = memoryStore();
      await store.db.open();
      const journal = await PoolJournal.open({ ...(path ? { path } : {}), store, log: capture().log });
      const e = entry(7);
      await journal.add(e, [], new WriteBatch().put(Keys.faucetClaim('0xc1'), { at: 1, tx_hash: e.hash }));
      assert.equal(await store.get(Keys.faucetClaim('0xc1')), { at: 1, tx_hash: e.hash });
      await journal.close();
      if (path) same(await readJournalFile(path), [e]);
    }
  });
});

file('a file that is not a pool journal refuses to open with a machine code; removals past one record split', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'pool.journal');
    await writeFile(path, 'hello, this is somebody else');
    try {
      await openJournal(path);
      assert.unreachable('opened');
    } catch (err) {
      assert.instance(err, SvcError);
      assert.is((err as SvcError).code, 'POOL_JOURNAL_UNREADABLE');
    }
    const hashes = Array.from({ length: MAX_REMOVALS_PER_RECORD + 1 }, (_, i) => toHex(sha3(Uint8Array.of(i & 0xff, i >> 8))));
    assert.is(encodeRemove(hashes).length, 2);
  });
});

file.run();
