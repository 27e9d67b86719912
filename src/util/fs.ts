/** Crash-safe file writes. */
import { existsSync } from 'node:fs';
import { link, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SvcError } from '../core/errors.js';

/** Refuses to go on if any of `paths` exists (checked up front so a multi-file write never half-happens). */
export function assertAbsent(paths: readonly string[]): void {
  const found = paths.find((p) => existsSync(p));
  if (found) throw new SvcError('FILE_EXISTS', `${found} already exists (use --force to overwrite)`);
}

/**
 * Writes `contents` to `path` atomically (mode 0600 unless given): a temporary file in the same directory,
 * fsync, then rename, then fsync of the directory (until then a power loss could undo the rename,
 * and a caller that goes on, say signing with a key it just saved, would find the old file).
 * An existing file is kept unless `force`.
 */
export async function writeFileAtomic(path: string, contents: string | Uint8Array, opts: { force?: boolean; mode?: number } = {}): Promise<void> {
  if (!opts.force) assertAbsent([path]);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', opts.mode ?? 0o600);
  try {
    await fh.writeFile(contents);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    // Without force, link() publishes the file only if the name is still free, so two
    // concurrent writers cannot silently replace each other; rename() replaces atomically.
    if (opts.force) await rename(tmp, path);
    else await link(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new SvcError('FILE_EXISTS', `${path} already exists (use --force to overwrite)`);
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
  await syncDir(path);
}

/** Syncs the directory holding `path`, so a file created in it (or renamed into it) is durable. */
export async function syncDir(path: string): Promise<void> {
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
