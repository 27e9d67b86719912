/**
 * Devnets as bridge counterparts (src/devnet/bridge.ts): distinct validator key ranges per chain id
 * (the default chain's keys unchanged), the bridge reserve in the genesis, the manifest's
 * counterpart record parsed strictly, and a missing or unreadable counterpart directory refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BRIDGE_ADDRESS } from '../../src/core/constants.js';
import { buildGenesis } from '../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../src/wallet/derivation.js';
import { DEFAULT_DEVNET_BRIDGE_RESERVE, DEFAULT_DEVNET_CHAIN_ID, devnetValidatorKeyOffset, readCounterpart } from '../../src/devnet/bridge.js';
import { DevnetError, parseManifest } from '../../src/devnet/manifest.js';
import { expectError } from '../helpers/assert.js';
import { jsonCopy, sampleManifest, withTempDir } from './fixture.js';

const plan = (chainId: string, extra: { bridgeReserve?: bigint; validatorKeyOffset?: number } = {}) =>
  buildGenesis({ validators: 2, accounts: 1, preset: 'devnet', chainId, networkId: 1337, genesisTime: 1_700_000_000, mnemonic: DEV_MNEMONIC, timing: { randaoChainLength: 4 }, ...extra }).genesis;

test('the default chain keeps key offset 0; other chain ids get distinct ranges that never overlap', () => {
  assert.is(devnetValidatorKeyOffset(DEFAULT_DEVNET_CHAIN_ID), 0);
  const ids = ['svc-a', 'svc-b', 'svc-c', 'svc-d', 'x'];
  const offsets = ids.map(devnetValidatorKeyOffset);
  for (const o of offsets) {
    assert.ok(o >= 1024 && o % 1024 === 0 && o + 1024 < 2 ** 31, `offset ${o}`);
  }
  assert.is(new Set(offsets).size, ids.length, 'distinct ranges for these chain ids');
  assert.is(devnetValidatorKeyOffset('svc-b'), devnetValidatorKeyOffset('svc-b'), 'deterministic');
});

test('validator keys differ between key ranges, accounts and faucet stay; the reserve is allocated to the bridge', () => {
  const a = plan('svc-a', { validatorKeyOffset: devnetValidatorKeyOffset('svc-a'), bridgeReserve: DEFAULT_DEVNET_BRIDGE_RESERVE });
  const b = plan('svc-b', { validatorKeyOffset: devnetValidatorKeyOffset('svc-b') });
  const plain = plan('svc-devnet');
  const keys = (g: typeof a) => g.validators.map((v) => v.public_key);
  assert.not.ok(keys(a).some((k) => keys(b).includes(k) || keys(plain).includes(k)), 'no validator key shared');
  assert.is(a.config.faucet.address, b.config.faucet.address, 'same faucet (public dev keys)');
  assert.equal(a.alloc.find((x) => x.address === BRIDGE_ADDRESS)?.balance, DEFAULT_DEVNET_BRIDGE_RESERVE.toString());
  assert.is(b.alloc.find((x) => x.address === BRIDGE_ADDRESS), undefined, 'no reserve when not asked');
  assert.is(plan('svc-devnet', { validatorKeyOffset: 0 }).validators[0]!.public_key, plain.validators[0]!.public_key, 'offset 0 is the old derivation');
});

test('the manifest counterpart is optional and parsed strictly', () => {
  const base = jsonCopy(sampleManifest('/nowhere'));
  assert.is(parseManifest(base, '/nowhere/devnet.json').counterpart, undefined);
  const ok = { ...base, counterpart: { dir: '/a', chain_id: 'svc-a', genesis_hash: '0x' + '11'.repeat(32) } };
  assert.equal(parseManifest(ok, '/nowhere/devnet.json').counterpart, ok.counterpart);
  assert.is(parseManifest({ ...base, counterpart: null }, '/nowhere/devnet.json').counterpart, null);
  for (const bad of ['a', 3, { dir: '/a' }, { dir: '/a', chain_id: 1, genesis_hash: '0x' }]) {
    const err = expectError(() => parseManifest({ ...base, counterpart: bad }, '/nowhere/devnet.json'), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
    assert.ok(err.message.includes('counterpart'), err.message);
  }
});

test('readCounterpart: a directory without a devnet, or with an unreadable genesis, is refused naming it', async () => {
  await withTempDir(async (dir) => {
    const err = expectError(() => readCounterpart(dir), DevnetError, { code: 'DEVNET_NOT_FOUND' });
    assert.ok(err.message.includes(dir), err.message);
    const m = sampleManifest(dir);
    await writeFile(join(dir, 'devnet.json'), JSON.stringify(m));
    const bad = expectError(() => readCounterpart(dir), DevnetError, { code: 'DEVNET_MANIFEST_INVALID' });
    assert.ok(bad.message.includes(m.genesis), bad.message);
    await mkdir(join(dir, 'genesis'), { recursive: true });
    const g = plan('svc-a', { validatorKeyOffset: devnetValidatorKeyOffset('svc-a') });
    await writeFile(m.genesis, JSON.stringify(g));
    const cp = readCounterpart(dir);
    assert.is(cp.record.chain_id, 'svc-a');
    assert.match(cp.record.genesis_hash, /^0x[0-9a-f]{64}$/);
  });
});

test.run();
