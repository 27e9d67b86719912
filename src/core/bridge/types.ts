/**
 * The bridge's protocol objects (docs/bridge.md): BID fields and ids, the bridge account's storage
 * slots and the words they hold, the five operation payloads a transaction to BRIDGE_ADDRESS
 * carries, the receipt log each applied operation emits, and the BID signature validators make.
 * Pure: no I/O. The checks that judge a payload are in verify.ts.
 */
import { ByteListType, ByteVectorType, ContainerType, ListCompositeType, UintBigintType, UintNumberType, type ValueOf } from '@chainsafe/ssz';
import {
  ADDRESS_BYTES,
  BRIDGE_ADDRESS,
  HASH_BYTES,
  MAX_BRIDGE_PROOF_NODES,
  MAX_BRIDGE_SET_VALIDATORS,
  MAX_BRIDGE_SIGNERS,
  MAX_TRIE_NODE_BYTES,
  MAX_TX_DATA_BYTES,
  SIGNATURE_BYTES,
} from '../constants.js';
import { bigintToBytesBE, bytesEqual, bytesToBigintBE, concatBytes, parseHex, toHex, utf8, tag32 } from '../codec/bytes.js';
import { Domain, signingHash } from '../crypto/domain.js';
import { sha3 } from '../crypto/hash.js';
import { type MlDsaKeyPair, sign, verify } from '../crypto/mldsa.js';
import { MalformedError, SvcError } from '../errors.js';
import { AttestationSsz, BlockHeaderSsz, CheckpointSsz } from '../types/ssz.js';
import { RegistryEntrySsz } from '../consensus/registry.js';
import type { FinalityUpdate } from '../light/types.js';
import type { AccountProofWire } from '../state/trie.js';

/** Why a bridge operation is refused; `code` names the rule (docs/bridge.md, "Failure codes"). */
export class BridgeError extends SvcError<BridgeErrorCode> {
  constructor(code: BridgeErrorCode, message: string) {
    super(code, message);
  }
}

/** Machine codes of the bridge rules (a list, so metrics can pre-create a series per code). */
export const BRIDGE_ERROR_CODES = [
  'BRIDGE_MALFORMED',
  'BRIDGE_UNKNOWN_COUNTERPART',
  'BRIDGE_COUNTERPART_INVALID',
  'BRIDGE_BAD_LOCK',
  'BRIDGE_WRONG_SOURCE',
  'BRIDGE_WRONG_DESTINATION',
  'BRIDGE_PROOF_INVALID',
  'BRIDGE_LOCK_NOT_PROVEN',
  'BRIDGE_RELEASE_NOT_PROVEN',
  'BRIDGE_RELEASED_BEFORE_TIMEOUT',
  'BRIDGE_TIMEOUT_NOT_REACHED',
  'BRIDGE_UNKNOWN_SIGNER',
  'BRIDGE_DUPLICATE_SIGNER',
  'BRIDGE_BAD_SIGNATURE',
  'BRIDGE_INSUFFICIENT_SIGNATURES',
  'BRIDGE_EXPIRED',
  'BRIDGE_ALREADY_RELEASED',
  'BRIDGE_NOT_LOCKED',
  'BRIDGE_INSUFFICIENT_LIQUIDITY',
  'BRIDGE_REGISTRATION_UNAUTHORIZED',
  'BRIDGE_ALREADY_REGISTERED',
  'BRIDGE_INSUFFICIENT_RESERVE',
  'BRIDGE_SET_UPDATE_INVALID',
] as const;
export type BridgeErrorCode = (typeof BRIDGE_ERROR_CODES)[number];

/** Op codes: the first byte of a transaction to BRIDGE_ADDRESS. */
export const BridgeOp = { Register: 1, Lock: 2, Release: 3, Refund: 4, Complete: 5, UpdateSet: 6 } as const;
export type BridgeOpCode = (typeof BridgeOp)[keyof typeof BridgeOp];
/** Receipt `kind` of each op. */
export const BRIDGE_OP_KIND = { 1: 'bridge_register', 2: 'bridge_lock', 3: 'bridge_release', 4: 'bridge_refund', 5: 'bridge_complete', 6: 'bridge_update_set' } as const;
export type BridgeOpKind = (typeof BRIDGE_OP_KIND)[BridgeOpCode];

const uint64n = new UintNumberType(8);
const uint256 = new UintBigintType(32);
const bytes32 = new ByteVectorType(HASH_BYTES);
const address = new ByteVectorType(ADDRESS_BYTES);
const signature = new ByteVectorType(SIGNATURE_BYTES);
const trieNodes = new ListCompositeType(new ByteListType(MAX_TRIE_NODE_BYTES), MAX_BRIDGE_PROOF_NODES);

/** Everything a BID id commits to. Chains are named by genesis hash, which commits to their chain id and validators. */
export interface BidFields {
  /** Genesis hash of the chain the lock is on. */
  source: Uint8Array;
  /** Genesis hash of the chain that releases. */
  destination: Uint8Array;
  /** Hash of the lock transaction. */
  lockTx: Uint8Array;
  sender: Uint8Array;
  recipient: Uint8Array;
  /** Wei. */
  amount: bigint;
  /** Unix seconds: a release needs a destination block before it; a refund a finalised destination header at or after it. */
  timeout: number;
}

export const BidFieldsSsz = new ContainerType({
  source: bytes32,
  destination: bytes32,
  lockTx: bytes32,
  sender: address,
  recipient: address,
  amount: uint256,
  timeout: uint64n,
});

/** Body of a lock: the amount is the transaction's value, the sender its signer. */
export interface LockBody {
  destination: Uint8Array;
  recipient: Uint8Array;
  timeout: number;
}

export const LockBodySsz = new ContainerType({ destination: bytes32, recipient: address, timeout: uint64n });

/** A finality update in SSZ (the light client's object, docs/light-client.md). */
export const FinalityUpdateSsz = new ContainerType({
  finalized: CheckpointSsz,
  target: CheckpointSsz,
  header: BlockHeaderSsz,
  attestations: new ListCompositeType(AttestationSsz, MAX_BRIDGE_SIGNERS),
  /** Bitfield over validator indices: room for 8,192 validators. */
  participation: new ByteListType(1024),
});

/** The bridge account of the counterpart proven against a header's state_root, with one of its storage slots. */
export interface BridgeAccountProof {
  balance: bigint;
  nonce: bigint;
  codeHash: Uint8Array;
  storageHash: Uint8Array;
  /** Account trie nodes from the state root down (docs/protocol.md, State trie). */
  accountNodes: Uint8Array[];
  /** The slot's value (all zero: absent). */
  value: Uint8Array;
  /** Storage trie nodes from the storage root down. */
  storageNodes: Uint8Array[];
}

export const BridgeAccountProofSsz = new ContainerType({
  balance: uint256,
  nonce: new UintBigintType(8),
  codeHash: bytes32,
  storageHash: bytes32,
  accountNodes: trieNodes,
  value: bytes32,
  storageNodes: trieNodes,
});

/** A statement about one slot of a counterpart's bridge account, as of a finalised header it proves. */
export interface FinalityProof {
  /** Its header is the finalised header; the slot is proven against that header's state_root. */
  update: FinalityUpdate;
  account: BridgeAccountProof;
}

export const FinalityProofSsz = new ContainerType({ update: FinalityUpdateSsz, account: BridgeAccountProofSsz });

/** One source validator's signature over a BID id. */
export interface BidSignature {
  validatorIndex: number;
  signature: Uint8Array;
}

export const BidSignatureSsz = new ContainerType({ validatorIndex: uint64n, signature });

/** Release (destination chain): the BID, the lock proven in the source's finalised state, and BID signatures of the source's validators. */
export interface ReleaseBody {
  bid: BidFields;
  proof: FinalityProof;
  signatures: BidSignature[];
}

export const ReleaseBodySsz = new ContainerType({
  bid: BidFieldsSsz,
  proof: FinalityProofSsz,
  signatures: new ListCompositeType(BidSignatureSsz, MAX_BRIDGE_SIGNERS),
});

/**
 * Refund or completion (source chain): the BID and the destination's release slot proven in its
 * finalised state (absent at a header at or after the timeout for a refund, RELEASED for a completion).
 */
export interface SettleBody {
  bid: BidFields;
  proof: FinalityProof;
}

export const SettleBodySsz = new ContainerType({ bid: BidFieldsSsz, proof: FinalityProofSsz });

/**
 * Register (docs/bridge.md "Who may register"): the counterpart's genesis document (UTF-8
 * canonical JSON), the allowance moved from this chain's unallocated reserve into the
 * counterpart's ledger, and the signatures of this chain's validators over those terms
 * (registration.ts), which must hold ≥ 2/3 of its active stake.
 */
export interface RegisterBody {
  genesisJson: Uint8Array;
  /** Wei. */
  allowance: bigint;
  signatures: BidSignature[];
}

export const RegisterBodySsz = new ContainerType({
  genesisJson: new ByteListType(MAX_TX_DATA_BYTES),
  allowance: uint256,
  signatures: new ListCompositeType(BidSignatureSsz, MAX_BRIDGE_SIGNERS),
});

/**
 * A counterpart's whole registry proven against a header's state_root, in SSZ (docs/bridge.md
 * "Set updates"): the entries in index order, the registry account's proof, and the storage
 * proof of the count slot then of each entry's slot. Slots and words are not carried: both
 * follow from the entries, so a proof cannot name other ones.
 */
export const RegistryProofSsz = new ContainerType({
  entries: new ListCompositeType(RegistryEntrySsz, MAX_BRIDGE_SET_VALIDATORS),
  balance: uint256,
  nonce: new UintBigintType(8),
  codeHash: bytes32,
  storageHash: bytes32,
  accountNodes: trieNodes,
  storageNodes: new ListCompositeType(trieNodes, MAX_BRIDGE_SET_VALIDATORS + 1),
});
export type RegistryProofBody = ValueOf<typeof RegistryProofSsz>;

/**
 * Set update (docs/bridge.md "Set updates"): a set change of counterpart `counterpart` (the light
 * client's object, docs/light-client.md "Set changes"): the finality of a checkpoint signed by the
 * set this chain holds for it, and the registry in that checkpoint's state.
 */
export interface SetUpdateBody {
  counterpart: Uint8Array;
  finality: FinalityUpdate;
  registry: RegistryProofBody;
}

export const SetUpdateBodySsz = new ContainerType({ counterpart: bytes32, finality: FinalityUpdateSsz, registry: RegistryProofSsz });


const BID_TAG = tag32('svc/bridge/bid/v1');
const LOCK_SLOT_TAG = tag32('svc/bridge/lock/v1');
const RELEASE_SLOT_TAG = tag32('svc/bridge/release/v1');
const COUNTERPART_SLOT_TAG = tag32('svc/bridge/counterpart/v1');
const LEDGER_SLOT_TAG = tag32('svc/bridge/ledger/v1');
const ESCROW_SLOT_TAG = tag32('svc/bridge/escrow/v1');
const ALLOWANCE_SLOT_TAG = tag32('svc/bridge/allowance/v1');
const SET_SLOT_TAG = tag32('svc/bridge/set/v1');
const COMMITTED_SLOT = sha3(tag32('svc/bridge/committed/v1'));

/** The BID id: SHA3-256(tag ‖ SSZ(fields)). */
export function bidId(f: BidFields): Uint8Array {
  return sha3(BID_TAG, BidFieldsSsz.serialize(f));
}

/** Source chain: the bridge storage slot holding a BID's lock state (a LockState word). */
export function lockSlot(bid: Uint8Array): Uint8Array {
  return sha3(LOCK_SLOT_TAG, bid);
}

/** Destination chain: the bridge storage slot marking a BID released (RELEASED_WORD), zero until then. */
export function releaseSlot(bid: Uint8Array): Uint8Array {
  return sha3(RELEASE_SLOT_TAG, bid);
}

/** The bridge storage slot marking a counterpart (by genesis hash) registered (REGISTERED_WORD). */
export function counterpartSlot(genesisHash: Uint8Array): Uint8Array {
  return sha3(COUNTERPART_SLOT_TAG, genesisHash);
}

/** A counterpart's ledger (a uint256 word): what releases from it may still pay, wei. */
export function ledgerSlot(genesisHash: Uint8Array): Uint8Array {
  return sha3(LEDGER_SLOT_TAG, genesisHash);
}

/** What this chain's users locked toward a counterpart and is not settled yet (a uint256 word): refunds pay from it, completions move it to the ledger. */
export function escrowSlot(genesisHash: Uint8Array): Uint8Array {
  return sha3(ESCROW_SLOT_TAG, genesisHash);
}

/** The allowance a counterpart was registered with (a uint256 word; for the views, no rule reads it). */
export function allowanceSlot(genesisHash: Uint8Array): Uint8Array {
  return sha3(ALLOWANCE_SLOT_TAG, genesisHash);
}

/** The commitment of the validator set this chain holds for a counterpart (set-update.ts); absent while it is the counterpart's genesis set. */
export function setSlot(genesisHash: Uint8Array): Uint8Array {
  return sha3(SET_SLOT_TAG, genesisHash);
}

/** The sum of every counterpart's ledger and escrow (a uint256 word): the bridge balance above it is the unallocated reserve. */
export function committedSlot(): Uint8Array {
  return COMMITTED_SLOT;
}

/** A uint256 storage word. */
export function amountWord(value: bigint): Uint8Array {
  return bigintToBytesBE(value, 32);
}

/** The value of a uint256 storage word (0 for an absent slot). */
export function wordAmount(word: Uint8Array): bigint {
  return bytesToBigintBE(word);
}

/** States of a lock slot on the source chain. */
export const LockState = { Locked: 1, Completed: 2, Refunded: 3 } as const;

/** The 32-byte word of a small state value (big-endian, as storage words are read). */
export function stateWord(value: number): Uint8Array {
  const w = new Uint8Array(32);
  w[31] = value;
  return w;
}

/** The value of a word written by stateWord, or -1 for any other word (0 for an absent slot). */
export function wordState(word: Uint8Array): number {
  if (word.length !== 32 || word.subarray(0, 31).some((b) => b !== 0)) return -1;
  return word[31]!;
}

/** The release and registration marker. */
export const RELEASED_WORD = stateWord(1);
export const REGISTERED_WORD = stateWord(1);


/** Hash a source validator signs to attest a BID, under the source chain's id. */
export function bidSigningHash(bid: Uint8Array, sourceChainId: string): Uint8Array {
  return signingHash(Domain.BridgeBid, sourceChainId, bid);
}

/** Signs a BID id as validator `validatorIndex` of `sourceChainId`. */
export function signBid(bid: Uint8Array, validatorIndex: number, key: MlDsaKeyPair, sourceChainId: string): BidSignature {
  return { validatorIndex, signature: sign(key.secretKey, bidSigningHash(bid, sourceChainId), { deterministic: true }) };
}

/** True when a BID signature verifies under `publicKey`. */
export function verifyBidSignature(bid: Uint8Array, s: BidSignature, publicKey: Uint8Array, sourceChainId: string): boolean {
  return verify(publicKey, bidSigningHash(bid, sourceChainId), s.signature);
}

/** Receipt log topics[0] of each applied operation, SHA3-256 of its event name. */
export const BridgeEvent = {
  Registered: sha3(utf8('svc/bridge/Registered')),
  Locked: sha3(utf8('svc/bridge/Locked')),
  Released: sha3(utf8('svc/bridge/Released')),
  Refunded: sha3(utf8('svc/bridge/Refunded')),
  Completed: sha3(utf8('svc/bridge/Completed')),
  SetUpdated: sha3(utf8('svc/bridge/SetUpdated')),
} as const;
export type BridgeEventName = keyof typeof BridgeEvent;

/**
 * What one bridge receipt log says. Logs come from BRIDGE_ADDRESS with topics [event, id] where id
 * is the BID (or, for Registered and SetUpdated, the counterpart's genesis hash); data is
 * SSZ(BidFields) for BID events, the UTF-8 chain id for Registered, and the new set's commitment
 * then its checkpoint epoch (uint64 big-endian) for SetUpdated.
 */
export type BridgeLogEvent =
  | { event: 'Registered'; genesisHash: Uint8Array; chainId: string }
  | { event: 'SetUpdated'; genesisHash: Uint8Array; commitment: Uint8Array; epoch: number }
  | { event: Exclude<BridgeEventName, 'Registered' | 'SetUpdated'>; bid: Uint8Array; fields: BidFields };

/** The log an applied operation emits (address BRIDGE_ADDRESS). */
export function bridgeLog(e: BridgeLogEvent): { topics: Uint8Array[]; data: Uint8Array } {
  if (e.event === 'Registered') return { topics: [BridgeEvent.Registered, e.genesisHash], data: utf8(e.chainId) };
  if (e.event === 'SetUpdated') return { topics: [BridgeEvent.SetUpdated, e.genesisHash], data: concatBytes(e.commitment, bigintToBytesBE(BigInt(e.epoch), 8)) };
  return { topics: [BridgeEvent[e.event], e.bid], data: BidFieldsSsz.serialize(e.fields) };
}

/** Parses a bridge log (topics and data as 0x hex, as receipts carry them); null when it is not one. */
export function parseBridgeLog(topics: readonly string[], data: string): BridgeLogEvent | null {
  if (topics.length !== 2) return null;
  const t0 = parseHex(topics[0]!, 'topics[0]', HASH_BYTES);
  const id = parseHex(topics[1]!, 'topics[1]', HASH_BYTES);
  const name = (Object.keys(BridgeEvent) as BridgeEventName[]).find((k) => bytesEqual(BridgeEvent[k], t0));
  if (!name) return null;
  const bytes = parseHex(data, 'data');
  if (name === 'Registered') return { event: name, genesisHash: id, chainId: Buffer.from(bytes).toString('utf8') };
  if (name === 'SetUpdated') return bytes.length === HASH_BYTES + 8 ? { event: name, genesisHash: id, commitment: bytes.slice(0, HASH_BYTES), epoch: Number(bytesToBigintBE(bytes.subarray(HASH_BYTES))) } : null;
  const fields = BidFieldsSsz.deserialize(bytes);
  if (!bytesEqual(bidId(fields), id)) return null;
  return { event: name, bid: id, fields };
}

/** JSON of BID fields (API and CLI). */
export interface BidFieldsJson {
  source: string;
  destination: string;
  lock_tx: string;
  sender: string;
  recipient: string;
  /** Wei, base 10. */
  amount: string;
  /** Unix seconds. */
  timeout: number;
}

/** BID fields as JSON. */
export function bidFieldsToJson(f: BidFields): BidFieldsJson {
  return {
    source: toHex(f.source),
    destination: toHex(f.destination),
    lock_tx: toHex(f.lockTx),
    sender: toHex(f.sender),
    recipient: toHex(f.recipient),
    amount: f.amount.toString(),
    timeout: f.timeout,
  };
}

/** BID fields from JSON (API and CLI); every fault is a MalformedError naming `field`. */
export function bidFieldsFromJson(v: unknown, field = 'fields'): BidFields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new MalformedError(field, 'expected an object');
  const o = v as Record<string, unknown>;
  if (typeof o.amount !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(o.amount) || BigInt(o.amount) >= 1n << 256n) throw new MalformedError(`${field}.amount`, 'expected a base-10 integer below 2^256');
  if (typeof o.timeout !== 'number' || !Number.isSafeInteger(o.timeout) || o.timeout < 0) throw new MalformedError(`${field}.timeout`, 'expected a non-negative integer (Unix seconds)');
  return {
    source: parseHex(o.source, `${field}.source`, HASH_BYTES),
    destination: parseHex(o.destination, `${field}.destination`, HASH_BYTES),
    lockTx: parseHex(o.lock_tx, `${field}.lock_tx`, HASH_BYTES),
    sender: parseHex(o.sender, `${field}.sender`, ADDRESS_BYTES),
    recipient: parseHex(o.recipient, `${field}.recipient`, ADDRESS_BYTES),
    amount: BigInt(o.amount),
    timeout: o.timeout,
  };
}

/**
 * The bridge account proof of one slot, from the light client's wire proof (GET
 * /api/v1/light/proof with `keys` = that slot); MalformedError when it lacks the slot.
 */
export function bridgeAccountProofFromWire(wire: AccountProofWire, slot: Uint8Array): BridgeAccountProof {
  if (wire.address.toLowerCase() !== BRIDGE_ADDRESS) throw new MalformedError('proof.address', `expected the bridge account ${BRIDGE_ADDRESS}, got ${wire.address}`);
  const s = wire.storageProof.find((p) => p.key.toLowerCase() === toHex(slot));
  if (!s) throw new MalformedError('proof.storageProof', `no proof of slot ${toHex(slot)}`);
  const nodes = (list: readonly string[], field: string) => list.map((n, i) => parseHex(n, `${field}[${i}]`));
  return {
    balance: BigInt(wire.balance),
    nonce: BigInt(wire.nonce),
    codeHash: parseHex(wire.codeHash, 'proof.codeHash', HASH_BYTES),
    storageHash: parseHex(wire.storageHash, 'proof.storageHash', HASH_BYTES),
    accountNodes: nodes(wire.accountProof, 'proof.accountProof'),
    value: parseHex(s.value, 'proof.storageProof.value', HASH_BYTES),
    storageNodes: nodes(s.proof, 'proof.storageProof.proof'),
  };
}

/** The wire form of a bridge account proof of `slot` against `stateRoot`, as the state trie's standalone verifier reads it. */
export function bridgeAccountProofToWire(p: BridgeAccountProof, stateRoot: Uint8Array, slot: Uint8Array): AccountProofWire {
  return {
    address: BRIDGE_ADDRESS,
    stateRoot: toHex(stateRoot),
    balance: p.balance.toString(),
    nonce: Number(p.nonce),
    codeHash: toHex(p.codeHash),
    storageHash: toHex(p.storageHash),
    accountProof: p.accountNodes.map((n) => toHex(n)),
    storageProof: [{ key: toHex(slot), value: toHex(p.value), proof: p.storageNodes.map((n) => toHex(n)) }],
  };
}
