import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressBook, CANDIDATE_MAX_FAILURES, LONG_BACKOFF_SLOTS, MAX_BOOK_PEERS, MAX_CANDIDATES, RECENT_SLOTS } from '../../../src/node/p2p/address-book.js';
import { silentLogger } from '../../../src/util/log.js';
import { GENESIS } from './fixture.js';

const SLOT = 2_000;

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-book-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('confirmed peers are persisted atomically and read back; candidates and unconfirmed bootnodes are not', async () => {
  await withDir(async (dir) => {
    const book = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    book.addBootnode('boot', '/ip4/10.0.0.9/tcp/9000');
    assert.ok(book.learn('cand', ['/ip4/10.0.0.8/tcp/9000']));
    assert.not.ok(book.learn('cand', ['/ip4/10.0.0.7/tcp/9000']), 'known already');
    assert.ok(book.confirm('p1', ['/ip4/10.0.0.1/tcp/9000']));
    assert.not.ok(book.confirm('p1', []), 'confirmed already');
    await book.save();
    const doc = JSON.parse(await readFile(book.path, 'utf8'));
    assert.equal(doc.peers.map((p: { peer_id: string }) => p.peer_id), ['p1']);
    assert.is(doc.genesis_hash, GENESIS);
    const again = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    const loaded = await again.load();
    assert.equal(loaded.map((e) => [e.peerId, e.addrs, e.confirmed]), [['p1', ['/ip4/10.0.0.1/tcp/9000'], true]]);
  });
});

test('a malformed book or one for another chain is ignored, never fatal', async () => {
  await withDir(async (dir) => {
    const book = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    assert.equal(await book.load(), [], 'no file');
    await mkdir(join(dir, 'p2p'), { recursive: true });
    for (const text of ['{not json', '[]', '{"version":1,"peers":"x"}', '{"version":2,"genesis_hash":"' + GENESIS + '","peers":[]}']) {
      await writeFile(book.path, text);
      assert.equal(await new AddressBook(dir, GENESIS, SLOT, silentLogger).load(), [], text);
    }
    await writeFile(book.path, JSON.stringify({ version: 1, genesis_hash: '0x' + '22'.repeat(32), peers: [{ peer_id: 'x', addrs: ['/ip4/10.0.0.1/tcp/1'], last_seen: 1 }] }));
    assert.equal(await new AddressBook(dir, GENESIS, SLOT, silentLogger).load(), []);
    // Junk entries are skipped one by one.
    await writeFile(book.path, JSON.stringify({ version: 1, genesis_hash: GENESIS, peers: [null, { peer_id: 7 }, { peer_id: 'y', addrs: [] }, { peer_id: 'z', addrs: [1, '/ip4/10.0.0.1/tcp/1'], last_seen: 'x' }] }));
    const loaded = await new AddressBook(dir, GENESIS, SLOT, silentLogger).load();
    assert.equal(loaded.map((e) => [e.peerId, e.addrs, e.lastSeen]), [['z', ['/ip4/10.0.0.1/tcp/1'], 0]]);
  });
});

test('the book is bounded: the least recently seen confirmed peers go; candidates stop at their cap', async () => {
  await withDir(async (dir) => {
    const book = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    for (let i = 0; i < MAX_BOOK_PEERS + 10; i++) book.confirm(`p${i}`, ['/ip4/10.0.0.1/tcp/1']);
    assert.is(book.confirmedCount, MAX_BOOK_PEERS);
    for (let i = 0; i < MAX_CANDIDATES + 10; i++) book.learn(`c${i}`, ['/ip4/10.0.0.1/tcp/1']);
    assert.is([...book.all()].filter((e) => !e.confirmed).length, MAX_CANDIDATES);
  });
});

test('redial backoff: the first retry within a slot, at most a slot for recent peers, longer for the long gone; failing candidates are forgotten', async () => {
  await withDir(async (dir) => {
    const book = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    assert.ok(book.firstRetryMs < SLOT);
    book.confirm('p', ['/ip4/10.0.0.1/tcp/1']);
    book.disconnected('p');
    const e = book.get('p')!;
    assert.ok(e.nextDialAt - Date.now() <= SLOT);
    for (let i = 0; i < 20; i++) book.dialFailed('p');
    assert.is(book.backoffMs(e), SLOT, 'capped at one slot while recent');
    assert.is(book.backoffMs(e, e.lastSeen + RECENT_SLOTS * SLOT + 1), LONG_BACKOFF_SLOTS * SLOT);
    book.addBootnode('b', '/ip4/10.0.0.2/tcp/1');
    for (let i = 0; i < 20; i++) book.dialFailed('b');
    assert.ok(book.get('b'), 'bootnodes stay');
    assert.is(book.backoffMs(book.get('b')!), SLOT);
    book.learn('c', ['/ip4/10.0.0.3/tcp/1']);
    for (let i = 0; i < CANDIDATE_MAX_FAILURES; i++) book.dialFailed('c');
    assert.is(book.get('c'), undefined);
    book.forget('p');
    assert.is(book.get('p'), undefined);
  });
});

test('a recent peer that TCP cannot reach (a cut link) is redialled every quarter slot however often it failed; one reached but failing backs off', async () => {
  await withDir(async (dir) => {
    const book = new AddressBook(dir, GENESIS, SLOT, silentLogger);
    book.confirm('p', ['/ip4/10.0.0.1/tcp/1']);
    book.disconnected('p');
    const e = book.get('p')!;
    for (let i = 0; i < 20; i++) book.dialFailed('p', false);
    assert.ok(e.nextDialAt - Date.now() <= book.firstRetryMs, `unreachable: next dial in ${e.nextDialAt - Date.now()} ms`);
    book.dialFailed('p', true);
    assert.ok(e.nextDialAt - Date.now() > book.firstRetryMs, 'a handshake that failed backs off (each try costs both sides one)');
    // Long gone: the long backoff even when unreachable.
    e.lastSeen = Date.now() - RECENT_SLOTS * SLOT - 1;
    book.dialFailed('p', false);
    assert.ok(e.nextDialAt - Date.now() > SLOT);
  });
});

test.run();
