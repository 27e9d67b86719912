/**
 * Wire types of the beacon's public event stream (`GET /ws`, route in src/api/routes/events.ts):
 * every message is one JSON text `{ type, data, timestamp }`, `timestamp` ISO 8601 UTC (the
 * publish time). Shared by the beacon's hub (src/node/beacon/events.ts) and the one stream client
 * (src/client/event-stream.ts) the validator and the devnet observer read it with.
 *
 * Event types and their `data` (the first three are the spec's; `finalized_checkpoint` and
 * `slashing` are svc's shapes for the beacon outputs the spec names without a wire format; `head`
 * is svc's, after Ethereum's, for validators to refetch duties when the head changes branch):
 *
 * | type | data |
 * |---|---|
 * | `new_block` | `slot` (integer), `block_hash` (0x hex), `proposer` (0x address), `transactions` (integer, count) |
 * | `new_attestation` | `slot` (integer), `validator` (0x address), `block_hash` (0x hex, the attested head) |
 * | `bridge_bid_registered` | `bid` (0x hex), `status` (string, e.g. `PENDING`), `amount` (base-10 wei string), `chain` (counterpart chain name) |
 * | `bridge_bid_status` | `bid` (0x hex), `status`, `previous` (a status, or null for a BID first seen in it), `direction` (`outgoing` or `incoming`): every BID transition after registration (docs/bridge.md) |
 * | `finalized_checkpoint` | `epoch` (integer), `root` (0x hex, the checkpoint block root): the new finalised checkpoint |
 * | `slashing` | `kind` (`double_proposal`, `double_vote` or `surround_vote`), `validator_index` (integer), `validator` (0x address or null), `evidence_hash` (0x hex), `slot`, `epoch` (integers), `evidence` (the two conflicting signed messages: `{ type: 'proposer', header_1, header_2 }` or `{ type: 'attester', attestation_1, attestation_2 }`), verifiable by anyone; once per evidence |
 * | `head` | `slot` (integer), `block_hash` (0x hex), `proposer_dependent_roots` (`[{ epoch, root }]`, as in GET /api/v1/beacon/head): fork choice chose another head (a new block, or votes moving it to another branch) |
 */
import type { SlashingKind } from '../core/consensus/slashing.js';
import type { DependentRootView } from './beacon.js';
import type { BridgeBidRegisteredEvent, BridgeBidStatusEvent } from './bridge.js';

export type { BridgeBidRegisteredEvent, BridgeBidStatusEvent } from './bridge.js';

/** `new_block` data. */
export interface NewBlockEvent {
  slot: number;
  block_hash: string;
  proposer: string;
  /** Number of transactions in the block. */
  transactions: number;
}

/** `new_attestation` data. */
export interface NewAttestationEvent {
  slot: number;
  validator: string;
  block_hash: string;
}

/** `finalized_checkpoint` data (svc). */
export interface FinalizedCheckpointEvent {
  epoch: number;
  root: string;
}

/** `slashing` data (svc): new slashing evidence this beacon learnt of (detected, submitted, gossiped or in a block). */
export interface SlashingEvent {
  kind: SlashingKind;
  validator_index: number;
  /** The accused validator's address (null if the registry does not hold it). */
  validator: string | null;
  /** SHA3-256 of the evidence's wire encoding (GET /api/v1/slashing/:hash). */
  evidence_hash: string;
  /** Slot of the double proposal, or of the later vote. */
  slot: number;
  /** Epoch of the double proposal, or the later vote's target epoch. */
  epoch: number;
  /** The two conflicting signed messages (slashing evidence JSON, docs/beacon.md "Slashing"). */
  evidence: object;
}

/** `head` data (svc): the new head and the dependent roots of its epoch's and the next epoch's proposer duties. */
export interface HeadEvent {
  slot: number;
  block_hash: string;
  proposer_dependent_roots: DependentRootView[];
}

/** `data` of each event type. */
export interface EventDataMap {
  new_block: NewBlockEvent;
  new_attestation: NewAttestationEvent;
  bridge_bid_registered: BridgeBidRegisteredEvent;
  bridge_bid_status: BridgeBidStatusEvent;
  finalized_checkpoint: FinalizedCheckpointEvent;
  slashing: SlashingEvent;
  head: HeadEvent;
}

export type EventType = keyof EventDataMap;

// Keyed by EventDataMap, so a type added to the map without joining the list is a compile error.
const TYPES: { readonly [T in EventType]: true } = { new_block: true, new_attestation: true, bridge_bid_registered: true, bridge_bid_status: true, finalized_checkpoint: true, slashing: true, head: true };

/** Every event type, in the order above: the one list the hub and the clients share. */
export const EVENT_TYPES: readonly EventType[] = Object.keys(TYPES) as EventType[];

/** True for a name the stream defines (a newer beacon may send others). */
export function isEventType(type: string): type is EventType {
  return Object.hasOwn(TYPES, type);
}

/** One message on the wire. */
export interface EventEnvelope<T extends EventType = EventType> {
  type: T;
  data: EventDataMap[T];
  /** ISO 8601 UTC. */
  timestamp: string;
}

/** Discriminated union of every message (narrow on `type`). */
export type BeaconEvent = { [T in EventType]: EventEnvelope<T> }[EventType];
