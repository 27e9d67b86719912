/**
 * Pure computation over the bridge store's BID records (src/node/beacon/bridge/store.ts), no I/O: the
 * stake behind a BID's signatures (what the 2/3 rule compares) and a record as the API serves it.
 * Both read the registry they are given, the current one at each call, never a saved copy.
 */
import type { RegistryEntry } from '../../../api/execution.js';
import type { BidView, BridgeChainJson } from '../../../api/bridge.js';
import type { BidRecord } from './records.js';

/** The active, unslashed stake of `registry`, and the part of it held by `signers` (validator indices). */
export function bidStake(registry: readonly RegistryEntry[], signers: readonly number[]): { signed: bigint; active: bigint } {
  const counts = (v: RegistryEntry | undefined) => v !== undefined && v.active && !v.slashed;
  let active = 0n;
  for (const v of registry) if (counts(v)) active += BigInt(v.stake);
  let signed = 0n;
  for (const i of signers) if (counts(registry[i])) signed += BigInt(registry[i]!.stake);
  return { signed, active };
}

/** `r` as the API serves it: a chain named by its genesis hash gets its name from `names` when execution has given one. */
export function bidView(r: BidRecord, registry: readonly RegistryEntry[], names: ReadonlyMap<string, string> | undefined): BidView {
  const name = (c: BridgeChainJson): BridgeChainJson => (c.chain_id === c.genesis_hash ? { ...c, chain_id: names?.get(c.genesis_hash) ?? c.chain_id } : c);
  const { signed, active } = bidStake(registry, r.signers);
  return {
    bid: r.bid,
    direction: r.direction,
    status: r.status,
    fields: r.fields,
    source: name(r.source),
    destination: name(r.destination),
    block: r.blocks[0] ?? null,
    signatures: r.direction === 'outgoing' ? { signers: r.signers.length, signed_stake: signed.toString(), active_stake: active.toString() } : null,
    history: r.history,
  };
}
