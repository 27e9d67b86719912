/**
 * The registry in the state (docs/protocol.md "The registry in the state"): genesis commits the
 * genesis validators' words, deposits and exits change exactly their words, and the registry proof
 * route serves any readable state's registry, paged, with proofs that verify against that state's
 * root and fail when anything served is changed.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { DEPOSIT_ADDRESS, EXIT_ADDRESS } from '../../../src/core/constants.js';
import { REGISTRY_ADDRESS, genesisRegistry, registryEntrySlot } from '../../../src/core/consensus/registry.js';
import { type RegistryProofWire, mergeRegistryPages, verifyRegistryProof } from '../../../src/core/light/registry.js';
import { LightClientError } from '../../../src/core/light/types.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import { parseHex } from '../../../src/core/codec/bytes.js';
import type { RegistryProofView } from '../../../src/api/execution.js';
import { devnet, expectEnvelope, expectOk, genesisRef, get, importOk, makeBlock, randaoChainOf, startNode, submitOk, TOKEN, transfer } from './fixture.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';

const { genesis, keys } = devnet();
const acc1 = keys.accounts[1]!;
const val1 = keys.validators[1]!;
const STAKE = 32n * TOKEN;

const registry = suite<{ node: ExecutionNode }>('registry in the state');
registry.before(async (ctx) => {
  ctx.node = await startNode();
});
registry.after(async (ctx) => {
  await ctx.node.stop();
});

const proofAt = async (node: ExecutionNode, query: string): Promise<RegistryProofView> => expectOk(await get(node, `/api/v1/registry/proof?${query}`));

function refused(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, LightClientError);
    assert.is((err as LightClientError).code, 'LIGHT_PROOF_INVALID');
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected LIGHT_PROOF_INVALID matching ${pattern}`);
}

registry('genesis commits its validators; deposits and exits change them; every page verifies and any tampering fails', async ({ node }) => {
  // Genesis: the words the document alone gives (genesisStateRoot) are what execution holds.
  const g = await proofAt(node, 'block=0');
  assert.is(g.proof.stateRoot, toHex(genesisStateRoot(genesis)));
  assert.equal(g.entries, genesisRegistry(genesis));
  const set0 = verifyRegistryProof(parseHex(g.proof.stateRoot, 'root'), g);
  assert.equal([...set0.values()].map((v) => [v.index, toHex(v.publicKey), v.stake, v.active]), genesis.validators.map((v) => [v.index, v.public_key, BigInt(v.stake), true]));

  // Block 1: a deposit joins as validator 2; block 2: validator 1 exits.
  const commitment = randaoChainOf(acc1).commitment();
  const deposit = transfer(acc1, { nonce: 0, to: DEPOSIT_ADDRESS, value: STAKE, data: commitment, gasLimit: 60_000n });
  await submitOk(node, deposit);
  const b1 = await importOk(node, makeBlock(await genesisRef(node), { txs: [deposit] }));
  const exit = transfer(val1, { nonce: 0, to: EXIT_ADDRESS, value: 0n, gasLimit: 60_000n });
  await submitOk(node, exit);
  const b2 = await importOk(node, makeBlock(b1.ref, { txs: [exit] }));
  assert.is(b2.result.receipts[0].status, 1, JSON.stringify(b2.result.receipts[0]));

  // Each readable state serves its own registry: block 1's has the deposit, block 2's the exit too.
  const p1 = await proofAt(node, `block=${b1.result.block_hash}`);
  assert.is(p1.count, 3);
  assert.equal(p1.entries[2], { index: 2, address: acc1.address, public_key: toHex(acc1.mldsa.publicKey), stake: STAKE.toString(), randao_commitment: toHex(commitment), active: true, slashed: false });
  assert.ok(verifyRegistryProof(parseHex(b1.result.state_root, 'root'), p1).get(1)!.active, 'validator 1 is active after block 1');
  // Pages of one entry each, merged, are the whole registry's proof.
  const pages: RegistryProofWire[] = [];
  for (let from = 0; from < 3; from++) pages.push(await proofAt(node, `block=${b2.result.block_hash}&from=${from}&limit=1`));
  assert.equal(pages.map((p) => p.entries.length), [1, 1, 1]);
  const whole = mergeRegistryPages(pages);
  assert.equal(whole, (({ block_hash: _h, block_number: _n, ...w }) => w)(await proofAt(node, `block=${b2.result.block_hash}`)));
  const set2 = verifyRegistryProof(parseHex(b2.result.state_root, 'root'), whole);
  assert.equal([...set2.values()].map((v) => v.active), [true, false, true]);
  // A page past the end has no entries.
  assert.is((await proofAt(node, `block=${b2.result.block_hash}&from=3`)).entries.length, 0);

  // Tampering: each served part is bound by the proof.
  const root2 = parseHex(b2.result.state_root, 'root');
  const clone = (): RegistryProofWire => structuredClone(whole);
  refused(() => verifyRegistryProof(parseHex(b1.result.state_root, 'root'), whole), /does not verify against state_root/);
  refused(() => verifyRegistryProof(root2, p1), /does not verify against state_root/);
  const revived = clone();
  revived.entries[1]!.active = true;
  refused(() => verifyRegistryProof(root2, revived), /validator 1's entry as served does not hash to its word/);
  const rekeyed = clone();
  rekeyed.entries[2]!.public_key = toHex(val1.mldsa.publicKey);
  refused(() => verifyRegistryProof(root2, rekeyed), /validator 2's entry/);
  const dropped = clone();
  dropped.entries.pop();
  dropped.proof.storageProof.pop();
  dropped.count = 2;
  refused(() => verifyRegistryProof(root2, dropped), /registry count word is 3/);
  const partial = clone();
  partial.entries.pop();
  refused(() => verifyRegistryProof(root2, partial), /must carry the whole registry/);
  const swapped = clone();
  [swapped.proof.storageProof[1], swapped.proof.storageProof[2]] = [swapped.proof.storageProof[2]!, swapped.proof.storageProof[1]!];
  refused(() => verifyRegistryProof(root2, swapped), new RegExp(`storage proof 1 is for slot ${toHex(registryEntrySlot(1))}`));
  const elsewhere = clone();
  elsewhere.proof.address = DEPOSIT_ADDRESS === REGISTRY_ADDRESS ? EXIT_ADDRESS : DEPOSIT_ADDRESS;
  refused(() => verifyRegistryProof(root2, elsewhere), /not the registry account/);
});

registry('bad registry proof queries get 400 envelopes', async ({ node }) => {
  expectEnvelope(await get(node, '/api/v1/registry/proof?limit=0'), 400, 'MALFORMED_INPUT', /limit: 1 to 256/);
  expectEnvelope(await get(node, '/api/v1/registry/proof?limit=257'), 400, 'MALFORMED_INPUT', /limit: 1 to 256/);
  expectEnvelope(await get(node, '/api/v1/registry/proof?from=-1'), 400, 'MALFORMED_INPUT');
  expectEnvelope(await get(node, '/api/v1/registry/proof?from=0x10'), 400, 'MALFORMED_INPUT');
  expectEnvelope(await get(node, '/api/v1/registry/proof?block=99999'), 404, 'NOT_FOUND');
  expectEnvelope(await get(node, '/api/v1/registry/proof?block=nonsense'), 400, 'INVALID_BLOCK_ID');
});

registry.run();
