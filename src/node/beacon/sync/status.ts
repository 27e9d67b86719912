/**
 * The `status` request/response of the beacon's sync (`SyncProtocols.status`): each side sends
 * its chain identity, head and finalised checkpoint. Fixed-size binary, big enough to say which
 * chain a peer is on and whether it is ahead, small enough that a flood of them costs nothing.
 */
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { CHAIN_ID_BYTES, HASH_BYTES } from '../../../core/constants.js';
import { chainIdBytes } from '../../../core/crypto/domain.js';
import { MalformedError } from '../../../core/errors.js';

/** One side's view of its chain. Roots are 0x hex; `chainId` is the zero-padded 12-byte id. */
export interface StatusMessage {
  chainId: Uint8Array;
  genesisHash: string;
  headRoot: string;
  headSlot: number;
  finalizedRoot: string;
  finalizedEpoch: number;
}

/** chain_id(12) ‖ genesis_hash(32) ‖ head_root(32) ‖ head_slot(u64 LE) ‖ finalized_root(32) ‖ finalized_epoch(u64 LE). */
export const STATUS_BYTES = CHAIN_ID_BYTES + HASH_BYTES * 3 + 8 * 2;

/** Encodes a status message. */
export function encodeStatus(s: StatusMessage): Uint8Array {
  const out = new Uint8Array(STATUS_BYTES);
  const view = new DataView(out.buffer);
  let o = 0;
  out.set(s.chainId, o);
  o += CHAIN_ID_BYTES;
  out.set(parseHex(s.genesisHash, 'status.genesis_hash', HASH_BYTES), o);
  o += HASH_BYTES;
  out.set(parseHex(s.headRoot, 'status.head_root', HASH_BYTES), o);
  o += HASH_BYTES;
  view.setBigUint64(o, BigInt(s.headSlot), true);
  o += 8;
  out.set(parseHex(s.finalizedRoot, 'status.finalized_root', HASH_BYTES), o);
  o += HASH_BYTES;
  view.setBigUint64(o, BigInt(s.finalizedEpoch), true);
  return out;
}

/** Decodes a status message; anything but exactly STATUS_BYTES with safe integers is malformed. */
export function decodeStatus(bytes: Uint8Array): StatusMessage {
  if (bytes.length !== STATUS_BYTES) throw new MalformedError('status', `expected ${STATUS_BYTES} bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const chainId = bytes.slice(o, (o += CHAIN_ID_BYTES));
  const genesisHash = toHex(bytes.subarray(o, (o += HASH_BYTES)));
  const headRoot = toHex(bytes.subarray(o, (o += HASH_BYTES)));
  const headSlot = view.getBigUint64(o, true);
  o += 8;
  const finalizedRoot = toHex(bytes.subarray(o, (o += HASH_BYTES)));
  const finalizedEpoch = view.getBigUint64(o, true);
  if (headSlot > BigInt(Number.MAX_SAFE_INTEGER) || finalizedEpoch > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new MalformedError('status', 'head_slot and finalized_epoch must be below 2^53');
  }
  return { chainId, genesisHash, headRoot, headSlot: Number(headSlot), finalizedRoot, finalizedEpoch: Number(finalizedEpoch) };
}

/** Why a peer's status puts it on another chain, or undefined when it is on ours. */
export function otherChainReason(ours: { chainId: string; genesisHash: string }, theirs: StatusMessage): string | undefined {
  const mine = chainIdBytes(ours.chainId);
  if (mine.length !== theirs.chainId.length || mine.some((b, i) => b !== theirs.chainId[i])) {
    return `chain id ${JSON.stringify(new TextDecoder().decode(theirs.chainId).replace(/\0+$/, ''))} is not ${JSON.stringify(ours.chainId)}`;
  }
  if (theirs.genesisHash !== ours.genesisHash.toLowerCase()) return `genesis ${theirs.genesisHash} is not ${ours.genesisHash}`;
  return undefined;
}
