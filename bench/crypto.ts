/** Single-threaded throughput of the chain's cryptographic primitives (ML-DSA-65, ML-KEM-1024, SHA3-256). */
import { randomBytes } from 'node:crypto';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { createMLDSA65 } from '@oqs/liboqs-js';
import { MlDsaWasm } from '../src/core/crypto/mldsa-wasm.js';
import { sha3 } from '../src/core/crypto/hash.js';
import {
  initSignatureBackend,
  keygenFromSeed,
  loadLiboqsBackend,
  nobleBackend,
  signatureBackend,
  type SignatureBackend,
  wasmBackend,
} from '../src/core/crypto/mldsa.js';
import { kemDecapsulate, kemEncapsulate, kemKeygen } from '../src/core/crypto/mlkem.js';
import { signStandardTx, verifyTxSignature } from '../src/core/types/transaction.js';
import { type BenchResult, cycle, formatTable, measure } from './harness.js';

export type { BenchResult } from './harness.js';

const CHAIN_ID = 'svc-bench';
const KEYS = 32;
// Signing time varies with the number of rejection-sampling rounds, so every sign call in a run
// gets a fresh message instead of replaying a few (possibly lucky) inputs.
const MESSAGES = 1024;
const MIB = 1 << 20;

const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n));

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`crypto bench self-check failed: ${what}`);
}

/** Runs the crypto benchmarks (about `seconds` per row) and prints a table unless `print` is false. */
export async function runCryptoBench(opts: { seconds: number; print?: boolean }): Promise<BenchResult[]> {
  const { seconds } = opts;
  const results: BenchResult[] = [];
  // `vs` names the row this one is compared with; the ratio reads as a speed-up over it.
  const add = (name: string, backend: string, value: number, vs?: { value: number; label: string }, unit: BenchResult['unit'] = 'ops/s'): void => {
    if (!vs) {
      results.push({ name, backend, unit, value });
      return;
    }
    const ratio = value / vs.value;
    results.push({ name, backend, unit, value, ratio, note: `${ratio.toFixed(1)}x ${vs.label}` });
  };

  // ML-DSA-65 key generation.
  const seeds = Array.from({ length: KEYS }, () => bytes(32));
  const nextSeed = cycle(seeds);
  const nobleKeygen = measure(() => keygenFromSeed(nextSeed()), seconds);
  add('ML-DSA-65 keygen', 'noble', nobleKeygen);
  const oqs = await createMLDSA65();
  try {
    add('ML-DSA-65 keygen', 'liboqs', measure(() => oqs.generateKeyPair(), seconds), { value: nobleKeygen, label: 'noble' });
  } finally {
    oqs.destroy();
  }

  // ML-DSA-65 signing and verification of 32-byte signing hashes, the size every protocol message signs.
  const keys = seeds.map(keygenFromSeed);
  const msgs = Array.from({ length: MESSAGES }, () => bytes(32));
  const nextSignInput = cycle(msgs.map((msg, i) => ({ sk: keys[i % KEYS]!.secretKey, msg })));
  const liboqs = await loadLiboqsBackend();
  const signRow = (signFn: (sk: Uint8Array, msg: Uint8Array) => Uint8Array): number =>
    measure(() => {
      const { sk, msg } = nextSignInput();
      return signFn(sk, msg);
    }, seconds);
  const nobleSign = signRow((sk, msg) => nobleBackend.sign(sk, msg));
  add('ML-DSA-65 sign', 'noble', nobleSign);
  add('ML-DSA-65 sign', 'liboqs', signRow((sk, msg) => liboqs.sign(sk, msg)), { value: nobleSign, label: 'noble' });
  const nobleDeterministic = signRow((sk, msg) => nobleBackend.signDeterministic(sk, msg));
  add('ML-DSA-65 sign (deterministic)', 'noble', nobleDeterministic, { value: nobleSign, label: 'noble hedged' });
  const svc = wasmBackend(1);
  add('ML-DSA-65 sign', 'svc-wasm', signRow((sk, msg) => svc.sign(sk, msg)), { value: nobleSign, label: 'noble' });
  add('ML-DSA-65 sign (deterministic)', 'svc-wasm', signRow((sk, msg) => svc.signDeterministic(sk, msg)), { value: nobleDeterministic, label: 'noble deterministic' });
  // A validator signs its block, VRF proof and vote with one key in a row: the module keeps that key's expansion.
  const oneKey = keys[0]!.secretKey;
  add('ML-DSA-65 sign (deterministic, one key)', 'svc-wasm', measure(() => svc.signDeterministic(oneKey, nextSignInput().msg), seconds), { value: nobleDeterministic, label: 'noble deterministic' });

  const signed = keys.map((k, i) => ({ pk: k.publicKey, msg: msgs[i]!, sig: nobleBackend.sign(k.secretKey, msgs[i]!) }));
  check(signed.every((s) => liboqs.verify(s.pk, s.msg, s.sig) && nobleBackend.verify(s.pk, s.msg, s.sig)), 'noble signatures verify under both backends');
  const nextSigned = cycle(signed);
  const verifyRow = (backend: SignatureBackend): number =>
    measure(() => {
      const { pk, msg, sig } = nextSigned();
      return backend.verify(pk, msg, sig);
    }, seconds);
  const nobleVerify = verifyRow(nobleBackend);
  const oqsVerify = verifyRow(liboqs);
  add('ML-DSA-65 verify', 'noble', nobleVerify);
  add('ML-DSA-65 verify', 'liboqs', oqsVerify, { value: nobleVerify, label: 'noble' });
  // svc's verifier: every key's expansion kept (the senders repeat), and none (a one-slot cache cycling through the keys).
  const cached = new MlDsaWasm(KEYS);
  const uncached = new MlDsaWasm(1);
  check(signed.every((s) => cached.verify(s.pk, s.msg, s.sig) && uncached.verify(s.pk, s.msg, s.sig)), 'noble signatures verify under svc-wasm');
  const wasmRow = (v: MlDsaWasm): number =>
    measure(() => {
      const { pk, msg, sig } = nextSigned();
      return v.verify(pk, msg, sig);
    }, seconds);
  add('ML-DSA-65 verify, key expansion cached', 'svc-wasm', wasmRow(cached), { value: oqsVerify, label: 'liboqs' });
  add('ML-DSA-65 verify, key not cached', 'svc-wasm', wasmRow(uncached), { value: oqsVerify, label: 'liboqs' });

  // End-to-end standard transaction verification (envelope encode + SHA3 + verify), bounded by raw liboqs verify.
  const previous = signatureBackend().name;
  await initSignatureBackend('liboqs');
  try {
    const txs = keys.map((k, i) =>
      signStandardTx({ nonce: BigInt(i), gasPrice: 1_000_000_000n, gasLimit: 21_000n, to: bytes(20), value: 10n ** 18n, data: new Uint8Array(0) }, k, CHAIN_ID),
    );
    check(txs.every((tx) => verifyTxSignature(tx, CHAIN_ID).length === 20), 'signed transactions verify');
    const nextTx = cycle(txs);
    const value = measure(() => verifyTxSignature(nextTx(), CHAIN_ID), seconds);
    const ratio = value / oqsVerify;
    results.push({ name: 'standard tx verify (end to end)', backend: 'liboqs', unit: 'ops/s', value, ratio, note: `tx verify/s vs raw verify/s = ${(100 * ratio).toFixed(0)}%` });
  } finally {
    await initSignatureBackend(previous);
  }

  // ML-KEM-1024, noble only: the P2P handshake uses it once per connection.
  const kem = kemKeygen();
  const enc = kemEncapsulate(kem.publicKey);
  check(kemDecapsulate(enc.ciphertext, kem.secretKey).every((b, i) => b === enc.sharedSecret[i]), 'ML-KEM round trip');
  add('ML-KEM-1024 keygen', 'noble', measure(() => kemKeygen(), seconds));
  add('ML-KEM-1024 encapsulate', 'noble', measure(() => kemEncapsulate(kem.publicKey), seconds));
  add('ML-KEM-1024 decapsulate', 'noble', measure(() => kemDecapsulate(enc.ciphertext, kem.secretKey), seconds));

  // SHA3-256: 32-byte inputs (hash chains, Merkle nodes) and 1 MiB inputs (bulk throughput, MB = 10^6 bytes).
  const small = bytes(32);
  const large = bytes(MIB);
  check(sha3(large).every((b, i) => b === sha3_256(large)[i]), 'node:crypto and noble SHA3-256 agree');
  const nobleSmall = measure(() => sha3_256(small), seconds);
  const nodeSmall = measure(() => sha3(small), seconds);
  const nobleLarge = (measure(() => sha3_256(large), seconds) * MIB) / 1e6;
  const nodeLarge = (measure(() => sha3(large), seconds) * MIB) / 1e6;
  add('SHA3-256 32 B', 'node:crypto', nodeSmall, { value: nobleSmall, label: 'noble' });
  add('SHA3-256 32 B', '@noble/hashes', nobleSmall);
  add('SHA3-256 1 MiB', 'node:crypto', nodeLarge, { value: nobleLarge, label: 'noble' }, 'MB/s');
  add('SHA3-256 1 MiB', '@noble/hashes', nobleLarge, undefined, 'MB/s');

  if (opts.print !== false) console.log(formatTable(`crypto (single thread, ~${seconds} s per row)`, results));
  return results;
}
