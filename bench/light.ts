/**
 * Light-client finality updates at 4, 64 and 1,024 validators, from the real encoding: ML-DSA
 * signatures do not aggregate, so an update is the finalized header plus one signed attestation
 * (3,437 SSZ bytes, 3,309 of them signature) per signer of ≥ 2/3 of the stake. Each size is the
 * beacon's answer as served (JSON, hex) and as SSZ, beside the 1 MiB request-body limit a beacon
 * or bridge endpoint accepts (DEFAULT_BODY_LIMIT), since a relayed update must fit one request.
 * Verification (parse + every signature + the 2/3 count, as `svc light verify` does) is timed
 * beside the devnet preset's slot: a client must check an update faster than updates can come.
 * Keys are derived once per run; every signature is real and deterministic.
 */
import { toHex } from '../src/core/codec/bytes.js';
import { initSignatureBackend, keygenFromSeed, signatureBackend } from '../src/core/crypto/mldsa.js';
import { PRESETS } from '../src/core/genesis/genesis.js';
import { finalityUpdateFromJson, type TrustedValidator } from '../src/core/light/types.js';
import { participationBits, verifyFinalityUpdate } from '../src/core/light/verify.js';
import { type Attestation, attestationToJson, encodeAttestation, signAttestation } from '../src/core/types/attestation.js';
import { type BlockHeader, blockHash, headerToJson } from '../src/core/types/block.js';
import { BlockHeaderSsz } from '../src/core/types/ssz.js';
import { DEFAULT_BODY_LIMIT } from '../src/node/shared/http.js';
import type { FinalityUpdateJson } from '../src/api/light.js';
import { type BenchResult, formatTable } from './harness.js';

const SIZES = [4, 64, 1024] as const;
const CHAIN_ID = 'svc-bench';
const SLOTS_PER_EPOCH = 4;
const STAKE = 32n * 10n ** 18n;
/** Timed verifications per size (the median is reported). */
const RUNS: Record<(typeof SIZES)[number], number> = { 4: 31, 64: 9, 1024: 3 };

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`light bench self-check failed: ${what}`);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** An update for `n` equal validators signed by the fewest that reach 2/3 (ceil(2n / 3)). */
function makeUpdate(n: number, seedBase: number): { json: FinalityUpdateJson; validators: Map<number, TrustedValidator>; sszBytes: number } {
  const keys = Array.from({ length: n }, (_, i) => {
    const seed = new Uint8Array(32);
    new DataView(seed.buffer).setUint32(0, seedBase + i);
    return keygenFromSeed(seed);
  });
  const header: BlockHeader = {
    index: 40, timestampMs: 1_700_000_000_000, parentHash: new Uint8Array(32).fill(1), merkleRoot: new Uint8Array(32).fill(2), validatorId: new Uint8Array(20).fill(3),
    vrfProof: new Uint8Array(3309).fill(4), vrfSeed: new Uint8Array(32).fill(5), randaoReveal: new Uint8Array(32).fill(6), stateRoot: new Uint8Array(32).fill(7),
  };
  const root = blockHash(header);
  const target = new Uint8Array(32).fill(8);
  const signers = Math.ceil((2 * n) / 3);
  const atts: Attestation[] = keys.slice(0, signers).map((k, i) =>
    signAttestation(i, { slot: 11 * SLOTS_PER_EPOCH + (i % SLOTS_PER_EPOCH), beaconBlockRoot: target, source: { epoch: 10, root }, target: { epoch: 11, root: target } }, k, CHAIN_ID),
  );
  const json: FinalityUpdateJson = {
    finalized: { epoch: 10, root: toHex(root) },
    target: { epoch: 11, root: toHex(target) },
    header: headerToJson(header),
    attestations: atts.map(attestationToJson),
    participation: toHex(participationBits(atts.map((a) => a.validatorIndex), n)),
    signers,
    signed_stake: (BigInt(signers) * STAKE).toString(),
    active_stake: (BigInt(n) * STAKE).toString(),
    size_bytes: 0,
  };
  const sszBytes = BlockHeaderSsz.serialize(header).length + atts.reduce((s, a) => s + encodeAttestation(a).length, 0) + Math.ceil(n / 8) + 2 * (8 + 32);
  json.size_bytes = sszBytes;
  return { json, validators: new Map(keys.map((k, i) => [i, { index: i, publicKey: k.publicKey, stake: STAKE, active: true }])), sszBytes };
}

/** Runs the light suite and prints its table unless `print` is false. */
export async function runLightBench(opts: { print?: boolean } = {}): Promise<{ results: BenchResult[]; details: Record<string, unknown> }> {
  await initSignatureBackend('liboqs');
  const backend = signatureBackend().name;
  const slotMs = PRESETS.devnet.slot_seconds * 1000;
  const results: BenchResult[] = [];
  const details: Record<string, unknown> = { backend, bodyLimit: DEFAULT_BODY_LIMIT, slotMs };
  for (const n of SIZES) {
    const { json, validators, sszBytes } = makeUpdate(n, n * 10_000);
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
  }
  if (opts.print !== false) console.log(formatTable('Light client: finality updates (ML-DSA signatures do not aggregate)', results));
  return { results, details };
}
