/**
 * The validator client with many keys in one process (`npm run bench -- --only validator`):
 * an ExecutionNode and a BeaconNode in process over a devnet genesis of 64 validators (2 s
 * slots, 4 slots per epoch, 65,536-hash RANDAO chains) and one ValidatorClient holding all 64 keys.
 *
 * Rows:
 * - start-up, cold: `start()` until it resolves (keeper files read, metrics server, one registry
 *   listing for every key's index) and the longest event-loop block meanwhile; then until every
 *   RANDAO chain is built in the background (no checkpoints in the data directory yet) and each
 *   key's RANDAO value checked with the beacon (one GET per key, one after another).
 * - start-up, warm: the same after a restart on the same data directory (checkpoints restored).
 * - proposal latency: from the slot start to "block proposed" (the beacon accepted it) over
 *   `SLOTS` slots, median and worst, while every slot also has 16 attestations to sign; the
 *   limit is a third of a slot, when the attestation deadline comes.
 * - attestation round: from the slot's attestation trigger to the last "attestation sent".
 * - slashing protection per vote: CPU per checkAndRecordAttestation (in memory, so LevelDB's
 *   fsync does not hide it) after 10,000 epochs of one key's history against after 10: the
 *   history horizon bounds it, so the ratio stays near 1 (limit 1.5x).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRESETS, slotAt, slotStartMs } from '../src/core/genesis/genesis.js';
import { buildGenesis } from '../src/genesis/build.js';
import { BeaconNode } from '../src/node/beacon/node.js';
import { ExecutionNode } from '../src/node/execution/node.js';
import { PUBLIC_KEY_BYTES } from '../src/core/constants.js';
import { ValidatorClient } from '../src/node/validator/client.js';
import { openValidatorDataDir } from '../src/node/validator/data-dir.js';
import { SlashingProtectionDb } from '../src/node/validator/slashing/protection.js';
import { type Logger, silentLogger } from '../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath } from '../src/wallet/derivation.js';
import { type BenchResult, formatTable } from './harness.js';

const KEYS = 64;
/** Slots whose proposals are timed. */
const SLOTS = 12;
/** Start-up goal: the first block must not wait for 64 keys' chains (the devnet's first block goal is 5 s in all). */
const STARTUP_LIMIT_MS = 1_000;

/** Histories (epochs of one key's votes) the per-vote slashing-protection cost is compared at. */
const SHORT_HISTORY = 10;
const LONG_HISTORY = 10_000;
/** Votes timed after each history: few enough that the short one stays short (10 to 510 epochs). */
const VOTE_SAMPLES = 500;
/** Runs of each history, interleaved; the best counts (CPU time still varies with JIT and neighbours). */
const VOTE_RUNS = 3;
/** Per-vote cost after the long history against after the short one: bounded work stays near 1x. */
const HISTORY_COST_LIMIT = 1.5;

/** CPU µs per vote recorded after `history` epochs of honest votes, and the votes then held. */
async function voteCostUs(history: number): Promise<{ us: number; held: number }> {
  const db = await SlashingProtectionDb.open({ memory: true });
  const pubkey = '0x' + '11'.repeat(PUBLIC_KEY_BYTES);
  const root = (n: number): Uint8Array => {
    const r = new Uint8Array(32);
    new DataView(r.buffer).setUint32(0, n);
    r[31] = 1;
    return r;
  };
  try {
    for (let t = 1; t <= history; t++) await db.checkAndRecordAttestation(pubkey, t - 1, t, root(t));
    // The garbage of building the history is not the cost of a vote after it (`npm run bench` exposes gc).
    (globalThis as { gc?: () => void }).gc?.();
    const c0 = process.cpuUsage();
    for (let t = history + 1; t <= history + VOTE_SAMPLES; t++) await db.checkAndRecordAttestation(pubkey, t - 1, t, root(t));
    const cpu = process.cpuUsage(c0);
    return { us: (cpu.user + cpu.system) / VOTE_SAMPLES, held: db.held().attestations };
  } finally {
    await db.close();
  }
}

/**
 * The slashing-protection row: per-vote CPU after a long history against after a short one. The
 * long history runs once first so that every path (pruning included) is compiled before timing.
 */
async function slashingProtectionRows(say: (msg: string) => void): Promise<{ results: BenchResult[]; details: Record<string, number> }> {
  await voteCostUs(LONG_HISTORY);
  const shorts: number[] = [];
  const longs: number[] = [];
  let held = 0;
  for (let i = 0; i < VOTE_RUNS; i++) {
    shorts.push((await voteCostUs(SHORT_HISTORY)).us);
    const run = await voteCostUs(LONG_HISTORY);
    longs.push(run.us);
    held = run.held;
  }
  const short = Math.min(...shorts);
  const long = Math.min(...longs);
  const ratio = long / short;
  say(`slashing protection: ${short.toFixed(1)} µs CPU a vote after ${SHORT_HISTORY} epochs, ${long.toFixed(1)} µs after ${LONG_HISTORY.toLocaleString('en-US')} (${held} votes held); runs ${shorts.map((x) => x.toFixed(0)).join('/')} and ${longs.map((x) => x.toFixed(0)).join('/')} µs`);
  const results: BenchResult[] = [
    {
      name: `slashing protection per vote, ${LONG_HISTORY.toLocaleString('en-US')} epochs of history`,
      backend: 'memory, 1 key',
      unit: 'ops/s',
      value: Math.round(1e6 / long),
      ratio: ratio / HISTORY_COST_LIMIT,
      note: `${long.toFixed(1)} µs CPU/vote = ${ratio.toFixed(2)}x the ${short.toFixed(1)} µs after ${SHORT_HISTORY} epochs (limit ${HISTORY_COST_LIMIT}x)`,
    },
  ];
  return { results, details: { slashingVoteUsShort: short, slashingVoteUsLong: long, slashingVotesHeldLong: held } };
}

interface Line {
  at: number;
  msg: string;
  fields: Record<string, unknown>;
}

function recorder(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const rec = (msg: string, fields: Record<string, unknown> = {}) => lines.push({ at: Date.now(), msg, fields });
  return { log: { debug: () => undefined, info: rec, warn: rec, error: rec }, lines };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

/** Runs the suite; prints a table unless `print` is false. */
export async function runValidatorBench(opts: { print?: boolean } = {}): Promise<{ results: BenchResult[]; details: Record<string, number> }> {
  const say = (msg: string): void => {
    if (opts.print !== false) process.stderr.write(`  ${msg}\n`);
  };
  // Before any node runs in this process, so their work is not counted in the per-vote CPU.
  const slashing = await slashingProtectionRows(say);
  const slotMs = PRESETS.devnet.slot_seconds * 1000;
  const built = buildGenesis({ validators: KEYS, accounts: 1, preset: 'devnet', chainId: 'svc-vbench', networkId: 31340, genesisTime: Math.floor(Date.now() / 1000) - 2 * PRESETS.devnet.slot_seconds, mnemonic: DEV_MNEMONIC });
  const genesis = built.genesis;
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const keys = genesis.validators.map((_, i) => deriveWalletKeys(seed, walletPath(Branch.Validators, i)));
  const dir = await mkdtemp(join(tmpdir(), 'svc-vbench-'));
  const exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, verifierThreads: 1 });
  const tokenFile = join(dir, 'validator-token');
  const beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: exec.restUrl, tokenFile, log: silentLogger });
  const token = (await readFile(tokenFile, 'utf8')).trim();
  const dataDir = join(dir, 'validator');
  const details: Record<string, number> = {};

  /** Starts a 64-key client; resolves with its start() time, chains-ready time and the longest loop block. */
  const startClient = async (what: string) => {
    const sp = await openValidatorDataDir(dataDir, genesis);
    const { log, lines } = recorder();
    const client = new ValidatorClient({ genesis, keys, beaconUrl: beacon.url, token, slashingDb: sp, log, dataDir });
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const t0 = performance.now();
    await client.start();
    const startMs = performance.now() - t0;
    // Only start() itself: after it the in-process beacon and execution work in the same loop.
    loop.disable();
    await client.randaoReady();
    const readyMs = performance.now() - t0;
    const blockMs = loop.max / 1e6;
    say(`${what}: start() ${startMs.toFixed(0)} ms, every RANDAO chain ready ${readyMs.toFixed(0)} ms, longest event-loop block ${blockMs.toFixed(0)} ms`);
    return { client, sp, lines, startMs, readyMs, blockMs };
  };

  const results: BenchResult[] = [...slashing.results];
  Object.assign(details, slashing.details);
  const row = (name: string, backend: string, value: number, limit: number, unit: BenchResult['unit'] = 'ms') =>
    results.push({ name, backend, unit, value: Math.round(value), ratio: value / limit, note: `${(value / limit).toFixed(2)}x of ${Math.round(limit)} ms` });
  try {
    const cold = await startClient('cold');
    row('validator start-up, 64 keys, cold', 'start()', cold.startMs, STARTUP_LIMIT_MS);
    row('validator RANDAO chains ready, 64 keys, cold', 'background', cold.readyMs, genesis.config.slots_per_epoch * slotMs);
    row('validator longest event-loop block, start-up', 'cold', cold.blockMs, slotMs / 6);
    details.coldStartMs = cold.startMs;
    details.coldReadyMs = cold.readyMs;

    // Proposals over SLOTS slots while each slot also signs KEYS / slots_per_epoch attestations.
    const first = slotAt(genesis, Date.now()) + 1;
    const end = slotStartMs(genesis, first + SLOTS);
    await new Promise((ok) => setTimeout(ok, Math.max(0, end - Date.now() + slotMs / 2)));
    const proposals = cold.lines.filter((l) => l.msg === 'block proposed' && (l.fields.slot as number) >= first && (l.fields.slot as number) < first + SLOTS);
    const lat = proposals.map((l) => l.at - slotStartMs(genesis, l.fields.slot as number));
    const rounds: number[] = [];
    for (let s = first; s < first + SLOTS; s++) {
      const sent = cold.lines.filter((l) => l.msg === 'attestation sent' && l.fields.slot === s).map((l) => l.at);
      const trigger = cold.lines.find((l) => l.msg === 'block proposed' && l.fields.slot === s)?.at ?? slotStartMs(genesis, s);
      if (sent.length > 0) rounds.push(Math.max(...sent) - trigger);
    }
    const attested = cold.lines.filter((l) => l.msg === 'attestation sent' && (l.fields.slot as number) >= first && (l.fields.slot as number) < first + SLOTS).length;
    say(`${proposals.length}/${SLOTS} slots proposed; latencies ${lat.map((x) => x.toFixed(0)).join(', ')} ms; ${attested} attestations (${((attested / SLOTS) | 0)} a slot)`);
    row('validator proposal latency after slot start, median', `${proposals.length}/${SLOTS} slots`, median(lat), slotMs / 3);
    row('validator proposal latency after slot start, worst', `${proposals.length}/${SLOTS} slots`, Math.max(...lat), slotMs / 3);
    row(`validator attestation round (${Math.round(KEYS / genesis.config.slots_per_epoch)} keys), median`, `${attested} votes`, median(rounds), slotMs / 3);
    details.proposals = proposals.length;
    details.attestations = attested;
    await cold.client.stop();
    await cold.sp.close();

    const warm = await startClient('warm (restart, checkpoints restored)');
    row('validator start-up, 64 keys, warm', 'start()', warm.startMs, STARTUP_LIMIT_MS);
    row('validator RANDAO chains ready, 64 keys, warm', 'checkpoints', warm.readyMs, STARTUP_LIMIT_MS);
    details.warmStartMs = warm.startMs;
    details.warmReadyMs = warm.readyMs;
    await warm.client.stop();
    await warm.sp.close();
  } finally {
    await beacon.stop();
    await exec.stop();
    await rm(dir, { recursive: true, force: true });
  }
  if (opts.print !== false) console.log(formatTable(`validator client, ${KEYS} keys in one process (limits: start-up ${STARTUP_LIMIT_MS} ms; proposal and attestation round within a third of a slot)`, results));
  return { results, details };
}
