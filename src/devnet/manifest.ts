/**
 * Writing the devnet manifest, `DIR/devnet.json` (the format and its strict reader are in
 * src/client/devnet-manifest.ts, re-exported here for the devnet's own modules). It is written
 * atomically, so a reader never sees half a file.
 */
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
