/**
 * Mnemonic → keys. One BIP-39 seed yields both keys of a wallet at the same BIP-44 style path:
 * the ML-DSA-65 key through a SLIP-10 style hardened HMAC-SHA512 chain (lattice keys have no
 * public derivation, so every level is hardened), the secp256k1 key through standard BIP-32.
 */
import { createHmac } from 'node:crypto';
import { entropyToMnemonic, generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { toHex, utf8 } from '../core/codec/bytes.js';
import { WalletError } from '../core/errors.js';
import { addressFromPublicKey, ecdsaAddressFromPublicKey } from '../core/crypto/address.js';
import { keygenFromSeed, type MlDsaKeyPair } from '../core/crypto/mldsa.js';

/** SLIP-44 coin type 1 ("testnet, all coins") until the chain registers its own. */
export const COIN_TYPE = 1;
/** Account branches used by `svc genesis new` for its deterministic keys. */
export const Branch = { Accounts: 0, Validators: 1, Faucet: 2 } as const;

const HARDENED = 0x80000000;
const MLDSA_MASTER_KEY = utf8('svc ML-DSA-65 seed');
/** BIP-32's HMAC key of the master node. */
const BIP32_MASTER_KEY = utf8('Bitcoin seed');
const SECP256K1_ORDER = secp256k1.Point.Fn.ORDER;

/** The 24-word mnemonic of 32 zero bytes of entropy: public, for devnets only (like anvil's). */
export const DEV_MNEMONIC = entropyToMnemonic(new Uint8Array(32), wordlist);

/** `m/44'/1'/{account}'/0'/{index}'`. */
export function walletPath(account: number, index: number): string {
  return `m/44'/${COIN_TYPE}'/${account}'/0'/${index}'`;
}

/** Parses a fully hardened BIP-44 style path into child indices (hardened bit set). */
export function parsePath(path: string): number[] {
  const parts = path.split('/');
  if (parts[0] !== 'm' || parts.length < 2) throw new WalletError('INVALID_PATH', `derivation path must start with m/, got ${JSON.stringify(path)}`);
  return parts.slice(1).map((p) => {
    const m = /^(0|[1-9][0-9]*)'$/.exec(p);
    if (!m) throw new WalletError('INVALID_PATH', `derivation path ${path}: every level must be hardened (like 44'), got ${JSON.stringify(p)}`);
    const n = Number(m[1]);
    if (n >= HARDENED) throw new WalletError('INVALID_PATH', `derivation path ${path}: index ${n} out of range`);
    return n + HARDENED;
  });
}

/** Generates a fresh 24-word (256-bit) mnemonic. */
export function newMnemonic(): string {
  return generateMnemonic(wordlist, 256);
}

/** Normalises and validates a 24-word English BIP-39 mnemonic, returning its 64-byte seed. */
export function mnemonicToSeed(mnemonic: string): Uint8Array {
  const words = mnemonic.trim().toLowerCase().split(/\s+/);
  if (words.length !== 24) throw new WalletError('INVALID_MNEMONIC', `mnemonic must have 24 words, got ${words.length}`);
  const normal = words.join(' ');
  if (!validateMnemonic(normal, wordlist)) throw new WalletError('INVALID_MNEMONIC', 'mnemonic has an unknown word or a bad checksum');
  return mnemonicToSeedSync(normal);
}

// Native HMAC: a devnet derives ~140 keys before its first block, and @noble's JS HMAC-SHA512 was
// a visible share of that.
function hmacSha512(key: Uint8Array, data: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac('sha512', key).update(data).digest());
}

/** `0x00 ‖ key ‖ ser32(index)`: the data of a hardened child in both chains. */
function hardenedData(key: Uint8Array, index: number): Uint8Array {
  const data = new Uint8Array(37);
  data.set(key, 1);
  new DataView(data.buffer).setUint32(33, index, false);
  return data;
}

/** The 32-byte ML-DSA-65 key seed ξ at `path`. */
export function deriveMlDsaSeed(seed: Uint8Array, path: string): Uint8Array {
  let node = hmacSha512(MLDSA_MASTER_KEY, seed);
  for (const index of parsePath(path)) node = hmacSha512(node.subarray(32), hardenedData(node.subarray(0, 32), index));
  return node.slice(0, 32);
}

const toScalar = (b: Uint8Array): bigint => BigInt(toHex(b));
const fromScalar = (n: bigint): Uint8Array => {
  const out = new Uint8Array(32);
  let v = n;
  for (let i = 31; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
};

/**
 * The BIP-32 secp256k1 private key at a fully hardened `path` (the only kind parsePath accepts).
 * Hardened children need only the parent's private key, so this is a chain of HMACs and scalar
 * additions; a general BIP-32 library computes every intermediate public key (for fingerprints
 * nothing here uses), which was most of the cost of a wallet's keys. Follows BIP-32 exactly,
 * including the retry with the next index when a child is invalid (as @scure/bip32 does).
 */
export function deriveSecp256k1Key(seed: Uint8Array, path: string): Uint8Array {
  const master = hmacSha512(BIP32_MASTER_KEY, seed);
  let key = toScalar(master.subarray(0, 32));
  if (key === 0n || key >= SECP256K1_ORDER) throw new WalletError('INVALID_SEED', 'seed gives an invalid BIP-32 master key');
  let chain = master.subarray(32);
  for (let index of parsePath(path)) {
    for (;;) {
      const out = hmacSha512(chain, hardenedData(fromScalar(key), index));
      const tweak = toScalar(out.subarray(0, 32));
      const child = (key + tweak) % SECP256K1_ORDER;
      if (tweak < SECP256K1_ORDER && child !== 0n) {
        key = child;
        chain = out.subarray(32);
        break;
      }
      // Probability about 2^-127 per level; BIP-32 says to proceed with the next index.
      if (index >= 0xffffffff) throw new WalletError('INVALID_PATH', `no secp256k1 key at ${path}`);
      index += 1;
    }
  }
  return fromScalar(key);
}

/** Everything a wallet derives from its seed. The secret parts never leave memory. */
export interface WalletKeys {
  path: string;
  mldsaSeed: Uint8Array;
  mldsa: MlDsaKeyPair;
  address: string;
  ecdsaPrivateKey: Uint8Array;
  ecdsaAddress: string;
}

/** The ML-DSA-65 half of a wallet's keys: all a validator signs with. */
export type SigningKeys = Pick<WalletKeys, 'path' | 'mldsaSeed' | 'mldsa' | 'address'>;

/** Derives the ML-DSA-65 key of a wallet at `path` (no secp256k1 key). */
export function deriveSigningKeys(seed: Uint8Array, path: string): SigningKeys {
  const mldsaSeed = deriveMlDsaSeed(seed, path);
  const mldsa = keygenFromSeed(mldsaSeed);
  return { path, mldsaSeed, mldsa, address: toHex(addressFromPublicKey(mldsa.publicKey)) };
}

/** Derives both keys of a wallet at `path`. */
export function deriveWalletKeys(seed: Uint8Array, path: string): WalletKeys {
  const ecdsaPrivateKey = deriveSecp256k1Key(seed, path);
  return {
    ...deriveSigningKeys(seed, path),
    ecdsaPrivateKey,
    ecdsaAddress: toHex(ecdsaAddressFromPublicKey(secp256k1.getPublicKey(ecdsaPrivateKey, false))),
  };
}
