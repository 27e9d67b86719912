/**
 * End to end, with real processes: an attestation the beacon acknowledged survives a SIGKILL of
 * the beacon right after the acknowledgement. After the restart the vote is the validator's
 * latest message in fork choice (GET /api/v1/validators/:id latest_vote; re-sending it is a
 * duplicate) and it is offered to the next proposer for inclusion
 * (GET /api/v1/validator/block_attestations), which is where its reward is earned.
 *
 * No validator processes run: the test signs the one attestation itself with a key derived from
 * the genesis mnemonic, so nothing else can vote for that validator. Deadlines
 * come from the genesis slot time, with generous margins for a busy machine.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseHex } from '../../src/core/codec/bytes.js';
import { PRESETS } from '../../src/core/genesis/genesis.js';
import { attestationToJson, signAttestation } from '../../src/core/types/attestation.js';
import { buildGenesis } from '../../src/genesis/build.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath } from '../../src/wallet/derivation.js';
import { getJson, withDevnet } from '../helpers/network.js';

const VALIDATORS = 4;
/** The validator whose vote is followed (any of the four). */
const ATTESTER = 2;
/**
 * A vote is includable in its target epoch and the next. The beacon's restart takes a few slots on
 * a loaded machine, so the epochs are long enough that the vote is still includable after it: the
 * durability of the vote is under test, not the inclusion window (the devnet preset has 2-slot epochs).
 */
const SLOTS_PER_EPOCH = 8;

test('SIGKILL right after the beacon acknowledges an attestation: the vote survives and is offered for inclusion', async () => {
  await withDevnet({ validators: VALIDATORS }, async (d) => {
    // Replace the generated genesis by one whose keys the test can derive (same shape).
    const genesis = buildGenesis({
      validators: VALIDATORS,
      accounts: 1,
      preset: 'devnet',
      chainId: 'svc-attcrash',
      networkId: 31340,
      genesisTime: Math.floor(Date.now() / 1000) - PRESETS.devnet.slot_seconds,
      mnemonic: DEV_MNEMONIC,
      timing: { slotsPerEpoch: SLOTS_PER_EPOCH },
    }).genesis;
    await writeFile(d.genesisPath, JSON.stringify(genesis, null, 2) + '\n');
    d.genesis = JSON.parse(await readFile(d.genesisPath, 'utf8'));
    const key = deriveWalletKeys(mnemonicToSeed(DEV_MNEMONIC), walletPath(Branch.Validators, ATTESTER));
    assert.is(key.address, genesis.validators[ATTESTER]!.address);

    await d.startExecution();
    await d.startBeacon();
    const token = (await readFile(join(d.net, 'beacon', 'validator-token'), 'utf8')).trim();

    const slot = d.slotNow();
    const data = (await getJson(`${d.beaconUrl}/api/v1/validator/attestation_data?slot=${slot}`)).data;
    const att = signAttestation(
      ATTESTER,
      {
        slot: data.slot,
        beaconBlockRoot: parseHex(data.beacon_block_root, 'beacon_block_root', 32),
        source: { epoch: data.source.epoch, root: parseHex(data.source.root, 'source.root', 32) },
        target: { epoch: data.target.epoch, root: parseHex(data.target.root, 'target.root', 32) },
      },
      key.mldsa,
      genesis.chain_id,
    );
    const body = JSON.stringify(attestationToJson(att));
    const post = () => fetch(`${d.beaconUrl}/api/v1/attestation`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body, signal: AbortSignal.timeout(10_000) });
    const ack = await post();
    const ackBody = (await ack.json()) as { success: boolean; data: { status: string } };
    // Killed before anything else happens: no slot tick, no clean shutdown.
    await d.kill('beacon');
    assert.is(ack.status, 200, JSON.stringify(ackBody));
    assert.is(ackBody.data.status, 'applied');

    await d.startBeacon();
    const target = data.target as { epoch: number; root: string };
    const v = (await getJson(`${d.beaconUrl}/api/v1/validators/${ATTESTER}`)).data;
    assert.equal(v.latest_vote, { root: data.beacon_block_root, epoch: target.epoch }, 'the vote is the latest message in fork choice after the restart');
    // Almost always from the journal; a slot tick between the answer and the kill would have put it in the snapshot instead.
    const replayed = d.log('beacon').find((l) => l.msg === 'attestations re-applied from the journal');
    process.stderr.write(`[attestation-crash] restored from ${replayed ? `the journal (${replayed.applied} re-applied)` : 'the slot snapshot'}\n`);

    // Its reward is earned when a block includes it: the restarted beacon offers it to the next
    // proposer (the journal keeps a vote until no block can include it, and the pool is rebuilt
    // from the journal, whether or not a slot snapshot came between the answer and the kill).
    const next = d.slotNow() + 1;
    const r = await fetch(`${d.beaconUrl}/api/v1/validator/block_attestations?slot=${next}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
    const offered = ((await r.json()) as { data: { attestations: unknown[] } }).data.attestations;
    assert.equal(offered, [attestationToJson(att)], 'the vote is offered for inclusion in the next block');

    // Fork choice holds the vote: sending it again is a duplicate, not a new vote.
    const again = await post();
    assert.is(again.status, 200);
    assert.is(((await again.json()) as { data: { status: string } }).data.status, 'duplicate');
  });
});

test.run();
