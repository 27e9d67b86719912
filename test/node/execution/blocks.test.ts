/**
 * Block import through the engine API: application, the spec's validation steps in order with
 * their phrases, failed transactions that still consume gas, deposits and the registry, account
 * proofs and reward credits.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { DEPOSIT_ADDRESS, GWEI } from '../../../src/core/constants.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { vrfProve } from '../../../src/core/crypto/vrf.js';
import { type Block, blockHash, blockToJson, signBlock } from '../../../src/core/types/block.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { packEntries, receiptJson, unpackEntry } from '../../../src/node/execution/blocks.js';
import type { Receipt } from '../../../src/api/execution.js';
import type { SvcError } from '../../../src/core/errors.js';
import { type AccountProofWire, EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, verifyAccountProof, verifyProof } from '../../../src/core/state/trie.js';
import { flipByte } from '../../helpers/assert.js';
import { genesisStateRoot } from '../../../src/core/state/genesis-root.js';
import {
  account,
  CHAIN_ID,
  devnet,
  expectEnvelope,
  expectOk,
  GENESIS_TIME,
  genesisRef,
  get,
  hashOf,
  height,
  importOk,
  makeBlock,
  mempoolHashes,
  newPayload,
  type ParentRef,
  post,
  randaoChainOf,
  startNode,
  submitOk,
  TOKEN,
  transfer,
} from './fixture.js';

const { keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const val0 = keys.validators[0]!;
const val1 = keys.validators[1]!;
const broke = keys.unfunded[0]!;
const R = '0x00000000000000000000000000000000000000bb';
const STAKE = 32n * TOKEN;
const PROPOSER_REWARD = BigInt(devnet().genesis.config.proposer_reward);

const hashHex = (b: Block) => toHex(blockHash(b.header));

interface Ctx {
  node: ExecutionNode;
  head: ParentRef;
}

const blocks = suite<Ctx>('blocks: import and validation', { node: undefined as unknown as ExecutionNode, head: undefined as unknown as ParentRef });

blocks.before(async (ctx) => {
  ctx.node = await startNode();
  ctx.head = await genesisRef(ctx.node);
});
blocks.after(async (ctx) => ctx.node?.stop());

/** Asserts a block is rejected with the envelope, the height is unchanged and the block is not stored. */
async function rejected(ctx: Ctx, block: Block | ReturnType<typeof blockToJson>, code: string, message: string, hash?: string): Promise<void> {
  const before = await height(ctx.node);
  expectEnvelope(await newPayload(ctx.node, block), 400, code, message);
  assert.is(await height(ctx.node), before, 'a rejected block leaves the height unchanged');
  assert.is(ctx.node.chain.head().hash, ctx.head.hash);
  if (hash) expectEnvelope(await get(ctx.node, `/api/v1/blocks/${hash}`), 404, 'NOT_FOUND', `no block ${hash}`);
}

blocks('a valid block applies: receipts, 21,000 gas, fee to the proposer, nonce, value, pool, lifecycle', async (ctx) => {
  const { node } = ctx;
  const tx = transfer(acc0, { nonce: 0, to: R, value: 5n * TOKEN, gasPrice: 2n * GWEI, gasLimit: 50_000n });
  const hash = await submitOk(node, tx);
  assert.is(expectOk(await get(node, `/api/v1/transactions/${hash}`)).state, 'Pending');
  const before = { a: await account(node, acc0.address), r: await account(node, R), v: await account(node, val0.address) };
  const block = makeBlock(ctx.head, { txs: [tx] });
  const { result, ref } = await importOk(node, block);
  const fee = 21_000n * 2n * GWEI;
  assert.is(result.block_hash, hashHex(block));
  assert.is(result.block_number, 1);
  assert.is(result.canonical, true);
  assert.is(result.already_known, false);
  assert.is(result.gas_used, 21_000);
  assert.match(result.state_root, /^0x[0-9a-f]{64}$/);
  assert.equal(result.receipts, [
    {
      transactionHash: hash,
      transactionIndex: 0,
      blockHash: result.block_hash,
      blockNumber: 1,
      from: acc0.address,
      to: R,
      kind: 'transfer',
      status: 1,
      gasUsed: 21_000,
      cumulativeGasUsed: 21_000,
      effectiveGasPrice: (2n * GWEI).toString(),
      fee: fee.toString(),
      contractAddress: null,
      logs: [],
    },
  ]);
  assert.is(await height(node), 1);
  const a = await account(node, acc0.address);
  assert.is(a.balance, before.a.balance - 5n * TOKEN - fee, 'sender pays value + gasUsed × gasPrice (not gasLimit × gasPrice)');
  assert.is(a.nonce, 1);
  assert.is((await account(node, R)).balance, before.r.balance + 5n * TOKEN);
  assert.is((await account(node, val0.address)).balance, before.v.balance + fee + PROPOSER_REWARD, 'the fee and the proposer reward go to the proposer');
  assert.not.ok((await mempoolHashes(node)).includes(hash), 'removed from the pool on application');
  const status = expectOk(await get(node, `/api/v1/transactions/${hash}`));
  assert.is(status.state, 'Confirmed');
  assert.equal(status.block, { hash: result.block_hash, number: 1 });
  assert.equal(status.receipt, result.receipts[0]);
  assert.equal(expectOk(await get(node, `/api/v1/transactions/${hash}/receipt`)), result.receipts[0]);
  const view = expectOk(await get(node, '/api/v1/blocks/1'));
  assert.is(view.hash, result.block_hash);
  assert.is(view.state_root, result.state_root);
  assert.is(view.canonical, true);
  assert.is(view.proposer, val0.address);
  assert.equal(view.transactions, [hash]);
  assert.equal(view.block, blockToJson(block), 'the stored block round-trips to the same wire JSON');
  assert.equal(expectOk(await get(node, '/api/v1/blocks/latest')), view);
  ctx.head = ref;
});

blocks('importing the same block again is acknowledged as already known and applies nothing', async (ctx) => {
  const block = expectOk(await get(ctx.node, '/api/v1/blocks/1')).block;
  const before = await account(ctx.node, acc0.address);
  const again = expectOk(await newPayload(ctx.node, block));
  assert.is(again.already_known, true);
  assert.is(again.block_hash, ctx.head.hash);
  // POST /api/v1/blocks is the same import.
  const alias = expectOk(await post(ctx.node, '/api/v1/blocks', block));
  assert.is(alias.already_known, true);
  assert.is(alias.block_hash, ctx.head.hash);
  assert.equal(await account(ctx.node, acc0.address), before);
  assert.is(await height(ctx.node), 1);
  // A copy under the same header hash is not echoed: its signature and transactions must hold.
  const sig = block.signature as string;
  const flipped = sig.slice(0, 10) + (sig[10] === '0' ? '1' : '0') + sig.slice(11);
  expectEnvelope(await newPayload(ctx.node, { ...block, signature: flipped }), 400, 'INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  expectEnvelope(await newPayload(ctx.node, { ...block, transactions: [] }), 400, 'MERKLE_ROOT_MISMATCH', 'Block Merkle root mismatch');
  assert.is(await height(ctx.node), 1);
});

blocks('step 1: "Block Merkle root mismatch"', async (ctx) => {
  const tx = transfer(acc0, { nonce: 1 });
  const block = makeBlock(ctx.head, { txs: [tx] });
  const dropped = { ...block, transactions: [] };
  await rejected(ctx, dropped, 'MERKLE_ROOT_MISMATCH', 'Block Merkle root mismatch', hashHex(block));
  // Checked before everything else: also an unknown proposer with a bad signature.
  const worst = makeBlock(ctx.head, { txs: [tx], proposer: acc1 });
  await rejected(ctx, { ...worst, transactions: [], signature: flipByte(worst.signature, 0) }, 'MERKLE_ROOT_MISMATCH', 'Block Merkle root mismatch');
});

blocks('step 2: a tampered transaction signature is "Transaction verification failed"', async (ctx) => {
  const tx = transfer(acc0, { nonce: 1 });
  const tampered = { ...tx, signature: flipByte(tx.signature, 42) };
  const block = makeBlock(ctx.head, { txs: [tampered] });
  await rejected(ctx, block, 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(tampered)}: invalid transaction signature`, hashHex(block));
  // Before the proposer checks.
  await rejected(ctx, makeBlock(ctx.head, { txs: [tampered], proposer: acc1 }), 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(tampered)}: invalid transaction signature`);
});

blocks('step 3: a proposer outside the registry is "Unknown validator"', async (ctx) => {
  const block = makeBlock(ctx.head, { proposer: acc1 });
  await rejected(ctx, block, 'UNKNOWN_VALIDATOR', `Unknown validator: ${acc1.address}`, hashHex(block));
});

blocks('step 4: a bad block signature is "DILITHIUM SIGNATURE VERIFICATION FAILED"', async (ctx) => {
  const good = makeBlock(ctx.head);
  const msg = 'DILITHIUM SIGNATURE VERIFICATION FAILED';
  await rejected(ctx, { ...good, signature: flipByte(good.signature, 1000) }, 'INVALID_BLOCK_SIGNATURE', msg, hashHex(good));
  // Signed over the wrong registry index (the SignedHeader carries the index, not the id).
  await rejected(ctx, makeBlock(ctx.head, { validatorIndex: 1 }), 'INVALID_BLOCK_SIGNATURE', msg);
  // Signed by another validator's key while naming validator 0.
  await rejected(ctx, makeBlock(ctx.head, { proposer: val1, validatorId: val0.address, validatorIndex: 0 }), 'INVALID_BLOCK_SIGNATURE', msg);
});

blocks('step 4: signature "0x" or empty is "Block missing Dilithium signature"', async (ctx) => {
  const json = blockToJson(makeBlock(ctx.head));
  for (const signature of ['0x', '']) {
    await rejected(ctx, { ...json, signature }, 'MISSING_SIGNATURE', 'Block missing Dilithium signature');
  }
});

blocks('step 5: an absent VRF proof is "Block missing VRF proof"; a wrong one "VRF proof verification failed"', async (ctx) => {
  const good = makeBlock(ctx.head);
  const json = blockToJson(good);
  await rejected(ctx, { ...json, header: { ...json.header, vrf_proof: '0x' } }, 'MISSING_VRF_PROOF', 'Block missing VRF proof');
  // The signature covers the SignedHeader, not the VRF fields: only the seed and VRF checks can
  // catch these. The seed is checked first, so a proof is only ever verified over the slot's seed.
  const otherSeed = { ...good, header: { ...good.header, vrfSeed: sha3(Uint8Array.of(9)) } };
  const slot = (good.header.timestampMs - GENESIS_TIME * 1000) / (devnet().genesis.config.slot_seconds * 1000);
  await rejected(
    ctx,
    otherSeed,
    'INVALID_VRF_SEED',
    `Block vrf_seed is not the seed of its slot: vrf_seed ${toHex(otherSeed.header.vrfSeed)} is not the seed of slot ${slot} (${toHex(good.header.vrfSeed)})`,
    hashHex(otherSeed),
  );
  const foreignProof = { ...good, header: { ...good.header, vrfProof: vrfProve(val1.mldsa, good.header.vrfSeed, CHAIN_ID) } };
  await rejected(ctx, foreignProof, 'INVALID_VRF_PROOF', 'VRF proof verification failed');
  const otherChain = signBlock({ ...good.header, vrfProof: vrfProve(val0.mldsa, good.header.vrfSeed, 'other') }, [], val0.mldsa, CHAIN_ID, 0);
  await rejected(ctx, otherChain, 'INVALID_VRF_PROOF', 'VRF proof verification failed');
});

blocks('step 6: wrong nonce and insufficient balance reject the whole block; nothing is applied', async (ctx) => {
  const { node } = ctx;
  const future = transfer(acc0, { nonce: 5 });
  await rejected(ctx, makeBlock(ctx.head, { txs: [future] }), 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(future)}: invalid nonce: transaction nonce 5, account nonce 1`);
  const poor = transfer(broke, { nonce: 0 });
  await rejected(ctx, makeBlock(ctx.head, { txs: [poor] }), 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(poor)}: insufficient balance for value + gas`);
  // A valid first transaction is not applied when a later one fails.
  const before = await account(node, acc0.address);
  const ok1 = transfer(acc0, { nonce: 1, to: R, value: 7n });
  const dup = transfer(acc0, { nonce: 1, to: R, value: 8n });
  await rejected(ctx, makeBlock(ctx.head, { txs: [ok1, dup] }), 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(dup)}: invalid nonce: transaction nonce 1, account nonce 2`);
  assert.equal(await account(node, acc0.address), before);
  const cheap = transfer(acc0, { nonce: 1, gasPrice: GWEI - 1n });
  await rejected(ctx, makeBlock(ctx.head, { txs: [cheap] }), 'INVALID_TRANSACTION', `Transaction verification failed: tx ${hashOf(cheap)}: gas price below minimum`);
});

blocks('structure: unknown parent, wrong index, timestamp not after the parent', async (ctx) => {
  const parent = '0x' + '12'.repeat(32);
  await rejected(ctx, makeBlock({ ...ctx.head, hash: parent }), 'UNKNOWN_PARENT', `Unknown parent block: ${parent}`);
  await rejected(ctx, makeBlock({ ...ctx.head, index: 5 }), 'INVALID_HEIGHT', 'Block index does not follow its parent: index 6, parent index 1');
  const parentSlot = (ctx.head.timestamp - GENESIS_TIME * 1000) / (devnet().genesis.config.slot_seconds * 1000);
  await rejected(
    ctx,
    makeBlock(ctx.head, { timestampMs: ctx.head.timestamp }),
    'INVALID_TIMESTAMP',
    `Block timestamp is not the start of a slot after its parent: slot ${parentSlot} (timestamp ${ctx.head.timestamp}) is not after the parent's slot ${parentSlot}`,
  );
});

blocks('state_root: a header naming another state than its parent\'s post-state is "Block state root mismatch"; nothing is applied', async (ctx) => {
  const parentRoot = ctx.head.stateRoot!;
  // Block 1 names genesis's root, which the genesis document alone gives.
  if (ctx.head.index === 0) assert.is(parentRoot, toHex(genesisStateRoot(devnet().genesis)));
  const wrong = new Uint8Array(32).fill(0x5a);
  const block = makeBlock(ctx.head, { stateRoot: wrong });
  await rejected(ctx, block, 'STATE_ROOT_MISMATCH', `Block state root mismatch: header state_root ${toHex(wrong)}, parent ${ctx.head.index} post-state root ${parentRoot}`, toHex(blockHash(block.header)));
  // The same block with the parent's post-state root is valid.
  ctx.head = (await importOk(ctx.node, makeBlock(ctx.head))).ref;
});

blocks('a deposit below the 32-token minimum stake fails with status 0: gas consumed, fee paid, value not moved', async (ctx) => {
  const { node } = ctx;
  const commitment = sha3(Uint8Array.of(1));
  const low = transfer(acc1, { nonce: 0, to: DEPOSIT_ADDRESS, value: STAKE - 1n, data: commitment, gasLimit: 60_000n });
  const shortData = transfer(acc1, { nonce: 1, to: DEPOSIT_ADDRESS, value: STAKE, data: commitment.subarray(0, 31), gasLimit: 60_000n });
  await submitOk(node, low);
  await submitOk(node, shortData);
  const before = { a: await account(node, acc1.address), v: await account(node, val0.address), d: await account(node, DEPOSIT_ADDRESS) };
  const block = makeBlock(ctx.head, { txs: [low, shortData] });
  const { result, ref } = await importOk(node, block);
  const fee = 21_000n * GWEI;
  assert.equal(
    result.receipts.map((r: any) => [r.status, r.gasUsed, r.cumulativeGasUsed, r.fee, r.kind, r.error]),
    [
      [0, 21_000, 21_000, fee.toString(), 'deposit', 'deposit below the minimum stake of 32000000000000000000 wei'],
      [0, 21_000, 42_000, fee.toString(), 'deposit', 'deposit data must be the 32-byte RANDAO commitment'],
    ],
  );
  assert.is(result.gas_used, 42_000);
  const a = await account(node, acc1.address);
  assert.is(a.balance, before.a.balance - 2n * fee, 'only the fees left the sender');
  assert.is(a.nonce, 2, 'a failed transaction still uses its nonce');
  assert.is((await account(node, val0.address)).balance, before.v.balance + 2n * fee + PROPOSER_REWARD);
  assert.is((await account(node, DEPOSIT_ADDRESS)).balance, before.d.balance, 'value not moved');
  assert.is(expectOk(await get(node, '/api/v1/engine/registry')).validators.length, 2);
  const s = expectOk(await get(node, `/api/v1/transactions/${hashOf(low)}`));
  assert.is(s.state, 'Confirmed');
  assert.is(s.receipt.status, 0);
  ctx.head = ref;
});

blocks('a valid deposit registers a validator, which can then propose', async (ctx) => {
  const { node } = ctx;
  const commitment = randaoChainOf(acc1).commitment();
  const deposit = transfer(acc1, { nonce: 2, to: DEPOSIT_ADDRESS, value: STAKE, data: commitment, gasLimit: 60_000n });
  await submitOk(node, deposit);
  const { result, ref } = await importOk(node, makeBlock(ctx.head, { txs: [deposit] }));
  assert.is(result.receipts[0].status, 1, JSON.stringify(result.receipts[0]));
  assert.is((await account(node, DEPOSIT_ADDRESS)).balance, STAKE);
  const registry = expectOk(await get(node, '/api/v1/engine/registry')).validators;
  assert.is(registry.length, 3);
  assert.equal(registry[2], {
    index: 2,
    address: acc1.address,
    public_key: toHex(acc1.mldsa.publicKey),
    stake: STAKE.toString(),
    randao_commitment: toHex(commitment),
    active: true,
    slashed: false,
  });
  ctx.head = ref;
  // The new validator's block verifies against the key execution learned from the deposit.
  const tip = transfer(acc0, { nonce: 1, gasPrice: 3n * GWEI });
  await submitOk(node, tip);
  const before = await account(node, acc1.address);
  const own = makeBlock(ctx.head, { proposer: acc1, validatorIndex: 2, txs: [tip] });
  ctx.head = (await importOk(node, own)).ref;
  assert.is((await account(node, acc1.address)).balance, before.balance + 21_000n * 3n * GWEI + PROPOSER_REWARD);
  // Registering twice fails (status 0).
  const again = transfer(acc1, { nonce: 3, to: DEPOSIT_ADDRESS, value: STAKE, data: commitment, gasLimit: 60_000n });
  const { result: r2, ref: ref2 } = await importOk(node, makeBlock(ctx.head, { txs: [again] }));
  assert.is(r2.receipts[0].status, 0);
  assert.is(r2.receipts[0].error, 'sender is already a validator');
  ctx.head = ref2;
});

blocks('account proofs verify against the state root for present and absent accounts; tampering fails', async (ctx) => {
  const { node } = ctx;
  const head = expectOk(await get(node, '/api/v1/blocks/latest'));
  const absentLow = '0x0000000000000000000000000000000000000001';
  const absentHigh = '0xffffffffffffffffffffffffffffffffffffffff';
  const absentMid = '0x8000000000000000000000000000000000000000';
  for (const address of [acc0.address, R, DEPOSIT_ADDRESS, absentLow, absentMid, absentHigh]) {
    const proof: AccountProofWire & { block_number: number; block_hash: string } = expectOk(await get(node, `/api/v1/accounts/${address}/proof`));
    assert.is(proof.stateRoot, head.state_root);
    assert.is(proof.block_number, head.number);
    assert.is(proof.block_hash, head.hash);
    const root = parseHex(proof.stateRoot, 'root', 32);
    assert.ok(verifyAccountProof(root, proof), `proof for ${address}`);
    const present = ![absentLow, absentMid, absentHigh].includes(address);
    const acc = await account(node, address);
    assert.is(proof.balance, acc.balance.toString());
    assert.is(proof.nonce, acc.nonce);
    assert.is(proof.codeHash, toHex(EMPTY_CODE_HASH));
    // The deposit address is the registry account: its storage holds the registry's words.
    if (address === DEPOSIT_ADDRESS) assert.is.not(proof.storageHash, toHex(EMPTY_TRIE_ROOT));
    else assert.is(proof.storageHash, toHex(EMPTY_TRIE_ROOT));
    if (present) {
      assert.ok(proof.balance !== '0' || proof.nonce !== 0, 'a present account is not empty');
      assert.not.ok(verifyAccountProof(root, { ...proof, balance: (acc.balance + 1n).toString() }), 'a tampered balance fails');
      assert.not.ok(verifyAccountProof(root, { ...proof, nonce: proof.nonce + 1 }), 'a tampered nonce fails');
      assert.not.ok(verifyAccountProof(root, { ...proof, balance: '0', nonce: 0 }), 'a present account cannot be proven absent');
    } else {
      assert.is(proof.balance, '0');
      assert.not.ok(verifyAccountProof(root, { ...proof, balance: '1' }), 'an absent account cannot be proven funded');
      // The absence proof of one address does not prove another one absent.
      assert.not.ok(verifyAccountProof(root, { ...proof, address: acc0.address }));
    }
    // Any node changed in any byte fails.
    proof.accountProof.forEach((n, i) => {
      const bytes = parseHex(n, 'node');
      bytes[bytes.length - 1]! ^= 1;
      const tampered = [...proof.accountProof];
      tampered[i] = toHex(bytes);
      assert.not.ok(verifyAccountProof(root, { ...proof, accountProof: tampered }), `tampered node ${i}`);
    });
    assert.not.ok(verifyAccountProof(sha3(root), { ...proof, stateRoot: toHex(sha3(root)) }), 'another root fails');
    assert.ok(verifyProof(root, proof));
  }
  expectEnvelope(await get(node, '/api/v1/accounts/0x12/proof'), 400, 'MALFORMED_INPUT', 'malformed address: expected a 0x-prefixed 20-byte hex address');
  // Storage keys (an account without storage: each proven absent, value zero) and a block by height.
  const k1 = '0x' + '00'.repeat(31) + '01';
  const withKeys: AccountProofWire = expectOk(await get(node, `/api/v1/accounts/${acc0.address}/proof?block=${head.number}&keys=${k1},${'0x' + 'ab'.repeat(32)}`));
  assert.equal(withKeys.storageProof.map((s) => [s.key, s.value, s.proof]), [[k1, '0x' + '00'.repeat(32), []], ['0x' + 'ab'.repeat(32), '0x' + '00'.repeat(32), []]]);
  assert.ok(verifyProof(parseHex(withKeys.stateRoot, 'root', 32), withKeys));
  assert.not.ok(verifyProof(parseHex(withKeys.stateRoot, 'root', 32), { ...withKeys, storageProof: [{ ...withKeys.storageProof[0]!, value: '0x' + '00'.repeat(31) + '01' }] }));
  expectEnvelope(await get(node, `/api/v1/accounts/${acc0.address}/proof?keys=0x12`), 400, 'MALFORMED_INPUT', 'malformed storage key 0x12: expected 0x-prefixed 32-byte hex');
  expectEnvelope(await get(node, `/api/v1/accounts/${acc0.address}/proof?block=99999`), 404, 'NOT_FOUND', 'no block 99999');
});

blocks.run();

const entries = suite('stored transaction entries (blocks.ts)');

const sampleReceipt = (i: number, extra: Partial<Receipt> = {}): Receipt => ({
  transactionHash: toHex(sha3(Uint8Array.of(i))),
  transactionIndex: i,
  blockHash: toHex(sha3(Uint8Array.of(0xb0))),
  blockNumber: 7,
  from: '0x' + '11'.repeat(20),
  to: i % 2 === 0 ? '0x' + '22'.repeat(20) : null,
  kind: i % 2 === 0 ? 'transfer' : 'contract_deploy',
  status: 1,
  gasUsed: 21_000,
  cumulativeGasUsed: 21_000 * (i + 1),
  effectiveGasPrice: '1000000000',
  fee: '21000000000000',
  contractAddress: i % 2 === 0 ? null : '0x' + '33'.repeat(20),
  logs: [],
  ...extra,
});

entries('receiptJson is JSON.stringify byte for byte, with and without logs or an error', () => {
  const log = { address: '0x' + '44'.repeat(20), topics: ['0x' + '55'.repeat(32)], data: '0x01', blockNumber: 7, blockHash: '0x' + '66'.repeat(32), transactionHash: '0x' + '77'.repeat(32), transactionIndex: 1, logIndex: 0 };
  const all = [sampleReceipt(0), sampleReceipt(1), sampleReceipt(2, { status: 0, error: 'revert: "quoted" \\ é' }), sampleReceipt(3, { logs: [log] })];
  for (const r of all) assert.is(receiptJson(r), JSON.stringify(r));
});

entries('packEntries and unpackEntry round-trip each receipt (UTF-8 included) and envelope, as views of one buffer', () => {
  const receipts = [sampleReceipt(0), sampleReceipt(1, { status: 0, error: 'revert: ünïcode ✓' }), sampleReceipt(2)].map(receiptJson);
  const body = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
  const envelopes = [body.subarray(0, 100), body.subarray(100, 100), body.subarray(100, 300)];
  const packed = packEntries(receipts, envelopes);
  assert.is(packed.length, 3);
  packed.forEach((p, i) => {
    const e = unpackEntry(p, `entry ${i}`);
    assert.is(e.receiptJson, receipts[i]);
    assert.equal([...e.envelope], [...envelopes[i]!]);
    assert.is(p.buffer, packed[0]!.buffer);
  });
  for (const bad of [new Uint8Array(0), Uint8Array.of(0, 0, 1), Uint8Array.of(0, 0, 0, 9, 0x7b)]) {
    try {
      unpackEntry(bad, 'u:bad');
      assert.unreachable('expected CORRUPT_DB');
    } catch (err) {
      assert.is((err as SvcError).code, 'CORRUPT_DB');
    }
  }
});

entries.run();

