/**
 * The keystores of `svc node validator`: `--keystore` (repeatable) and `--keystores-dir` (every
 * `*.json` in it), checked before anything starts so a mistake is one clear error, not a
 * validator that silently never gets a duty:
 * - neither flag: USAGE (exit 2);
 * - a directory that does not exist: KEYSTORES_DIR_NOT_FOUND; one without keystores: NO_KEYSTORES;
 * - one file named twice (also through the directory), or two files of one address:
 *   DUPLICATE_KEYSTORE (two clients of one key in one process would double-sign);
 * - a key that is not a genesis validator of this chain: KEYSTORE_NOT_IN_GENESIS (another chain's
 *   keystore), unless `--allow-non-genesis-keys` (a validator that joined by deposit).
 * All are SvcErrors (exit 1) naming the file.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SvcError } from '../core/errors.js';
import type { Genesis } from '../core/genesis/genesis.js';
import type { SigningKeys } from '../wallet/derivation.js';
import { readWallet } from '../wallet/store.js';
import { UsageError } from './base.js';
import { unlockSigningKeystore } from './node-setup.js';

/** Keystores unlocked at a time: each unlock is an Argon2id worker, and the machine may have two cores. */
const UNLOCK_PARALLELISM = 2;

/** Where the keystores come from and how they are unlocked. */
export interface ValidatorKeystoreOptions {
  keystores: readonly string[];
  keystoresDir?: string | undefined;
  passwordFile?: string | undefined;
  allowNonGenesis?: boolean;
}

/** The keystore paths the flags name, absolute, in the order given (files, then the directory's by name). */
export async function keystorePaths(o: Pick<ValidatorKeystoreOptions, 'keystores' | 'keystoresDir'>): Promise<string[]> {
  if (o.keystores.length === 0 && o.keystoresDir === undefined) throw new UsageError('no validator key: give --keystore FILE (repeatable) or --keystores-dir DIR');
  const paths = o.keystores.map((p) => resolve(p));
  if (o.keystoresDir !== undefined) {
    const dir = resolve(o.keystoresDir);
    const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
    if (!isDir) throw new SvcError('KEYSTORES_DIR_NOT_FOUND', `--keystores-dir ${o.keystoresDir}: no such directory`);
    const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    if (names.length === 0) throw new SvcError('NO_KEYSTORES', `--keystores-dir ${o.keystoresDir} holds no keystore (*.json)`);
    paths.push(...names.map((n) => join(dir, n)));
  }
  const seen = new Set<string>();
  for (const p of paths) {
    if (seen.has(p)) throw new SvcError('DUPLICATE_KEYSTORE', `keystore ${p} is given twice (--keystore and --keystores-dir name it both, or --keystore repeats it)`);
    seen.add(p);
  }
  return paths;
}

/** Reads, checks and unlocks every keystore the flags name (one password source for all); only the ML-DSA-65 keys, all a validator signs with. */
export async function loadValidatorKeystores(genesis: Genesis, o: ValidatorKeystoreOptions): Promise<SigningKeys[]> {
  const paths = await keystorePaths(o);
  // Addresses come from the files before any (slow) unlock, so a duplicate or foreign key fails fast.
  const byAddress = new Map<string, string>();
  const stated: string[] = [];
  const genesisValidators = new Set(genesis.validators.map((v) => v.address.toLowerCase()));
  for (const p of paths) {
    const address = (await readWallet(p)).wallet.file.address.toLowerCase();
    stated.push(address);
    const other = byAddress.get(address);
    if (other !== undefined) throw new SvcError('DUPLICATE_KEYSTORE', `keystores ${other} and ${p} hold the same validator key ${address}`);
    byAddress.set(address, p);
    if (!o.allowNonGenesis && !genesisValidators.has(address)) {
      throw new SvcError(
        'KEYSTORE_NOT_IN_GENESIS',
        `keystore ${p} (${address}) is not a validator in the genesis of chain ${genesis.chain_id}: another chain's keystore? (a validator that joined by deposit needs --allow-non-genesis-keys)`,
      );
    }
  }
  const keys: SigningKeys[] = new Array<SigningKeys>(paths.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) {
      keys[i] = await unlockSigningKeystore(paths[i]!, genesis, { passwordFile: o.passwordFile, envVar: 'SVC_VALIDATOR_PASSWORD', what: 'validator', flag: '--password-file' });
      // The checks above trusted the file's address field: the key itself must agree.
      if (keys[i]!.address.toLowerCase() !== stated[i]) throw new SvcError('KEYSTORE_ADDRESS_MISMATCH', `keystore ${paths[i]} says address ${stated[i]} but its key is ${keys[i]!.address}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(UNLOCK_PARALLELISM, paths.length) }, worker));
  return keys;
}
