/**
 * Wire types of the bridge routes (docs/bridge.md): the beacon's `/api/v1/bridge/...` and the
 * execution's `/api/v1/bridge/counterparts`, shared by the servers and src/client/bridge.ts.
 */
import type { BidFieldsJson } from '../core/bridge/types.js';

/** A BID's status as the beacon of either chain reports it (docs/bridge.md, "States and transitions"). */
export type BidStatus = 'PENDING' | 'ATTESTED' | 'FINALIZED' | 'EXPIRED' | 'COMPLETED' | 'REFUNDED';

export const BID_STATUSES: readonly BidStatus[] = ['PENDING', 'ATTESTED', 'FINALIZED', 'EXPIRED', 'COMPLETED', 'REFUNDED'];

/** Which side of the BID this chain is: the lock's chain (outgoing) or the releasing chain (incoming). */
export type BidDirection = 'outgoing' | 'incoming';

/** One entry of a BID's history: the status it entered, when, and what caused it. */
export interface BidTransitionJson {
  status: BidStatus;
  /** ISO 8601 UTC, when this beacon recorded it. */
  at: string;
  /** Slot of the beacon's clock at that moment. */
  slot: number;
  /** The block whose operation caused it (lock, release, refund, completion), else null. */
  block_hash: string | null;
  /** Its transaction, else null. */
  tx_hash: string | null;
}

/** A chain as a BID names it. */
export interface BridgeChainJson {
  chain_id: string;
  genesis_hash: string;
}

/** GET /api/v1/bridge/bids/:id (and the entries of the list). */
export interface BidView {
  bid: string;
  direction: BidDirection;
  status: BidStatus;
  fields: BidFieldsJson;
  source: BridgeChainJson;
  destination: BridgeChainJson;
  /** The block holding the lock (outgoing) or the release (incoming). */
  block: { hash: string; index: number } | null;
  /** Outgoing only: BID signatures collected from this chain's validators. */
  signatures: { signers: number; signed_stake: string; active_stake: string } | null;
  history: BidTransitionJson[];
}

/** GET /api/v1/bridge/bids[?status=&address=&direction=&limit=]: newest first. */
export interface BidListView {
  bids: BidView[];
}

/** POST /api/v1/bridge/bids/:id/signatures body, and the entries of GET …/signatures. */
export interface BidSignatureJson {
  validator_index: number;
  /** 0x hex ML-DSA-65 signature over the BID id (Domain svc/bridge-bid/v1, source chain id). */
  signature: string;
}

/** GET /api/v1/bridge/bids/:id/signatures. */
export interface BidSignaturesView {
  bid: string;
  signatures: BidSignatureJson[];
}

/** POST /api/v1/bridge/bids/:id/signatures answer (202 added, 200 already known). */
export interface BidSignatureResult {
  bid: string;
  added: boolean;
  status: BidStatus;
  signers: number;
  signed_stake: string;
  active_stake: string;
}

/** One registered counterpart (GET /api/v1/bridge/counterparts on execution and beacon). */
export interface CounterpartView {
  chain_id: string;
  genesis_hash: string;
  /** Size of the validator set this chain holds for it (its genesis set until a set update moved it; docs/bridge.md "Set updates"). */
  validators: number;
  /** Wei, base 10: the active stake of that set (what its proofs need 2/3 of). */
  active_stake: string;
  /** Checkpoint epoch of that set: 0 for its genesis set; absent only in a stored summary. */
  set_epoch?: number;
  slots_per_epoch: number;
  slot_seconds: number;
  /** How this chain came to trust it: listed in its genesis, or a registration its validators signed (docs/bridge.md); absent only in a stored summary. */
  source?: 'genesis' | 'registration';
  /** Its ledger on this chain (docs/bridge.md "Liquidity"); absent only in a stored summary. */
  ledger?: CounterpartLedgerView;
}

/** A counterpart's ledger, wei base 10: releases from it pay from `available` only. */
export interface CounterpartLedgerView {
  /** Set at its registration. */
  allowance: string;
  /** What releases from it may still pay: the allowance, plus completed locks toward it, minus its releases. */
  available: string;
  /** Locked toward it and not settled yet: refunds pay from it. */
  escrow: string;
}

/** GET /api/v1/bridge/counterparts. */
export interface CounterpartsView {
  /** This chain. */
  self: BridgeChainJson;
  /** The bridge account's balance and the part of it no counterpart's ledger or escrow holds, wei base 10. */
  reserve?: { balance: string; unallocated: string };
  counterparts: CounterpartView[];
}

/** WebSocket `bridge_bid_registered` data (SPEC.md). */
export interface BridgeBidRegisteredEvent {
  bid: string;
  status: BidStatus;
  /** Wei, base 10. */
  amount: string;
  /** Chain id of the counterpart chain. */
  chain: string;
}

/** WebSocket `bridge_bid_status` data: every later transition. */
export interface BridgeBidStatusEvent {
  bid: string;
  status: BidStatus;
  previous: BidStatus | null;
  direction: BidDirection;
}

/** POST /api/v1/bridge/registrations body: a request for this chain's validators to sign a counterpart's registration. */
export interface RegistrationRequestJson {
  /** The counterpart's genesis document (as its genesis.json holds it). */
  genesis: unknown;
  /** Wei, base 10: moved from this chain's unallocated bridge reserve into the counterpart's ledger. */
  allowance: string;
}

/** A registration request as a beacon holds it (GET /api/v1/bridge/registrations[/:id]). */
export interface RegistrationRequestView {
  /** 0x registrationId of the terms. */
  id: string;
  /** The terms the validators sign (docs/bridge.md "Who may register"). */
  terms: { chain: string; counterpart: string; counterpart_chain_id: string; validator_set: string; allowance: string };
  /** The counterpart's genesis document (canonical JSON text), what the register operation carries. */
  genesis_json: string;
  signatures: BidSignatureJson[];
  signed_stake: string;
  active_stake: string;
}

/** GET /api/v1/bridge/registrations: the requests this beacon holds, newest first. */
export interface RegistrationListView {
  registrations: RegistrationRequestView[];
}
