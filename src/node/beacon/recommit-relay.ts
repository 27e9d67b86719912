/**
 * The RANDAO re-commitment relay (docs/validator.md "RANDAO"): a validator client talks only to
 * its beacon, so the beacon passes the one transaction a validator must send, its re-commitment,
 * to execution, and reads back the nonce it is signed with and its status. The relay is no open
 * transaction gateway: the routes need the validator token, and a transaction that is not a
 * re-commitment of a registered, active validator (core/consensus/recommit.ts, the rule admission
 * applies) is refused before execution sees it.
 */
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { parseAddress, rejectUnknownKeys, requireObject } from '../../core/codec/json.js';
import { RecommitError, isRecommit, recommitProblem } from '../../core/consensus/recommit.js';
import { decodeTx } from '../../core/types/transaction.js';
import type { RecommitAccountView, RecommitSubmitView } from '../../api/beacon.js';
import { validatorRoutes } from '../../api/routes/validator.js';
import { ok } from '../shared/http.js';
import { registerRoute } from '../shared/routes.js';
import type { BeaconChain } from './chain.js';
import type { EngineClient } from './engine-client.js';
import { BeaconError } from './errors.js';

/**
 * A re-commitment is a type-0 transaction with 32 bytes of data: a few kilobytes as hex JSON.
 * 64 KiB leaves room for encodings to grow while keeping anything large off the beacon.
 */
export const RELAY_BODY_LIMIT = 64 * 1024;

/** Registers the relay's three routes behind `auth` (the validator-token check). */
export function registerRecommitRelay(app: FastifyInstance, o: { chain: Pick<BeaconChain, 'validators'>; engine: Pick<EngineClient, 'account' | 'submitRaw' | 'txStatus'>; auth: RouteShorthandOptions }): void {
  const registered = (address: string) => o.chain.validators().find((v) => v.address === address);

  registerRoute(app, validatorRoutes.recommitAccount, o.auth, async (req, reply) => {
    const address = toHex(parseAddress(req.params.address, 'address'));
    if (!registered(address)) throw new BeaconError('UNKNOWN_VALIDATOR', `${address} is not a registered validator: the beacon relays only validators' re-commitments`);
    const a = await o.engine.account(address);
    const view: RecommitAccountView = { address, pending_nonce: a.pending_nonce };
    return ok(reply, view);
  });

  registerRoute(app, validatorRoutes.submitRecommit, { ...o.auth, bodyLimit: RELAY_BODY_LIMIT }, async (req, reply) => {
    const body = requireObject(req.body, 'body');
    rejectUnknownKeys(body, ['raw'], 'body');
    const envelope = parseHex(body.raw, 'raw');
    const tx = decodeTx(envelope);
    if (!isRecommit(tx)) throw new RecommitError('the beacon relays only RANDAO re-commitments (transactions to RANDAO_COMMIT_ADDRESS)');
    const problem = recommitProblem(tx, registered);
    if (problem) throw new RecommitError(problem);
    const sent = await o.engine.submitRaw(envelope);
    const view: RecommitSubmitView = { hash: sent.hash };
    return ok(reply, view);
  });

  registerRoute(app, validatorRoutes.recommitStatus, o.auth, async (req, reply) => {
    return ok(reply, await o.engine.txStatus(toHex(parseHex(req.params.hash, 'hash', 32))));
  });
}
