/**
 * HTTP requests per proposed block, counted by proxies on both links of a real chain (execution,
 * beacon, and a validator client holding every key): the validator asks the beacon for the block
 * and posts it signed (2 requests; it knows no execution URL and holds no engine credentials), and the
 * beacon asks execution for the payload and has it import the block (2 requests; no registry
 * re-read after a block that changed nothing, and no forkchoiceUpdated for a block execution
 * already made its head). Waits for observable conditions (blocks proposed), with a deadline of
 * many slots; the counts do not depend on timing.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ValidatorClient } from '../../../src/node/validator/client.js';
import { SlashingProtectionDb } from '../../../src/node/validator/slashing/protection.js';
import { captureLog } from '../../helpers/log.js';
import { startCountingProxy, type CountingProxy } from '../../helpers/counting-proxy.js';
import { waitFor } from '../../helpers/network.js';
import { type Harness, randaoChain, startHarness, stopHarness } from '../beacon/fixture.js';

/** Blocks to propose before counting. */
const BLOCKS = 4;

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

test('per proposed block: 2 requests from the validator (none to execution), 2 between beacon and execution', async () => {
  let engine: CountingProxy | undefined;
  const h: Harness = await startHarness({
    validators: 2,
    slotsAgo: 1,
    engineUrl: async (restUrl) => {
      engine = await startCountingProxy(restUrl);
      return engine.url;
    },
  });
  const toBeacon = await startCountingProxy(h.beacon.url);
  const sp = await SlashingProtectionDb.open({ memory: true });
  const { log, lines } = captureLog();
  const client = new ValidatorClient({
    genesis: h.genesis,
    keys: h.validators,
    beaconUrl: toBeacon.url,
    token: h.token,
    slashingDb: sp,
    log,
    randaoChain: h.validators.map((_, i) => randaoChain(h, i)),
  });
  const slotMs = h.genesis.config.slot_seconds * 1000;
  try {
    // What the beacon asked of execution while starting (registry, configuration) is not a block's.
    const registryAtStart = engine!.count(/^GET \/api\/v1\/engine\/registry$/);
    await client.start();
    await waitFor('blocks proposed', async () => ((metric(await client.metrics.text(), 'service_validator_blocks_proposed_total')) >= BLOCKS ? true : undefined), 40 * slotMs);
    await client.stop();
    const proposed = metric(await client.metrics.text(), 'service_validator_blocks_proposed_total');
    const e = engine!;

    // The validator: the template and the signed block, nothing else for a proposal.
    const templates = toBeacon.count(/^GET \/api\/v1\/validator\/blocks\/\d+$/);
    const posts = toBeacon.count(/^POST \/api\/v1\/validator\/blocks\/propose$/);
    assert.is(posts, proposed, 'one POST per proposed block');
    assert.is(templates, proposed, `one template per proposed block (${JSON.stringify(lines.filter((l) => l.msg.startsWith('not proposing')))})`);
    assert.is(toBeacon.count(/block_attestations|\/api\/v1\/blocks\//), 0, 'no packing requests from the validator');

    // Beacon and execution: the payload and the import.
    assert.is(e.count(/^GET \/api\/v1\/engine\/getPayload$/), proposed, 'one getPayload per block');
    assert.is(e.count(/^POST \/api\/v1\/engine\/newPayload$/), proposed, 'one newPayload per block');
    assert.is(e.count(/getPendingTransactions|^GET \/api\/v1\/blocks\//), 0, 'no separate pending-transaction or state-root reads');
    assert.is(e.count(/^GET \/api\/v1\/engine\/registry$/) - registryAtStart, 0, 'no registry re-read after blocks that changed nothing');
    // Every block extends the head execution already has; only a finality move needs a forkchoiceUpdated.
    const finalized = (await (await fetch(`${h.beacon.url}/api/v1/beacon/finality_checkpoints`)).json()) as { data: { finalized: { epoch: number } } };
    const fcu = e.count(/^POST \/api\/v1\/engine\/forkchoiceUpdated$/);
    assert.ok(fcu <= finalized.data.finalized.epoch, `${fcu} forkchoiceUpdated for ${finalized.data.finalized.epoch} finality moves at most`);
    const perBlock = (e.count(/getPayload|newPayload|engine\/registry/) - registryAtStart) / proposed;
    console.log(`requests per proposed block over ${proposed} blocks: validator→beacon ${(templates + posts) / proposed}, beacon→execution ${perBlock} (+ ${fcu} forkchoiceUpdated for finality, ${e.count(/engine\/config/)} per-slot chain checks)`);
  } finally {
    await client.stop().catch(() => undefined);
    await sp.close();
    await toBeacon.close();
    await stopHarness(h);
    await engine?.close();
  }
});

test.run();
