/**
 * Slashing end to end, over libp2p with real processes: two producing nodes (validators 0-1 and
 * 2-3). A test tool unlocks validator 0's keystore and, outside its client's slashing protection,
 * signs a second block for a slot validator 0 proposed and a second vote for an epoch it voted
 * for, handing both to node p0 only. Both nodes must detect the offences (p1 through block and
 * evidence gossip) and serve evidence that the core verifier accepts, p1's /ws must announce
 * them, a proposer must include the evidence, and after that block validator 0 must be slashed
 * and out on both nodes' registries (beacon and execution) with identical state roots at a common
 * height. Forged evidence POSTed to p1 is refused with the rule it breaks.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { parseHex } from '../../src/core/codec/bytes.js';
import { attesterSlashing, evidenceFromJson, evidenceToJson, verifyEvidence } from '../../src/core/consensus/slashing.js';
import { signAttestation } from '../../src/core/types/attestation.js';
import type { Genesis } from '../../src/core/genesis/genesis.js';
import type { SlashingEvidenceView } from '../../src/api/beacon.js';
import { getJson, waitFor } from '../helpers/network.js';
import { startProducers, withP2pNet } from '../helpers/p2p-network.js';
import { attestTo, beaconToken, conflictingBlock, conflictingVote, findOwnBlock, loadValidatorKeys, proposeTo } from '../helpers/equivocate.js';

const EQUIVOCATOR = 0;

test('a double proposal and a double vote are detected on every node, included, and slash the validator everywhere', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const epochMs = net.epochMs;
    const genesis = net.genesis as Genesis;
    const [p0, p1] = await startProducers(net);
    const nodes = [p0, p1];
    const keys = await loadValidatorKeys(join(net.net, 'keystores', `validator-${EQUIVOCATOR}.json`), genesis);
    const publicKey = keys.mldsa.publicKey;
    const token = await beaconToken(join(p0.dataDir, 'beacon', 'validator-token'));

    // p1's event stream, open before anything happens.
    const events: Array<{ type: string; data: Record<string, unknown> }> = [];
    const ws = new WebSocket(p1.beaconUrl.replace(/^http/, 'ws') + '/ws');
    ws.on('message', (d) => events.push(JSON.parse(String(d))));
    ws.on('error', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });

      // --- Equivocate: a sibling of one of validator 0's blocks, and a second vote for its latest epoch.
      // Both are prepared before either is sent, and the vote goes first: once the double
      // proposal's evidence is included, validator 0 is out and casts no vote to conflict with.
      const honest = await waitFor('a block of validator 0 with a body', () => findOwnBlock(p0.beaconUrl, EQUIVOCATOR), 10 * epochMs + 60_000, 1000);
      const vote = await waitFor('a vote of validator 0', () => conflictingVote(p0.beaconUrl, keys, genesis, EQUIVOCATOR), 4 * epochMs + 30_000, 500);
      const sibling = conflictingBlock(honest, keys, genesis.chain_id, EQUIVOCATOR);
      const attested = await attestTo(p0.beaconUrl, token, vote);
      process.stderr.write(`[slashing] conflicting vote: HTTP ${attested.status} ${JSON.stringify(attested.body).slice(0, 200)}\n`);
      const proposed = await proposeTo(p0.beaconUrl, token, sibling);
      process.stderr.write(`[slashing] conflicting block: HTTP ${proposed.status} ${JSON.stringify(proposed.body).slice(0, 200)}\n`);

      // --- Every node detects both and serves evidence that verifies.
      for (const n of nodes) {
        const found = await waitFor(`${n.beaconProc} to hold both offences`, async () => {
          const list = (await getJson(`${n.beaconUrl}/api/v1/slashing/validators/${EQUIVOCATOR}`)).data.slashings as SlashingEvidenceView[];
          const kinds = new Set(list.map((v) => v.kind));
          return kinds.has('double_proposal') && kinds.has('double_vote') ? list : undefined;
        }, 4 * epochMs + 30_000, 500);
        for (const v of found) {
          assert.is(v.validator_index, EQUIVOCATOR);
          assert.is(verifyEvidence(evidenceFromJson(v.evidence), publicKey, genesis.chain_id), v.kind, `${n.beaconProc}: ${v.hash} verifies`);
        }
      }
      await waitFor("the slashing events on p1's /ws", async () => {
        const kinds = new Set(events.filter((e) => e.type === 'slashing' && e.data.validator_index === EQUIVOCATOR).map((e) => e.data.kind));
        return kinds.has('double_proposal') && kinds.has('double_vote') ? true : undefined;
      }, 2 * epochMs + 10_000);

      // --- Included by a proposer; then slashed and exited on every node.
      const included = await waitFor('the evidence included on p0', async () => {
        const list = (await getJson(`${p0.beaconUrl}/api/v1/slashing?status=included`)).data.slashings as SlashingEvidenceView[];
        return list.find((v) => v.validator_index === EQUIVOCATOR);
      }, 6 * epochMs + 60_000, 500);
      const includedAt = (await getJson(`${p0.execUrl}/api/v1/blocks/${included.block_hash}`)).data.number as number;
      for (const n of nodes) {
        await waitFor(`${n.beaconProc}: validator 0 out`, async () => {
          const v = (await getJson(`${n.beaconUrl}/api/v1/validators/${EQUIVOCATOR}`)).data;
          return v.active === false ? true : undefined;
        }, 4 * epochMs + 30_000, 500);
        const reg = (await getJson(`${n.execUrl}/api/v1/engine/registry`)).data.validators as Array<{ slashed: boolean; active: boolean; stake: string }>;
        assert.equal([reg[EQUIVOCATOR]!.slashed, reg[EQUIVOCATOR]!.active], [true, false], `${n.execProc}: slashed and exited`);
        assert.is(BigInt(reg[EQUIVOCATOR]!.stake), BigInt(genesis.validators[EQUIVOCATOR]!.stake) - BigInt(genesis.validators[EQUIVOCATOR]!.stake) / 32n);
      }
      // Identical state roots at a common height past the inclusion, once both have it canonical.
      const common = includedAt + 2;
      const roots = await waitFor(`both nodes at height ${common} with one block`, async () => {
        const b = await Promise.all(nodes.map((n) => net.execBlock(n, common)));
        return b.every((x) => x && x.hash === b[0]!.hash) ? b.map((x) => x!.state_root) : undefined;
      }, 6 * epochMs + 60_000, 500);
      assert.is(roots[1], roots[0]);
      // The chain goes on without validator 0: blocks keep coming from the others.
      const after = await net.waitSameHead(nodes, 'blocks after the slashing', (h) => h.index >= common + 2, 6 * epochMs + 60_000);
      assert.ok(after.index >= common + 2);

      // --- Forged evidence is refused on p1.
      const d = vote.data;
      const other = { ...d, beaconBlockRoot: new Uint8Array(32).fill(3) };
      const submit = async (body: unknown) => {
        const r = await fetch(`${p1.beaconUrl}/api/v1/slashing`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: r.status, code: ((await r.json()) as { error?: { code: string } }).error?.code };
      };
      const wrongKey = (await loadValidatorKeys(join(net.net, 'keystores', 'validator-1.json'), genesis)).mldsa;
      assert.equal(await submit(evidenceToJson(attesterSlashing(signAttestation(2, d, keys.mldsa, genesis.chain_id), signAttestation(2, other, keys.mldsa, genesis.chain_id)))), { status: 400, code: 'INVALID_EVIDENCE_SIGNATURE' });
      assert.equal(await submit(evidenceToJson(attesterSlashing(signAttestation(1, d, wrongKey, genesis.chain_id), signAttestation(1, d, wrongKey, genesis.chain_id)))), { status: 400, code: 'NOT_CONFLICTING' });
      assert.equal(await submit(evidenceToJson(attesterSlashing(vote, signAttestation(1, other, wrongKey, genesis.chain_id)))), { status: 400, code: 'DIFFERENT_VALIDATORS' });
      assert.equal((await submit({ type: 'attester', attestation_1: 'x' })).status, 400);
      // Validator 0's evidence again: already slashed.
      assert.equal(await submit(evidenceToJson(attesterSlashing(vote, signAttestation(EQUIVOCATOR, other, keys.mldsa, genesis.chain_id)))), { status: 409, code: 'ALREADY_SLASHED' });
      assert.ok(parseHex(included.block_hash!, 'hash', 32).length === 32);
    } finally {
      ws.close();
    }
  });
});

test.run();
