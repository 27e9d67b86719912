/**
 * Validator RANDAO chain: commitment and reveals against the naive core definitions, checkpoint
 * boundaries, resuming from the beacon's stored value after a restart, exhaustion.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../../../src/core/codec/bytes.js';
import { sha3 } from '../../../../src/core/crypto/hash.js';
import { hashChain, randaoCommitment, randaoReveal, randaoSecret } from '../../../../src/core/crypto/randao.js';
import { CryptoError } from '../../../../src/core/errors.js';
import { applyReveal, genesisRandao } from '../../../../src/core/consensus/randao.js';
import { DEFAULT_CHECKPOINT_BITS, RandaoChain, RandaoChainError } from '../../../../src/node/validator/randao/chain.js';
import { bytesIs, expectError, filled } from '../../../helpers/assert.js';

const SEED = filled(32, 0x42);
const SECRET = randaoSecret(SEED);
const N = 1 << 12;
// Built once: 4,096 hashes, a few milliseconds.
const CHAIN = new RandaoChain(SEED, N);

const build = suite('RandaoChain: commitment and reveals');

build('commitment() equals core randaoCommitment, for several lengths and checkpoint spacings', () => {
  assert.is(DEFAULT_CHECKPOINT_BITS, 10);
  bytesIs(CHAIN.commitment(), randaoCommitment(SEED, N));
  assert.is(CHAIN.length, N);
  for (const [n, bits] of [[1, 0], [1, 10], [5, 1], [1000, 4], [1024, 4], [1023, 10], [1025, 10]] as const) {
    bytesIs(new RandaoChain(SEED, n, bits).commitment(), randaoCommitment(SEED, n), `n=${n} bits=${bits}`);
  }
});

build('reveal(k) = hashChain(secret, n - k), checkpoint boundaries included', () => {
  // j = n - k is the chain position; checkpoints sit at multiples of 1,024.
  const positions = [N - 1, 3 * 1024 + 1, 3 * 1024, 3 * 1024 - 1, 2048, 1025, 1024, 1023, 1, 0];
  for (const j of positions) {
    const k = N - j;
    bytesIs(CHAIN.reveal(k), hashChain(SECRET, j), `k=${k} (position ${j})`);
    bytesIs(CHAIN.reveal(k), randaoReveal(SEED, N, k), `k=${k} vs core randaoReveal`);
  }
  bytesIs(CHAIN.reveal(N), SECRET, 'the last reveal is the secret itself');
});

build('every reveal hashes to the one before it, down the whole chain (n not a multiple of the spacing)', () => {
  const n = 100;
  const chain = new RandaoChain(SEED, n, 3);
  let last = chain.commitment();
  for (let k = 1; k <= n; k++) {
    const r = chain.reveal(k);
    bytesIs(sha3(r), last, `reveal ${k}`);
    last = r;
  }
  bytesIs(last, SECRET);
});

build('returned values are copies: mutating them leaves the chain intact', () => {
  const chain = new RandaoChain(SEED, 64, 2);
  chain.commitment().fill(0);
  chain.reveal(64).fill(0); // position 0: a stored checkpoint
  chain.reveal(4).fill(0); // position 60: a stored checkpoint
  bytesIs(chain.commitment(), randaoCommitment(SEED, 64));
  bytesIs(chain.reveal(64), SECRET);
  bytesIs(chain.reveal(4), hashChain(SECRET, 60));
});

const resume = suite('RandaoChain: next() from the beacon value');

resume('next(commitment) is the first reveal; next(reveal k) is reveal k+1, across checkpoints', () => {
  bytesIs(CHAIN.next(CHAIN.commitment()), CHAIN.reveal(1));
  for (const k of [1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 3072, N - 1025, N - 1024, N - 1023, N - 2, N - 1]) {
    bytesIs(CHAIN.next(CHAIN.reveal(k)), CHAIN.reveal(k + 1), `after reveal ${k}`);
    assert.is(CHAIN.revealsUsed(CHAIN.reveal(k)), k);
    assert.is(CHAIN.remaining(CHAIN.reveal(k)), N - k);
  }
  assert.is(CHAIN.revealsUsed(CHAIN.commitment()), 0);
  assert.is(CHAIN.remaining(CHAIN.commitment()), N);
});

resume('after a restart the validator resumes from the beacon state alone', () => {
  // A beacon and a validator; the validator proposes, "restarts" (a new RandaoChain with no
  // memory of its position), and proposes again using only the beacon's stored value.
  const genesisHash = sha3(utf8('restart genesis'));
  const n = 3000;
  let beacon = genesisRandao(genesisHash, [{ index: 0, randao_commitment: toHex(randaoCommitment(SEED, n)) }]);
  let client = new RandaoChain(SEED, n, 6);
  for (let proposal = 1; proposal <= 200; proposal++) {
    if (proposal % 37 === 0) client = new RandaoChain(SEED, n, 6);
    const r = client.next(beacon.last.get(0)!);
    // applyReveal itself checks SHA3(r) against the stored value; the naive core reveal (n - k
    // hashes, the slow path) is compared at a few points only, to keep the test fast.
    if (proposal % 50 === 0) bytesIs(r, randaoReveal(SEED, n, proposal), `proposal ${proposal}`);
    beacon = applyReveal(beacon, 0, r);
  }
  assert.is(client.revealsUsed(beacon.last.get(0)!), 200);
});

resume('a value that is not on this chain is refused', () => {
  const notOnChain = { code: 'RANDAO_VALUE_NOT_ON_CHAIN', status: 409 };
  expectError(() => CHAIN.next(randaoCommitment(filled(32, 0x43), N)), RandaoChainError, notOnChain);
  expectError(() => CHAIN.next(filled(32, 0)), RandaoChainError, notOnChain);
  expectError(() => CHAIN.revealsUsed(new Uint8Array(0)), RandaoChainError, notOnChain);
  // The same key with another length is another chain (a replaced commitment, for instance).
  expectError(() => CHAIN.next(randaoCommitment(SEED, N + 5000)), RandaoChainError, notOnChain);
});

const limits = suite('RandaoChain: exhaustion and arguments');

limits('exhaustion: reveal(n + 1) and next(last reveal) throw RANDAO_CHAIN_EXHAUSTED', () => {
  const n = 10;
  const chain = new RandaoChain(SEED, n, 2);
  expectError(() => chain.reveal(n + 1), RandaoChainError, {
    code: 'RANDAO_CHAIN_EXHAUSTED',
    message: 'RANDAO chain exhausted: reveal 11 asked of a chain of length 10; register a new commitment',
    status: 409,
  });
  bytesIs(chain.next(chain.reveal(n - 1)), SECRET);
  assert.is(chain.remaining(chain.reveal(n)), 0);
  expectError(() => chain.next(chain.reveal(n)), RandaoChainError, {
    code: 'RANDAO_CHAIN_EXHAUSTED',
    message: 'RANDAO chain exhausted: all 10 reveals used; register a new commitment',
  });
  expectError(() => CHAIN.next(SECRET), RandaoChainError, { code: 'RANDAO_CHAIN_EXHAUSTED' });
});

limits('invalid arguments are refused', () => {
  const bad = { code: 'INVALID_RANDAO_CHAIN_ARGUMENT', status: 400 };
  for (const k of [0, -1, 1.5, NaN]) expectError(() => CHAIN.reveal(k), RandaoChainError, { ...bad, message: `reveal number must be a positive integer, got ${k}` });
  for (const n of [0, -1, 2.5]) expectError(() => new RandaoChain(SEED, n), RandaoChainError, { ...bad, message: `RANDAO chain length must be a positive integer, got ${n}` });
  for (const bits of [-1, 31, 0.5]) expectError(() => new RandaoChain(SEED, 8, bits), RandaoChainError, bad);
  expectError(() => new RandaoChain(new Uint8Array(31), 8), CryptoError, { message: 'RANDAO secret needs the 32-byte key seed' });
});

build.run();
resume.run();
limits.run();
