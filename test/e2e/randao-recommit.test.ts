/**
 * End to end, with real processes: a 3-validator devnet whose genesis gives every validator a
 * RANDAO hash chain of only 8 reveals (`svc genesis new --randao-chain-length 8`). A validator
 * proposes more blocks than one chain holds only if its client re-commits by itself (a
 * transaction to RANDAO_COMMIT_ADDRESS, included by another proposer) and switches to the new
 * chain. The test follows the canonical chain until one validator has proposed more than 8
 * blocks, then checks each of its reveals against the generation chains derived from its key
 * (never two generations out of order, every generation continued from its commitment), the
 * registry's commitment, and the included re-commitment transactions. The validator is then
 * killed and restarted on its data directory (its persisted generation) and proposes again.
 *
 * A second run has a single validator, which the own-block rule exempts: it packs its own
 * re-commitment.
 *
 * Synchronisation is by observable state only, with deadlines in slots from genesis.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RANDAO_COMMIT_ADDRESS } from '../../src/core/constants.js';
import { parseHex } from '../../src/core/codec/bytes.js';
import { RandaoChain } from '../../src/node/validator/randao/chain.js';
import { randaoGenerationPath } from '../../src/node/validator/randao/recommit.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath } from '../../src/wallet/derivation.js';
import { type Devnet, getJson, waitFor, withDevnet } from '../helpers/network.js';

const VALIDATORS = 3;
const LENGTH = 8;
const seed = mnemonicToSeed(DEV_MNEMONIC);
const keys = Array.from({ length: VALIDATORS }, (_, i) => deriveWalletKeys(seed, walletPath(Branch.Validators, i)));

/** One canonical block as the test reads it from execution. */
interface Seen {
  number: number;
  hash: string;
  proposer: string;
  reveal: Uint8Array;
  transactions: Array<{ to: string | null; from: string; data: string; status: number }>;
}

/**
 * Brings `seen` to the canonical chain (execution REST), oldest first, always one parent-linked
 * chain: a block whose parent is not the last one read means a reorg replaced that one, so it is
 * dropped and the walk steps back until the two agree (the common ancestor), then reads forward.
 */
async function follow(d: Devnet, seen: Seen[]): Promise<void> {
  const head = (await getJson(`${d.execUrl}/api/v1/blocks/latest`)).data;
  while (seen.length < head.number) {
    const n = seen.length + 1;
    const b = (await getJson(`${d.execUrl}/api/v1/blocks/${n}`)).data;
    if (!b) return; // reorged to a shorter chain since `head` was read: the next poll goes on
    if (seen.length > 0 && b.parent_hash !== seen[seen.length - 1]!.hash) {
      seen.pop();
      continue;
    }
    const receipts = await Promise.all(
      (b.transactions as string[]).map(async (h) => (await getJson(`${d.execUrl}/api/v1/transactions/${h}`)).data),
    );
    seen.push({
      number: n,
      hash: b.hash,
      proposer: b.proposer,
      reveal: parseHex(b.block.header.randao_reveal, 'randao_reveal', 32),
      transactions: receipts.map((s) => ({ to: s.receipt?.to ?? null, from: s.receipt?.from, data: s.tx?.data ?? '', status: s.receipt?.status })),
    });
  }
}

/** Generation chains of validator `i`, built as far as needed. */
function generations(i: number): (g: number) => RandaoChain {
  const chains: RandaoChain[] = [];
  return (g) => (chains[g] ??= new RandaoChain(keys[i]!.mldsaSeed, LENGTH, 0, g));
}

/** The generation of each reveal, and that the sequence is a valid walk: each reveal is the next link of its chain, a new generation starts at its first reveal. */
function classify(i: number, reveals: Uint8Array[]): number[] {
  const gen = generations(i);
  const out: number[] = [];
  let g = 0;
  let k = 0;
  for (const r of reveals) {
    if (k < LENGTH && Buffer.from(gen(g).reveal(k + 1)).equals(Buffer.from(r))) {
      k++;
    } else {
      // Not the next link of the current chain: it must be the first reveal of the next generation.
      assert.ok(Buffer.from(gen(g + 1).reveal(1)).equals(Buffer.from(r)), `validator ${i}: reveal ${out.length + 1} is neither the next link of generation ${g} (after ${k}) nor the first of generation ${g + 1}`);
      g++;
      k = 1;
    }
    out.push(g);
  }
  return out;
}

test('a validator whose RANDAO chain runs out re-commits by itself and keeps proposing, across a restart', async () => {
  await withDevnet({ validators: VALIDATORS, genesisArgs: ['--randao-chain-length', String(LENGTH)] }, async (d) => {
    assert.is(d.genesis.config.randao_chain_length, LENGTH);
    for (let i = 0; i < VALIDATORS; i++) assert.equal(parseHex(d.genesis.validators[i].randao_commitment, 'c', 32), generations(i)(0).commitment());
    await d.startAll();
    const seen: Seen[] = [];
    const countBy = (i: number) => seen.filter((b) => b.proposer === keys[i]!.address).length;
    // Each validator gets about a third of the slots: 9 proposals take about 27 slots; allow 4x.
    const deadlineMs = 120 * d.slotMs + 30_000;
    const v = await waitFor('a validator with more canonical proposals than one chain holds', async () => {
      await follow(d, seen);
      const i = keys.findIndex((_, j) => countBy(j) > LENGTH);
      return i >= 0 ? i : undefined;
    }, deadlineMs, 500);
    const mine = seen.filter((b) => b.proposer === keys[v]!.address);
    const gens = classify(v, mine.map((b) => b.reveal));
    assert.ok(gens[gens.length - 1]! >= 1, `validator ${v} revealed from a later generation (${gens.join(',')})`);
    // Every generation switch follows a re-commitment included in an earlier block, by another proposer.
    const recommits = seen.flatMap((b) => b.transactions.filter((t) => t.to === RANDAO_COMMIT_ADDRESS && t.from === keys[v]!.address).map((t) => ({ ...t, block: b })));
    const top = gens[gens.length - 1]!;
    for (let g = 1; g <= top; g++) {
      const firstUse = mine[gens.indexOf(g)]!.number;
      const c = recommits.find((r) => r.data === `0x${Buffer.from(generations(v)(g).commitment()).toString('hex')}` && r.status === 1);
      assert.ok(c, `generation ${g}'s commitment was included before its first reveal`);
      assert.ok(c.block.number < firstUse, `included in block ${c.block.number}, first used in ${firstUse}`);
      assert.is.not(c.block.proposer, keys[v]!.address, 'never in the validator\'s own block');
    }
    const registry = (await getJson(`${d.execUrl}/api/v1/engine/registry`)).data.validators;
    const current = parseHex(registry[v].randao_commitment, 'commitment', 32);
    assert.ok([...Array(top + 2).keys()].slice(1).some((g) => Buffer.from(generations(v)(g).commitment()).equals(Buffer.from(current))), 'the registry holds a re-committed commitment');
    const logs = d.log(`validator-${v}`);
    assert.ok(logs.some((l) => l.msg === 'RANDAO re-commitment submitted'), 'the client re-committed by itself');
    assert.ok(logs.some((l) => l.msg === 'RANDAO re-commitment in effect: revealing from the new chain'));
    for (let i = 0; i < VALIDATORS; i++) {
      const refused = d.log(`validator-${i}`, { allRuns: true }).filter((l) => l.msg.startsWith('the beacon refused the block'));
      assert.equal(refused.map((l) => l.code), [], `validator ${i} never proposed a block the beacon refused (an invalid reveal would be)`);
    }
    if (process.env.SVC_E2E_LOGS) process.stderr.write(`validator ${v}: generations of its ${gens.length} reveals: ${gens.join(',')}\n`);
    const persisted = JSON.parse(await readFile(randaoGenerationPath(join(d.net, `validator-${v}`), keys[v]!.address), 'utf8')) as { generation: number };
    assert.ok(persisted.generation >= top, `persisted generation ${persisted.generation} ≥ ${top}`);

    // Restarted on its data directory, the validator finds its chains again and keeps proposing.
    await d.kill(`validator-${v}`);
    const before = countBy(v);
    d.startValidator(v);
    await waitFor(`validator ${v} to propose again after its restart`, async () => {
      await follow(d, seen);
      return countBy(v) > before ? true : undefined;
    }, 60 * d.slotMs + 30_000, 500);
    classify(v, seen.filter((b) => b.proposer === keys[v]!.address).map((b) => b.reveal));
    assert.not.ok(d.log(`validator-${v}`).some((l) => l.msg.includes('on none of this key\'s chains')), 'the restarted client recognises the beacon\'s value');
  });
});

test('a lone validator includes its own re-commitment (the own-block rule exempts it) and keeps proposing', async () => {
  await withDevnet({ validators: 1, genesisArgs: ['--randao-chain-length', String(LENGTH)] }, async (d) => {
    await d.startAll();
    const seen: Seen[] = [];
    // It proposes every slot: more than one chain's worth of blocks in about 2 × LENGTH slots.
    await waitFor('more canonical blocks than one chain holds', async () => {
      await follow(d, seen);
      return seen.length > LENGTH + 2 ? true : undefined;
    }, 60 * d.slotMs + 30_000, 500);
    const gens = classify(0, seen.map((b) => b.reveal));
    assert.ok(gens[gens.length - 1]! >= 1, `later generation used (${gens.join(',')})`);
    const own = seen.find((b) => b.transactions.some((t) => t.to === RANDAO_COMMIT_ADDRESS && t.status === 1));
    assert.ok(own, 'its re-commitment was included, necessarily in its own block');
    assert.is(own.proposer, keys[0]!.address);
  });
});

test.run();
