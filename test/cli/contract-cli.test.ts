/**
 * `svc contract deploy|call|read|logs` as real CLI processes: usage errors exit 2 before anything
 * is read or sent, bad files exit 1 naming the problem, and `read`/`logs` against a real
 * in-process execution node (logs from its log index, decoded; a read at an address without code
 * returns no values).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Receipt } from '../../src/api/execution.js';
import { toHex } from '../../src/core/codec/bytes.js';
import { addressTopic, encodeValues, eventTopic } from '../../src/core/codec/calldata.js';
import { LogIndex } from '../../src/node/execution/logs.js';
import type { ExecutionNode } from '../../src/node/execution/node.js';
import { WriteBatch } from '../../src/node/shared/store.js';
import { devnet, genesisRef, importOk, makeBlock, startNode, transfer } from '../node/execution/fixture.js';
import { cliEnv, expectCliError, expectJsonOk, mapLimit, runCli, withTempDir } from '../helpers/cli.js';

const C = '0x' + 'c0'.repeat(20);
const HOLDER = '0x' + 'e1'.repeat(20);
const DEAD = 'http://127.0.0.1:9'; // discard port: nothing listens, and no case below gets that far

const test = suite('cli: svc contract');

test('usage errors exit 2 and bad files exit 1, before any network call', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const good = join(dir, 'ok.wasm');
    const bad = join(dir, 'bad.wasm');
    await writeFile(good, Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0));
    await writeFile(bad, 'not a module');
    const cases: Array<[string[], { exit: number; code: string; message?: string; messageStartsWith?: string }]> = [
      [['contract', 'deploy'], { exit: 2, code: 'USAGE', messageStartsWith: 'Missing 1 required arg' }],
      [['contract', 'deploy', good], { exit: 2, code: 'USAGE', messageStartsWith: 'Missing required flag from' }],
      [['contract', 'deploy', join(dir, 'none.wasm'), '--from', 'w'], { exit: 1, code: 'CONTRACT_FILE', message: `cannot read ${join(dir, 'none.wasm')}: no such file` }],
      [['contract', 'deploy', dir, '--from', 'w'], { exit: 1, code: 'CONTRACT_FILE', message: `cannot read ${dir}: it is a directory` }],
      [['contract', 'deploy', bad, '--from', 'w'], { exit: 1, code: 'CONTRACT_FILE', messageStartsWith: `${bad} is not a WebAssembly module` }],
      [['contract', 'deploy', good, 'u64:18446744073709551616', '--from', 'w'], { exit: 2, code: 'USAGE', message: 'argument 1 ("u64:18446744073709551616"): u64 out of range: 18446744073709551616' }],
      [['contract', 'deploy', good, 'x', 'bool:maybe', '--from', 'w'], { exit: 2, code: 'USAGE', message: 'argument 2 ("bool:maybe"): bool must be true or false; got "maybe"' }],
      [['contract', 'deploy', good, '--from', 'w', '--nope'], { exit: 2, code: 'USAGE', messageStartsWith: 'Nonexistent flag: --nope' }],
      [['contract', 'call', C], { exit: 2, code: 'USAGE', messageStartsWith: 'Missing 1 required arg' }],
      [['contract', 'call', '0x12', 'm', '--from', 'w'], { exit: 2, code: 'USAGE', message: 'malformed address: expected a 0x-prefixed 20-byte hex address' }],
      [['contract', 'call', C, 'two words', '--from', 'w'], { exit: 2, code: 'USAGE', message: 'method name must be 1..64 printable ASCII characters without spaces; got "two words"' }],
      [['contract', 'call', C, 'm', 'address:0x12', '--from', 'w'], { exit: 2, code: 'USAGE', messageStartsWith: 'argument 1 ("address:0x12"): address must be 0x and 40 hex digits' }],
      [['contract', 'read', C, 'x'.repeat(65)], { exit: 2, code: 'USAGE', messageStartsWith: 'method name must be 1..64' }],
      [['contract', 'read', C, 'get', '--from', 'bob'], { exit: 2, code: 'USAGE', message: 'malformed address: expected a 0x-prefixed 20-byte hex address' }],
      [['contract', 'logs', 'nope'], { exit: 2, code: 'USAGE', message: 'malformed address: expected a 0x-prefixed 20-byte hex address' }],
      [['contract', 'logs', C, '--from', 'soon'], { exit: 2, code: 'USAGE', message: '--from must be a block number, latest, finalized or earliest; got "soon"' }],
      [['contract', 'logs', C, '--to', '-1'], { exit: 2, code: 'USAGE' }],
    ];
    await mapLimit(cases, 2, async ([args, e]) => {
      const r = await runCli([...args, '--execution-url', DEAD, '--json'], env);
      expectCliError(r, { ...e, json: true });
    });
  });
});

const node = suite<{ node: ExecutionNode; hash: string }>('cli: svc contract against a node', {} as { node: ExecutionNode; hash: string });
node.before(async (ctx) => {
  ctx.node = await startNode();
  const { keys } = devnet();
  const t = transfer(keys.accounts[0]!, { nonce: 0 });
  const { result } = await importOk(ctx.node, makeBlock(await genesisRef(ctx.node), { txs: [t] }));
  ctx.hash = result.block_hash;
});
node.after(async (ctx) => ctx.node?.stop());

node('logs: a Transfer event decoded (address topics, tagged data); --event filters by name', async ({ node, hash }) => {
  const log = {
    address: C,
    topics: [eventTopic('Transfer'), addressTopic(HOLDER), addressTopic(C)],
    data: toHex(encodeValues([{ type: 'u256', value: 250n }])),
    blockNumber: 1,
    blockHash: hash,
    transactionHash: '0x' + '11'.repeat(32),
    transactionIndex: 0,
    logIndex: 0,
  };
  // What the chain writes when the block becomes canonical.
  const batch = new WriteBatch();
  new LogIndex(node.chain.store).put(batch, { hash, index: 1 }, [{ logs: [log] } as unknown as Receipt]);
  await node.chain.store.write(batch);
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const json = expectJsonOk(await runCli(['contract', 'logs', C, '--from', '0', '--event', 'Transfer', '--execution-url', node.restUrl, '--json'], env));
    assert.equal(json, { from_block: 0, to_block: 1, logs: [{ ...log, event: 'Transfer', topic_addresses: [HOLDER, C], values: [{ type: 'u256', value: '250' }] }] });
    assert.equal(expectJsonOk(await runCli(['contract', 'logs', C, '--from', '0', '--event', 'Approval', '--execution-url', node.restUrl, '--json'], env)).logs, []);
    assert.is(expectJsonOk(await runCli(['contract', 'logs', C, '--execution-url', node.restUrl, '--json'], env)).logs.length, 1, 'without --from: the last 10,000 blocks');
    const human = await runCli(['contract', 'logs', C, '--from', 'earliest', '--execution-url', node.restUrl], env);
    assert.is(human.code, 0, human.stderr);
    assert.match(human.stdout, `topic1  ${HOLDER} (address)`);
    assert.match(human.stdout, 'u256     250');
    // read goes to the node's call endpoint: at an address without code the call runs nothing.
    assert.equal(expectJsonOk(await runCli(['contract', 'read', C, 'balanceOf', HOLDER, '--execution-url', node.restUrl, '--json'], env)).values, []);
  });
});

test.run();
node.run();
