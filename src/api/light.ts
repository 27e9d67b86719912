/**
 * Wire types of the beacon's light-client routes (`/api/v1/light/...`, docs/light-client.md),
 * shared by the beacon (src/node/beacon/light-api.ts) and the client (src/client/light.ts).
 */
import type { AttestationJson, CheckpointJson } from '../core/types/attestation.js';
import type { BlockHeaderJson } from '../core/types/block.js';
import type { AccountProofWire } from '../core/state/trie.js';
import type { RegistryProofWire } from '../core/light/registry.js';

/** One validator of a bootstrap's set. */
export interface LightValidatorJson {
  index: number;
  address: string;
  public_key: string;
  /** Wei, base 10. */
  stake: string;
  active: boolean;
}

/** GET /api/v1/light/bootstrap[?root=0x…]: a trusted starting point. */
export interface LightBootstrapView {
  chain_id: string;
  genesis_hash: string;
  /** The block bootstrapped from: genesis, or the finalized block `root` names. */
  block: { root: string; index: number; slot: number };
  /** Its header; null for genesis (which has none: trust it from the genesis file). */
  header: BlockHeaderJson | null;
  /** The beacon's current validator set (see docs/light-client.md for what trusting it means). */
  validators: LightValidatorJson[];
}

/** GET /api/v1/light/finality_update[?epoch=N]. */
export interface FinalityUpdateJson {
  finalized: CheckpointJson;
  target: CheckpointJson;
  /** The finalized checkpoint block's header. */
  header: BlockHeaderJson;
  /** Signed votes of the finalizing link (source = finalized, target = next epoch), by validator index. */
  attestations: AttestationJson[];
  /** 0x hex: bit i (byte i >> 3, bit i & 7) set iff validator i signed. */
  participation: string;
  /** Informational (a verifier recomputes them): signer count, their stake, the active stake, SSZ bytes of header and votes. */
  signers: number;
  signed_stake: string;
  active_stake: string;
  size_bytes: number;
}

/** GET /api/v1/light/headers?from=ROOT&to=ROOT|HEIGHT: headers from `from` back to `to`, newest first. */
export interface HeaderChainView {
  headers: BlockHeaderJson[];
}

/** GET /api/v1/light/proof?root=ROOT&address=0x…[&keys=…]: a proof against that block's header state_root. */
export interface LightProofView {
  block_hash: string;
  header: BlockHeaderJson;
  proof: AccountProofWire;
}

/**
 * One validator-set change (docs/light-client.md "Set changes"): the finality update of the
 * checkpoint whose header's state_root holds the new set, framed on (signed by, its bitfield over)
 * the set before it, and the proof of that state's whole registry.
 */
export interface SetChangeJson {
  finality: FinalityUpdateJson;
  registry: RegistryProofWire;
  /** Informational: the new set's size and active stake. */
  validators: number;
  active_stake: string;
}

/** GET /api/v1/light/set_changes?from_epoch=E[&limit=N]: set changes at checkpoints from epoch E on, oldest first. */
export interface SetChangesView {
  set_changes: SetChangeJson[];
  /** Ask again from this epoch for the next page; null when this page reached the newest. */
  next_from_epoch: number | null;
}
