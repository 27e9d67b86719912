/**
 * The container image (Dockerfile at the repository root): where a container engine answers
 * (docker, else podman), the image builds and `svc --version` runs in it. Where none answers (a
 * CLI without a daemon counts as none), or where the engine has no base image and cannot pull it
 * (offline), the test prints why it was skipped and passes: it cannot check anything there.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/cli.js';

/** The first engine whose server answers, or the reasons none did. */
function findEngine(): { engine: string } | { reasons: string[] } {
  const reasons: string[] = [];
  for (const engine of ['docker', 'podman']) {
    const r = spawnSync(engine, ['version', '--format', '{{.Server.Version}}'], { encoding: 'utf8', timeout: 20_000 });
    if (r.error) {
      reasons.push(`${engine}: ${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not installed' : r.error.message}`);
      continue;
    }
    if (r.status === 0 && r.stdout.trim() !== '') return { engine };
    reasons.push(`${engine}: no engine answers (${(r.stderr || r.stdout).trim().split('\n').pop()})`);
  }
  return { reasons };
}

/** The Dockerfile's base image (every FROM line names it). */
function baseImage(): string {
  const from = /^FROM\s+(\S+)/m.exec(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  if (!from) throw new Error('the Dockerfile has no FROM line');
  return from[1]!;
}

/** Why `engine` cannot get the base image (not present and the pull fails), or undefined when it has it. */
function baseImageMissing(engine: string, image: string): string | undefined {
  if (spawnSync(engine, ['image', 'inspect', image], { encoding: 'utf8', timeout: 60_000 }).status === 0) return undefined;
  const pull = spawnSync(engine, ['pull', image], { encoding: 'utf8', timeout: 5 * 60_000 });
  if (pull.status === 0) return undefined;
  const why = pull.error ? pull.error.message : (pull.stderr || pull.stdout).trim().split('\n').pop();
  return `${engine} cannot pull the base image ${image} (${why})`;
}

test('the image builds and runs svc --version (skipped without a container engine or its base image)', () => {
  const found = findEngine();
  if ('reasons' in found) {
    console.log(`  skipped: no container engine on this machine; ${found.reasons.join('; ')}`);
    return;
  }
  const { engine } = found;
  const missing = baseImageMissing(engine, baseImage());
  if (missing) {
    console.log(`  skipped: ${missing}`);
    return;
  }
  const tag = `svc-image-test:${randomBytes(4).toString('hex')}`;
  try {
    const build = spawnSync(engine, ['build', '-t', tag, REPO_ROOT], { encoding: 'utf8', timeout: 15 * 60_000 });
    assert.is(build.status, 0, `${engine} build failed:\n${build.stdout}\n${build.stderr}`);
    const run = spawnSync(engine, ['run', '--rm', tag, '--version'], { encoding: 'utf8', timeout: 120_000 });
    assert.is(run.status, 0, `svc --version in the image failed:\n${run.stdout}\n${run.stderr}`);
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.match(run.stdout, `svc/${version}`);
    const user = spawnSync(engine, ['run', '--rm', '--entrypoint', 'id', tag, '-u'], { encoding: 'utf8', timeout: 120_000 });
    assert.is(user.stdout.trim(), '1000', 'the image runs as the unprivileged node user');
  } finally {
    spawnSync(engine, ['rmi', '-f', tag], { timeout: 120_000 });
  }
});

test.run();
