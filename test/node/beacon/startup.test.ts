/**
 * Beacon start-up against an execution node that is not up yet: it waits (a devnet starts both
 * together), serves once execution answers, and gives up with EXECUTION_UNREACHABLE after its
 * deadline, releasing its database. With P2P, the REST port listens before the P2P host does, and
 * a P2P host that cannot start closes the REST port and the database again.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createTcpServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRESETS } from '../../../src/core/genesis/genesis.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { ExecutionNode } from '../../../src/node/execution/node.js';
import { type Logger, silentLogger } from '../../../src/util/log.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import { freePort, waitFor } from '../../helpers/network.js';

const genesis = buildGenesis({
  validators: 2,
  accounts: 1,
  preset: 'devnet',
  chainId: 'svc-startup',
  networkId: 31339,
  genesisTime: Math.floor(Date.now() / 1000) - 4 * PRESETS.devnet.slot_seconds,
  mnemonic: DEV_MNEMONIC,
}).genesis;

/** A logger that records messages. */
function recorder(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const rec = (msg: string) => void messages.push(msg);
  return { messages, debug: rec, info: rec, warn: rec, error: rec };
}

test('the beacon waits for an execution node that starts after it, then serves', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-startup-'));
  const port = await freePort();
  const log = recorder();
  let exec: ExecutionNode | undefined;
  let beacon: BeaconNode | undefined;
  try {
    const starting = BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: `http://127.0.0.1:${port}`, log, executionWaitMs: 20_000 });
    await waitFor('the beacon to say it waits', async () => (log.messages.includes('waiting for the execution node') ? true : undefined), 10_000, 20);
    exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: port, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    beacon = await starting;
    const health = (await (await fetch(`${beacon.url}/beacon/v1/node/health`)).json()) as { status: string; validators: number };
    assert.is(health.status, 'healthy');
    assert.is(health.validators, 2);
  } finally {
    await beacon?.stop();
    await exec?.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('no execution node within the deadline: EXECUTION_UNREACHABLE, and the database is released', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-startup-'));
  const port = await freePort();
  const options = { genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: `http://127.0.0.1:${port}`, log: silentLogger, executionWaitMs: 300 };
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      // A second attempt on the same data directory would fail to open LevelDB if the first leaked it.
      const err = await BeaconNode.start(options).then(
        (b) => (void b.stop(), undefined),
        (e: { code?: string }) => e,
      );
      assert.ok(err, 'start must fail');
      assert.is(err!.code, 'EXECUTION_UNREACHABLE');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Whether a TCP connection to 127.0.0.1:`port` is accepted (false: refused). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('with P2P, the REST port already accepts connections when the node logs p2p listening', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-startup-'));
  const port = await freePort();
  let exec: ExecutionNode | undefined;
  let beacon: BeaconNode | undefined;
  // Asked at the moment the P2P host announces itself, as a client that found the node on the
  // network would (it was refused for ~30 ms when P2P started first).
  let probe: Promise<boolean> | undefined;
  const log: Logger = { ...silentLogger, info: (msg: string) => void (msg === 'p2p listening' && (probe ??= accepts(port))) };
  try {
    exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port, executionUrl: exec.restUrl, log, p2p: { host: '127.0.0.1', port: 0, bootnodes: [] } });
    assert.ok(probe, 'the P2P host logged p2p listening');
    assert.is(await probe, true, 'REST accepted a connection at p2p listening');
    const peers = (await (await fetch(`${beacon.url}/api/v1/p2p/peers`)).json()) as { peers: unknown[]; note?: string };
    assert.equal(peers, { peers: [] }, 'P2P on (no "P2P is off" note), no peer yet');
  } finally {
    await beacon?.stop();
    await exec?.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a P2P host that cannot start after REST listens: the error, the REST port closed, the database released', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-startup-'));
  const port = await freePort();
  const taken = createTcpServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const p2pPort = (taken.address() as { port: number }).port;
  let exec: ExecutionNode | undefined;
  let beacon: BeaconNode | undefined;
  try {
    exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
    const options = { genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port, executionUrl: exec.restUrl, log: silentLogger };
    const err = await BeaconNode.start({ ...options, p2p: { host: '127.0.0.1', port: p2pPort, bootnodes: [] } }).then(
      (b) => (void b.stop(), undefined),
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error, 'start must fail while the P2P port is taken');
    assert.is(await accepts(port), false, 'the REST port is closed again');
    // The same data directory and REST port start cleanly: nothing was leaked.
    beacon = await BeaconNode.start(options);
    assert.is(beacon.url, `http://127.0.0.1:${port}`);
  } finally {
    await beacon?.stop();
    await exec?.stop();
    await new Promise((resolve) => taken.close(resolve));
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
