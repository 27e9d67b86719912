/**
 * The beacon's bridge routes (docs/bridge.md "API"), served by src/node/beacon/bridge/api.ts and
 * read by src/client/bridge.ts and the validator client's bridge duty. `Res` is the `data` of the
 * `{success: true, data}` envelope. (Execution's own GET /api/v1/bridge/counterparts is an
 * execution route.)
 */
import type { BidDirection, BidListView, BidSignatureJson, BidSignatureResult, BidSignaturesView, BidStatus, BidView, CounterpartsView, RegistrationListView, RegistrationRequestJson, RegistrationRequestView } from '../bridge.js';
import { route } from './route.js';

/** Filters of the BID listing (unknown ones are refused). */
export type BidListQuery = { status?: BidStatus; address?: string; direction?: BidDirection; limit?: number };

/** Bridge routes of the beacon. */
export const bridgeRoutes = {
  bids: route<BidListView, undefined, BidListQuery>()('GET', '/api/v1/bridge/bids'),
  /** 404 UNKNOWN_BID when this beacon has not seen it. */
  bid: route<BidView>()('GET', '/api/v1/bridge/bids/:id'),
  bidSignatures: route<BidSignaturesView>()('GET', '/api/v1/bridge/bids/:id/signatures'),
  /** 202 when added, 200 when already known. */
  submitBidSignature: route<BidSignatureResult, BidSignatureJson>()('POST', '/api/v1/bridge/bids/:id/signatures'),
  registrations: route<RegistrationListView>()('GET', '/api/v1/bridge/registrations'),
  /** 202 when new, 200 when already held. */
  requestRegistration: route<RegistrationRequestView, RegistrationRequestJson>()('POST', '/api/v1/bridge/registrations'),
  registration: route<RegistrationRequestView>()('GET', '/api/v1/bridge/registrations/:id'),
  /** 202 when added, 200 when already held. */
  submitRegistrationSignature: route<RegistrationRequestView, BidSignatureJson>()('POST', '/api/v1/bridge/registrations/:id/signatures'),
  /** The beacon's copy of execution's counterpart view (502/503 when execution cannot answer). */
  counterparts: route<CounterpartsView>()('GET', '/api/v1/bridge/counterparts'),
} as const;
