/**
 * The attestation journal's bookkeeping (the crash itself is test/e2e/attestation-crash): an
 * accepted attestation is journaled before it is answered and retired by the next slot's
 * fork-choice snapshot, so storage does not grow with the number of votes; a refused or
 * duplicate one is not journaled. Across a restart the vote stays the validator's latest
 * message, and a conflicting vote is still recognised as a double vote.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { type AttestationData, attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { silentLogger } from '../../../src/util/log.js';
import { waitFor } from '../../helpers/network.js';
import { expectEnvelope } from '../execution/fixture.js';
import { type Harness, beaconMetrics, bget, bpost, currentSlot, okData, sample, startHarness, stopHarness } from './fixture.js';

const ATTEST = '/api/v1/attestation';
const JOURNAL = 'service_beacon_attestation_journal_entries';

/** The vote validator `i` would cast now, as the beacon describes it. */
async function voteNow(h: Harness): Promise<AttestationData> {
  const d = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${currentSlot(h)}`));
  return {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
}

test('journaled while it can be included, kept across a restart (fork choice and the proposer pool), refused and duplicate votes not journaled', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 6 });
  const slotMs = h.genesis.config.slot_seconds * 1000;
  const journal = async () => sample(await beaconMetrics(h), JOURNAL);
  try {
    const data = await voteNow(h);
    const good = signAttestation(0, data, h.validators[0]!.mldsa, h.genesis.chain_id);
    assert.equal(okData(await bpost(h, ATTEST, attestationToJson(good))), { status: 'applied' });
    assert.is(await journal(), 1);
    const bad = { ...good, signature: signAttestation(0, data, h.validators[1]!.mldsa, h.genesis.chain_id).signature };
    expectEnvelope(await bpost(h, ATTEST, attestationToJson(bad)), 400, 'INVALID_SIGNATURE');
    assert.equal(okData(await bpost(h, ATTEST, attestationToJson(good))), { status: 'duplicate' });
    assert.is(await journal(), 1, 'neither a refused nor a duplicate vote is journaled');

    // A clean restart on the same data directory.
    const dataDir = join(h.dir, 'beacon');
    await h.beacon.stop();
    h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir, host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
    const v = okData(await bget(h, '/api/v1/validators/0'));
    assert.equal(v.latest_vote, { root: attestationToJson(good).data.beacon_block_root, epoch: data.target.epoch });
    assert.equal(okData(await bpost(h, ATTEST, attestationToJson(good))), { status: 'duplicate' });
    const conflicting = signAttestation(0, { ...data, beaconBlockRoot: new Uint8Array(32).fill(7) }, h.validators[0]!.mldsa, h.genesis.chain_id);
    expectEnvelope(await bpost(h, ATTEST, attestationToJson(conflicting)), 409, 'SLASHABLE_ATTESTATION');
    // Still offered to the next proposer after the restart (slot snapshots in between or not).
    const offered = okData(await bget(h, `/api/v1/validator/block_attestations?slot=${currentSlot(h) + 1}`, { authorization: `Bearer ${h.token}` }));
    assert.equal(offered.attestations, [attestationToJson(good)]);
    // Retired once no block can include it: from epoch target + 2 on (by the chain's clock, with margin).
    const spe = h.genesis.config.slots_per_epoch;
    const retiredByMs = (h.genesis.genesis_time * 1000 + (data.target.epoch + 2) * spe * slotMs) - Date.now();
    await waitFor('the journal entry to be retired', async () => ((await journal()) === 0 ? true : undefined), Math.max(0, retiredByMs) + 3 * slotMs + 10_000, 100);
    const later = okData(await bget(h, `/api/v1/validator/block_attestations?slot=${currentSlot(h) + 1}`, { authorization: `Bearer ${h.token}` }));
    assert.equal(later.attestations, [], 'and dropped from the pool');
  } finally {
    await stopHarness(h);
  }
});

test('concurrent attestations are all acknowledged and all survive a restart', async () => {
  const h = await startHarness({ validators: 6, slotsAgo: 6 });
  try {
    const data = await voteNow(h);
    const atts = h.validators.map((k, i) => signAttestation(i, data, k.mldsa, h.genesis.chain_id));
    const answers = await Promise.all(atts.map((a) => bpost(h, ATTEST, attestationToJson(a))));
    for (const r of answers) assert.equal(okData(r), { status: 'applied' });
    const dataDir = join(h.dir, 'beacon');
    await h.beacon.stop();
    h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir, host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
    for (let i = 0; i < atts.length; i++) {
      assert.equal(okData(await bget(h, `/api/v1/validators/${i}`)).latest_vote, { root: attestationToJson(atts[i]!).data.beacon_block_root, epoch: data.target.epoch }, `validator ${i}`);
    }
  } finally {
    await stopHarness(h);
  }
});

test.run();
