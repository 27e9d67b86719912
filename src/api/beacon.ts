/**
 * Wire types of the beacon node's REST API: the one definition that the server
 * (src/node/beacon/api.ts) and the clients (src/client/beacon.ts: the validator client, the CLI,
 * the devnet observer) both import.
 */
import type { SlashingEvidenceJson, SlashingKind } from '../core/consensus/slashing.js';
import type { AttestationJson } from '../core/types/attestation.js';

/** An FFG checkpoint. */
export interface CheckpointView {
  epoch: number;
  /** 0x hex, 32 bytes. */
  root: string;
}

/** GET /api/v1/beacon/head */
export interface HeadView {
  /** Block hash of the head. */
  root: string;
  slot: number;
  /** Block height of the head. */
  index: number;
  justified: CheckpointView;
  finalized: CheckpointView;
  /**
   * Dependent roots (see ProposerDutiesView) of the head's epoch and the next one on the head's
   * branch, in that order; every later epoch's duties depend on the head block itself. A
   * validator compares them with its cached duties to refetch the duties a new head draws differently.
   */
  proposer_dependent_roots: DependentRootView[];
}

/** The block an epoch's proposer duties depend on. */
export interface DependentRootView {
  epoch: number;
  /** 0x hex, 32 bytes. */
  root: string;
}

/** One entry of GET /api/v1/validator/duties/proposer/:epoch */
export interface ProposerDutyView {
  slot: number;
  validator_index: number;
  address: string;
  /** The seed the proposer must put in header.vrf_seed (0x hex, 32 bytes). */
  vrf_seed: string;
}

export interface ProposerDutiesView {
  epoch: number;
  /**
   * Root of the block on the head's branch whose RANDAO mix seeds the epoch: the last block
   * before epoch − 1 starts (so of epoch − 2 or earlier; genesis when there is none). Duties are
   * the same on every branch with the same dependent root (and registry); when the head moves to
   * a branch with another one, the duties must be fetched again.
   */
  dependent_root: string;
  duties: ProposerDutyView[];
}

/** GET /beacon/v1/node/health (the fields a caller gates on; `reason` and `message` only when unhealthy). */
export interface BeaconHealthView {
  status: 'healthy' | 'unhealthy';
  layer: 'beacon';
  head_slot: number;
  head_root: string;
  current_slot: number;
  finalized_epoch: number;
  validators: number;
  /** Connected P2P peers (0 with --no-p2p). */
  peers: number;
  /** Machine code of why the beacon cannot make progress (EXECUTION_UNREACHABLE, WRONG_CHAIN, PROPOSALS_REJECTED). */
  reason?: string;
  message?: string;
}

/** One connected peer, as `/api/v1/p2p/peers` lists it (JSON field names on the wire). */
export interface PeerView {
  peer_id: string;
  address: string;
  direction: 'inbound' | 'outbound';
  agent: string | null;
  /** ISO 8601. */
  connected_since: string;
  /** The connection encrypter's protocol id, e.g. the hybrid handshake's. */
  handshake: string;
}

/** GET /api/v1/p2p/peers (not enveloped, as the spec shows it); `note` says why the list is empty when P2P is off. */
export interface PeersView {
  peers: PeerView[];
  note?: string;
}

/**
 * Error code of the validator routes (attestation data, block attestations, the block and
 * attestation POSTs) while a peer's finalised checkpoint is not on the beacon's head chain: a
 * validator skips the duty, it does not retry it (503).
 */
export const BEACON_SYNCING = 'BEACON_SYNCING';

/** GET /beacon/v1/node/syncing (the spec's shape: decimal strings). */
export interface SyncingView {
  data: {
    head_slot: string;
    /** Current slot by the wall clock minus the head's slot. */
    sync_distance: string;
    /** True while a range sync runs, or when the head is more than 2 slots behind (P2P on). */
    is_syncing: boolean;
  };
}

/** GET /api/v1/validators/:id (fields the validator client reads; the beacon may send more). */
export interface ValidatorView {
  index: number;
  address: string;
  active: boolean;
  /** Base-10 wei. */
  stake: string;
  /**
   * The last RANDAO value the beacon accepted for this validator on the head's branch, or null
   * when the beacon holds none yet (a deposit-registered validator before its first proposal:
   * its registered commitment is the last value).
   */
  randao_last: string | null;
  [k: string]: unknown;
}

/** GET /api/v1/validator/attestation_data?slot=N */
export interface AttestationDataView {
  slot: number;
  beacon_block_root: string;
  source: CheckpointView;
  target: CheckpointView;
}

/** GET /api/v1/validator/block_attestations?slot=N: what a proposer at slot N may include, in inclusion order. */
export interface BlockAttestationsView {
  slot: number;
  attestations: AttestationJson[];
  /** Pending slashing evidence the proposer should include (at most MAX_BLOCK_SLASHINGS; absent from older beacons). */
  slashings?: SlashingEvidenceJson[];
}

/** Where evidence stands on this beacon: `included` by a block on the head's branch, `superseded` (its validator was slashed by other evidence), or `pending`. */
export type SlashingStatus = 'pending' | 'included' | 'superseded';

/** One slashing evidence as GET /api/v1/slashing... serves it. */
export interface SlashingEvidenceView {
  /** SHA3-256 of the evidence's wire encoding. */
  hash: string;
  kind: SlashingKind;
  validator_index: number;
  /** The accused validator's address (null if this beacon's registry does not hold it). */
  validator: string | null;
  /** Slot of the double proposal, or of the later vote. */
  slot: number;
  /** Epoch of the double proposal, or target epoch of the later vote. */
  epoch: number;
  status: SlashingStatus;
  /** The including block on the head's branch (status `included`), else null. */
  block_hash: string | null;
  /** ISO 8601: when this beacon first had it. */
  received_at: string;
  /** The two signed messages: verifiable by anyone with the validator's public key (core verifyEvidence). */
  evidence: SlashingEvidenceJson;
}

/** GET /api/v1/slashing and GET /api/v1/slashing/validators/:id */
export interface SlashingListView {
  slashings: SlashingEvidenceView[];
}

/**
 * POST /api/v1/slashing: `added` (new, 202), `known` (already held, 200), or `redundant` (valid
 * and new, but the validator already has MAX_EVIDENCE_PER_VALIDATOR pieces pooled, one of which
 * suffices to slash it: not kept, 200).
 */
export interface SlashingSubmitView {
  status: 'added' | 'known' | 'redundant';
  hash: string;
  kind: SlashingKind;
}

/** POST /api/v1/validator/blocks/propose */
export interface ProposeResultView {
  block_hash: string;
  slot: number;
  [k: string]: unknown;
}

/**
 * GET /api/v1/validator/randao/accounts/:address: what a validator needs to sign its RANDAO
 * re-commitment, relayed from execution (the next nonce, pending transactions included).
 */
export interface RecommitAccountView {
  address: string;
  pending_nonce: number;
}

/** POST /api/v1/validator/randao/transactions: the signed re-commitment as its 0x envelope hex. */
export interface RecommitSubmitBody {
  raw: string;
}

/** POST /api/v1/validator/randao/transactions: the transaction's hash in execution's pool. */
export interface RecommitSubmitView {
  hash: string;
}

/** POST /api/v1/attestation */
export interface AttestResultView {
  status: string;
  [k: string]: unknown;
}
