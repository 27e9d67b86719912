/**
 * Wallet file 2.0 (spec "Wallet file"): exact fields, Argon2id + AES-256-GCM, strict parsing,
 * the legacy watch-only layout, and the KDF running off the main thread.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { WalletError } from '../../src/core/errors.js';
import { DEV_MNEMONIC, walletPath } from '../../src/wallet/derivation.js';
import { deriveKey, newKdfParams, PRODUCTION_KDF } from '../../src/wallet/kdf.js';
import { newWalletFile, parseWalletFile, unlockWallet, type WalletFileV2 } from '../../src/wallet/keystore.js';
import { expectError } from '../helpers/assert.js';
import { httpStatusOf } from '../../src/api/errors.js';

const TEST_KIB = 256;
const PASSWORD = 'correct horse battery staple';
const DEV_ADDRESS_0 = '0xe8d00ff9844c4d1f09091fac56cf7164bb9f9fee';
const DEV_ECDSA_ADDRESS_0 = '0x1ec597eeeef84602cec86d08415ffe1c7696c58e';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function expectWalletError(fn: () => unknown, code: string, message: string): void {
  expectError(fn, WalletError, { code, message });
}

async function expectRejects(p: Promise<unknown>, code: string, message: string): Promise<WalletError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, WalletError, `expected a WalletError, got ${String(err)}`);
    assert.is((err as WalletError).code, code);
    assert.is((err as WalletError).message, message);
    return err as WalletError;
  }
  assert.unreachable(`expected a rejection with ${code}`);
  throw new Error('unreachable');
}

let cached: Promise<WalletFileV2> | undefined;
/** One dev wallet file shared by the read-only tests (each mutates its own clone). */
function devWallet(): Promise<WalletFileV2> {
  cached ??= newWalletFile(DEV_MNEMONIC, walletPath(0, 0), PASSWORD, TEST_KIB).then((r) => r.file);
  return cached;
}

/** A legacy wallet layout for a freshly generated ML-DSA key. */
function legacyFile() {
  const { publicKey } = keygenFromSeed(new Uint8Array(32).fill(7));
  return {
    address: '0x' + Buffer.from(sha3_256(publicKey).subarray(12)).toString('hex'),
    public_key: b64(publicKey),
    created_at: '2024-05-01T12:00:00Z',
  };
}

test('newWalletFile: exactly the spec fields and nothing else', async () => {
  const { file, keys } = await newWalletFile(DEV_MNEMONIC, walletPath(0, 0), PASSWORD, TEST_KIB);
  const json = clone(file) as unknown as Record<string, any>;
  assert.equal(Object.keys(json).sort(), ['address', 'derivation_path', 'dilithium_mode', 'ecdsa_address', 'ecdsa_curve', 'encrypted_seed', 'kdf', 'version']);
  assert.equal(Object.keys(json.kdf).sort(), ['algo', 'iterations', 'memory', 'parallelism', 'salt']);
  assert.is(json.version, '2.0');
  assert.is(json.address, DEV_ADDRESS_0);
  assert.is(json.ecdsa_address, DEV_ECDSA_ADDRESS_0);
  assert.is(json.address, keys.address);
  assert.is(json.ecdsa_address, keys.ecdsaAddress);
  assert.is(json.dilithium_mode, 3);
  assert.is(json.ecdsa_curve, 'secp256k1');
  assert.is(json.derivation_path, "m/44'/1'/0'/0'/0'");
  assert.equal({ ...json.kdf, salt: undefined }, { algo: 'argon2id', memory: TEST_KIB, iterations: 3, parallelism: 4, salt: undefined });
  assert.is(unb64(json.kdf.salt).length, 16);
  assert.is(b64(unb64(json.kdf.salt)), json.kdf.salt, 'salt is canonical base64');
  // nonce 12 + ciphertext of the 64-byte seed + GCM tag 16
  assert.is(unb64(json.encrypted_seed).length, 92);
  // The round trip through JSON parses back to the same file.
  assert.equal(parseWalletFile(json), { kind: 'v2', file });
});

test('two files of the same mnemonic use fresh salt and nonce', async () => {
  const a = await devWallet();
  const { file: b } = await newWalletFile(DEV_MNEMONIC, walletPath(0, 0), PASSWORD, TEST_KIB);
  assert.is(a.address, b.address);
  assert.is.not(a.kdf.salt, b.kdf.salt);
  assert.is.not(a.encrypted_seed, b.encrypted_seed);
  assert.is.not(unb64(a.encrypted_seed).subarray(0, 12).toString(), unb64(b.encrypted_seed).subarray(0, 12).toString());
});

test('unlockWallet with the right password yields the same keys', async () => {
  const file = clone(await devWallet());
  const keys = await unlockWallet(parseWalletFile(file).file as WalletFileV2, PASSWORD);
  assert.is(keys.address, DEV_ADDRESS_0);
  assert.is(keys.ecdsaAddress, DEV_ECDSA_ADDRESS_0);
  assert.is(keys.path, "m/44'/1'/0'/0'/0'");
  assert.is(keys.mldsa.publicKey.length, 1952);
});

test('wrong password → WRONG_PASSWORD (a WalletError, status 401), not a crash', async () => {
  const file = await devWallet();
  const err = await expectRejects(unlockWallet(file, PASSWORD + '!'), 'WRONG_PASSWORD', 'wrong password for this wallet (or the file is corrupted)');
  assert.is(httpStatusOf(err), 401);
  await expectRejects(unlockWallet(file, ''), 'WRONG_PASSWORD', 'wrong password for this wallet (or the file is corrupted)');
});

test('a tampered ciphertext, nonce or tag byte → WRONG_PASSWORD', async () => {
  const file = await devWallet();
  const blob = unb64(file.encrypted_seed);
  for (const at of [0, 11, 12, 40, 75, 76, 91]) {
    const t = blob.slice();
    t[at] ^= 0x01;
    const tampered = clone(file);
    tampered.encrypted_seed = b64(t);
    // It still parses: only decryption can tell.
    assert.is(parseWalletFile(tampered).kind, 'v2');
    await expectRejects(unlockWallet(tampered, PASSWORD), 'WRONG_PASSWORD', 'wrong password for this wallet (or the file is corrupted)');
  }
});

test('a tampered kdf salt → WRONG_PASSWORD', async () => {
  const tampered = clone(await devWallet());
  const salt = unb64(tampered.kdf.salt);
  salt[0] ^= 0xff;
  tampered.kdf.salt = b64(salt);
  await expectRejects(unlockWallet(tampered, PASSWORD), 'WRONG_PASSWORD', 'wrong password for this wallet (or the file is corrupted)');
});

test('a tampered address, ecdsa_address or derivation_path → INVALID_WALLET', async () => {
  const file = await devWallet();
  const corrupted = 'wallet file is corrupted: its addresses do not match the decrypted seed';
  const a = clone(file);
  a.address = '0x' + 'ab'.repeat(20);
  await expectRejects(unlockWallet(parseWalletFile(a).file as WalletFileV2, PASSWORD), 'INVALID_WALLET', corrupted);
  const e = clone(file);
  e.ecdsa_address = DEV_ECDSA_ADDRESS_0.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  await expectRejects(unlockWallet(parseWalletFile(e).file as WalletFileV2, PASSWORD), 'INVALID_WALLET', corrupted);
  const p = clone(file);
  p.derivation_path = walletPath(0, 1);
  await expectRejects(unlockWallet(parseWalletFile(p).file as WalletFileV2, PASSWORD), 'INVALID_WALLET', corrupted);
});

test('parseWalletFile normalises mixed-case addresses', async () => {
  const f = clone(await devWallet());
  f.address = '0x' + f.address.slice(2).toUpperCase();
  const parsed = parseWalletFile(f);
  assert.is(parsed.file.address, DEV_ADDRESS_0);
});

test('parseWalletFile rejects unknown fields (top level and in kdf)', async () => {
  const file = await devWallet();
  expectWalletError(() => parseWalletFile({ ...clone(file), mnemonic: DEV_MNEMONIC }), 'INVALID_WALLET', 'wallet file has unknown field mnemonic');
  expectWalletError(() => parseWalletFile({ ...clone(file), created_at: '2024-01-01T00:00:00Z' }), 'INVALID_WALLET', 'wallet file has unknown field created_at');
  const k = clone(file) as any;
  k.kdf.version = 16;
  expectWalletError(() => parseWalletFile(k), 'INVALID_WALLET', 'wallet kdf has unknown field version');
});

test('parseWalletFile rejects a bad kdf', async () => {
  const file = await devWallet();
  const withKdf = (patch: Record<string, unknown>) => ({ ...clone(file), kdf: { ...clone(file.kdf), ...patch } });
  expectWalletError(() => parseWalletFile(withKdf({ memory: 2 ** 40 })), 'INVALID_WALLET', 'wallet kdf.memory must be 32..4194304 KiB');
  expectWalletError(() => parseWalletFile(withKdf({ memory: 4 * 1024 * 1024 + 1 })), 'INVALID_WALLET', 'wallet kdf.memory must be 32..4194304 KiB');
  expectWalletError(() => parseWalletFile(withKdf({ memory: 31 })), 'INVALID_WALLET', 'wallet kdf.memory must be 32..4194304 KiB');
  expectWalletError(() => parseWalletFile(withKdf({ memory: '65536' })), 'INVALID_WALLET', 'wallet kdf.memory must be 32..4194304 KiB');
  expectWalletError(() => parseWalletFile(withKdf({ memory: 256.5 })), 'INVALID_WALLET', 'wallet kdf.memory must be 32..4194304 KiB');
  expectWalletError(() => parseWalletFile(withKdf({ iterations: 0 })), 'INVALID_WALLET', 'wallet kdf.iterations must be 1..64');
  expectWalletError(() => parseWalletFile(withKdf({ iterations: 65 })), 'INVALID_WALLET', 'wallet kdf.iterations must be 1..64');
  expectWalletError(() => parseWalletFile(withKdf({ parallelism: 0 })), 'INVALID_WALLET', 'wallet kdf.parallelism must be 1..16');
  expectWalletError(() => parseWalletFile(withKdf({ algo: 'scrypt' })), 'INVALID_WALLET', 'wallet kdf.algo must be argon2id');
  expectWalletError(() => parseWalletFile(withKdf({ algo: 'Argon2id' })), 'INVALID_WALLET', 'wallet kdf.algo must be argon2id');
  expectWalletError(() => parseWalletFile(withKdf({ salt: b64(new Uint8Array(15)) })), 'INVALID_WALLET', 'wallet kdf.salt must be at least 16 bytes');
  expectWalletError(() => parseWalletFile(withKdf({ salt: 'not base64!' })), 'INVALID_WALLET', 'invalid wallet file: malformed wallet kdf.salt: expected base64');
  expectWalletError(() => parseWalletFile({ ...clone(file), kdf: null }), 'INVALID_WALLET', 'wallet kdf.algo must be argon2id');
  // Boundaries that must pass.
  assert.is(parseWalletFile(withKdf({ memory: 32, parallelism: 4 })).kind, 'v2');
  assert.is(parseWalletFile(withKdf({ memory: 4 * 1024 * 1024, iterations: 64, parallelism: 16 })).kind, 'v2');
});

test('parseWalletFile rejects a wrong encrypted_seed length and other bad fields', async () => {
  const file = await devWallet();
  const blob = unb64(file.encrypted_seed);
  const with_ = (patch: Record<string, unknown>) => ({ ...clone(file), ...patch });
  const wrongLength = 'wallet encrypted_seed has the wrong length';
  expectWalletError(() => parseWalletFile(with_({ encrypted_seed: b64(blob.subarray(0, 91)) })), 'INVALID_WALLET', wrongLength);
  expectWalletError(() => parseWalletFile(with_({ encrypted_seed: b64(new Uint8Array([...blob, 0])) })), 'INVALID_WALLET', wrongLength);
  expectWalletError(() => parseWalletFile(with_({ encrypted_seed: '' })), 'INVALID_WALLET', wrongLength);
  expectWalletError(() => parseWalletFile(with_({ encrypted_seed: 12 })), 'INVALID_WALLET', 'invalid wallet file: malformed wallet encrypted_seed: expected base64');
  expectWalletError(() => parseWalletFile(with_({ dilithium_mode: 2 })), 'INVALID_WALLET', 'wallet dilithium_mode must be 3');
  expectWalletError(() => parseWalletFile(with_({ dilithium_mode: '3' })), 'INVALID_WALLET', 'wallet dilithium_mode must be 3');
  expectWalletError(() => parseWalletFile(with_({ ecdsa_curve: 'ed25519' })), 'INVALID_WALLET', 'wallet ecdsa_curve must be secp256k1');
  expectWalletError(() => parseWalletFile(with_({ derivation_path: undefined })), 'INVALID_WALLET', 'wallet derivation_path missing');
  expectWalletError(() => parseWalletFile(with_({ derivation_path: "m/44'/1'/0'/0/0" })), 'INVALID_WALLET', `invalid wallet file: derivation path m/44'/1'/0'/0/0: every level must be hardened (like 44'), got "0"`);
  expectWalletError(() => parseWalletFile(with_({ address: '0x1234' })), 'INVALID_WALLET', 'invalid wallet file: malformed wallet address: expected a 0x-prefixed 20-byte hex address');
  expectWalletError(() => parseWalletFile(with_({ version: '3.0' })), 'INVALID_WALLET', 'unsupported wallet file version "3.0"');
  expectWalletError(() => parseWalletFile(with_({ version: 2 })), 'INVALID_WALLET', 'unsupported wallet file version 2');
  expectWalletError(() => parseWalletFile({}), 'INVALID_WALLET', 'unsupported wallet file version null');
  expectWalletError(() => parseWalletFile([]), 'INVALID_WALLET', 'wallet file is not a JSON object');
  expectWalletError(() => parseWalletFile(null), 'INVALID_WALLET', 'wallet file is not a JSON object');
  expectWalletError(() => parseWalletFile('{}'), 'INVALID_WALLET', 'wallet file is not a JSON object');
});

test("legacy layout {address, public_key base64, created_at} parses as kind 'legacy'", () => {
  const legacy = legacyFile();
  assert.equal(parseWalletFile(legacy), { kind: 'legacy', file: legacy });
  // Mixed-case address on input, lowercase out.
  const mixed = { ...legacy, address: '0x' + legacy.address.slice(2).toUpperCase() };
  assert.equal(parseWalletFile(mixed), { kind: 'legacy', file: legacy });
});

test('a legacy file whose address does not derive from its key is rejected', () => {
  const legacy = legacyFile();
  const other = keygenFromSeed(new Uint8Array(32).fill(8)).publicKey;
  expectWalletError(() => parseWalletFile({ ...legacy, public_key: b64(other) }), 'INVALID_WALLET', 'legacy wallet address does not derive from its public_key');
  expectWalletError(() => parseWalletFile({ ...legacy, address: '0x' + '00'.repeat(20) }), 'INVALID_WALLET', 'legacy wallet address does not derive from its public_key');
  expectWalletError(() => parseWalletFile({ ...legacy, public_key: b64(new Uint8Array(10)) }), 'INVALID_WALLET', 'invalid wallet file: public key must be 1952 bytes, got 10');
  expectWalletError(() => parseWalletFile({ ...legacy, created_at: 'yesterday' }), 'INVALID_WALLET', 'legacy wallet created_at must be an ISO 8601 date');
  expectWalletError(() => parseWalletFile({ ...legacy, created_at: undefined }), 'INVALID_WALLET', 'legacy wallet created_at must be an ISO 8601 date');
});

test('production KDF defaults: Argon2id, 64 MiB, t=3, p=4', () => {
  assert.equal({ ...PRODUCTION_KDF }, { memory: 65536, iterations: 3, parallelism: 4 });
  const p = newKdfParams();
  assert.equal({ ...p, salt: '' }, { algo: 'argon2id', memory: 65536, iterations: 3, parallelism: 4, salt: '' });
  assert.is(newKdfParams(256).memory, 256);
});

test('deriveKey matches a fixed Argon2id output and depends on every input', async () => {
  const base = { algo: 'argon2id' as const, memory: 64, iterations: 1, parallelism: 1, salt: b64(new Uint8Array(16).fill(1)) };
  const k1 = await deriveKey('password', base);
  assert.is(k1.length, 32);
  assert.equal(await deriveKey('password', base), k1, 'deterministic');
  const variants = await Promise.all([
    deriveKey('passwore', base),
    deriveKey('password', { ...base, salt: b64(new Uint8Array(16).fill(2)) }),
    deriveKey('password', { ...base, memory: 128 }),
    deriveKey('password', { ...base, iterations: 2 }),
    deriveKey('password', { ...base, parallelism: 2 }),
  ]);
  for (const v of variants) assert.is.not(Buffer.from(v).toString('hex'), Buffer.from(k1).toString('hex'));
});

test('deriveKey with production memory does not block the event loop', async () => {
  const params = newKdfParams();
  assert.is(params.memory, PRODUCTION_KDF.memory);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    const key = await deriveKey(PASSWORD, params);
    assert.is(key.length, 32);
  } finally {
    clearInterval(timer);
  }
  // 64 MiB Argon2id takes hundreds of ms; on the main thread the interval could not fire at all.
  assert.ok(ticks >= 3, `the 5 ms interval fired only ${ticks} times while Argon2id ran`);
});

test.run();
