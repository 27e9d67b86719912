/**
 * Wire types of block production, as Lodestar's produceBlockV3 splits it: execution hands the
 * beacon a payload (the parent's post-state root and the pending transactions in build order,
 * GET /api/v1/engine/getPayload); the beacon packs attestations and slashing evidence around it
 * and hands the proposer an unsigned block (GET /api/v1/validator/blocks/:slot); the validator
 * writes its VRF proof, RANDAO reveal and signature into it and publishes it. Both answers are
 * JSON, or SSZ when Accept asks for it (the beacon and the validator client do); the SSZ
 * containers are below and docs/validator.md "Proposing" gives them byte for byte.
 */
import { ByteListType, ByteVectorType, ContainerType, ListCompositeType, UintNumberType } from '@chainsafe/ssz';
import { MAX_BLOCK_BYTES } from '../core/constants.js';
import { MalformedError } from '../core/errors.js';
import type { BlockJson } from '../core/types/block.js';
import { TxEnvelopeListSsz } from '../core/types/ssz.js';
import type { TxJson } from '../core/types/transaction-json.js';

/** GET /api/v1/engine/getPayload (JSON): what a block on `parent` is built from. */
export interface PayloadView {
  parent: string;
  /** The parent's post-state root: the new block's header.state_root. */
  state_root: string;
  count: number;
  gas: number;
  transactions: TxJson[];
}

/** The query of GET /api/v1/engine/getPayload. */
export type PayloadQuery = {
  /** Block hash the payload builds on. */
  parent: string;
  /** The proposer's address: its own RANDAO re-commitment is held back unless `own_recommit`. */
  proposer?: string;
  /** Whether the proposer may include its own re-commitment (it is the only active validator). */
  own_recommit?: boolean;
};

/** The SSZ answer of getPayload: the parent's post-state root, then the envelopes in build order. */
export const PayloadSsz = new ContainerType({
  stateRoot: new ByteVectorType(32),
  transactions: TxEnvelopeListSsz,
});

/** A decoded getPayload answer. */
export interface Payload {
  stateRoot: Uint8Array;
  /** Transaction envelopes in build order, as execution sent them. */
  envelopes: Uint8Array[];
}

/** Encodes a getPayload answer. */
export function encodePayload(p: Payload): Uint8Array {
  return PayloadSsz.serialize({ stateRoot: p.stateRoot, transactions: p.envelopes });
}

/** Decodes a getPayload answer; a malformed one is `malformed payload`. */
export function decodePayload(bytes: Uint8Array): Payload {
  try {
    const v = PayloadSsz.deserialize(bytes);
    return { stateRoot: v.stateRoot, envelopes: v.transactions };
  } catch (err) {
    throw new MalformedError('payload', (err as Error).message);
  }
}

/** GET /api/v1/validator/blocks/:slot (JSON): the unsigned block a proposer signs. */
export interface BlockTemplateView {
  slot: number;
  proposer_index: number;
  /** Dependent root of the slot's epoch duties on the branch the block builds on (see ProposerDutiesView). */
  dependent_root: string;
  /** The proposer's last accepted RANDAO value on that branch; null before its first block (then: its commitment). */
  randao_last: string | null;
  /** The block with a zero VRF proof, RANDAO reveal and signature (header.vrf_seed is the duty's seed). */
  block: BlockJson;
}

/** The query of GET /api/v1/validator/blocks/:slot. */
export type BlockTemplateQuery = { proposer_index: number };

/** The SSZ answer of the block template route: the JSON answer's fields, the block as its `encodeBlock` bytes. */
export const BlockTemplateSsz = new ContainerType({
  slot: new UintNumberType(8),
  proposerIndex: new UintNumberType(8),
  dependentRoot: new ByteVectorType(32),
  /** Empty before the proposer's first block, else its last RANDAO value. */
  randaoLast: new ListCompositeType(new ByteVectorType(32), 1),
  block: new ByteListType(MAX_BLOCK_BYTES),
});

/** A decoded block template. */
export interface BlockTemplate {
  slot: number;
  proposerIndex: number;
  dependentRoot: Uint8Array;
  randaoLast: Uint8Array | null;
  /** `encodeBlock` bytes with zero VRF proof, RANDAO reveal and signature. */
  block: Uint8Array;
}

/** Encodes a block template. */
export function encodeBlockTemplate(t: BlockTemplate): Uint8Array {
  return BlockTemplateSsz.serialize({ slot: t.slot, proposerIndex: t.proposerIndex, dependentRoot: t.dependentRoot, randaoLast: t.randaoLast ? [t.randaoLast] : [], block: t.block });
}

/** Decodes a block template; a malformed one is `malformed block template`. */
export function decodeBlockTemplate(bytes: Uint8Array): BlockTemplate {
  try {
    const v = BlockTemplateSsz.deserialize(bytes);
    return { slot: v.slot, proposerIndex: v.proposerIndex, dependentRoot: v.dependentRoot, randaoLast: v.randaoLast[0] ?? null, block: v.block };
  } catch (err) {
    throw new MalformedError('block template', (err as Error).message);
  }
}
