/** Start-up pieces shared by the `svc node …` commands: flags, logger, TLS, secrets, keystores, the faucet key. */
import { Flags } from '@oclif/core';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseHex } from '../core/codec/bytes.js';
import { SvcError, WalletError } from '../core/errors.js';
import type { Genesis } from '../core/genesis/genesis.js';
import { type TlsPair, loadTlsPair, tlsWarnings } from '../node/shared/tls.js';
import { type Logger, createLogger, isLogLevel } from '../util/log.js';
import type { SigningKeys, WalletKeys } from '../wallet/derivation.js';
import { type WalletFileV2, unlockSigningKey, unlockWallet } from '../wallet/keystore.js';
import { readWallet } from '../wallet/store.js';
import { DEVNET_PASSWORD } from '../genesis/build.js';
import { readSecret } from './secrets.js';
import { HISTORY_MODES, type HistoryMode, defaultHistory } from '../node/execution/pruning.js';

/** `--log-level` of the long-running node commands. */
export const logLevelFlag = Flags.string({ description: 'debug, info, warn or error', default: 'info' });

/** `--history` of the nodes that run execution (pruning.ts); unset: the genesis preset's default. */
export const historyFlag = Flags.string({
  description: "past states kept: full (every block's, the devnet preset's default) or finalized (only what building on finality needs, the other presets' default)",
  options: [...HISTORY_MODES],
});

/** The `--history` value as a mode, or the genesis preset's default. */
export function historyMode(flag: string | undefined, genesis: Genesis): HistoryMode {
  if (flag === undefined) return defaultHistory(genesis.preset);
  const mode = HISTORY_MODES.find((m) => m === flag);
  if (!mode) throw new SvcError('USAGE', `--history must be ${HISTORY_MODES.join(' or ')}, got ${flag}`);
  return mode;
}

/**
 * Waits for the first SIGINT or SIGTERM, logs `shutting down` with it, runs `stop`, and resolves
 * once that has settled: a node command's last step. A failed stop still resolves (the process
 * is on its way out); `logFailure` logs it as `shutdown failed` first.
 */
export function stopOnSignal(log: Logger, stop: () => Promise<unknown>, o: { logFailure: boolean }): Promise<void> {
  return new Promise<void>((done) => {
    const onSignal = (signal: string) => {
      log.info('shutting down', { signal });
      stop().then(
        () => done(),
        (err: Error) => {
          if (o.logFailure) log.error('shutdown failed', { error: err.message });
          done();
        },
      );
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
}

/** The JSON-lines logger of a node command, refusing an unknown `--log-level`. */
export function nodeLogger(component: string, level: string): Logger {
  if (!isLogLevel(level)) throw new SvcError('USAGE', `--log-level must be debug, info, warn or error, got ${level}`);
  return createLogger(component, level);
}

/** `--tls-cert` / `--tls-key` of a beacon (oclif refuses one without the other, exit 2). */
export function tlsFlags(certDescription: string) {
  return {
    'tls-cert': Flags.string({ description: certDescription, dependsOn: ['tls-key'] }),
    'tls-key': Flags.string({ description: 'PEM private key of --tls-cert (needs --tls-cert)', dependsOn: ['tls-cert'] }),
  };
}

/** Loads the `--tls-cert`/`--tls-key` pair when given, logging what the certificate does not cover (expiry, `host`). */
export async function loadTlsFlags(flags: { 'tls-cert'?: string; 'tls-key'?: string }, host: string, log: Logger): Promise<TlsPair | undefined> {
  const cert = flags['tls-cert'];
  const key = flags['tls-key'];
  if (!cert || !key) return undefined;
  const tls = await loadTlsPair(resolve(cert), resolve(key));
  for (const warning of tlsWarnings(tls.certificate, host)) log.warn(warning, { tls_cert: resolve(cert) });
  return tls;
}

/** Reads a 32-byte hex engine JWT secret file (with or without 0x). */
export async function readJwtSecret(file: string, flag: string): Promise<Uint8Array> {
  const text = (
    await readFile(file, 'utf8').catch(() => {
      throw new SvcError('USAGE', `cannot read ${flag} file ${file}`);
    })
  ).trim();
  return parseHex(text.startsWith('0x') ? text : `0x${text}`, 'engine JWT secret', 32);
}

/**
 * Unlocks a keystore. The password comes from `passwordFile`, else `envVar`, else (devnet
 * genesis only) the public devnet default; errors name the file and how to give the password.
 */
export async function unlockKeystore(path: string, genesis: Genesis, o: KeystoreUnlockOptions): Promise<WalletKeys> {
  return openKeystore(path, genesis, o, unlockWallet);
}

/** As unlockKeystore, deriving only the ML-DSA-65 key (a validator signs with nothing else). */
export async function unlockSigningKeystore(path: string, genesis: Genesis, o: KeystoreUnlockOptions): Promise<SigningKeys> {
  return openKeystore(path, genesis, o, unlockSigningKey);
}

/** Where a keystore's password comes from, and how errors name it. */
export interface KeystoreUnlockOptions {
  passwordFile?: string | undefined;
  envVar: string;
  what: string;
  flag: string;
}

async function openKeystore<K>(path: string, genesis: Genesis, o: KeystoreUnlockOptions, unlock: (file: WalletFileV2, password: string) => Promise<K>): Promise<K> {
  const stored = await readWallet(path);
  if (stored.wallet.kind !== 'v2') throw new WalletError('WATCH_ONLY', `${path} is watch-only and cannot sign`);
  const password =
    o.passwordFile || process.env[o.envVar] !== undefined || genesis.preset !== 'devnet'
      ? await readSecret({ file: o.passwordFile, envVar: o.envVar, prompt: `${o.what} password: `, what: `${o.what} password`, fileFlag: o.flag })
      : DEVNET_PASSWORD;
  return unlock(stored.wallet.file, password).catch((err: Error) => {
    throw new WalletError('KEYSTORE_UNLOCK_FAILED', `cannot unlock the ${o.what} keystore ${path}: ${err.message} (give its password with ${o.flag} or ${o.envVar})`);
  });
}

/** The genesis faucet key from `keystore` (default: keystores/faucet.json beside the genesis), if present. */
export async function loadFaucetKey(genesisPath: string, genesis: Genesis, keystore: string | undefined, passwordFile: string | undefined, log: Logger): Promise<{ key: WalletKeys['mldsa']; address: string } | undefined> {
  const path = keystore ?? join(dirname(genesisPath), 'keystores', 'faucet.json');
  if (!keystore && !existsSync(path)) {
    log.warn('faucet disabled: no faucet keystore', { looked_for: path });
    return undefined;
  }
  const keys = await unlockKeystore(path, genesis, { passwordFile, envVar: 'SVC_FAUCET_PASSWORD', what: 'faucet', flag: '--faucet-password-file' });
  return { key: keys.mldsa, address: keys.address };
}
