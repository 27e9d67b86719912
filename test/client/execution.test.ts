/**
 * ExecutionClient's binary submissions against a real in-process node: submitRaw sends bytes as
 * SSZ and a 0x string as JSON with the same answer; submitBatch sends an SSZ envelope list; a refusal
 * is an ExecutionClientError carrying the node's code.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../src/core/codec/bytes.js';
import { GWEI } from '../../src/core/constants.js';
import { encodeTx } from '../../src/core/types/transaction.js';
import { ExecutionClient, ExecutionClientError } from '../../src/client/execution.js';
import { devnet, hashOf, transfer, withNode } from '../node/execution/fixture.js';

const { keys } = devnet();

test('submitRaw: bytes (SSZ) and 0x hex (JSON) give the same answer; a malformed envelope is the node\'s MALFORMED_INPUT', async () => {
  const tx = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
  const asBytes = await withNode(async (node) => new ExecutionClient(node.restUrl).submitRaw(encodeTx(tx)));
  const asHex = await withNode(async (node) => new ExecutionClient(node.restUrl).submitRaw(toHex(encodeTx(tx))));
  assert.equal(asBytes, { hash: hashOf(tx), status: 'ready' });
  assert.equal(asBytes, asHex);
  await withNode(async (node) => {
    try {
      await new ExecutionClient(node.restUrl).submitRaw(encodeTx(tx).subarray(0, 50));
      assert.unreachable('a truncated envelope is refused');
    } catch (err) {
      assert.instance(err, ExecutionClientError);
      assert.is((err as ExecutionClientError).code, 'MALFORMED_INPUT');
      assert.is((err as ExecutionClientError).httpStatus, 400);
    }
  });
});

test('submitBatch: one SSZ request, an outcome per entry in order', async () => {
  await withNode(async (node) => {
    const a = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
    const b = transfer(keys.accounts[1]!, { nonce: 0, gasPrice: 3n * GWEI });
    const r = await new ExecutionClient(node.restUrl).submitBatch([encodeTx(a), Uint8Array.of(0, 1), encodeTx(b)]);
    assert.is(r.accepted, 2);
    assert.equal(r.results.map((x) => [x.hash === null ? null : x.hash.length, x.status, x.error?.code]), [[66, 'accepted', undefined], [66, 'rejected', 'MALFORMED_INPUT'], [66, 'accepted', undefined]]);
    assert.equal([r.results[0]!.hash, r.results[2]!.hash], [hashOf(a), hashOf(b)]);
    assert.is(node.admission.pool.size, 2);
  });
});

test.run();
