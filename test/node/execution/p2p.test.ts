/**
 * Execution's transaction gossip over real libp2p hosts on loopback: in-process execution nodes in
 * a line A — B — C (A and C are not connected, so B must relay), plus a bare host as a test peer
 * that publishes what an honest node never would. Tests in this file run in order and share the nodes.
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
import { verdictOfRefusal } from '../../../src/node/execution/p2p.js';
import { startP2p } from '../../../src/node/p2p/host.js';
import { type P2pHost, Topics } from '../../../src/node/p2p/types.js';
import { MalformedError, SvcError, TxError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/util/log.js';
import { flipByte } from '../../helpers/assert.js';
import { devnet, get, hashOf, metricSum as sample, startNode, submitOk, transfer, waitFor } from './fixture.js';

const { genesis, keys } = devnet();
const [acc0, acc1] = keys.accounts as [(typeof keys.accounts)[0], (typeof keys.accounts)[0]];
const SLOT_MS = genesis.config.slot_seconds * 1000;
/** Gossip crosses two hops and two admissions in well under a slot; ten slots is for a busy 2-core box. */
const GOSSIP_MS = 10 * SLOT_MS;

interface Ctx {
  dir: string;
  a: ExecutionNode;
  b: ExecutionNode;
  c: ExecutionNode;
  /** Test peers, stopped at the end. */
  peers: P2pHost[];
}
let ctx: Ctx | undefined;
const need = (): Ctx => {
  if (!ctx) throw new Error('set-up did not run');
  return ctx;
};

/**
 * An execution node with a data directory (the peer key lives there) and a host on a free loopback
 * port; `maxPeers` 1 keeps an end of the A — B — C line from meeting the other through peer exchange.
 */
function startP2pNode(dir: string, name: string, bootnodes: string[] = [], maxPeers?: number): Promise<ExecutionNode> {
  return startNode({ dataDir: join(dir, name), p2p: { host: '127.0.0.1', port: 0, bootnodes, maxPeers } });
}

function addrOf(node: ExecutionNode): string {
  const addr = node.p2p?.multiaddrs().find((a) => a.startsWith('/ip4/127.0.0.1/'));
  assert.ok(addr, 'the node listens on loopback');
  return addr!;
}

const metricsOf = (node: ExecutionNode) => node.metrics.text();

/** Gossiped transactions the node admitted (counted once durable in its journal). */
const accepted = async (node: ExecutionNode) => sample(await metricsOf(node), 'service_execution_gossip_transactions_total', { verdict: 'accept' });

/**
 * Publishes `payload(i)` for i = 0, 1, … until the host hands one to a peer: before the test
 * peer knows its neighbour's subscription a publish reaches nobody (and the host remembers it, so
 * the same bytes could not be offered again). Returns the bytes that went out.
 */
async function publishDelivered(host: P2pHost, payload: (i: number) => Uint8Array): Promise<Uint8Array> {
  let i = 0;
  return waitFor('a peer to take the test peer\'s message', async () => {
    const data = payload(i++);
    return (await host.publish(Topics.txs, data)) > 0 ? data : undefined;
  }, GOSSIP_MS);
}

const S = suite('execution p2p: transaction gossip');

S.after(async () => {
  if (!ctx) return;
  for (const p of ctx.peers) await p.stop().catch(() => undefined);
  for (const n of [ctx.c, ctx.b, ctx.a]) await n.stop().catch(() => undefined);
  await rm(ctx.dir, { recursive: true, force: true });
});

S('verdicts: bytes that prove a bad sender are rejected; state, policy and local failures are ignored', () => {
  assert.equal(verdictOfRefusal(new MalformedError('tx.Envelope', 'too short')), { verdict: 'reject', reason: 'MALFORMED_INPUT' });
  for (const name of ['ErrInvalidSignature', 'ErrInvalidSender', 'ErrGasTooLow', 'ErrGasTooHigh', 'ErrGasPriceTooLow'] as const) {
    assert.is(verdictOfRefusal(new TxError(name)).verdict, 'reject', name);
  }
  for (const name of ['ErrInvalidNonce', 'ErrInsufficientFunds'] as const) assert.is(verdictOfRefusal(new TxError(name)).verdict, 'ignore', name);
  for (const code of ['ALREADY_KNOWN', 'NONCE_TOO_HIGH', 'QUEUE_FULL', 'POOL_FULL', 'REPLACEMENT_UNDERPRICED', 'CONTRACTS_UNSUPPORTED', 'POOL_JOURNAL_FAILED']) {
    assert.equal(verdictOfRefusal(new SvcError(code, 'x')), { verdict: 'ignore', reason: code });
  }
  assert.equal(verdictOfRefusal(new Error('bug')), { verdict: 'ignore', reason: 'INTERNAL' });
});

S('set-up: A — B — C connect; /health peers and service_execution_peer_count count them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-exec-p2p-'));
  const a = await startP2pNode(dir, 'a', [], 1).catch(async (err) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  ctx = { dir, a, b: a, c: a, peers: [] };
  ctx.b = await startP2pNode(dir, 'b', [addrOf(a)]);
  ctx.c = await startP2pNode(dir, 'c', [addrOf(ctx.b)], 1);
  const { b, c } = ctx;
  await waitFor('A, B and C to have 1, 2 and 1 peers', () => a.peerCount() === 1 && b.peerCount() === 2 && c.peerCount() === 1, GOSSIP_MS);
  assert.not.ok(a.p2p!.peers().some((p) => p.peer_id === c.p2p!.peerId), 'A is not connected to C');
  assert.is((await get(b, '/health')).body.peers, 2);
  assert.is((await get(a, '/health')).body.peers, 1);
  assert.is(sample(await metricsOf(b), 'service_execution_peer_count'), 2);
  assert.is(sample(await metricsOf(c), 'service_execution_peer_count'), 1);
});

S('a transfer submitted by REST to A reaches B and C (relayed by B), journaled on each before it is accepted', async () => {
  const { a, b, c } = need();
  const tx = transfer(acc0, { nonce: 0 });
  const hash = await submitOk(a, tx);
  // Pooled comes before durable; the accept verdict (counted) comes after.
  await waitFor('B and C to accept the transfer', async () => (await accepted(b)) === 1 && (await accepted(c)) === 1, GOSSIP_MS);
  for (const n of [b, c]) {
    assert.ok(n.admission.pool.has(hash));
    const journaled = await n.admission.journal.entries();
    const entry = journaled.find((e) => e.hash === hash);
    assert.ok(entry, 'the gossip-admitted transaction is in the pool journal');
    assert.equal(toHex(entry!.envelope), toHex(encodeTx(tx)));
    const text = await metricsOf(n);
    assert.is(sample(text, 'service_execution_gossip_transactions_total', { verdict: 'accept', reason: 'ADMITTED' }), 1);
    assert.is(sample(text, 'service_execution_gossip_transactions_total', { verdict: 'reject' }), 0);
  }
  assert.is(sample(await metricsOf(a), 'service_execution_gossip_published_total', { result: 'sent' }), 1);
  // JSON-RPC submissions are published too.
  const tx2 = transfer(acc0, { nonce: 1 });
  const r = await fetch(a.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [toHex(encodeTx(tx2))] }) });
  assert.is(((await r.json()) as { result: string }).result, hashOf(tx2));
  await waitFor('the JSON-RPC transfer in C\'s pool', () => c.admission.pool.has(hashOf(tx2)), GOSSIP_MS);
});

/** A bare execution-layer host connected to B only, playing a peer that publishes anything. */
async function testPeer(c: Ctx, name: string): Promise<P2pHost> {
  const peer = await startP2p({ layer: 'execution', host: '127.0.0.1', port: 0, bootnodes: [addrOf(c.b)], dataDir: join(c.dir, name), genesisHash: c.b.chain.genesisHash, metrics: new Registry(), log: silentLogger });
  c.peers.push(peer);
  return peer;
}

/** Publishes `data` from a peer that has delivered before (so it knows B's subscription), asserting it went out. */
async function publishNow(peer: P2pHost, data: Uint8Array): Promise<void> {
  assert.ok((await peer.publish(Topics.txs, data)) > 0, 'the message went to a peer');
}

S('a transaction B already pools is ignored by hash, not re-admitted and not relayed', async () => {
  const c = need();
  const peer = await testPeer(c, 'peer-valid');
  // Pooled on B without being published (a re-pooled reorged transaction is not announced).
  const dup = transfer(acc1, { nonce: 0, value: 7n });
  await c.b.submit(dup, 'reorg');
  // Warm-up: the first transfer the peer manages to deliver (same nonce: B takes only one).
  const acceptedBefore = await accepted(c.b);
  const cGossipBefore = sample(await metricsOf(c.c), 'service_execution_gossip_transactions_total');
  const first = await publishDelivered(peer, (i) => encodeTx(transfer(acc1, { nonce: 1, value: 100n + BigInt(i) })));
  await waitFor('B to admit the test peer\'s transfer', async () => (await accepted(c.b)) === acceptedBefore + 1, GOSSIP_MS);
  assert.ok(c.b.admission.pool.has(toHex(sha3(first))));
  const sizeBefore = c.b.admission.pool.size;
  const journalBefore = (await c.b.admission.journal.entries()).length;
  const admissionKnownBefore = sample(await metricsOf(c.b), 'service_execution_transactions_rejected_total', { reason: 'ALREADY_KNOWN' });
  await publishNow(peer, encodeTx(dup));
  // Behind it, a new transfer B accepts and relays: once C has it, B had handled the duplicate.
  const next = transfer(acc1, { nonce: 2, value: 8n });
  await publishNow(peer, encodeTx(next));
  await waitFor('C to have the transfer behind the duplicate', () => c.c.admission.pool.has(hashOf(next)), GOSSIP_MS);
  await waitFor('B to have accepted it', async () => (await accepted(c.b)) === acceptedBefore + 2, GOSSIP_MS);
  const text = await metricsOf(c.b);
  assert.is(sample(text, 'service_execution_gossip_transactions_total', { verdict: 'ignore', reason: 'ALREADY_KNOWN' }), 1, 'B ignored the duplicate');
  assert.is(sample(text, 'service_execution_transactions_rejected_total', { reason: 'ALREADY_KNOWN' }), admissionKnownBefore, 'by its hash, before admission (no signature check)');
  assert.is(c.b.admission.pool.size, sizeBefore + 1, 'B pooled only the new transfer');
  assert.is((await c.b.admission.journal.entries()).length, journalBefore + 1, 'and journaled only it');
  // C may fetch the duplicate from B's pool (the pool exchange), but not over gossip: C judged
  // exactly two gossiped messages (the warm-up transfer and the one behind the duplicate).
  await waitFor('C to judge the warm-up transfer too', async () => sample(await metricsOf(c.c), 'service_execution_gossip_transactions_total') - cGossipBefore >= 2, GOSSIP_MS);
  assert.is(sample(await metricsOf(c.c), 'service_execution_gossip_transactions_total') - cGossipBefore, 2, 'the duplicate was not relayed to C');
});

S('gossip admission is public work: it waits while an engine call is in flight', async () => {
  const c = need();
  const peer = c.peers[0]!;
  const tx = transfer(acc1, { nonce: 3, value: 9n });
  const deferredBefore = c.b.enginePriority.deferred;
  c.b.enginePriority.enter();
  try {
    await publishNow(peer, encodeTx(tx));
    await waitFor('the gossiped transfer to wait behind the engine call', () => c.b.enginePriority.deferred > deferredBefore, GOSSIP_MS);
    assert.not.ok(c.b.admission.pool.has(hashOf(tx)), 'not admitted while the engine call runs');
  } finally {
    c.b.enginePriority.leave();
  }
  await waitFor('the gossiped transfer admitted once the engine call ends', () => c.b.admission.pool.has(hashOf(tx)), GOSSIP_MS);
});

S('malformed bytes, a bad signature and another chain\'s transfer are rejected, counted by reason, never relayed, and penalise their sender', async () => {
  const c = need();
  const before = await metricsOf(c.b);
  const bad: Array<{ name: string; reason: string; payload: (i: number) => Uint8Array }> = [
    // Distinct per attempt, so each attempt is a new message.
    { name: 'peer-malformed', reason: 'MALFORMED_INPUT', payload: (i) => new Uint8Array(64).fill(i + 1) },
    {
      name: 'peer-forged',
      reason: 'INVALID_SIGNATURE',
      payload: (i) => {
        const t = transfer(acc1, { nonce: 10, value: 1000n + BigInt(i) });
        return encodeTx({ ...t, signature: flipByte(t.signature, 10) });
      },
    },
    { name: 'peer-other-chain', reason: 'INVALID_SIGNATURE', payload: (i) => encodeTx(transfer(acc1, { nonce: 10, value: 2000n + BigInt(i), chainId: 'svc-other' })) },
  ];
  // One peer per kind: a second rejection from the same peer may already find it graylisted.
  for (const b of bad) await publishDelivered(await testPeer(c, b.name), b.payload);
  await waitFor('B to reject all three', async () => sample(await metricsOf(c.b), 'service_execution_gossip_transactions_total', { verdict: 'reject' }) >= 3, GOSSIP_MS);
  const after = await metricsOf(c.b);
  assert.is(sample(after, 'service_execution_gossip_transactions_total', { verdict: 'reject', reason: 'MALFORMED_INPUT' }), 1);
  assert.is(sample(after, 'service_execution_gossip_transactions_total', { verdict: 'reject', reason: 'INVALID_SIGNATURE' }), 2);
  assert.is(
    sample(after, 'service_p2p_peer_penalties_total', { layer: 'execution' }) - sample(before, 'service_p2p_peer_penalties_total', { layer: 'execution' }),
    3,
    'the host penalised each sender',
  );
  assert.is(sample(after, 'service_execution_transactions_rejected_total', { reason: 'INVALID_SIGNATURE' }), 2, 'admission counted the bad signatures by reason');
  assert.is(sample(await metricsOf(c.c), 'service_execution_gossip_transactions_total', { verdict: 'reject' }), 0, 'nothing rejected reached C');
  assert.is(c.b.peerCount(), 2 + c.peers.length, 'one offence does not disconnect');
});

S('C restarts: same peer id, the gossip-admitted transactions come back from its journal, B reconnects', async () => {
  const c = need();
  const peerId = c.c.p2p!.peerId;
  const pooled = c.c.admission.pool.entries().map((e) => e.hash).sort();
  assert.ok(pooled.length >= 3);
  await c.c.stop();
  c.c = await startP2pNode(c.dir, 'c', [addrOf(c.b)], 1);
  assert.is(c.c.p2p!.peerId, peerId, 'the peer key persisted in the data directory');
  assert.equal(c.c.admission.pool.entries().map((e) => e.hash).sort(), pooled);
  await waitFor('C to reconnect to B', () => c.c.peerCount() === 1, GOSSIP_MS);
});

S('a transaction admitted before any peer connected is published once one has', async () => {
  const c = need();
  const lone = await startP2pNode(c.dir, 'lone');
  try {
    const tx = transfer(acc0, { nonce: 2, value: 11n });
    const hash = await submitOk(lone, tx, 'queued');
    // Nobody to send it to yet: kept for a retry.
    assert.is(sample(await metricsOf(lone), 'service_execution_gossip_published_total', { result: 'no_peers' }), 1);
    const late = await startP2pNode(c.dir, 'late', [addrOf(lone)]);
    try {
      await waitFor('the late peer to receive the transaction', () => late.admission.pool.has(hash), GOSSIP_MS);
      // Published by the retry, or fetched first through the pool exchange and gossiped back,
      // which ends the retry: either way it leaves the retry queue once.
      await waitFor('the lone node to settle its retry', async () => {
        const text = await metricsOf(lone);
        return sample(text, 'service_execution_gossip_published_total', { result: 'sent' }) + sample(text, 'service_execution_gossip_published_total', { result: 'peer_has' }) === 1;
      }, GOSSIP_MS);
    } finally {
      await late.stop();
    }
  } finally {
    await lone.stop();
  }
});

S('--no-p2p: no host, /health peers 0', async () => {
  const node = await startNode();
  try {
    assert.is(node.p2p, undefined);
    assert.is((await get(node, '/health')).body.peers, 0);
    assert.is(sample(await metricsOf(node), 'service_execution_peer_count'), 0);
  } finally {
    await node.stop();
  }
});

S('P2P without a data directory is refused before anything starts', async () => {
  try {
    await startNode({ p2p: { host: '127.0.0.1', port: 0, bootnodes: [] } });
    assert.unreachable('started');
  } catch (err) {
    assert.instance(err, SvcError);
    assert.is((err as SvcError).code, 'P2P_NEEDS_DATA_DIR');
  }
});

S.run();
