/**
 * Following validator-set changes (docs/light-client.md "Set changes"): a set change is the
 * finality update of a finalised checkpoint signed by the set the client holds, plus the proof of
 * the registry in that checkpoint header's state_root. Verified, it moves the client to the new
 * set; nothing else ever does, so a lying server can stall a client but not move it. Pure: no I/O.
 */
import { requireObject } from '../codec/json.js';
import { MalformedError } from '../errors.js';
import { type RegistryProofWire, registryProofFromJson, verifyRegistryProof } from './registry.js';
import { type FinalityUpdate, LightClientError, type TrustedState, finalityUpdateFromJson } from './types.js';
import { verifyFinalityUpdate } from './verify.js';

/** One set change: the finality of the checkpoint whose state holds the new set, signed by the set before it, and that state's registry. */
export interface SetChange {
  finality: FinalityUpdate;
  registry: RegistryProofWire;
}

/** Strictly parses a set change's wire JSON (informational fields are ignored). */
export function setChangeFromJson(input: unknown, field = 'set_change'): SetChange {
  const o = requireObject(input, field);
  if (o.finality === undefined) throw new MalformedError(`${field}.finality`, 'required');
  return { finality: finalityUpdateFromJson(o.finality), registry: registryProofFromJson(o.registry, `${field}.registry`) };
}

/**
 * Verifies a set change against the trusted state and returns the state it moves to: the
 * checkpoint's finality is signed by ≥ 2/3 of the trusted set's active stake (verifyFinalityUpdate,
 * so signers outside the trusted set fail it), the checkpoint is newer than the trusted one, and
 * the registry proof verifies against the checkpoint header's state_root. The new trusted state is
 * that checkpoint with the proven set.
 */
export function applySetChange(trusted: TrustedState, change: SetChange): TrustedState {
  const fin = verifyFinalityUpdate(change.finality, trusted, { minEpoch: (trusted.epoch ?? 0) + 1 });
  const validators = verifyRegistryProof(fin.header.stateRoot, change.registry);
  if (![...validators.values()].some((v) => v.active)) throw new LightClientError('LIGHT_PROOF_INVALID', `the registry at checkpoint ${fin.epoch} has no active validator`);
  return { chainId: trusted.chainId, slotsPerEpoch: trusted.slotsPerEpoch, root: fin.root, header: fin.header, epoch: fin.epoch, validators };
}

/** Applies set changes in order; returns the state after the last (the trusted one when there are none). */
export function followSetChanges(trusted: TrustedState, changes: readonly SetChange[]): TrustedState {
  return changes.reduce(applySetChange, trusted);
}
