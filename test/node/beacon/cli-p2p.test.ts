/**
 * `svc node beacon`'s P2P flags through the real CLI: a busy --p2p-port is one clear error line
 * and exit 1 (and leaves the data directory usable), a bad --bootnodes entry is a usage error
 * (exit 2), and the beacon logs `p2p listening` with its peer id, which survives a restart
 * because the key is kept in the data directory.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGenesisFile } from '../../../src/genesis/load.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import { silentLogger } from '../../../src/util/log.js';
import { cliEnv, RUN_JS, runCli } from '../../helpers/cli.js';

interface Ctx {
  dir?: string;
  exec?: ExecutionNode;
  genesisFile?: string;
  env?: Record<string, string>;
  startError?: unknown;
}

const cli = suite<Ctx>('svc node beacon: P2P flags', {});
/** Start-up of a CLI beacon (genesis load, execution check, P2P host) on a busy 2-core machine. */
const START_MS = 60_000;

cli.before(async (ctx) => {
  try {
    ctx.dir = await mkdtemp(join(tmpdir(), 'svc-beacon-cli-p2p-'));
    ctx.env = cliEnv(ctx.dir);
    const r = await runCli(['genesis', 'new', '--validators', '1', '--accounts', '1', '--out', join(ctx.dir, 'net'), '--json'], ctx.env);
    assert.is(r.code, 0, r.stderr);
    ctx.genesisFile = join(ctx.dir, 'net', 'genesis.json');
    ctx.exec = await ExecutionNode.start({ genesis: await loadGenesisFile(ctx.genesisFile), host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
  } catch (err) {
    ctx.startError = err;
  }
});

cli.after(async (ctx) => {
  await ctx.exec?.stop().catch(() => undefined);
  if (ctx.dir) await rm(ctx.dir, { recursive: true, force: true });
});

function need(ctx: Ctx): Required<Omit<Ctx, 'startError'>> {
  if (!ctx.dir || !ctx.exec || !ctx.genesisFile || !ctx.env) throw ctx.startError ?? new Error('not started');
  return ctx as Required<Omit<Ctx, 'startError'>>;
}

const beaconArgs = (c: Required<Omit<Ctx, 'startError'>>, extra: string[]): string[] => [
  'node', 'beacon', '--genesis', c.genesisFile, '--data-dir', join(c.dir, 'beacon'), '--port', '0', '--execution-url', c.exec.restUrl, '--p2p-host', '127.0.0.1', ...extra,
];

/** Runs a beacon until it logs `p2p listening`, returns that line, then stops it with SIGTERM. */
async function listeningLine(args: string[], env: Record<string, string>): Promise<{ peer_id: string; addrs: string[] }> {
  const child = spawn(process.execPath, [RUN_JS, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const closed = new Promise((r) => child.once('close', r));
  try {
    const deadline = Date.now() + START_MS;
    for (;;) {
      const line = log
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; peerId?: string; peer_id?: string; addrs?: string[] })
        .find((l) => l.msg === 'p2p listening');
      if (line) return { peer_id: (line.peer_id ?? line.peerId)!, addrs: line.addrs! };
      if (child.exitCode !== null) throw new Error(`beacon exited ${child.exitCode}: ${log.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`no 'p2p listening' line: ${log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await closed;
  }
}

cli('a busy --p2p-port is one clear error and exit 1; the data directory stays usable', async (ctx) => {
  const c = need(ctx);
  const busy: Server = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as { port: number }).port;
  try {
    const r = await runCli(beaconArgs(c, ['--p2p-port', String(port)]), c.env);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`Error: beacon P2P port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.match(r.stderr, /--p2p-port/);
  } finally {
    await new Promise((r) => busy.close(r));
  }
});

cli('a malformed --bootnodes entry is a usage error (exit 2) naming the flag', async (ctx) => {
  const c = need(ctx);
  const r = await runCli(beaconArgs(c, ['--p2p-port', '0', '--bootnodes', '/ip4/127.0.0.1/tcp/9000']), c.env);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--bootnodes: "\/ip4\/127\.0\.0\.1\/tcp\/9000" is not a multiaddr/);
});

cli('the beacon logs p2p listening with its peer id, and keeps that id across restarts', async (ctx) => {
  const c = need(ctx);
  const first = await listeningLine(beaconArgs(c, ['--p2p-port', '0']), c.env);
  assert.match(first.peer_id, /^12D3KooW/);
  assert.ok(first.addrs.some((a) => a.startsWith('/ip4/127.0.0.1/tcp/') && a.endsWith(`/p2p/${first.peer_id}`)), JSON.stringify(first.addrs));
  const second = await listeningLine(beaconArgs(c, ['--p2p-port', '0']), c.env);
  assert.is(second.peer_id, first.peer_id);
});

cli.run();
