/**
 * Beacon start-up against an execution node that is not up yet: it waits (a devnet starts both
 * together), serves once execution answers, and gives up with EXECUTION_UNREACHABLE after its
 * deadline, releasing its database.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
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

test.run();
