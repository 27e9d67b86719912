/**
 * End to end, with real processes: a beacon started on genesis B against an execution node on
 * genesis A (same chain id, as two devnets made with the defaults have) exits non-zero at
 * start-up with an error naming both genesis hashes, and execution A is left untouched (no
 * block, no reward record).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { toHex } from '../../src/core/codec/bytes.js';
import { genesisHash } from '../../src/core/genesis/genesis.js';
import { loadGenesisFile } from '../../src/genesis/load.js';
import { expectJsonOk, runCli } from '../helpers/cli.js';
import { freePort, getJson, withDevnet } from '../helpers/network.js';

test("a beacon on genesis B against execution on genesis A exits with an error naming both genesis hashes", async () => {
  await withDevnet({ validators: 2 }, async (d) => {
    await d.startExecution();
    const other = join(d.dir, 'other');
    expectJsonOk(await runCli(['genesis', 'new', '--validators', '2', '--out', other, '--accounts', '1', '--json'], { ...d.env, SVC_PASSWORD: '' }));
    const a = toHex(genesisHash(await loadGenesisFile(d.genesisPath)));
    const b = toHex(genesisHash(await loadGenesisFile(join(other, 'genesis.json'))));
    assert.is.not(a, b);
    const cfg = (await getJson(`${d.execUrl}/api/v1/engine/config`)).data;
    assert.is(cfg.genesis_hash, a, "execution's config exchange names genesis A");
    assert.is(cfg.chain_id, d.genesis.chain_id);

    const port = await freePort();
    const r = await runCli(['node', 'beacon', '--genesis', join(other, 'genesis.json'), '--data-dir', join(other, 'beacon'), '--port', String(port), '--execution-url', d.execUrl, '--no-p2p'], d.env);
    assert.is(r.code, 1, `exit code: ${r.code} ${r.signal ?? ''}\n${r.stderr}`);
    const last = r.stderr.trimEnd().split('\n').pop() ?? '';
    assert.ok(last.startsWith('Error: '), `the last stderr line is the error: ${last}`);
    assert.ok(last.includes(a), `names execution's genesis ${a}: ${last}`);
    assert.ok(last.includes(b), `names the beacon's genesis ${b}: ${last}`);
    assert.match(last, /runs another chain/);
    assert.not.ok(r.stderr.includes('beacon node started'), 'it never served');

    const health = await getJson(`${d.execUrl}/health`);
    assert.is(health.latest_block, 0, 'execution A received no block');
  });
});

test.run();
