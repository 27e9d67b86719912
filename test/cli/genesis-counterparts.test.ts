/**
 * `svc genesis new --bridge-counterpart FILE[=TOKENS]`: the genesis lists the counterpart with
 * its allowance (and says so); allowances beyond --bridge-reserve, a bad amount or an unreadable
 * file are refused with nothing written; a node refuses to start on a genesis whose list is
 * invalid, leaving its data directory untouched.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEI_PER_TOKEN } from '../../src/core/constants.js';
import { toHex } from '../../src/core/codec/bytes.js';
import { genesisHash, parseGenesis } from '../../src/core/genesis/genesis.js';
import { cliEnv, expectCliError, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';

const base = (out: string, chainId: string) => ['genesis', 'new', '--validators', '1', '--accounts', '0', '--chain-id', chainId, '--randao-chain-length', '16', '--out', out, '--json'];

test('genesis new --bridge-counterpart lists the counterpart with its allowance; refusals write nothing; a node refuses an invalid list', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const b = expectJsonOk(await runCli(base(join(dir, 'b'), 'svc-b'), env));
    const bFile = join(dir, 'b', 'genesis.json');
    const c = expectJsonOk(await runCli([...base(join(dir, 'c'), 'svc-c'), '--bridge-reserve', '100', '--bridge-counterpart', `${bFile}=40.5`], env));
    assert.equal(c.bridge_counterparts, [{ chain_id: 'svc-b', genesis_hash: b.genesis_hash, allowance: (405n * WEI_PER_TOKEN / 10n).toString() }]);
    const g = parseGenesis(JSON.parse(await readFile(join(dir, 'c', 'genesis.json'), 'utf8')));
    assert.is(toHex(genesisHash(g)), c.genesis_hash);
    assert.is(g.bridge_counterparts![0]!.genesis_hash, b.genesis_hash);

    const [beyond, badAmount, missing] = await Promise.all([
      runCli([...base(join(dir, 'd'), 'svc-d'), '--bridge-reserve', '10', '--bridge-counterpart', `${bFile}=40`], env),
      runCli([...base(join(dir, 'e'), 'svc-e'), '--bridge-counterpart', `${bFile}=lots`], env),
      runCli([...base(join(dir, 'f'), 'svc-f'), '--bridge-counterpart', join(dir, 'nope.json')], env),
    ]);
    expectCliError(beyond, { exit: 1, code: 'GENESIS_COUNTERPART_RESERVE', messageIncludes: ['beyond the bridge reserve of 10000000000000000000 wei'], json: true });
    expectCliError(badAmount, { exit: 2, code: 'USAGE', messageIncludes: ['--bridge-counterpart'], json: true });
    expectCliError(missing, { exit: 1, code: 'INVALID_GENESIS', messageIncludes: ['nope.json'], json: true });
    for (const d of ['d', 'e', 'f']) assert.not.ok(existsSync(join(dir, d)), `nothing written for ${d}`);

    // The same counterpart twice in a hand-edited genesis: the node does not start, and writes no data.
    const raw = JSON.parse(await readFile(join(dir, 'c', 'genesis.json'), 'utf8'));
    raw.bridge_counterparts.push(raw.bridge_counterparts[0]);
    const tampered = join(dir, 'tampered.json');
    await writeFile(tampered, JSON.stringify(raw));
    const dataDir = join(dir, 'data');
    const node = await runCli(['node', 'execution', '--genesis', tampered, '--data-dir', dataDir, '--no-p2p', '--rest-port', '0', '--rpc-port', '0'], env);
    assert.is(node.code, 1, node.stderr);
    assert.match(node.stderr, /GENESIS_COUNTERPART_DUPLICATE|lists the genesis hash 0x[0-9a-f]{64} twice/);
    assert.not.ok(existsSync(dataDir), 'no data directory');
  });
});

test.run();
