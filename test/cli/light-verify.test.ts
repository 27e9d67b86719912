/**
 * `svc light verify --validators FILE` bad input, before any beacon is asked: without
 * --checkpoint it is a usage error; an unreadable or non-JSON file is a usage error naming the
 * flag; a file that is not a validator set is MALFORMED_INPUT naming the field.
 */
import { test } from 'uvu';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildGenesis } from '../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../src/wallet/derivation.js';
import { cliEnv, expectCliError, runCli, withTempDir } from '../helpers/cli.js';

const ROOT = '0x' + '12'.repeat(32);

test('--validators FILE: refused without --checkpoint, unreadable, not JSON, or not a validator set', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const genesisPath = join(dir, 'genesis.json');
    const { genesis } = buildGenesis({ validators: 1, accounts: 0, preset: 'devnet', chainId: 'svc-lv', networkId: 7, genesisTime: 1_767_225_600, mnemonic: DEV_MNEMONIC, timing: { randaoChainLength: 16 } });
    await writeFile(genesisPath, JSON.stringify(genesis));
    // No beacon listens there: each failure comes before the first request.
    const verify = (...args: string[]) => runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', 'http://127.0.0.1:9', ...args, '--json'], env);
    const file = async (name: string, text: string) => {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    };
    const valid = await file('set.json', JSON.stringify(genesis.validators.map((v) => ({ index: v.index, public_key: v.public_key, stake: v.stake, active: true }))));

    expectCliError(await verify('--validators', valid), { exit: 2, code: 'USAGE', messageIncludes: ['checkpoint'], json: true });
    expectCliError(await verify('--checkpoint', ROOT, '--validators', join(dir, 'absent.json')), { exit: 2, code: 'USAGE', messageIncludes: ['--validators', 'absent.json'], json: true });
    expectCliError(await verify('--checkpoint', ROOT, '--validators', await file('text.json', 'not json')), { exit: 2, code: 'USAGE', messageIncludes: ['--validators'], json: true });
    for (const [name, text, field] of [
      ['empty.json', '[]', 'the set is empty'],
      ['object.json', '{"nodes": []}', 'expected an array'],
      ['short-key.json', JSON.stringify([{ index: 0, public_key: '0x12', stake: '1', active: true }]), '--validators[0].public_key'],
      ['stake.json', JSON.stringify([{ index: 0, public_key: genesis.validators[0]!.public_key, stake: '-1', active: true }]), '--validators[0].stake'],
      ['twice.json', JSON.stringify([0, 0].map((index) => ({ index, public_key: genesis.validators[0]!.public_key, stake: '1', active: true }))), 'listed twice'],
    ] as const) {
      expectCliError(await verify('--checkpoint', ROOT, '--validators', await file(name, text)), { exit: 1, code: 'MALFORMED_INPUT', messageIncludes: [field], json: true });
    }
  });
});

test.run();
