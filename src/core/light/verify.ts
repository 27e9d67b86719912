/**
 * The light client's checks (docs/light-client.md), pure functions over decoded objects: a
 * finality update against the trusted validator set, a header chain back from a verified header,
 * and account/storage proofs against a verified header's state_root. Each failure is a
 * LightClientError whose code names the check and whose message names the object.
 */
import { HASH_BYTES } from '../constants.js';
import { bytesEqual, parseHex, toHex } from '../codec/bytes.js';
import { verifyAttestation } from '../types/attestation.js';
import { type BlockHeader, blockHash } from '../types/block.js';
import { type AccountProofWire, verifyAccountProof, verifyStorageProof } from '../state/trie.js';
import { bitfieldSize, type FinalityUpdate, LightClientError, type TrustedState } from './types.js';

/** The participation bitfield of `indices`: ceil(size / 8) bytes, bit i = byte i >> 3, bit i & 7. */
export function participationBits(indices: Iterable<number>, size: number): Uint8Array {
  const bits = new Uint8Array(Math.ceil(size / 8));
  for (const i of indices) {
    if (i >= size) throw new RangeError(`validator ${i} is outside a bitfield of ${size}`);
    bits[i >> 3]! |= 1 << (i & 7);
  }
  return bits;
}

/** Validator indices whose bit is set. */
export function participants(bits: Uint8Array): number[] {
  const out: number[] = [];
  bits.forEach((b, byte) => {
    for (let bit = 0; bit < 8; bit++) if (b & (1 << bit)) out.push(byte * 8 + bit);
  });
  return out;
}

/**
 * Refuses a participation bitfield that is not the canonical one over `size` validators: exactly
 * ceil(size / 8) bytes (no trailing zero byte, none missing) with the bits above `size` zero.
 */
export function checkCanonicalBitfield(bits: Uint8Array, size: number): void {
  const want = Math.ceil(size / 8);
  if (bits.length !== want) throw new LightClientError('LIGHT_NONCANONICAL', `participation bitfield is ${bits.length} bytes, the trusted set of ${size} validators needs exactly ${want}${bits.length > want ? ' (the chain\'s validator set grew after the trusted one: follow its set changes first)' : ''}`);
  const spare = size & 7;
  if (spare !== 0 && bits[want - 1]! >> spare !== 0) throw new LightClientError('LIGHT_NONCANONICAL', `participation bitfield sets bits above validator ${size - 1}, the trusted set's last`);
}

/** What a verified finality update establishes. */
export interface VerifiedFinality {
  header: BlockHeader;
  root: Uint8Array;
  epoch: number;
  signers: number;
  signedStake: bigint;
  activeStake: bigint;
}

/**
 * Verifies a finality update against the trusted set: the header hashes to the finalised root;
 * every attestation votes the finalising link (source = the finalised checkpoint, target = one
 * epoch later, one target root, slot inside the target epoch); signers are distinct, known,
 * active and their signatures valid, listed by ascending index; the bitfield is canonical
 * (checkCanonicalBitfield) and names exactly the signers; and their stake is at
 * least 2/3 of the trusted set's active stake (3 × signed ≥ 2 × active, as fork choice counts).
 * Signers outside the trusted set (validators registered after the checkpoint) fail the update:
 * a client moves to a newer set only through a verified set change (set-change.ts), never by
 * counting votes it cannot weigh.
 */
export function verifyFinalityUpdate(u: FinalityUpdate, trusted: TrustedState, opts: { minEpoch?: number } = {}): VerifiedFinality {
  const root = blockHash(u.header);
  if (!bytesEqual(root, u.finalized.root)) {
    throw new LightClientError('LIGHT_HEADER_MISMATCH', `finality update header ${u.header.index} hashes to ${toHex(root)}, not the finalized root ${toHex(u.finalized.root)}`);
  }
  if (opts.minEpoch !== undefined && u.finalized.epoch < opts.minEpoch) {
    throw new LightClientError('LIGHT_STALE_UPDATE', `finality update is for epoch ${u.finalized.epoch}, older than the trusted epoch ${opts.minEpoch}`);
  }
  if (u.target.epoch !== u.finalized.epoch + 1) {
    throw new LightClientError('LIGHT_NOT_FINALIZING_LINK', `target epoch ${u.target.epoch} is not the epoch after the finalized epoch ${u.finalized.epoch}`);
  }
  checkCanonicalBitfield(u.participation, bitfieldSize(trusted.validators));
  const seen = new Set<number>();
  let signed = 0n;
  let previous = -1;
  for (const att of u.attestations) {
    const d = att.data;
    const who = `attestation of validator ${att.validatorIndex}`;
    if (d.source.epoch !== u.finalized.epoch || !bytesEqual(d.source.root, u.finalized.root) || d.target.epoch !== u.target.epoch || !bytesEqual(d.target.root, u.target.root)) {
      throw new LightClientError('LIGHT_NOT_FINALIZING_LINK', `${who} votes ${d.source.epoch}/${toHex(d.source.root)} → ${d.target.epoch}/${toHex(d.target.root)}, not the finalizing link ${u.finalized.epoch} → ${u.target.epoch}`);
    }
    if (Math.floor(d.slot / trusted.slotsPerEpoch) !== d.target.epoch) {
      throw new LightClientError('LIGHT_NOT_FINALIZING_LINK', `${who}: slot ${d.slot} is not in its target epoch ${d.target.epoch}`);
    }
    if (seen.has(att.validatorIndex)) throw new LightClientError('LIGHT_DUPLICATE_SIGNER', `validator ${att.validatorIndex} signs the finality update twice`);
    // One canonical form: a reordered update is another encoding of the same votes, refused so
    // that every valid update has exactly one byte form (and duplicates cannot hide out of order).
    if (att.validatorIndex < previous) throw new LightClientError('LIGHT_NONCANONICAL', `attestations are not sorted by validator index: ${att.validatorIndex} follows ${previous}`);
    previous = att.validatorIndex;
    seen.add(att.validatorIndex);
    const v = trusted.validators.get(att.validatorIndex);
    if (!v || !v.active) {
      throw new LightClientError('LIGHT_UNKNOWN_SIGNER', `validator ${att.validatorIndex} is not an active validator of the trusted set (if the set changed after the trusted checkpoint, follow its set changes first)`);
    }
    if (!verifyAttestation(att, v.publicKey, trusted.chainId)) throw new LightClientError('LIGHT_BAD_SIGNATURE', `${who}: signature verification failed`);
    signed += v.stake;
  }
  const claimed = participants(u.participation);
  if (claimed.length !== seen.size || claimed.some((i) => !seen.has(i))) {
    throw new LightClientError('LIGHT_BITFIELD_MISMATCH', `participation bitfield names validators [${claimed.join(', ')}], the attestations are signed by [${[...seen].sort((a, b) => a - b).join(', ')}]`);
  }
  let active = 0n;
  for (const v of trusted.validators.values()) if (v.active) active += v.stake;
  if (active === 0n || 3n * signed < 2n * active) {
    throw new LightClientError('LIGHT_INSUFFICIENT_STAKE', `signers hold ${signed} of ${active} active stake, below 2/3`);
  }
  return { header: u.header, root, epoch: u.finalized.epoch, signers: seen.size, signedStake: signed, activeStake: active };
}

/**
 * Verifies a header chain walking back from a verified header: headers[0] hashes to `trusted`,
 * each next one is its predecessor's parent (its hash is the predecessor's parent_hash, its index
 * one lower). Returns the last header, whose ancestry is then proven.
 */
export function verifyAncestry(trusted: Uint8Array, headers: readonly BlockHeader[]): BlockHeader {
  if (headers.length === 0) throw new LightClientError('LIGHT_ANCESTRY_BROKEN', 'the header chain is empty');
  let expected = trusted;
  let prev: BlockHeader | undefined;
  for (const [i, h] of headers.entries()) {
    const hash = blockHash(h);
    if (!bytesEqual(hash, expected)) {
      const link = prev ? `the parent_hash of header ${prev.index}` : 'the verified root';
      throw new LightClientError('LIGHT_ANCESTRY_BROKEN', `header ${i} (index ${h.index}) hashes to ${toHex(hash)}, not ${link} ${toHex(expected)}`);
    }
    if (prev && h.index !== prev.index - 1) throw new LightClientError('LIGHT_ANCESTRY_BROKEN', `header ${i} has index ${h.index}, its child ${prev.index}`);
    expected = h.parentHash;
    prev = h;
  }
  return prev!;
}

/** What a verified account proof establishes. */
export interface VerifiedAccount {
  address: string;
  balance: bigint;
  nonce: bigint;
  /** Proven storage values by 0x key. */
  storage: Map<string, string>;
}

/**
 * Verifies an account proof (and its storage proofs) for `address` against a verified header's
 * state_root: the state the header's block executes on, i.e. its parent's post-state.
 */
export function verifyAccountAgainstHeader(header: BlockHeader, address: string, proof: AccountProofWire, storageKeys: readonly string[] = []): VerifiedAccount {
  const want = address.toLowerCase();
  if (typeof proof.address !== 'string' || proof.address.toLowerCase() !== want) {
    throw new LightClientError('LIGHT_PROOF_INVALID', `the proof is for ${String(proof.address)}, not ${want}`);
  }
  if (!verifyAccountProof(header.stateRoot, proof)) {
    throw new LightClientError('LIGHT_PROOF_INVALID', `the account proof of ${want} does not verify against state_root ${toHex(header.stateRoot)} of header ${header.index}`);
  }
  const storageRoot = parseHex(proof.storageHash, 'storageHash', HASH_BYTES);
  const storage = new Map<string, string>();
  for (const s of Array.isArray(proof.storageProof) ? proof.storageProof : []) {
    if (!verifyStorageProof(storageRoot, s)) throw new LightClientError('LIGHT_PROOF_INVALID', `the storage proof of ${want} key ${s.key} does not verify against its storage root`);
    storage.set(s.key.toLowerCase(), s.value.toLowerCase());
  }
  for (const k of storageKeys) {
    if (!storage.has(k.toLowerCase())) throw new LightClientError('LIGHT_PROOF_INVALID', `the proof of ${want} has no storage proof for key ${k}`);
  }
  return { address: want, balance: BigInt(proof.balance), nonce: BigInt(proof.nonce), storage };
}
