/**
 * The validator-duty routes the beacon serves (src/node/beacon/api.ts) and the validator client
 * calls (src/client/beacon.ts), plus the validator client process's own metrics endpoint
 * (src/node/validator/metrics.ts). `Res` is the `data` of the `{success: true, data}` envelope.
 * The POSTs, block_attestations, the block template and the RANDAO relay need the beacon's bearer token.
 */
import type { AttestationJson } from '../../core/types/attestation.js';
import type { BlockJson } from '../../core/types/block.js';
import type { AttestResultView, AttestationDataView, BlockAttestationsView, ProposeResultView, ProposerDutiesView, RecommitAccountView, RecommitSubmitBody, RecommitSubmitView } from '../beacon.js';
import type { TxStatus } from '../execution.js';
import type { BlockTemplateQuery, BlockTemplateView } from '../block-production.js';
import { route } from './route.js';

/** Routes of the beacon for its validators. */
export const validatorRoutes = {
  /** Duties of the current epoch or the next. */
  proposerDuties: route<ProposerDutiesView>()('GET', '/api/v1/validator/duties/proposer/:epoch'),
  attestationData: route<AttestationDataView, undefined, { slot: number }>()('GET', '/api/v1/validator/attestation_data'),
  blockAttestations: route<BlockAttestationsView, undefined, { slot: number }>()('GET', '/api/v1/validator/block_attestations'),
  /**
   * The unsigned block for `:slot` that `proposer_index` signs (api/block-production.ts): built
   * by the beacon on its head; the SSZ BlockTemplateSsz when Accept asks for it.
   */
  produceBlock: route<BlockTemplateView, undefined, BlockTemplateQuery>()('GET', '/api/v1/validator/blocks/:slot'),
  /** A signed block as JSON or as its SSZ bytes (application/octet-stream); the spec names the route twice. */
  proposeBlock: route<ProposeResultView, BlockJson | Uint8Array>()('POST', '/api/v1/validator/blocks/propose', ['/api/v1/beacon/block/proposal']),
  attest: route<AttestResultView, AttestationJson>()('POST', '/api/v1/attestation'),
  /**
   * The RANDAO re-commitment relay (docs/validator.md "RANDAO"): the validator talks only to its
   * beacon, which passes a registered validator's re-commitment to execution and nothing else.
   */
  recommitAccount: route<RecommitAccountView>()('GET', '/api/v1/validator/randao/accounts/:address'),
  submitRecommit: route<RecommitSubmitView, RecommitSubmitBody>()('POST', '/api/v1/validator/randao/transactions'),
  recommitStatus: route<TxStatus>()('GET', '/api/v1/validator/randao/transactions/:hash'),
} as const;

/** The validator client process's own server (`--metrics-port`). */
export const validatorClientRoutes = {
  /** Prometheus text; the only route it serves. */
  metrics: route<string>()('GET', '/metrics'),
} as const;
