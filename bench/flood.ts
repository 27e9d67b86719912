/**
 * Public read load against block production (issue 9, item 1): receipt lookups at 200 per second
 * (REST and JSON-RPC, mixed, from a separate process) must move neither
 *  (a) engine `newPayload` latency of a full 30M-gas block (1,428 transfers, admitted first, as a
 *      devnet's are) on a LevelDB data directory, nor
 *  (b) the block rate of a 4-validator `svc devnet up` (real processes),
 * by more than 10%. Quiet and flooded measurements alternate so drift on a shared machine falls
 * on both. Also reported: the cost of one receipt lookup in a full block (time and bytes read)
 * and of a JSON-RPC batch of 100 lookups, the issue's reproduction.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHex, toHex } from '../src/core/codec/bytes.js';
import { initSignatureBackend, signatureBackend } from '../src/core/crypto/mldsa.js';
import { genesisEpochMixes, genesisMix, nextEpochMixes, seedMixFor } from '../src/core/consensus/randao.js';
import { mixRandao, randaoReveal } from '../src/core/crypto/randao.js';
import { vrfSeed } from '../src/core/crypto/vrf.js';
import { genesisHash } from '../src/core/genesis/genesis.js';
import { type Block, blockToJson, buildSignedBlock } from '../src/core/types/block.js';
import { genesisStateRoot } from '../src/core/state/genesis-root.js';
import { encodeTx, signStandardTx, type StandardTx, txHash } from '../src/core/types/transaction.js';
import { buildGenesis } from '../src/genesis/build.js';
import type { DevnetManifest } from '../src/devnet/manifest.js';
import { ExecutionNode } from '../src/node/execution/node.js';
import { silentLogger } from '../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath } from '../src/wallet/derivation.js';
import type { FloodReport } from './flood-client.js';
import { type BenchResult, formatTable, onNdjson } from './harness.js';
import { pump } from './pump.js';
import { startCpu } from './threads.js';
import { txStatus } from '../src/node/execution/api/queries.js';

const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const CHAIN_ID = 'svc-flood';
const GENESIS_TIME = 1_767_225_600;
const SENDERS = 64;
const TRANSFER_GAS = 21_000n;
const GWEI = 1_000_000_000n;
/** Lookups per second against the public ports, as the issue asks. */
const FLOOD_PER_SECOND = 200;
/** Goal: the flood moves neither figure by more than this factor. */
const GOAL = 1.1;
/** Quiet/flooded pairs of full-block imports. */
const IMPORT_PAIRS = 6;
/** Slots per devnet window; the windows alternate quiet, flooded, quiet, flooded. */
const WINDOW_SLOTS = 15;
const DEVNET_WINDOWS = 4;
/** Transfers put on the devnet chain so the lookups find real receipts. */
const DEVNET_TXS = 200;
const DEVNET_DEADLINE_MS = 120_000;

/** Detailed figures (the JSON output). */
export interface FloodDetails {
  newPayload: {
    quietMs: number[];
    floodedMs: number[];
    /** Main-thread CPU milliseconds from the POST to the answer: the node's own work, whatever else the machine runs. */
    quietCpuMs: number[];
    floodedCpuMs: number[];
    /** Cores other processes (the flood client among them) kept busy during each import. */
    quietOtherCores: number[];
    floodedOtherCores: number[];
    flood: FloodReport[];
    blockBytes: number;
  };
  lookup: { singleMedianMs: number; bytesPerLookup: number; batch100MedianMs: number };
  devnet: { slotSeconds: number; windows: Array<{ flooded: boolean; seconds: number; blocks: number; flood?: FloodReport }> };
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`flood bench self-check failed: ${what}`);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The flood client child process. */
class Flood {
  private constructor(private readonly child: ChildProcess) {}

  /** Forks the client; it floods `rest` and `rpc` with lookups of `hashes` once started. */
  static async open(rest: string, rpc: string, hashes: string[]): Promise<Flood> {
    const child = fork(fileURLToPath(new URL('./flood-client.js', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const f = new Flood(child);
    const ready = f.next();
    child.send({ rest, rpc, hashes, perSecond: FLOOD_PER_SECOND });
    await ready;
    return f;
  }

  private next<T>(): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`flood client exited (code ${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (m: T) => {
        this.child.off('exit', onExit);
        resolve(m);
      });
    });
  }

  /** Starts sending. */
  async start(): Promise<void> {
    const started = this.next();
    this.child.send('start');
    await started;
  }

  /** Stops sending; the figures of the period. */
  async pause(): Promise<FloodReport> {
    const report = this.next<FloodReport>();
    this.child.send('pause');
    const r = await report;
    check(r.failed === 0, `flood lookups failed: ${r.firstError}`);
    return r;
  }

  /** Ends the child. */
  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

async function postJson(url: string, body: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, json: await res.json() };
}

/** (a) newPayload of full blocks, quiet and flooded, on a LevelDB data directory. */
async function newPayloadRows(say: (m: string) => void): Promise<{ details: Pick<FloodDetails, 'newPayload' | 'lookup'> }> {
  const { genesis, keys } = buildGenesis({ validators: 1, accounts: SENDERS, preset: 'devnet', chainId: CHAIN_ID, networkId: 31337, genesisTime: GENESIS_TIME, mnemonic: DEV_MNEMONIC });
  const accounts = keys.filter((k) => k.role === 'account').map((k) => k.keys);
  const validator = keys.find((k) => k.role === 'validator' && k.index === 0)!.keys;
  const perBlock = Number(BigInt(genesis.config.max_gas_per_block) / TRANSFER_GAS);
  const blocks = 1 + 2 * IMPORT_PAIRS;
  const previous = signatureBackend().name;
  await initSignatureBackend('liboqs');
  const t = performance.now();
  const txs: StandardTx[] = [];
  for (let nonce = 0; txs.length < blocks * perBlock; nonce++) {
    for (let s = 0; s < SENDERS && txs.length < blocks * perBlock; s++) {
      const to = new Uint8Array(20).fill(0xbe);
      to[19] = s;
      txs.push(signStandardTx({ nonce: BigInt(nonce), gasPrice: GWEI, gasLimit: TRANSFER_GAS, to, value: 10n ** 12n, data: new Uint8Array(0) }, accounts[s]!.mldsa, CHAIN_ID));
    }
  }
  await initSignatureBackend(previous);
  say(`signed ${txs.length} transfers for ${blocks} full blocks in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const tmp = await mkdtemp(join(tmpdir(), 'svc-bench-flood-'));
  const node = await ExecutionNode.start({ genesis, dataDir: tmp, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, submitRatePerIp: 0, faucetRatePerIpPerMinute: 0 });
  let flood: Flood | undefined;
  try {
    let parent = { hash: toHex(genesisHash(genesis)), index: 0, stateRoot: genesisStateRoot(genesis) };
    // Execution checks the unsigned header fields: one block per slot, each with its slot's seed
    // (the only validator is always drawn) and the validator's next RANDAO reveal.
    let mixes = genesisEpochMixes(genesisMix(genesisHash(genesis)));
    const slotsPerEpoch = genesis.config.slots_per_epoch;
    let blockBytes = 0;
    const importNext = async (i: number): Promise<{ ms: number; cpuMs: number; otherCores: number; block: Block }> => {
      const blockTxs = txs.slice(i * perBlock, (i + 1) * perBlock);
      const slot = parent.index + 1;
      const reveal = randaoReveal(validator.mldsaSeed, genesis.config.randao_chain_length, slot);
      const seed = vrfSeed(seedMixFor(mixes, parent.index, slot, slotsPerEpoch), slot);
      mixes = nextEpochMixes(mixes, parent.index, slot, slotsPerEpoch, mixRandao(mixes.mix, reveal));
      const block = buildSignedBlock({
        chainId: CHAIN_ID,
        index: parent.index + 1,
        timestampMs: (genesis.genesis_time + (parent.index + 1) * genesis.config.slot_seconds) * 1000,
        parentHash: parseHex(parent.hash, 'parent', 32),
        transactions: blockTxs,
        key: validator.mldsa,
        validatorIndex: 0,
        validatorId: parseHex(validator.address, 'validator', 20),
        vrfSeed: seed,
        randaoReveal: reveal,
        stateRoot: parent.stateRoot,
      });
      // Admitted first, as a devnet's transactions are: the import then finds their signatures verified.
      const admitted = await pump(blockTxs, 64, async (tx) => {
        await node.submit(tx, 'rest');
        return undefined;
      });
      check(admitted.failed === 0, `admission failed: ${admitted.firstError}`);
      const body = JSON.stringify(blockToJson(block));
      // Timed to the answer's headers: the client shares the node's event loop, and reading the
      // answer's body would also count the lookups the node resumes once it has answered.
      const cpu = startCpu();
      const t0 = performance.now();
      const res = await fetch(`${node.restUrl}/api/v1/engine/newPayload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const ms = performance.now() - t0;
      const split = cpu.finish(ms / 1000, {});
      const r = { status: res.status, json: (await res.json()) as any };
      check(r.status === 200 && r.json.data?.canonical === true, `newPayload answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      parent = { hash: r.json.data.block_hash, index: block.header.index, stateRoot: parseHex(r.json.data.state_root, 'state root', 32) };
      blockBytes = body.length;
      return { ms, cpuMs: (split.seconds.main ?? 0) * 1000, otherCores: split.otherProcessesCores ?? 0, block };
    };
    const first = await importNext(0);
    const hashes = first.block.transactions.map((tx) => toHex(txHash(tx)));

    // One lookup in process: time and bytes read.
    const reads0 = { ...node.chain.store.reads };
    const single: number[] = [];
    for (let k = 0; k < 500; k++) {
      const t1 = performance.now();
      const s = await txStatus(node.modules, hashes[(k * 37) % hashes.length]!);
      single.push(performance.now() - t1);
      check(s.state === 'Confirmed' || s.state === 'Finalized', 'lookup finds the transaction');
    }
    const bytesPerLookup = (node.chain.store.reads.bytes - reads0.bytes) / single.length;
    // The issue's reproduction: one JSON-RPC batch of 100 receipt lookups.
    const batch: number[] = [];
    for (let k = 0; k < 5; k++) {
      const calls = hashes.slice(k * 100, k * 100 + 100).map((h, id) => ({ jsonrpc: '2.0', id, method: 'eth_getTransactionReceipt', params: [h] }));
      const t1 = performance.now();
      const r = await postJson(node.rpcUrl, JSON.stringify(calls));
      batch.push(performance.now() - t1);
      check(Array.isArray(r.json) && r.json.every((x: { result?: unknown }) => x.result), 'batch answers every receipt');
    }

    flood = await Flood.open(node.restUrl, node.rpcUrl, hashes);
    const np: FloodDetails['newPayload'] = { quietMs: [], floodedMs: [], quietCpuMs: [], floodedCpuMs: [], quietOtherCores: [], floodedOtherCores: [], flood: [], blockBytes: 0 };
    let i = 1;
    for (let pair = 0; pair < IMPORT_PAIRS; pair++) {
      for (const flooded of pair % 2 === 0 ? [false, true] : [true, false]) {
        if (flooded) await flood.start();
        const { ms, cpuMs, otherCores } = await importNext(i++);
        if (flooded) np.flood.push(await flood.pause());
        (flooded ? np.floodedMs : np.quietMs).push(ms);
        (flooded ? np.floodedCpuMs : np.quietCpuMs).push(cpuMs);
        (flooded ? np.floodedOtherCores : np.quietOtherCores).push(otherCores);
        say(`block ${i - 1}: newPayload ${ms.toFixed(0)} ms, main thread ${cpuMs.toFixed(0)} ms CPU, other processes ${otherCores.toFixed(2)} cores${flooded ? `, ${FLOOD_PER_SECOND} lookups/s` : ''}`);
      }
    }
    np.blockBytes = blockBytes;
    return {
      details: {
        newPayload: np,
        lookup: { singleMedianMs: median(single), bytesPerLookup, batch100MedianMs: median(batch) },
      },
    };
  } finally {
    flood?.close();
    await node.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

/** (b) Block rate of a 4-validator devnet, quiet and flooded windows alternating. */
async function devnetRows(say: (m: string) => void): Promise<FloodDetails['devnet']> {
  const tmp = await mkdtemp(join(tmpdir(), 'svc-bench-flood-devnet-'));
  const dir = join(tmp, 'net');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: tmp, SVC_HOME: join(tmp, 'home') };
  const child = spawn(process.execPath, [RUN_JS, 'devnet', 'up', '--validators', '4', '--dir', dir, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const blockTimes: number[] = [];
  let firstBlock: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (firstBlock = resolve));
  onNdjson<{ event: string; time: string }>(child.stdout!, (e) => {
    if (e.event === 'block') {
      blockTimes.push(Date.parse(e.time));
      firstBlock();
    }
  });
  let flood: Flood | undefined;
  try {
    const deadline = setTimeout(() => child.kill('SIGTERM'), DEVNET_DEADLINE_MS);
    await Promise.race([started, exited.then(() => Promise.reject(new Error('svc devnet up exited before its first block')))]);
    clearTimeout(deadline);
    const m = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetManifest;
    // Real transfers, so the lookups find real receipts.
    const seed = mnemonicToSeed(m.mnemonic);
    const senders = m.accounts.slice(0, 8).map((a) => deriveWalletKeys(seed, walletPath(Branch.Accounts, a.index)));
    const txs: StandardTx[] = [];
    for (let nonce = 0; txs.length < DEVNET_TXS; nonce++) {
      for (const s of senders) {
        txs.push(signStandardTx({ nonce: BigInt(nonce), gasPrice: GWEI, gasLimit: TRANSFER_GAS, to: parseHex(m.accounts[0]!.address, 'to', 20), value: 1n, data: new Uint8Array(0) }, s.mldsa, m.chain_id));
      }
    }
    const hashes = txs.map((tx) => toHex(txHash(tx)));
    for (const tx of txs) {
      const r = await postJson(`${m.endpoints.execution}/api/v1/transactions`, JSON.stringify({ raw: toHex(encodeTx(tx)) }));
      check(r.status === 202, `devnet submission answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    }
    const waitUntil = Date.now() + DEVNET_DEADLINE_MS;
    for (;;) {
      const r = await fetch(`${m.endpoints.execution}/api/v1/transactions/${hashes[hashes.length - 1]}/receipt`);
      if (r.status === 200) break;
      check(Date.now() < waitUntil, 'the devnet includes the submitted transfers');
      await new Promise((res) => setTimeout(res, 500));
    }
    say(`devnet: ${txs.length} transfers included; ${DEVNET_WINDOWS} windows of ${WINDOW_SLOTS} slots (${m.slot_seconds} s)`);
    flood = await Flood.open(m.endpoints.execution, m.endpoints.rpc, hashes);
    const windows: FloodDetails['devnet']['windows'] = [];
    for (let w = 0; w < DEVNET_WINDOWS; w++) {
      const flooded = w % 2 === 1;
      if (flooded) await flood.start();
      const from = Date.now();
      await new Promise((res) => setTimeout(res, WINDOW_SLOTS * m.slot_seconds * 1000));
      const to = Date.now();
      const report = flooded ? await flood.pause() : undefined;
      const blocks = blockTimes.filter((t) => t >= from && t < to).length;
      windows.push({ flooded, seconds: (to - from) / 1000, blocks, ...(report ? { flood: report } : {}) });
      say(`devnet window ${w + 1}: ${blocks} blocks in ${((to - from) / 1000).toFixed(0)} s${flooded ? `, ${report!.ok} lookups (p99 ${report!.p99Ms.toFixed(1)} ms)` : ''}`);
    }
    return { slotSeconds: m.slot_seconds, windows };
  } finally {
    flood?.close();
    child.kill('SIGTERM');
    await exited;
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Runs both parts and prints a table unless `print` is false. */
export async function runFloodBench(o: { print: boolean }): Promise<{ results: BenchResult[]; details: FloodDetails }> {
  const say = (msg: string): void => {
    if (o.print) process.stderr.write(`  ${msg}\n`);
  };
  const { details: a } = await newPayloadRows(say);
  const devnet = await devnetRows(say);
  const details: FloodDetails = { ...a, devnet };
  const quiet = median(a.newPayload.quietMs);
  const flooded = median(a.newPayload.floodedMs);
  const rate = (flag: boolean): number => {
    const ws = devnet.windows.filter((w) => w.flooded === flag);
    return ws.reduce((n, w) => n + w.blocks, 0) / ws.reduce((n, w) => n + w.seconds, 0);
  };
  const quietRate = rate(false);
  const floodRate = rate(true);
  const lookups = a.newPayload.flood.reduce((n, r) => n + r.ok, 0);
  const quietCpu = median(a.newPayload.quietCpuMs);
  const floodedCpu = median(a.newPayload.floodedCpuMs);
  const results: BenchResult[] = [
    { name: 'receipt lookup in a full block', backend: 'in-process txStatus, median', unit: 'ms', value: a.lookup.singleMedianMs, note: `${a.lookup.bytesPerLookup.toFixed(0)} B read per lookup` },
    { name: 'JSON-RPC batch of 100 eth_getTransactionReceipt', backend: 'full block, median of 5', unit: 'ms', value: a.lookup.batch100MedianMs, note: 'issue 9 measured 5,200 ms' },
    { name: 'newPayload, full block, quiet', backend: `engine REST, median of ${IMPORT_PAIRS}`, unit: 'ms', value: quiet, note: `${(a.newPayload.blockBytes / 1e6).toFixed(1)} MB JSON` },
    {
      name: `newPayload, full block, ${FLOOD_PER_SECOND} lookups/s`,
      backend: `engine REST, median of ${IMPORT_PAIRS}`,
      unit: 'ms',
      value: flooded,
      ratio: flooded / quiet,
      note: `${(flooded / quiet).toFixed(2)}x quiet (goal <= ${GOAL.toFixed(2)}); ${lookups} lookups answered`,
    },
    { name: 'newPayload main-thread CPU, quiet', backend: `median of ${IMPORT_PAIRS}`, unit: 'ms', value: quietCpu, note: `other processes ${median(a.newPayload.quietOtherCores).toFixed(2)} cores meanwhile` },
    {
      name: `newPayload main-thread CPU, ${FLOOD_PER_SECOND} lookups/s`,
      backend: `median of ${IMPORT_PAIRS}`,
      unit: 'ms',
      value: floodedCpu,
      ratio: floodedCpu / quietCpu,
      note: `${(floodedCpu / quietCpu).toFixed(2)}x quiet (goal <= ${GOAL.toFixed(2)}); other processes ${median(a.newPayload.floodedOtherCores).toFixed(2)} cores`,
    },
    { name: '4-validator devnet block rate, quiet', backend: 'svc devnet up', unit: 'ops/s', value: quietRate, note: `${(quietRate * devnet.slotSeconds).toFixed(2)} blocks per ${devnet.slotSeconds} s slot` },
    {
      name: `4-validator devnet block rate, ${FLOOD_PER_SECOND} lookups/s`,
      backend: 'svc devnet up',
      unit: 'ops/s',
      value: floodRate,
      ratio: floodRate / quietRate,
      note: `${(floodRate / quietRate).toFixed(2)}x quiet (goal >= ${(1 / GOAL).toFixed(2)})`,
    },
  ];
  if (o.print) {
    console.log(formatTable('public read flood vs block production (lookups from a separate process, REST and JSON-RPC mixed)', results));
    const f = a.newPayload.flood;
    console.log(`  newPayload quiet ${a.newPayload.quietMs.map((x) => x.toFixed(0)).join(', ')} ms; flooded ${a.newPayload.floodedMs.map((x) => x.toFixed(0)).join(', ')} ms; flood latency p99 ${Math.max(...f.map((r) => r.p99Ms)).toFixed(1)} ms`);
    console.log(`  devnet windows: ${devnet.windows.map((w) => `${w.flooded ? 'flooded' : 'quiet'} ${w.blocks}/${w.seconds.toFixed(0)} s`).join(', ')}`);
  }
  return { results, details };
}
