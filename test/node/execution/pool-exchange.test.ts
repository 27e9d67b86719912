/**
 * The pool exchange over real libp2p hosts on loopback: two in-process execution nodes (A, and B
 * started later with A as bootnode) and bare hosts as test peers that send or serve what an
 * honest node never would. Tests run in order and share the nodes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { toHex } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import {
  decodeHashesPage,
  encodeHashesPage,
  encodeHashesRequest,
  encodeTxsRequest,
  MAX_ANNOUNCE_HASHES,
  MAX_FETCH_HASHES,
  poolLimits,
  PoolProtocols,
} from '../../../src/node/execution/pool-exchange-codec.js';
import { startP2p } from '../../../src/node/p2p/host.js';
import { RequestError } from '../../../src/node/p2p/reqresp.js';
import type { P2pHost, ProtocolLimits } from '../../../src/node/p2p/types.js';
import { silentLogger } from '../../../src/util/log.js';
import { flipByte } from '../../helpers/assert.js';
import { devnet, hashOf, metricSum, startNode, transfer, waitFor } from './fixture.js';

const { genesis, keys } = devnet();
const [acc0, acc1] = keys.accounts as [(typeof keys.accounts)[0], (typeof keys.accounts)[0]];
const SLOT_MS = genesis.config.slot_seconds * 1000;
/** A poll is due twice a slot and takes milliseconds; ten slots is for a busy 2-core box. */
const EXCHANGE_MS = 10 * SLOT_MS;
const LIMITS = poolLimits(SLOT_MS);
/** What a misbehaving test peer's requests go out with: nothing stops them on its own side. */
const LOOSE: ProtocolLimits = { maxRequestBytes: 1 << 20, maxResponseChunks: 1024, maxChunkBytes: 1 << 20, timeoutMs: 10_000 };

interface Ctx {
  dir: string;
  a: ExecutionNode;
  b?: ExecutionNode;
  peers: P2pHost[];
}
let ctx: Ctx | undefined;
const need = (): Ctx => {
  if (!ctx) throw new Error('set-up did not run');
  return ctx;
};

const metricsOf = (node: ExecutionNode) => node.metrics.text();
const penalties = async (node: ExecutionNode, reason?: string) => metricSum(await metricsOf(node), 'service_p2p_peer_penalties_total', reason ? { reason } : {});
const fetched = async (node: ExecutionNode, labels: Record<string, string>) => metricSum(await metricsOf(node), 'service_execution_pool_exchange_transactions_total', labels);

function addrOf(node: ExecutionNode): string {
  const addr = node.p2p?.multiaddrs().find((a) => a.startsWith('/ip4/127.0.0.1/'));
  assert.ok(addr, 'the node listens on loopback');
  return addr!;
}

/**
 * A bare execution-layer host dialling A, playing a peer that asks or answers anything. Its
 * handlers may come up just after the connection: A's poll then fails and is repeated.
 */
async function testPeer(name: string, serve?: (peer: P2pHost) => void): Promise<P2pHost> {
  const c = need();
  const before = c.a.peerCount();
  const peer = await startP2p({ layer: 'execution', host: '127.0.0.1', port: 0, bootnodes: [addrOf(c.a)], dataDir: join(c.dir, name), genesisHash: c.a.chain.genesisHash, metrics: new Registry(), log: silentLogger });
  c.peers.push(peer);
  serve?.(peer);
  await waitFor(`${name} connected to A`, () => c.a.peerCount() > before && peer.peerCount() === 1, EXCHANGE_MS);
  return peer;
}

/** Expects the request to fail with a stream reset (the responder refused it). */
async function refused(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, RequestError);
    assert.is((err as RequestError).fault, 'reset', (err as Error).message);
    return;
  }
  assert.unreachable('expected the responder to refuse');
}

const S = suite('execution p2p: pool exchange');

S.after(async () => {
  if (!ctx) return;
  for (const p of ctx.peers) await p.stop().catch(() => undefined);
  await ctx.b?.stop().catch(() => undefined);
  await ctx.a.stop().catch(() => undefined);
  await rm(ctx.dir, { recursive: true, force: true });
});

S('a transaction pooled on A and never published reaches B when B connects, and one pooled later within a poll; no penalties', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-pool-exchange-'));
  const a = await startNode({ dataDir: join(dir, 'a'), p2p: { host: '127.0.0.1', port: 0, bootnodes: [] } }).catch(async (err) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  ctx = { dir, a, peers: [] };
  // Re-pooled by a reorg: admitted without being published, the way a transaction whose
  // publication was lost looks to its peers.
  const early = transfer(acc0, { nonce: 0, value: 5n });
  await a.submit(early, 'reorg');
  const b = await startNode({ dataDir: join(dir, 'b'), p2p: { host: '127.0.0.1', port: 0, bootnodes: [addrOf(a)] } });
  ctx.b = b;
  // Counted once durable in the journal, after it is pooled.
  await waitFor('B to fetch the transaction A pooled before B connected', async () => (await fetched(b, { verdict: 'accept', reason: 'ADMITTED' })) === 1, EXCHANGE_MS);
  assert.ok(b.admission.pool.has(hashOf(early)));
  assert.is(metricSum(await metricsOf(b), 'service_execution_gossip_transactions_total', { verdict: 'accept' }), 0, 'not by gossip');
  const journaled = (await b.admission.journal.entries()).find((e) => e.hash === hashOf(early));
  assert.ok(journaled, 'the fetched transaction went through admission into the journal');

  const later = transfer(acc0, { nonce: 1, value: 6n });
  const t0 = Date.now();
  await a.submit(later, 'reorg');
  await waitFor('B to fetch the transaction A pooled while connected', () => b.admission.pool.has(hashOf(later)), EXCHANGE_MS);
  process.stderr.write(`[pool-exchange] pooled on A → in B's pool in ${Date.now() - t0} ms (polls every ${SLOT_MS / 2} ms)\n`);
  assert.is(await penalties(a), 0, 'A penalised nobody');
  assert.is(await penalties(b), 0, 'B penalised nobody');
  assert.is(b.admission.pool.size, a.admission.pool.size);
});

S('A serves its pool: pages from a cursor, transactions by hash in the order asked, unknown hashes skipped', async () => {
  const { a } = need();
  const peer = await testPeer('peer-reader');
  const pooled = a.admission.pool.entries();
  const page = decodeHashesPage((await peer.request(a.p2p!.peerId, PoolProtocols.hashes, encodeHashesRequest({ cursor: 0n, limit: 1 }), LIMITS.hashes))[0]!, 1);
  assert.equal(page.entries, [{ hash: pooled[0]!.hash, size: pooled[0]!.envelope.length }]);
  assert.ok(page.more);
  const rest = decodeHashesPage((await peer.request(a.p2p!.peerId, PoolProtocols.hashes, encodeHashesRequest({ cursor: page.next, limit: MAX_ANNOUNCE_HASHES }), LIMITS.hashes))[0]!, MAX_ANNOUNCE_HASHES);
  assert.equal(rest.entries.map((e) => e.hash), pooled.slice(1).map((e) => e.hash));
  assert.not.ok(rest.more);
  const empty = decodeHashesPage((await peer.request(a.p2p!.peerId, PoolProtocols.hashes, encodeHashesRequest({ cursor: rest.next, limit: 10 }), LIMITS.hashes))[0]!, 10);
  assert.equal(empty, { next: rest.next, more: false, entries: [] }, 'nothing new since the cursor');

  const unknown = '0x' + 'ab'.repeat(32);
  const wanted = [pooled[1]!.hash, unknown, pooled[0]!.hash];
  const txs = await peer.request(a.p2p!.peerId, PoolProtocols.txs, encodeTxsRequest(wanted), LIMITS.txs);
  assert.equal(txs.map((t) => toHex(sha3(t))), [pooled[1]!.hash, pooled[0]!.hash]);
  assert.equal(await peer.request(a.p2p!.peerId, PoolProtocols.txs, encodeTxsRequest([unknown]), LIMITS.txs), [], 'unknown hashes: an empty answer');
  assert.is(await penalties(a), 0, 'asking for unknown hashes is no offence');
});

S('truncated, oversized and out-of-range requests are refused with a reset and penalise the requester; A keeps serving', async () => {
  const { a } = need();
  const before = await metricsOf(a);
  const hashesBad = [encodeHashesRequest({ cursor: 0n, limit: 1 }).subarray(0, 9), new Uint8Array(11), encodeHashesRequest({ cursor: 0n, limit: 0 }), encodeHashesRequest({ cursor: 0n, limit: MAX_ANNOUNCE_HASHES + 1 })];
  const many = Array.from({ length: MAX_FETCH_HASHES + 1 }, (_, i) => '0x' + i.toString(16).padStart(64, '0'));
  const txsBad = [new Uint8Array(0), new Uint8Array(33), encodeTxsRequest(many), encodeTxsRequest([many[0]!, many[0]!])];
  // Two peers: eight offences from one would come close to its ban.
  const p1 = await testPeer('peer-bad-hashes');
  for (const req of hashesBad) await refused(p1.request(a.p2p!.peerId, PoolProtocols.hashes, req, LOOSE));
  const p2 = await testPeer('peer-bad-txs');
  for (const req of txsBad) await refused(p2.request(a.p2p!.peerId, PoolProtocols.txs, req, LOOSE));
  await waitFor('A to count all eight refusals', async () => (await penalties(a)) - metricSum(before, 'service_p2p_peer_penalties_total') === 8, EXCHANGE_MS);
  const after = await metricsOf(a);
  const diff = (labels: Record<string, string>) => metricSum(after, 'service_p2p_peer_penalties_total', labels) - metricSum(before, 'service_p2p_peer_penalties_total', labels);
  // Above the protocol's request cap: refused on the length prefix; the rest do not decode.
  assert.is(diff({ reason: 'req_oversize' }), 2, 'the 11-byte hashes request and the 257-hash fetch');
  assert.is(diff({ reason: 'req_bad_request' }), 6);
  assert.ok(a.peerCount() >= 3, 'nobody was disconnected');
  assert.is((await p1.request(a.p2p!.peerId, PoolProtocols.txs, encodeTxsRequest([a.admission.pool.entries()[0]!.hash]), LIMITS.txs)).length, 1, 'and A still serves');
});

S('a peer over the rate limit is refused without a penalty and served again later', async () => {
  const { a } = need();
  const peer = await testPeer('peer-flood');
  const before = await penalties(a);
  let served = 0;
  let limited = 0;
  // Eight at a time (the streams a connection may hold per protocol), far faster than the refill.
  for (let round = 0; round < 8; round++) {
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => peer.request(a.p2p!.peerId, PoolProtocols.hashes, encodeHashesRequest({ cursor: 0n, limit: 1 }), LIMITS.hashes)));
    for (const r of results) {
      if (r.status === 'fulfilled') served++;
      else {
        assert.instance(r.reason, RequestError);
        limited++;
      }
    }
  }
  assert.ok(served >= 32 && limited > 0, `served ${served}, limited ${limited}`);
  assert.ok(metricSum(await metricsOf(a), 'service_p2p_requests_total', { protocol: PoolProtocols.hashes, direction: 'inbound', result: 'rate_limited' }) >= limited);
  assert.is(await penalties(a), before, 'a rate limit is no offence');
  await waitFor('the bucket to refill', async () => {
    try {
      await peer.request(a.p2p!.peerId, PoolProtocols.hashes, encodeHashesRequest({ cursor: 0n, limit: 1 }), LIMITS.hashes);
      return true;
    } catch {
      return false;
    }
  }, EXCHANGE_MS);
});

S('a peer serving invalid, unasked-for and missing transactions: the valid one admitted, the bad signature and the stray penalised, the missing one dropped', async () => {
  const { a } = need();
  const good = transfer(acc1, { nonce: 0, value: 21n });
  const forged = (() => {
    const t = transfer(acc1, { nonce: 1, value: 22n });
    return { ...t, signature: flipByte(t.signature, 10) };
  })();
  const stray = transfer(acc1, { nonce: 2, value: 23n });
  const missing = '0x' + 'cd'.repeat(32);
  const envelopes = new Map([good, forged].map((t) => [toHex(sha3(encodeTx(t))), encodeTx(t)]));
  let pages = 0;
  const before = await metricsOf(a);
  await testPeer('peer-liar', (peer) => {
    peer.handle(PoolProtocols.hashes, async function* () {
      // Announces once; later polls find nothing new.
      const entries = pages++ === 0 ? [...[...envelopes].map(([hash, e]) => ({ hash, size: e.length })), { hash: missing, size: 5000 }] : [];
      yield encodeHashesPage({ next: 1n, more: false, entries });
    }, LIMITS.hashes);
    peer.handle(PoolProtocols.txs, async function* () {
      yield* envelopes.values();
      yield encodeTx(stray);
    }, LOOSE);
  });
  await waitFor('A to judge the liar\'s answer', async () => (await fetched(a, { reason: 'NOT_SERVED' })) - metricSum(before, 'service_execution_pool_exchange_transactions_total', { reason: 'NOT_SERVED' }) >= 1, EXCHANGE_MS);
  const after = await metricsOf(a);
  const diff = (name: string, labels: Record<string, string>) => metricSum(after, name, labels) - metricSum(before, name, labels);
  assert.ok(a.admission.pool.has(hashOf(good)), 'the valid transaction was admitted');
  assert.not.ok(a.admission.pool.has(hashOf(forged)), 'the forged one was not');
  assert.not.ok(a.admission.pool.has(hashOf(stray)), 'nor the one it was not asked for');
  const tx = 'service_execution_pool_exchange_transactions_total';
  assert.is(diff(tx, { verdict: 'accept', reason: 'ADMITTED' }), 1);
  assert.is(diff(tx, { verdict: 'reject', reason: 'INVALID_SIGNATURE' }), 1);
  assert.is(diff(tx, { verdict: 'reject', reason: 'UNREQUESTED' }), 1);
  assert.is(diff(tx, { verdict: 'ignore', reason: 'NOT_SERVED' }), 1);
  const pen = 'service_p2p_peer_penalties_total';
  assert.is(diff(pen, { reason: 'pool_invalid_tx' }), 1);
  assert.is(diff(pen, { reason: 'pool_unrequested' }), 1);
  assert.is(diff(pen, {}), 2, 'nothing else: a hash it did not serve is no offence');
});

S('a peer that never answers only fails its requests; a malformed page penalises its sender', async () => {
  const { a } = need();
  const before = await metricsOf(a);
  await testPeer('peer-silent', (peer) => {
    peer.handle(PoolProtocols.hashes, async function* () {
      await new Promise(() => undefined);
      yield new Uint8Array(0);
    }, { ...LIMITS.hashes, timeoutMs: 60_000 });
  });
  await waitFor('A\'s poll of the silent peer to time out', async () => metricSum(await metricsOf(a), 'service_p2p_requests_total', { protocol: PoolProtocols.hashes, direction: 'outbound', result: 'timeout' }) > metricSum(before, 'service_p2p_requests_total', { protocol: PoolProtocols.hashes, direction: 'outbound', result: 'timeout' }), EXCHANGE_MS);
  assert.is(await penalties(a), metricSum(before, 'service_p2p_peer_penalties_total'), 'silence is no offence');

  // A stream closed with no page is what a peer shutting down sends too: ignored, not penalised.
  let emptyAnswers = 0;
  await testPeer('peer-empty', (peer) => {
    peer.handle(PoolProtocols.hashes, async function* () {
      emptyAnswers++;
    }, LIMITS.hashes);
  });
  // Polls of one peer run one after another, so a second request means the first answer was judged.
  await waitFor('A to poll the empty peer twice', async () => emptyAnswers >= 2, EXCHANGE_MS);
  assert.is(await penalties(a), metricSum(before, 'service_p2p_peer_penalties_total'), 'an empty answer is no offence');

  await testPeer('peer-garbled', (peer) => {
    peer.handle(PoolProtocols.hashes, async function* () {
      yield encodeHashesPage({ next: 0n, more: false, entries: [{ hash: '0x' + 'ee'.repeat(32), size: 0 }] });
    }, LIMITS.hashes);
  });
  await waitFor('A to penalise the malformed page', async () => (await penalties(a, 'pool_malformed_page')) >= 1, EXCHANGE_MS);
  assert.is(a.p2p!.peers().length, a.peerCount(), 'A is up and listing peers');
});

S.run();
