/**
 * The ECDSA authorisation path (admission step 1 and the type-3 branch of step 2): gas-free
 * authorise/revoke transactions signed by the ML-DSA master key, and transactions for an
 * account signed by a secp256k1 key it authorised.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { TX_BASE_GAS } from '../../../../src/core/constants.js';
import { type Transaction, encodeTx, signAuthorizationTx, signEcdsaAuthorizedTx, txHash } from '../../../../src/core/types/transaction.js';
import { txFromJson } from '../../../../src/core/types/transaction-json.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import {
  CHAIN_ID,
  MIN_GAS_PRICE,
  RECIPIENT,
  account,
  devnet,
  expectEnvelope,
  expectOk,
  genesisRef,
  get,
  importOk,
  makeBlock,
  newPayload,
  post,
  startNode,
  transfer,
} from '../fixture.js';

const { keys } = devnet();
const owner = keys.accounts[1]!;
const ecdsaKey = owner.ecdsaPrivateKey;
const ecdsaAddress = parseHex(owner.ecdsaAddress, 'ecdsa', 20);

const authorize = (nonce: number, type: 1 | 2 = 1) => signAuthorizationTx(type, { nonce: BigInt(nonce), ecdsaAddress }, owner.mldsa, CHAIN_ID);
const viaEcdsa = (nonce: number, value = 7n, key = ecdsaKey) =>
  signEcdsaAuthorizedTx(
    { nonce: BigInt(nonce), gasPrice: MIN_GAS_PRICE, gasLimit: TX_BASE_GAS, to: parseHex(RECIPIENT, 'to', 20), value, data: new Uint8Array(0), from: parseHex(owner.address, 'from', 20) },
    key,
    CHAIN_ID,
  );
const submit = (node: ExecutionNode, tx: Transaction) => post(node, '/api/v1/transactions', { raw: toHex(encodeTx(tx)) });

const auth = suite('ECDSA authorisation path');
let node: ExecutionNode;
auth.before.each(async () => {
  node = await startNode();
});
auth.after.each(async () => {
  await node.stop();
});

auth('a type-3 transaction from an unauthorised key is "invalid transaction signature"; after an authorisation it is admitted and applied', async () => {
  expectEnvelope(await submit(node, viaEcdsa(0)), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');

  const a = authorize(0);
  const admitted = expectOk(await submit(node, a), 202);
  assert.equal(admitted, { hash: toHex(txHash(a)), status: 'ready' });
  const entry = (await get(node, '/api/v1/execution/mempool')).body.transactions[0];
  assert.equal([entry.type, entry.gas, entry.gas_price, entry.value, entry.to], [1, 0, '0', '0', null]);

  const pending = expectOk(await get(node, '/api/v1/engine/getPendingTransactions')).transactions.map((t: unknown) => txFromJson(t));
  const before = await account(node, owner.address);
  const b1 = await importOk(node, makeBlock(await genesisRef(node), { txs: pending }));
  const r = b1.result.receipts[0];
  assert.equal([r.kind, r.status, r.gasUsed, r.fee], ['ecdsa_authorization', 1, 0, '0']);
  const after = await account(node, owner.address);
  assert.is(after.nonce, before.nonce + 1, 'an authorisation consumes a nonce');
  assert.is(after.balance, before.balance, 'and pays no fee');

  // Now the ECDSA key acts for the owner: the owner's nonce, balance and fee.
  const t = viaEcdsa(1);
  expectOk(await submit(node, t), 202);
  const b2 = await importOk(node, makeBlock(b1.ref, { txs: [t] }));
  assert.equal([b2.result.receipts[0].from, b2.result.receipts[0].status], [owner.address, 1]);
  const final = await account(node, owner.address);
  assert.is(final.balance, after.balance - 7n - TX_BASE_GAS * MIN_GAS_PRICE);
  assert.is(final.nonce, 2);

  // A replayed authorisation is refused by the nonce rule.
  expectEnvelope(await submit(node, a), 400, 'NONCE_TOO_LOW', 'nonce too low');
});

auth('revocation: later type-3 transactions are refused at admission and make a block invalid', async () => {
  const b1 = await importOk(node, makeBlock(await genesisRef(node), { txs: [authorize(0)] }));
  const b2 = await importOk(node, makeBlock(b1.ref, { txs: [authorize(1, 2)] }));
  assert.equal([b2.result.receipts[0].kind, b2.result.receipts[0].status], ['ecdsa_revocation', 1]);
  expectEnvelope(await submit(node, viaEcdsa(2)), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');
  const r = await newPayload(node, makeBlock(b2.ref, { txs: [viaEcdsa(2)] }));
  expectEnvelope(r, 400, 'INVALID_TRANSACTION', new RegExp(`^Transaction verification failed: tx 0x[0-9a-f]{64}: invalid transaction signature: ECDSA key ${owner.ecdsaAddress} is not authorised for ${owner.address}$`));
  // Revoking a key that is not authorised is a failed transaction: nonce consumed, status 0.
  const b3 = await importOk(node, makeBlock(b2.ref, { txs: [authorize(2, 2)] }));
  assert.equal([b3.result.receipts[0].status, b3.result.receipts[0].error], [0, `ECDSA key ${owner.ecdsaAddress} is not authorised`]);
  assert.is((await account(node, owner.address)).nonce, 3);
});

auth('an authorisation reverted by a reorg is undone; one in the new branch applies', async () => {
  const g = await genesisRef(node);
  const a = await importOk(node, makeBlock(g, { txs: [authorize(0)] }));
  expectOk(await submit(node, viaEcdsa(1)), 202);
  // A competing child of genesis without the authorisation (a plain transfer instead).
  const other = makeBlock(g, { txs: [transfer(keys.accounts[0]!, { nonce: 0 })], salt: 1 });
  const side = expectOk(await newPayload(node, other));
  assert.is(side.canonical, false);
  expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: side.block_hash }));
  expectEnvelope(await submit(node, viaEcdsa(1, 8n)), 400, 'INVALID_SIGNATURE', 'invalid transaction signature');
  expectOk(await post(node, '/api/v1/engine/forkchoiceUpdated', { head_block_hash: a.result.block_hash }));
  // The value-7 transaction at nonce 1 is still pooled; the next nonce is admitted again.
  expectOk(await submit(node, viaEcdsa(2, 9n)), 202);
});

auth.run();
