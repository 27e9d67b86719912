/**
 * SIGKILL of the real `svc node execution` process once a block's body has reached the body file
 * but (with a cold block of many transactions, still being verified) before its batch: after the
 * restart the block is either fully there (head, receipts, transactions) or absent, with the file
 * cut back to the indexed end, and then imports again.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { toHex } from '../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../src/core/genesis/genesis.js';
import { blockToJson } from '../../../src/core/types/block.js';
import { BLOCK_BODIES_FILE } from '../../../src/node/execution/body-file.js';
import { devnet, expectOk, GENESIS_TIME, genesisBranch, hashOf, http, makeBlock, type ParentRef, refOf, transfer, withTempDir } from './fixture.js';
import { type Proc, startProc } from './process.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
/** Enough transactions that verifying the (never admitted) block takes a while after its body is written. */
const TXS = 64;
const TO = '0x00000000000000000000000000000000000000c1';

async function headOf(p: Proc): Promise<{ index: number; hash: string }> {
  const h = await http(p.rest, '/health');
  assert.is(h.status, 200, h.text);
  return { index: h.body.latest_block, hash: h.body.head_hash };
}

const sizeOf = async (path: string): Promise<number> => (await stat(path)).size;

/** Posts `body` to newPayload and SIGKILLs the process as soon as the body file grows past `size`. */
async function postAndKillOnGrowth(p: Proc, body: string, path: string, size: number): Promise<number> {
  const req = request(`${p.rest}/api/v1/engine/newPayload`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
  req.on('error', () => undefined); // the connection dies with the process
  req.on('response', (res) => res.resume());
  req.end(body);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const now = await sizeOf(path);
    if (now > size) {
      p.child.kill('SIGKILL');
      await p.exited;
      return now;
    }
    if (Date.now() > deadline) assert.unreachable('the body file never grew');
    await new Promise((r) => setImmediate(r));
  }
}

const t = suite('body file: SIGKILL between the body write and the batch');

t('the block is fully there or absent after a restart, and imports again', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'genesis.json'), JSON.stringify(genesis, null, 2));
    const path = join(dir, 'data', BLOCK_BODIES_FILE);
    const g: ParentRef = { hash: toHex(genesisHash(genesis)), index: 0, timestamp: GENESIS_TIME * 1000, branch: genesisBranch() };
    const b1 = makeBlock(g, { txs: [transfer(acc0, { nonce: 0, to: TO, value: 1n })] });
    let p: Proc | undefined = await startProc(dir);
    try {
      const r1 = expectOk(await http(p.rest, '/api/v1/engine/newPayload', { json: blockToJson(b1) }));
      const ref = refOf(b1, r1.block_hash, r1.state_root);
      const txs = Array.from({ length: TXS }, (_, i) => transfer(acc0, { nonce: i + 1, to: TO, value: 1n }));
      const b2 = makeBlock(ref, { txs });
      const before = await sizeOf(path);
      const grown = await postAndKillOnGrowth(p, JSON.stringify(blockToJson(b2)), path, before);
      assert.ok(grown > before);
      p = await startProc(dir);
      const head = await headOf(p);
      if (head.index === 2) {
        // The batch made it: everything of the block is readable.
        for (const tx of txs) assert.is(expectOk(await http(p.rest, `/api/v1/receipts/${hashOf(tx)}`)).blockNumber, 2);
      } else {
        assert.is(head.index, 1, 'the head is the last acknowledged block');
        assert.is(await sizeOf(path), before, 'the unindexed body was cut');
        assert.is((await http(p.rest, `/api/v1/receipts/${hashOf(txs[0]!)}`)).status, 404);
        const r2 = expectOk(await http(p.rest, '/api/v1/engine/newPayload', { json: blockToJson(b2) }));
        assert.is(r2.canonical, true);
      }
      // Either way the block is now stored, and reads back after another restart.
      p.child.kill('SIGTERM');
      assert.is((await p.exited).code, 0, p.stderr());
      p = await startProc(dir);
      assert.is((await headOf(p)).index, 2);
      const block = expectOk(await http(p.rest, '/api/v1/blocks/2'));
      assert.equal(block.transactions, txs.map(hashOf));
      for (const tx of [txs[0]!, txs[TXS - 1]!]) assert.is(expectOk(await http(p.rest, `/api/v1/receipts/${hashOf(tx)}`)).status, 1);
      p.child.kill('SIGTERM');
      assert.is((await p.exited).code, 0, p.stderr());
      p = undefined;
    } finally {
      if (p) {
        p.child.kill('SIGKILL');
        await p.exited;
      }
    }
  });
});

t.run();
