/**
 * Engine calls go first: while a newPayload is in flight (here, its body is still arriving),
 * a public receipt lookup over REST or JSON-RPC waits and /health still answers; once the engine
 * call is answered, the lookups are.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { blockToJson } from '../../../src/core/types/block.js';
import { expectOk, genesisRef, get, hashOf, importOk, makeBlock, rpc, transfer, waitFor, withNode, devnet } from './fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;

/** Starts a POST and sends only the first half of its body; `finish` sends the rest and resolves to the status, `drop` closes the connection. */
function halfPost(url: string, body: string): { finish: () => Promise<number>; drop: () => void } {
  const u = new URL(url);
  const bytes = Buffer.from(body);
  let status: (n: number) => void = () => undefined;
  const answered = new Promise<number>((resolve) => (status = resolve));
  const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': bytes.length } }, (res) => {
    res.resume();
    res.on('end', () => status(res.statusCode ?? 0));
  });
  req.on('error', () => undefined);
  req.write(bytes.subarray(0, bytes.length >> 1));
  return {
    drop: () => req.destroy(),
    finish: () => {
      req.end(bytes.subarray(bytes.length >> 1));
      return answered;
    },
  };
}

test('public lookups wait while an engine call is in flight; /health does not', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const tx = transfer(acc0, { nonce: 0 });
    const b1 = await importOk(node, makeBlock(g, { txs: [tx] }));
    const b2 = makeBlock(b1.ref, { txs: [transfer(acc0, { nonce: 1 })] });
    const engine = halfPost(`${node.restUrl}/api/v1/engine/newPayload`, JSON.stringify(blockToJson(b2)));
    // The engine request is in flight once the gate counts it; a lookup started now must wait.
    const before = node.enginePriority.deferred;
    let restDone = false;
    let rpcDone = false;
    const restLookup = get(node, `/api/v1/transactions/${hashOf(tx)}/receipt`).then((r) => ((restDone = true), r));
    const rpcLookup = rpc(node, 'eth_getTransactionReceipt', [hashOf(tx)]).then((r) => ((rpcDone = true), r));
    await waitFor('both lookups deferred behind the engine call', () => node.enginePriority.deferred === before + 2, 20_000);
    assert.is((await get(node, '/health')).status, 200, '/health is not deferred');
    assert.not.ok(restDone || rpcDone, 'no lookup answered while the engine call is in flight');
    assert.is(await engine.finish(), 200);
    assert.is(expectOk(await restLookup).transactionHash, hashOf(tx));
    assert.is((await rpcLookup).result.transactionHash, hashOf(tx));
    assert.is(node.chain.head().index, 2);
  });
});

test('an engine call dropped mid-body releases the lookups at once, not after a slot', async () => {
  await withNode(async (node) => {
    const g = await genesisRef(node);
    const tx = transfer(acc0, { nonce: 0 });
    await importOk(node, makeBlock(g, { txs: [tx] }));
    const engine = halfPost(`${node.restUrl}/api/v1/engine/newPayload`, JSON.stringify(blockToJson(makeBlock(g, { salt: 3 }))));
    const before = node.enginePriority.deferred;
    const lookup = get(node, `/api/v1/transactions/${hashOf(tx)}/receipt`);
    await waitFor('the lookup deferred behind the engine call', () => node.enginePriority.deferred === before + 1, 20_000);
    engine.drop();
    assert.is(expectOk(await lookup).transactionHash, hashOf(tx));
    // The gate is idle again: the next lookup is not deferred.
    assert.is(expectOk(await get(node, `/api/v1/transactions/${hashOf(tx)}/receipt`)).transactionHash, hashOf(tx));
    assert.is(node.enginePriority.deferred, before + 1);
  });
});

test.run();
