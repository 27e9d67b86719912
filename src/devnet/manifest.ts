/**
 * Writing the devnet manifest, `DIR/devnet.json` (the format and its strict reader are in
 * src/client/devnet-manifest.ts, re-exported here for the devnet's own modules). It is written
 * atomically, so a reader never sees half a file.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { writeFileAtomic } from '../util/fs.js';
import { type DevnetManifest, manifestPath } from '../client/devnet-manifest.js';

export {
  type DevnetManifest,
  type DevnetState,
  type ManifestCounterpart,
  type ManifestEndpoints,
  type ManifestKey,
  type ManifestNode,
  type ManifestPeer,
  type ManifestProcess,
  type ValidatorProcesses,
  DevnetError,
  MANIFEST_FILE,
  MANIFEST_VERSION,
  MANIFEST_VERSION_PER_VALIDATOR,
  currentDevnetDir,
  currentPointerPath,
  defaultDevnetDir,
  manifestPath,
  parseManifest,
  pidAlive,
  readManifest,
  runningDevnet,
} from '../client/devnet-manifest.js';

/** Writes the manifest atomically (readers never see half a file), stamping `updated_at`. */
export async function writeManifest(m: DevnetManifest): Promise<void> {
  m.updated_at = new Date().toISOString();
  await writeFileAtomic(manifestPath(m.dir), JSON.stringify(m, null, 2) + '\n', { force: true, mode: 0o644 });
}

/**
 * Whether `pid` is an `svc` process (guards against signalling an unrelated process that reused a
 * recorded pid): node running `bin/run.js`, or the `svc` bin link through which npx and global
 * installs start it. Where /proc is unavailable the pid is trusted.
 */
export function isSvcProcess(pid: number): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.some((a) => a.endsWith('run.js') || basename(a) === 'svc');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
