/**
 * Gathering a counterpart registration's signatures (docs/bridge.md "Who may register"): the
 * request goes to every beacon of the chain the caller knows of (validators sign what their own
 * beacon lists), and the signatures each beacon gathered are passed on to the first, which
 * verifies them and sums their stake, until they hold ≥ 2/3 of the active stake or the deadline
 * passes. The register operation then carries them; execution judges them again on its registry.
 */
import { SvcError } from '../core/errors.js';
import type { BidSignature } from '../core/bridge/types.js';
import type { RegistrationRequestView } from '../api/bridge.js';
import { BridgeBeaconClient } from './bridge.js';
import { bidSignaturesFromJson } from './bridge-ops.js';

/** True when a request's signatures hold ≥ 2/3 of the active stake. */
export function registrationQuorum(v: RegistrationRequestView): boolean {
  const active = BigInt(v.active_stake);
  return active > 0n && 3n * BigInt(v.signed_stake) >= 2n * active;
}

/**
 * Posts the request to each of `beacons` and waits (polling every `pollMs`) until the first holds
 * a quorum of signatures; BRIDGE_REGISTRATION_UNAUTHORIZED with what was gathered when `deadline`
 * (Unix ms) passes first. `onProgress` sees the first beacon's view after each round.
 */
export async function gatherRegistration(
  beacons: readonly BridgeBeaconClient[],
  genesis: unknown,
  allowance: bigint,
  o: { deadline: number; pollMs: number; onProgress?: (v: RegistrationRequestView) => void },
): Promise<{ view: RegistrationRequestView; signatures: BidSignature[] }> {
  const [first, ...others] = beacons;
  if (!first) throw new SvcError('USAGE', 'no beacon to ask for registration signatures');
  let view = await first.requestRegistration(genesis, allowance);
  // The others may be down or behind: the first's answer is what counts.
  await Promise.all(others.map((b) => b.requestRegistration(genesis, allowance).catch(() => undefined)));
  for (;;) {
    for (const b of others) {
      const theirs = await b.registration(view.id).catch(() => undefined);
      // Lost on a restart of that beacon: asked again.
      if (!theirs) await b.requestRegistration(genesis, allowance).catch(() => undefined);
      const have = new Set(view.signatures.map((s) => s.validator_index));
      for (const s of theirs?.signatures ?? []) if (!have.has(s.validator_index)) view = await first.postRegistrationSignature(view.id, s).catch(() => view);
    }
    view = await first.registration(view.id).catch(async () => first.requestRegistration(genesis, allowance));
    o.onProgress?.(view);
    if (registrationQuorum(view)) return { view, signatures: bidSignaturesFromJson(view.signatures) };
    if (Date.now() + o.pollMs > o.deadline) {
      throw new SvcError(
        'BRIDGE_REGISTRATION_UNAUTHORIZED',
        `validators holding ${view.signed_stake} of ${view.active_stake} stake signed registration ${view.id} (${view.signatures.length} signer(s)); 2/3 is needed: do their operators accept ${view.terms.counterpart_chain_id} ${view.terms.counterpart} (svc node validator --bridge-accept-counterparts)?`,
      );
    }
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
}

/** Beacon clients for URLs, the first being the chain's own. */
export function beaconClients(urls: readonly string[]): BridgeBeaconClient[] {
  return [...new Set(urls)].map((u) => new BridgeBeaconClient(u));
}
