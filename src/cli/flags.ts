/** Flags shared by several commands. */
import { Flags } from '@oclif/core';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SvcError } from '../core/errors.js';
import { PRODUCTION_KDF } from '../wallet/kdf.js';
import { DEFAULT_EXECUTION_URL } from '../client/execution.js';
import { runningDevnet } from '../client/devnet-manifest.js';

/** `--genesis` of the commands that read a genesis file (resolved by defaultGenesisPath when absent). */
export const genesisFlag = Flags.string({ description: 'genesis file (default: SVC_GENESIS, else ./genesis.json)' });

/** `--dir` of the devnet commands that act on an existing devnet (resolved by currentDevnetDir when absent). */
export const devnetDirFlag = Flags.string({ description: 'devnet directory (default: SVC_DEVNET, else the one devnet up last started)' });

/** Genesis path used when none is given: $SVC_GENESIS, else ./genesis.json if present, else the running devnet's, else ./genesis.json. */
export function defaultGenesisPath(): string {
  if (process.env.SVC_GENESIS) return resolve(process.env.SVC_GENESIS);
  const local = resolve('genesis.json');
  if (existsSync(local)) return local;
  return runningDevnet()?.genesis ?? local;
}

/** `--password-file`. */
export const passwordFileFlag = Flags.string({ description: 'read the wallet password from this file (else SVC_PASSWORD, else a hidden prompt)' });

/** `--kdf-memory`: Argon2id memory in KiB; only tests and throwaway devnets should lower it. */
export const kdfMemoryFlag = Flags.integer({
  description: `Argon2id memory in KiB for new encrypted files (default ${PRODUCTION_KDF.memory}, or SVC_KDF_MEMORY_KIB); lower only for tests`,
  min: 64,
  max: 4 * 1024 * 1024,
  helpGroup: 'ADVANCED',
});

/** Resolves the KDF memory from the flag, then SVC_KDF_MEMORY_KIB, then the production default. */
export function kdfMemory(flag: number | undefined): number {
  if (flag !== undefined) return flag;
  const env = process.env.SVC_KDF_MEMORY_KIB;
  if (env === undefined || env === '') return PRODUCTION_KDF.memory;
  if (!/^[1-9][0-9]*$/.test(env) || Number(env) < 64) throw new SvcError('USAGE', `SVC_KDF_MEMORY_KIB must be an integer of at least 64, got ${JSON.stringify(env)}`);
  return Number(env);
}

/** `--execution-url`: REST URL of the execution node (resolved by resolveExecutionUrl). */
export const executionUrlFlag = Flags.string({
  description: `execution node REST URL (default: SVC_EXECUTION_URL, else ${DEFAULT_EXECUTION_URL})`,
  helpValue: 'URL',
});
