/**
 * The P2P flags of `svc node execution` and `svc node all` on real processes: port allocation and
 * clashes, bad bootnodes, a busy port at start-up, and two execution processes joined by
 * `--bootnodes` gossiping a faucet transfer. Tests in this file share one genesis.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliResult, RUN_JS, cliEnv, expectCliError, expectJsonOk, runCli } from '../helpers/cli.js';
import { freePort, getJson, waitFor } from '../helpers/network.js';

let dir: string | undefined;
let genesisPath = '';
let slotMs = 0;
const children: ChildProcess[] = [];

const need = (): string => {
  if (!dir) throw new Error('set-up did not run');
  return dir;
};

/** Holds a loopback port open so a node cannot bind it. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { port: (server.address() as { port: number }).port, server };
}

/** The last stderr line of a failed start (the node logs JSON lines before it), which must be the error. */
function startFailure(r: CliResult, exit: number): string {
  assert.is(r.code, exit, `expected exit ${exit}, got ${r.code}\n--- stderr\n${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  const last = lines[lines.length - 1]!;
  assert.ok(last.startsWith('Error: '), `the last stderr line is the error: ${r.stderr}`);
  return last.slice('Error: '.length);
}

/** A long-running node process whose JSON log lines are collected. */
function spawnNode(args: string[]): { child: ChildProcess; lines: () => Array<Record<string, unknown>>; output: () => string } {
  const child = spawn(process.execPath, [RUN_JS, ...args], { env: cliEnv(need()), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, lines, output: () => out };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const S = suite('cli: P2P flags of svc node execution and svc node all');

// Should the test runner itself die, do not leave nodes behind.
process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));

S.after(async () => {
  for (const c of children) await stop(c);
  if (dir) await rm(dir, { recursive: true, force: true });
});

S('set-up: a devnet genesis with its keystores', async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-p2p-cli-'));
  const net = join(dir, 'net');
  expectJsonOk(await runCli(['genesis', 'new', '--validators', '1', '--out', net, '--kdf-memory', '256', '--json'], cliEnv(dir)));
  genesisPath = join(net, 'genesis.json');
  slotMs = (JSON.parse(await readFile(genesisPath, 'utf8')) as { config: { slot_seconds: number } }).config.slot_seconds * 1000;
});

S('svc node all: equal beacon and execution P2P ports are a usage error naming both flags (exit 2), also against the default', async () => {
  const d = need();
  const [explicit, defaulted] = await Promise.all([
    runCli(['node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-x'), '--p2p-port', '9300', '--execution-p2p-port', '9300'], cliEnv(d)),
    runCli(['node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-y'), '--execution-p2p-port', '9000'], cliEnv(d)),
  ]);
  expectCliError(explicit, {
    exit: 2,
    json: false,
    message: '--p2p-port (beacon) and --execution-p2p-port are both 9300: execution and beacon each run a libp2p host and need distinct ports',
  });
  expectCliError(defaulted, { exit: 2, json: false, messageIncludes: ['--p2p-port (beacon) and --execution-p2p-port are both 9000'] });
});

S('a bootnode that is not a multiaddr with a peer id is a usage error naming its flag (exit 2)', async () => {
  const d = need();
  const [exec, all] = await Promise.all([
    runCli(['node', 'execution', '--genesis', genesisPath, '--data-dir', join(d, 'exec-x'), '--bootnodes', '/ip4/127.0.0.1/tcp/9000'], cliEnv(d)),
    runCli(['node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-z'), '--execution-bootnodes', 'enode://abc@127.0.0.1:30303'], cliEnv(d)),
  ]);
  expectCliError(exec, { exit: 2, json: false, message: '--bootnodes: "/ip4/127.0.0.1/tcp/9000" is not a multiaddr like /ip4/10.0.0.1/tcp/9000/p2p/<peer id>' });
  expectCliError(all, { exit: 2, json: false, messageStartsWith: '--execution-bootnodes: "enode://abc@127.0.0.1:30303" is not a multiaddr' });
});

S('a P2P port in use stops svc node execution and svc node all at start-up with exit 1, naming the port', async () => {
  const d = need();
  const busy = await occupy();
  try {
    const exec = await runCli(
      ['node', 'execution', '--genesis', genesisPath, '--data-dir', join(d, 'exec-busy'), '--rest-port', String(await freePort()), '--rpc-port', String(await freePort()), '--p2p-host', '127.0.0.1', '--p2p-port', String(busy.port), '--verifier-threads', '1'],
      cliEnv(d),
    );
    assert.match(startFailure(exec, 1), `execution P2P port ${busy.port} on 127.0.0.1 is already in use`);
    const all = await runCli(
      [
        'node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-busy'),
        '--rest-port', String(await freePort()), '--rpc-port', String(await freePort()), '--beacon-port', String(await freePort()),
        '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--execution-p2p-port', String(busy.port),
      ],
      cliEnv(d),
    );
    assert.match(startFailure(all, 1), `execution P2P port ${busy.port} on 127.0.0.1 is already in use`);
    // The beacon starts after execution: execution is stopped again and the process exits.
    const beacon = await runCli(
      [
        'node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-busy-beacon'),
        '--rest-port', String(await freePort()), '--rpc-port', String(await freePort()), '--beacon-port', String(await freePort()),
        '--p2p-host', '127.0.0.1', '--p2p-port', String(busy.port), '--execution-p2p-port', '0',
      ],
      cliEnv(d),
    );
    assert.match(startFailure(beacon, 1), `beacon P2P port ${busy.port} on 127.0.0.1 is already in use`);
  } finally {
    busy.server.close();
  }
});

/** A port that is free with the one after it (for the default execution port, --p2p-port + 1). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const next = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      next.once('error', () => resolve(false));
      next.listen(port + 1, '127.0.0.1', () => next.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

S('svc node all runs both hosts: the beacon on --p2p-port, execution on the next port by default', async () => {
  const d = need();
  const port = await freePortPair();
  const node = spawnNode([
    'node', 'all', '--genesis', genesisPath, '--data-dir', join(d, 'all-ok'),
    '--rest-port', String(await freePort()), '--rpc-port', String(await freePort()), '--beacon-port', String(await freePort()),
    '--p2p-host', '127.0.0.1', '--p2p-port', String(port),
  ]);
  try {
    const started = await waitFor('all layers started', async () => node.lines().find((l) => l.msg === 'all layers started') ?? (node.child.exitCode !== null ? Promise.reject(new Error(`exited: ${node.output()}`)) : undefined), 20 * slotMs);
    assert.ok((started.beacon_p2p as string[]).some((a) => a.startsWith(`/ip4/127.0.0.1/tcp/${port}/p2p/`)), `beacon on ${port}: ${JSON.stringify(started)}`);
    assert.ok((started.execution_p2p as string[]).some((a) => a.startsWith(`/ip4/127.0.0.1/tcp/${port + 1}/p2p/`)), `execution on ${port + 1}: ${JSON.stringify(started)}`);
    const beaconId = (started.beacon_p2p as string[])[0]!.split('/p2p/')[1];
    const executionId = (started.execution_p2p as string[])[0]!.split('/p2p/')[1];
    assert.is.not(beaconId, executionId, 'each host has its own identity (its own data directory)');
  } finally {
    await stop(node.child);
  }
});

S('two svc node execution processes joined by --bootnodes: peers 1 each, a faucet transfer on one reaches the other\'s mempool and survives its SIGKILL', async () => {
  const d = need();
  const ports = { aRest: await freePort(), aRpc: await freePort(), bRest: await freePort(), bRpc: await freePort() };
  const base = (name: string, rest: number, rpc: number) => ['node', 'execution', '--genesis', genesisPath, '--data-dir', join(d, name), '--rest-port', String(rest), '--rpc-port', String(rpc), '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--verifier-threads', '1'];
  const a = spawnNode(base('exec-a', ports.aRest, ports.aRpc));
  const started = (n: typeof a) => n.lines().find((l) => l.msg === 'execution node started');
  const deadline = 20 * slotMs;
  const aStarted = await waitFor('node A to start', async () => started(a) ?? (a.child.exitCode !== null ? Promise.reject(new Error(`A exited: ${a.output()}`)) : undefined), deadline);
  const listening = a.lines().find((l) => l.msg === 'p2p listening');
  assert.ok(listening, 'A logs p2p listening');
  const addrs = aStarted.p2p as string[];
  assert.equal(addrs, listening!.addrs, 'the start-up line carries the same multiaddrs');
  assert.is(aStarted.peers, 0);
  const b = spawnNode([...base('exec-b', ports.bRest, ports.bRpc), '--bootnodes', addrs[0]!]);
  const aUrl = `http://127.0.0.1:${ports.aRest}`;
  const bUrl = `http://127.0.0.1:${ports.bRest}`;
  await waitFor('A and B to report one peer each', async () => ((await getJson(`${aUrl}/health`)).peers === 1 && (await getJson(`${bUrl}/health`)).peers === 1 ? true : undefined), deadline);
  const metrics = await (await fetch(`${bUrl}/metrics`)).text();
  assert.match(metrics, /^service_execution_peer_count 1$/m);

  const claim = await fetch(`${aUrl}/api/v1/faucet/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: '0x00000000000000000000000000000000000000aa' }) });
  assert.is(claim.status, 200, await claim.clone().text());
  const { tx_hash } = (await claim.json()) as { tx_hash: string };
  const inB = async () => ((await getJson(`${bUrl}/api/v1/execution/mempool`)).transactions as Array<{ hash: string }>).some((t) => t.hash === tx_hash) || undefined;
  await waitFor('the faucet transfer in B\'s mempool', inB, deadline);
  // Accepted is counted once the journal entry is synced: from then on a SIGKILL loses nothing.
  const acceptedByB = async () =>
    (await (await fetch(`${bUrl}/metrics`)).text()).split('\n').some((l) => l.startsWith('service_execution_gossip_transactions_total{') && l.includes('verdict="accept"') && l.endsWith(' 1')) || undefined;
  await waitFor('B to accept it', acceptedByB, deadline);
  const bId = started(b)!.peer_id;
  const killed = new Promise<void>((r) => b.child.once('exit', () => r()));
  b.child.kill('SIGKILL');
  await killed;
  const b2 = spawnNode([...base('exec-b', ports.bRest, ports.bRpc), '--bootnodes', addrs[0]!]);
  await waitFor('B to restart', async () => started(b2), deadline);
  assert.is(started(b2)!.peer_id, bId, 'B keeps its peer id');
  assert.ok(await inB(), 'the gossip-admitted transfer survived SIGKILL (pool journal)');
  await waitFor('B to reconnect to A', async () => ((await getJson(`${bUrl}/health`)).peers === 1 ? true : undefined), deadline);
  await Promise.all([stop(a.child), stop(b2.child)]);
});

S.run();
