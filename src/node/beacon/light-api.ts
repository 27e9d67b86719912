/**
 * Light-client routes under `/api/v1/light/` (docs/light-client.md): bootstrap from genesis or a
 * finalized root, the latest (or an epoch's) finality update, the validator-set changes, header chains back from a finalized
 * block, and account/storage proofs against a header's state_root (fetched from execution at
 * the header's parent, whose post-state that root is). Every bad input is a 4xx envelope.
 */
import type { FastifyInstance } from 'fastify';
import { parseDecimal } from '../../core/codec/json.js';
import { MAX_LIGHT_HEADERS, MAX_SET_CHANGES_PER_PAGE } from '../../core/constants.js';
import { BeaconError } from './errors.js';
import { type BlockHeader, blockHash, headerToJson } from '../../core/types/block.js';
import { headerOfBlockBytes } from '../../core/types/block-bytes.js';
import { toHex } from '../../core/codec/bytes.js';
import type { FinalityUpdateJson, HeaderChainView, LightBootstrapView, LightProofView } from '../../api/light.js';
import { RelayedError } from '../../api/errors.js';
import { ok } from '../shared/http.js';
import { registerRoute } from '../shared/routes.js';
import { lightRoutes } from '../../api/routes/light.js';
import type { BeaconBlockRecord, BeaconChain } from './chain.js';
import { EngineError, type EngineClient } from './engine-client.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
/** Storage keys one proof request may ask for (as execution's proof route). */
const MAX_PROOF_KEYS = 64;
/** Execution's refusals of an account proof that reach the light client with their own status. */
const PROOF_REFUSALS: ReadonlySet<string> = new Set(['STATE_PRUNED', 'NOT_FOUND', 'UNKNOWN_BLOCK', 'EXECUTION_UNREACHABLE']);

function rootParam(v: string, field: string): string {
  if (!HASH_RE.test(v)) throw new BeaconError('MALFORMED_INPUT', `malformed ${field}: expected 0x and 64 hex digits`);
  return v.toLowerCase();
}

/** Registers the light-client routes. */
export function registerLightRoutes(app: FastifyInstance, o: { chain: BeaconChain; engine: EngineClient }): void {
  const { chain } = o;

  const known = (root: string): BeaconBlockRecord => {
    const r = chain.record(root);
    if (!r) throw new BeaconError('NOT_FOUND', `no block ${root}`);
    return r;
  };

  // A block is finalized when it is the finalized checkpoint's block or one of its ancestors.
  const finalizedRecord = (root: string): BeaconBlockRecord => {
    const r = known(root);
    let f = chain.record(chain.forkChoice.finalized().root);
    while (f && f.index > r.index) f = chain.record(f.parent);
    if (!f || f.root !== r.root) throw new BeaconError('NOT_FINALIZED', `block ${root} (${r.index}) is not finalized: light clients start from and prove ancestry of finalized blocks only`);
    return r;
  };

  const header = async (r: BeaconBlockRecord): Promise<BlockHeader> => {
    const stored = await chain.body(r.root);
    if (stored === undefined) throw new BeaconError('NOT_FOUND', `block ${r.root} has no stored header`);
    return headerOfBlockBytes(stored);
  };

  registerRoute(app, lightRoutes.bootstrap, {}, async (req, reply) => {
    const root = req.query.root === undefined ? chain.genesisRoot : rootParam(req.query.root, 'root');
    const r = root === chain.genesisRoot ? known(root) : finalizedRecord(root);
    const view: LightBootstrapView = {
      chain_id: chain.genesis.chain_id,
      genesis_hash: chain.genesisRoot,
      block: { root: r.root, index: r.index, slot: r.slot },
      header: r.index === 0 ? null : headerToJson(await header(r)),
      validators: chain.validators().map((v) => ({ index: v.index, address: v.address, public_key: v.public_key, stake: v.stake, active: v.active })),
    };
    return ok(reply, view);
  });

  registerRoute(app, lightRoutes.finalityUpdate, {}, async (req, reply) => {
    const epoch = req.query.epoch === undefined ? undefined : Number(parseDecimal(req.query.epoch, 'epoch', 32));
    const update: FinalityUpdateJson | undefined = await chain.light.update(epoch);
    if (!update) throw new BeaconError('NO_FINALITY_UPDATE', epoch === undefined ? 'no finality update yet: no checkpoint after genesis has been finalized with its votes seen by this beacon' : `no finality update for epoch ${epoch} (only the newest finalized epochs are kept)`);
    return ok(reply, update);
  });

  registerRoute(app, lightRoutes.setChanges, {}, async (req, reply) => {
    const from = req.query.from_epoch === undefined ? 1 : Number(parseDecimal(req.query.from_epoch, 'from_epoch', 32));
    const limit = req.query.limit === undefined ? MAX_SET_CHANGES_PER_PAGE : Number(parseDecimal(req.query.limit, 'limit', 32));
    if (limit < 1 || limit > MAX_SET_CHANGES_PER_PAGE) throw new BeaconError('MALFORMED_INPUT', `malformed limit: 1 to ${MAX_SET_CHANGES_PER_PAGE} set changes per page, got ${limit}`);
    return ok(reply, await chain.sets.page(from, limit));
  });

  registerRoute(app, lightRoutes.headers, {}, async (req, reply) => {
    if (req.query.from === undefined) throw new BeaconError('MALFORMED_INPUT', 'malformed from: required (a finalized block root)');
    if (req.query.to === undefined) throw new BeaconError('MALFORMED_INPUT', 'malformed to: required (a block root or height)');
    // The cheap checks first: the range's length is known before finality is walked.
    const from = known(rootParam(req.query.from, 'from'));
    const toIndex = req.query.to.startsWith('0x') ? known(rootParam(req.query.to, 'to')).index : Number(parseDecimal(req.query.to, 'to', 32));
    if (toIndex > from.index || toIndex < 1) throw new BeaconError('MALFORMED_INPUT', `malformed to: height ${toIndex} is not between 1 and the from block's height ${from.index}`);
    const count = from.index - toIndex + 1;
    if (count > MAX_LIGHT_HEADERS) throw new BeaconError('HEADER_RANGE_TOO_LONG', `${count} headers asked, at most ${MAX_LIGHT_HEADERS} per request: ask again from the last header's parent`);
    finalizedRecord(from.root);
    const headers: BlockHeader[] = [];
    for (let r: BeaconBlockRecord | undefined = from; r && r.index >= toIndex; r = chain.record(r.parent)) headers.push(await header(r));
    // `to` named by root must be on from's chain: the walk reached its height, so compare roots.
    if (req.query.to.startsWith('0x') && toHex(blockHash(headers[headers.length - 1]!)) !== req.query.to.toLowerCase()) {
      throw new BeaconError('NOT_ANCESTOR', `block ${req.query.to} is not an ancestor of ${from.root}`);
    }
    const view: HeaderChainView = { headers: headers.map(headerToJson) };
    return ok(reply, view);
  });

  registerRoute(app, lightRoutes.proof, {}, async (req, reply) => {
    const address = req.query.address;
    if (address === undefined || !ADDRESS_RE.test(address)) throw new BeaconError('MALFORMED_INPUT', 'malformed address: expected 0x and 40 hex digits');
    const keys = req.query.keys === undefined || req.query.keys === '' ? [] : req.query.keys.split(',');
    if (keys.length > MAX_PROOF_KEYS) throw new BeaconError('MALFORMED_INPUT', `at most ${MAX_PROOF_KEYS} storage keys per proof, got ${keys.length}`);
    for (const k of keys) rootParam(k, 'storage key');
    const root = req.query.root === undefined ? chain.forkChoice.finalized().root : rootParam(req.query.root, 'root');
    const r = known(root);
    if (r.index === 0) {
      if (req.query.root === undefined) throw new BeaconError('NO_FINALIZED_HEADER', 'nothing after genesis is finalized yet: pass root=<block root> to prove against a block\'s header');
      throw new BeaconError('MALFORMED_INPUT', 'malformed root: genesis has no header: prove against block 1 or later');
    }
    const h = await header(r);
    let proof;
    try {
      // The header's state_root is its parent's post-state: execution proves against that block.
      proof = await o.engine.accountProof(address.toLowerCase(), toHex(h.parentHash), keys.map((k) => k.toLowerCase()));
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      // A pruned, unknown or unreachable state is the light client's answer as execution gave it; any other refusal keeps the link's relay status.
      throw new RelayedError(err.code, err.message, PROOF_REFUSALS.has(err.code) ? undefined : err.relayStatus);
    }
    const { block_hash: _b, block_number: _n, ...wire } = proof as typeof proof & { block_number?: number };
    const view: LightProofView = { block_hash: r.root, header: headerToJson(h), proof: wire };
    return ok(reply, view);
  });
}
