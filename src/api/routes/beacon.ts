/**
 * The beacon node's REST routes (`{beacon_url}`, default port 8080), besides the validator duties
 * (validator.ts), the light client (light.ts), the bridge (bridge.ts) and the event stream
 * (events.ts). Served by src/node/beacon/api.ts; read by src/client/beacon.ts, the devnet's probe
 * and plan. `Res` is the `data` of the `{success: true, data}` envelope, except where a route says
 * it is not enveloped (the spec shows health, syncing and peers bare, and /metrics is text).
 */
import type { BlockJson } from '../../core/types/block.js';
import type { Fork, ForkStatus } from '../../core/genesis/genesis.js';
import type { SlashingEvidenceJson } from '../../core/consensus/slashing.js';
import type { BeaconHealthView, CheckpointView, HeadView, PeersView, SlashingEvidenceView, SlashingListView, SlashingStatus, SlashingSubmitView, SyncingView, ValidatorView } from '../beacon.js';
import { route } from './route.js';

/** GET /api/v1/beacon/finality_checkpoints. */
export interface FinalityCheckpointsView {
  justified: CheckpointView;
  finalized: CheckpointView;
}

/** GET /api/v1/beacon/blocks/:id: the beacon's record of the block (fields beyond these are the beacon's) and the block itself when stored. */
export interface BeaconBlockView {
  root: string;
  parent: string;
  slot: number;
  index: number;
  proposer: string;
  block: BlockJson | null;
  [k: string]: unknown;
}

/** GET /api/v1/forks/state. */
export interface ForksStateView {
  epoch: number;
  forks: Array<Fork & { status: ForkStatus }>;
}

/** The beacon's own routes (node state, chain reads, registry, slashing, forks, peers, metrics). */
export const beaconRoutes = {
  /** Not enveloped; 503 with the same body while the beacon cannot make progress. */
  health: route<BeaconHealthView>()('GET', '/beacon/v1/node/health'),
  /** Not enveloped (the spec's shape). */
  syncing: route<SyncingView>()('GET', '/beacon/v1/node/syncing'),
  head: route<HeadView>()('GET', '/api/v1/beacon/head'),
  finalityCheckpoints: route<FinalityCheckpointsView>()('GET', '/api/v1/beacon/finality_checkpoints'),
  /** `:id` is a block root, `head`, or a slot. */
  block: route<BeaconBlockView>()('GET', '/api/v1/beacon/blocks/:id'),
  validators: route<{ validators: ValidatorView[] }>()('GET', '/api/v1/validators'),
  /** `:id` is a registry index or a 0x address. */
  validator: route<ValidatorView>()('GET', '/api/v1/validators/:id'),
  slashings: route<SlashingListView, undefined, { status?: SlashingStatus }>()('GET', '/api/v1/slashing'),
  /** 202 when the evidence is new, 200 when known or redundant. */
  submitSlashing: route<SlashingSubmitView, SlashingEvidenceJson>()('POST', '/api/v1/slashing'),
  /** `:id` is a registry index or a 0x address. */
  validatorSlashings: route<SlashingListView>()('GET', '/api/v1/slashing/validators/:id'),
  slashing: route<SlashingEvidenceView>()('GET', '/api/v1/slashing/:hash'),
  forks: route<ForksStateView>()('GET', '/api/v1/forks/state'),
  /** Not enveloped, as the spec shows it. */
  peers: route<PeersView>()('GET', '/api/v1/p2p/peers'),
  /** Prometheus text, not JSON. */
  metrics: route<string>()('GET', '/metrics'),
} as const;
