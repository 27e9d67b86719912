/** The wallet store under $SVC_HOME/wallets: atomic 0600 writes, names, lookup, listing. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { SvcError, WalletError } from '../../src/core/errors.js';
import { DEV_MNEMONIC, walletPath } from '../../src/wallet/derivation.js';
import { newWalletFile, type WalletFileV2 } from '../../src/wallet/keystore.js';
import { checkWalletName, listWallets, resolveWallet, saveWallet, svcHome, walletsDir } from '../../src/wallet/store.js';
import { httpStatusOf } from '../../src/api/errors.js';

/** Runs `fn` with SVC_HOME pointing at a fresh temp dir; restores the variable and removes the dir. */
async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), 'svc-store-'));
  const saved = process.env.SVC_HOME;
  process.env.SVC_HOME = home;
  try {
    await fn(home);
  } finally {
    if (saved === undefined) delete process.env.SVC_HOME;
    else process.env.SVC_HOME = saved;
    await rm(home, { recursive: true, force: true });
  }
}

let files: Promise<WalletFileV2[]> | undefined;
/** Two real wallet files (index 0 and 1 of the dev mnemonic), made once. */
function wallets(): Promise<WalletFileV2[]> {
  files ??= Promise.all([0, 1].map(async (i) => (await newWalletFile(DEV_MNEMONIC, walletPath(0, i), 'pw', 256)).file));
  return files;
}

function legacyFile() {
  const { publicKey } = keygenFromSeed(new Uint8Array(32).fill(9));
  return { address: '0x' + Buffer.from(sha3_256(publicKey).subarray(12)).toString('hex'), public_key: Buffer.from(publicKey).toString('base64'), created_at: '2023-01-02T03:04:05Z' };
}

async function expectRejects(p: Promise<unknown>, cls: abstract new (...args: never[]) => SvcError, code: string, message: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, cls, `expected ${cls.name}, got ${String(err)}`);
    assert.is((err as SvcError).code, code);
    assert.is((err as SvcError).message, message);
    return;
  }
  assert.unreachable(`expected a rejection with ${code}`);
}

const mode = async (p: string) => (await stat(p)).mode & 0o777;

test('SVC_HOME decides where the store is', async () => {
  await withHome(async (home) => {
    assert.is(svcHome(), home);
    assert.is(walletsDir(), join(home, 'wallets'));
  });
});

test('saveWallet writes <home>/wallets/<name>.json with mode 0600 in a 0700 directory', async () => {
  await withHome(async (home) => {
    const [w] = await wallets();
    const path = await saveWallet('alice', w!);
    assert.is(path, join(home, 'wallets', 'alice.json'));
    assert.is(await mode(path), 0o600);
    assert.is(await mode(join(home, 'wallets')), 0o700);
    assert.equal(JSON.parse(await readFile(path, 'utf8')), w);
    assert.ok((await readFile(path, 'utf8')).endsWith('}\n'));
  });
});

test('saveWallet refuses to overwrite without force (FILE_EXISTS), overwrites with force', async () => {
  await withHome(async (home) => {
    const [w0, w1] = await wallets();
    const path = await saveWallet('alice', w0!);
    await expectRejects(saveWallet('alice', w1!), SvcError, 'FILE_EXISTS', `${path} already exists (use --force to overwrite)`);
    await expectRejects(saveWallet('alice', w1!, { force: false }), SvcError, 'FILE_EXISTS', `${path} already exists (use --force to overwrite)`);
    assert.equal(JSON.parse(await readFile(path, 'utf8')), w0, 'the original is untouched');
    // Even if someone loosened the permissions, a forced rewrite is 0600 again.
    await chmod(path, 0o644);
    assert.is(await saveWallet('alice', w1!, { force: true }), path);
    assert.equal(JSON.parse(await readFile(path, 'utf8')), w1);
    assert.is(await mode(path), 0o600);
    assert.equal(await readdir(join(home, 'wallets')), ['alice.json']);
  });
});

test('the FILE_EXISTS error carries HTTP status 409', async () => {
  await withHome(async () => {
    const [w] = await wallets();
    await saveWallet('a', w!);
    try {
      await saveWallet('a', w!);
      assert.unreachable('should throw');
    } catch (err) {
      assert.is(httpStatusOf(err as SvcError), 409);
    }
  });
});

test('checkWalletName rejects path tricks and empty names', () => {
  const bad = ['../x', 'a/b', '', '..', '.hidden', '-flag', 'a\\b', 'a b', 'a\0b', 'x'.repeat(65), 'wallet.json', 'W.JSON'];
  for (const name of bad) {
    try {
      checkWalletName(name);
      assert.unreachable(`accepted ${JSON.stringify(name)}`);
    } catch (err) {
      assert.instance(err, WalletError, `rejects ${JSON.stringify(name)}`);
      assert.is((err as WalletError).code, 'INVALID_NAME');
    }
  }
  try {
    checkWalletName('../x');
  } catch (err) {
    assert.is((err as Error).message, `wallet name must be 1-64 letters, digits, '.', '_' or '-', got "../x"`);
  }
  try {
    checkWalletName('w.json');
  } catch (err) {
    assert.is((err as Error).message, 'wallet name must not end in .json (the store adds it), got "w.json"');
  }
  for (const name of ['alice', 'a', 'A.b-c_9', 'x'.repeat(64), '0x' + 'ab'.repeat(20), 'v1.json.bak']) assert.is(checkWalletName(name), name);
});

test('saveWallet with a bad name writes nothing anywhere', async () => {
  await withHome(async (home) => {
    const [w] = await wallets();
    await mkdir(join(home, 'wallets'));
    await expectRejects(saveWallet('../escape', w!), WalletError, 'INVALID_NAME', `wallet name must be 1-64 letters, digits, '.', '_' or '-', got "../escape"`);
    assert.equal(await readdir(home), ['wallets']);
    assert.equal(await readdir(join(home, 'wallets')), []);
  });
});

test('a saved wallet can always be found again by its name', async () => {
  // A name ending in .json would be taken for a file path by resolveWallet, so it is refused up front.
  await withHome(async () => {
    const [w] = await wallets();
    let refused = 0;
    for (const name of ['alice', 'a.b', '0x' + 'cd'.repeat(20), 'w.json', 'W.JSON']) {
      try {
        await saveWallet(name, w!);
      } catch (err) {
        assert.is((err as WalletError).code, 'INVALID_NAME', `${name}: ${String(err)}`);
        refused++;
        continue;
      }
      assert.is((await resolveWallet(name)).name, name);
    }
    assert.is(refused, 2, 'only the .json names are refused');
  });
});

test('resolveWallet by name, by address (any case), by ecdsa address, by path', async () => {
  await withHome(async (home) => {
    const [w0, w1] = await wallets();
    const p0 = await saveWallet('alice', w0!);
    await saveWallet('bob', w1!);
    const byName = await resolveWallet('alice');
    assert.is(byName.name, 'alice');
    assert.is(byName.path, p0);
    assert.equal(byName.wallet, { kind: 'v2', file: w0 });
    const upper = '0x' + w1!.address.slice(2).toUpperCase();
    assert.is((await resolveWallet(upper)).name, 'bob');
    const mixed = '0x' + [...w1!.address.slice(2)].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    assert.is((await resolveWallet(mixed)).name, 'bob');
    assert.is((await resolveWallet(w0!.ecdsa_address.toUpperCase().replace('0X', '0x'))).name, 'alice');
    assert.is((await resolveWallet(p0)).name, 'alice');
    // A path outside the store works too.
    const outside = join(home, 'elsewhere', 'carol.json');
    await mkdir(join(home, 'elsewhere'));
    await writeFile(outside, JSON.stringify(w1));
    const byPath = await resolveWallet(outside);
    assert.is(byPath.name, 'carol');
    assert.is(byPath.path, outside);
    assert.is(byPath.wallet.file.address, w1!.address);
  });
});

test('resolveWallet: unknown name or address → WALLET_NOT_FOUND; missing path → WALLET_NOT_FOUND', async () => {
  await withHome(async (home) => {
    const [w0] = await wallets();
    await saveWallet('alice', w0!);
    const dir = join(home, 'wallets');
    await expectRejects(resolveWallet('nobody'), WalletError, 'WALLET_NOT_FOUND', `no wallet named or addressed "nobody" in ${dir}`);
    const addr = '0x' + '12'.repeat(20);
    await expectRejects(resolveWallet(addr), WalletError, 'WALLET_NOT_FOUND', `no wallet named or addressed "${addr}" in ${dir}`);
    const missing = join(home, 'nope.json');
    await expectRejects(resolveWallet(missing), WalletError, 'WALLET_NOT_FOUND', `cannot read wallet file ${missing}`);
  });
});

test('resolveWallet of a broken file by path reports INVALID_WALLET', async () => {
  await withHome(async (home) => {
    const p = join(home, 'broken.json');
    await writeFile(p, '{"version":');
    await expectRejects(resolveWallet(p), WalletError, 'INVALID_WALLET', `${p} is not valid JSON`);
  });
});

test('listWallets reports unparsable files in errors instead of throwing', async () => {
  await withHome(async (home) => {
    const [w0] = await wallets();
    await saveWallet('alice', w0!);
    const dir = join(home, 'wallets');
    await writeFile(join(dir, 'garbage.json'), 'not json at all');
    await writeFile(join(dir, 'other.json'), JSON.stringify({ hello: 'world' }));
    await writeFile(join(dir, 'legacy.json'), JSON.stringify(legacyFile()));
    await writeFile(join(dir, 'notes.txt'), 'ignored');
    await writeFile(join(dir, '.hidden.json'), 'ignored');
    const { wallets: found, errors } = await listWallets();
    assert.equal(found.map((w) => [w.name, w.wallet.kind]), [['alice', 'v2'], ['legacy', 'legacy']]);
    assert.equal(errors, [
      { path: join(dir, 'garbage.json'), error: `${join(dir, 'garbage.json')} is not valid JSON` },
      { path: join(dir, 'other.json'), error: 'unsupported wallet file version null' },
    ]);
    // An address lookup still works past the broken files.
    assert.is((await resolveWallet(w0!.address)).name, 'alice');
  });
});

test('listWallets of a store that does not exist yet is empty', async () => {
  await withHome(async () => {
    assert.equal(await listWallets(), { wallets: [], errors: [] });
  });
});

test('no temporary files are left behind, even when a write fails', async () => {
  await withHome(async (home) => {
    const [w0, w1] = await wallets();
    await saveWallet('a', w0!);
    await saveWallet('b', w1!);
    await saveWallet('a', w1!, { force: true });
    await saveWallet('a', w0!).catch(() => undefined);
    // A directory squatting on the target name makes the final rename fail.
    await mkdir(join(home, 'wallets', 'c.json'));
    let failed = false;
    await saveWallet('c', w0!, { force: true }).catch(() => (failed = true));
    assert.ok(failed, 'renaming over a directory fails');
    assert.equal((await readdir(join(home, 'wallets'))).sort(), ['a.json', 'b.json', 'c.json']);
    assert.ok((await stat(join(home, 'wallets', 'c.json'))).isDirectory());
  });
});

test.run();
