/**
 * Proposals of the validator client, for whichever of the process's keys the slot's duty names.
 * The beacon builds the block (GET /api/v1/validator/blocks/:slot, on its head, with execution's
 * payload and its attestations and evidence); the validator checks the template is its own,
 * adds the RANDAO reveal (`RandaoKeeper.next` of the value the beacon last accepted) and the VRF
 * proof, has slashing protection record the signing root **before** the block is signed, signs,
 * and publishes: two requests per block. Duties depend on the branch: a template drawn from
 * another dependent root than the cached duties' has them fetched again (for the later slots),
 * and a beacon that says the slot is another validator's on its head (WRONG_PROPOSER) too.
 */
import { toHex } from '../../core/codec/bytes.js';
import { vrfProve } from '../../core/crypto/vrf.js';
import { type Genesis, slotStartMs } from '../../core/genesis/genesis.js';
import { canonicalHeaderBytes, headerSigningHash, signBlock, signedHeaderOf } from '../../core/types/block.js';
import { headerOfBlockBytes, withProposerFields } from '../../core/types/block-bytes.js';
import { type BeaconClient, BeaconClientError } from '../../client/beacon.js';
import { BEACON_SYNCING } from '../../api/beacon.js';
import type { BlockTemplate } from '../../api/block-production.js';
import type { Logger } from '../../util/log.js';
import type { ProposerDutiesCache } from './duties.js';
import type { ValidatorMetrics } from './metrics.js';
import { RandaoChainError } from './randao/chain.js';
import { type SlashingProtectionDb, SlashingProtectionError } from './slashing/protection.js';
import type { ValidatorKey } from './validator-key.js';
import { hasCode } from '../../api/errors.js';

/** Codes with which the beacon says the cached duties were wrong for the block. */
const STALE_DUTY_CODES = new Set(['WRONG_PROPOSER', 'WRONG_VRF_SEED']);

/** What proposing needs from the process. */
export interface ProposerOptions {
  genesis: Genesis;
  beacon: BeaconClient;
  sp: SlashingProtectionDb;
  duties: ProposerDutiesCache;
  metrics: ValidatorMetrics;
  log: Logger;
  /** Awaits a beacon call (the process logs the first success after an outage). */
  call: <T>(p: Promise<T>) => Promise<T>;
  /** Deadline of the template and of the block POST: the beacon waits for execution in both. */
  proposeTimeoutMs: number;
}

/** Signs and publishes the blocks the beacon builds for the process's keys. */
export class Proposer {
  constructor(private readonly opts: ProposerOptions) {}

  /** Proposes the block of `slot` for `key` (registry `index`); true when the beacon accepted it. */
  async propose(key: ValidatorKey, slot: number, epoch: number, index: number): Promise<boolean> {
    const { genesis, beacon, sp, metrics } = this.opts;
    const chainId = genesis.chain_id;
    const template = await this.template(key, slot, epoch, index);
    if (!template) return false;
    const header = headerOfBlockBytes(template.block);
    const what = `GET /api/v1/validator/blocks/${slot}`;
    if (toHex(header.validatorId) !== key.address) throw beacon.badResponse(what, `it built the block for ${toHex(header.validatorId)}, not ${key.address}`);
    if (header.timestampMs !== slotStartMs(genesis, slot)) throw beacon.badResponse(what, `its timestamp ${header.timestampMs} is not slot ${slot}'s start`);
    await key.randao.ready();
    const last = template.randaoLast ?? key.randao.firstCommitment();
    let randaoReveal: Uint8Array;
    try {
      randaoReveal = key.randao.next(last);
    } catch (err) {
      if (!(err instanceof RandaoChainError) || err.code !== 'RANDAO_CHAIN_EXHAUSTED') throw err;
      // An invalid reveal would only be refused: skip the slot until the new commitment lands.
      key.log.warn('not proposing: RANDAO chain exhausted and the re-commitment has not taken effect yet', { slot, generation: key.randao.generation, randao_last: template.randaoLast ? toHex(template.randaoLast) : null });
      key.recommitCheck(last);
      return false;
    }
    const parent = toHex(header.parentHash);
    const vrfProof = vrfProve(key.keys.mldsa, header.vrfSeed, chainId);
    metrics.signed('vrf');
    const signed = signedHeaderOf(header, chainId, index);
    const signingRoot = headerSigningHash(signed);
    // A block of this slot is already on record (signed before a restart): the slot is done.
    if (sp.blockAt(key.pubkeyHex, slot, signingRoot) === 'other') {
      metrics.skippedAlreadySigned('block');
      key.log.debug('proposal skipped: this key already signed a block at this slot', { slot, parent });
      return false;
    }
    try {
      // Durable before the signature exists: a crash after this line cannot forget the block.
      await sp.checkAndRecordBlock(key.pubkeyHex, slot, signingRoot);
    } catch (err) {
      if (!(err instanceof SlashingProtectionError)) throw err;
      metrics.slashingRefused(index);
      key.log.warn('slashing protection refused to sign a block', { slot, rule: err.rule, reason: err.message, parent, signing_root: toHex(signingRoot) });
      return false;
    }
    // The signature covers the SignedHeader only (not the VRF proof or the reveal).
    const { signature } = signBlock(header, [], key.keys.mldsa, chainId, index);
    metrics.signed('block');
    metrics.canonicalBytes.set(canonicalHeaderBytes(signed, signature).length);
    let res;
    try {
      res = await this.opts.call(beacon.proposeBlock(withProposerFields(template.block, { vrfProof, randaoReveal, signature }), { timeoutMs: this.opts.proposeTimeoutMs }));
    } catch (err) {
      if (!(err instanceof BeaconClientError) || err.transport) throw err;
      if (STALE_DUTY_CODES.has(err.code)) this.opts.duties.drop(epoch);
      key.log.warn(`the beacon refused the block${hint(err)}`, { slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      return false;
    }
    metrics.blockProposed(index);
    key.recommitCheck(randaoReveal);
    key.log.info('block proposed', { slot, number: header.index, block_hash: res.block_hash, parent, already_known: res.already_known ?? false });
    return true;
  }

  /**
   * The beacon's unsigned block of `slot` for this key, or undefined when there is nothing to
   * sign (the head is at the slot already, the slot is another validator's on the head's branch,
   * the beacon cannot build it now). A template drawn from other duties than the cached ones has
   * the cache fetched again for the epoch's later slots.
   */
  private async template(key: ValidatorKey, slot: number, epoch: number, index: number): Promise<BlockTemplate | undefined> {
    const { beacon, duties } = this.opts;
    let t: BlockTemplate;
    try {
      t = await this.opts.call(beacon.produceBlock(slot, index, { timeoutMs: this.opts.proposeTimeoutMs }));
    } catch (err) {
      // A beacon syncing the network's finalised chain: its head is an abandoned branch, no block goes on it.
      if (!(err instanceof BeaconClientError) || err.transport || err.code === BEACON_SYNCING) throw err;
      if (STALE_DUTY_CODES.has(err.code)) {
        duties.drop(epoch);
        const now = (await duties.get(epoch)).duties.find((d) => d.slot === slot);
        key.log.info('not proposing: on the head\'s branch this slot is not this validator\'s', { slot, proposer: now?.validator_index ?? null, reason: err.message });
      } else if (hasCode(err, 'INVALID_SLOT')) {
        key.log.warn('not proposing: the head is already at or after this slot', { slot, reason: err.message });
      } else {
        key.log.warn(`not proposing: the beacon cannot build the block${hint(err)}`, { slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      }
      return undefined;
    }
    const cached = duties.peek(epoch);
    const drawn = toHex(t.dependentRoot);
    if (cached && cached.dependentRoot !== drawn) {
      key.log.info('proposer duties were drawn on another branch than the head\'s: fetching them again', { slot, epoch, dependent_root: drawn, duties_dependent_root: cached.dependentRoot });
      duties.drop(epoch);
      await duties.get(epoch);
    }
    return t;
  }
}

/** What to check when the beacon refuses the validator's token. */
function hint(err: BeaconClientError): string {
  return hasCode(err, 'UNAUTHORIZED') ? ' (check --token-file: it must hold the token the beacon was started with)' : '';
}
