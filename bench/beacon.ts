/**
 * Beacon-layer costs, each next to its limit:
 *  1. slot processing: `chain.processBlock(block)` from proposal verification (proposer draw, VRF
 *     proof, header signature, RANDAO reveal) to execution's acknowledgement (engine REST
 *     newPayload) and the fork-choice/store update, for an empty block and for a full 30M-gas
 *     block of 1,428 transfers from 64 prefunded senders, cold (never seen by execution, every
 *     signature verified during import) and warm (admitted to execution's pool first), against
 *     the devnet slot of 2,000 ms;
 *  2. attestation verification: `verifyAttestation` on the main thread, and the beacon's whole
 *     `chain.attest` path (registry lookup, verify, fork choice, head update), next to raw
 *     single-thread liboqs ML-DSA-65 verify (the reference).
 * Everything runs on the signature backend a beacon picks (`svc node beacon`: SVC_CRYPTO_BACKEND,
 * else svc-wasm with its key cache), which the table names.
 * One in-process ExecutionNode (memory DB) and one BeaconNode (temp data dir) on loopback, over a
 * devnet genesis whose slot 0 lies far enough in the past that every proposal's slot has started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex } from '../src/core/codec/bytes.js';
import { backendFromEnv, initSignatureBackend, loadLiboqsBackend, signatureBackend } from '../src/core/crypto/mldsa.js';
import { epochOfSlot, PRESETS, slotAt, slotStartMs } from '../src/core/genesis/genesis.js';
import { attestationSigningHash, type Attestation, signAttestation, verifyAttestation } from '../src/core/types/attestation.js';
import { type Block, buildSignedBlock } from '../src/core/types/block.js';
import { signStandardTx, type StandardTx } from '../src/core/types/transaction.js';
import { buildGenesis } from '../src/genesis/build.js';
import { BeaconNode } from '../src/node/beacon/node.js';
import { ExecutionNode } from '../src/node/execution/node.js';
import { RandaoChain } from '../src/node/validator/randao/chain.js';
import { silentLogger } from '../src/util/log.js';
import { Branch, DEV_MNEMONIC, deriveWalletKeys, mnemonicToSeed, walletPath, type WalletKeys } from '../src/wallet/derivation.js';
import { type BenchResult, cycle, formatTable, measure } from './harness.js';
import { pump } from './pump.js';

const VALIDATORS = 8;
const SENDERS = 64;
const TRANSFER_GAS = 21_000n;
const EMPTY_RUNS = 5;
const FULL_COLD_RUNS = 2;
const FULL_WARM_RUNS = 2;
/** Attestations submitted concurrently to chain.attest (validators attest at the same moment of a slot). */
const ATTEST_IN_FLIGHT = 64;
/** Distinct attestations; signing is deterministic (noble, ~8 ms each), so this sets most of the run time. */
const ATTESTATIONS = 1_000;
/** Genesis this many slots ago: room for ATTESTATIONS / VALIDATORS target epochs and every proposal. */
const SLOTS_AGO = 700;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`beacon bench self-check failed: ${what}`);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface BeaconDetails {
  emptyMs: number[];
  fullColdMs: number[];
  fullWarmMs: number[];
  fullTransactions: number;
  attestations: number;
  verifyAttestationPerSecond: number;
  chainAttestPerSecond: number;
  chainAttestStatuses: Record<string, number>;
  rawVerifyPerSecond: number;
}

/**
 * A devnet-preset chain whose genesis started `slotsAgo` slots ago, with the keys of its
 * validators and prefunded senders (from the public dev mnemonic) and the validators' RANDAO chains.
 */
export function devBenchChain(o: { validators: number; senders: number; chainId: string; networkId: number; slotsAgo: number }) {
  const { genesis } = buildGenesis({
    validators: o.validators,
    accounts: o.senders,
    preset: 'devnet',
    chainId: o.chainId,
    networkId: o.networkId,
    genesisTime: Math.floor(Date.now() / 1000) - o.slotsAgo * PRESETS.devnet.slot_seconds,
    mnemonic: DEV_MNEMONIC,
  });
  const seed = mnemonicToSeed(DEV_MNEMONIC);
  const validators: WalletKeys[] = genesis.validators.map((_, i) => deriveWalletKeys(seed, walletPath(Branch.Validators, i)));
  const accounts: WalletKeys[] = Array.from({ length: o.senders }, (_, i) => deriveWalletKeys(seed, walletPath(Branch.Accounts, i)));
  validators.forEach((k, i) => check(k.address === genesis.validators[i]!.address, `validator ${i} derives from its path`));
  const randao = validators.map((k) => new RandaoChain(k.mldsaSeed, genesis.config.randao_chain_length));
  return { genesis, chainId: genesis.chain_id, validators, accounts, randao };
}

/** Runs the beacon benchmarks and prints a table unless `print` is false. */
export async function runBeaconBench(opts: { seconds: number; print?: boolean }): Promise<{ results: BenchResult[]; details: BeaconDetails }> {
  const say = (msg: string): void => {
    if (opts.print !== false) process.stderr.write(`  ${msg}\n`);
  };
  const t0 = performance.now();
  const previous = signatureBackend().name;
  // The backend the beacon process itself would pick; raw liboqs stays the reference row.
  const backend = (await initSignatureBackend(backendFromEnv(), () => undefined)).name;
  const liboqs = await loadLiboqsBackend();

  const { genesis, chainId, validators, accounts, randao } = devBenchChain({ validators: VALIDATORS, senders: SENDERS, chainId: 'svc-bbench', networkId: 31339, slotsAgo: SLOTS_AGO });

  // Transfers for the full blocks: nonce-major, so each block spreads over every sender.
  const perBlock = Number(BigInt(genesis.config.max_gas_per_block) / TRANSFER_GAS);
  const fullBlocks = FULL_COLD_RUNS + FULL_WARM_RUNS;
  const tSign = performance.now();
  const to = parseHex('0x' + 'be'.repeat(20), 'to', 20);
  const txs: StandardTx[] = [];
  for (let i = 0; i < perBlock * fullBlocks; i++) {
    const s = i % SENDERS;
    const nonce = BigInt(Math.floor(i / SENDERS));
    txs.push(signStandardTx({ nonce, gasPrice: BigInt(genesis.config.min_gas_price), gasLimit: TRANSFER_GAS, to, value: 1n, data: new Uint8Array(0) }, accounts[s]!.mldsa, chainId));
  }
  say(`signed ${txs.length} transfers in ${((performance.now() - tSign) / 1000).toFixed(1)} s`);

  // Attestations: each validator votes once per target epoch (source the genesis checkpoint), so none is slashable.
  const dir = await mkdtemp(join(tmpdir(), 'svc-beacon-bench-'));
  let exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, submitRatePerIp: 0, faucetRatePerIpPerMinute: 0 });
  let beacon: BeaconNode | undefined;
  try {
    beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon'), host: '127.0.0.1', port: 0, executionUrl: exec.restUrl, tokenFile: join(dir, 'token'), log: silentLogger });
    check(signatureBackend().name === backend, `${backend} backend active`);
    let chain = beacon.chain;
    const root = parseHex(chain.genesisRoot, 'genesis root', 32);

    // (1) Proposals.
    const propose = async (transactions: StandardTx[]): Promise<number> => {
      const head = chain.head();
      const slot = head.slot + 1;
      check(slot <= slotAt(genesis, Date.now()), `slot ${slot} has started`);
      const duty = chain.duties(epochOfSlot(genesis, slot)).find((d) => d.slot === slot)!;
      const v = duty.validator_index;
      const reveal = randao[v]!.next(parseHex(chain.randaoLast(v)!, 'randao_last', 32));
      const block: Block = buildSignedBlock({
        chainId,
        index: head.index + 1,
        timestampMs: slotStartMs(genesis, slot),
        parentHash: parseHex(head.root, 'head', 32),
        transactions,
        key: validators[v]!.mldsa,
        validatorIndex: v,
        validatorId: parseHex(validators[v]!.address, 'address', 20),
        vrfSeed: parseHex(duty.vrf_seed, 'vrf_seed', 32),
        randaoReveal: reveal,
        stateRoot: parseHex(head.state_root, 'head state root', 32),
      });
      const tp = performance.now();
      const r = await chain.processBlock(block);
      const ms = performance.now() - tp;
      check(!r.already_known && r.transactions === transactions.length && chain.head().root === r.block_hash, 'the proposal became the head');
      return ms;
    };
    // One untimed empty proposal warms the engine client and routes.
    await propose([]);
    const emptyMs: number[] = [];
    for (let i = 0; i < EMPTY_RUNS; i++) emptyMs.push(await propose([]));
    const fullColdMs: number[] = [];
    const fullWarmMs: number[] = [];
    let next = 0;
    for (let i = 0; i < FULL_COLD_RUNS; i++) fullColdMs.push(await propose(txs.slice(next, (next += perBlock))));
    for (let i = 0; i < FULL_WARM_RUNS; i++) {
      const block = txs.slice(next, (next += perBlock));
      const admitted = await pump(block, 64, async (tx) => {
        await exec.submit(tx, 'rest');
        return undefined;
      });
      check(admitted.failed === 0 && exec.admission.pool.size === perBlock, `warm pre-admission: ${admitted.firstError}`);
      fullWarmMs.push(await propose(block));
      check(exec.admission.pool.size === 0, 'pool drained by the block');
    }

    // (2) Attestations, on fresh nodes (head genesis), so every vote's roots are the genesis root.
    await beacon.stop();
    await exec.stop();
    exec = await ExecutionNode.start({ genesis, host: '127.0.0.1', restPort: 0, rpcPort: 0, log: silentLogger, submitRatePerIp: 0, faucetRatePerIpPerMinute: 0 });
    beacon = undefined;
    beacon = await BeaconNode.start({ genesis, dataDir: join(dir, 'beacon2'), host: '127.0.0.1', port: 0, executionUrl: exec.restUrl, tokenFile: join(dir, 'token'), log: silentLogger });
    chain = beacon.chain;
    const epochs = Math.ceil(ATTESTATIONS / VALIDATORS);
    check(epochs * genesis.config.slots_per_epoch < slotAt(genesis, Date.now()), 'every attestation slot has started');
    const tAtt = performance.now();
    const atts: Attestation[] = [];
    for (let e = 1; atts.length < ATTESTATIONS; e++) {
      for (let v = 0; v < VALIDATORS && atts.length < ATTESTATIONS; v++) {
        const data = { slot: e * genesis.config.slots_per_epoch, beaconBlockRoot: root, source: { epoch: 0, root }, target: { epoch: e, root } };
        atts.push(signAttestation(v, data, validators[v]!.mldsa, chainId));
      }
    }
    say(`signed ${atts.length} attestations in ${((performance.now() - tAtt) / 1000).toFixed(1)} s`);
    const pks = validators.map((k) => k.mldsa.publicKey);
    const raws = atts.slice(0, 64).map((a) => ({ pk: pks[a.validatorIndex]!, msg: attestationSigningHash(a.validatorIndex, a.data, chainId), sig: a.signature }));
    const nextRaw = cycle(raws);
    const seconds = Math.max(1, opts.seconds);
    const rawVerifyPerSecond = measure(() => {
      const r = nextRaw();
      if (!liboqs.verify(r.pk, r.msg, r.sig)) throw new Error('raw verify failed');
    }, seconds);
    // verifyAttestation over all N distinct attestations (a full pass, after a warm-up pass on 200).
    for (const a of atts.slice(0, 200)) verifyAttestation(a, pks[a.validatorIndex]!, chainId);
    let t = performance.now();
    for (const a of atts) check(verifyAttestation(a, pks[a.validatorIndex]!, chainId), 'attestation verifies');
    const verifyAttestationPerSecond = atts.length / ((performance.now() - t) / 1000);
    // The beacon's path as many validators sharing a beacon use it: ATTEST_IN_FLIGHT at a time.
    // Checks run one at a time under the chain lock; concurrent acknowledgements share the
    // journal's synced writes.
    const statuses: Record<string, number> = {};
    t = performance.now();
    const run = await pump(atts, ATTEST_IN_FLIGHT, async (a) => {
      const r = await chain.attest(a);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      return undefined;
    });
    check(run.failed === 0, `chain.attest failed: ${run.firstError}`);
    const chainAttestPerSecond = atts.length / ((performance.now() - t) / 1000);
    say(`chain.attest statuses: ${JSON.stringify(statuses)}`);

    const slotMs = genesis.config.slot_seconds * 1000;
    const vsSlot = (ms: number): string => `${((ms / slotMs) * 100).toFixed(1)}% of the ${slotMs} ms devnet slot`;
    const results: BenchResult[] = [
      { name: 'propose, empty block', backend: `chain.propose, median of ${EMPTY_RUNS}, ${backend}`, unit: 'ms', value: median(emptyMs), ratio: median(emptyMs) / slotMs, note: vsSlot(median(emptyMs)) },
      { name: `propose, full block cold (${perBlock} transfers, 30M gas)`, backend: `chain.propose, median of ${FULL_COLD_RUNS}, ${backend}`, unit: 'ms', value: median(fullColdMs), ratio: median(fullColdMs) / slotMs, note: vsSlot(median(fullColdMs)) },
      { name: 'propose, full block warm (txs admitted first)', backend: `chain.propose, median of ${FULL_WARM_RUNS}, ${backend}`, unit: 'ms', value: median(fullWarmMs), ratio: median(fullWarmMs) / slotMs, note: vsSlot(median(fullWarmMs)) },
      { name: 'ML-DSA-65 verify, one thread', backend: 'liboqs (reference)', unit: 'ops/s', value: rawVerifyPerSecond, note: 'reference for the rows below' },
      { name: `verifyAttestation (${atts.length} distinct)`, backend: `${backend}, main thread`, unit: 'ops/s', value: verifyAttestationPerSecond, ratio: verifyAttestationPerSecond / rawVerifyPerSecond, note: `${(verifyAttestationPerSecond / rawVerifyPerSecond).toFixed(2)}x raw liboqs verify` },
      { name: `chain.attest (${atts.length}, ${ATTEST_IN_FLIGHT} in flight)`, backend: `${backend}, main thread`, unit: 'ops/s', value: chainAttestPerSecond, ratio: chainAttestPerSecond / rawVerifyPerSecond, note: `${(chainAttestPerSecond / rawVerifyPerSecond).toFixed(2)}x raw liboqs verify` },
    ];
    const details: BeaconDetails = { emptyMs, fullColdMs, fullWarmMs, fullTransactions: perBlock, attestations: atts.length, verifyAttestationPerSecond, chainAttestPerSecond, chainAttestStatuses: statuses, rawVerifyPerSecond };
    if (opts.print !== false) {
      console.log(formatTable(`beacon (${((performance.now() - t0) / 1000).toFixed(0)} s)`, results));
      const list = (xs: number[]): string => xs.map((x) => x.toFixed(1)).join(', ');
      console.log(`  propose ms: empty [${list(emptyMs)}]; full cold [${list(fullColdMs)}]; full warm [${list(fullWarmMs)}]`);
      console.log(`  chain.attest outcomes: ${Object.entries(statuses).map(([k, n]) => `${n} ${k}`).join(', ')}`);
    }
    return { results, details };
  } finally {
    await beacon?.stop().catch(() => undefined);
    await exec.stop();
    await rm(dir, { recursive: true, force: true });
    await initSignatureBackend(previous, () => undefined);
  }
}
