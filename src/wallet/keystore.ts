/**
 * Wallet file version 2.0: the BIP-39 seed encrypted with AES-256-GCM under an Argon2id key.
 * Nothing secret is stored in the clear; addresses are re-derived and checked on unlock.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { concatBytes, parseBase64, toBase64, utf8, toHex } from '../core/codec/bytes.js';
import { MalformedError, SvcError, WalletError } from '../core/errors.js';
import { addressFromPublicKey, normalizeAddress } from '../core/crypto/address.js';
import { deriveKey, type KdfParams, newKdfParams, parseKdfParams } from './kdf.js';
import { deriveSigningKeys, deriveWalletKeys, mnemonicToSeed, parsePath, type SigningKeys, type WalletKeys } from './derivation.js';

/** The spec's wallet file, exactly its fields. */
export interface WalletFileV2 {
  version: '2.0';
  address: string;
  ecdsa_address: string;
  /** base64(nonce[12] ‖ ciphertext[64] ‖ GCM tag[16]) of the 64-byte BIP-39 seed. */
  encrypted_seed: string;
  kdf: KdfParams;
  dilithium_mode: 3;
  ecdsa_curve: 'secp256k1';
  derivation_path: string;
}

/** The older layout: public data only, so it can only watch. */
export interface LegacyWalletFile {
  address: string;
  public_key: string;
  created_at: string;
}

export type WalletFile = { kind: 'v2'; file: WalletFileV2 } | { kind: 'legacy'; file: LegacyWalletFile };

/** Binds the ciphertext to the format, so a blob cannot be replayed into another file kind. */
const AAD = utf8('svc wallet 2.0');
const SEED_BYTES = 64;

/** An encrypted seed and the parameters that unlock it; shareable by every path of one mnemonic. */
export interface EncryptedSeed {
  encrypted_seed: string;
  kdf: KdfParams;
}

/** Encrypts a 64-byte BIP-39 seed under `password`. */
export async function encryptSeed(seed: Uint8Array, password: string, kdfMemoryKib?: number): Promise<EncryptedSeed> {
  if (seed.length !== SEED_BYTES) throw new WalletError('INVALID_SEED', `seed must be ${SEED_BYTES} bytes`);
  const kdf = newKdfParams(kdfMemoryKib);
  const key = await deriveKey(password, kdf);
  const nonce = new Uint8Array(randomBytes(12));
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(AAD);
  const ct = concatBytes(cipher.update(seed), cipher.final());
  return { encrypted_seed: toBase64(concatBytes(nonce, ct, cipher.getAuthTag())), kdf };
}

/** Builds the wallet file for `path` from an already encrypted seed. */
export function walletFileFor(encrypted: EncryptedSeed, keys: WalletKeys): WalletFileV2 {
  return {
    version: '2.0',
    address: keys.address,
    ecdsa_address: keys.ecdsaAddress,
    encrypted_seed: encrypted.encrypted_seed,
    kdf: encrypted.kdf,
    dilithium_mode: 3,
    ecdsa_curve: 'secp256k1',
    derivation_path: keys.path,
  };
}

/** Parses a wallet file of either layout; anything else is INVALID_WALLET. */
export function parseWalletFile(input: unknown): WalletFile {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new WalletError('INVALID_WALLET', 'wallet file is not a JSON object');
  const o = input as Record<string, unknown>;
  try {
    if (o.version === '2.0') {
      const keys = ['version', 'address', 'ecdsa_address', 'encrypted_seed', 'kdf', 'dilithium_mode', 'ecdsa_curve', 'derivation_path'];
      const extra = Object.keys(o).filter((k) => !keys.includes(k));
      if (extra.length) throw new WalletError('INVALID_WALLET', `wallet file has unknown field ${extra[0]}`);
      if (o.dilithium_mode !== 3) throw new WalletError('INVALID_WALLET', 'wallet dilithium_mode must be 3');
      if (o.ecdsa_curve !== 'secp256k1') throw new WalletError('INVALID_WALLET', 'wallet ecdsa_curve must be secp256k1');
      if (typeof o.derivation_path !== 'string') throw new WalletError('INVALID_WALLET', 'wallet derivation_path missing');
      parsePath(o.derivation_path);
      const blob = parseBase64(o.encrypted_seed, 'wallet encrypted_seed');
      if (blob.length !== 12 + SEED_BYTES + 16) throw new WalletError('INVALID_WALLET', 'wallet encrypted_seed has the wrong length');
      return {
        kind: 'v2',
        file: {
          version: '2.0',
          address: normalizeAddress(o.address, 'wallet address'),
          ecdsa_address: normalizeAddress(o.ecdsa_address, 'wallet ecdsa_address'),
          encrypted_seed: o.encrypted_seed as string,
          kdf: parseKdfParams(o.kdf),
          dilithium_mode: 3,
          ecdsa_curve: 'secp256k1',
          derivation_path: o.derivation_path,
        },
      };
    }
    if (o.version === undefined && 'public_key' in o) {
      const address = normalizeAddress(o.address, 'wallet address');
      const publicKey = parseBase64(o.public_key, 'wallet public_key');
      if (toHex(addressFromPublicKey(publicKey)) !== address) throw new WalletError('INVALID_WALLET', 'legacy wallet address does not derive from its public_key');
      if (typeof o.created_at !== 'string' || Number.isNaN(Date.parse(o.created_at))) throw new WalletError('INVALID_WALLET', 'legacy wallet created_at must be an ISO 8601 date');
      return { kind: 'legacy', file: { address, public_key: o.public_key as string, created_at: o.created_at } };
    }
  } catch (err) {
    if (err instanceof WalletError && err.code === 'INVALID_WALLET') throw err;
    throw new WalletError('INVALID_WALLET', `invalid wallet file: ${(err as SvcError | MalformedError).message}`);
  }
  throw new WalletError('INVALID_WALLET', `unsupported wallet file version ${JSON.stringify(o.version ?? null)}`);
}

/** Decrypts the 64-byte seed (the caller wipes it); a wrong password is WRONG_PASSWORD, never a crash. */
async function decryptSeed(file: WalletFileV2, password: string): Promise<Uint8Array> {
  const wrong = () => new WalletError('WRONG_PASSWORD', 'wrong password for this wallet (or the file is corrupted)');
  // Argon2 (hash-wasm) refuses an empty password, so no file is encrypted under one: it is simply wrong.
  if (password.length === 0) throw wrong();
  const blob = parseBase64(file.encrypted_seed, 'wallet encrypted_seed');
  const key = await deriveKey(password, file.kdf);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
    decipher.setAAD(AAD);
    decipher.setAuthTag(blob.subarray(12 + SEED_BYTES));
    return concatBytes(decipher.update(blob.subarray(12, 12 + SEED_BYTES)), decipher.final());
  } catch {
    throw wrong();
  }
}

const corrupted = () => new WalletError('INVALID_WALLET', 'wallet file is corrupted: its addresses do not match the decrypted seed');

/** Decrypts the seed and derives the keys; a wrong password is WRONG_PASSWORD, never a crash. */
export async function unlockWallet(file: WalletFileV2, password: string): Promise<WalletKeys> {
  const seed = await decryptSeed(file, password);
  const keys = deriveWalletKeys(seed, file.derivation_path);
  seed.fill(0);
  if (keys.address !== file.address || keys.ecdsaAddress !== file.ecdsa_address) throw corrupted();
  return keys;
}

/**
 * As unlockWallet, deriving only the ML-DSA-65 key, for a signer that never uses the secp256k1
 * one (a validator): its derivation was a third of the unlock, ~0.3 s of a 64-key client's
 * start. The address check covers the ML-DSA key; GCM already authenticated the seed.
 */
export async function unlockSigningKey(file: WalletFileV2, password: string): Promise<SigningKeys> {
  const seed = await decryptSeed(file, password);
  const keys = deriveSigningKeys(seed, file.derivation_path);
  seed.fill(0);
  if (keys.address !== file.address) throw corrupted();
  return keys;
}

/** Creates the encrypted wallet file for `mnemonic` at `path`; returns it with the derived keys. */
export async function newWalletFile(mnemonic: string, path: string, password: string, kdfMemoryKib?: number): Promise<{ file: WalletFileV2; keys: WalletKeys }> {
  const seed = mnemonicToSeed(mnemonic);
  const keys = deriveWalletKeys(seed, path);
  const file = walletFileFor(await encryptSeed(seed, password, kdfMemoryKib), keys);
  seed.fill(0);
  return { file, keys };
}
