/**
 * The beacon against a malformed newPayload answer from its execution node: a compact answer
 * whose outcome columns call a plain transfer's receipt a successful bridge operation (so the
 * beacon parses that receipt, and finds it disagrees) is a 502 EXECUTION_ERROR envelope, and the
 * beacon records nothing: its head, its block by slot and its bridge are as before. The same block
 * proposed again with the honest answer is accepted. The execution node is real; a proxy in front
 * of it rewrites only that one answer.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImportResult } from '../../../src/api/execution.js';
import { decodeImportAnswer, encodeImportAnswer } from '../../../src/api/import-answer.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import { silentLogger } from '../../../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath } from '../../../src/wallet/derivation.js';
import { expectEnvelope } from '../execution/fixture.js';
import { beaconHead, bget, buildProposal, currentSlot, type Harness, harnessGenesis, okData, proposeBlock, transferTx } from './fixture.js';

const NEW_PAYLOAD = '/api/v1/engine/newPayload';

/** A proxy to `target` that, while `lie` is set, rewrites compact newPayload answers with `rewrite`. */
async function answerProxy(target: string, rewrite: (bytes: Uint8Array) => Uint8Array): Promise<{ url: string; server: Server; lie: { on: boolean }; rewritten: { count: number } }> {
  const lie = { on: false };
  const rewritten = { count: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length' && k !== 'connection') headers[k] = v;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(target + req.url, { method: req.method, headers, body })
        .then(async (r) => {
          let out: Uint8Array = new Uint8Array(await r.arrayBuffer());
          const type = r.headers.get('content-type') ?? 'application/json';
          if (lie.on && req.url === NEW_PAYLOAD && r.status === 200 && type.startsWith('application/octet-stream')) {
            out = rewrite(out);
            rewritten.count++;
          }
          res.writeHead(r.status, { 'content-type': type, 'content-length': out.length });
          res.end(out);
        })
        .catch((err: Error) => {
          res.writeHead(599, { 'content-type': 'text/plain' });
          res.end(err.message);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, lie, rewritten };
}

/** The answer with receipt 0's outcome columns saying "successful bridge_lock", its JSON unchanged. */
function bridgeLie(bytes: Uint8Array): Uint8Array {
  const a = decodeImportAnswer(bytes);
  const receipts = a.receipts;
  const json = receipts.map((r) => JSON.stringify(r));
  const lied: ImportResult = { ...a, receipts: receipts.map((r, i) => (i === 0 ? { ...r, status: 1, kind: 'bridge_lock' } : r)) };
  return encodeImportAnswer(lied, json);
}

const test = suite('beacon: a malformed newPayload answer');

test('a receipt that disagrees with its outcome columns is 502 EXECUTION_ERROR and nothing is recorded; the honest answer is then accepted', async () => {
  const genesis = harnessGenesis({ validators: 2, slotsAgo: 12 });
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-answer-'));
  const exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
  const proxy = await answerProxy(exec.restUrl, bridgeLie);
  let beacon: BeaconNode | undefined;
  try {
    const tokenFile = join(dir, 'validator-token');
    beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: proxy.url, tokenFile, log: silentLogger });
    const h: Harness = {
      genesis,
      exec,
      beacon,
      token: (await readFile(tokenFile, 'utf8')).trim(),
      dir,
      validators: genesis.validators.map((_, i) => deriveWalletKeys(seed, walletPath(Branch.Validators, i))),
      accounts: [deriveWalletKeys(seed, walletPath(Branch.Accounts, 0))],
    };
    const before = await beaconHead(h);
    const slot = before.slot + 1;
    assert.ok(slot <= currentSlot(h), 'the genesis lies far enough in the past for a next slot');
    const { block } = await buildProposal(h, { slot, transactions: [transferTx(h, h.accounts[0]!, 0n)] });

    proxy.lie.on = true;
    expectEnvelope(await proposeBlock(h, block), 502, 'EXECUTION_ERROR', /malformed/);
    assert.is(proxy.rewritten.count, 1, 'the beacon asked for the compact answer and got the rewritten one');
    assert.equal(await beaconHead(h), before, 'the head did not move');
    assert.is((await bget(h, `/api/v1/beacon/blocks/${slot}`)).status, 404, 'no block is recorded at the slot');

    proxy.lie.on = false;
    const accepted = okData(await proposeBlock(h, block));
    assert.is(accepted.slot, slot);
    assert.is((await beaconHead(h)).slot, slot, 'the honest answer makes the block the head');
  } finally {
    await beacon?.stop().catch(() => undefined);
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await exec.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
