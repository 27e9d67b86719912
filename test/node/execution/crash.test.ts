/**
 * Crash safety of the real `svc node execution` process: a burst of blocks is imported through
 * newPayload and the process is SIGKILLed while a request is in flight, several times. Each
 * restart must come up with one of the imported blocks as head (never behind an acknowledged one)
 * and keep importing; at the end its state must equal a replay of its canonical chain on a fresh
 * in-memory node (balances of every involved account and every state root).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { toHex } from '../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { type Block, blockHash, blockToJson } from '../../../src/core/types/block.js';
import { devnet, expectOk, GENESIS_TIME, genesisBranch, http, importOk, makeBlock, type ParentRef, startNode, TOKEN, transfer, withTempDir } from './fixture.js';
import { type Proc, startProc } from './process.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const RECIPIENTS = ['0x00000000000000000000000000000000000000f1', '0x00000000000000000000000000000000000000f2', '0x00000000000000000000000000000000000000f3'];
const INVOLVED = [acc0.address, acc1.address, ...keys.validators.map((v) => v.address), ...RECIPIENTS];
const BLOCKS = 30;
const GENESIS_HASH = toHex(genesisHash(genesis));

/** A linear chain of BLOCKS blocks: each moves value from acc0 (and every other one from acc1 too). */
async function buildChain(): Promise<Array<{ block: Block; hash: string }>> {
  const out: Array<{ block: Block; hash: string }> = [];
  // Each header names its parent's post-state root: an in-memory node computes them.
  const builder = await startNode({ faucet: undefined });
  let parent: ParentRef = { hash: GENESIS_HASH, index: 0, timestamp: GENESIS_TIME * 1000, branch: genesisBranch() };
  let n1 = 0;
  for (let i = 1; i <= BLOCKS; i++) {
    const txs = [transfer(acc0, { nonce: i - 1, to: RECIPIENTS[i % 3]!, value: BigInt(i) * 1000n })];
    if (i % 2 === 0) txs.push(transfer(acc1, { nonce: n1++, to: RECIPIENTS[(i + 1) % 3]!, value: TOKEN + BigInt(i) }));
    const v = i % 2;
    const block = makeBlock(parent, { txs, proposer: keys.validators[v]!, validatorIndex: v });
    const hash = toHex(blockHash(block.header));
    out.push({ block, hash });
    parent = (await importOk(builder, block)).ref;
    assert.is(parent.hash, hash);
  }
  await builder.stop();
  return out;
}

/** Sends `body` to newPayload and SIGKILLs the process once the request is written, after `jitterMs`. */
function postAndKill(p: Proc, body: string, jitterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${p.rest}/api/v1/engine/newPayload`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    req.on('error', () => undefined); // the connection dies with the process
    req.on('response', (res) => res.resume());
    req.on('finish', () => {
      // Fault injection, not synchronisation: vary where in the import the kill lands.
      setTimeout(() => {
        p.child.kill('SIGKILL');
        resolve();
      }, jitterMs);
    });
    req.end(body);
  });
}

async function headOf(base: string): Promise<{ index: number; hash: string }> {
  const h = await http(base, '/health');
  assert.is(h.status, 200, h.text);
  return { index: h.body.latest_block, hash: h.body.head_hash };
}

const crash = suite('crash: SIGKILL during block import');

crash('restarts come up on an imported block at or after the last acknowledged one, and equal a replay of the chain', async () => {
  const chain = await buildChain();
  const hashAt = (i: number) => (i === 0 ? GENESIS_HASH : chain[i - 1]!.hash);
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'genesis.json'), JSON.stringify(genesis, null, 2));
    // Per cycle: blocks acknowledged before the kill, and the kill jitter.
    const cycles: Array<[number, number]> = [
      [6, 0],
      [7, 3],
      [5, 8],
      [4, 1],
    ];
    let acked = 0;
    let running: Proc | undefined;
    try {
      for (const [count, jitter] of cycles) {
        const p = (running = await startProc(dir));
        const head = await headOf(p.rest);
        assert.ok(head.index >= acked && head.index <= acked + 1, `restarted at ${head.index}, last acknowledged ${acked}`);
        assert.is(head.hash, hashAt(head.index), 'the head is one of the imported blocks');
        acked = head.index;
        for (let k = 0; k < count; k++) {
          const { block, hash } = chain[acked]!;
          const r = await http(p.rest, '/api/v1/engine/newPayload', { json: blockToJson(block) });
          const data = expectOk(r);
          assert.is(data.block_hash, hash);
          assert.is(data.canonical, true);
          acked = block.header.index;
        }
        await postAndKill(p, JSON.stringify(blockToJson(chain[acked]!.block)), jitter);
        const exit = await p.exited;
        assert.is(exit.signal, 'SIGKILL');
        running = undefined;
      }

      // Final restart: compare with a replay of its canonical chain on a fresh in-memory node.
      const p = (running = await startProc(dir));
      const head = await headOf(p.rest);
      assert.ok(head.index >= acked && head.index <= acked + 1, `restarted at ${head.index}, last acknowledged ${acked}`);
      assert.is(head.hash, hashAt(head.index));
      assert.ok(head.index >= 22, 'the burst imported blocks across the kills');
      const replay = await startNode({ faucet: undefined });
      try {
        for (let n = 1; n <= head.index; n++) {
          const stored = expectOk(await http(p.rest, `/api/v1/blocks/${n}`));
          assert.is(stored.hash, hashAt(n));
          assert.is(stored.canonical, true);
          const res = expectOk(await http(replay.restUrl, '/api/v1/engine/newPayload', { json: stored.block }));
          assert.is(res.block_hash, stored.hash);
          assert.is(res.state_root, stored.state_root, `state root of block ${n}`);
          for (const [i, tx] of (stored.transactions as string[]).entries()) {
            assert.equal(expectOk(await http(p.rest, `/api/v1/receipts/${tx}`)), res.receipts[i], `receipt ${tx}`);
          }
        }
        for (const address of INVOLVED) {
          const a = expectOk(await http(p.rest, `/api/v1/accounts/${address}`));
          const b = expectOk(await http(replay.restUrl, `/api/v1/accounts/${address}`));
          assert.equal({ balance: a.balance, nonce: a.nonce }, { balance: b.balance, nonce: b.nonce }, address);
        }
        assert.is(expectOk(await http(p.rest, `/api/v1/accounts/${acc0.address}`)).nonce, head.index, 'one acc0 transfer per block');
        const proofA = expectOk(await http(p.rest, `/api/v1/accounts/${acc0.address}/proof`));
        const proofB = expectOk(await http(replay.restUrl, `/api/v1/accounts/${acc0.address}/proof`));
        assert.is(proofA.stateRoot, proofB.stateRoot, 'the restarted node state root equals the replay');
        assert.is(proofA.block_hash, head.hash, 'the proof is against the head block');
        assert.equal(proofA.accountProof, proofB.accountProof);
        // And it keeps importing.
        if (head.index < BLOCKS) expectOk(await http(p.rest, '/api/v1/engine/newPayload', { json: blockToJson(chain[head.index]!.block) }));
      } finally {
        await replay.stop();
      }
      p.child.kill('SIGTERM');
      const exit = await p.exited;
      assert.is(exit.code, 0, `clean shutdown on SIGTERM:\n${p.stderr()}`);
      running = undefined;
    } finally {
      if (running) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    }
  });
});

crash.run();
