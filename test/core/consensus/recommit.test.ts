/** The RANDAO re-commitment rule shared by execution and the beacon (core/consensus/recommit.ts), and the generation secrets. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { MAX_BLOCK_RANDAO_COMMITS, RANDAO_COMMIT_ADDRESS } from '../../../src/core/constants.js';
import { addressFromPublicKey } from '../../../src/core/crypto/address.js';
import { keygenFromSeed } from '../../../src/core/crypto/mldsa.js';
import { hashChain, randaoSecret, randaoSecretAt } from '../../../src/core/crypto/randao.js';
import { applyRecommitments, blockRecommitments, isRecommit, type RecommitLookup, recommitProblem } from '../../../src/core/consensus/recommit.js';
import { applyReveal, genesisRandao } from '../../../src/core/consensus/randao.js';
import { signStandardTx, type StandardTx } from '../../../src/core/types/transaction.js';
import { filled } from '../../helpers/assert.js';

const CHAIN = 'svc-test';
const keys = Array.from({ length: MAX_BLOCK_RANDAO_COMMITS + 3 }, (_, i) => keygenFromSeed(filled(32, i + 1)));
const address = (i: number) => toHex(addressFromPublicKey(keys[i]!.publicKey));
// Validators 0..n-1 are registered; the last one is registered but exited.
const EXITED = keys.length - 1;
const lookup: RecommitLookup = (a) => {
  const i = keys.findIndex((_, j) => address(j) === a);
  return i < 0 ? undefined : { index: i, active: i !== EXITED };
};
const commitment = (i: number, g = 1) => hashChain(randaoSecretAt(filled(32, i + 1), g), 8);

function recommit(i: number, o: { to?: string; value?: bigint; data?: Uint8Array; nonce?: number } = {}): StandardTx {
  return signStandardTx(
    { nonce: BigInt(o.nonce ?? 0), gasPrice: 10n ** 9n, gasLimit: 21_000n, to: parseHex(o.to ?? RANDAO_COMMIT_ADDRESS, 'to', 20), value: o.value ?? 0n, data: o.data ?? commitment(i) },
    keys[i]!,
    CHAIN,
  );
}

test('isRecommit: only transactions to RANDAO_COMMIT_ADDRESS', () => {
  assert.ok(isRecommit(recommit(0)));
  assert.not.ok(isRecommit(recommit(0, { to: '0x0000000000000000000000000000000000001001' })));
});

test('recommitProblem names each rule a lone re-commitment can break', () => {
  assert.is(recommitProblem(recommit(0), lookup), undefined);
  const outsider = keygenFromSeed(filled(32, 200));
  const fromOutsider = signStandardTx({ nonce: 0n, gasPrice: 1n, gasLimit: 21_000n, to: parseHex(RANDAO_COMMIT_ADDRESS, 'to', 20), value: 0n, data: commitment(0) }, outsider, CHAIN);
  assert.match(recommitProblem(fromOutsider, lookup)!, /is not a registered, active validator/);
  assert.match(recommitProblem(recommit(EXITED), lookup)!, /is not a registered, active validator/);
  assert.match(recommitProblem(recommit(0, { value: 1n }), lookup)!, /carries no value/);
  assert.match(recommitProblem(recommit(0, { data: new Uint8Array(33) }), lookup)!, /got 33 bytes/);
  assert.match(recommitProblem(recommit(0, { data: new Uint8Array(32) }), lookup)!, /must not be all zeros/);
  const type3 = { type: 3 as const, nonce: 0n, gasPrice: 1n, gasLimit: 21_000n, to: parseHex(RANDAO_COMMIT_ADDRESS, 'to', 20), value: 0n, data: commitment(0), from: parseHex(address(0), 'from', 20), ecdsaSignature: new Uint8Array(65) };
  assert.match(recommitProblem(type3, lookup)!, /must be a type-0 transaction/);
});

test('blockRecommitments: in order, not the proposer\'s own (unless it is alone), one per validator, capped per block; others untouched', () => {
  const transfer = recommit(2, { to: '0x00000000000000000000000000000000000000aa' });
  const txs = [recommit(0), transfer, recommit(1), recommit(0, { nonce: 1, data: commitment(0, 2) }), recommit(2, { value: 5n })];
  const r = blockRecommitments(txs, address(1), lookup, () => 5);
  assert.equal(r.applied.map((c) => [c.txIndex, c.validatorIndex, c.address, toHex(c.commitment)]), [[0, 0, address(0), toHex(commitment(0))]]);
  assert.equal([...r.failed.entries()], [
    [2, 'a RANDAO re-commitment cannot be included in a block its own validator proposes'],
    [3, 'validator 0 already re-commits in this block'],
    [4, 'a RANDAO re-commitment carries no value'],
  ]);
  // The proposer's address matches whatever its case.
  assert.is(blockRecommitments([recommit(1)], address(1).toUpperCase().replace('0X', '0x'), lookup, () => 2).applied.length, 0);
  // A lone active validator may include its own (it chooses every reveal anyway); the count is read only then.
  let asked = 0;
  assert.is(blockRecommitments([recommit(1)], address(1), lookup, () => (asked++, 1)).applied.length, 1);
  assert.is(blockRecommitments([recommit(0)], address(1), lookup, () => (asked++, 1)).applied.length, 1);
  assert.is(asked, 1);
  const many = Array.from({ length: MAX_BLOCK_RANDAO_COMMITS + 2 }, (_, i) => recommit(i));
  const capped = blockRecommitments(many, address(EXITED), lookup, () => 5);
  assert.is(capped.applied.length, MAX_BLOCK_RANDAO_COMMITS);
  assert.equal([...capped.failed.keys()], [MAX_BLOCK_RANDAO_COMMITS, MAX_BLOCK_RANDAO_COMMITS + 1]);
  assert.match(capped.failed.get(MAX_BLOCK_RANDAO_COMMITS)!, new RegExp(`at most ${MAX_BLOCK_RANDAO_COMMITS}`));
});

test('applyRecommitments: the new commitment becomes the last value, the old chain\'s reveal is refused, the input state is untouched', () => {
  const gh = filled(32, 9);
  const old = hashChain(randaoSecret(filled(32, 1)), 8);
  const s0 = genesisRandao(gh, [{ index: 0, randao_commitment: toHex(old) }]);
  const r = blockRecommitments([recommit(0)], address(1), lookup, () => 2);
  const s1 = applyRecommitments(s0, r.applied);
  assert.equal(s1.mix, s0.mix, 'the mix does not move');
  assert.equal(s1.last.get(0), commitment(0));
  assert.equal(s0.last.get(0), old, 'input state unchanged');
  assert.throws(() => applyReveal(s1, 0, hashChain(randaoSecret(filled(32, 1)), 7)), /not the preimage/);
  assert.ok(applyReveal(s1, 0, hashChain(randaoSecretAt(filled(32, 1), 1), 7)));
  assert.is(applyRecommitments(s0, []), s0);
});

test('randaoSecretAt: generation 0 is the genesis secret; later generations are distinct and bound to the seed', () => {
  const seed = filled(32, 7);
  assert.equal(randaoSecretAt(seed, 0), randaoSecret(seed));
  const gens = [0, 1, 2, 3].map((g) => toHex(randaoSecretAt(seed, g)));
  assert.is(new Set(gens).size, 4);
  assert.is.not(toHex(randaoSecretAt(filled(32, 8), 1)), gens[1]);
  assert.throws(() => randaoSecretAt(seed, -1), /non-negative integer/);
  assert.throws(() => randaoSecretAt(new Uint8Array(31), 1), /32-byte key seed/);
});

test.run();
