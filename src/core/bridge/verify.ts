/**
 * The bridge's rules (docs/bridge.md, "Operations" and "Proofs"), pure functions over decoded
 * operations: the gas an operation costs, a counterpart's genesis document, a finality proof about
 * a counterpart's bridge account, and the checks of lock, release, refund and completion, each in
 * the order the design's tables list them. State is read through a BridgeState the caller
 * supplies, so admission (head state) and block execution (the block's view) run the same code.
 */
import { BRIDGE_ADDRESS, MAX_BRIDGE_TIMEOUT_SECONDS } from '../constants.js';
import { bytesEqual, toHex } from '../codec/bytes.js';
import { type Genesis, genesisHash, parseGenesis } from '../genesis/genesis.js';
import { SvcError } from '../errors.js';
import { LightClientError, type TrustedState } from '../light/types.js';
import { verifyAccountAgainstHeader, verifyFinalityUpdate } from '../light/verify.js';
import type { BlockHeader } from '../types/block.js';
import {
  type BidFields,
  BridgeError,
  BridgeOp,
  type FinalityProof,
  LockState,
  type LockBody,
  RELEASED_WORD,
  type ReleaseBody,
  type SettleBody,
  bidId,
  bridgeAccountProofToWire,
  type RegisterBody,
  type SetUpdateBody,
  committedSlot,
  counterpartSlot,
  ledgerSlot,
  lockSlot,
  releaseSlot,
  stateWord,
  verifyBidSignature,
  wordAmount,
  wordState,
} from './types.js';
import { type RegistrationTerms, type RegistryView, checkRegistrationSignatures, registrationTerms } from './registration.js';
import { type HeldSet, activeStake, trustedFromHeld, verifySetUpdate } from './set-update.js';

export { bridgeGas, isBridgeAddress } from './gas.js';

/**
 * Parses a register payload: the counterpart's genesis document (UTF-8 JSON), validated as a node
 * validates its own, and its hash. Refuses this chain itself and any malformed document
 * (BRIDGE_COUNTERPART_INVALID naming the field).
 */
export function parseCounterpart(genesisJson: Uint8Array, ownGenesisHash: Uint8Array): { genesis: Genesis; hash: Uint8Array } {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(genesisJson));
  } catch (err) {
    throw new BridgeError('BRIDGE_COUNTERPART_INVALID', `bridge.register: the genesis document is not UTF-8 JSON (${(err as Error).message})`);
  }
  let genesis: Genesis;
  try {
    genesis = parseGenesis(raw);
  } catch (err) {
    if (err instanceof SvcError) throw new BridgeError('BRIDGE_COUNTERPART_INVALID', `bridge.register: ${err.message}`);
    throw err;
  }
  const hash = genesisHash(genesis);
  if (bytesEqual(hash, ownGenesisHash)) throw new BridgeError('BRIDGE_COUNTERPART_INVALID', `bridge.register: ${toHex(hash)} is this chain's own genesis`);
  return { genesis, hash };
}

/**
 * Verifies a finality proof about a counterpart: the finality update against the validator set
 * this chain holds for it (`trusted`, the light client's rule), then its bridge account and
 * storage `slot` against the finalised header's state_root. Returns the header and the slot's
 * proven value (all zero when absent). Every failure is BRIDGE_PROOF_INVALID naming the
 * light-client code.
 */
export function verifyFinalityProof(proof: FinalityProof, trusted: TrustedState, slot: Uint8Array): { header: BlockHeader; value: Uint8Array } {
  try {
    const { header } = verifyFinalityUpdate(proof.update, trusted);
    const key = toHex(slot);
    const account = verifyAccountAgainstHeader(header, BRIDGE_ADDRESS, bridgeAccountProofToWire(proof.account, header.stateRoot, slot), [key]);
    if (account.storage.get(key) !== toHex(proof.account.value)) throw new LightClientError('LIGHT_PROOF_INVALID', `the proven value of slot ${key} differs from the one stated`);
    return { header, value: proof.account.value };
  } catch (err) {
    if (err instanceof LightClientError) throw new BridgeError('BRIDGE_PROOF_INVALID', `${err.code}: ${err.message}`);
    throw err;
  }
}

/** What the bridge rules read from a chain's state; admission gives the head state, execution the block's view. */
export interface BridgeState {
  /** This chain's genesis hash. */
  self: Uint8Array;
  /** The block's time (header timestampMs); at admission, the current time. */
  timestampMs: number;
  /** The genesis of a registered counterpart (its counterpart slot set), else undefined. */
  counterpart(genesisHash: Uint8Array): Genesis | undefined;
  /** The validator set this chain holds for a registered counterpart: its genesis set until a set update moved it (setSlot). */
  counterpartSet(genesisHash: Uint8Array, counterpart: Genesis): HeldSet;
  /** The bridge account's storage word at `slot` (all zero when absent). */
  storage(slot: Uint8Array): Uint8Array;
  /** The bridge account's balance, wei. */
  balance(): bigint;
  /** This chain's validator registry (who may register a counterpart). */
  registry: RegistryView;
}

/** The bridge balance not allocated to any counterpart's ledger or escrow, wei. */
export function unallocatedReserve(ctx: BridgeState): bigint {
  return ctx.balance() - wordAmount(ctx.storage(committedSlot()));
}

/**
 * Checks a registration (docs/bridge.md "Who may register"): a valid genesis document of another
 * chain not registered yet (BRIDGE_COUNTERPART_INVALID, BRIDGE_ALREADY_REGISTERED), signed by
 * ≥ 2/3 of this chain's active stake (registration.ts), with an allowance the unallocated reserve
 * covers (BRIDGE_INSUFFICIENT_RESERVE). Returns the counterpart and the terms signed.
 */
export function checkRegister(body: RegisterBody, ctx: BridgeState): { genesis: Genesis; hash: Uint8Array; terms: RegistrationTerms } {
  const { genesis, hash } = parseCounterpart(body.genesisJson, ctx.self);
  // The slot, not the document: the register's own counterpart is not among the documents loaded for a block.
  if (wordState(ctx.storage(counterpartSlot(hash))) !== 0) throw new BridgeError('BRIDGE_ALREADY_REGISTERED', `${genesis.chain_id} (${toHex(hash)}) is already a registered counterpart`);
  const terms = registrationTerms(ctx.self, genesis, hash, body.allowance);
  checkRegistrationSignatures(body, terms, ctx.registry);
  const free = unallocatedReserve(ctx);
  if (body.allowance > free) throw new BridgeError('BRIDGE_INSUFFICIENT_RESERVE', `an allowance of ${body.allowance} wei exceeds the unallocated bridge reserve of ${free} wei`);
  return { genesis, hash, terms };
}

/** The lock transaction's own terms: who sends, its hash and value. */
export interface LockTx {
  sender: Uint8Array;
  txHash: Uint8Array;
  /** The transaction's value, wei: the amount locked. */
  amount: bigint;
}

function registered(ctx: BridgeState, hash: Uint8Array, role: string): Genesis {
  const g = ctx.counterpart(hash);
  if (!g) throw new BridgeError('BRIDGE_UNKNOWN_COUNTERPART', `the ${role} ${toHex(hash)} is not a registered counterpart`);
  return g;
}

/**
 * Checks a lock (source chain) and returns the BID fields it creates: amount > 0, the destination
 * is another chain and registered, the timeout in the future and at most MAX_BRIDGE_TIMEOUT_SECONDS
 * past the block.
 */
export function checkLock(body: LockBody, tx: LockTx, ctx: BridgeState): BidFields {
  if (tx.amount <= 0n) throw new BridgeError('BRIDGE_BAD_LOCK', 'a lock must carry a value above 0 (the amount)');
  if (bytesEqual(body.destination, ctx.self)) throw new BridgeError('BRIDGE_BAD_LOCK', 'the destination is this chain');
  registered(ctx, body.destination, 'destination');
  const nowSeconds = Math.floor(ctx.timestampMs / 1000);
  if (body.timeout * 1000 <= ctx.timestampMs) throw new BridgeError('BRIDGE_BAD_LOCK', `timeout ${body.timeout} is not after the block time ${nowSeconds}`);
  if (body.timeout > nowSeconds + MAX_BRIDGE_TIMEOUT_SECONDS) {
    throw new BridgeError('BRIDGE_BAD_LOCK', `timeout ${body.timeout} is more than ${MAX_BRIDGE_TIMEOUT_SECONDS} s after the block time ${nowSeconds}`);
  }
  return { source: ctx.self, destination: body.destination, lockTx: tx.txHash, sender: tx.sender, recipient: body.recipient, amount: tx.amount, timeout: body.timeout };
}

/**
 * Checks a release (destination chain), in the order of docs/bridge.md's table, and returns the
 * BID id: destination, source registered, not expired, not released, finality proof, lock proven,
 * BID signatures (active in the set held for the source, distinct, valid, ≥ 2/3 of its active
 * stake), the source's ledger.
 */
export function checkRelease(body: ReleaseBody, ctx: BridgeState): Uint8Array {
  const f = body.bid;
  const bid = bidId(f);
  const id = toHex(bid);
  if (!bytesEqual(f.destination, ctx.self)) throw new BridgeError('BRIDGE_WRONG_DESTINATION', `BID ${id} is for destination ${toHex(f.destination)}, not this chain ${toHex(ctx.self)}`);
  const source = registered(ctx, f.source, 'source');
  if (ctx.timestampMs >= f.timeout * 1000) throw new BridgeError('BRIDGE_EXPIRED', `BID ${id} timed out at ${f.timeout}; the block time is ${Math.floor(ctx.timestampMs / 1000)}`);
  if (wordState(ctx.storage(releaseSlot(bid))) !== 0) throw new BridgeError('BRIDGE_ALREADY_RELEASED', `BID ${id} is already released`);
  const held = ctx.counterpartSet(f.source, source);
  const { value } = verifyFinalityProof(body.proof, trustedFromHeld(source, held), lockSlot(bid));
  if (wordState(value) !== LockState.Locked) throw new BridgeError('BRIDGE_LOCK_NOT_PROVEN', `the source state does not hold BID ${id} as LOCKED (slot word ${toHex(value)})`);
  const seen = new Set<number>();
  let signed = 0n;
  for (const s of body.signatures) {
    const v = held.validators.get(s.validatorIndex);
    if (!v || !v.active) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `validator ${s.validatorIndex} is not an active validator of the set held for the source (epoch ${held.epoch}, ${held.validators.size} validators)`);
    if (seen.has(s.validatorIndex)) throw new BridgeError('BRIDGE_DUPLICATE_SIGNER', `validator ${s.validatorIndex} signs BID ${id} twice`);
    seen.add(s.validatorIndex);
    if (!verifyBidSignature(bid, s, v.publicKey, source.chain_id)) {
      throw new BridgeError('BRIDGE_BAD_SIGNATURE', `the BID signature of validator ${s.validatorIndex} does not verify for BID ${id} on ${source.chain_id}`);
    }
    signed += v.stake;
  }
  const active = activeStake(held.validators);
  if (3n * signed < 2n * active) throw new BridgeError('BRIDGE_INSUFFICIENT_SIGNATURES', `BID signers hold ${signed} of ${active} stake, below 2/3`);
  const ledger = wordAmount(ctx.storage(ledgerSlot(f.source)));
  if (ledger < f.amount) throw new BridgeError('BRIDGE_INSUFFICIENT_LIQUIDITY', `the ledger of ${source.chain_id} holds ${ledger} wei, BID ${id} needs ${f.amount}`);
  return bid;
}

// Refund and completion share their first checks: the BID is this chain's, its destination known, its lock still LOCKED here.
function settle(body: SettleBody, ctx: BridgeState): { bid: Uint8Array; destination: Genesis } {
  const f = body.bid;
  const bid = bidId(f);
  if (!bytesEqual(f.source, ctx.self)) throw new BridgeError('BRIDGE_WRONG_SOURCE', `BID ${toHex(bid)} is from ${toHex(f.source)}, not this chain ${toHex(ctx.self)}`);
  const destination = registered(ctx, f.destination, 'destination');
  const state = wordState(ctx.storage(lockSlot(bid)));
  if (state !== LockState.Locked) {
    const what = state === 0 ? 'was never locked here' : state === LockState.Completed ? 'is already completed' : state === LockState.Refunded ? 'is already refunded' : 'has an unknown lock word';
    throw new BridgeError('BRIDGE_NOT_LOCKED', `BID ${toHex(bid)} ${what}`);
  }
  return { bid, destination };
}

/**
 * Checks a refund (source chain) and returns the BID id: the BID is this chain's and still LOCKED,
 * and a finalised destination header at or after the timeout proves it unreleased.
 */
export function checkRefund(body: SettleBody, ctx: BridgeState): Uint8Array {
  const { bid, destination } = settle(body, ctx);
  const f = body.bid;
  const { header, value } = verifyFinalityProof(body.proof, trustedFromHeld(destination, ctx.counterpartSet(f.destination, destination)), releaseSlot(bid));
  if (header.timestampMs < f.timeout * 1000) {
    throw new BridgeError('BRIDGE_TIMEOUT_NOT_REACHED', `the destination header ${header.index} is at ${Math.floor(header.timestampMs / 1000)}, before the timeout ${f.timeout}`);
  }
  if (wordState(value) !== 0) throw new BridgeError('BRIDGE_RELEASED_BEFORE_TIMEOUT', `the destination released BID ${toHex(bid)}: complete it instead`);
  return bid;
}

/** Checks a completion (source chain) and returns the BID id: the BID is this chain's and still LOCKED, and the destination's finalised state proves it released. */
export function checkComplete(body: SettleBody, ctx: BridgeState): Uint8Array {
  const { bid, destination } = settle(body, ctx);
  const { value } = verifyFinalityProof(body.proof, trustedFromHeld(destination, ctx.counterpartSet(body.bid.destination, destination)), releaseSlot(bid));
  if (!bytesEqual(value, RELEASED_WORD)) throw new BridgeError('BRIDGE_RELEASE_NOT_PROVEN', `the destination's finalised state does not hold BID ${toHex(bid)} as released`);
  return bid;
}

/**
 * Checks a set update (docs/bridge.md "Set updates"): the counterpart is registered, and the
 * update verifies against the set held for it (set-update.ts). Returns the counterpart and the
 * set it moves to.
 */
export function checkSetUpdate(body: SetUpdateBody, ctx: BridgeState): { genesis: Genesis; next: HeldSet } {
  const genesis = registered(ctx, body.counterpart, 'counterpart');
  return { genesis, next: verifySetUpdate(body, genesis, ctx.counterpartSet(body.counterpart, genesis)) };
}

/** The lock-slot word of a settled BID (what a refund or completion writes). */
export function settledWord(op: typeof BridgeOp.Refund | typeof BridgeOp.Complete): Uint8Array {
  return stateWord(op === BridgeOp.Refund ? LockState.Refunded : LockState.Completed);
}
