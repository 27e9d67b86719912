/**
 * Light-client finality updates at 4, 64 and 1,024 validators, from the real encoding: ML-DSA
 * signatures do not aggregate, so an update is the finalized header plus one signed attestation
 * (3,437 SSZ bytes, 3,309 of them signature) per signer of ≥ 2/3 of the stake. Each size is the
 * beacon's answer as served (JSON, hex) and as SSZ, beside the 1 MiB request-body limit a beacon
 * or bridge endpoint accepts (DEFAULT_BODY_LIMIT), since a relayed update must fit one request.
 * Verification (parse + every signature + the 2/3 count, as `svc light verify` does) is timed
 * beside the devnet preset's slot: a client must check an update faster than updates can come.
 * Set changes (docs/light-client.md "Set changes") at the same sizes: an update plus the whole
 * registry's proof, verified as the client applies it; and the walk from genesis across 10 of them.
 * The bridge's set update (the same change as an update_set transaction) where its votes fit one.
 * Keys are derived once per run; every signature is real and deterministic.
 */
import { toHex } from '../src/core/codec/bytes.js';
import { initSignatureBackend, keygenFromSeed, signatureBackend } from '../src/core/crypto/mldsa.js';
import { PRESETS } from '../src/core/genesis/genesis.js';
import { finalityUpdateFromJson, type TrustedValidator } from '../src/core/light/types.js';
import { standaloneRegistryProof } from '../src/core/light/registry.js';
import { applySetChange, followSetChanges, setChangeFromJson } from '../src/core/light/set-change.js';
import type { RegistryEntry } from '../src/core/consensus/registry.js';
import { MAX_BRIDGE_SIGNERS, MAX_SET_CHANGE_PAGE_BYTES, MAX_TX_DATA_BYTES } from '../src/core/constants.js';
import { BridgeOp } from '../src/core/bridge/types.js';
import { decodeBridgeOp, encodeBridgeOp } from '../src/core/bridge/ops.js';
import { registryProofFromBody, setUpdateFromChange } from '../src/core/bridge/set-update.js';
import { bridgeGas } from '../src/core/bridge/gas.js';
import { participationBits, verifyFinalityUpdate } from '../src/core/light/verify.js';
import { type Attestation, attestationToJson, encodeAttestation, signAttestation } from '../src/core/types/attestation.js';
import { type BlockHeader, blockHash, headerToJson } from '../src/core/types/block.js';
import { BlockHeaderSsz } from '../src/core/types/ssz.js';
import { DEFAULT_BODY_LIMIT } from '../src/node/shared/http.js';
import type { FinalityUpdateJson, SetChangeJson } from '../src/api/light.js';
import { type BenchResult, formatTable } from './harness.js';

const SIZES = [4, 64, 1024] as const;
const CHAIN_ID = 'svc-bench';
const SLOTS_PER_EPOCH = 4;
const STAKE = 32n * 10n ** 18n;
/** Timed verifications per size (the median is reported). */
const RUNS: Record<(typeof SIZES)[number], number> = { 4: 31, 64: 9, 1024: 3 };
/** Set changes walked from genesis, and timed walks (the median is reported). */
const WALK_CHANGES = 10;
const WALK_RUNS = 3;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`light bench self-check failed: ${what}`);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `n` deterministic validator keys from `seedBase`. */
function benchKeys(n: number, seedBase: number): Array<ReturnType<typeof keygenFromSeed>> {
  return Array.from({ length: n }, (_, i) => {
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, seedBase + i);
    return keygenFromSeed(seed);
  });
}

/**
 * The finality update of checkpoint `epoch` (its header naming `stateRoot`) signed by the first
 * `signers` of `keys` over a registry of `n`, with its SSZ size.
 */
function signedUpdate(keys: ReadonlyArray<ReturnType<typeof keygenFromSeed>>, n: number, signers: number, epoch: number, stateRoot: Uint8Array): { json: FinalityUpdateJson; sszBytes: number } {
  const header: BlockHeader = {
    index: epoch * SLOTS_PER_EPOCH, timestampMs: 1_700_000_000_000, parentHash: new Uint8Array(32).fill(1), merkleRoot: new Uint8Array(32).fill(2), validatorId: new Uint8Array(20).fill(3),
    vrfProof: new Uint8Array(3309).fill(4), vrfSeed: new Uint8Array(32).fill(5), randaoReveal: new Uint8Array(32).fill(6), stateRoot,
  };
  const root = blockHash(header);
  const target = new Uint8Array(32).fill(8);
  const atts: Attestation[] = keys.slice(0, signers).map((k, i) =>
    signAttestation(i, { slot: (epoch + 1) * SLOTS_PER_EPOCH + (i % SLOTS_PER_EPOCH), beaconBlockRoot: target, source: { epoch, root }, target: { epoch: epoch + 1, root: target } }, k, CHAIN_ID),
  );
  const sszBytes = BlockHeaderSsz.serialize(header).length + atts.reduce((s, a) => s + encodeAttestation(a).length, 0) + Math.ceil(n / 8) + 2 * (8 + 32);
  const json: FinalityUpdateJson = {
    finalized: { epoch, root: toHex(root) },
    target: { epoch: epoch + 1, root: toHex(target) },
    header: headerToJson(header),
    attestations: atts.map(attestationToJson),
    participation: toHex(participationBits(atts.map((a) => a.validatorIndex), n)),
    signers,
    signed_stake: (BigInt(signers) * STAKE).toString(),
    active_stake: (BigInt(n) * STAKE).toString(),
    size_bytes: sszBytes,
  };
  return { json, sszBytes };
}

const signersOf = (n: number): number => Math.ceil((2 * n) / 3);
const trustedSet = (keys: ReadonlyArray<ReturnType<typeof keygenFromSeed>>): Map<number, TrustedValidator> =>
  new Map(keys.map((k, i) => [i, { index: i, publicKey: k.publicKey, stake: STAKE, active: true }]));
const registryOf = (keys: ReadonlyArray<ReturnType<typeof keygenFromSeed>>): RegistryEntry[] =>
  keys.map((k, i) => ({ index: i, address: toHex(new Uint8Array(20).fill(i & 0xff)), public_key: toHex(k.publicKey), stake: STAKE.toString(), randao_commitment: toHex(new Uint8Array(32).fill(9)), active: true, slashed: false }));

/** A set change as the beacon serves it: the finality of checkpoint `epoch`, signed by 2/3 of `prev` keys, proving the registry of `next` keys. */
function makeSetChange(prev: ReadonlyArray<ReturnType<typeof keygenFromSeed>>, next: ReadonlyArray<ReturnType<typeof keygenFromSeed>>, epoch: number): { json: SetChangeJson; sszBytes: number } {
  const { stateRoot, proof } = standaloneRegistryProof(registryOf(next));
  const { json, sszBytes } = signedUpdate(prev, prev.length, signersOf(prev.length), epoch, stateRoot);
  return { json: { finality: json, registry: proof, validators: next.length, active_stake: (BigInt(next.length) * STAKE).toString() }, sszBytes };
}

/** Runs the light suite and prints its table unless `print` is false. */
export async function runLightBench(opts: { print?: boolean } = {}): Promise<{ results: BenchResult[]; details: Record<string, unknown> }> {
  await initSignatureBackend('liboqs');
  const backend = signatureBackend().name;
  const slotMs = PRESETS.devnet.slot_seconds * 1000;
  const results: BenchResult[] = [];
  const details: Record<string, unknown> = { backend, bodyLimit: DEFAULT_BODY_LIMIT, slotMs };
  for (const n of SIZES) {
    const keys = benchKeys(n, n * 10_000);
    const validators = trustedSet(keys);
    const { json, sszBytes } = signedUpdate(keys, n, signersOf(n), 10, new Uint8Array(32).fill(7));
    const text = JSON.stringify({ success: true, data: json });
    const trusted = { chainId: CHAIN_ID, slotsPerEpoch: SLOTS_PER_EPOCH, root: new Uint8Array(32), validators };
    const ms: number[] = [];
    for (let r = 0; r < RUNS[n]; r++) {
      const t = performance.now();
      // As the client does: parse the served JSON, then every check.
      const v = verifyFinalityUpdate(finalityUpdateFromJson((JSON.parse(text) as { data: unknown }).data), trusted);
      ms.push(performance.now() - t);
      check(v.signers === json.signers && 3n * v.signedStake >= 2n * v.activeStake, `${n} validators: the update verifies`);
    }
    const signers = json.signers;
    const verifyMs = median(ms);
    results.push(
      { name: `update size, ${n} validators (${signers} signers), SSZ`, backend: 'header + signed attestations', unit: 'bytes', value: sszBytes, ratio: sszBytes / DEFAULT_BODY_LIMIT, note: `${(sszBytes / DEFAULT_BODY_LIMIT).toFixed(3)}x the 1 MiB body limit` },
      { name: `update size, ${n} validators, JSON as served`, backend: 'GET /api/v1/light/finality_update', unit: 'bytes', value: text.length, ratio: text.length / DEFAULT_BODY_LIMIT, note: `${(text.length / DEFAULT_BODY_LIMIT).toFixed(3)}x the 1 MiB body limit` },
      { name: `update verification, ${n} validators`, backend: `${backend}, parse + ${signers} verifies, median of ${RUNS[n]}`, unit: 'ms', value: verifyMs, ratio: verifyMs / slotMs, note: `${(verifyMs / slotMs).toPrecision(2)}x a ${slotMs / 1000} s slot` },
    );
    details[`validators_${n}`] = { signers, sszBytes, jsonBytes: text.length, verifyMs: ms };

    // A set change at this size: the same set adds one validator, proven in the registry.
    const change = makeSetChange(keys, [...keys, ...benchKeys(1, n * 10_000 + n)], 10);
    const changeText = JSON.stringify({ success: true, data: { set_changes: [change.json], next_from_epoch: null } });
    const changeMs: number[] = [];
    for (let r = 0; r < RUNS[n]; r++) {
      const t = performance.now();
      const page = (JSON.parse(changeText) as { data: { set_changes: unknown[] } }).data;
      const moved = applySetChange(trusted, setChangeFromJson(page.set_changes[0]));
      changeMs.push(performance.now() - t);
      check(moved.validators.size === n + 1, `${n} validators: the set change moves to ${n + 1}`);
    }
    const changeVerifyMs = median(changeMs);
    results.push(
      { name: `set change size, ${n} -> ${n + 1} validators, JSON as served`, backend: 'GET /api/v1/light/set_changes (one change)', unit: 'bytes', value: changeText.length, ratio: changeText.length / MAX_SET_CHANGE_PAGE_BYTES, note: `${(changeText.length / MAX_SET_CHANGE_PAGE_BYTES).toFixed(3)}x the 8 MiB page cap` },
      { name: `set change verification, ${n} -> ${n + 1} validators`, backend: `${backend}, parse + ${signers} verifies + ${n + 2} storage proofs, median of ${RUNS[n]}`, unit: 'ms', value: changeVerifyMs, ratio: changeVerifyMs / slotMs, note: `${(changeVerifyMs / slotMs).toPrecision(2)}x a ${slotMs / 1000} s slot` },
    );
    details[`set_change_${n}`] = { jsonBytes: changeText.length, verifyMs: changeMs };

    // The same change as a bridge's update_set transaction (docs/bridge.md "Set updates"), when its
    // votes fit one update (MAX_BRIDGE_SIGNERS); beside the transaction data limit it must fit.
    if (signers <= MAX_BRIDGE_SIGNERS) {
      const data = encodeBridgeOp({ op: BridgeOp.UpdateSet, body: setUpdateFromChange(new Uint8Array(32).fill(0xbb), setChangeFromJson(change.json)) });
      const updateMs: number[] = [];
      for (let r = 0; r < RUNS[n]; r++) {
        const t = performance.now();
        const o = decodeBridgeOp(data);
        if (o.op !== BridgeOp.UpdateSet) throw new Error('light bench self-check failed: not an update_set');
        const moved = applySetChange(trusted, { finality: o.body.finality, registry: registryProofFromBody(o.body.registry, o.body.finality.header.stateRoot) });
        updateMs.push(performance.now() - t);
        check(moved.validators.size === n + 1, `${n} validators: the bridge set update moves to ${n + 1}`);
      }
      const updateVerifyMs = median(updateMs);
      results.push(
        { name: `bridge set update, ${n} -> ${n + 1} validators, transaction data`, backend: `update_set, ${signers} votes, ${bridgeGas(data)} gas`, unit: 'bytes', value: data.length, ratio: data.length / MAX_TX_DATA_BYTES, note: `${(data.length / MAX_TX_DATA_BYTES).toFixed(3)}x the 256 KiB transaction data limit` },
        { name: `bridge set update verification, ${n} -> ${n + 1} validators`, backend: `${backend}, SSZ decode + the light client's rule, median of ${RUNS[n]}`, unit: 'ms', value: updateVerifyMs, ratio: updateVerifyMs / slotMs, note: `${(updateVerifyMs / slotMs).toPrecision(2)}x a ${slotMs / 1000} s slot` },
      );
      details[`bridge_set_update_${n}`] = { bytes: data.length, gas: bridgeGas(data).toString(), verifyMs: updateMs };
    }
  }

  // From genesis across 10 set changes, 64 validators growing by one at each: the walk
  // `svc light verify` does before the latest update (parse and apply, in order).
  const all = benchKeys(64 + WALK_CHANGES, 900_000);
  const walk = Array.from({ length: WALK_CHANGES }, (_, j) => makeSetChange(all.slice(0, 64 + j), all.slice(0, 65 + j), 10 * (j + 1)).json);
  const walkText = JSON.stringify({ success: true, data: { set_changes: walk, next_from_epoch: null } });
  const walkMs: number[] = [];
  for (let r = 0; r < WALK_RUNS; r++) {
    const t = performance.now();
    const page = (JSON.parse(walkText) as { data: { set_changes: unknown[] } }).data;
    const end = followSetChanges({ chainId: CHAIN_ID, slotsPerEpoch: SLOTS_PER_EPOCH, root: new Uint8Array(32), validators: trustedSet(all.slice(0, 64)) }, page.set_changes.map((c) => setChangeFromJson(c)));
    walkMs.push(performance.now() - t);
    check(end.validators.size === 64 + WALK_CHANGES && end.epoch === 10 * WALK_CHANGES, 'the walk ends at the last set');
  }
  const walkVerifyMs = median(walkMs);
  results.push({ name: `from genesis across ${WALK_CHANGES} set changes (64 -> ${64 + WALK_CHANGES} validators)`, backend: `${backend}, parse + apply each, median of ${WALK_RUNS}`, unit: 'ms', value: walkVerifyMs, ratio: walkVerifyMs / slotMs, note: `${(walkVerifyMs / slotMs).toPrecision(2)}x a ${slotMs / 1000} s slot; ${walkText.length} JSON bytes` });
  details.walk = { changes: WALK_CHANGES, jsonBytes: walkText.length, verifyMs: walkMs };
  if (opts.print !== false) console.log(formatTable('Light client: finality updates (ML-DSA signatures do not aggregate)', results));
  return { results, details };
}
