/**
 * Fork choice under a slow block import (issue 33: one expensive block, 10-20 s to import on
 * every node, stopped finality for 10 minutes). A real execution node behind a gate that holds
 * one block's newPayload for as long as the test likes: while it is held, the beacon must keep
 * taking votes (it used to hold its lock for the whole import, so every attestation, block and
 * slot tick waited behind it), a vote naming the block being imported waits for it instead of
 * being refused, a second copy is not imported twice, and a proposer asking what to pack for the
 * next slot is held until the block is in, so it builds on it rather than beside it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { attestationToJson, signAttestation } from '../../../src/core/types/attestation.js';
import { blockHash } from '../../../src/core/types/block.js';
import { parseHex, toHex } from '../../../src/core/codec/bytes.js';
import { type EngineGate, startEngineGate } from '../../helpers/engine-gate.js';
import { waitFor } from '../../helpers/network.js';
import { beaconHead, bget, bpost, buildProposal, currentSlot, type Harness, okData, proposeBlock, startHarness, stopHarness } from './fixture.js';

const ATTEST = '/api/v1/attestation';

test('a held newPayload: votes keep flowing, votes for the block wait for it, one import, the next proposer builds on it', async () => {
  let gate: EngineGate | undefined;
  const h: Harness = await startHarness({ validators: 2, slotsAgo: 20, engineUrl: async (url) => (gate = await startEngineGate(url)).url });
  const g = gate!;
  try {
    const slotMs = h.genesis.config.slot_seconds * 1000;
    const parent = await beaconHead(h);
    const slot = currentSlot(h);
    const { block } = await buildProposal(h, { slot });
    const root = toHex(blockHash(block.header));
    g.shut();
    const imported = proposeBlock(h, block);
    await waitFor('the block reaches execution (held at the gate)', async () => (g.held === 1 ? true : undefined), slotMs * 5, 20);

    // A vote for the parent, the head while the import runs, is answered now, not after the import.
    const parentRoot = parseHex(parent.root, 'parent', 32);
    const source = okData(await bget(h, `/api/v1/validator/attestation_data?slot=${slot}`)).source as { epoch: number; root: string };
    const epoch = Math.floor(slot / h.genesis.config.slots_per_epoch);
    const epochStart = epoch * h.genesis.config.slots_per_epoch;
    const cp = (r: Uint8Array) => ({ epoch, root: r });
    const src = { epoch: source.epoch, root: parseHex(source.root, 'source', 32) };
    const forParent = signAttestation(0, { slot, beaconBlockRoot: parentRoot, source: src, target: cp(parentRoot) }, h.validators[0]!.mldsa, h.genesis.chain_id);
    const t = performance.now();
    const early = await Promise.race([bpost(h, ATTEST, attestationToJson(forParent)), new Promise<undefined>((r) => setTimeout(() => r(undefined), slotMs))]);
    assert.ok(early !== undefined, `an attestation for the head is answered while another block's import is held (waited ${Math.round(performance.now() - t)} ms)`);
    assert.equal(okData(early), { status: 'applied' });

    // A vote naming the block being imported (from a node that already has it) waits for it.
    const blockRoot = parseHex(root, 'root', 32);
    const forBlock = signAttestation(1, { slot, beaconBlockRoot: blockRoot, source: src, target: cp(slot === epochStart ? blockRoot : parentRoot) }, h.validators[1]!.mldsa, h.genesis.chain_id);
    const voted = bpost(h, ATTEST, attestationToJson(forBlock));
    // A second copy (gossip and the API, say) joins the import under way.
    const copy = proposeBlock(h, block);
    // The next slot's proposer asks what to pack: held until the block is in.
    let opened = false;
    const packing = bget(h, `/api/v1/validator/block_attestations?slot=${slot + 1}`, { authorization: `Bearer ${h.token}` }).then((r) => ({ r, opened }));
    await new Promise((r) => setTimeout(r, 50));
    assert.is(g.newPayloads, 1, 'the copy did not reach execution');
    opened = true;
    g.open();

    assert.is(okData(await imported).block_hash, root);
    assert.equal(okData(await voted), { status: 'applied' }, 'the vote for the block being imported counts once it is in');
    assert.is(okData(await copy).already_known, true, 'the copy is answered as the known block');
    const packed = await packing;
    okData(packed.r);
    assert.ok(packed.opened, 'block_attestations answered only after the import finished');
    assert.is((await beaconHead(h)).root, root, 'the proposer reading the head after it sees the new block');
    assert.is(g.newPayloads, 1, 'one newPayload for two copies');
    assert.ok(h.beacon.chain.forkChoice.weight(root) > 0n, "validator 1's vote weighs on the block");
  } finally {
    g.open(); // a failed assertion must not leave the import (and the shutdown) held
    await stopHarness(h);
    await g.close();
  }
});

test.run();
