/**
 * The keystores of `svc node validator`: `--keystore` (repeatable) and `--keystores-dir`, and the
 * errors bad input gets before anything starts (no keystore: USAGE exit 2; a missing or empty
 * directory, a keystore given twice, two files of one key, another chain's keystore: exit 1 with
 * their codes), through the function and through the real CLI.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { SvcError } from '../../src/core/errors.js';
import type { Genesis } from '../../src/core/genesis/genesis.js';
import { buildGenesis, writeGenesis } from '../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../src/wallet/derivation.js';
import { UsageError } from '../../src/cli/base.js';
import { keystorePaths, loadValidatorKeystores } from '../../src/cli/validator-keys.js';
import { cliEnv, runCli } from '../helpers/cli.js';

interface Ctx {
  dir: string;
  genesis: Genesis;
  /** keystores/ of this chain (validator-0..2.json, account-0.json, faucet.json). */
  keystores: string;
  /** A validator keystore of another chain (other mnemonic). */
  foreign: string;
}

const test = suite<Ctx>('svc node validator: keystores', {} as Ctx);

test.before(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'svc-vkeys-'));
  const plan = { validators: 3, accounts: 1, preset: 'devnet' as const, chainId: 'svc-keys', networkId: 7, genesisTime: 1_700_000_000 };
  const built = buildGenesis({ ...plan, mnemonic: DEV_MNEMONIC });
  await writeGenesis(join(ctx.dir, 'a'), built, DEV_MNEMONIC, 'svc-devnet', { kdfMemoryKib: 64 });
  ctx.genesis = built.genesis;
  ctx.keystores = join(ctx.dir, 'a', 'keystores');
  const otherMnemonic = entropyToMnemonic(new Uint8Array(32).fill(7), wordlist);
  await writeGenesis(join(ctx.dir, 'b'), buildGenesis({ ...plan, chainId: 'svc-other', mnemonic: otherMnemonic }), otherMnemonic, 'svc-devnet', { kdfMemoryKib: 64 });
  ctx.foreign = join(ctx.dir, 'b', 'keystores', 'validator-0.json');
});

test.after(async (ctx) => {
  await rm(ctx.dir, { recursive: true, force: true });
});

const v = (ctx: Ctx, i: number) => join(ctx.keystores, `validator-${i}.json`);

async function rejects(p: Promise<unknown>, code: string): Promise<SvcError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  assert.instance(err, SvcError, String(err));
  assert.is((err as SvcError).code, code, (err as Error).message);
  return err as SvcError;
}

test('--keystore repeated and a directory unlock every key in the order given', async (ctx) => {
  const keys = await loadValidatorKeystores(ctx.genesis, { keystores: [v(ctx, 2), v(ctx, 0)] });
  assert.equal(keys.map((k) => k.address), [ctx.genesis.validators[2]!.address, ctx.genesis.validators[0]!.address]);
  const only = join(ctx.dir, 'only-validators');
  await mkdir(only);
  for (const i of [0, 1, 2]) await copyFile(v(ctx, i), join(only, `validator-${i}.json`));
  const all = await loadValidatorKeystores(ctx.genesis, { keystores: [], keystoresDir: only });
  assert.equal(all.map((k) => k.address), ctx.genesis.validators.map((g) => g.address));
});

test('bad input: no keystore, missing or empty directory, duplicates, another chain\'s key', async (ctx) => {
  const usage = await keystorePaths({ keystores: [] }).then(() => undefined, (e: unknown) => e);
  assert.instance(usage, UsageError);
  const missing = await rejects(keystorePaths({ keystores: [], keystoresDir: join(ctx.dir, 'nope') }), 'KEYSTORES_DIR_NOT_FOUND');
  assert.match(missing.message, /nope: no such directory/);
  const empty = join(ctx.dir, 'empty');
  await mkdir(empty, { recursive: true });
  await rejects(keystorePaths({ keystores: [], keystoresDir: empty }), 'NO_KEYSTORES');
  const twice = await rejects(keystorePaths({ keystores: [v(ctx, 0), v(ctx, 0)] }), 'DUPLICATE_KEYSTORE');
  assert.match(twice.message, /given twice/);
  // Named by --keystore and found again in --keystores-dir.
  await rejects(keystorePaths({ keystores: [v(ctx, 0)], keystoresDir: ctx.keystores }), 'DUPLICATE_KEYSTORE');
  // Two files of one key.
  const copy = join(ctx.dir, 'copy-of-0.json');
  await copyFile(v(ctx, 0), copy);
  const sameKey = await rejects(loadValidatorKeystores(ctx.genesis, { keystores: [v(ctx, 0), copy] }), 'DUPLICATE_KEYSTORE');
  assert.match(sameKey.message, /hold the same validator key/);
  const foreign = await rejects(loadValidatorKeystores(ctx.genesis, { keystores: [v(ctx, 0), ctx.foreign] }), 'KEYSTORE_NOT_IN_GENESIS');
  assert.match(foreign.message, /not a validator in the genesis of chain svc-keys/);
  // The devnet keystores directory also holds account and faucet keys: not validators of the chain.
  await rejects(loadValidatorKeystores(ctx.genesis, { keystores: [], keystoresDir: ctx.keystores }), 'KEYSTORE_NOT_IN_GENESIS');
  // A validator that joined by deposit is allowed when asked for.
  const allowed = await loadValidatorKeystores(ctx.genesis, { keystores: [ctx.foreign], allowNonGenesis: true });
  assert.is(allowed.length, 1);
});

test('the CLI exits 2 without a keystore and 1 with a clear code on bad keystores, before touching the data dir', async (ctx) => {
  const env = cliEnv(ctx.dir);
  const token = join(ctx.dir, 'token');
  await writeFile(token, 'validator-token-0123456789\n');
  const base = ['node', 'validator', '--genesis', join(ctx.dir, 'a', 'genesis.json'), '--token-file', token, '--beacon-url', 'http://127.0.0.1:9', '--execution-url', 'http://127.0.0.1:9', '--metrics-port', '0'];
  const dataDir = join(ctx.dir, 'vdata');
  const none = await runCli([...base, '--data-dir', dataDir], env);
  assert.is(none.code, 2, none.stderr);
  assert.match(none.stderr, /--keystore FILE \(repeatable\) or --keystores-dir DIR/);
  for (const [args, code] of [
    [['--keystore', v(ctx, 0), '--keystore', v(ctx, 0)], /DUPLICATE_KEYSTORE|given twice/],
    [['--keystores-dir', join(ctx.dir, 'nope')], /no such directory/],
    [['--keystore', v(ctx, 1), '--keystore', ctx.foreign], /not a validator in the genesis of chain svc-keys/],
  ] as const) {
    const r = await runCli([...base, '--data-dir', dataDir, ...args], env);
    assert.is(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, code);
  }
  assert.not.ok(existsSync(dataDir), 'refused before the data directory was created');
});

test.run();
