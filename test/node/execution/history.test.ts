/**
 * `--history full|finalized` (pruning.ts): a full node keeps every block's state through finality,
 * side branches included, and still refuses to build below finality; the same data directory
 * restarted as finalized prunes what it kept, in batches across PRUNE_CATCH_UP_HEIGHTS, and the
 * refusal names what is kept; restarted as full again it keeps everything from there on.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { verifyAccountProof } from '../../../src/core/state/trie.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { PRUNE_CATCH_UP_HEIGHTS, defaultHistory } from '../../../src/node/execution/pruning.js';
import { STATE_DB_DIR } from '../../../src/node/execution/store.js';
import { devnet, expectEnvelope, expectOk, genesisRef, get, importOk, makeBlock, newPayload, type ParentRef, post, startNode, transfer, withTempDir } from './fixture.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
const val1 = keys.validators[1]!;
const X = '0x00000000000000000000000000000000000000d1';

const fcu = async (node: ExecutionNode, head: ParentRef, finalized: ParentRef) => expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: head.hash, finalized_block_hash: finalized.hash }));
const proof = (node: ExecutionNode, block: ParentRef) => get(node, `/api/v1/accounts/${X}/proof?block=${block.hash}`);

/** The proof of X at `block` verifies against that block's own state root. */
async function readable(node: ExecutionNode, block: ParentRef, what: string): Promise<void> {
  const p = expectOk(await proof(node, block));
  assert.is(p.stateRoot, (await node.chain.record(block.hash))!.state_root, `${what}: proved against its own root`);
  assert.ok(verifyAccountProof(parseHex(p.stateRoot, 'root', 32), p), `${what}: the proof verifies`);
}

/** Keys in the state database of a stopped node's data directory. */
async function stateKeys(dir: string): Promise<number> {
  const db = new ClassicLevel<string, string>(join(dir, STATE_DB_DIR));
  let n = 0;
  for await (const _ of db.keys()) n++;
  await db.close();
  return n;
}

test('devnets keep full history by default; other presets finalized', () => {
  assert.is(defaultHistory(genesis.preset), 'full');
  assert.is(defaultHistory('mainnet'), 'finalized');
});

test('full history: every state stays readable through finality; restarted as finalized it prunes in batches; as full again it keeps from there on', async () => {
  await withTempDir(async (dir) => {
    const heights = PRUNE_CATCH_UP_HEIGHTS + 44;
    let node = await startNode({ dataDir: dir, history: 'full' });
    const g = await genesisRef(node);
    let side: ParentRef;
    const chain: ParentRef[] = [g];
    try {
      side = (await importOk(node, makeBlock(g, { proposer: val1, salt: 3, txs: [transfer(acc0, { nonce: 0, to: X, value: 9n })] }))).ref;
      for (let i = 1; i <= heights; i++) {
        const tip = chain[chain.length - 1]!;
        chain.push((await importOk(node, makeBlock(tip, { txs: [transfer(acc0, { nonce: i - 1, to: X, value: BigInt(i) })] }))).ref);
        // Finality follows two blocks behind the head, as the beacon's would on a healthy chain.
        if (i > 2) await fcu(node, chain[i]!, chain[i - 2]!);
      }
      await fcu(node, chain[heights]!, chain[heights - 2]!);
      for (const h of [0, 1, 2, 100, PRUNE_CATCH_UP_HEIGHTS, heights - 3]) await readable(node, chain[h]!, `full: block ${h} below finality`);
      await readable(node, side, 'full: the side block finality abandoned');
      // Keeping a state is not building on it: a child of the abandoned side block is still refused.
      expectEnvelope(await newPayload(node, makeBlock(side, {})), 400, 'PARENT_STATE_PRUNED', /^Block parent is not a descendant of the finalized block/);
    } finally {
      await node.stop();
    }
    const keptKeys = await stateKeys(dir);

    const finalized = chain[heights - 2]!;
    node = await startNode({ dataDir: dir, history: 'finalized' });
    try {
      for (const [h, b] of [[1, chain[1]!], [100, chain[100]!], [PRUNE_CATCH_UP_HEIGHTS + 1, chain[PRUNE_CATCH_UP_HEIGHTS + 1]!], [heights - 4, chain[heights - 4]!], [1, side]] as const) {
        expectEnvelope(await proof(node, b), 410, 'STATE_PRUNED', new RegExp(`^the state of block ${h} \\(${b.hash}\\) is pruned: this node \\(--history finalized\\) keeps only the finalized block's parent's, its own and its descendants' states; a node started with --history full keeps every block's$`));
      }
      await readable(node, chain[heights - 3]!, 'finalized: the finalized block\'s parent');
      await readable(node, finalized, 'finalized: the finalized block');
      await readable(node, chain[heights]!, 'finalized: the head');
    } finally {
      await node.stop();
    }
    const prunedKeys = await stateKeys(dir);
    assert.ok(prunedKeys < keptKeys - heights, `pruning deleted what full history kept: ${keptKeys} → ${prunedKeys} state keys`);

    node = await startNode({ dataDir: dir, history: 'full' });
    try {
      expectEnvelope(await proof(node, chain[100]!), 410, 'STATE_PRUNED', new RegExp(`: this node keeps every block's state since it began keeping full history at block ${finalized.index} \\(and that block's parent's\\)$`));
      let tip = chain[heights]!;
      const more: ParentRef[] = [];
      for (let i = 0; i < 4; i++) {
        tip = (await importOk(node, makeBlock(tip, { txs: [transfer(acc0, { nonce: heights + i, to: X, value: 1n })] }))).ref;
        more.push(tip);
      }
      await fcu(node, tip, more[2]!);
      for (const b of [chain[heights - 3]!, finalized, chain[heights]!, more[0]!, more[1]!]) await readable(node, b, `full again: block ${b.index}`);
    } finally {
      await node.stop();
    }
  });
});

test('--history is recorded: a fresh directory in finalized mode prunes at finality as before', async () => {
  await withTempDir(async (dir) => {
    const node = await startNode({ dataDir: dir, history: 'finalized' });
    try {
      const g = await genesisRef(node);
      const b1 = (await importOk(node, makeBlock(g, {}))).ref;
      const b2 = (await importOk(node, makeBlock(b1, {}))).ref;
      const b3 = (await importOk(node, makeBlock(b2, {}))).ref;
      await fcu(node, b3, b2);
      await readable(node, b1, 'the finalized block\'s parent');
      expectEnvelope(await proof(node, g), 410, 'STATE_PRUNED', /--history finalized/);
    } finally {
      await node.stop();
    }
  });
});

test.run();
