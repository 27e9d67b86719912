/** Beacon REST routes (`{beacon_url}`, default port 8080). Validator POSTs need the bearer token. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { parseDecimal } from '../../core/codec/json.js';
import { BeaconError } from './errors.js';
import { epochOfSlot, forkSchedule } from '../../core/genesis/genesis.js';
import { attestationFromJson, attestationToJson } from '../../core/types/attestation.js';
import { type Block, blockFromJson, blockToJson, decodeBlock } from '../../core/types/block.js';
import { evidenceFromJson, evidenceToJson } from '../../core/consensus/slashing.js';
import { ProposerError } from '../../core/consensus/proposer.js';
import { errorBody, ok, okSsz, sszBody } from '../shared/http.js';
import { acceptsSsz } from '../../api/media.js';
import { ERROR_STATUS } from '../../api/errors.js';
import { type BlockTemplateView, encodeBlockTemplate } from '../../api/block-production.js';
import { toHex } from '../../core/codec/bytes.js';
import { MAX_BLOCK_BYTES } from '../../core/constants.js';
import { BlockProducer, IMPORT_WAIT_SLOT_FRACTION } from './block-production.js';
import { registerRoute } from '../shared/routes.js';
import { beaconRoutes } from '../../api/routes/beacon.js';
import { validatorRoutes } from '../../api/routes/validator.js';
import type { BeaconChain } from './chain.js';
import { registerLightRoutes } from './light-api.js';
import { registerBridgeRoutes } from './bridge/api.js';
import { registerRecommitRelay } from './recommit-relay.js';
import type { EngineClient } from './engine-client.js';
import type { EventHub } from './events.js';
import type { BeaconMetrics } from './metrics.js';
import type { Logger } from '../../util/log.js';
import type { BeaconNetwork } from './p2p.js';
import { BEACON_SYNCING, type BeaconHealthView, type BlockAttestationsView, type HeadView, type PeersView, type ProposerDutiesView, type SlashingListView, type SlashingStatus, type SlashingSubmitView, type SyncingView } from '../../api/beacon.js';

/** Slots behind the wall clock beyond which a beacon with peers calls itself syncing. */
export const SYNCING_DISTANCE_SLOTS = 2;

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const SLASHING_STATUSES: readonly SlashingStatus[] = ['pending', 'included', 'superseded'];
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** Constant-time bearer-token check. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A decimal path parameter below 2^32; a bad one is `malformed <field>`. */
function uintParam(v: string, field: 'epoch' | 'slot' | 'validator index'): number {
  return Number(parseDecimal(v, field, 32));
}

/** Registers every beacon route. */
/**
 * Registers the beacon's REST routes. `net` is absent with --no-p2p; with P2P it returns the
 * network once started, undefined before: the server listens before P2P starts, so a client that
 * finds the node on the network also finds its REST port open.
 */
export function registerBeaconRoutes(app: FastifyInstance, o: { chain: BeaconChain; engine: EngineClient; token: string; metrics: BeaconMetrics; log: Logger; events?: EventHub; net?: () => BeaconNetwork | undefined }): void {
  const { chain } = o;
  // Before P2P has started there is no peer to publish to, as for a node yet to find its first.
  const net = (): BeaconNetwork | undefined => o.net?.();
  const validatorRoute = { onRequest: async (req: { headers: { authorization?: string } }, reply: { status(n: number): { send(b: unknown): unknown } }) => {
    if (!tokenMatches(req.headers.authorization, o.token)) return reply.status(ERROR_STATUS.UNAUTHORIZED).send(errorBody('UNAUTHORIZED', 'validator calls need Authorization: Bearer <token> (the token file the beacon was started with)'));
  } } as const;

  // Without P2P there is nobody to sync from: a distance there is missed slots, not syncing.
  registerRoute(app, beaconRoutes.syncing, {}, async () => {
    const head = chain.head();
    const distance = Math.max(0, chain.currentSlot() - head.slot);
    const n = net();
    const view: SyncingView = { data: { head_slot: String(head.slot), sync_distance: String(distance), is_syncing: o.net !== undefined && ((n?.syncing ?? false) || n?.finalityAhead() !== undefined || distance > SYNCING_DISTANCE_SLOTS) } };
    return view;
  });

  // A vote or block built on a head the network has finalised against would be cast on a branch
  // it has abandoned (a minority back from a partition, before range sync moved its head): the
  // validators' duties wait until the finalised chain is ours (docs/beacon.md "Rejoining").
  const assertOnNetworkFinality = (): void => {
    const ahead = net()?.finalityAhead();
    if (ahead) throw new BeaconError(BEACON_SYNCING, `peers finalised epoch ${ahead.epoch} (${ahead.root}), which this beacon's head does not descend from; validator duties wait until range sync has moved the head onto it`);
  };

  // 503 while the beacon cannot make progress (execution unreachable or on another chain, or
  // refusing every proposal), so a supervisor or load balancer gating on the status sees it; the
  // body is the same view either way, with the reason.
  registerRoute(app, beaconRoutes.health, {}, async (_req, reply) => {
    const head = chain.head();
    const health = chain.health();
    const view: BeaconHealthView = { status: health.healthy ? 'healthy' : 'unhealthy', layer: 'beacon', head_slot: head.slot, head_root: head.root, current_slot: chain.currentSlot(), finalized_epoch: chain.forkChoice.finalized().epoch, validators: chain.validators().length, peers: net()?.peerCount() ?? 0 };
    return health.healthy ? view : reply.status(503).send({ ...view, reason: health.reason, message: health.message });
  });

  registerRoute(app, beaconRoutes.head, {}, async (_req, reply) => {
    const head = chain.head();
    const view: HeadView = { root: head.root, slot: head.slot, index: head.index, justified: chain.forkChoice.justified(), finalized: chain.forkChoice.finalized(), proposer_dependent_roots: chain.headDependentRoots(head.root) };
    return ok(reply, view);
  });

  registerRoute(app, beaconRoutes.finalityCheckpoints, {}, async (_req, reply) => ok(reply, { justified: chain.forkChoice.justified(), finalized: chain.forkChoice.finalized() }));

  registerRoute(app, beaconRoutes.block, {}, async (req, reply) => {
    const id = req.params.id;
    const root = HASH_RE.test(id) ? id.toLowerCase() : id === 'head' ? chain.head().root : await chain.rootAtSlot(uintParam(id, 'slot'));
    const record = root ? chain.record(root) : undefined;
    if (!record) throw new BeaconError('NOT_FOUND', `no block ${id}`);
    const ssz = await chain.body(record.root);
    return ok(reply, { ...record, randao: undefined, block: ssz === undefined ? null : blockToJson(decodeBlock(ssz)) });
  });

  registerRoute(app, beaconRoutes.validators, {}, async (_req, reply) => ok(reply, { validators: chain.validators() }));

  registerRoute(app, beaconRoutes.validator, {}, async (req, reply) => {
    const id = req.params.id;
    const v = ADDRESS_RE.test(id) ? chain.validators().find((x) => x.address === id.toLowerCase()) : chain.validators()[uintParam(id, 'validator index')];
    if (!v) throw new BeaconError('NOT_FOUND', `no validator ${id}`);
    const epoch = epochOfSlot(chain.genesis, chain.currentSlot());
    // With every validator slashed or exited nobody can be drawn: the validator still has a status to show.
    let duties: ReturnType<BeaconChain['duties']> = [];
    try {
      duties = chain.duties(epoch).filter((d) => d.validator_index === v.index);
    } catch (err) {
      if (!(err instanceof ProposerError && err.code === 'NO_ACTIVE_VALIDATORS')) throw err;
    }
    const balance = await o.engine.balance(v.address).catch(() => null);
    return ok(reply, { index: v.index, address: v.address, active: v.active, status: v.active ? 'active' : 'exited', stake: v.stake, balance, randao_last: chain.randaoLast(v.index) ?? null, latest_vote: chain.forkChoice.latestMessage(v.index) ?? null, duties });
  });

  registerRoute(app, validatorRoutes.proposerDuties, {}, async (req, reply) => {
    const epoch = uintParam(req.params.epoch, 'epoch');
    const current = epochOfSlot(chain.genesis, chain.currentSlot());
    // One epoch of seed lookahead: duties are known for the current and the next epoch only.
    if (epoch > current + 1) throw new BeaconError('EPOCH_TOO_FAR', `proposer duties are known up to epoch ${current + 1}`);
    const view: ProposerDutiesView = { epoch, ...chain.dutiesView(epoch) };
    return ok(reply, view);
  });

  registerRoute(app, validatorRoutes.attestationData, {}, async (req, reply) => {
    if (req.query.slot === undefined) throw new BeaconError('MALFORMED_INPUT', 'malformed slot: required');
    const slot = Number(parseDecimal(req.query.slot, 'slot', 32));
    assertOnNetworkFinality();
    return ok(reply, chain.attestationData(slot));
  });

  // Authenticated like proposals: it hands out the pool a proposer packs.
  registerRoute(app, validatorRoutes.blockAttestations, validatorRoute, async (req, reply) => {
    if (req.query.slot === undefined) throw new BeaconError('MALFORMED_INPUT', 'malformed slot: required');
    const slot = Number(parseDecimal(req.query.slot, 'slot', 32));
    assertOnNetworkFinality();
    // Waiting here for a block of an earlier slot still being imported has a proposer that packs
    // these build on that block, not on its parent beside it (bounded, as the block template is).
    await chain.importsBefore(slot, (chain.genesis.config.slot_seconds * 1000) / IMPORT_WAIT_SLOT_FRACTION);
    const view: BlockAttestationsView = { slot, attestations: chain.blockAttestations(slot).map(attestationToJson), slashings: chain.blockSlashings().map(evidenceToJson) };
    return ok(reply, view);
  });

  // The unsigned block a proposer signs: built here, on the head, from one execution payload.
  const producer = new BlockProducer({ chain, engine: o.engine, log: o.log, maxBlockBytes: MAX_BLOCK_BYTES });
  registerRoute(app, validatorRoutes.produceBlock, validatorRoute, async (req, reply) => {
    const slot = uintParam(req.params.slot, 'slot');
    if (req.query.proposer_index === undefined) throw new BeaconError('MALFORMED_INPUT', 'malformed proposer_index: required');
    const index = Number(parseDecimal(req.query.proposer_index, 'proposer_index', 32));
    assertOnNetworkFinality();
    const t = await producer.produce(slot, index);
    if (acceptsSsz(req.headers.accept)) return okSsz(reply, encodeBlockTemplate(t));
    const view: BlockTemplateView = { slot: t.slot, proposer_index: t.proposerIndex, dependent_root: toHex(t.dependentRoot), randao_last: t.randaoLast ? toHex(t.randaoLast) : null, block: blockToJson(decodeBlock(t.block)) };
    return ok(reply, view);
  });

  // What the beacon's own validators send is gossiped once accepted (not when already known:
  // then it came from the network, which has it). A block sent as SSZ (application/octet-stream,
  // `encodeBlock`) goes on to execution, the store and gossip as the bytes received; malformed
  // bytes are a 400 MALFORMED_INPUT, like malformed JSON.
  const propose = async (req: FastifyRequest) => {
    assertOnNetworkFinality();
    const ssz = sszBody(req);
    const block: Block = ssz === undefined ? blockFromJson(req.body) : decodeBlock(ssz);
    const r = await chain.processBlock(block, ssz);
    if (!r.already_known) net()?.publishBlock(block, ssz);
    return r;
  };
  // The spec names the route twice: both paths are the one route (its alias).
  registerRoute(app, validatorRoutes.proposeBlock, validatorRoute, async (req, reply) => ok(reply, await propose(req)));
  registerRoute(app, validatorRoutes.attest, validatorRoute, async (req, reply) => {
    const att = attestationFromJson(req.body);
    assertOnNetworkFinality();
    const r = await chain.attest(att);
    if (r.status === 'applied') net()?.publishAttestation(att);
    return ok(reply, r);
  });

  // Slashing evidence: public, like the /ws stream that announces it; anyone may submit evidence,
  // which is verified in full (forged evidence is a 400 naming the rule it breaks).
  registerRoute(app, beaconRoutes.slashings, {}, async (req, reply) => {
    const status = req.query.status;
    if (status !== undefined && !SLASHING_STATUSES.includes(status as SlashingStatus)) throw new BeaconError('MALFORMED_INPUT', `malformed status: expected one of ${SLASHING_STATUSES.join(', ')}`);
    const view: SlashingListView = { slashings: chain.slashing.list(status as SlashingStatus | undefined) };
    return ok(reply, view);
  });
  registerRoute(app, beaconRoutes.validatorSlashings, {}, async (req, reply) => {
    const id = req.params.id;
    const validators = chain.validators();
    const index = ADDRESS_RE.test(id) ? validators.find((x) => x.address === id.toLowerCase())?.index : uintParam(id, 'validator index');
    if (index === undefined || index >= validators.length) throw new BeaconError('NOT_FOUND', `no validator ${id}`);
    const view: SlashingListView = { slashings: chain.slashing.ofValidator(index) };
    return ok(reply, view);
  });
  registerRoute(app, beaconRoutes.slashing, {}, async (req, reply) => {
    if (!HASH_RE.test(req.params.hash)) throw new BeaconError('MALFORMED_INPUT', 'malformed evidence hash: expected 0x and 64 hex digits');
    const v = chain.slashing.get(req.params.hash.toLowerCase());
    if (!v) throw new BeaconError('NOT_FOUND', `no slashing evidence ${req.params.hash}`);
    return ok(reply, v);
  });
  registerRoute(app, beaconRoutes.submitSlashing, {}, async (req, reply) => {
    const ev = evidenceFromJson(req.body);
    const r = await chain.submitEvidence(ev, 'api');
    const view: SlashingSubmitView = r;
    return ok(reply, view, r.status === 'added' ? 202 : 200);
  });

  registerRoute(app, beaconRoutes.forks, {}, async (_req, reply) => {
    const epoch = epochOfSlot(chain.genesis, chain.currentSlot());
    return ok(reply, { epoch, forks: forkSchedule(chain.genesis, epoch) });
  });

  registerRoute(app, beaconRoutes.peers, {}, async () => {
    const view: PeersView = o.net ? { peers: net()?.peers() ?? [] } : { peers: [], note: 'P2P is off (--no-p2p)' };
    return view;
  });

  registerLightRoutes(app, { chain, engine: o.engine });
  registerRecommitRelay(app, { chain, engine: o.engine, auth: validatorRoute });
  registerBridgeRoutes(app, { bridge: chain.bridge });

  registerRoute(app, beaconRoutes.metrics, {}, async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(await o.metrics.text()));
}
