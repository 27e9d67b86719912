/**
 * RANDAO re-commitment: the capped registry operation through which a validator whose hash
 * chain runs low registers a fresh commitment H^n(secret'). It is an ordinary signed type-0
 * transaction to RANDAO_COMMIT_ADDRESS (value 0, data = the 32-byte commitment) handled natively
 * by execution, like deposits and exits. Execution (its registry and its per-branch last values)
 * and the beacon (its per-block RandaoState) both learn a block's re-commitments from
 * `blockRecommitments`, so the two agree by construction on which ones take effect: from the
 * block after the including one, the validator's last accepted value is the new commitment, and
 * a reveal from the old chain is no longer a preimage of it.
 *
 * Why the scheme stays ungrindable: a reveal is fixed by the commitment, so the only freedom is
 * in choosing secret'. A re-commitment is refused in a block its own validator proposes, so the
 * new commitment is signed before the including block (and the reveal of another validator that
 * block mixes in) exists: when the validator picks secret' it cannot know the mix its first new
 * reveal will be mixed into. One re-commitment per validator per block and a per-block cap bound
 * what a block can carry; each one costs a transaction fee. A lone active validator is exempt
 * from the own-block rule: it proposes every slot and so already chooses every reveal, the
 * rule would protect nothing and leave it no way to re-commit.
 */
import { bytesEqual, parseHex, toHex } from '../codec/bytes.js';
import { HASH_BYTES, MAX_BLOCK_RANDAO_COMMITS, RANDAO_COMMIT_ADDRESS } from '../constants.js';
import { addressFromPublicKey } from '../crypto/address.js';
import { SvcError } from '../errors.js';
import { isAuthorization, type Transaction, TxType } from '../types/transaction.js';
import type { RandaoState } from './randao.js';

/** What the rules need to know of the registry: an address's validator index and whether it is active. */
export interface RecommitRegistryEntry {
  readonly index: number;
  readonly active: boolean;
}

/** The registry as the rules see it: by address (0x lowercase), undefined when not registered. */
export type RecommitLookup = (address: string) => RecommitRegistryEntry | undefined;

/** A re-commitment that takes effect. */
export interface RandaoRecommitment {
  /** Position of its transaction in the block. */
  readonly txIndex: number;
  readonly validatorIndex: number;
  readonly address: string;
  readonly commitment: Uint8Array;
}

/** The re-commitments of a block: those that take effect, and why each other one fails (by transaction position). */
export interface BlockRecommitments {
  readonly applied: readonly RandaoRecommitment[];
  readonly failed: ReadonlyMap<number, string>;
}

/** Machine code of every refused re-commitment. */
export const RECOMMIT_ERROR_CODE = 'INVALID_RANDAO_RECOMMIT';

/** A re-commitment transaction that admission refuses; the message says which rule. */
export class RecommitError extends SvcError {
  constructor(message: string) {
    super(RECOMMIT_ERROR_CODE, message);
  }
}

const ZERO = new Uint8Array(HASH_BYTES);
const RANDAO_COMMIT_BYTES = parseHex(RANDAO_COMMIT_ADDRESS, 'RANDAO_COMMIT_ADDRESS', 20);

/** True when the transaction is addressed to RANDAO_COMMIT_ADDRESS. */
export function isRecommit(tx: Transaction): boolean {
  // Compared as bytes: block import asks this of every transaction, and a hex string per transaction cost more than the rest of the check.
  return !isAuthorization(tx) && tx.to !== null && bytesEqual(tx.to, RANDAO_COMMIT_BYTES);
}

/**
 * Why a re-commitment transaction cannot take effect judged on its own (what admission checks),
 * or undefined when it can. The sender of a type-0 transaction is the address of its public key.
 */
export function recommitProblem(tx: Transaction, lookup: RecommitLookup): string | undefined {
  if (tx.type !== TxType.Standard) return "a RANDAO re-commitment must be a type-0 transaction signed by the validator's ML-DSA key";
  if (tx.value !== 0n) return 'a RANDAO re-commitment carries no value';
  if (tx.data.length !== HASH_BYTES) return `a RANDAO re-commitment carries the ${HASH_BYTES}-byte new commitment as its data, got ${tx.data.length} bytes`;
  if (bytesEqual(tx.data, ZERO)) return 'a RANDAO commitment must not be all zeros';
  const sender = toHex(addressFromPublicKey(tx.publicKey));
  const v = lookup(sender);
  if (!v || !v.active) return `sender ${sender} is not a registered, active validator`;
  return undefined;
}

/**
 * The re-commitments `txs` (a block proposed by `proposer`, 0x address) make against the
 * registry before the block, in transaction order: each must pass `recommitProblem`, must not be
 * the proposer's own (see the header), at most one per validator, at most
 * MAX_BLOCK_RANDAO_COMMITS per block. `activeValidators` counts the validators the proposer draw
 * considers (read only when the proposer re-commits). Failures keep the block valid (receipt
 * status 0), as for deposits and exits.
 */
export function blockRecommitments(txs: readonly Transaction[], proposer: string, lookup: RecommitLookup, activeValidators: () => number): BlockRecommitments {
  const applied: RandaoRecommitment[] = [];
  const failed = new Map<number, string>();
  const seen = new Set<number>();
  txs.forEach((tx, txIndex) => {
    if (!isRecommit(tx)) return;
    const problem = recommitProblem(tx, lookup);
    if (problem !== undefined) return void failed.set(txIndex, problem);
    // recommitProblem accepted it, so it is type 0 and its sender is registered.
    const std = tx as Extract<Transaction, { type: 0 }>;
    const address = toHex(addressFromPublicKey(std.publicKey));
    const v = lookup(address)!;
    if (address === proposer.toLowerCase() && activeValidators() > 1) return void failed.set(txIndex, 'a RANDAO re-commitment cannot be included in a block its own validator proposes');
    if (seen.has(v.index)) return void failed.set(txIndex, `validator ${v.index} already re-commits in this block`);
    if (applied.length >= MAX_BLOCK_RANDAO_COMMITS) return void failed.set(txIndex, `a block applies at most ${MAX_BLOCK_RANDAO_COMMITS} RANDAO re-commitments`);
    seen.add(v.index);
    applied.push({ txIndex, validatorIndex: v.index, address, commitment: std.data.slice() });
  });
  return { applied, failed };
}

/** The RANDAO state with each re-commitment's validator's last value replaced by its new commitment (the mix is unchanged). */
export function applyRecommitments(state: RandaoState, commits: readonly RandaoRecommitment[]): RandaoState {
  if (commits.length === 0) return state;
  const last = new Map(state.last);
  for (const c of commits) last.set(c.validatorIndex, c.commitment.slice());
  return { mix: state.mix, last };
}
