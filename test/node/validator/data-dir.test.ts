/**
 * A shared validator data directory adopting the one-key data directories `svc node all` made
 * when each key had its own client: every key's slashing-protection history is merged (watermarks
 * kept, so nothing signed before can be signed against), its RANDAO generation is carried over,
 * and the old directory is renamed so it is not adopted twice; a directory of another genesis is
 * refused and left alone.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex } from '../../../src/core/codec/bytes.js';
import { SvcError } from '../../../src/core/errors.js';
import { ADOPTED_SUFFIX, adoptOneKeyDataDirs, openValidatorDataDir } from '../../../src/node/validator/data-dir.js';
import { RANDAO_GENERATION_FILE, randaoGenerationPath } from '../../../src/node/validator/randao/recommit.js';
import { SlashingProtectionError } from '../../../src/node/validator/slashing/protection.js';
import { devnet } from '../execution/fixture.js';

const { genesis, keys } = devnet();
const root = (n: number) => new Uint8Array(32).fill(n);

test('one-key data directories are adopted once: histories merged, RANDAO generation carried, old dirs renamed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-adopt-'));
  try {
    const [a, b] = [keys.validators[0]!, keys.validators[1]!];
    const dirOf = (k: typeof a) => join(dir, `validator-${k.address}`);
    const oldA = await openValidatorDataDir(dirOf(a), genesis);
    await oldA.checkAndRecordBlock(toHex(a.mldsa.publicKey), 9, root(1));
    await oldA.checkAndRecordAttestation(toHex(a.mldsa.publicKey), 1, 2, root(2));
    await oldA.close();
    await writeFile(join(dirOf(a), RANDAO_GENERATION_FILE), '{"generation": 3}\n');
    const oldB = await openValidatorDataDir(dirOf(b), genesis);
    await oldB.checkAndRecordAttestation(toHex(b.mldsa.publicKey), 4, 5, root(3));
    await oldB.close();

    const shared = join(dir, 'validator');
    const db = await openValidatorDataDir(shared, genesis);
    try {
      const targets = [a, b].map((k) => ({ dir: dirOf(k), address: k.address }));
      assert.equal(await adoptOneKeyDataDirs(db, shared, targets, genesis), targets.map((t) => t.dir));
      assert.equal(db.watermarks(toHex(a.mldsa.publicKey)), { slot: 9, sourceEpoch: 1, targetEpoch: 2 });
      assert.equal(db.watermarks(toHex(b.mldsa.publicKey)), { sourceEpoch: 4, targetEpoch: 5 });
      const refused = await db.checkAndRecordAttestation(toHex(b.mldsa.publicKey), 4, 5, root(9)).then(() => undefined, (e: unknown) => e);
      assert.instance(refused, SlashingProtectionError, 'a different vote for an adopted target');
      assert.is((await db.checkAndRecordBlock(toHex(a.mldsa.publicKey), 9, root(1))), 'repeat', 'the same block again is a repeat');
      assert.equal(JSON.parse(await readFile(randaoGenerationPath(shared, a.address), 'utf8')), { generation: 3 });
      assert.not.ok(existsSync(randaoGenerationPath(shared, b.address)), 'no generation file, nothing carried');
      for (const t of targets) {
        assert.not.ok(existsSync(t.dir));
        assert.ok(existsSync(t.dir + ADOPTED_SUFFIX));
      }
      assert.equal(await adoptOneKeyDataDirs(db, shared, targets, genesis), [], 'nothing left to adopt');
    } finally {
      await db.close();
    }

    // A one-key directory of another chain is refused, not merged, and stays where it is.
    const other = { ...genesis, chain_id: 'svc-other' };
    const foreignDir = join(dir, `validator-${keys.validators[0]!.address}`);
    await (await openValidatorDataDir(foreignDir, other)).close();
    const db2 = await openValidatorDataDir(shared, genesis);
    try {
      const err = await adoptOneKeyDataDirs(db2, shared, [{ dir: foreignDir, address: keys.validators[0]!.address }], genesis).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof SvcError && err.code === 'GENESIS_MISMATCH', String(err));
      assert.ok(existsSync(foreignDir));
    } finally {
      await db2.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
