/**
 * The validator's RandaoKeeper against a real execution node: at the threshold it persists the
 * next generation and submits a re-commitment execution admits; a re-opened keeper finds both
 * chains; an exhausted chain says so; a corrupt generation file is refused.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { RANDAO_COMMIT_ADDRESS } from '../../../../src/core/constants.js';
import { SvcError } from '../../../../src/core/errors.js';
import { ExecutionClient } from '../../../../src/client/execution.js';
import type { ExecutionNode } from '../../../../src/node/execution/node.js';
import { RandaoChain, RandaoChainError } from '../../../../src/node/validator/randao/chain.js';
import { RANDAO_GENERATION_FILE, RANDAO_RECOMMIT_RESERVE, RandaoKeeper, type RandaoKeeperOptions, type RecommitRelay, randaoChainPath, randaoGenerationPath, recommitThreshold } from '../../../../src/node/validator/randao/recommit.js';
import { captureLog } from '../../../helpers/log.js';
import { devnet, get, randaoChainOf, startNode } from '../../execution/fixture.js';

const { genesis, keys } = devnet();
const val1 = keys.validators[1]!;
const N = genesis.config.randao_chain_length;
const gen0 = randaoChainOf(val1);
const gen1 = new RandaoChain(val1.mldsaSeed, N, 10, 1);

type Ctx = { node: ExecutionNode; dir: string };
const test = suite<Ctx>('validator: RANDAO re-commitment keeper', { node: undefined as unknown as ExecutionNode, dir: '' });
test.before.each(async (ctx) => {
  ctx.node = await startNode();
  ctx.dir = await mkdtemp(join(tmpdir(), 'svc-keeper-'));
});
test.after.each(async (ctx) => {
  await ctx.node.stop();
  await rm(ctx.dir, { recursive: true, force: true });
});

/**
 * The keeper's relay answered by the execution node itself: what the beacon's relay forwards to
 * (test/node/beacon/recommit-relay.test.ts runs the relay on a real beacon, e2e/randao-recommit the
 * whole path), so these tests are about the keeper's decisions, not the relay's checks.
 */
function relayTo(url: string): RecommitRelay {
  const x = new ExecutionClient(url);
  return {
    recommitAccount: async (address) => ({ address, pending_nonce: (await x.account(address)).pending_nonce }),
    submitRecommit: async (raw) => ({ hash: (await x.submitRaw(raw)).hash }),
    recommitStatus: (hash) => x.txStatus(hash),
  };
}

function options(ctx: Ctx, extra: Partial<RandaoKeeperOptions> = {}): RandaoKeeperOptions {
  return { genesis, keys: val1, relay: relayTo(ctx.node.restUrl), log: captureLog().log, dataDir: ctx.dir, ...extra };
}

test('recommitThreshold: half of a short chain, RANDAO_RECOMMIT_RESERVE of a long one, at least 1', () => {
  assert.is(recommitThreshold(8), 4);
  assert.is(recommitThreshold(1), 1);
  assert.is(recommitThreshold(1 << 16), RANDAO_RECOMMIT_RESERVE);
});

test('above the threshold nothing is sent; at it the next generation is persisted and its commitment submitted', async (ctx) => {
  const remaining: number[] = [];
  let submitted = 0;
  const { log, lines } = captureLog();
  const k = await RandaoKeeper.open(options(ctx, { log, onRemaining: (n) => remaining.push(n), onSubmitted: () => submitted++ }), gen0);
  assert.is(k.generation, 0);
  await k.check(gen0.reveal(N - RANDAO_RECOMMIT_RESERVE - 1), 5);
  assert.equal([remaining, submitted], [[RANDAO_RECOMMIT_RESERVE + 1], 0]);
  const last = gen0.reveal(N - RANDAO_RECOMMIT_RESERVE);
  await k.check(last, 6);
  assert.equal([remaining[1], submitted, k.generation], [RANDAO_RECOMMIT_RESERVE, 1, 1]);
  assert.equal(JSON.parse(await readFile(randaoGenerationPath(ctx.dir, val1.address), 'utf8')), { generation: 1 });
  const pool = (await get(ctx.node, '/api/v1/execution/mempool')).body.transactions as Array<{ from: string; to: string; data?: string }>;
  assert.is(pool.length, 1);
  assert.equal([pool[0]!.from, pool[0]!.to], [val1.address, RANDAO_COMMIT_ADDRESS]);
  assert.ok(lines.some((l) => l.msg === 'RANDAO re-commitment submitted' && l.fields.commitment === toHex(gen1.commitment())), JSON.stringify(lines));
  // Until the new commitment takes effect the old chain goes on; a second check within the retry window sends nothing.
  assert.equal(k.next(last), gen0.reveal(N - RANDAO_RECOMMIT_RESERVE + 1));
  await k.check(gen0.reveal(N - RANDAO_RECOMMIT_RESERVE + 1), 7);
  assert.is(submitted, 1);
  // Once the beacon holds the new commitment, reveals come from the new chain.
  assert.equal(k.next(gen1.commitment()), gen1.reveal(1));
  assert.ok(lines.some((l) => l.msg === 'RANDAO re-commitment in effect: revealing from the new chain'));
  // A keeper re-opened on the directory knows both chains.
  const again = await RandaoKeeper.open(options(ctx));
  assert.is(again.generation, 1);
  assert.equal(again.next(gen1.reveal(1)), gen1.reveal(2));
  assert.equal(again.next(last), gen0.reveal(N - RANDAO_RECOMMIT_RESERVE + 1));
  assert.is(again.remaining(gen1.commitment()), N);
});

test('an exhausted chain throws RANDAO_CHAIN_EXHAUSTED, a foreign value RANDAO_VALUE_NOT_ON_CHAIN', async (ctx) => {
  const k = await RandaoKeeper.open(options(ctx), gen0);
  assert.throws(() => k.next(gen0.reveal(N)), (e: unknown) => e instanceof RandaoChainError && e.code === 'RANDAO_CHAIN_EXHAUSTED');
  assert.throws(() => k.next(gen1.commitment()), (e: unknown) => e instanceof RandaoChainError && e.code === 'RANDAO_VALUE_NOT_ON_CHAIN');
  assert.is(k.remaining(gen1.commitment()), undefined);
});

test('a generation file that does not hold a non-negative integer is refused (CORRUPT_DATA_DIR), under either name', async (ctx) => {
  for (const path of [randaoGenerationPath(ctx.dir, val1.address), join(ctx.dir, RANDAO_GENERATION_FILE)]) {
    await mkdir(join(ctx.dir, 'randao'), { recursive: true });
    for (const text of ['{"generation": -1}', '{"generation": "1"}', 'not json', '{}']) {
      await writeFile(path, text);
      const err = await RandaoKeeper.open(options(ctx)).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof SvcError && err.code === 'CORRUPT_DATA_DIR', `${path} ${text}: ${String(err)}`);
    }
    await rm(path);
  }
});

test('a one-key data directory\'s generation is adopted by a one-key keeper and refused by a many-key one when above 0', async (ctx) => {
  const legacy = join(ctx.dir, RANDAO_GENERATION_FILE);
  await writeFile(legacy, '{"generation": 1}\n');
  const err = await RandaoKeeper.openDeferred(options(ctx, { adoptLegacy: false })).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof SvcError && err.code === 'LEGACY_RANDAO_GENERATION', String(err));
  assert.ok(existsSync(legacy), 'nothing moved by the refusal');
  const k = await RandaoKeeper.open(options(ctx));
  assert.is(k.generation, 1);
  assert.equal(k.next(gen1.commitment()), gen1.reveal(1));
  assert.not.ok(existsSync(legacy), 'moved to the per-key name');
  assert.equal(JSON.parse(await readFile(randaoGenerationPath(ctx.dir, val1.address), 'utf8')), { generation: 1 });
  // Generation 0 says nothing a key could lose: a many-key keeper starts at 0 and keeps going.
  await writeFile(legacy, '{"generation": 0}\n');
  const other = await RandaoKeeper.openDeferred(options(ctx, { keys: keys.validators[0]!, adoptLegacy: false }));
  assert.is(other.generation, 0);
});

test('chains are saved as checkpoints and restored without rebuilding; a damaged file is rebuilt', async (ctx) => {
  const k = await RandaoKeeper.openDeferred(options(ctx));
  assert.not.ok(k.isReady);
  assert.throws(() => k.firstCommitment(), (e: unknown) => e instanceof SvcError && e.code === 'RANDAO_NOT_READY');
  await k.ready();
  assert.equal(k.firstCommitment(), gen0.commitment());
  const path = randaoChainPath(ctx.dir, val1.address, 0);
  const saved = await readFile(path);
  const restored = RandaoChain.restore(val1.mldsaSeed, N, 10, 0, saved);
  assert.ok(restored);
  assert.equal(restored.reveal(5), gen0.reveal(5));
  assert.is(RandaoChain.restore(keys.validators[0]!.mldsaSeed, N, 10, 0, saved), undefined, 'another key\'s seed');
  assert.is(RandaoChain.restore(val1.mldsaSeed, N, 10, 1, saved), undefined, 'another generation');
  const damaged = Uint8Array.from(saved);
  damaged[100] = damaged[100]! ^ 1;
  assert.is(RandaoChain.restore(val1.mldsaSeed, N, 10, 0, damaged), undefined, 'a flipped bit');
  await writeFile(path, damaged);
  const again = await RandaoKeeper.open(options(ctx));
  assert.equal(again.next(gen0.commitment()), gen0.reveal(1));
  assert.equal(new Uint8Array(await readFile(path)), new Uint8Array(saved), 'rewritten');
});

test.run();
