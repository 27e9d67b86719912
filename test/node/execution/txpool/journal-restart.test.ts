/**
 * A pool journal far past the scan's 1 MiB read buffer survives a restart of the real
 * `svc node execution` process: 4,000 transfers from 40 senders (over 20 MB of journal) answered
 * 202 just before a SIGKILL are all back in the pool after the restart; 400 more, then a clean
 * SIGTERM, and all 4,400 are back again; blocks built from the restarted pool include every one
 * with status 1. (Before the fix, every envelope read before the scan's last refill came back
 * overwritten and was dropped as malformed.)
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { initSignatureBackend } from '../../../../src/core/crypto/mldsa.js';
import { genesisHash } from '../../../../src/core/genesis/genesis.js';
import { genesisStateRoot } from '../../../../src/core/state/genesis-root.js';
import { encodeBlock } from '../../../../src/core/types/block.js';
import { decodeEnvelopeList, decodeTx, encodeEnvelopeList, encodeTx, type StandardTx } from '../../../../src/core/types/transaction.js';
import { POOL_JOURNAL_FILE } from '../../../../src/node/execution/txpool/journal.js';
import { devnet, expectOk, fixtureGenesis, GENESIS_TIME, genesisBranch, hashOf, http, makeBlock, type ParentRef, refOf, transfer, withTempDir } from '../fixture.js';
import { limited, mempool, type Proc, startProc, stopClean } from '../process.js';

const SENDERS = 40;
/** Nonces per sender before the kill: 4,000 transfers of 5.3 KB, over 20 MB of journal. */
const BEFORE_KILL = 100;
/** Nonces per sender added before the clean restart. */
const BEFORE_TERM = 10;
const MIN_JOURNAL_BYTES = 20 << 20;
const SSZ = { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' };
/** A restart replays (and verifies again) thousands of signatures: more than the default start deadline on a loaded machine. */
const START_MS = 90_000;
const PROC = { args: ['--rate-limit', '0'], startMs: START_MS };

// The fixture's chain with 40 funded senders: same chain id, validators and timing, so the
// fixture's block builder signs valid blocks for it.
const { genesis, keys } = fixtureGenesis(SENDERS);
const senders = keys.filter((k) => k.role === 'account').map((k) => k.keys);

/** Transfers of nonces [from, to) from every sender, nonce by nonce (so each batch arrives in nonce order). */
function transfers(from: number, to: number): StandardTx[] {
  const out: StandardTx[] = [];
  for (let n = from; n < to; n++) for (const s of senders) out.push(transfer(s, { nonce: n, value: BigInt(n + 1) }));
  return out;
}

/** Submits `txs` in SSZ batches; every one must be accepted (durable before the answer). */
async function submitAll(p: Proc, txs: readonly StandardTx[]): Promise<void> {
  const batches: StandardTx[][] = [];
  for (let i = 0; i < txs.length; i += 1000) batches.push(txs.slice(i, i + 1000));
  for (const batch of batches) {
    const r = expectOk(await http(p.rest, '/api/v1/transactions/batch', { body: encodeEnvelopeList(batch.map(encodeTx)), headers: SSZ }));
    assert.is(r.accepted, batch.length, JSON.stringify((r.results as Array<{ status: string }>).find((x) => x.status !== 'accepted')));
  }
}

/** Asserts the pool holds exactly `expected`, naming how many are missing when it does not. */
async function poolIs(base: string, expected: readonly string[], when: string): Promise<void> {
  const pool = await mempool(base);
  const held = new Set(pool);
  const missing = expected.filter((h) => !held.has(h)).length;
  assert.is(missing, 0, `${when}: ${missing} of ${expected.length} acknowledged transfers missing from the pool`);
  assert.equal(pool, [...expected].sort(), when);
}

async function journalBytes(dir: string): Promise<number> {
  const found = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(POOL_JOURNAL_FILE));
  assert.is(found.length, 1, `one pool journal under ${dir}: ${found.join(', ')}`);
  return (await stat(join(dir, found[0]!))).size;
}

const restart = suite('restart with a pool journal of over 20 MB');

restart('4,000 transfers from 40 senders survive a SIGKILL, 4,400 a clean restart after it, then all are included with status 1', async () => {
  await initSignatureBackend();
  // The fixture's validators are this chain's, so its blocks are valid here.
  assert.equal(genesis.validators, devnet().genesis.validators);
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'genesis.json'), JSON.stringify(genesis, null, 2));
    const first = transfers(0, BEFORE_KILL);
    const second = transfers(BEFORE_KILL, BEFORE_KILL + BEFORE_TERM);
    let running: Proc | undefined;
    try {
      const p = (running = await startProc(dir, {}, PROC));
      await submitAll(p, first);
      // Killed as soon as the last batch is answered: nothing after the answers may be needed.
      p.child.kill('SIGKILL');
      assert.is((await p.exited).signal, 'SIGKILL');
      running = undefined;
      const bytes = await journalBytes(dir);
      assert.ok(bytes >= MIN_JOURNAL_BYTES, `journal of ${bytes} bytes`);
      console.log(`journal of ${(bytes / 2 ** 20).toFixed(1)} MiB before the restart`);

      const q = (running = await startProc(dir, {}, PROC));
      await poolIs(q.rest, first.map(hashOf), 'after the SIGKILL');
      await submitAll(q, second);
      await stopClean(q);
      running = undefined;

      const all = [...first, ...second].map(hashOf).sort();
      const r = (running = await startProc(dir, {}, PROC));
      await poolIs(r.rest, all, 'after the clean restart');

      // Blocks from the restarted pool, each as full as the proposer's view allows, until it is empty.
      let parent: ParentRef = { hash: toHex(genesisHash(genesis)), index: 0, timestamp: GENESIS_TIME * 1000, branch: genesisBranch(genesis), stateRoot: toHex(genesisStateRoot(genesis)) };
      for (let blocks = 0; ; blocks++) {
        assert.ok(blocks <= 10, 'the pool empties within 10 blocks');
        const res = await fetch(`${r.rest}/api/v1/engine/getPendingTransactions`, { headers: { accept: SSZ.accept } });
        assert.is(res.status, 200);
        const pending = decodeEnvelopeList(new Uint8Array(await res.arrayBuffer())).map(decodeTx);
        if (pending.length === 0) break;
        const block = makeBlock(parent, { txs: pending });
        const imported = expectOk(await http(r.rest, '/api/v1/engine/newPayload', { body: encodeBlock(block), headers: { 'content-type': SSZ['content-type'] } }));
        assert.is(imported.status, 'VALID');
        assert.is(imported.canonical, true);
        parent = refOf(block, imported.block_hash, imported.state_root);
      }
      assert.equal(await mempool(r.rest), [], 'the pool emptied into the blocks');
      await limited(all, 16, async (h) => {
        const status = expectOk(await http(r.rest, `/api/v1/transactions/${h}`));
        assert.is(status.state, 'Confirmed', h);
        assert.is(status.receipt.status, 1, h);
      });
      await stopClean(r);
      running = undefined;
    } finally {
      if (running) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    }
  });
});

restart.run();
