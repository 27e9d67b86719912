/**
 * Mnemonic → keys: BIP-39 seed, SLIP-10 style hardened chain for ML-DSA-65, BIP-32 for secp256k1.
 * The secp256k1 side is cross-checked against @scure/bip32 + @noble/curves + keccak directly, and that
 * reference itself against two well-known Ethereum vectors.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256, sha3_256 } from '@noble/hashes/sha3.js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { WalletError } from '../../src/core/errors.js';
import { DEV_MNEMONIC, deriveMlDsaSeed, deriveSecp256k1Key, deriveWalletKeys, mnemonicToSeed, parsePath, walletPath } from '../../src/wallet/derivation.js';
import { expectError } from '../helpers/assert.js';

const H = 0x80000000;
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

/** Frozen: the public dev mnemonic's first account, m/44'/1'/0'/0'/0'. Changing derivation changes these. */
const DEV_ADDRESS_0 = '0xe8d00ff9844c4d1f09091fac56cf7164bb9f9fee';
const DEV_ECDSA_ADDRESS_0 = '0x1ec597eeeef84602cec86d08415ffe1c7696c58e';

/** Reference Ethereum address of the BIP-32 key at `path`, computed without any project code. */
function referenceEthAddress(mnemonic: string, path: string): string {
  const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(path);
  const uncompressed = secp256k1.Point.fromBytes(key.publicKey!).toBytes(false);
  return hex(keccak_256(uncompressed.subarray(1)).subarray(12));
}

function expectWalletError(fn: () => unknown, code: string, message: string): void {
  expectError(fn, WalletError, { code, message });
}

test('DEV_MNEMONIC is the 24-word "abandon … art" mnemonic (all-zero entropy)', () => {
  assert.is(DEV_MNEMONIC, Array(23).fill('abandon').join(' ') + ' art');
});

test('walletPath is the fully hardened BIP-44 style path with coin type 1', () => {
  assert.is(walletPath(0, 0), "m/44'/1'/0'/0'/0'");
  assert.is(walletPath(2, 7), "m/44'/1'/2'/0'/7'");
});

test('same mnemonic and path give the same keys every time', () => {
  const path = walletPath(0, 0);
  const a = deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), path);
  const b = deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), path);
  assert.is(a.path, path);
  assert.is(a.address, b.address);
  assert.is(a.ecdsaAddress, b.ecdsaAddress);
  assert.equal(a.mldsa.publicKey, b.mldsa.publicKey);
  assert.equal(a.ecdsaPrivateKey, b.ecdsaPrivateKey);
  assert.equal(a.mldsaSeed, b.mldsaSeed);
});

test('known addresses of DEV_MNEMONIC at walletPath(0, 0) (frozen literals)', () => {
  const k = deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), walletPath(0, 0));
  assert.is(k.address, DEV_ADDRESS_0);
  assert.is(k.ecdsaAddress, DEV_ECDSA_ADDRESS_0);
});

test('a different index, account or branch gives different keys', () => {
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const paths = [walletPath(0, 0), walletPath(0, 1), walletPath(1, 0), walletPath(2, 0), "m/44'/1'/0'/1'/0'"];
  const keys = paths.map((p) => deriveWalletKeys(seed, p));
  assert.is(new Set(keys.map((k) => k.address)).size, paths.length);
  assert.is(new Set(keys.map((k) => k.ecdsaAddress)).size, paths.length);
  assert.is(new Set(keys.map((k) => hex(k.mldsaSeed))).size, paths.length);
});

test('a different mnemonic gives different keys at the same path', () => {
  const other = 'zoo '.repeat(23) + 'vote';
  const a = deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), walletPath(0, 0));
  const b = deriveWalletKeys(mnemonicToSeed(other), walletPath(0, 0));
  assert.is.not(a.address, b.address);
  assert.is.not(a.ecdsaAddress, b.ecdsaAddress);
});

test('reference Ethereum derivation reproduces well-known vectors', () => {
  // Hardhat/anvil's first account and the 24-word "abandon … art" MetaMask-path account.
  assert.is(referenceEthAddress('test test test test test test test test test test test junk', "m/44'/60'/0'/0/0"), '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
  assert.is(referenceEthAddress(DEV_MNEMONIC, "m/44'/60'/0'/0/0"), '0xf278cf59f82edcf871d630f28ecc8056f25c1cdb');
});

test("ecdsa address at m/44'/1'/0'/0'/0' (and /1') is the Ethereum address of the BIP-32 key", () => {
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  for (const path of [walletPath(0, 0), walletPath(0, 1)]) {
    const k = deriveWalletKeys(seed, path);
    assert.is(k.ecdsaAddress, referenceEthAddress(DEV_MNEMONIC, path));
    assert.equal(k.ecdsaPrivateKey, HDKey.fromMasterSeed(mnemonicToSeedSync(DEV_MNEMONIC)).derive(path).privateKey);
  }
});

test('deriveSecp256k1Key is BIP-32 (vector 1, m/0H) and agrees with @scure/bip32 on every hardened path tried', () => {
  const vector1 = Uint8Array.from(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex'));
  assert.is(hex(deriveSecp256k1Key(vector1, "m/0'")), '0xedb2e14f9ee77d26dd93b4ecede8d16ed408ce149b6cd80b0715a2d911a0afea');
  const seeds = [mnemonicToSeed(DEV_MNEMONIC), mnemonicToSeed('zoo '.repeat(23) + 'vote'), vector1];
  const paths = [walletPath(0, 0), walletPath(1, 63), walletPath(2, 0), "m/2147483647'", "m/44'/60'/0'/0'/5'/7'/2147483647'", "m/0'/0'/0'/0'/0'/0'/0'/0'"];
  for (const seed of seeds) {
    for (const path of paths) assert.equal(deriveSecp256k1Key(seed, path), HDKey.fromMasterSeed(seed).derive(path).privateKey, path);
  }
  for (let i = 0; i < 32; i++) {
    const path = walletPath(i % 3, i * 7919);
    assert.equal(deriveSecp256k1Key(seeds[0]!, path), HDKey.fromMasterSeed(seeds[0]!).derive(path).privateKey, path);
  }
});

test('ML-DSA key is FIPS 204 keygen of the derived seed, and its address is the last 20 bytes of SHA3-256(pk)', () => {
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const k = deriveWalletKeys(seed, walletPath(0, 0));
  assert.equal(k.mldsaSeed, deriveMlDsaSeed(seed, walletPath(0, 0)));
  assert.is(k.mldsaSeed.length, 32);
  const ref = ml_dsa65.keygen(k.mldsaSeed);
  assert.equal(k.mldsa.publicKey, ref.publicKey);
  assert.equal(k.mldsa.secretKey, ref.secretKey);
  assert.is(k.address, hex(sha3_256(ref.publicKey).subarray(12)));
});

test('ML-DSA seed chain is independent of the secp256k1 key', () => {
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const k = deriveWalletKeys(seed, walletPath(0, 0));
  assert.is.not(hex(k.mldsaSeed), hex(k.ecdsaPrivateKey));
});

test('parsePath returns hardened child indices', () => {
  assert.equal(parsePath("m/44'/1'/0'/0'/0'"), [44 + H, 1 + H, H, H, H]);
  assert.equal(parsePath("m/2147483647'"), [0xffffffff]);
});

test('parsePath rejects non-hardened levels, a missing m/, and junk', () => {
  const notHardened = (path: string, part: string) =>
    `derivation path ${path}: every level must be hardened (like 44'), got ${JSON.stringify(part)}`;
  expectWalletError(() => parsePath("m/44'/1'/0'/0/0"), 'INVALID_PATH', notHardened("m/44'/1'/0'/0/0", '0'));
  expectWalletError(() => parsePath("m/44/1'/0'/0'/0'"), 'INVALID_PATH', notHardened("m/44/1'/0'/0'/0'", '44'));
  expectWalletError(() => parsePath("44'/1'/0'/0'/0'"), 'INVALID_PATH', `derivation path must start with m/, got "44'/1'/0'/0'/0'"`);
  expectWalletError(() => parsePath("M/44'/1'"), 'INVALID_PATH', `derivation path must start with m/, got "M/44'/1'"`);
  expectWalletError(() => parsePath('m'), 'INVALID_PATH', 'derivation path must start with m/, got "m"');
  expectWalletError(() => parsePath(''), 'INVALID_PATH', 'derivation path must start with m/, got ""');
  expectWalletError(() => parsePath('m/'), 'INVALID_PATH', notHardened('m/', ''));
  expectWalletError(() => parsePath("m/44'/"), 'INVALID_PATH', notHardened("m/44'/", ''));
  expectWalletError(() => parsePath("m/44h/1'"), 'INVALID_PATH', notHardened("m/44h/1'", '44h'));
  expectWalletError(() => parsePath("m/abc'"), 'INVALID_PATH', notHardened("m/abc'", "abc'"));
  expectWalletError(() => parsePath("m/01'"), 'INVALID_PATH', notHardened("m/01'", "01'"));
  expectWalletError(() => parsePath("m/-1'"), 'INVALID_PATH', notHardened("m/-1'", "-1'"));
  expectWalletError(() => parsePath("m/44''"), 'INVALID_PATH', notHardened("m/44''", "44''"));
  expectWalletError(() => parsePath("m/ 44'"), 'INVALID_PATH', notHardened("m/ 44'", " 44'"));
  expectWalletError(() => parsePath("m/2147483648'"), 'INVALID_PATH', "derivation path m/2147483648': index 2147483648 out of range");
});

test('deriveWalletKeys refuses a non-hardened path', () => {
  expectWalletError(
    () => deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), "m/44'/60'/0'/0/0"),
    'INVALID_PATH',
    `derivation path m/44'/60'/0'/0/0: every level must be hardened (like 44'), got "0"`,
  );
});

test('mnemonicToSeed is the BIP-39 seed (empty passphrase)', () => {
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  assert.is(seed.length, 64);
  assert.equal(seed, mnemonicToSeedSync(DEV_MNEMONIC));
});

test('mnemonicToSeed rejects 12 and 23 words, a bad checksum, an unknown word (INVALID_MNEMONIC)', () => {
  const words = DEV_MNEMONIC.split(' ');
  const badWord = 'mnemonic has an unknown word or a bad checksum';
  // A valid 12-word mnemonic is still refused: wallets are 24 words.
  expectWalletError(() => mnemonicToSeed('abandon '.repeat(11) + 'about'), 'INVALID_MNEMONIC', 'mnemonic must have 24 words, got 12');
  expectWalletError(() => mnemonicToSeed(words.slice(0, 23).join(' ')), 'INVALID_MNEMONIC', 'mnemonic must have 24 words, got 23');
  expectWalletError(() => mnemonicToSeed(DEV_MNEMONIC + ' abandon'), 'INVALID_MNEMONIC', 'mnemonic must have 24 words, got 25');
  expectWalletError(() => mnemonicToSeed(''), 'INVALID_MNEMONIC', 'mnemonic must have 24 words, got 1');
  // Swap the last word: "art" ↔ "abandon" breaks the checksum.
  const swapped = [...words.slice(0, 22), 'art', 'abandon'].join(' ');
  expectWalletError(() => mnemonicToSeed(swapped), 'INVALID_MNEMONIC', badWord);
  expectWalletError(() => mnemonicToSeed([...words.slice(0, 23), 'zoo'].join(' ')), 'INVALID_MNEMONIC', badWord);
  expectWalletError(() => mnemonicToSeed(['notaword', ...words.slice(1)].join(' ')), 'INVALID_MNEMONIC', badWord);
  expectWalletError(() => mnemonicToSeed(['abandon1', ...words.slice(1)].join(' ')), 'INVALID_MNEMONIC', badWord);
});

test('mnemonicToSeed accepts extra whitespace and uppercase', () => {
  const expected = mnemonicToSeed(DEV_MNEMONIC);
  const messy = '  \n' + DEV_MNEMONIC.toUpperCase().split(' ').join(' \t  ') + '\r\n ';
  assert.equal(mnemonicToSeed(messy), expected);
  const mixed = DEV_MNEMONIC.split(' ').map((w, i) => (i % 2 ? w : w[0]!.toUpperCase() + w.slice(1))).join('  ');
  assert.equal(mnemonicToSeed(mixed), expected);
});

test.run();
