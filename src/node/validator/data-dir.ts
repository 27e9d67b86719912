/** A validator data directory: its slashing-protection database, bound to one genesis. */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { writeFileAtomic } from '../../util/fs.js';
import { SlashingProtectionDb } from './slashing-protection.js';

/** Where a validator data directory keeps its slashing-protection LevelDB. */
export function slashingDbDir(dataDir: string): string {
  return join(dataDir, 'slashing-protection');
}

/**
 * Opens the slashing-protection database of a validator data directory, bound to one genesis:
 * the first use writes `genesis-hash` (the EIP-3076 genesis_validators_root), and a directory
 * made for another chain is refused (GENESIS_MISMATCH) rather than mixed. With `create: false`
 * a directory without a database is NOT_FOUND instead of being created.
 */
export async function openValidatorDataDir(dataDir: string, genesis: Genesis, opts: { create?: boolean } = {}): Promise<SlashingProtectionDb> {
  const want = toHex(genesisHash(genesis));
  const marker = join(dataDir, 'genesis-hash');
  if (opts.create === false && !existsSync(slashingDbDir(dataDir))) {
    throw new SvcError('NOT_FOUND', `${dataDir} holds no slashing-protection database (expected ${slashingDbDir(dataDir)})`, 404);
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  let have: string | undefined;
  try {
    have = (await readFile(marker, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new SvcError('DATA_DIR_UNREADABLE', `cannot read ${marker}: ${(err as Error).message}`, 500);
  }
  if (have !== undefined && have !== want) {
    throw new SvcError('GENESIS_MISMATCH', `${dataDir} holds slashing protection for genesis ${have}, not ${want}: use another --data-dir (or export/import the history)`, 409);
  }
  const db = await SlashingProtectionDb.open({ dir: slashingDbDir(dataDir) });
  if (have === undefined) {
    try {
      await writeFileAtomic(marker, want + '\n', { mode: 0o600 });
    } catch (err) {
      await db.close();
      throw err;
    }
  }
  return db;
}
