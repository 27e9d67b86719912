/**
 * The exported secrets are readable by the image's user (uid 1000), whoever exported them: Compose
 * bind-mounts each secret file with its host owner and mode, so the test, as root, mounts each one
 * the same way into a fresh mount namespace and reads it there as uid 1000 (setpriv); a 0600 file
 * owned by root, the old export's, is the control that must not read. Kubernetes mounts the Secret
 * owned by root and the pod's fsGroup with the volume's defaultMode: the same read as the image's
 * user and group. Without root, or without unshare/setpriv, the reads are skipped with a message.
 * Also: Prometheus and Grafana sit in the Compose `monitoring` profile, so a plain `up` needs only
 * the svc image.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPOSE_MONITORING_PROFILE, type ComposeFile, composeNames } from '../../../src/devnet/export/compose.js';
import { type K8sObject, SECRET_VOLUME_MODE } from '../../../src/devnet/export/k8s.js';
import { IMAGE_USER, SECRET_FILE_MODE, SECRET_NAMES, SECRETS_DIR_MODE } from '../../../src/devnet/export/model.js';
import { exportNetwork } from '../../../src/devnet/export/write.js';
import { withTempDir } from '../../helpers/cli.js';
import { GOLDEN_GENESIS_TIME, goldenFiles } from './fixture.js';

const OPTIONS = { validators: 2, producers: 1, followers: 0, genesisTime: GOLDEN_GENESIS_TIME, image: 'svc:0.1.0', kdfMemoryKib: 256 };

/** Why reads as another user cannot run here, or undefined when they can. */
function cannotSwitchUser(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const tool of ['unshare', 'setpriv']) if (spawnSync(tool, ['--version'], { encoding: 'utf8' }).status !== 0) return `${tool} is not available`;
  return undefined;
}

/**
 * Reads `file` as the image's user after bind-mounting it at `${dir}/${name}` in a private mount
 * namespace (as Compose mounts a file secret at /run/secrets/NAME); `dir` must be traversable.
 */
function readAsImageUser(file: string, dir: string, name: string, gid: number = IMAGE_USER.gid): { ok: boolean; out: string } {
  const target = join(dir, name);
  const script = 'touch "$2" && mount --bind "$1" "$2" && exec setpriv --reuid "$3" --regid "$4" --clear-groups cat "$2"';
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', file, target, String(IMAGE_USER.uid), String(gid)], { encoding: 'utf8', timeout: 20_000 });
  return { ok: r.status === 0, out: r.status === 0 ? r.stdout : r.stderr };
}

test('Compose export: secret files 0444 in a 0700 directory, also after re-exporting an old 0600 export; read as uid 1000 through a bind mount', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'net');
    // An older export's secret, 0600: the re-export keeps its value and repairs its mode.
    await mkdir(join(out, 'secrets'), { recursive: true, mode: 0o755 });
    await writeFile(join(out, 'secrets', 'keystore-password'), 'kept-password\n', { mode: 0o600 });
    const r = await exportNetwork({ ...OPTIONS, format: 'compose', out });
    assert.equal(r.secrets_created.sort(), ['engine-jwt', 'validator-token']);
    assert.is((await stat(join(out, 'secrets'))).mode & 0o777, SECRETS_DIR_MODE);
    for (const s of SECRET_NAMES) assert.is((await stat(join(out, 'secrets', s))).mode & 0o777, SECRET_FILE_MODE, s);
    assert.is(await readFile(join(out, 'secrets', 'keystore-password'), 'utf8'), 'kept-password\n');

    const why = cannotSwitchUser();
    if (why) {
      console.log(`  skipped: reading the secrets as uid ${IMAGE_USER.uid} (${why})`);
      return;
    }
    const mounts = await mkdtemp(join(tmpdir(), 'svc-secrets-'));
    try {
      await chmod(mounts, 0o755);
      for (const s of SECRET_NAMES) {
        const read = readAsImageUser(join(out, 'secrets', s), mounts, s);
        assert.ok(read.ok, `${s} as uid ${IMAGE_USER.uid}: ${read.out}`);
        assert.is(read.out, await readFile(join(out, 'secrets', s), 'utf8'));
      }
      // The control: the old export's mode, a root-owned 0600 file, does not read (the genesis step's failure).
      const old = join(dir, 'old-secret');
      await writeFile(old, 'x\n', { mode: 0o600 });
      assert.not.ok(readAsImageUser(old, mounts, 'old').ok, 'a root-owned 0600 file must not read as uid 1000');
    } finally {
      await rm(mounts, { recursive: true, force: true });
    }
  });
});

test('Kubernetes: pods mounting the Secret run as the image user with its group as fsGroup, and the volume mode lets that group read', async () => {
  const files = await goldenFiles('k8s');
  let pods = 0;
  for (const text of files.values()) {
    const o = JSON.parse(text) as K8sObject & { spec?: { template?: { spec?: PodSpec } } };
    const pod = o.spec?.template?.spec;
    const secretVolume = pod?.volumes?.find((v) => v.secret);
    if (!pod || !secretVolume) continue;
    pods++;
    assert.equal(pod.securityContext, { runAsNonRoot: true, runAsUser: IMAGE_USER.uid, runAsGroup: IMAGE_USER.gid, fsGroup: IMAGE_USER.gid }, `${o.kind}/${o.metadata.name}`);
    assert.is(secretVolume.secret!.defaultMode, SECRET_VOLUME_MODE);
  }
  assert.ok(pods >= 4, `${pods} pods mount the Secret`);
  assert.is(SECRET_VOLUME_MODE & 0o040, 0o040, 'group-readable');
  assert.is(SECRET_VOLUME_MODE & 0o007, 0, 'not world-readable');

  const why = cannotSwitchUser();
  if (why) {
    console.log(`  skipped: reading the Secret's files as uid ${IMAGE_USER.uid} (${why})`);
    return;
  }
  // As the kubelet writes them: owned by root, group fsGroup, mode defaultMode.
  await withTempDir(async (dir) => {
    const mounts = await mkdtemp(join(tmpdir(), 'svc-k8s-secrets-'));
    try {
      await chmod(mounts, 0o755);
      const file = join(dir, 'engine-jwt');
      await writeFile(file, 'jwt\n');
      await chown(file, 0, IMAGE_USER.gid);
      await chmod(file, SECRET_VOLUME_MODE);
      const read = readAsImageUser(file, mounts, 'engine-jwt');
      assert.ok(read.ok, read.out);
      assert.is(read.out, 'jwt\n');
      // Another group (no fsGroup) cannot: the mode is what grants the read.
      assert.not.ok(readAsImageUser(file, mounts, 'engine-jwt-2', IMAGE_USER.gid + 1).ok);
    } finally {
      await rm(mounts, { recursive: true, force: true });
    }
  });
});

interface PodSpec {
  securityContext?: Record<string, unknown>;
  volumes?: Array<{ name: string; secret?: { defaultMode?: number } }>;
}

test('Compose: Prometheus and Grafana are in the monitoring profile; every service a plain up starts runs the svc image', async () => {
  const compose = JSON.parse((await goldenFiles('compose')).get('compose.yaml')!) as ComposeFile;
  for (const name of [composeNames.prometheus, composeNames.grafana]) assert.equal(compose.services[name]!.profiles, [COMPOSE_MONITORING_PROFILE], name);
  const plain = Object.entries(compose.services).filter(([, s]) => s.profiles === undefined);
  assert.ok(plain.length >= 5);
  for (const [name, s] of plain) {
    assert.is(s.image, 'svc:0.1.0', name);
    // A service `up` starts may not wait for one it does not start.
    for (const dep of Object.keys(s.depends_on ?? {})) assert.is(compose.services[dep]!.profiles, undefined, `${name} depends on ${dep}`);
  }
});

test.run();
