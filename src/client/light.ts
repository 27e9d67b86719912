/**
 * The light client: fetches the beacon's `/api/v1/light/...` answers and checks every one of them
 * with the pure verifiers of src/core/light/ (docs/light-client.md). Nothing the server says is
 * believed unless a check proves it: the finalized header by ≥ 2/3 of the trusted set's stake, its
 * ancestry by hash links, an account by a trie proof against a verified header's state_root.
 */
import { bytesEqual, parseHex, toHex } from '../core/codec/bytes.js';
import { type Genesis, genesisHash } from '../core/genesis/genesis.js';
import { finalityUpdateFromJson, headersFromJson, LightClientError, parseServed, type TrustedState, type TrustedValidator, trustedFromGenesis } from '../core/light/types.js';
import { applySetChange, setChangeFromJson } from '../core/light/set-change.js';
import { MalformedError } from '../core/errors.js';
import { verifyAccountAgainstHeader, verifyAncestry, verifyFinalityUpdate, type VerifiedAccount, type VerifiedFinality } from '../core/light/verify.js';
import { MAX_LIGHT_HEADERS } from '../core/constants.js';
import { blockHash, headerFromJson } from '../core/types/block.js';
import type { AccountProofWire } from '../core/state/trie.js';
import { requireObject } from '../core/codec/json.js';
import { routeUrl } from '../api/routes/route.js';
import { lightRoutes } from '../api/routes/light.js';
import { type ApiClientOptions, BeaconClientError, JsonApiClient } from './beacon.js';
import { hasCode } from '../api/errors.js';

/** The beacon's light-client routes, answers returned unparsed: the verifiers parse them strictly. */
export class LightApiClient extends JsonApiClient {
  constructor(baseUrl: string, opts: Omit<ApiClientOptions, 'name'> = {}) {
    super(baseUrl, { name: 'beacon node', unreachableHint: ': point --beacon at a running beacon node', ...opts });
  }

  /** The bootstrap (genesis, or the finalized block `root`). */
  bootstrap(root?: string): Promise<Record<string, unknown>> {
    return this.data(lightRoutes.bootstrap.method, routeUrl(lightRoutes.bootstrap, {}, { root }), undefined);
  }

  /** The latest finality update. */
  finalityUpdate(): Promise<Record<string, unknown>> {
    return this.data(lightRoutes.finalityUpdate.method, lightRoutes.finalityUpdate.path, undefined);
  }

  /** A page of validator-set changes from epoch `fromEpoch` on (at most `limit`, else the server's page). */
  setChanges(fromEpoch: number, limit?: number): Promise<Record<string, unknown>> {
    return this.data(lightRoutes.setChanges.method, routeUrl(lightRoutes.setChanges, {}, { from_epoch: String(fromEpoch), ...(limit === undefined ? {} : { limit: String(limit) }) }), undefined);
  }

  /** Headers from a finalized root back to a height. */
  headers(from: string, toHeight: number): Promise<Record<string, unknown>> {
    return this.data(lightRoutes.headers.method, routeUrl(lightRoutes.headers, {}, { from, to: toHeight }), undefined);
  }

  /** The proof of an account against block `root`'s header. */
  proof(root: string, address: string): Promise<Record<string, unknown>> {
    return this.data(lightRoutes.proof.method, routeUrl(lightRoutes.proof, {}, { root, address }), undefined);
  }
}

/** What `svc light verify` establishes. */
export interface LightVerification {
  chainId: string;
  /** Where trust started: genesis or the user's checkpoint. */
  /** `set`: whose validator set the votes were counted against (the genesis file's or the user's --validators). */
  trusted: { root: string; index: number; source: 'genesis' | 'checkpoint'; set: 'genesis' | 'pinned' };
  finalized: { epoch: number; index: number; hash: string; stateRoot: string; signers: number; signedStake: string; activeStake: string; updateBytes: number };
  /** Headers whose hash links were checked back from the finalized header, and the lowest height reached. */
  ancestry: { headers: number; lowest: number; reachesTrusted: boolean };
  account?: { address: string; balance: string; nonce: string; provenAgainst: { index: number; stateRoot: string } };
  /** Validator-set changes verified and followed on the way to the finalized checkpoint. */
  setChanges: number;
}

/**
 * Bootstraps (genesis from the file, or the user's finalized checkpoint), verifies the latest
 * finality update, the header chain back towards the trusted block (up to MAX_LIGHT_HEADERS),
 * and with `account` that account's proof against the finalized header's state_root.
 *
 * The validator set is never the server's: it is the genesis file's, followed through the
 * beacon's set changes (walkSetChanges, each verified with the set before it), or from a
 * checkpoint `validators` (a set the user pinned), followed through the changes after it.
 */
export async function verifyLight(o: { genesis: Genesis; beaconUrl: string; account?: string; checkpoint?: string; validators?: ReadonlyMap<number, TrustedValidator>; timeoutMs?: number }): Promise<LightVerification> {
  const api = new LightApiClient(o.beaconUrl, o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs });
  const genesisRoot = genesisHash(o.genesis);
  const boot = await api.bootstrap(o.checkpoint);
  const servedGenesis = typeof boot.genesis_hash === 'string' ? boot.genesis_hash.toLowerCase() : String(boot.genesis_hash);
  if (servedGenesis !== toHex(genesisRoot) || boot.chain_id !== o.genesis.chain_id) {
    throw new LightClientError('LIGHT_WRONG_CHAIN', `the beacon serves chain ${String(boot.chain_id)} with genesis ${servedGenesis}, not ${o.genesis.chain_id} with genesis ${toHex(genesisRoot)} from the genesis file`);
  }
  // The anchor is where ancestry must lead (genesis or the checkpoint); the set is what votes are
  // counted against. The set is never the server's: the genesis file's, walked through the set
  // changes each signed by the set before it (docs/light-client.md "Set changes"), or the user's
  // pinned set at the checkpoint, walked through the changes after it.
  const genesisTrust = trustedFromGenesis(o.genesis, genesisRoot);
  let anchor = { root: genesisRoot, index: 0 };
  let start: TrustedState = genesisTrust;
  let skipUpTo: number | undefined;
  if (o.checkpoint !== undefined) {
    const root = parseHex(o.checkpoint, 'checkpoint', 32);
    const header = parseServed('bootstrap header', () => headerFromJson(boot.header, 'bootstrap.header'));
    if (!bytesEqual(blockHash(header), root)) throw new LightClientError('LIGHT_CHECKPOINT_MISMATCH', `the bootstrap header hashes to ${toHex(blockHash(header))}, not the checkpoint ${o.checkpoint}`);
    anchor = { root, index: header.index };
    if (o.validators !== undefined) {
      start = { ...genesisTrust, root, header, validators: o.validators };
      skipUpTo = header.index;
    }
  }
  const walk = await walkSetChanges(api, start, skipUpTo);

  // The proof is asked for at the newest finalized block, whose state execution keeps. If finality
  // moves between the update and the proof, that block's state may be pruned: a newer update then
  // names a block whose state is kept, so the verification starts again from it.
  for (let attempt = 1; ; attempt++) {
    try {
      return { ...(await verifyLatest(api, o, walk.trusted, anchor)), setChanges: walk.applied };
    } catch (err) {
      if (!(err instanceof BeaconClientError && hasCode(err, 'STATE_PRUNED')) || attempt >= LIGHT_PROOF_ATTEMPTS) throw err;
    }
  }
}

/** Finality updates tried when the finalized block's state is pruned before its account proof arrives. */
const LIGHT_PROOF_ATTEMPTS = 4;

/** Verifies the beacon's latest finality update, the ancestry back towards the trusted block and, with `o.account`, the account's proof. */
async function verifyLatest(api: LightApiClient, o: { genesis: Genesis; account?: string; checkpoint?: string; validators?: unknown }, trusted: TrustedState, anchor: { root: Uint8Array; index: number }): Promise<Omit<LightVerification, 'setChanges'>> {
  const trustedIndex = anchor.index;
  const updateJson = await api.finalityUpdate();
  const update = parseServed('finality update', () => finalityUpdateFromJson(updateJson));
  const fin: VerifiedFinality = verifyFinalityUpdate(update, trusted, trusted.epoch === undefined ? {} : { minEpoch: trusted.epoch });
  if (fin.header.index < trustedIndex) throw new LightClientError('LIGHT_STALE_UPDATE', `the finalized header ${fin.header.index} is older than the trusted checkpoint ${trustedIndex}`);

  // Ancestry: hash links from the finalized header back to the trusted block when it is within
  // one answer, else back MAX_LIGHT_HEADERS blocks. An update for the trusted block itself has
  // nothing between them: its root must be the trusted one.
  let ancestry: LightVerification['ancestry'];
  if (fin.header.index === trustedIndex) {
    if (!bytesEqual(fin.root, anchor.root)) throw new LightClientError('LIGHT_CHECKPOINT_MISMATCH', `the finalized block ${toHex(fin.root)} at height ${trustedIndex} is not the trusted checkpoint ${toHex(anchor.root)}`);
    ancestry = { headers: 1, lowest: fin.header.index, reachesTrusted: true };
  } else {
    const lowest = Math.max(trustedIndex + 1, fin.header.index - MAX_LIGHT_HEADERS + 1);
    const served = await api.headers(toHex(fin.root), lowest);
    const chainHeaders = parseServed('header chain', () => headersFromJson(served.headers, 'headers'));
    const last = verifyAncestry(fin.root, chainHeaders);
    if (last.index !== lowest) throw new LightClientError('LIGHT_ANCESTRY_BROKEN', `the header chain ends at height ${last.index}, not ${lowest}`);
    const reachesTrusted = lowest === trustedIndex + 1;
    if (reachesTrusted && !bytesEqual(last.parentHash, anchor.root)) {
      throw new LightClientError('LIGHT_ANCESTRY_BROKEN', `header ${last.index}'s parent is ${toHex(last.parentHash)}, not the trusted block ${toHex(anchor.root)}`);
    }
    ancestry = { headers: chainHeaders.length, lowest: last.index, reachesTrusted };
  }

  const out: Omit<LightVerification, 'setChanges'> = {
    chainId: o.genesis.chain_id,
    trusted: { root: toHex(anchor.root), index: trustedIndex, source: o.checkpoint === undefined ? 'genesis' : 'checkpoint', set: o.checkpoint !== undefined && o.validators !== undefined ? 'pinned' : 'genesis' },
    finalized: {
      epoch: fin.epoch,
      index: fin.header.index,
      hash: toHex(fin.root),
      stateRoot: toHex(fin.header.stateRoot),
      signers: fin.signers,
      signedStake: fin.signedStake.toString(),
      activeStake: fin.activeStake.toString(),
      updateBytes: typeof updateJson.size_bytes === 'number' ? updateJson.size_bytes : 0,
    },
    ancestry,
  };
  if (o.account !== undefined) {
    const address = o.account.toLowerCase();
    const served = await api.proof(toHex(fin.root), address);
    const header = parseServed('proof header', () => headerFromJson(served.header, 'proof.header'));
    // The proof must be against the header just verified, not one the server picks.
    if (!bytesEqual(blockHash(header), fin.root)) throw new LightClientError('LIGHT_HEADER_MISMATCH', `the proof's header hashes to ${toHex(blockHash(header))}, not the verified finalized header ${toHex(fin.root)}`);
    const proof = parseServed('account proof', () => requireObject(served.proof, 'proof')) as unknown as AccountProofWire;
    const acc: VerifiedAccount = verifyAccountAgainstHeader(fin.header, address, proof);
    out.account = { address: acc.address, balance: acc.balance.toString(), nonce: acc.nonce.toString(), provenAgainst: { index: fin.header.index, stateRoot: toHex(fin.header.stateRoot) } };
  }
  return out;
}

/** Set-change pages a walk reads at most: a server that never ends its pages stalls the client, never loops it. */
const MAX_SET_CHANGE_PAGES = 10_000;

/**
 * Follows the beacon's set changes from `start` (docs/light-client.md "Set changes"): each is
 * verified with the set before it (applySetChange), so a lying server can only stop the walk.
 * Changes at or below height `skipUpTo` are passed over (a pinned set is already at them).
 */
export async function walkSetChanges(api: LightApiClient, start: TrustedState, skipUpTo?: number): Promise<{ trusted: TrustedState; applied: number }> {
  let trusted = start;
  let applied = 0;
  let from = (start.epoch ?? 0) + 1;
  for (let pages = 0; pages < MAX_SET_CHANGE_PAGES; pages++) {
    const page = await api.setChanges(from);
    const changes = parseServed('set changes', () => {
      if (!Array.isArray(page.set_changes)) throw new MalformedError('set_changes', 'expected an array');
      return page.set_changes.map((c, i) => setChangeFromJson(c, `set_changes[${i}]`));
    });
    let last = from - 1;
    for (const c of changes) {
      last = c.finality.finalized.epoch;
      if (skipUpTo !== undefined && c.finality.header.index <= skipUpTo) continue;
      trusted = applySetChange(trusted, c);
      applied++;
    }
    const next = page.next_from_epoch;
    if (next === null) return { trusted, applied };
    if (typeof next !== 'number' || !Number.isSafeInteger(next) || next <= last || changes.length === 0) {
      throw new LightClientError('LIGHT_MALFORMED', `set changes: next_from_epoch ${JSON.stringify(next)} does not move past the page (from epoch ${from}, ${changes.length} changes)`);
    }
    from = next;
  }
  throw new LightClientError('LIGHT_MALFORMED', `set changes: more than ${MAX_SET_CHANGE_PAGES} pages`);
}
