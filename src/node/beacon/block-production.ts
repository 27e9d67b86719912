/**
 * Block production, as Lodestar's produceBlockV3: the beacon builds the unsigned block of a slot
 * on its head, for the proposer the head's branch draws, from one execution payload (the parent's
 * post-state root and the pending envelopes in build order) and its own attestation pool and
 * slashing evidence. The validator only writes its VRF proof, RANDAO reveal and signature into
 * it (core/types/block-bytes.ts withProposerFields). One place decides the head: if it moves
 * while execution answers, the block is built again on the new one.
 */
import { parseHex } from '../../core/codec/bytes.js';
import { SIGNATURE_BYTES } from '../../core/constants.js';
import { encodeEvidence } from '../../core/consensus/slashing.js';
import { sha3 } from '../../core/crypto/hash.js';
import { epochOfSlot, slotStartMs } from '../../core/genesis/genesis.js';
import { type BlockHeader, blockMerkleRoot, encodeBlock } from '../../core/types/block.js';
import { AttestationSsz, BlockSsz } from '../../core/types/ssz.js';
import type { BlockTemplate } from '../../api/block-production.js';
import type { EngineClient } from '../../client/engine.js';
import type { Logger } from '../../util/log.js';
import type { BeaconChain } from './chain.js';
import { BeaconError } from './errors.js';

/** How many times a block is built again when the head moves while execution answers. */
const MAX_BUILD_ATTEMPTS = 3;
/** A proposer's template (and its block_attestations) waits at most a third of a slot for an earlier block still being imported. */
export const IMPORT_WAIT_SLOT_FRACTION = 3;

/** What building a block reads. */
export interface BlockProducerDeps {
  chain: BeaconChain;
  engine: EngineClient;
  log: Logger;
  /** Stop packing transactions once the block's SSZ would exceed this. */
  maxBlockBytes: number;
}

/** Builds the unsigned blocks the beacon's proposers sign. */
export class BlockProducer {
  constructor(private readonly deps: BlockProducerDeps) {}

  /**
   * The unsigned block of `slot` for validator `proposerIndex`, on the head. Refused with
   * INVALID_SLOT when the head is already at or after the slot, WRONG_PROPOSER when on the
   * head's branch the slot is another validator's, HEAD_MOVING when the head keeps moving while
   * it is built; execution's failure to answer is the engine client's (EXECUTION_UNREACHABLE).
   */
  async produce(slot: number, proposerIndex: number): Promise<BlockTemplate> {
    const { chain, engine, log } = this.deps;
    const g = chain.genesis;
    const epoch = epochOfSlot(g, slot);
    // Building on the parent of a block still being imported would make a second block at the
    // same height for every node to import: wait for it (bounded, within the proposer's deadline).
    await chain.importsBefore(slot, (g.config.slot_seconds * 1000) / IMPORT_WAIT_SLOT_FRACTION);
    for (let attempt = 1; ; attempt++) {
      const head = chain.head();
      if (head.slot >= slot) throw new BeaconError('INVALID_SLOT', `slot ${slot} is not after the head's slot ${head.slot}`);
      const { dependent_root, duties } = chain.dutiesView(epoch);
      const duty = duties.find((d) => d.slot === slot);
      if (!duty || duty.validator_index !== proposerIndex) {
        throw new BeaconError('WRONG_PROPOSER', `validator ${proposerIndex} is not the proposer of slot ${slot} on the head's branch (validator ${duty?.validator_index ?? 'none'} is)`);
      }
      const attestations = chain.blockAttestations(slot);
      const slashings = chain.blockSlashings();
      // Execution lets a lone validator include its own re-commitment; an epoch whose every slot
      // is this validator's is taken as that (if wrong, the re-commitment fails and is sent again).
      const alone = duties.every((d) => d.validator_index === proposerIndex);
      const payload = await engine.payload(head.root, duty.address, alone);
      if (chain.head().root !== head.root) {
        if (attempt === MAX_BUILD_ATTEMPTS) throw new BeaconError('HEAD_MOVING', `the head keeps moving while the block of slot ${slot} is built`);
        log.info('the head moved while the block was built: building it again', { slot, was: head.root, head: chain.head().root });
        continue;
      }
      // The block's fixed part (header, signature, list offsets), its votes and evidence, then
      // each envelope behind its 4-byte offset.
      const evidence = slashings.map(encodeEvidence);
      let bytes = BlockSsz.minSize + attestations.length * AttestationSsz.fixedSize! + evidence.reduce((n, e) => n + e.length + 4, 0);
      let packed = payload.envelopes.length;
      for (let i = 0; i < payload.envelopes.length; i++) {
        bytes += payload.envelopes[i]!.length + 4;
        if (bytes > this.deps.maxBlockBytes) {
          packed = i;
          log.warn('block size cap reached: leaving the remaining transactions in the pool', { slot, packed, offered: payload.envelopes.length });
          break;
        }
      }
      const envelopes = payload.envelopes.slice(0, packed);
      const header: BlockHeader = {
        index: head.index + 1,
        timestampMs: slotStartMs(g, slot),
        parentHash: parseHex(head.root, 'head root', 32),
        // A transaction's hash is SHA3 of its envelope: execution's envelopes are hashed as they are.
        merkleRoot: blockMerkleRoot(envelopes.map((e) => sha3(e)), attestations, slashings),
        validatorId: parseHex(duty.address, 'address', 20),
        vrfProof: new Uint8Array(SIGNATURE_BYTES),
        vrfSeed: parseHex(duty.vrf_seed, 'vrf_seed', 32),
        randaoReveal: new Uint8Array(32),
        stateRoot: payload.stateRoot,
      };
      const block = encodeBlock({ header, transactions: [], signature: new Uint8Array(SIGNATURE_BYTES), attestations, slashings }, envelopes);
      const last = chain.randaoLast(proposerIndex);
      return { slot, proposerIndex, dependentRoot: parseHex(dependent_root, 'dependent root', 32), randaoLast: last === undefined ? null : parseHex(last, 'randao_last', 32), block };
    }
  }
}
