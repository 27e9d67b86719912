/**
 * End to end: a chain whose whole genesis validator set is replaced, followed by a light client
 * and by a bridge (issue 29, docs/light-client.md "Set changes", docs/bridge.md "Set updates").
 * Two bridged devnets (A `svc-a`, B `svc-b --counterpart A`, real processes). On A:
 * - four prefunded accounts deposit a genesis validator's stake (`svc tx send` to the deposit
 *   address with their RANDAO commitment) and a second validator client runs their keys
 *   (`svc node validator --allow-non-genesis-keys`): 4 → 8 validators;
 * - the genesis validators exit two at a time (`svc tx send` to the exit address), so each
 *   change is finalised by 2/3 of the set before it: 8 → 6 → 4 active, none of genesis.
 * Then `svc light verify --genesis` walks every set change from A's genesis file and verifies the
 * latest finality and a balance; a beacon that withholds the set changes makes it fail safe,
 * naming the check. B still holds A's genesis set: a release proven by A's current set is refused
 * (BRIDGE_PROOF_INVALID naming the light-client check) until the relayer has submitted A's set
 * changes to B, in order, after which the transfer is released on B and completed on A.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toHex } from '../../src/core/codec/bytes.js';
import { DEPOSIT_ADDRESS, EXIT_ADDRESS } from '../../src/core/constants.js';
import { randaoCommitment } from '../../src/core/crypto/randao.js';
import { BridgeOp } from '../../src/core/bridge/types.js';
import { type BridgeChain, buildRelease, connectChain, submitBridgeOp, unlockSigner } from '../../src/client/bridge-ops.js';
import type { BidView } from '../../src/api/bridge.js';
import { loadGenesisFile } from '../../src/genesis/load.js';
import { DEVNET_PASSWORD } from '../../src/genesis/build.js';
import { readWallet } from '../../src/wallet/store.js';
import { unlockWallet } from '../../src/wallet/keystore.js';
import { type BridgeDevnet, startRelayer, svcJson, svcRun, withBridgeDevnets } from '../helpers/bridge-devnets.js';
import { startTamperProxy } from '../helpers/tamper-proxy.js';
import { waitFor } from '../helpers/network.js';

const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));
const TOKEN = 10n ** 18n;

async function chainOf(d: BridgeDevnet): Promise<BridgeChain> {
  return connectChain({ beaconUrl: d.beaconUrl, executionUrl: d.executionUrl, genesis: await loadGenesisFile(d.manifest.genesis) });
}

async function json(url: string): Promise<any> {
  const body = (await fetch(url).then((r) => r.json())) as { success: boolean; data: unknown };
  return body.success ? body.data : undefined;
}

/** Every set change A's beacon has recorded, oldest first (one page is enough for a handful). */
async function setChanges(d: BridgeDevnet): Promise<Array<{ epoch: number; validators: number; active_stake: string }>> {
  const page = await json(`${d.beaconUrl}/api/v1/light/set_changes?from_epoch=1`);
  return (page?.set_changes ?? []).map((c: any) => ({ epoch: c.finality.finalized.epoch, validators: c.validators, active_stake: c.active_stake }));
}

function bidStatus(d: BridgeDevnet, id: string, status: BidView['status'], ms: number): Promise<BidView> {
  return waitFor(`BID ${id.slice(0, 10)}… ${status} on ${d.chainId}`, async () => {
    const v = (await json(`${d.beaconUrl}/api/v1/bridge/bids/${id}`)) as BidView | undefined;
    return v?.status === status ? v : undefined;
  }, ms, 250);
}

test('a devnet replaces its genesis validators; the light client and the bridge follow the set changes, and refuse without them', async () => {
  await withBridgeDevnets({ validators: 4 }, async (p) => {
    const { env } = p;
    const epochMs = p.slotMs * p.slotsPerEpoch;
    // A set change needs its block finalised and a checkpoint after it: two to three epochs; allow twelve on a busy machine.
    const changeMs = 12 * epochMs + 30_000;
    const genesisA = await loadGenesisFile(p.a.manifest.genesis);
    const stake = BigInt(genesisA.validators[0]!.stake);
    const send = (from: string, to: string, value: bigint, data = '0x') => svcJson(['tx', 'send', '--from', from, '--to', to, '--value', value.toString(), '--data', data, '--wait', '--execution-url', p.a.executionUrl], env);

    // --- 4 → 8: deposits by accounts 1-4, then a validator client for their keys.
    const joiners = [1, 2, 3, 4].map((i) => p.a.account(i));
    for (const j of joiners) {
      const w = await readWallet(j.wallet);
      if (w.wallet.kind !== 'v2') throw new Error('account keystore is not v2');
      const keys = await unlockWallet(w.wallet.file, DEVNET_PASSWORD);
      const r = await send(j.wallet, DEPOSIT_ADDRESS, stake, toHex(randaoCommitment(keys.mldsaSeed, genesisA.config.randao_chain_length)));
      assert.is(r.receipt.status, 1, JSON.stringify(r));
    }
    const client: ChildProcess = spawn(process.execPath, [RUN_JS, 'node', 'validator', ...joiners.flatMap((j) => ['--keystore', j.wallet]), '--allow-non-genesis-keys', '--genesis', p.a.manifest.genesis, '--beacon-url', p.a.beaconUrl, '--token-file', p.a.manifest.validator_token_file, '--data-dir', join(p.root, 'joiners'), '--metrics-port', '0'], { env, stdio: 'ignore' });
    try {
      const active = (n: number) => (BigInt(n) * stake).toString();
      await waitFor('A records the set change to 8 validators', async () => ((await setChanges(p.a)).some((c) => c.validators === 8 && c.active_stake === active(8)) ? true : undefined), changeMs, 500);

      // --- The genesis validators exit two at a time: each change keeps 2/3 of the set before it.
      for (const [pair, left] of [[[0, 1], 6], [[2, 3], 4]] as const) {
        for (const i of pair) assert.is((await send(p.a.validatorWallet(i), EXIT_ADDRESS, 0n)).receipt.status, 1);
        await waitFor(`A records the set change to ${left} active validators`, async () => ((await setChanges(p.a)).some((c) => c.validators === 8 && c.active_stake === active(left)) ? true : undefined), changeMs, 500);
      }
      const changes = await setChanges(p.a);
      assert.ok(changes.length >= 3, JSON.stringify(changes));
      const last = changes[changes.length - 1]!;
      // Paged one at a time, the changes come back in order, each page pointing past itself.
      const paged: number[] = [];
      for (let from: number | null = 1; from !== null; ) {
        const page = await json(`${p.a.beaconUrl}/api/v1/light/set_changes?from_epoch=${from}&limit=1`);
        assert.ok(page.set_changes.length <= 1);
        paged.push(...page.set_changes.map((c: any) => c.finality.finalized.epoch));
        assert.ok(page.next_from_epoch === null || page.next_from_epoch > paged[paged.length - 1]!, JSON.stringify(page.next_from_epoch));
        from = page.next_from_epoch;
      }
      assert.equal(paged, changes.map((c) => c.epoch));
      assert.is(last.active_stake, active(4));
      // Finality goes on with none of the genesis set: a checkpoint after the last change.
      await waitFor('A finalises past the last set change', async () => ((await json(`${p.a.beaconUrl}/api/v1/light/finality_update`))?.finalized.epoch > last.epoch ? true : undefined), changeMs, 500);

      // --- The light client, from A's genesis file alone.
      const watched = p.a.account(6).address;
      const funded = BigInt((await json(`${p.a.executionUrl}/api/v1/accounts/${watched}`)).balance);
      const verify = (beacon: string) => svcRun(['light', 'verify', '--genesis', p.a.manifest.genesis, '--beacon', beacon, '--account', watched, '--json'], env);
      const r = await verify(p.a.beaconUrl);
      assert.is(r.code, 0, r.stderr);
      const v = JSON.parse(r.stdout);
      assert.is(v.setChanges, changes.length, 'every recorded change was followed');
      assert.ok(v.finalized.epoch > last.epoch);
      assert.is(BigInt(v.account.balance), funded);
      // A beacon that withholds the set changes: the latest finality is framed on a set the client never learnt.
      const withholding = await startTamperProxy(p.a.beaconUrl, (path, data) => (path.endsWith('/light/set_changes') ? { set_changes: [], next_from_epoch: null } : data));
      try {
        const refused = await verify(withholding.url);
        assert.is(refused.code, 1, refused.stdout);
        assert.match(refused.stderr, /LIGHT_NONCANONICAL|LIGHT_UNKNOWN_SIGNER|LIGHT_INSUFFICIENT_STAKE/);
      } finally {
        await withholding.close();
      }

      // --- The bridge: B still holds A's genesis set.
      const A = await chainOf(p.a);
      const B = await chainOf(p.b);
      const recipient = p.b.account(7).address;
      const recipientBefore = BigInt((await json(`${p.b.executionUrl}/api/v1/accounts/${recipient}`)).balance);
      const lock = await svcJson(['bridge', 'send', '--on', p.a.dir, '--from', p.a.account(0).wallet, '--to', recipient, '--amount', '3', '--chain', 'svc-b', '--timeout', '20m', '--wait'], env);
      const finalized = await bidStatus(p.a, lock.bid, 'FINALIZED', changeMs);
      // Its BID signatures come from the validators that joined (the genesis ones are inactive).
      const { body } = await buildRelease(A.beacon, finalized);
      assert.ok(body.signatures.length >= 3 && body.signatures.every((s) => s.validatorIndex >= 4), JSON.stringify(body.signatures.map((s) => s.validatorIndex)));
      const relayerB = await unlockSigner(p.b.account(1).wallet, async () => DEVNET_PASSWORD);
      try {
        await submitBridgeOp(B, relayerB, { op: BridgeOp.Release, body });
        assert.unreachable('B released a BID proven by a set it does not hold');
      } catch (err) {
        const e = err as { code?: string; message?: string };
        assert.is(e.code, 'BRIDGE_PROOF_INVALID', e.message);
        assert.match(e.message ?? '', /LIGHT_NONCANONICAL|LIGHT_UNKNOWN_SIGNER|LIGHT_INSUFFICIENT_STAKE/);
      }
      const heldBefore = (await json(`${p.b.beaconUrl}/api/v1/bridge/counterparts`)).counterparts.find((c: any) => c.chain_id === 'svc-a');
      assert.is(heldBefore.set_epoch, 0);
      assert.is(heldBefore.validators, 4);

      // The relayer brings B's set for A up to date, one change at a time, then releases and completes.
      const relayer = startRelayer(['--from', p.b.account(1).wallet, '--source-from', p.a.account(5).wallet, '--source', p.a.dir, '--dest', p.b.dir], env);
      try {
        await bidStatus(p.a, lock.bid, 'COMPLETED', changeMs + changes.length * 10 * p.slotMs);
        const updates = relayer.actions.filter((a) => a.action === 'included' && a.op === 'update_set' && a.chain === 'svc-b');
        assert.equal(updates.map((a) => [a.epoch, a.ok]), changes.map((c) => [c.epoch, true]), JSON.stringify(relayer.actions));
        assert.is(BigInt((await json(`${p.b.executionUrl}/api/v1/accounts/${recipient}`)).balance), recipientBefore + 3n * TOKEN);
        const held = (await json(`${p.b.beaconUrl}/api/v1/bridge/counterparts`)).counterparts.find((c: any) => c.chain_id === 'svc-a');
        assert.equal([held.set_epoch, held.validators, held.active_stake], [last.epoch, 8, active(4)]);
      } finally {
        assert.is(await relayer.stop(), 0, relayer.stderr());
      }
    } finally {
      if (client.exitCode === null) client.kill('SIGTERM');
      await new Promise((r) => (client.exitCode !== null ? r(undefined) : client.once('exit', r)));
    }
  });
});

test.run();
