/** Wallets on disk under $SVC_HOME/wallets: atomic 0600 writes, lookup by name, address or path. */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { WalletError } from '../core/errors.js';
import { normalizeAddress } from '../core/crypto/address.js';
import { writeFileAtomic } from '../util/fs.js';
import { parseWalletFile, type WalletFile } from './keystore.js';

/** Per-user state directory: $SVC_HOME, default ~/.svc. */
export function svcHome(): string {
  return resolve(process.env.SVC_HOME || join(homedir(), '.svc'));
}

/** Directory holding the user's wallet files. */
export function walletsDir(): string {
  return join(svcHome(), 'wallets');
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Validates a wallet name (it becomes a file name, so no separators or dot-dot). */
export function checkWalletName(name: string): string {
  if (!NAME_RE.test(name)) throw new WalletError('INVALID_NAME', `wallet name must be 1-64 letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  // resolveWallet takes a reference ending in .json for a file path, so such a name could never be found again.
  if (/\.json$/i.test(name)) throw new WalletError('INVALID_NAME', `wallet name must not end in .json (the store adds it), got ${JSON.stringify(name)}`);
  return name;
}

/** A wallet file found on disk. */
export interface StoredWallet {
  name: string;
  path: string;
  wallet: WalletFile;
}

/** Reads and parses one wallet file. */
export async function readWallet(path: string): Promise<StoredWallet> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new WalletError('WALLET_NOT_FOUND', `cannot read wallet file ${path}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WalletError('INVALID_WALLET', `${path} is not valid JSON`);
  }
  return { name: basename(path, '.json'), path, wallet: parseWalletFile(json) };
}

/** Every wallet in the store; unreadable files are reported, not fatal. */
export async function listWallets(): Promise<{ wallets: StoredWallet[]; errors: Array<{ path: string; error: string }> }> {
  const dir = walletsDir();
  if (!existsSync(dir)) return { wallets: [], errors: [] };
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  const wallets: StoredWallet[] = [];
  const errors: Array<{ path: string; error: string }> = [];
  for (const n of names) {
    const path = join(dir, n);
    try {
      wallets.push(await readWallet(path));
    } catch (err) {
      errors.push({ path, error: (err as Error).message });
    }
  }
  return { wallets, errors };
}

/** Finds a wallet by file path, name in the store, or address (either key's). */
export async function resolveWallet(ref: string): Promise<StoredWallet> {
  if (ref.endsWith('.json') || ref.includes('/')) return readWallet(resolve(ref));
  if (NAME_RE.test(ref) && existsSync(join(walletsDir(), `${ref}.json`))) return readWallet(join(walletsDir(), `${ref}.json`));
  const lower = ref.toLowerCase();
  const { wallets } = await listWallets();
  const hit = wallets.find((w) => w.wallet.file.address === lower || (w.wallet.kind === 'v2' && w.wallet.file.ecdsa_address === lower));
  if (!hit) throw new WalletError('WALLET_NOT_FOUND', `no wallet named or addressed ${JSON.stringify(ref)} in ${walletsDir()}`);
  return hit;
}

/** Path of the wallet file called `name` in the store (validating the name). */
export function walletFilePath(name: string): string {
  return join(walletsDir(), `${checkWalletName(name)}.json`);
}

/** Saves a wallet file under its name in the store and returns the path. */
export async function saveWallet(name: string, contents: object, opts: { force?: boolean } = {}): Promise<string> {
  const path = walletFilePath(name);
  await writeFileAtomic(path, JSON.stringify(contents, null, 2) + '\n', opts);
  return path;
}

/** An address argument: a 0x address (any case), or the name, address or path of a wallet in the store. */
export async function resolveAddress(ref: string): Promise<string> {
  if (ref.startsWith('0x') || ref.startsWith('0X')) return normalizeAddress(ref, 'address');
  return (await resolveWallet(ref)).wallet.file.address;
}
