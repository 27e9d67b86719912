/**
 * The proposal path of a full block (30M gas: 1,428 transfers from 64 prefunded senders), as a
 * validator client drives it, end to end over loopback HTTP: pending transactions from execution
 * → assemble and sign (Merkle root, VRF proof, header signature) → POST the proposal to the
 * beacon, which checks it, sends it to execution's newPayload (SSZ) and stores it. Two wires, on
 * the same nodes, alternating, each next to the 2,000 ms devnet slot:
 *  - JSON (the wire before issue 14): getPendingTransactions as JSON, each transaction parsed from
 *    JSON, its JSON length counted against the size cap, the proposal posted as wire JSON;
 *  - SSZ: getPendingTransactions as an envelope list (Accept: application/octet-stream), the
 *    proposal posted as `encodeBlock` bytes made from execution's own envelopes (the validator
 *    built the block, before issue 28);
 *  - template: the beacon builds the block (GET /api/v1/validator/blocks/:slot, one getPayload
 *    to execution), the validator writes its VRF proof, reveal and signature in place and posts
 *    the bytes (the path since issue 28). The row beside it is its ratio to the SSZ one.
 * Every transaction is admitted to execution's pool first (untimed), as it is for a proposer: the
 * import finds every signature in the verified-transaction cache. One in-process ExecutionNode
 * (memory DB) and one BeaconNode (temp data dir); every figure includes all three roles' work,
 * since all run on this process's main thread (CPU µs/tx by thread).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex } from '../src/core/codec/bytes.js';
import { initSignatureBackend, signatureBackend } from '../src/core/crypto/mldsa.js';
import { epochOfSlot, slotAt, slotStartMs } from '../src/core/genesis/genesis.js';
import { type Block, type BlockHeader, blockMerkleRoot, blockToJson, bodyMerkleRoot, decodeBlock, encodeBlock, signBlock } from '../src/core/types/block.js';
import { envelopesOfBlockBytes, headerOfBlockBytes, withProposerFields } from '../src/core/types/block-bytes.js';
import { sha3 } from '../src/core/crypto/hash.js';
import { vrfProve } from '../src/core/crypto/vrf.js';
import { signStandardTx, type StandardTx, type Transaction } from '../src/core/types/transaction.js';
import { txFromJson } from '../src/core/types/transaction-json.js';
import { SSZ_MEDIA_TYPE } from '../src/api/media.js';
import { BeaconClient } from '../src/client/beacon.js';
import { EngineClient } from '../src/client/engine.js';
import { BeaconNode } from '../src/node/beacon/node.js';
import { ExecutionNode } from '../src/node/execution/node.js';
import { silentLogger } from '../src/util/log.js';
import { type BenchResult, formatTable } from './harness.js';
import { profiled, summarizeProfile } from './profile.js';
import { pump } from './pump.js';
import { devBenchChain } from './beacon.js';
import { type CpuSplit, formatCpu, startCpu, threadIds } from './threads.js';

const VALIDATORS = 4;
const SENDERS = 64;
const TRANSFER_GAS = 21_000n;
/** Full proposals per wire (alternating JSON, SSZ, JSON, …); the median counts. */
const RUNS = 3;
/** One untimed proposal per wire first, so both paths are warm. */
const WARM_RUNS = 1;
/** Genesis this many slots ago: every proposal's slot has started. */
const SLOTS_AGO = 60;

type Wire = 'json' | 'ssz' | 'template';
const WIRES: readonly Wire[] = ['json', 'ssz', 'template'];

/** One proposal's steps. */
export interface ProposalSteps {
  wire: Wire;
  pendingMs: number;
  pendingBytes: number;
  /** Content-Type execution answered the pending request with. */
  pendingType: string;
  signMs: number;
  proposeMs: number;
  proposalBytes: number;
  totalMs: number;
  cpu: CpuSplit;
}

export interface ProposeDetails {
  transactions: number;
  runs: ProposalSteps[];
  /** What beacon → execution newPayload carries for this block as SSZ, and what it carried as hex JSON before. */
  newPayloadSszBytes: number;
  newPayloadJsonBytes: number;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`propose bench self-check failed: ${what}`);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Decimal megabytes, as the execution bench prints them. */
const MB = 1_000_000;

/** Runs the proposal-path benchmark and prints a table unless `print` is false. */
export async function runProposeBench(opts: { print?: boolean; profileDir?: string } = {}): Promise<{ results: BenchResult[]; details: ProposeDetails }> {
  const say = (msg: string): void => {
    if (opts.print !== false) process.stderr.write(`  ${msg}\n`);
  };
  const t0 = performance.now();
  const previous = signatureBackend().name;
  // Signing the transfers with liboqs takes seconds; noble would take minutes.
  await initSignatureBackend('liboqs');
  const { genesis, chainId, validators, accounts, randao } = devBenchChain({ validators: VALIDATORS, senders: SENDERS, chainId: 'svc-pbench', networkId: 31340, slotsAgo: SLOTS_AGO });
  const perBlock = Number(BigInt(genesis.config.max_gas_per_block) / TRANSFER_GAS);
  const blocks = WIRES.length * (RUNS + WARM_RUNS);
  const tSign = performance.now();
  const to = parseHex('0x' + 'be'.repeat(20), 'to', 20);
  const txs: StandardTx[] = [];
  for (let i = 0; i < perBlock * blocks; i++) {
    const s = i % SENDERS;
    txs.push(signStandardTx({ nonce: BigInt(Math.floor(i / SENDERS)), gasPrice: BigInt(genesis.config.min_gas_price), gasLimit: TRANSFER_GAS, to, value: 1n, data: new Uint8Array(0) }, accounts[s]!.mldsa, chainId));
  }
  say(`signed ${txs.length} transfers in ${((performance.now() - tSign) / 1000).toFixed(1)} s`);

  const dir = await mkdtemp(join(tmpdir(), 'svc-propose-bench-'));
  const before = threadIds();
  const exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, submitRatePerIp: 0, faucetRatePerIpPerMinute: 0 });
  const verifiers = new Set([...threadIds()].filter((t) => !before.has(t)));
  let beacon: BeaconNode | undefined;
  try {
    beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: exec.restUrl, tokenFile: join(dir, 'token'), log: silentLogger });
    const chain = beacon.chain;
    const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
    const beaconClient = new BeaconClient(beacon.url, { token, timeoutMs: 60_000 });
    const engineClient = new EngineClient(exec.restUrl, { timeoutMs: 60_000 });
    const pendingUrl = `${exec.restUrl}/api/v1/engine/getPendingTransactions`;

    // The old validator client's pending step: JSON, each entry parsed, its JSON length counted.
    const pendingJson = async (): Promise<{ txs: Transaction[]; bytes: number; type: string }> => {
      const res = await fetch(pendingUrl, { headers: { accept: 'application/json' } });
      const text = await res.text();
      const body = JSON.parse(text) as { data: { transactions: unknown[] } };
      let size = 0;
      const out: Transaction[] = [];
      for (const j of body.data.transactions) {
        size += JSON.stringify(j).length + 1;
        out.push(txFromJson(j));
      }
      check(size > 0, 'sizes counted');
      return { txs: out, bytes: Buffer.byteLength(text), type: res.headers.get('content-type') ?? '' };
    };

    let next = 0;
    // Untimed: the block's transactions into execution's pool, as they are when a proposer asks.
    const admit = async (): Promise<void> => {
      const batch = txs.slice(next, (next += perBlock));
      const admitted = await pump(batch, 64, async (tx) => {
        await exec.submit(tx, 'rest');
        return undefined;
      });
      check(admitted.failed === 0 && exec.admission.pool.size === perBlock, `pre-admission: ${admitted.firstError}`);
    };
    const proposeOne = async (wire: Wire): Promise<ProposalSteps> => {
      const head = chain.head();
      const slot = head.slot + 1;
      check(slot <= slotAt(genesis, Date.now()), `slot ${slot} has started`);
      const duty = chain.duties(epochOfSlot(genesis, slot)).find((d) => d.slot === slot)!;
      const v = duty.validator_index;
      const reveal = randao[v]!.next(parseHex(chain.randaoLast(v) ?? '0x' + '00'.repeat(32), 'randao_last', 32));
      const cpu = startCpu();
      const tStart = performance.now();
      // (a) Pending transactions.
      let pendingTxs: Transaction[];
      let envelopes: Uint8Array[] | undefined;
      let pendingBytes: number;
      let pendingType: string;
      if (wire === 'template') return proposeTemplate(slot, v, cpu, tStart);
      if (wire === 'json') {
        const p = await pendingJson();
        pendingTxs = p.txs;
        pendingBytes = p.bytes;
        pendingType = p.type;
      } else {
        const p = await engineClient.pendingTransactions();
        check(p.malformed === undefined, 'every pending transaction decodes');
        pendingTxs = p.transactions;
        envelopes = p.envelopes;
        // The list's own size: each envelope behind a 4-byte offset.
        pendingBytes = p.envelopes.reduce((n, e) => n + e.length + 4, 0);
        pendingType = SSZ_MEDIA_TYPE;
      }
      const tPending = performance.now();
      check(pendingTxs.length === perBlock, `execution offered ${pendingTxs.length} of ${perBlock}`);
      // (b) Assemble and sign.
      // As each validator client builds it: the JSON one from decoded transactions, the SSZ one
      // with the Merkle root hashed from execution's envelopes (a transaction hash is SHA3 of its envelope).
      const vrfSeed = parseHex(duty.vrf_seed, 'vrf_seed', 32);
      const header: BlockHeader = {
        index: head.index + 1,
        timestampMs: slotStartMs(genesis, slot),
        parentHash: parseHex(head.root, 'head', 32),
        merkleRoot: envelopes === undefined ? bodyMerkleRoot(pendingTxs, [], []) : blockMerkleRoot(envelopes.map((e) => sha3(e)), [], []),
        validatorId: parseHex(validators[v]!.address, 'address', 20),
        vrfProof: vrfProve(validators[v]!.mldsa, vrfSeed, chainId),
        vrfSeed,
        randaoReveal: reveal,
        stateRoot: parseHex(head.state_root, 'head state root', 32),
      };
      const block: Block = signBlock(header, pendingTxs, validators[v]!.mldsa, chainId, v);
      const tSigned = performance.now();
      // (c) Propose: the beacon checks it, execution imports it (newPayload), the beacon stores it.
      let proposalBytes: number;
      let hash: string;
      if (wire === 'json') {
        const body = JSON.stringify(blockToJson(block));
        proposalBytes = Buffer.byteLength(body);
        const res = await fetch(`${beacon!.url}/api/v1/validator/blocks/propose`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
        const j = (await res.json()) as { success: boolean; data?: { block_hash: string }; error?: { code: string; message: string } };
        check(j.success, `JSON proposal accepted: ${JSON.stringify(j.error)}`);
        hash = j.data!.block_hash;
      } else {
        const ssz = encodeBlock(block, envelopes);
        proposalBytes = ssz.length;
        hash = (await beaconClient.proposeBlock(ssz)).block_hash;
      }
      const tEnd = performance.now();
      const split = cpu.finish((tEnd - tStart) / 1000, { verifiers });
      check(chain.head().root === hash && exec.admission.pool.size === 0, 'the proposal became the head and drained the pool');
      return { wire, pendingMs: tPending - tStart, pendingBytes, pendingType, signMs: tSigned - tPending, proposeMs: tEnd - tSigned, proposalBytes, totalMs: tEnd - tStart, cpu: split };
    };

    // The beacon builds the block; the validator signs it in place and posts it.
    const proposeTemplate = async (slot: number, v: number, cpu: ReturnType<typeof startCpu>, tStart: number): Promise<ProposalSteps> => {
      const t = await beaconClient.produceBlock(slot, v);
      const tPending = performance.now();
      const header = headerOfBlockBytes(t.block);
      check(envelopesOfBlockBytes(t.block).length === perBlock, 'the beacon packed every pending transaction');
      const randaoReveal = randao[v]!.next(t.randaoLast ?? randao[v]!.commitment());
      const vrfProof = vrfProve(validators[v]!.mldsa, header.vrfSeed, chainId);
      const { signature } = signBlock(header, [], validators[v]!.mldsa, chainId, v);
      const ssz = withProposerFields(t.block, { vrfProof, randaoReveal, signature });
      const tSigned = performance.now();
      const hash = (await beaconClient.proposeBlock(ssz)).block_hash;
      const tEnd = performance.now();
      const split = cpu.finish((tEnd - tStart) / 1000, { verifiers });
      check(chain.head().root === hash && exec.admission.pool.size === 0, 'the proposal became the head and drained the pool');
      return { wire: 'template', pendingMs: tPending - tStart, pendingBytes: t.block.length, pendingType: SSZ_MEDIA_TYPE, signMs: tSigned - tPending, proposeMs: tEnd - tSigned, proposalBytes: ssz.length, totalMs: tEnd - tStart, cpu: split };
    };

    for (let i = 0; i < WARM_RUNS; i++) {
      for (const wire of WIRES) {
        await admit();
        await proposeOne(wire);
      }
    }
    const runs: ProposalSteps[] = [];
    const profiles: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      for (const wire of WIRES) {
        await admit();
        if (opts.profileDir === undefined) runs.push(await proposeOne(wire));
        else {
          // The main thread's profile of one proposal per wire (the middle run).
          const p = await profiled(opts.profileDir, `propose-${wire}-${i}`, () => proposeOne(wire));
          runs.push(p.value);
          if (i === Math.floor(RUNS / 2)) profiles.push(`  ${wire.toUpperCase()} proposal profile (${p.path}):\n${summarizeProfile(p.profile)}`);
        }
      }
    }
    // What newPayload carries for the last block, both ways (the beacon sends SSZ; it sent hex JSON before).
    const stored = await chain.body(chain.head().root);
    check(stored !== undefined, 'the head block is stored');
    const newPayloadSszBytes = stored!.length;
    const newPayloadJsonBytes = Buffer.byteLength(JSON.stringify(blockToJson(decodeBlock(stored!))));

    const slotMs = genesis.config.slot_seconds * 1000;
    const of = (wire: Wire) => runs.filter((r) => r.wire === wire);
    const med = (wire: Wire, f: (r: ProposalSteps) => number) => median(of(wire).map(f));
    const perTx = (wire: Wire, role: string) => median(of(wire).map((r) => ((r.cpu.seconds[role] ?? 0) * 1e6) / perBlock));
    const row = (wire: Wire): BenchResult => {
      const ms = med(wire, (r) => r.totalMs);
      return {
        name: wire === 'template' ? `proposal path, full block (${perBlock} transfers), beacon-built` : `proposal path, full block (${perBlock} transfers), ${wire.toUpperCase()} wire`,
        backend: wire === 'template' ? `template (getPayload) → sign in place → propose → newPayload, median of ${RUNS}` : `pending → sign → propose → newPayload, median of ${RUNS}`,
        unit: 'ms',
        value: ms,
        ratio: ms / slotMs,
        note: `${((ms / slotMs) * 100).toFixed(1)}% of the ${slotMs} ms devnet slot; main ${perTx(wire, 'main').toFixed(0)} µs/tx`,
      };
    };
    const jsonMs = med('json', (r) => r.totalMs);
    const sszMs = med('ssz', (r) => r.totalMs);
    const templateMs = med('template', (r) => r.totalMs);
    const results: BenchResult[] = [
      row('json'),
      row('ssz'),
      { name: 'proposal path, SSZ vs JSON', backend: 'ratio of the medians', unit: 'ms', value: jsonMs - sszMs, ratio: sszMs / jsonMs, note: `SSZ takes ${(sszMs / jsonMs).toFixed(2)}x the JSON time (${(jsonMs - sszMs).toFixed(0)} ms saved)` },
      row('template'),
      { name: 'proposal path, beacon-built vs validator-built (SSZ)', backend: 'ratio of the medians: slot start to block imported', unit: 'ms', value: sszMs - templateMs, ratio: templateMs / sszMs, note: `beacon-built takes ${(templateMs / sszMs).toFixed(2)}x the validator-built time (limit 1.00x: the beacon must not make it slower)` },
      { name: 'pending transactions body', backend: 'SSZ envelope list', unit: 'bytes', value: med('ssz', (r) => r.pendingBytes), ratio: med('ssz', (r) => r.pendingBytes) / med('json', (r) => r.pendingBytes), note: `${(med('ssz', (r) => r.pendingBytes) / med('json', (r) => r.pendingBytes)).toFixed(2)}x the JSON body (${(med('json', (r) => r.pendingBytes) / MB).toFixed(1)} MB)` },
      { name: 'proposal body', backend: 'SSZ block', unit: 'bytes', value: med('ssz', (r) => r.proposalBytes), ratio: med('ssz', (r) => r.proposalBytes) / med('json', (r) => r.proposalBytes), note: `${(med('ssz', (r) => r.proposalBytes) / med('json', (r) => r.proposalBytes)).toFixed(2)}x the JSON body (${(med('json', (r) => r.proposalBytes) / MB).toFixed(1)} MB)` },
      { name: 'newPayload body (beacon → execution)', backend: 'SSZ block', unit: 'bytes', value: newPayloadSszBytes, ratio: newPayloadSszBytes / newPayloadJsonBytes, note: `${(newPayloadSszBytes / newPayloadJsonBytes).toFixed(2)}x the hex JSON it was (${(newPayloadJsonBytes / MB).toFixed(1)} MB)` },
    ];
    const details: ProposeDetails = { transactions: perBlock, runs, newPayloadSszBytes, newPayloadJsonBytes };
    if (opts.print !== false) {
      console.log(formatTable(`propose (${((performance.now() - t0) / 1000).toFixed(0)} s)`, results));
      for (const wire of WIRES) {
        const f = (g: (r: ProposalSteps) => number) => med(wire, g).toFixed(0);
        const types = [...new Set(of(wire).map((r) => r.pendingType.split(';')[0]))].join(', ');
        console.log(`  ${wire.toUpperCase()}: pending ${f((r) => r.pendingMs)} ms (${types}), sign ${f((r) => r.signMs)} ms, propose+newPayload ${f((r) => r.proposeMs)} ms; ${formatCpu(of(wire)[Math.floor(RUNS / 2)]!.cpu, perBlock)}`);
        console.log(`    totals ms: [${of(wire).map((r) => r.totalMs.toFixed(0)).join(', ')}]`);
      }
      for (const p of profiles) console.log(p);
    }
    return { results, details };
  } finally {
    await beacon?.stop().catch(() => undefined);
    await exec.stop();
    await rm(dir, { recursive: true, force: true });
    await initSignatureBackend(previous as 'noble' | 'liboqs');
  }
}
