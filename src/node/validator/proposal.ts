/**
 * Proposals of the validator client, for whichever of the process's keys the slot's duty names:
 * head, pending transactions, RANDAO reveal (`RandaoKeeper.next` of the value the beacon last
 * accepted), header; slashing protection records the signing root **before** the block is
 * signed; then POST. Duties depend on the branch (the seed is the mix after the last block before
 * epoch − 1): when the head's dependent root for the epoch is not the cached duties' one, they are
 * fetched again before anything is signed, and a head that moved while the block was assembled
 * (attestations and randao_last are answered on the beacon's head of the moment) has it planned
 * again.
 */
import { type SlashingEvidence, encodeEvidence } from '../../core/consensus/slashing.js';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { MAX_BLOCK_TXS } from '../../core/constants.js';
import { sha3 } from '../../core/crypto/hash.js';
import { vrfProve } from '../../core/crypto/vrf.js';
import type { SvcError } from '../../core/errors.js';
import { type Genesis, slotStartMs } from '../../core/genesis/genesis.js';
import type { Attestation } from '../../core/types/attestation.js';
import { type BlockHeader, blockMerkleRoot, canonicalHeaderBytes, encodeBlock, headerSigningHash, signBlock, signedHeaderOf } from '../../core/types/block.js';
import { type Transaction, txSender } from '../../core/types/transaction.js';
import { AttestationSsz, BlockSsz } from '../../core/types/ssz.js';
import { isRecommit } from '../../core/consensus/recommit.js';
import { type BeaconClient, BeaconClientError } from '../../client/beacon.js';
import type { EngineClient } from '../../client/engine.js';
import { BEACON_SYNCING, type HeadView, type ProposerDutyView, type ValidatorView } from '../../api/beacon.js';
import type { Logger } from '../../util/log.js';
import { dependentRootOn, type ProposerDutiesCache } from './duties.js';
import type { ValidatorMetrics } from './metrics.js';
import { RandaoChainError } from './randao-chain.js';
import { type SlashingProtectionDb, SlashingProtectionError } from './slashing-protection.js';
import type { ValidatorKey } from './validator-key.js';

/** Codes with which the beacon says the cached duties were wrong for the block. */
const STALE_DUTY_CODES = new Set(['WRONG_PROPOSER', 'WRONG_VRF_SEED']);

/** How many times a proposal is re-planned when the head moves to another branch under it. */
const MAX_PROPOSAL_ATTEMPTS = 3;

/** What proposing needs from the process. */
export interface ProposerOptions {
  genesis: Genesis;
  beacon: BeaconClient;
  execution: EngineClient;
  sp: SlashingProtectionDb;
  duties: ProposerDutiesCache;
  metrics: ValidatorMetrics;
  log: Logger;
  /** Awaits a beacon call (the process logs the first success after an outage). */
  call: <T>(p: Promise<T>) => Promise<T>;
  proposeTimeoutMs: number;
  /** Stop packing transactions once the block's SSZ would exceed this. */
  maxBlockBytes: number;
}

/** Builds, protects, signs and posts the blocks of the process's keys. */
export class Proposer {
  constructor(private readonly o: ProposerOptions) {}

  /** Proposes the block of `slot` for `key` (registry `index`); true when the beacon accepted it. */
  async propose(key: ValidatorKey, slot: number, epoch: number, index: number): Promise<boolean> {
    const chainId = this.o.genesis.chain_id;
    let planned: { head: HeadView; duty: ProposerDutyView } | undefined;
    let attestations: Attestation[] = [];
    let slashings: SlashingEvidence[] = [];
    let v: ValidatorView | undefined;
    // The beacon answers the attestations and randao_last below on its head of the moment: if the
    // head moved to another branch meanwhile they may not fit the parent, so plan again.
    for (let attempt = 1; ; attempt++) {
      planned = await this.headAndDuty(key, slot, epoch, index);
      if (!planned) return false;
      ({ attestations, slashings } = await this.blockAttestations(slot));
      v = await this.o.call(this.o.beacon.validator(index));
      if (v.address !== key.address) throw this.o.beacon.badResponse(`GET /api/v1/validators/${index}`, `it answered address ${v.address}, not ${key.address}`);
      const now = await this.o.call(this.o.beacon.head());
      if (now.root === planned.head.root) break;
      if (attempt === MAX_PROPOSAL_ATTEMPTS) {
        key.log.warn('not proposing: the head keeps moving while the block is assembled', { slot, head: now.root });
        return false;
      }
      key.log.info('the head moved while the block was assembled: planning it again', { slot, was: planned.head.root, head: now.root });
    }
    const { head, duty } = planned;
    // Execution lets a lone validator include its own re-commitment; an epoch whose every slot is
    // this validator's is taken as that (if wrong, the re-commitment fails and is sent again).
    const alone = (await this.o.duties.get(epoch)).duties.every((d) => d.validator_index === index);
    // SSZ sizes: attestations are fixed-size; each evidence is a byte list behind a 4-byte offset.
    const reserved = attestations.length * AttestationSsz.fixedSize! + slashings.reduce((n, e) => n + encodeEvidence(e).length + 4, 0);
    const { txs, envelopes } = await this.pendingTransactions(key, slot, reserved, alone);
    await key.randao.ready();
    const last = v.randao_last === null ? key.randao.firstCommitment() : parseHex(v.randao_last, 'randao_last', 32);
    let randaoReveal: Uint8Array;
    try {
      randaoReveal = key.randao.next(last);
    } catch (err) {
      if (!(err instanceof RandaoChainError) || err.code !== 'RANDAO_CHAIN_EXHAUSTED') throw err;
      // An invalid reveal would only be refused: skip the slot until the new commitment lands.
      key.log.warn('not proposing: RANDAO chain exhausted and the re-commitment has not taken effect yet', { slot, generation: key.randao.generation, randao_last: v.randao_last });
      key.recommitCheck(last);
      return false;
    }
    const vrfSeed = parseHex(duty.vrf_seed, 'vrf_seed', 32);
    // The parent's post-state root, which execution checks the header against (STATE_ROOT_MISMATCH).
    let stateRoot: Uint8Array;
    try {
      stateRoot = parseHex(await this.o.execution.stateRoot(head.root), 'state_root', 32);
    } catch (err) {
      key.log.warn('not proposing: execution cannot give the parent\'s state root', { slot, parent: head.root, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return false;
    }
    const vrfProof = vrfProve(key.keys.mldsa, vrfSeed, chainId);
    this.o.metrics.signed('vrf');
    const header: BlockHeader = {
      index: head.index + 1,
      timestampMs: slotStartMs(this.o.genesis, slot),
      parentHash: parseHex(head.root, 'head root', 32),
      // A transaction's hash is SHA3 of its envelope: execution's envelopes are hashed as they are.
      merkleRoot: blockMerkleRoot(envelopes.map((e) => sha3(e)), attestations, slashings),
      validatorId: parseHex(key.address, 'address', 20),
      vrfProof,
      vrfSeed,
      randaoReveal,
      stateRoot,
    };
    const signingRoot = headerSigningHash(signedHeaderOf(header, chainId, index));
    // A block of this slot is already on record (signed before a restart): the slot is done.
    if (this.o.sp.blockAt(key.pubkeyHex, slot, signingRoot) === 'other') {
      this.o.metrics.skippedAlreadySigned('block');
      key.log.debug('proposal skipped: this key already signed a block at this slot', { slot, parent: head.root });
      return false;
    }
    try {
      // Durable before the signature exists: a crash after this line cannot forget the block.
      await this.o.sp.checkAndRecordBlock(key.pubkeyHex, slot, signingRoot);
    } catch (err) {
      if (!(err instanceof SlashingProtectionError)) throw err;
      this.o.metrics.slashingRefused(index);
      key.log.warn('slashing protection refused to sign a block', { slot, rule: err.rule, reason: err.message, parent: head.root, signing_root: toHex(signingRoot) });
      return false;
    }
    const block = signBlock(header, txs, key.keys.mldsa, chainId, index, attestations, slashings);
    this.o.metrics.signed('block');
    this.o.metrics.canonicalBytes.set(canonicalHeaderBytes(signedHeaderOf(header, chainId, index), block.signature).length);
    let res;
    try {
      // Execution's envelopes are the transactions' encodings: the block is not encoded twice.
      res = await this.o.call(this.o.beacon.proposeBlock(encodeBlock(block, envelopes), { timeoutMs: this.o.proposeTimeoutMs }));
    } catch (err) {
      if (!(err instanceof BeaconClientError) || err.transport) throw err;
      if (STALE_DUTY_CODES.has(err.code)) this.o.duties.drop(epoch);
      const hint = err.code === 'UNAUTHORIZED' ? ' (check --token-file: it must hold the token the beacon was started with)' : '';
      key.log.warn(`the beacon refused the block${hint}`, { slot, code: err.code, reason: err.message, http_status: err.httpStatus });
      return false;
    }
    this.o.metrics.blockProposed(index);
    key.recommitCheck(randaoReveal);
    key.log.info('block proposed', { slot, number: header.index, block_hash: res.block_hash, parent: head.root, transactions: txs.length, attestations: attestations.length, slashings: slashings.length, already_known: res.already_known ?? false });
    return true;
  }

  /**
   * The beacon's includable attestations and pending slashing evidence for `slot`; none if it
   * cannot say (a block without them is still a valid block, and they stay includable in the next one).
   */
  private async blockAttestations(slot: number): Promise<{ attestations: Attestation[]; slashings: SlashingEvidence[] }> {
    try {
      const r = await this.o.call(this.o.beacon.blockAttestations(slot));
      return { attestations: r.attestations, slashings: r.slashings };
    } catch (err) {
      // A beacon syncing the network's finalised chain: its head is an abandoned branch, no block goes on it.
      if (err instanceof BeaconClientError && (err.transport || err.code === BEACON_SYNCING)) throw err;
      this.o.log.warn('no attestations from the beacon: proposing without any', { slot, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return { attestations: [], slashings: [] };
    }
  }

  /**
   * Execution's pending transactions in build order, decoded, with their envelopes, within what
   * `reservedBytes` of attestations and evidence leave of the block's SSZ size; none if execution cannot say.
   */
  private async pendingTransactions(key: ValidatorKey, slot: number, reservedBytes = 0, packOwnRecommit = false): Promise<{ txs: Transaction[]; envelopes: Uint8Array[] }> {
    let raw;
    try {
      raw = await this.o.execution.pendingTransactions();
    } catch (err) {
      this.o.log.warn('no transactions from execution: proposing an empty block', { slot, code: (err as SvcError).code ?? 'ERROR', error: (err as Error).message });
      return { txs: [], envelopes: [] };
    }
    // A later transaction of the same sender may depend on the bad one's nonce: the client stopped there.
    if (raw.malformed) this.o.log.error('execution sent a transaction that does not parse: packing only the ones before it', { slot, position: raw.malformed.position, error: raw.malformed.message });
    const txs: Transaction[] = [];
    const envelopes: Uint8Array[] = [];
    // The block's fixed part (header, signature, list offsets), then each envelope behind its 4-byte offset.
    let bytes = BlockSsz.minSize + reservedBytes;
    let heldBack = false;
    for (let i = 0; i < raw.transactions.length && txs.length < MAX_BLOCK_TXS; i++) {
      const tx = raw.transactions[i]!;
      const envelope = raw.envelopes[i]!;
      bytes += envelope.length + 4;
      if (bytes > this.o.maxBlockBytes) {
        this.o.log.warn('block size cap reached: leaving the remaining transactions in the pool', { slot, packed: txs.length, offered: raw.count });
        break;
      }
      // Execution fails a validator's re-commitment in its own block unless it is the only
      // active validator (core/consensus/recommit.ts): it waits for another proposer, and so do
      // this sender's later nonces.
      if ((heldBack || (isRecommit(tx) && !packOwnRecommit)) && toHex(txSender(tx)) === key.address) {
        heldBack = true;
        continue;
      }
      txs.push(tx);
      envelopes.push(envelope);
    }
    return { txs, envelopes };
  }

  /**
   * The head to build the block of `slot` on, with this slot's duty drawn on the head's branch:
   * cached duties whose dependent root is not the head's were drawn on another branch (the head
   * moved since they were fetched) and are fetched again. Undefined when there is nothing to
   * propose (head already at the slot, not this validator's slot on this branch, a head that
   * keeps moving).
   */
  private async headAndDuty(key: ValidatorKey, slot: number, epoch: number, index: number): Promise<{ head: HeadView; duty: ProposerDutyView } | undefined> {
    for (let attempt = 1; ; attempt++) {
      const head = await this.o.call(this.o.beacon.head());
      if (head.slot >= slot) {
        this.o.log.warn('not proposing: the head is already at or after this slot', { slot, head_slot: head.slot, head: head.root });
        return undefined;
      }
      const want = dependentRootOn(head, epoch, this.o.genesis);
      if (want === undefined) throw this.o.beacon.badResponse('GET /api/v1/beacon/head', `no proposer dependent root for epoch ${epoch} at head slot ${head.slot}`);
      const cached = this.o.duties.peek(epoch);
      const entry = await this.o.duties.get(epoch);
      if (entry.dependentRoot === want) {
        const duty = entry.duties.find((d) => d.slot === slot);
        if (duty && duty.validator_index === index && duty.address === key.address) return { head, duty };
        key.log.info('not proposing: on the head\'s branch this slot is not this validator\'s', { slot, head: head.root, dependent_root: want, proposer: duty?.validator_index ?? null });
        return undefined;
      }
      if (attempt === MAX_PROPOSAL_ATTEMPTS) {
        this.o.log.warn('not proposing: the head keeps moving between branches with different proposer duties', { slot, head: head.root, dependent_root: want, duties_dependent_root: entry.dependentRoot });
        return undefined;
      }
      // Fetched just now, the duties are from a head newer than `head`: read the head again.
      if (entry === cached) {
        this.o.log.info('proposer duties were drawn on another branch than the head\'s: fetching them again', { slot, epoch, head: head.root, dependent_root: want, duties_dependent_root: entry.dependentRoot });
        this.o.duties.drop(epoch);
      }
    }
  }
}
