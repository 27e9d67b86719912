/**
 * A block's checks before its state transition: the spec's steps 1 to 5 in order (Merkle root,
 * transaction signatures, registered proposer, block signature, VRF proof), the proof a second
 * copy of a stored block must give, and the block's slashing evidence. Judged against
 * execution's own registry, never taken from the beacon.
 */
import { SLASHING_PENALTY_DIVISOR } from '../../core/constants.js';
import { type SlashingEvidence, SlashingError, checkBlockEvidence } from '../../core/consensus/slashing.js';
import { BlockError, TxError } from '../../core/errors.js';
import { bytesEqual, toHex } from '../../core/codec/bytes.js';
import { vrfVerify } from '../../core/crypto/vrf.js';
import { verify } from '../../core/crypto/mldsa.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type Block, blockMerkleRoot, canonicalHeaderBytes, headerSigningHash, signedHeaderOf } from '../../core/types/block.js';
import type { RegistryEntry } from '../../api/execution.js';
import { txFail } from './block-execution.js';
import type { BlockRecord, BlockStore } from './blocks.js';
import type { ConsensusFields } from './consensus-fields.js';
import type { Registry, SlashedChange } from './registry.js';
import type { SignatureVerifier, VerifyResult } from './verifier.js';

/** Where signature-check timings go (the node's metrics). */
export interface SignatureObserver {
  signatureChecked(kind: 'block' | 'vrf', ms: number, ok: boolean, canonicalBytes?: number): void;
}

/** A block that passed steps 1 to 5: its transactions' hashes and signers, and its proposer. */
export interface CheckedBlock {
  verified: VerifyResult[];
  /** The transactions' hashes as bytes, in order. */
  txHashes: Uint8Array[];
  proposer: string;
  validator: RegistryEntry;
}

/** Runs a block's checks that come before its execution. */
export class BlockValidator {
  constructor(
    private readonly genesis: Genesis,
    private readonly registry: Registry,
    private readonly consensus: ConsensusFields,
    private readonly verifier: SignatureVerifier,
    private readonly blocks: Pick<BlockStore, 'isStoredCopy'>,
    private readonly observer: SignatureObserver,
  ) {}

  /** Steps 1 to 5 for a block on `parent` at `slot` (`envelopes`: its transactions' envelopes, in order); throws the first failure. */
  async checkAuthenticity(block: Block, envelopes: Uint8Array[], parent: BlockRecord, slot: number): Promise<CheckedBlock> {
    const h = block.header;
    // The verifier derives each hash once (or finds it with the signer of a transaction admitted
    // through the pool), so the root, the cache and storage share it. The checks are still judged
    // in the spec's order: a block with a wrong root is refused for its root, not its signatures.
    const verified = await this.verifier.verifyMany(block.transactions, { envelopes });
    const txHashes = verified.map((v) => hashBytes(v.hash));
    // Step 1: Merkle root.
    if (!bytesEqual(blockMerkleRoot(txHashes, block.attestations, block.slashings), h.merkleRoot)) throw new BlockError('MERKLE_ROOT_MISMATCH');
    // Step 2: every transaction signature (cached when admitted through the pool).
    const bad = verified.find((v) => v.signer === null);
    if (bad) throw txFail(bad.hash, new TxError('ErrInvalidSignature').message);
    // Step 3: the proposer is registered.
    const proposer = toHex(h.validatorId);
    const validator = this.registry.get(proposer);
    if (!validator) throw new BlockError('UNKNOWN_VALIDATOR', proposer);
    const publicKey = this.registry.publicKey(validator);
    // Step 4: block signature over the canonical SignedHeader.
    if (block.signature.length === 0) throw new BlockError('MISSING_SIGNATURE');
    let sh;
    try {
      sh = signedHeaderOf(h, this.genesis.chain_id, validator.index);
    } catch (err) {
      throw new BlockError('SIGNED_HEADER_FAILED', (err as Error).message);
    }
    let t = performance.now();
    const sigOk = verify(publicKey, headerSigningHash(sh), block.signature);
    this.observer.signatureChecked('block', performance.now() - t, sigOk, canonicalHeaderBytes(sh, block.signature).length);
    if (!sigOk) throw new BlockError('INVALID_BLOCK_SIGNATURE');
    // Step 5: VRF proof over the seed.
    if (h.vrfProof.length === 0) throw new BlockError('MISSING_VRF_PROOF');
    // The seed is not signed, so first make sure it is the slot's seed and the draw names this proposer.
    this.consensus.checkSeed(h, slot, parent, validator);
    t = performance.now();
    const vrfOk = vrfVerify(publicKey, h.vrfSeed, h.vrfProof, this.genesis.chain_id);
    this.observer.signatureChecked('vrf', performance.now() - t, vrfOk);
    if (!vrfOk) throw new BlockError('INVALID_VRF_PROOF');
    return { verified, txHashes, proposer, validator };
  }

  // The block hash covers neither the signature nor the transaction list: a copy that differs
  // from the stored block must prove both before it is acknowledged as already known. Equal
  // shells and equal transaction hashes (each the SHA3 of its envelope) mean an identical copy,
  // found without reading the stored transactions.
  /** Refuses a second copy of the stored block `known` unless it is identical or proves its root and signature. */
  async checkKnownCopy(block: Block, known: BlockRecord, txHashes: Uint8Array[]): Promise<void> {
    if (known.index === 0 || (await this.blocks.isStoredCopy(known.hash, block, txHashes))) return;
    if (toHex(blockMerkleRoot(txHashes, block.attestations, block.slashings)) !== toHex(block.header.merkleRoot)) throw new BlockError('MERKLE_ROOT_MISMATCH');
    const v = this.registry.get(known.proposer);
    if (block.signature.length === 0) throw new BlockError('MISSING_SIGNATURE');
    if (!v || !verify(this.registry.publicKey(v), headerSigningHash(signedHeaderOf(block.header, this.genesis.chain_id, v.index)), block.signature)) {
      throw new BlockError('INVALID_BLOCK_SIGNATURE');
    }
  }

  /**
   * Verifies a block's slashing evidence and returns the penalties it applies: each accuses a
   * registered validator not yet slashed (nor accused twice in the block) and proves a conflict
   * under that validator's key. Any fault refuses the block (INVALID_SLASHING, detail the code).
   */
  checkSlashings(evidence: readonly SlashingEvidence[]): SlashedChange[] {
    const all = this.registry.all();
    let accused: number[];
    try {
      accused = checkBlockEvidence(evidence, (index) => {
        const v = all[index];
        return v && { slashed: v.slashed, publicKey: () => this.registry.publicKey(v) };
      }, this.genesis.chain_id);
    } catch (err) {
      if (err instanceof SlashingError) throw new BlockError('INVALID_SLASHING', `${err.code}: ${err.message}`);
      throw err;
    }
    return accused.map((index) => {
      const v = all[index]!;
      return { index, penalty: (BigInt(v.stake) / SLASHING_PENALTY_DIVISOR).toString(), was_active: v.active };
    });
  }
}

/** A verifier result's 0x hash as bytes (the Merkle root and the stored hash list take bytes). */
function hashBytes(hex: string): Uint8Array {
  const b = Buffer.from(hex.slice(2), 'hex');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
