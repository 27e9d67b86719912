/**
 * GET /api/v1/engine/getPayload: what the beacon builds a proposer's block from, in one call.
 * The parent's post-state root and the pool's build order, as SSZ (the engine client) and as
 * JSON; the proposer's own RANDAO re-commitment and its later nonces held back unless it may
 * include it; bad queries refused with the envelope, an unknown parent 404.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { RANDAO_COMMIT_ADDRESS, TX_BASE_GAS } from '../../../src/core/constants.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { EngineClient } from '../../../src/client/engine.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { DEFAULT_CHECKPOINT_BITS, RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { devnet, expectEnvelope, expectOk, get, startNode, submitOk, transfer } from './fixture.js';

const { genesis, keys } = devnet();
const val0 = keys.validators[0]!;
const val1 = keys.validators[1]!;
const acc0 = keys.accounts[0]!;
const gen1 = new RandaoChain(val1.mldsaSeed, genesis.config.randao_chain_length, DEFAULT_CHECKPOINT_BITS, 1);

type Ctx = { node: ExecutionNode };
const test = suite<Ctx>('execution: engine getPayload', { node: undefined as unknown as ExecutionNode });
test.before(async (ctx) => {
  ctx.node = await startNode();
});
test.after(async (ctx) => {
  await ctx.node.stop();
});

const hashes = (envelopes: Uint8Array[]): string[] => envelopes.map((e) => toHex(sha3(e)));

test('state root of the parent and the build order; the proposer\'s own re-commitment and its later nonces held back', async ({ node }) => {
  const parent = expectOk(await get(node, '/api/v1/blocks/0'));
  const a = transfer(acc0, { nonce: 0 });
  const b = transfer(acc0, { nonce: 1 });
  const recommit = transfer(val1, { nonce: 0, to: RANDAO_COMMIT_ADDRESS, value: 0n, data: gen1.commitment() });
  const after = transfer(val1, { nonce: 1 });
  for (const tx of [a, b, recommit, after]) await submitOk(node, tx);
  const mine = [a, b].map((t) => toHex(sha3(encodeTx(t))));
  const all = [a, b, recommit, after].map((t) => toHex(sha3(encodeTx(t))));

  const engine = new EngineClient(node.restUrl);
  try {
    const other = await engine.payload(parent.hash, val0.address, false);
    assert.is(toHex(other.stateRoot), parent.state_root, "the parent's post-state root");
    assert.equal(hashes(other.envelopes).sort(), [...all].sort(), "another proposer packs validator 1's re-commitment");
    const own = await engine.payload(parent.hash, val1.address, false);
    assert.equal(hashes(own.envelopes).sort(), [...mine].sort(), 'its own re-commitment, and the nonce after it, wait for another proposer');
    const alone = await engine.payload(parent.hash, val1.address, true);
    assert.is(alone.envelopes.length, 4, 'a lone validator includes its own');
  } finally {
    engine.close();
  }

  // JSON for a caller that does not ask for SSZ: the same payload.
  const json = expectOk(await get(node, `/api/v1/engine/getPayload?parent=${parent.hash}&proposer=${val1.address}`));
  assert.is(json.parent, parent.hash);
  assert.is(json.state_root, parent.state_root);
  assert.is(json.count, 2);
  assert.is(json.transactions.length, 2);
  assert.is(json.gas, 2 * Number(TX_BASE_GAS), "the packed transactions' gas limits");
});

test('bad queries: the envelope; an unknown parent is 404', async ({ node }) => {
  const parent = expectOk(await get(node, '/api/v1/blocks/0')).hash as string;
  expectEnvelope(await get(node, '/api/v1/engine/getPayload'), 400, 'MALFORMED_INPUT', 'malformed parent: required');
  expectEnvelope(await get(node, '/api/v1/engine/getPayload?parent=0x12'), 400, 'MALFORMED_INPUT', /malformed parent/);
  expectEnvelope(await get(node, `/api/v1/engine/getPayload?parent=${toHex(new Uint8Array(32).fill(7))}`), 404, 'NOT_FOUND');
  expectEnvelope(await get(node, `/api/v1/engine/getPayload?parent=${parent}&proposer=0x1234`), 400, 'MALFORMED_INPUT', /malformed proposer/);
  expectEnvelope(await get(node, `/api/v1/engine/getPayload?parent=${parent}&proposer=${val1.address}&own_recommit=maybe`), 400, 'MALFORMED_INPUT', /malformed own_recommit/);
  // The parent's hash in any case is the same block.
  const upper = `0x${parent.slice(2).toUpperCase()}`;
  assert.is(expectOk(await get(node, `/api/v1/engine/getPayload?parent=${upper}`)).parent, parent);
});

test.run();
