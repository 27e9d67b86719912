/**
 * The beacon's checks of a proposed block before execution sees it: slot timing, height,
 * proposer draw, VRF seed and proof, header signature, RANDAO reveal, merkle root, included
 * slashings and attestations; and the checks of a copy of a block already accepted.
 */
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { checkInclusion, InclusionError, type InclusionView } from '../../core/consensus/inclusion.js';
import { proposerForSlot } from '../../core/consensus/proposer.js';
import { applyReveal, type RandaoState, registerCommitment } from '../../core/consensus/randao.js';
import { applyRecommitments, blockRecommitments, type BlockRecommitments } from '../../core/consensus/recommit.js';
import { SlashingError } from '../../core/consensus/slashing.js';
import { sha3 } from '../../core/crypto/hash.js';
import { verify } from '../../core/crypto/mldsa.js';
import { vrfVerify } from '../../core/crypto/vrf.js';
import { epochOfSlot, type Genesis } from '../../core/genesis/genesis.js';
import { type Block, blockMerkleRoot, bodyMerkleRoot, canonicalHeaderBytes, headerSigningHash, signedHeaderOf } from '../../core/types/block.js';
import { txHash } from '../../core/types/transaction.js';
import type { RegistryEntry } from '../../api/execution.js';
import type { Logger } from '../../util/log.js';
import { envelopesOfBlockBytes, sameBytes, signatureOfBlockBytes } from '../../core/types/block-bytes.js';
import { BeaconError, IncludedAttestationError, IncludedSlashingError } from './errors.js';
import type { BeaconBlockRecord } from './chain-storage.js';
import type { BeaconMetrics } from './metrics.js';
import { proposerCandidates, type RandaoBlock } from './proposer-duties.js';
import type { SlashingMonitor } from './slashing.js';

/** Refusals raised before a block's signature is checked: the signature is checked afterwards for slashing detection. */
export const REFUSED_BEFORE_SIGNATURE: ReadonlySet<string> = new Set(['UNKNOWN_PARENT', 'INVALID_TIMESTAMP', 'INVALID_SLOT', 'INVALID_HEIGHT', 'INACTIVE_VALIDATOR', 'WRONG_VRF_SEED', 'WRONG_PROPOSER', 'INVALID_VRF_PROOF']);

/** Half a slot of clock disparity tolerated for proposals from the future. */
const CLOCK_DISPARITY_FRACTION = 0.5;

/** What the checks read of the chain; `registry` is read at each use, as it may be refreshed meanwhile. */
export interface ProposalContext {
  genesis: Genesis;
  now(): number;
  registry(): readonly RegistryEntry[];
  metrics: BeaconMetrics;
  log: Logger;
  slashing: SlashingMonitor;
  /** A block's stored SSZ bytes; undefined for genesis or an unknown root. */
  body(root: string): Promise<Uint8Array | undefined>;
  /** The mix seeding `epoch` on the branch ending at `parentRoot`. */
  seedMix(parentRoot: string, epoch: number): Uint8Array;
  /** The inclusion rules' view of the branch ending at `parentRoot` for a block at `slot`. */
  inclusionView(parentRoot: string, slot: number): InclusionView;
}

/** A proposal that passed the beacon's checks, with what importing it needs. */
export interface CheckedProposal {
  slot: number;
  /** The proposer's address (hex). */
  proposer: string;
  validator: RegistryEntry;
  /** RANDAO state after the block (reveal and re-commitments applied). */
  randao: RandaoState;
  recommits: BlockRecommitments;
}

/**
 * Runs every beacon check of `block` on `parent` (throws BeaconError naming the rule); records
 * its header with the slashing detector once its signature is known good. `received` is the
 * block's encoding when it arrived as bytes.
 */
export async function checkProposal(ctx: ProposalContext, block: Block, received: Uint8Array | undefined, parent: RandaoBlock): Promise<CheckedProposal> {
  const h = block.header;
  const genesis = ctx.genesis;
  const cfg = genesis.config;
  const sinceGenesis = h.timestampMs - genesis.genesis_time * 1000;
  const slotMs = cfg.slot_seconds * 1000;
  if (sinceGenesis <= 0 || sinceGenesis % slotMs !== 0) throw new BeaconError('INVALID_TIMESTAMP', `timestamp ${h.timestampMs} is not the start of a slot after genesis`);
  const slot = sinceGenesis / slotMs;
  if (slot <= parent.slot) throw new BeaconError('INVALID_SLOT', `slot ${slot} is not after the parent's slot ${parent.slot}`);
  if (h.timestampMs > ctx.now() + slotMs * CLOCK_DISPARITY_FRACTION) throw new BeaconError('FUTURE_SLOT', `slot ${slot} has not started yet`);
  if (h.index !== parent.index + 1) throw new BeaconError('INVALID_HEIGHT', `index ${h.index} does not follow the parent's ${parent.index}`);
  const proposer = toHex(h.validatorId);
  const validator = ctx.registry().find((v) => v.address === proposer);
  if (!validator) throw new BeaconError('UNKNOWN_VALIDATOR', `Unknown validator ${proposer}`);
  if (!validator.active || BigInt(validator.stake) < BigInt(cfg.min_validator_stake)) throw new BeaconError('INACTIVE_VALIDATOR', `validator ${validator.index} is not active and staked`);
  const epoch = epochOfSlot(genesis, slot);
  const expected = proposerForSlot(proposerCandidates(genesis, ctx.registry()), ctx.seedMix(parent.root, epoch), slot);
  if (toHex(h.vrfSeed) !== toHex(expected.seed)) throw new BeaconError('WRONG_VRF_SEED', `vrf_seed ${toHex(h.vrfSeed)} is not the seed of slot ${slot} (${toHex(expected.seed)})`);
  if (expected.index !== validator.index) throw new BeaconError('WRONG_PROPOSER', `validator ${validator.index} is not the proposer of slot ${slot} (validator ${expected.index} is)`);
  const publicKey = parseHex(validator.public_key, 'public_key');
  let t = performance.now();
  const vrfOk = vrfVerify(publicKey, h.vrfSeed, h.vrfProof, genesis.chain_id);
  ctx.metrics.vrf(performance.now() - t, vrfOk);
  if (!vrfOk) {
    throw new BeaconError('INVALID_VRF_PROOF', 'VRF proof verification failed');
  }
  const sh = signedHeaderOf(h, genesis.chain_id, validator.index);
  t = performance.now();
  const sigOk = verify(publicKey, headerSigningHash(sh), block.signature);
  ctx.metrics.signature(performance.now() - t, sigOk);
  ctx.metrics.canonicalBytes.set(canonicalHeaderBytes(sh, block.signature).length);
  if (!sigOk) throw new BeaconError('INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  await ctx.slashing.observeHeader({ header: sh, signature: block.signature });
  let randao: RandaoState;
  try {
    randao = applyReveal(withDeposits(ctx.registry(), parent.randaoState), validator.index, h.randaoReveal);
  } catch (err) {
    throw new BeaconError('INVALID_RANDAO_REVEAL', (err as Error).message);
  }
  // The signed merkle_root is what binds the included votes to the proposer: checked here, not
  // only by execution, because the beacon acts on those votes. A transaction's hash is SHA3 of
  // its envelope: a block that arrived as bytes is hashed from them, not encoded again.
  const txHashes = received === undefined ? block.transactions.map(txHash) : envelopesOfBlockBytes(received).map((e) => sha3(e));
  if (toHex(blockMerkleRoot(txHashes, block.attestations, block.slashings)) !== toHex(h.merkleRoot)) {
    throw new BeaconError('MERKLE_ROOT_MISMATCH', "the transactions, attestations and slashings do not match the header's merkle_root");
  }
  try {
    ctx.slashing.checkBlock(block.slashings);
  } catch (err) {
    if (err instanceof SlashingError) throw new IncludedSlashingError(err.slashingCode, `Block includes invalid slashing evidence: ${err.code}: ${err.message}`);
    throw err;
  }
  // Execution applies the same re-commitments (one rule, core/consensus/recommit.ts, on the registry before the block).
  const recommits = blockRecommitments(block.transactions, proposer, (a) => ctx.registry().find((v) => v.address === a), () => proposerCandidates(genesis, ctx.registry()).filter((c) => c.active).length);
  randao = applyRecommitments(randao, recommits.applied);
  try {
    checkInclusion(block.attestations, ctx.inclusionView(parent.root, slot));
  } catch (err) {
    if (err instanceof InclusionError) throw new IncludedAttestationError(err.reason, err.message);
    throw err;
  }
  return { slot, proposer, validator, randao, recommits };
}

/**
 * Checks a copy of the accepted block `known`. The block hash covers neither the signature nor
 * the transaction list, so a copy of an accepted header can carry a corrupted signature or other
 * transactions: it is refused rather than reported as the known block.
 */
export async function checkKnownCopy(ctx: ProposalContext, block: Block, received: Uint8Array | undefined, known: BeaconBlockRecord): Promise<void> {
  if (known.index === 0) return;
  const stored = await ctx.body(known.root);
  // The very bytes already accepted passed every check below.
  if (stored !== undefined && received !== undefined && sameBytes(stored, received)) return;
  if (stored === undefined || !sameBytes(signatureOfBlockBytes(stored), block.signature)) {
    const v = ctx.registry().find((x) => x.index === known.proposer_index);
    const sh = signedHeaderOf(block.header, ctx.genesis.chain_id, known.proposer_index);
    if (!v || !verify(parseHex(v.public_key, 'public_key'), headerSigningHash(sh), block.signature)) throw new BeaconError('INVALID_BLOCK_SIGNATURE', 'DILITHIUM SIGNATURE VERIFICATION FAILED');
  }
  if (toHex(bodyMerkleRoot(block.transactions, block.attestations, block.slashings)) !== toHex(block.header.merkleRoot)) throw new BeaconError('MERKLE_ROOT_MISMATCH', "the transactions, attestations and slashings do not match the header's merkle_root");
}

/**
 * Hands a block refused before its signature was checked to the slashing detector when its
 * signature is good: it may still be half of a double proposal (a second block for a slot
 * usually is refused or left on a side branch, which is the point of detecting it).
 */
export async function observeRefused(ctx: ProposalContext, block: Block): Promise<void> {
  const v = ctx.registry().find((x) => x.address === toHex(block.header.validatorId));
  if (!v || block.signature.length === 0) return;
  const sh = signedHeaderOf(block.header, ctx.genesis.chain_id, v.index);
  if (!verify(parseHex(v.public_key, 'public_key'), headerSigningHash(sh), block.signature)) return;
  await ctx.slashing.observeHeader({ header: sh, signature: block.signature }).catch((err: Error) => ctx.log.warn('slashing detector failed on a refused block', { error: err.message }));
}

// Validators registered by deposits after the parent get their commitment added on first use.
function withDeposits(registry: readonly RegistryEntry[], state: RandaoState): RandaoState {
  let s = state;
  for (const v of registry) if (!s.last.has(v.index)) s = registerCommitment(s, v.index, parseHex(v.randao_commitment, 'randao_commitment', 32));
  return s;
}
