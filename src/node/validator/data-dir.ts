/**
 * A validator data directory: its slashing-protection database (one for every key of the process:
 * records are per validator public key), bound to one genesis, and `randao/` (per-key RANDAO
 * generations and chain checkpoints).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../core/codec/bytes.js';
import { ValidatorError } from './errors.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { writeFileAtomic } from '../../util/fs.js';
import { SlashingProtectionDb } from './slashing/protection.js';
import { RANDAO_GENERATION_FILE, randaoGenerationPath } from './randao/recommit.js';

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
    throw new ValidatorError('NOT_FOUND', `${dataDir} holds no slashing-protection database (expected ${slashingDbDir(dataDir)})`);
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  let have: string | undefined;
  try {
    have = (await readFile(marker, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ValidatorError('DATA_DIR_UNREADABLE', `cannot read ${marker}: ${(err as Error).message}`);
  }
  if (have !== undefined && have !== want) {
    throw new ValidatorError('GENESIS_MISMATCH', `${dataDir} holds slashing protection for genesis ${have}, not ${want}: use another --data-dir (or export/import the history)`);
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

/** Suffix a one-key data directory gets once a shared one has adopted its history. */
export const ADOPTED_SUFFIX = '.adopted';

/**
 * Merges the slashing-protection history and RANDAO generation of one-key validator data
 * directories (made when each key had its own client) into the shared, open database `db` of
 * `dataDir`, then renames each to `<dir>.adopted` so it is neither used nor adopted again.
 * The merge is EIP-3076's (watermarks rise to the old history's, so nothing signed before can be
 * signed against) and idempotent, so a crash before the rename only repeats it. Returns the
 * directories adopted.
 */
export async function adoptOneKeyDataDirs(db: SlashingProtectionDb, dataDir: string, oneKeyDirs: ReadonlyArray<{ dir: string; address: string }>, genesis: Genesis): Promise<string[]> {
  const gvr = genesisHash(genesis);
  const adopted: string[] = [];
  for (const { dir, address } of oneKeyDirs) {
    if (!existsSync(dir)) continue;
    const old = await openValidatorDataDir(dir, genesis, { create: false });
    try {
      await db.importInterchange(await old.exportInterchange(gvr), gvr);
    } finally {
      await old.close();
    }
    // The generation file under either name (a newer one-key client moved it under randao/).
    const from = [randaoGenerationPath(dir, address), join(dir, RANDAO_GENERATION_FILE)].find((p) => existsSync(p));
    const to = randaoGenerationPath(dataDir, address);
    if (from !== undefined && !existsSync(to)) await writeFileAtomic(to, await readFile(from), { force: true });
    await rename(dir, dir + ADOPTED_SUFFIX);
    adopted.push(dir);
  }
  return adopted;
}
