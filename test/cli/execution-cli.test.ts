/**
 * The execution-facing CLI against a real node: `svc node execution` runs as a child process on
 * free ports, `faucet claim`, `account`, `mempool`, `tx status` and `tx send` run as real CLI
 * processes, and the test plays the proposer itself: it builds, signs and imports blocks through
 * the engine API in-process. Tests in this file run in order and share one node.
 */
import { suite } from 'uvu';
import { freePort } from '../helpers/network.js';
import * as assert from 'uvu/assert';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex } from '../../src/core/codec/bytes.js';
import { type Genesis, parseGenesis, slotStartMs } from '../../src/core/genesis/genesis.js';
import { blockToJson, buildSignedBlock } from '../../src/core/types/block.js';
import { txFromJson } from '../../src/core/types/transaction-json.js';
import { ExecutionClient, ExecutionClientError, resolveExecutionUrl } from '../../src/client/execution.js';
import { formatTokens } from '../../src/cli/format.js';
import { unlockWallet, type WalletFileV2 } from '../../src/wallet/keystore.js';
import type { WalletKeys } from '../../src/wallet/derivation.js';
import { branchAfter, type BranchState, drawnSlot, genesisBranch, randaoChainOf } from '../node/execution/fixture.js';
import { type CliResult, RUN_JS, cliEnv, expectCliError, expectJsonOk, mapLimit, runCli } from '../helpers/cli.js';

const PASSWORD = 'pw-exec-tests';
const DEVNET_PASSWORD = 'svc-devnet';
const TO = '0x00000000000000000000000000000000000000aa';
const FAUCET_AMOUNT = 10n * 10n ** 18n;
const GWEI = 10n ** 9n;
const HASH_RE = /^0x[0-9a-f]{64}$/;
/** Deadline for the node to answer /health after spawning. */
const READY_MS = 20_000;


/**
 * Calls `probe` until it returns a value other than undefined (probe errors count as "not yet"),
 * or fails after `ms`, or as soon as `fatal` returns a reason to stop.
 */
async function pollUntil<T>(what: string, ms: number, probe: () => Promise<T | undefined>, fatal: () => string | undefined = () => undefined, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  let lastErr: unknown;
  for (;;) {
    const stop = fatal();
    if (stop !== undefined) throw new Error(`gave up waiting for ${what}: ${stop}`);
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${lastErr ? ` (last error: ${(lastErr as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = await res.json();
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function postJson(url: string, payload: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload), signal: AbortSignal.timeout(10_000) });
  const body = await res.json();
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

interface Ctx {
  dir: string;
  net: string;
  url: string;
  /** Environment of every CLI child: SVC_HOME in the temp dir, a cheap KDF, the wallet password, the node's URL. */
  env: Record<string, string>;
  node: ChildProcess;
  nodeLog: () => string;
  chainId: string;
  genesis: Genesis;
  /** Consensus state after the last block this test built: the next block's slot, seed and reveal derive from it. */
  branch: BranchState;
  proposer: { keys: WalletKeys; index: number };
  wallet: string;
  faucetAddress: string;
  faucetTx?: string;
  sendTx?: string;
}

let ctx: Ctx | undefined;
let tempDir: string | undefined;
let nodeProc: ChildProcess | undefined;

function need(): Ctx {
  if (!ctx) throw new Error('set-up failed in the first test; nothing to check');
  return ctx;
}

/** `svc …` with the shared environment; the node's output is attached to any failure message. */
async function svc(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { ...need().env, ...extraEnv });
}

/** Builds the next block on the head from the node's pending transactions, signs it as validator 0 and imports it. */
async function importNextBlock(expectTxs: number): Promise<{ block_hash: string; block_number: number; receipts: any[] }> {
  const c = need();
  const health = await getJson(`${c.url}/health`);
  const parent = (await getJson(`${c.url}/api/v1/blocks/latest`)).data;
  assert.is(parent.hash, health.head_hash);
  const pending = (await getJson(`${c.url}/api/v1/engine/getPendingTransactions`)).data;
  assert.is(pending.count, expectTxs, `pending transactions: ${JSON.stringify(pending.transactions.map((t: any) => t.hash))}`);
  const index = health.latest_block + 1;
  assert.is(parent.timestamp, slotStartMs(c.genesis, c.branch.slot), 'the head is the last block this test built');
  // Execution checks the unsigned header fields: a slot the draw gives this validator, its seed, the next reveal.
  const { slot, seed } = drawnSlot(c.genesis, c.branch, c.proposer.index);
  const reveal = randaoChainOf(c.proposer.keys, c.genesis.config.randao_chain_length).next(c.branch.last.get(c.proposer.index)!);
  const transactions = pending.transactions.map((t: unknown) => txFromJson(t));
  const block = buildSignedBlock({
    chainId: c.chainId,
    index,
    timestampMs: slotStartMs(c.genesis, slot),
    parentHash: parseHex(health.head_hash, 'head_hash', 32),
    transactions,
    key: c.proposer.keys.mldsa,
    validatorIndex: c.proposer.index,
    validatorId: parseHex(c.proposer.keys.address, 'validator address', 20),
    vrfSeed: seed,
    randaoReveal: reveal,
    stateRoot: parseHex(parent.state_root, 'parent state_root', 32),
  });
  const res = await postJson(`${c.url}/api/v1/engine/newPayload`, blockToJson(block));
  assert.is(res.success, true, JSON.stringify(res));
  c.branch = branchAfter(c.genesis, c.branch, slot, c.proposer.index, reveal, transactions);
  assert.is(res.data.status, 'VALID');
  assert.is(res.data.canonical, true);
  assert.is(res.data.block_number, index);
  return res.data;
}

async function stopNode(): Promise<void> {
  const child = nodeProc;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

const S = suite('cli: execution commands against a real node');

// Should the test runner itself die, do not leave the node behind.
process.once('exit', () => nodeProc?.kill('SIGKILL'));

S.after(async () => {
  await stopNode();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

S('set-up: genesis, wallet, node on free ports answering /health', async () => {
  const dir = (tempDir = await mkdtemp(join(tmpdir(), 'svc-exec-test-')));
  const net = join(dir, 'net');
  // No SVC_PASSWORD for genesis new: devnet keystores then use the devnet password.
  const [gen, created] = await Promise.all([
    runCli(['genesis', 'new', '--validators', '2', '--out', net, '--kdf-memory', '256', '--json'], cliEnv(dir)),
    runCli(['wallet', 'new', '--name', 'alice', '--json'], cliEnv(dir, { SVC_PASSWORD: PASSWORD })),
  ]);
  const genDoc = expectJsonOk(gen);
  const wallet = expectJsonOk(created).address as string;
  const genesis = parseGenesis(JSON.parse(await readFile(join(net, 'genesis.json'), 'utf8')));

  const [restPort, rpcPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${restPort}`;
  let log = '';
  const node = (nodeProc = spawn(
    process.execPath,
    [RUN_JS, 'node', 'execution', '--genesis', join(net, 'genesis.json'), '--data-dir', join(dir, 'exec'), '--rest-port', String(restPort), '--rpc-port', String(rpcPort), '--verifier-threads', '1', '--p2p-host', '127.0.0.1', '--p2p-port', '0'],
    { env: cliEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] },
  ));
  node.stdout!.setEncoding('utf8').on('data', (d: string) => (log += d));
  node.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const health = await pollUntil(
    `the node at ${url}`,
    READY_MS,
    async () => (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) })).json() as Promise<any>,
    () => (node.exitCode !== null || node.signalCode !== null ? `the node exited (${node.exitCode ?? node.signalCode})` : undefined),
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n--- node output\n${log}`);
  });
  assert.is(health.status, 'healthy');
  assert.is(health.chain_id, genDoc.chain_id);
  assert.is(health.latest_block, 0);

  const validator0 = JSON.parse(await readFile(join(net, 'keystores', 'validator-0.json'), 'utf8')) as WalletFileV2;
  const keys = await unlockWallet(validator0, DEVNET_PASSWORD);
  const registry = (await getJson(`${url}/api/v1/engine/registry`)).data.validators as Array<{ index: number; address: string }>;
  const entry = registry.find((v) => v.address === keys.address);
  assert.ok(entry, `validator-0 ${keys.address} is in the registry`);

  ctx = {
    dir,
    net,
    url,
    env: cliEnv(dir, { SVC_PASSWORD: PASSWORD, SVC_EXECUTION_URL: url }),
    node,
    nodeLog: () => log,
    chainId: genDoc.chain_id,
    genesis,
    branch: genesisBranch(genesis),
    proposer: { keys, index: entry!.index },
    wallet,
    faucetAddress: genesis.config.faucet.address,
  };
});

S('faucet claim → tx hash and 10 tokens; a second claim hits the cooldown (exit 1)', async () => {
  const c = need();
  const doc = expectJsonOk(await svc(['faucet', 'claim', c.wallet, '--json']));
  assert.equal(Object.keys(doc).sort(), ['address', 'amount', 'tx_hash']);
  assert.is(doc.address, c.wallet);
  assert.is(doc.amount, FAUCET_AMOUNT.toString());
  assert.match(doc.tx_hash, HASH_RE);
  c.faucetTx = doc.tx_hash;

  // The wallet's name works as well as its address; the human and --json forms fail alike.
  const [json, plain] = await Promise.all([svc(['faucet', 'claim', 'alice', '--json']), svc(['faucet', 'claim', c.wallet.toUpperCase().replace('0X', '0x')])]);
  for (const [r, isJson] of [[json, true], [plain, false]] as const) {
    expectCliError(r, { exit: 1, code: 'FAUCET_COOLDOWN', messageStartsWith: `faucet cooldown: ${c.wallet} can claim again after `, json: isJson });
  }
});

S('mempool, account and tx status show the pending faucet transfer', async () => {
  const c = need();
  const [pool, faucetAcc, status, walletAcc, poolHuman] = await mapLimit(
    [['mempool', '--json'], ['account', c.faucetAddress, '--json'], ['tx', 'status', c.faucetTx!, '--json'], ['account', 'alice', '--json'], ['mempool']],
    2,
    (args) => svc(args),
  );
  const p = expectJsonOk(pool);
  assert.is(p.count, 1);
  const [entry] = p.transactions;
  assert.is(entry.hash, c.faucetTx);
  assert.is(entry.from, c.faucetAddress);
  assert.is(entry.to, c.wallet);
  assert.is(entry.value, FAUCET_AMOUNT.toString());
  assert.is(entry.nonce, 0);
  assert.is(entry.gas_price, GWEI.toString());
  assert.is(entry.status, 'ready');
  assert.is(poolHuman.code, 0, poolHuman.stderr);
  assert.match(poolHuman.stdout, /^1 transaction in the pool$/m);
  assert.match(poolHuman.stdout, /^HASH +FROM +TO +VALUE \(wei\) +NONCE +GAS PRICE \(wei\) +STATUS$/m);
  assert.ok(poolHuman.stdout.includes(`${c.faucetTx}  ${c.faucetAddress}  ${c.wallet}  ${FAUCET_AMOUNT}`), poolHuman.stdout);

  const f = expectJsonOk(faucetAcc);
  assert.equal(Object.keys(f).sort(), ['address', 'balance', 'nonce', 'pending_nonce']);
  assert.is(f.address, c.faucetAddress);
  assert.is(f.nonce, 0);
  assert.is(f.pending_nonce, 1);
  assert.ok(BigInt(f.balance) > FAUCET_AMOUNT);

  const s = expectJsonOk(status);
  assert.is(s.hash, c.faucetTx);
  assert.is(s.state, 'Pending');
  assert.is(s.pool_status, 'ready');
  assert.is(s.receipt, undefined);

  const w = expectJsonOk(walletAcc);
  assert.equal(w, { address: c.wallet, balance: '0', nonce: 0, pending_nonce: 0 });
});

S('an imported block confirms the faucet transfer: receipt status 1, the wallet holds 10 tokens', async () => {
  const c = need();
  const imported = await importNextBlock(1);
  assert.is(imported.receipts[0].transactionHash, c.faucetTx);
  const [status, human, account, accountHuman, pool] = await mapLimit(
    [['tx', 'status', c.faucetTx!, '--json'], ['tx', 'status', c.faucetTx!], ['account', c.wallet, '--json'], ['account', c.wallet], ['mempool', '--json']],
    2,
    (args) => svc(args),
  );
  const s = expectJsonOk(status);
  assert.is(s.state, 'Confirmed');
  assert.equal(s.block, { hash: imported.block_hash, number: 1 });
  assert.is(s.receipt.status, 1);
  assert.is(s.receipt.gasUsed, 21000);
  assert.is(s.tx.hash, c.faucetTx);
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /^State: +Confirmed$/m);
  assert.match(human.stdout, new RegExp(`^Block: +1 \\(${imported.block_hash}\\)$`, 'm'));
  assert.match(human.stdout, /^Result: +success$/m);
  assert.match(human.stdout, /^Gas used: +21000$/m);

  assert.equal(expectJsonOk(account), { address: c.wallet, balance: FAUCET_AMOUNT.toString(), nonce: 0, pending_nonce: 0 });
  assert.is(accountHuman.code, 0, accountHuman.stderr);
  assert.match(accountHuman.stdout, /^Balance: +10 tokens$/m);
  assert.match(accountHuman.stdout, /^Balance \(wei\): +10000000000000000000$/m);
  assert.is(expectJsonOk(pool).count, 0);
});

S('tx send --wait: submits with the node\'s chain id and nonce, prints Confirmed once a block includes it; balances move', async () => {
  const c = need();
  const client = new ExecutionClient(c.url);
  const recipientBefore = BigInt((await client.account(TO)).balance);
  const running = svc(['tx', 'send', '--from', 'alice', '--to', TO, '--value', '1000', '--wait', '--timeout', '30']);
  let early: CliResult | undefined;
  void running.then((r) => (early = r));
  // Play the proposer: once the transaction is in the pool, include it in the next block.
  const entry = await pollUntil(
    'the transfer to reach the pool',
    25_000,
    async () => (await client.mempool()).transactions[0],
    () => (early ? `tx send exited first (${early.code}): ${early.stdout}${early.stderr}` : undefined),
    100,
  );
  assert.is(entry.from, c.wallet);
  assert.is(entry.to, TO);
  assert.is(entry.value, '1000');
  assert.is(entry.nonce, 0);
  const imported = await importNextBlock(1);
  const r = await running;
  assert.is(r.code, 0, `tx send failed: exit ${r.code}\n${r.stdout}\n${r.stderr}\n--- node\n${c.nodeLog()}`);
  assert.match(r.stdout, new RegExp(`^Hash: +${entry.hash}$`, 'm'));
  assert.match(r.stdout, /^Pool: +ready$/m);
  assert.match(r.stdout, new RegExp(`^Chain id: +${c.chainId}$`, 'm'));
  assert.match(r.stdout, /^State: +Confirmed$/m);
  assert.match(r.stdout, new RegExp(`^Block: +2 \\(${imported.block_hash}\\)$`, 'm'));
  assert.match(r.stdout, /^Result: +success$/m);
  assert.match(r.stdout, /^Gas used: +21000$/m);
  assert.is(r.stderr, 'Waiting up to 30 s for a block…\n');
  c.sendTx = entry.hash;

  const [sender, recipient] = await Promise.all([client.account(c.wallet), client.account(TO)]);
  assert.is(BigInt(sender.balance), FAUCET_AMOUNT - 1000n - 21000n * GWEI);
  assert.is(sender.nonce, 1);
  assert.is(sender.pending_nonce, 1);
  assert.is(BigInt(recipient.balance) - recipientBefore, 1000n);

  // Finality moves the state on: the beacon's forkchoiceUpdated marks block 2 finalized.
  await postJson(`${c.url}/api/v1/engine/forkchoiceUpdated`, { head_block_hash: imported.block_hash, finalized_block_hash: imported.block_hash });
  const fin = expectJsonOk(await svc(['tx', 'status', entry.hash, '--json']));
  assert.is(fin.state, 'Finalized');
  assert.is(fin.receipt.status, 1);
});

S('tx send without --wait and with --json: one document with the hash and pool status', async () => {
  const c = need();
  const doc = expectJsonOk(await svc(['tx', 'send', '--from', c.wallet, '--to', TO, '--value', '5', '--gas-price', '2000000000', '--json']));
  assert.equal(Object.keys(doc).sort(), ['chain_id', 'from', 'gas_limit', 'gas_price', 'hash', 'nonce', 'pool_status', 'to', 'value']);
  assert.match(doc.hash, HASH_RE);
  assert.is(doc.from, c.wallet);
  assert.is(doc.nonce, 1);
  assert.is(doc.chain_id, c.chainId);
  assert.is(doc.gas_limit, 21000);
  assert.is(doc.gas_price, '2000000000');
  assert.is(doc.pool_status, 'ready');
  const s = await new ExecutionClient(c.url).txStatus(doc.hash);
  assert.is(s.state, 'Pending');
  // An unknown hash is an answer (state unknown, exit 0), not an error.
  const unknown = expectJsonOk(await svc(['tx', 'status', '0x' + 'ab'.repeat(32), '--json']));
  assert.equal(unknown, { hash: '0x' + 'ab'.repeat(32), state: 'unknown' });
});

S('bad input: exact messages and exit 1', async () => {
  const c = need();
  const closedPort = await freePort();
  const send = (...args: string[]) => ['tx', 'send', '--from', 'alice', '--to', TO, ...args];
  const cases: Array<{ args: string[]; code: string; message?: string; startsWith?: string; includes?: string[] }> = [
    // Parsed before any network call: the unreachable URL is never contacted.
    { args: send('--value', '0x10', '--execution-url', 'http://127.0.0.1:1'), code: 'MALFORMED_INPUT', message: 'malformed tx.Value' },
    { args: send('--value', '10000000000000000000'), code: 'INSUFFICIENT_FUNDS', message: 'insufficient balance for value + gas' },
    {
      args: send('--value', '1', '--execution-url', 'http://127.0.0.1:1'),
      code: 'UNREACHABLE',
      startsWith: 'cannot reach the execution node at http://127.0.0.1:1 (',
      includes: ['svc node execution', '--execution-url'],
    },
    {
      args: ['mempool', '--execution-url', `http://127.0.0.1:${closedPort}`],
      code: 'UNREACHABLE',
      message: `cannot reach the execution node at http://127.0.0.1:${closedPort} (connection refused): start one with \`svc node execution\`, or point --execution-url (or SVC_EXECUTION_URL) at a running node`,
    },
    { args: ['tx', 'status', '0x1234'], code: 'MALFORMED_INPUT', message: 'malformed transaction hash: expected 0x and 64 hex digits' },
    { args: ['account', '0x1234'], code: 'MALFORMED_INPUT', message: 'malformed address: expected a 0x-prefixed 20-byte hex address' },
    { args: ['account', c.wallet, '--execution-url', 'ftp://127.0.0.1/'], code: 'INVALID_URL', message: '--execution-url must be an http:// or https:// URL, got "ftp://127.0.0.1/"' },
  ];
  const results = await mapLimit(cases, 2, (k) => svc([...k.args, '--json']));
  results.forEach((r, i) => {
    const k = cases[i]!;
    try {
      expectCliError(r, { exit: 1, code: k.code, message: k.message, messageStartsWith: k.startsWith, messageIncludes: k.includes, json: true });
    } catch (err) {
      (err as Error).message = `case ${JSON.stringify(k.args)}: ${(err as Error).message}`;
      throw err;
    }
  });
  // A bad SVC_EXECUTION_URL names the variable.
  expectCliError(await svc(['mempool'], { SVC_EXECUTION_URL: 'localhost:8546' }), {
    exit: 1,
    message: 'SVC_EXECUTION_URL must be an http:// or https:// URL, got "localhost:8546"',
    json: false,
  });
});

S('svc --help lists the execution commands; each documents --json and --execution-url', async () => {
  need();
  const commands = ['account', 'faucet claim', 'mempool', 'tx send', 'tx status'];
  const [root, ...each] = await mapLimit([['--help'], ...commands.map((k) => [...k.split(' '), '--help'])], 2, (args) => svc(args));
  assert.is(root!.code, 0, root!.stderr);
  for (const k of commands) assert.match(root!.stdout, new RegExp(`^ {2}${k} {2,}\\S`, 'm'));
  assert.match(root!.stdout, /^ {2}faucet {2,}\S/m);
  each.forEach((r, i) => {
    assert.is(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`$ svc ${commands[i]}`), `${commands[i]} --help shows its usage`);
    assert.ok(r.stdout.includes('--json') && r.stdout.includes('--execution-url'), `${commands[i]} --help documents --json and --execution-url`);
  });
});

S.run();

// ---------------------------------------------------------------------------------------------
const Unit = suite('client: URL resolution, errors, token formatting');

Unit('resolveExecutionUrl: flag, then SVC_EXECUTION_URL, then the default; trailing slashes dropped', () => {
  assert.is(resolveExecutionUrl('http://node:9/', { SVC_EXECUTION_URL: 'http://env:1' }), 'http://node:9');
  assert.is(resolveExecutionUrl(undefined, { SVC_EXECUTION_URL: 'https://env.example/exec/' }), 'https://env.example/exec');
  assert.is(resolveExecutionUrl(undefined, { SVC_EXECUTION_URL: '' }), 'http://127.0.0.1:8546');
  assert.is(resolveExecutionUrl(undefined, {}), 'http://127.0.0.1:8546');
  for (const bad of ['127.0.0.1:8546', 'ws://x', 'http://u:p@x', 'http://x/?a=1', 'not a url']) {
    try {
      resolveExecutionUrl(bad, {});
      assert.unreachable(`${bad} should be refused`);
    } catch (err) {
      assert.is((err as ExecutionClientError).code, 'INVALID_URL', bad);
      assert.ok((err as Error).message.startsWith('--execution-url must be an http:// or https:// URL'), (err as Error).message);
    }
  }
});

Unit('a request past its deadline is TIMEOUT naming the node and the call', async () => {
  // A server that accepts and never answers.
  const sockets = new Set<import('node:net').Socket>();
  const srv = createServer((sock) => void sockets.add(sock));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  try {
    await new ExecutionClient(`http://127.0.0.1:${port}`, { timeoutMs: 200 }).health();
    assert.unreachable('expected a timeout');
  } catch (err) {
    assert.instance(err, ExecutionClientError);
    assert.is((err as ExecutionClientError).code, 'TIMEOUT');
    assert.is((err as Error).message, `the execution node at http://127.0.0.1:${port} did not answer GET /health within 0.2 s`);
  } finally {
    for (const sock of sockets) sock.destroy();
    await new Promise((r) => srv.close(r));
  }
});

Unit('formatTokens: 18 decimals, trailing zeros dropped', () => {
  assert.is(formatTokens(0n), '0');
  assert.is(formatTokens(FAUCET_AMOUNT), '10');
  assert.is(formatTokens('1500000000000000000'), '1.5');
  assert.is(formatTokens(1n), '0.000000000000000001');
  assert.is(formatTokens(FAUCET_AMOUNT - 1000n - 21000n * GWEI), '9.999978999999999');
});

Unit.run();
