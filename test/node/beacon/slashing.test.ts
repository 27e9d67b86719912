/**
 * The beacon's slashing family: a double vote and a double proposal received by the API are
 * detected (evidence that verifies with the core function, served by /api/v1/slashing..., the
 * `slashing` event on /ws, the metrics), offered to the next proposer, and once a block includes
 * them the validators are slashed (inactive, out of the fork-choice weights). Forged or malformed
 * evidence POSTed is refused with the rule it breaks.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { join } from 'node:path';
import { parseHex } from '../../../src/core/codec/bytes.js';
import { type SlashingEvidenceJson, attesterSlashing, evidenceFromJson, evidenceToJson, verifyEvidence } from '../../../src/core/consensus/slashing.js';
import { type AttestationData, attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { BeaconNode } from '../../../src/node/beacon/node.js';
import { silentLogger } from '../../../src/util/log.js';
import type { SlashingEvidenceView } from '../../../src/api/beacon.js';
import { waitFor } from '../../helpers/network.js';
import { expectEnvelope } from '../execution/fixture.js';
import { type Harness, beaconMetrics, bget, bpost, buildProposal, currentSlot, okData, proposeBlock, sample, startHarness, stopHarness } from './fixture.js';

async function voteNow(h: Harness): Promise<AttestationData> {
  const d = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${currentSlot(h)}`));
  return {
    slot: d.slot,
    beaconBlockRoot: parseHex(d.beacon_block_root, 'root', 32),
    source: { epoch: d.source.epoch, root: parseHex(d.source.root, 'source', 32) },
    target: { epoch: d.target.epoch, root: parseHex(d.target.root, 'target', 32) },
  };
}

const list = async (h: Harness, path = '/api/v1/slashing'): Promise<SlashingEvidenceView[]> => okData(await bget(h, path)).slashings;

function verifies(h: Harness, v: SlashingEvidenceView): void {
  const key = h.validators[v.validator_index]!.mldsa.publicKey;
  assert.is(verifyEvidence(evidenceFromJson(v.evidence), key, h.genesis.chain_id), v.kind, `${v.hash} verifies as ${v.kind}`);
}

test('double vote and double proposal: detected, served, announced, included, and the validators slashed', async () => {
  // Three validators: the one slashed leaves two to carry the chain.
  const h = await startHarness({ validators: 3, slotsAgo: 40 });
  const ws = new WebSocket(h.beacon.url.replace(/^http/, 'ws') + '/ws');
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  ws.on('message', (d) => events.push(JSON.parse(String(d))));
  ws.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
    // --- A double vote through the API, by the proposer of slot 1 (so one validator is accused of both offences).
    const a = await buildProposal(h, { slot: 1 });
    const x = a.validator;
    const data = await voteNow(h);
    const good = signAttestation(x, data, h.validators[x]!.mldsa, h.genesis.chain_id);
    okData(await bpost(h, '/api/v1/attestation', attestationToJson(good)));
    const conflicting = signAttestation(x, { ...data, beaconBlockRoot: new Uint8Array(32).fill(7) }, h.validators[x]!.mldsa, h.genesis.chain_id);
    expectEnvelope(await bpost(h, '/api/v1/attestation', attestationToJson(conflicting)), 409, 'SLASHABLE_ATTESTATION');
    let all = await list(h);
    assert.is(all.length, 1);
    const vote = all[0]!;
    assert.equal([vote.kind, vote.validator_index, vote.validator, vote.status, vote.block_hash], ['double_vote', x, h.validators[x]!.address, 'pending', null]);
    verifies(h, vote);
    assert.equal(await list(h, `/api/v1/slashing/validators/${x}`), [vote]);
    assert.equal(await list(h, `/api/v1/slashing/validators/${h.validators[x]!.address}`), [vote]);
    assert.equal(await list(h, `/api/v1/slashing/validators/${(x + 1) % 3}`), []);
    assert.equal(okData(await bget(h, `/api/v1/slashing/${vote.hash}`)), vote);
    await waitFor('the slashing event', async () => (events.some((e) => e.type === 'slashing' && e.data.evidence_hash === vote.hash) ? true : undefined), 10_000);
    const ev = events.find((e) => e.type === 'slashing')!.data;
    assert.equal([ev.kind, ev.validator_index, ev.validator, ev.epoch], ['double_vote', x, h.validators[x]!.address, data.target.epoch]);
    // POSTing it again is idempotent.
    assert.equal(okData(await bpost(h, '/api/v1/slashing', vote.evidence, null)), { status: 'known', hash: vote.hash, kind: 'double_vote' });

    // --- A double proposal: two different blocks of one proposer for slot 1. The second includes a
    // vote from a later slot, so its merkle_root differs and the beacon refuses it; detected all the same.
    okData(await proposeBlock(h, a.block));
    const b = await buildProposal(h, { slot: 1, parentHash: a.block.header.parentHash, index: 1, randaoReveal: a.reveal, attestations: [good] });
    expectEnvelope(await proposeBlock(h, b.block), 400, 'INVALID_ATTESTATION');
    await waitFor('the double proposal', async () => ((await list(h)).some((v) => v.kind === 'double_proposal') ? true : undefined), 10_000);
    const proposal = (await list(h)).find((v) => v.kind === 'double_proposal')!;
    assert.equal([proposal.validator_index, proposal.slot, proposal.epoch], [a.validator, 1, 0]);
    verifies(h, proposal);
    const metrics = await beaconMetrics(h);
    assert.is(sample(metrics, 'service_beacon_slashings_detected_total', 'kind="double_vote"'), 1);
    assert.is(sample(metrics, 'service_beacon_slashings_detected_total', 'kind="double_proposal"'), 1);
    assert.is(sample(metrics, 'service_beacon_slashings_detected_total', 'kind="surround_vote"'), 0);
    assert.is(sample(metrics, 'service_beacon_slashed_validators'), 0);

    // --- The next proposer is offered what is pending on the head's branch and includes it.
    const offered = okData(await bget(h, `/api/v1/validator/block_attestations?slot=${currentSlot(h) + 1}`, { authorization: `Bearer ${h.token}` })).slashings as SlashingEvidenceJson[];
    const pending = await list(h, '/api/v1/slashing?status=pending');
    assert.is(pending.length, 2);
    // One evidence per accused validator.
    assert.is(offered.length, 1);
    const c = await buildProposal(h, { slot: 3, slashings: offered.map(evidenceFromJson) });
    const accepted = okData(await proposeBlock(h, c.block));
    const slashed = new Set(offered.map((e) => evidenceFromJson(e)).map((e) => (e.type === 'proposer' ? e.header1.header.validatorIndex : e.attestation1.validatorIndex)));
    for (const i of slashed) {
      const v = okData(await bget(h, `/api/v1/validators/${i}`));
      assert.equal([v.active, v.status], [false, 'exited'], `validator ${i} is out`);
    }
    assert.is(sample(await beaconMetrics(h), 'service_beacon_slashed_validators'), slashed.size);
    for (const v of await list(h)) {
      const included = offered.some((e) => JSON.stringify(e) === JSON.stringify(v.evidence));
      // Evidence not included whose validator was slashed by other evidence is superseded.
      assert.equal([v.status, v.block_hash], included ? ['included', accepted.block_hash] : ['superseded', null], v.hash);
    }
    assert.equal(await list(h, '/api/v1/slashing?status=pending'), []);
    // Execution holds the same registry (it verified the evidence itself).
    const reg = ((await (await fetch(`${h.exec.restUrl}/api/v1/engine/registry`)).json()) as { data: { validators: Array<{ index: number; slashed: boolean }> } }).data.validators;
    for (const i of slashed) assert.ok(reg[i]!.slashed);
    // Pool and index survive a restart.
    const before = await list(h);
    await h.beacon.stop();
    h.beacon = await BeaconNode.start({ genesis: h.genesis, dataDir: join(h.dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: h.exec.restUrl, tokenFile: join(h.dir, 'validator-token'), log: silentLogger });
    assert.equal(await list(h), before);
  } finally {
    ws.close();
    await stopHarness(h);
  }
});

test('POST /api/v1/slashing: forged, non-conflicting, two-validator and malformed evidence are 400s naming the rule; real evidence is 202 then 200', async () => {
  const h = await startHarness({ validators: 2, slotsAgo: 6 });
  try {
    const data = await voteNow(h);
    const [k0, k1] = [h.validators[0]!.mldsa, h.validators[1]!.mldsa];
    const other = { ...data, beaconBlockRoot: new Uint8Array(32).fill(9) };
    const post = (ev: unknown) => bpost(h, '/api/v1/slashing', ev, null);
    const ev = (a: ReturnType<typeof signAttestation>, b: ReturnType<typeof signAttestation>) => evidenceToJson(attesterSlashing(a, b));
    const chain = h.genesis.chain_id;
    expectEnvelope(await post(ev(signAttestation(0, data, k0, chain), signAttestation(0, other, k1, chain))), 400, 'INVALID_EVIDENCE_SIGNATURE');
    expectEnvelope(await post(ev(signAttestation(0, data, k0, chain), signAttestation(0, data, k0, chain))), 400, 'NOT_CONFLICTING');
    expectEnvelope(await post(ev(signAttestation(0, data, k0, chain), signAttestation(1, other, k1, chain))), 400, 'DIFFERENT_VALIDATORS');
    expectEnvelope(await post(ev(signAttestation(5, data, k0, chain), signAttestation(5, other, k0, chain))), 400, 'UNKNOWN_VALIDATOR');
    expectEnvelope(await post({ type: 'attester' }), 400, 'MALFORMED_INPUT');
    expectEnvelope(await post({ type: 'nope' }), 400, 'MALFORMED_INPUT');
    expectEnvelope(await post('not an object'), 400, 'MALFORMED_INPUT');
    const r = await fetch(`${h.beacon.url}/api/v1/slashing`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type": ' });
    assert.is(r.status, 400);
    assert.is((await list(h)).length, 0, 'nothing forged was kept');
    // A proposal carrying forged evidence is refused by the beacon itself, before execution.
    const forged = attesterSlashing(signAttestation(0, data, k0, chain), signAttestation(0, other, k1, chain));
    const { block } = await buildProposal(h, { slot: 1, slashings: [forged] });
    expectEnvelope(await proposeBlock(h, block), 400, 'INVALID_SLASHING', /INVALID_EVIDENCE_SIGNATURE/);
    assert.is(sample(await beaconMetrics(h), 'service_beacon_proposals_rejected_total', 'reason="INVALID_SLASHING"'), 1);
    const real = ev(signAttestation(1, data, k1, chain), signAttestation(1, other, k1, chain));
    const added = await post(real);
    assert.is(added.status, 202);
    const hash = okData(added, 202).hash;
    assert.equal(okData(await post(real)), { status: 'known', hash, kind: 'double_vote' });
    // More evidence against the same validator is kept up to the cap; past it, valid evidence is
    // answered as redundant (200), not as added, since it is not kept.
    const more = (fill: number) => ev(signAttestation(1, data, k1, chain), signAttestation(1, { ...data, beaconBlockRoot: new Uint8Array(32).fill(fill) }, k1, chain));
    for (const fill of [10, 11, 12]) assert.is(okData(await post(more(fill)), 202).status, 'added');
    assert.is(okData(await post(more(13))).status, 'redundant');
    assert.is(okData(await bget(h, '/api/v1/slashing/validators/1')).slashings.length, 4);
    expectEnvelope(await bget(h, '/api/v1/slashing/0x1234'), 400, 'MALFORMED_INPUT');
    expectEnvelope(await bget(h, `/api/v1/slashing/0x${'ab'.repeat(32)}`), 404, 'NOT_FOUND');
    expectEnvelope(await bget(h, '/api/v1/slashing?status=maybe'), 400, 'MALFORMED_INPUT');
    expectEnvelope(await bget(h, '/api/v1/slashing/validators/x'), 400, 'MALFORMED_INPUT');
    expectEnvelope(await bget(h, `/api/v1/slashing/validators/0x${'00'.repeat(20)}`), 404, 'NOT_FOUND');
    expectEnvelope(await bget(h, '/api/v1/slashing/validators/9'), 404, 'NOT_FOUND');
  } finally {
    await stopHarness(h);
  }
});

test('a lone validator slashed by its own block: the chain has nobody left to draw, and the validator route still answers', async () => {
  const h = await startHarness({ validators: 1, slotsAgo: 10 });
  try {
    const data = await voteNow(h);
    const k = h.validators[0]!.mldsa;
    const ev = attesterSlashing(signAttestation(0, data, k, h.genesis.chain_id), signAttestation(0, { ...data, beaconBlockRoot: new Uint8Array(32).fill(5) }, k, h.genesis.chain_id));
    const { block } = await buildProposal(h, { slot: 1, slashings: [ev] });
    okData(await proposeBlock(h, block));
    const v = okData(await bget(h, '/api/v1/validators/0'));
    assert.equal([v.active, v.duties], [false, []]);
    assert.is((await list(h))[0]!.status, 'included');
  } finally {
    await stopHarness(h);
  }
});

test.run();
