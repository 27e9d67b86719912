/**
 * The genesis builder's bridge reserve (`svc genesis new --bridge-reserve TOKENS`): absent or 0
 * it leaves the document (and so its hash and state root) as before the bridge; given, the bridge
 * account holds it at genesis. The CLI flag writes it and reports it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS, WEI_PER_TOKEN } from '../../src/core/constants.js';
import { canonicalJson, genesisHash, parseGenesis } from '../../src/core/genesis/genesis.js';
import { genesisStateRoot } from '../../src/core/state/genesis-root.js';
import { type GenesisPlan, assembleGenesis, buildGenesis, deriveGenesisKeys, validatorKeySeeds } from '../../src/genesis/build.js';
import { randaoCommitment } from '../../src/core/crypto/randao.js';
import { GenesisError } from '../../src/core/errors.js';
import { DEV_MNEMONIC } from '../../src/wallet/derivation.js';
import { cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';

const plan: GenesisPlan = { validators: 1, accounts: 1, preset: 'devnet', chainId: 'svc-reserve', networkId: 9, genesisTime: 1_700_000_000, mnemonic: DEV_MNEMONIC, timing: { randaoChainLength: 4 } };

test('no reserve (absent or 0): the same document as before the bridge, nothing at the bridge address', () => {
  const plain = buildGenesis(plan).genesis;
  const zero = buildGenesis({ ...plan, bridgeReserve: 0n }).genesis;
  assert.is(canonicalJson(zero), canonicalJson(plain));
  assert.not.ok(plain.alloc.some((a) => a.address === BRIDGE_ADDRESS));
  assert.is(plain.alloc.length, 1 + 1 + 1);
});

test('RANDAO commitments computed apart (the devnet computes them on another thread) give the same genesis', () => {
  const three = { ...plan, validators: 3, validatorKeyOffset: 5, timing: { randaoChainLength: 16 } };
  const seeds = validatorKeySeeds(three);
  const keys = deriveGenesisKeys(three);
  assert.equal(seeds, keys.filter((k) => k.role === 'validator').map((k) => k.keys.mldsaSeed));
  const commitments = seeds.map((s) => toHex(randaoCommitment(s, 16)));
  assert.is(canonicalJson(assembleGenesis(three, keys, commitments).genesis), canonicalJson(buildGenesis(three).genesis));
  assert.throws(() => assembleGenesis(three, keys, commitments.slice(1)), (e: unknown) => e instanceof GenesisError && /2 RANDAO commitments for 3 validators/.test((e as Error).message));
});

test('a reserve is allocated to the bridge account: another genesis hash and state root', () => {
  const plain = buildGenesis(plan).genesis;
  const g = buildGenesis({ ...plan, bridgeReserve: 1_000_000n * WEI_PER_TOKEN }).genesis;
  assert.equal(g.alloc.find((a) => a.address === BRIDGE_ADDRESS), { address: BRIDGE_ADDRESS, balance: (1_000_000n * WEI_PER_TOKEN).toString() });
  assert.equal(g.alloc.slice(0, -1), plain.alloc);
  assert.is.not(toHex(genesisHash(g)), toHex(genesisHash(plain)));
  assert.is.not(toHex(genesisStateRoot(g)), toHex(genesisStateRoot(plain)));
});

test('svc genesis new --bridge-reserve 250 writes the allocation and reports it', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'net');
    const doc = expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '0', '--randao-chain-length', '4', '--bridge-reserve', '250', '--out', out, '--json'], cliEnv(dir)));
    const g = parseGenesis(JSON.parse(await readFile(join(out, 'genesis.json'), 'utf8')));
    assert.is(doc.bridge_reserve, (250n * WEI_PER_TOKEN).toString());
    assert.is(g.alloc.find((a) => a.address === BRIDGE_ADDRESS)?.balance, (250n * WEI_PER_TOKEN).toString());
    const none = expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '0', '--randao-chain-length', '4', '--out', join(dir, 'plain'), '--json'], cliEnv(dir)));
    assert.is(none.bridge_reserve, '0');
  });
});

test.run();
