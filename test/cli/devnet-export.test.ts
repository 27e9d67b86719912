/**
 * `svc devnet export` and `svc devnet genesis` as commands: `--json` output, exit codes, and
 * broken inputs refused with exit 2 and the flag named (unknown flag, bad replica count, unknown
 * format); an export never writes a secret value into the Compose file.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { cliEnv, expectCliError, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';

const BASE = ['devnet', 'export', '--validators', '2', '--genesis-time', '1767225600'];

test('export writes the files it lists, secrets mode 0444 in a 0700 directory, and keeps existing secrets on a second export', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const out = join(dir, 'net');
    const r = expectJsonOk(await runCli([...BASE, '--format', 'compose', '--out', out, '--json'], env));
    assert.ok(r.files.includes('compose.yaml'));
    assert.equal(r.secrets_created.sort(), ['engine-jwt', 'keystore-password', 'validator-token']);
    for (const f of r.files as string[]) await stat(join(out, f));
    assert.is((await stat(join(out, 'secrets', 'validator-token'))).mode & 0o777, 0o444);
    assert.is((await stat(join(out, 'secrets'))).mode & 0o777, 0o700);
    const token = await readFile(join(out, 'secrets', 'validator-token'), 'utf8');
    assert.not.ok((await readFile(join(out, 'compose.yaml'), 'utf8')).includes(token.trim()));
    const again = expectJsonOk(await runCli([...BASE, '--format', 'k8s', '--out', out, '--json'], env));
    assert.equal(again.secrets_created, []);
    assert.is(await readFile(join(out, 'secrets', 'validator-token'), 'utf8'), token);
    assert.is(again.genesis_hash, r.genesis_hash);
  });
});

test('broken inputs: exit 2 with the flag named', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const out = join(dir, 'net');
    for (const [args, flag] of [
      [[...BASE, '--format', 'compose', '--out', out, '--bogus'], '--bogus'],
      [[...BASE, '--format', 'compose', '--out', out, '--nodes', '0'], '--nodes'],
      [[...BASE, '--format', 'compose', '--out', out, '--nodes', '3'], '--nodes'],
      [[...BASE, '--format', 'compose', '--out', out, '--followers', '-1'], '--followers'],
      [['devnet', 'export', '--format', 'helm', '--out', out], 'helm'],
      [['devnet', 'genesis', '--validators', '2', '--nodes', '0', '--genesis-time', '1', '--out', out], '--nodes'],
    ] as Array<[string[], string]>) {
      const r = await runCli([...args, '--json'], env);
      const message = expectCliError(r, { exit: 2, code: 'USAGE', json: true });
      assert.ok(message.includes(flag), `${args.join(' ')}: ${message}`);
    }
  });
});

test.run();
