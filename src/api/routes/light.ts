/**
 * The beacon's light-client routes (docs/light-client.md), served by src/node/beacon/light-api.ts
 * and read by src/client/light.ts and the bridge clients. `Res` is the `data` of the
 * `{success: true, data}` envelope.
 */
import type { FinalityUpdateJson, HeaderChainView, LightBootstrapView, LightProofView, SetChangesView } from '../light.js';
import { route } from './route.js';

/** Light-client routes of the beacon. */
export const lightRoutes = {
  /** From genesis, or from the finalized block `root`. */
  bootstrap: route<LightBootstrapView, undefined, { root?: string }>()('GET', '/api/v1/light/bootstrap'),
  /** The latest finality update, or epoch `epoch`'s. */
  finalityUpdate: route<FinalityUpdateJson, undefined, { epoch?: number }>()('GET', '/api/v1/light/finality_update'),
  /** Validator-set changes at finalized checkpoints from epoch `from_epoch` on (paged). */
  setChanges: route<SetChangesView, undefined, { from_epoch?: string; limit?: string }>()('GET', '/api/v1/light/set_changes'),
  /** Headers from the finalized block `from` back to `to` (a root or a height), newest first. */
  headers: route<HeaderChainView, undefined, { from: string; to: string | number }>()('GET', '/api/v1/light/headers'),
  /** An account (and its storage `keys`, comma-separated) against block `root`'s header (default: the finalized block). */
  proof: route<LightProofView, undefined, { root?: string; address: string; keys?: string }>()('GET', '/api/v1/light/proof'),
} as const;
