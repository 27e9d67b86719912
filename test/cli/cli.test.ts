/**
 * The `svc` CLI as a user runs it: real `node bin/run.js` processes with an explicit environment,
 * stdin closed (no TTY), each test in its own temp directory.
 *
 * Output contract checked throughout: with --json, stdout is exactly one JSON document; a failure
 * exits non-zero with exactly one "Error: …" line on stderr (plus, with --json, an error envelope
 * on stdout); usage errors exit 2.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { parseHex, toHex } from '../../src/core/codec/bytes.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { randaoCommitment } from '../../src/core/crypto/randao.js';
import { TxError } from '../../src/core/errors.js';
import { genesisHash, parseGenesis } from '../../src/core/genesis/genesis.js';
import { decodeTx, txHash, verifyTxSignature } from '../../src/core/types/transaction.js';
import { txToJson } from '../../src/core/types/transaction-json.js';
import { DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../../src/wallet/derivation.js';
import { newWalletFile, parseWalletFile, unlockWallet, type WalletFileV2 } from '../../src/wallet/keystore.js';
import { cliEnv, expectCliError, expectJsonOk, mapLimit, runCli, withTempDir } from '../helpers/cli.js';

const COMMANDS = ['bridge refund', 'bridge register', 'bridge relay', 'bridge send', 'bridge status', 'contract build', 'contract call', 'contract deploy', 'contract logs', 'contract read', 'devnet down', 'devnet export', 'devnet genesis', 'devnet logs', 'devnet status', 'devnet up', 'faucet claim', 'forks list', 'genesis new', 'light verify', 'tx send', 'tx sign', 'tx status', 'wallet import', 'wallet list', 'wallet new', 'wallet show'];
/** Long-running commands: listed by --help, but they print logs, not one JSON document (no --json). */
const DAEMONS = ['node all', 'node beacon', 'node execution', 'node validator'];
const TO = '0x00000000000000000000000000000000000000aa';
const PASSWORD = 'pw-for-tests';
const NO_PASSWORD =
  'a password is required: pass --password-file FILE or set SVC_PASSWORD (no terminal to prompt on)';
const WRONG_PASSWORD = 'wrong password for this wallet (or the file is corrupted)';
const SPEC_FIELDS = ['address', 'derivation_path', 'dilithium_mode', 'ecdsa_address', 'ecdsa_curve', 'encrypted_seed', 'kdf', 'version'];
/** Two CLI processes at a time: the CI box has two cores. */
const PAR = 2;

const svcHomeOf = (dir: string) => join(dir, 'svc');
const walletFileOf = (dir: string, name: string) => join(svcHomeOf(dir), 'wallets', `${name}.json`);
const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

/** Writes a dev-mnemonic wallet straight into the store (fast, no CLI process). */
async function seedWallet(dir: string, name: string, index = 0, password = PASSWORD): Promise<{ file: WalletFileV2; keys: WalletKeys }> {
  const made = await newWalletFile(DEV_MNEMONIC, walletPath(0, index), password, 256);
  await mkdir(join(svcHomeOf(dir), 'wallets'), { recursive: true, mode: 0o700 });
  await writeFile(walletFileOf(dir, name), JSON.stringify(made.file, null, 2) + '\n', { mode: 0o600 });
  return made;
}

/** A legacy (watch-only) wallet file for a real ML-DSA key. */
function legacyWallet() {
  const { publicKey } = keygenFromSeed(new Uint8Array(32).fill(5));
  return {
    json: { address: toHex(sha3_256(publicKey).subarray(12)), public_key: Buffer.from(publicKey).toString('base64'), created_at: '2024-02-03T04:05:06Z' },
    publicKey,
  };
}

/** Every file under `root` with its content and mtime. */
async function snapshot(root: string): Promise<Map<string, { content: string; mtimeMs: number }>> {
  const out = new Map<string, { content: string; mtimeMs: number }>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(p, { content: await readFile(p, 'utf8'), mtimeMs: (await stat(p)).mtimeMs });
    }
  };
  await walk(root);
  return out;
}

/** Fails if `content` carries the mnemonic or any secret derived from it, in hex or base64. */
function assertNoSecrets(content: string, mnemonic: string, keys: WalletKeys): void {
  const seed = mnemonicToSeed(mnemonic);
  assert.not.ok(content.includes(mnemonic), 'the mnemonic phrase is not in the file');
  const values: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') values.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  collect(JSON.parse(content));
  // Words of 5+ letters cannot appear in the hex/base64 values by chance (p < 1e-5).
  for (const word of mnemonic.split(' ').filter((w) => w.length >= 5)) {
    for (const v of values) assert.not.ok(v.includes(word), `mnemonic word ${word} found in ${v}`);
  }
  const lower = content.toLowerCase();
  const secrets = { seed, mldsaSeed: keys.mldsaSeed, ecdsaPrivateKey: keys.ecdsaPrivateKey, mldsaSecretKeyHead: keys.mldsa.secretKey.subarray(0, 32) };
  for (const [what, bytes] of Object.entries(secrets)) {
    const h = Buffer.from(bytes).toString('hex');
    assert.not.ok(lower.includes(h), `${what} (hex) is in the file`);
    assert.not.ok(content.includes(Buffer.from(bytes).toString('base64').slice(0, 20)), `${what} (base64) is in the file`);
  }
}

// ---------------------------------------------------------------------------------------------
const Help = suite('cli: help');

Help('--help lists every command, each with a description', async () => {
  await withTempDir(async (dir) => {
    const r = await runCli(['--help'], cliEnv(dir));
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stderr, '');
    const section = r.stdout.split(/^COMMANDS$/m)[1];
    assert.ok(section, `no COMMANDS section in:\n${r.stdout}`);
    const listed = new Map<string, string>();
    for (const line of section!.split('\n')) {
      const m = /^ {2}(\S+ \S+?) {2,}(\S.*)$/.exec(line);
      if (m) listed.set(m[1]!, m[2]!);
    }
    // Two-word commands only; the one-word ones (account, mempool) are checked in execution-cli.test.ts.
    assert.equal([...listed.keys()].sort(), [...COMMANDS, ...DAEMONS].sort());
    for (const [cmd, desc] of listed) assert.ok(desc.length >= 10, `${cmd} has a description (${JSON.stringify(desc)})`);
    for (const topic of ['wallet', 'tx', 'genesis', 'forks', 'devnet', 'node', 'contract', 'bridge']) assert.match(r.stdout, new RegExp(`^ {2}${topic} {2,}\\S`, 'm'));
  });
});

Help('each command has its own --help with usage and flags', async () => {
  await withTempDir(async (dir) => {
    const results = await mapLimit(COMMANDS, PAR, (c) => runCli([...c.split(' '), '--help'], cliEnv(dir)));
    results.forEach((r, i) => {
      assert.is(r.code, 0, `${COMMANDS[i]} --help: ${r.stderr}`);
      assert.ok(r.stdout.includes(`$ svc ${COMMANDS[i]}`), `${COMMANDS[i]} --help shows its usage`);
      assert.ok(r.stdout.includes('--json'), `${COMMANDS[i]} --help documents --json`);
    });
  });
});

Help.run();

// ---------------------------------------------------------------------------------------------
const Json = suite('cli: --json contract');

Json('every command prints exactly one JSON document with --json', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir, { SVC_PASSWORD: PASSWORD });
    const net = join(dir, 'net');
    const [created, gen] = await Promise.all([
      runCli(['wallet', 'new', '--name', 'a', '--json'], env),
      runCli(['genesis', 'new', '--validators', '1', '--accounts', '0', '--out', net, '--json'], env),
    ]);
    expectJsonOk(created);
    expectJsonOk(gen);
    const runs: string[][] = [
      ['wallet', 'import', '--name', 'b', '--json'],
      ['wallet', 'list', '--json'],
      ['wallet', 'show', 'a', '--json'],
      ['tx', 'sign', '--from', 'a', '--to', TO, '--nonce', '0', '--chain-id', 'svc-test', '--json'],
      ['forks', 'list', '--genesis', join(net, 'genesis.json'), '--json'],
    ];
    const results = await mapLimit(runs, PAR, (args) => runCli(args, { ...env, SVC_MNEMONIC: DEV_MNEMONIC }));
    results.forEach((r) => expectJsonOk(r));
    assert.equal(Object.keys(expectJsonOk(results[1]!)).sort(), ['directory', 'errors', 'wallets']);
  });
});

Json('every command reports failures as one stderr line and a {success:false,error} document', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const missing = join(dir, 'missing.json');
    const cases: Array<{ args: string[]; exit: number; code: string; message: string }> = [
      { args: ['wallet', 'new', '--json'], exit: 1, code: 'SECRET_REQUIRED', message: NO_PASSWORD },
      {
        args: ['wallet', 'import', '--json'],
        exit: 1,
        code: 'SECRET_REQUIRED',
        message: 'a mnemonic is required: pass --mnemonic-file FILE or set SVC_MNEMONIC (no terminal to prompt on)',
      },
      { args: ['wallet', 'list', '--bogus', '--json'], exit: 2, code: 'USAGE', message: 'Nonexistent flag: --bogus; See more help with --help' },
      { args: ['wallet', 'show', 'nobody', '--json'], exit: 1, code: 'WALLET_NOT_FOUND', message: `no wallet named or addressed "nobody" in ${join(svcHomeOf(dir), 'wallets')}` },
      { args: ['tx', 'sign', '--from', 'a', '--to', TO, '--value', '0x10', '--nonce', '0', '--chain-id', 'svc-test', '--json'], exit: 1, code: 'MALFORMED_INPUT', message: 'malformed tx.Value' },
      { args: ['genesis', 'new', '--json'], exit: 2, code: 'USAGE', message: 'Missing required flag validators; See more help with --help' },
      {
        args: ['devnet', 'up', '--validators', '2', '--nodes', '3', '--dir', join(dir, 'devnet'), '--json'],
        exit: 2,
        code: 'USAGE',
        message: '--nodes 3 needs at least as many validators, and this chain has 2: every producing node runs at least one',
      },
      {
        args: ['forks', 'list', '--genesis', missing, '--json'],
        exit: 1,
        code: 'INVALID_GENESIS',
        message: `cannot read genesis file ${missing} (pass --genesis FILE; create one with: svc genesis new --validators 4)`,
      },
    ];
    const results = await mapLimit(cases, PAR, (c) => runCli(c.args, env));
    results.forEach((r, i) => expectCliError(r, { ...cases[i]!, json: true }));
    // Without --json: the same single stderr line and nothing on stdout.
    const plain = await mapLimit(cases, PAR, (c) => runCli(c.args.filter((a) => a !== '--json'), env));
    plain.forEach((r, i) => expectCliError(r, { exit: cases[i]!.exit, message: cases[i]!.message, json: false }));
    assert.not.ok(existsSync(join(dir, 'devnet')), 'a refused devnet up writes nothing');
  });
});

Json('an unknown flag exits 2 for every command', async () => {
  await withTempDir(async (dir) => {
    const results = await mapLimit(COMMANDS, PAR, (c) => runCli([...c.split(' '), '--no-such-flag'], cliEnv(dir)));
    results.forEach((r) => expectCliError(r, { exit: 2, message: 'Nonexistent flag: --no-such-flag; See more help with --help', json: false }));
  });
});

Json.run();

// ---------------------------------------------------------------------------------------------
const Wallet = suite('cli: wallet');

Wallet('wallet new → import elsewhere gives the same addresses; --index 1 differs; no silent overwrite', async () => {
  await withTempDir(async (dir) => {
    const home1 = join(dir, 'h1');
    const home2 = join(dir, 'h2');
    const env1 = cliEnv(home1, { SVC_PASSWORD: PASSWORD });
    const created = expectJsonOk(await runCli(['wallet', 'new', '--name', 'a', '--json'], env1));
    assert.equal(Object.keys(created).sort(), ['address', 'derivation_path', 'ecdsa_address', 'mnemonic', 'name', 'path']);
    assert.is(created.name, 'a');
    assert.is(created.path, walletFileOf(home1, 'a'));
    assert.is(created.derivation_path, "m/44'/1'/0'/0'/0'");
    const words = (created.mnemonic as string).split(' ');
    assert.is(words.length, 24);
    assert.not.equal(created.mnemonic, DEV_MNEMONIC);
    const keys = deriveWalletKeys(mnemonicToSeed(created.mnemonic), walletPath(0, 0));
    assert.is(created.address, keys.address);
    assert.is(created.ecdsa_address, keys.ecdsaAddress);

    // The file: 0600, the spec's fields, no secret in it, unlocks to the same keys.
    assert.is(await modeOf(created.path), 0o600);
    const content = await readFile(created.path, 'utf8');
    const json = JSON.parse(content);
    assert.equal(Object.keys(json).sort(), SPEC_FIELDS);
    assert.is(json.address, created.address);
    assert.is(json.kdf.memory, 256, 'SVC_KDF_MEMORY_KIB reached the file');
    assertNoSecrets(content, created.mnemonic, keys);
    const unlocked = await unlockWallet(parseWalletFile(json).file as WalletFileV2, PASSWORD);
    assert.is(unlocked.address, created.address);

    const env2 = cliEnv(home2, { SVC_PASSWORD: 'another password', SVC_MNEMONIC: created.mnemonic });
    const [imported, index1] = await Promise.all([
      runCli(['wallet', 'import', '--json'], env2),
      runCli(['wallet', 'import', '--name', 'idx1', '--index', '1', '--json'], env2),
    ]);
    const imp = expectJsonOk(imported);
    assert.equal(imp, { name: created.address, path: walletFileOf(home2, created.address), address: created.address, ecdsa_address: created.ecdsa_address, derivation_path: "m/44'/1'/0'/0'/0'" });
    const i1 = expectJsonOk(index1);
    assert.is(i1.derivation_path, "m/44'/1'/0'/0'/1'");
    assert.is.not(i1.address, created.address);
    assert.is.not(i1.ecdsa_address, created.ecdsa_address);
    const k1 = deriveWalletKeys(mnemonicToSeed(created.mnemonic), walletPath(0, 1));
    assert.is(i1.address, k1.address);
    assert.is(i1.ecdsa_address, k1.ecdsaAddress);

    // Same name again, without --force: refused, file untouched. With --force: replaced.
    const before = await readFile(created.path, 'utf8');
    const [again, againImport] = await Promise.all([
      runCli(['wallet', 'new', '--name', 'a', '--json'], env1),
      runCli(['wallet', 'import', '--json'], env2),
    ]);
    expectCliError(again, { exit: 1, code: 'FILE_EXISTS', message: `${created.path} already exists (use --force to overwrite)`, json: true });
    expectCliError(againImport, { exit: 1, code: 'FILE_EXISTS', messageIncludes: ['already exists'], json: true });
    assert.is(await readFile(created.path, 'utf8'), before);
    const forced = expectJsonOk(await runCli(['wallet', 'new', '--name', 'a', '--force', '--json'], env1));
    assert.is.not(forced.address, created.address);
    assert.is(JSON.parse(await readFile(created.path, 'utf8')).address, forced.address);
    assert.is(await modeOf(created.path), 0o600);
  });
});

Wallet('without a password source and no TTY, commands fail naming --password-file and SVC_PASSWORD', async () => {
  await withTempDir(async (dir) => {
    await seedWallet(dir, 'a');
    const env = cliEnv(dir, { SVC_MNEMONIC: DEV_MNEMONIC });
    const runs = [
      ['wallet', 'new', '--name', 'x'],
      ['wallet', 'import', '--name', 'y'],
      ['wallet', 'show', 'a', '--unlock'],
      ['tx', 'sign', '--from', 'a', '--to', TO, '--nonce', '0', '--chain-id', 'svc-test'],
    ];
    const results = await mapLimit(runs, PAR, (args) => runCli(args, env));
    for (const r of results) expectCliError(r, { exit: 1, message: NO_PASSWORD, messageIncludes: ['--password-file', 'SVC_PASSWORD'], json: false });
    assert.equal(await readdir(join(svcHomeOf(dir), 'wallets')), ['a.json'], 'nothing was written');
  });
});

Wallet('--password-file works (one trailing newline stripped); a missing file is an error', async () => {
  await withTempDir(async (dir) => {
    const pwFile = join(dir, 'pw.txt');
    await writeFile(pwFile, 's3cret pass\n');
    const env = cliEnv(dir);
    const made = expectJsonOk(await runCli(['wallet', 'new', '--name', 'p', '--password-file', pwFile, '--json'], env));
    const file = parseWalletFile(JSON.parse(await readFile(made.path, 'utf8'))).file as WalletFileV2;
    assert.is((await unlockWallet(file, 's3cret pass')).address, made.address);
    await unlockWallet(file, 's3cret pass\n').then(
      () => assert.unreachable('the newline must not be part of the password'),
      (err) => assert.is(err.code, 'WRONG_PASSWORD'),
    );
    // --password-file wins over SVC_PASSWORD.
    const [shown, missing] = await Promise.all([
      runCli(['wallet', 'show', 'p', '--unlock', '--password-file', pwFile, '--json'], { ...env, SVC_PASSWORD: 'not it' }),
      runCli(['wallet', 'show', 'p', '--unlock', '--password-file', join(dir, 'nope.txt')], env),
    ]);
    const s = expectJsonOk(shown);
    assert.is(s.address, made.address);
    const pk = parseHex(s.public_key, 'public_key');
    assert.is(pk.length, 1952);
    assert.is(toHex(sha3_256(pk).subarray(12)), made.address, 'the shown public key is the wallet key');
    expectCliError(missing, { exit: 1, message: `cannot read password file ${join(dir, 'nope.txt')}`, json: false });
  });
});

Wallet('wallet show --unlock with a wrong SVC_PASSWORD exits 1 with "wrong password"', async () => {
  await withTempDir(async (dir) => {
    await seedWallet(dir, 'a');
    const [wrong, right, locked] = await Promise.all([
      runCli(['wallet', 'show', 'a', '--unlock', '--json'], cliEnv(dir, { SVC_PASSWORD: 'not the password' })),
      runCli(['wallet', 'show', 'a', '--unlock', '--json'], cliEnv(dir, { SVC_PASSWORD: PASSWORD })),
      runCli(['wallet', 'show', 'a', '--json'], cliEnv(dir)),
    ]);
    const msg = expectCliError(wrong, { exit: 1, code: 'WRONG_PASSWORD', message: WRONG_PASSWORD, json: true });
    assert.ok(msg.startsWith('wrong password'));
    const ok = expectJsonOk(right);
    assert.is(ok.public_key, toHex(deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), walletPath(0, 0)).mldsa.publicKey));
    // Without --unlock no password is needed and no key is shown.
    const l = expectJsonOk(locked);
    assert.is(l.public_key, null);
    assert.is(l.watch_only, false);
    assert.is(l.address, ok.address);
  });
});

Wallet('a legacy wallet file is watch-only: listed, shown, and refused for signing', async () => {
  await withTempDir(async (dir) => {
    const { file } = await seedWallet(dir, 'a');
    const legacy = legacyWallet();
    const legacyPath = walletFileOf(dir, 'old');
    await writeFile(legacyPath, JSON.stringify(legacy.json));
    const env = cliEnv(dir, { SVC_PASSWORD: PASSWORD });
    const [list, show, showHuman, sign, signByAddress] = await mapLimit(
      [
        ['wallet', 'list', '--json'],
        ['wallet', 'show', 'old', '--json'],
        ['wallet', 'show', legacy.json.address.toUpperCase().replace('0X', '0x')],
        ['tx', 'sign', '--from', 'old', '--to', TO, '--nonce', '0', '--chain-id', 'svc-test', '--json'],
        ['tx', 'sign', '--from', legacy.json.address, '--to', TO, '--nonce', '0', '--chain-id', 'svc-test'],
      ],
      PAR,
      (args) => runCli(args, env),
    );
    const l = expectJsonOk(list);
    assert.equal(l, {
      directory: join(svcHomeOf(dir), 'wallets'),
      wallets: [
        { name: 'a', path: walletFileOf(dir, 'a'), version: '2.0', address: file.address, ecdsa_address: file.ecdsa_address, derivation_path: file.derivation_path, watch_only: false, created_at: null },
        { name: 'old', path: legacyPath, version: 'legacy', address: legacy.json.address, ecdsa_address: null, derivation_path: null, watch_only: true, created_at: legacy.json.created_at },
      ],
      errors: [],
    });
    const s = expectJsonOk(show);
    assert.is(s.watch_only, true);
    assert.is(s.version, 'legacy');
    assert.is(s.public_key, toHex(legacy.publicKey));
    assert.is(showHuman.code, 0, showHuman.stderr);
    assert.match(showHuman.stdout, /watch-only/);
    assert.ok(showHuman.stdout.includes(legacy.json.address));
    const watchOnly = 'wallet old is a watch-only (legacy) wallet and cannot sign';
    expectCliError(sign, { exit: 1, code: 'WATCH_ONLY', message: watchOnly, json: true });
    expectCliError(signByAddress, { exit: 1, message: watchOnly, json: false });
  });
});

Wallet('a garbage .json in the wallets dir: wallet list warns on stderr and still exits 0', async () => {
  await withTempDir(async (dir) => {
    const { file } = await seedWallet(dir, 'a');
    const garbage = walletFileOf(dir, 'zz-garbage');
    await writeFile(garbage, '{ this is not json');
    const warning = `warning: skipped ${garbage}: ${garbage} is not valid JSON\n`;
    const [human, json] = await Promise.all([runCli(['wallet', 'list'], cliEnv(dir)), runCli(['wallet', 'list', '--json'], cliEnv(dir))]);
    assert.is(human.code, 0);
    assert.is(human.stderr, warning);
    assert.match(human.stdout, new RegExp(`^a +${file.address}$`, 'm'));
    assert.is(json.code, 0);
    assert.is(json.stderr, warning);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.wallets.map((w: { name: string }) => w.name), ['a']);
    assert.equal(doc.errors, [{ path: garbage, error: `${garbage} is not valid JSON` }]);
  });
});

Wallet('wallet import rejects a bad mnemonic before asking for a password', async () => {
  await withTempDir(async (dir) => {
    const words = DEV_MNEMONIC.split(' ');
    const bad = [...words.slice(0, 22), 'art', 'abandon'].join(' ');
    const mnemonicFile = join(dir, 'words.txt');
    await writeFile(mnemonicFile, DEV_MNEMONIC + '\n');
    const [checksum, short, fromFile] = await mapLimit(
      [
        { SVC_MNEMONIC: bad },
        { SVC_MNEMONIC: words.slice(0, 12).join(' ') },
        null,
      ],
      PAR,
      (extra) =>
        extra
          ? runCli(['wallet', 'import', '--json'], cliEnv(dir, extra))
          : runCli(['wallet', 'import', '--name', 'f', '--mnemonic-file', mnemonicFile, '--json'], cliEnv(dir, { SVC_PASSWORD: PASSWORD })),
    );
    expectCliError(checksum, { exit: 1, code: 'INVALID_MNEMONIC', message: 'mnemonic has an unknown word or a bad checksum', json: true });
    expectCliError(short, { exit: 1, code: 'INVALID_MNEMONIC', message: 'mnemonic must have 24 words, got 12', json: true });
    assert.is(expectJsonOk(fromFile).address, deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), walletPath(0, 0)).address);
  });
});

Wallet.run();

// ---------------------------------------------------------------------------------------------
const Tx = suite('cli: tx sign');

Tx('tx sign --json → {hash, raw, chain_id, tx} that verifies on its chain only', async () => {
  await withTempDir(async (dir) => {
    const { file, keys } = await seedWallet(dir, 'a');
    const env = cliEnv(dir, { SVC_PASSWORD: PASSWORD });
    const base = ['tx', 'sign', '--to', TO, '--value', '1000', '--nonce', '0', '--chain-id', 'svc-test', '--json'];
    const [byName, byAddress] = await Promise.all([
      runCli([...base, '--from', 'a'], env),
      runCli([...base, '--from', '0x' + file.address.slice(2).toUpperCase()], env),
    ]);
    const doc = expectJsonOk(byName);
    assert.equal(Object.keys(doc).sort(), ['chain_id', 'hash', 'raw', 'tx']);
    assert.is(doc.chain_id, 'svc-test');
    const tx = decodeTx(parseHex(doc.raw, 'raw'));
    assert.equal(verifyTxSignature(tx, 'svc-test'), parseHex(file.address, 'address'));
    try {
      verifyTxSignature(tx, 'svc-other');
      assert.unreachable('a signature for svc-test must not verify on svc-other');
    } catch (err) {
      assert.instance(err, TxError);
      assert.is((err as TxError).specName, 'ErrInvalidSignature');
      assert.is((err as TxError).message, 'invalid transaction signature');
    }
    assert.is(toHex(txHash(tx)), doc.hash);
    assert.equal(doc.tx, txToJson(tx));
    assert.is(doc.tx.hash, doc.hash);
    assert.is(doc.tx.from, file.address);
    assert.is(doc.tx.type, 0);
    assert.is(doc.tx.to, TO);
    assert.is(doc.tx.value, '1000');
    assert.is(doc.tx.nonce, 0);
    assert.is(doc.tx.gasLimit, 21000);
    assert.is(doc.tx.gasPrice, '1000000000');
    assert.is(doc.tx.data, '0x');
    assert.is(doc.tx.publicKey, toHex(keys.mldsa.publicKey));
    // The wallet can be named by its address in any case.
    const other = expectJsonOk(byAddress);
    assert.is(other.tx.from, file.address);
    verifyTxSignature(decodeTx(parseHex(other.raw, 'raw')), 'svc-test');
  });
});

Tx('tx sign --deploy --data 0x00aabb: no recipient, intrinsic gas 32000 + 200 × 3', async () => {
  await withTempDir(async (dir) => {
    const { file } = await seedWallet(dir, 'a');
    const r = await runCli(['tx', 'sign', '--from', 'a', '--deploy', '--data', '0x00aabb', '--nonce', '7', '--chain-id', 'svc-test', '--json'], cliEnv(dir, { SVC_PASSWORD: PASSWORD }));
    const doc = expectJsonOk(r);
    assert.is(doc.tx.to, null);
    assert.is(doc.tx.gasLimit, 32000 + 200 * 3);
    assert.is(doc.tx.data, '0x00aabb');
    assert.is(doc.tx.nonce, 7);
    assert.is(doc.tx.value, '0');
    const tx = decodeTx(parseHex(doc.raw, 'raw'));
    assert.equal(verifyTxSignature(tx, 'svc-test'), parseHex(file.address, 'address'));
  });
});

Tx('tx sign rejects bad inputs with the exact message', async () => {
  await withTempDir(async (dir) => {
    await seedWallet(dir, 'a');
    const env = cliEnv(dir, { SVC_PASSWORD: PASSWORD });
    const sign = (...args: string[]) => ['tx', 'sign', '--from', 'a', ...args];
    const std = ['--nonce', '0', '--chain-id', 'svc-test'];
    const cases: Array<{ args: string[]; exit: number; message?: string; startsWith?: string; includes?: string[] }> = [
      { args: sign('--to', TO, '--value', '0x10', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--value=-1', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--value', '1.5', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--value', '1e3', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--value', '+5', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--value', '010', ...std), exit: 1, message: 'malformed tx.Value' },
      { args: sign('--to', TO, '--gas-price', '1e9', ...std), exit: 1, message: 'malformed tx.GasPrice' },
      { args: sign('--to', TO, '--gas-price', '0x3b9aca00', ...std), exit: 1, message: 'malformed tx.GasPrice' },
      { args: sign('--to', '0x1234', ...std), exit: 1, startsWith: 'malformed tx.To' },
      { args: sign('--to', TO.slice(0, -1) + 'g', ...std), exit: 1, startsWith: 'malformed tx.To' },
      { args: sign('--to', TO, '--nonce', '-1', '--chain-id', 'svc-test'), exit: 1, message: 'malformed tx.Nonce' },
      { args: sign('--to', TO, '--nonce', '1.0', '--chain-id', 'svc-test'), exit: 1, message: 'malformed tx.Nonce' },
      { args: sign('--to', TO, '--data', '0xabc', ...std), exit: 1, startsWith: 'malformed tx.Data' },
      { args: sign('--to', TO, '--deploy', ...std), exit: 2, includes: ['--deploy', '--to'] },
      { args: sign(...std), exit: 2, includes: ['--deploy', '--to'] },
      { args: sign('--to', TO, '--nonce', '0', '--chain-id', 'abcdefghijklm'), exit: 1, message: 'chain id must be 1 to 12 bytes of UTF-8 without NUL, got "abcdefghijklm"', includes: ['chain id'] },
    ];
    const results = await mapLimit(cases, 3, (c) => runCli(c.args, env));
    results.forEach((r, i) => {
      const c = cases[i]!;
      try {
        expectCliError(r, { exit: c.exit, message: c.message, messageStartsWith: c.startsWith, messageIncludes: c.includes, json: false });
      } catch (err) {
        (err as Error).message = `case ${JSON.stringify(c.args.slice(4))}: ${(err as Error).message}`;
        throw err;
      }
    });
  });
});

Tx.run();

// ---------------------------------------------------------------------------------------------
const Genesis = suite('cli: genesis and forks');

Genesis('genesis new --validators 4: genesis, keystores that unlock with the devnet password, RANDAO commitments', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'net');
    const env = cliEnv(dir); // no SVC_PASSWORD: the devnet password applies
    const doc = expectJsonOk(await runCli(['genesis', 'new', '--validators', '4', '--out', out, '--json'], env));
    const genesisPath = join(out, 'genesis.json');
    assert.is(doc.genesis, genesisPath);
    assert.is(doc.keystore_password, 'svc-devnet');
    assert.is(doc.mnemonic, DEV_MNEMONIC);
    assert.is(doc.chain_id, 'svc-devnet');

    const raw = JSON.parse(await readFile(genesisPath, 'utf8'));
    const g = parseGenesis(raw);
    assert.equal(g, raw, 'the file is already in canonical form');
    assert.is(doc.genesis_hash, toHex(genesisHash(g)));
    assert.is(g.validators.length, 4);
    assert.is(g.alloc.length, 4 + 10 + 1);

    const byRole = (role: string) => (doc.keystores as Array<{ role: string; index: number; address: string; path: string; balance: string }>).filter((k) => k.role === role);
    assert.is(byRole('validator').length, 4);
    assert.is(byRole('account').length, 10);
    assert.is(byRole('faucet').length, 1);
    const faucet = byRole('faucet')[0]!;
    assert.is(g.config.faucet.address, faucet.address);
    assert.is(faucet.path, join(out, 'keystores', 'faucet.json'));
    assert.equal(byRole('validator').map((k) => k.path), [0, 1, 2, 3].map((i) => join(out, 'keystores', `validator-${i}.json`)));
    assert.equal(byRole('account').map((k) => k.path), [...Array(10).keys()].map((i) => join(out, 'accounts', `account-${i}.json`)));
    assert.equal(g.validators.map((v) => v.address), byRole('validator').map((k) => k.address));
    assert.equal(new Set(g.alloc.map((a) => a.address)), new Set((doc.keystores as Array<{ address: string }>).map((k) => k.address)));
    for (const k of doc.keystores) assert.is(k.balance, g.alloc.find((a) => a.address === k.address)!.balance);

    // Every keystore is a valid 2.0 wallet file for the address genesis lists, mode 0600.
    for (const k of doc.keystores as Array<{ address: string; path: string }>) {
      const w = parseWalletFile(JSON.parse(await readFile(k.path, 'utf8')));
      assert.is(w.kind, 'v2');
      assert.is(w.file.address, k.address);
      assert.is(await modeOf(k.path), 0o600);
    }
    assert.is(await modeOf(genesisPath), 0o644);

    // Unlock one validator and the faucet with the devnet password.
    const v0file = parseWalletFile(JSON.parse(await readFile(join(out, 'keystores', 'validator-0.json'), 'utf8'))).file as WalletFileV2;
    const ffile = parseWalletFile(JSON.parse(await readFile(faucet.path, 'utf8'))).file as WalletFileV2;
    const [v0, f] = await Promise.all([unlockWallet(v0file, 'svc-devnet'), unlockWallet(ffile, 'svc-devnet')]);
    assert.is(v0.address, g.validators[0]!.address);
    assert.is(f.address, g.config.faucet.address);
    assert.is(g.validators[0]!.public_key, toHex(v0.mldsa.publicKey));
    assert.is(g.validators[0]!.randao_commitment, toHex(randaoCommitment(v0.mldsaSeed, g.config.randao_chain_length)));
  });
});

Genesis('genesis new refuses to overwrite without --force and leaves every file unchanged; --validators 0 exits 2', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'net');
    const env = cliEnv(dir);
    expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '1', '--out', out, '--json'], env));
    const before = await snapshot(out);
    assert.is(before.size, 1 + 1 + 1 + 1);
    const [again, zero] = await Promise.all([
      runCli(['genesis', 'new', '--validators', '1', '--accounts', '1', '--out', out, '--json'], env),
      runCli(['genesis', 'new', '--validators', '0', '--out', join(dir, 'zero')], env),
    ]);
    expectCliError(again, { exit: 1, code: 'FILE_EXISTS', message: `${join(out, 'genesis.json')} already exists (use --force to overwrite)`, json: true });
    assert.equal(await snapshot(out), before);
    expectCliError(zero, { exit: 2, message: 'Parsing --validators; Expected an integer greater than or equal to 1 but received: 0; See more help with --help', json: false });
    assert.not.ok((await readdir(dir)).includes('zero'), 'nothing written for --validators 0');
  });
});

Genesis('forks list shows the genesis fork as current; a missing genesis file names --genesis', async () => {
  await withTempDir(async (dir) => {
    const out = join(dir, 'net');
    const env = cliEnv(dir);
    expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--accounts', '0', '--out', out, '--json'], env));
    const genesisPath = join(out, 'genesis.json');
    const missing = join(dir, 'nope', 'genesis.json');
    const [listed, viaEnv, missingFile, noDefault] = await mapLimit(
      [
        { args: ['forks', 'list', '--genesis', genesisPath, '--json'], env },
        { args: ['forks', 'list', '--json'], env: { ...env, SVC_GENESIS: genesisPath } },
        { args: ['forks', 'list', '--genesis', missing], env },
        { args: ['forks', 'list'], env, cwd: dir },
      ],
      PAR,
      (c) => runCli(c.args, c.env, { cwd: c.cwd ?? dir }),
    );
    const doc = expectJsonOk(listed);
    assert.equal(doc, { genesis: genesisPath, chain_id: 'svc-devnet', current_epoch: doc.current_epoch, forks: [{ name: 'genesis', epoch: 0, version: '0x00000001', status: 'current' }] });
    assert.type(doc.current_epoch, 'number');
    assert.equal(expectJsonOk(viaEnv).forks, doc.forks);
    const hint = '(pass --genesis FILE; create one with: svc genesis new --validators 4)';
    expectCliError(missingFile, { exit: 1, message: `cannot read genesis file ${missing} ${hint}`, messageIncludes: ['--genesis'], json: false });
    expectCliError(noDefault, { exit: 1, message: `cannot read genesis file ${join(dir, 'genesis.json')} ${hint}`, json: false });
  });
});

Genesis.run();
