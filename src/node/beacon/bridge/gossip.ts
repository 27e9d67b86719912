/**
 * BID signatures between beacons (gossip `/service/bid_signatures/v1`): validators post to their
 * own beacon, and with validators spread over several beacons no single one would hold 2/3 of the
 * stake without the others' signatures. The payload is SSZ `{bid, validator_index, signature}`
 * (3,349 bytes, fixed). A signature that arrives before its BID's lock block is verified and held
 * in a bounded buffer until the lock is imported.
 */
import { ByteVectorType, ContainerType, UintNumberType } from '@chainsafe/ssz';
import { toHex } from '../../../core/codec/bytes.js';
import { HASH_BYTES, SIGNATURE_BYTES } from '../../../core/constants.js';
import type { BidSignature } from '../../../core/bridge/types.js';
import { MalformedError } from '../../../core/errors.js';

const BidSignatureGossipSsz = new ContainerType({ bid: new ByteVectorType(HASH_BYTES), validatorIndex: new UintNumberType(8), signature: new ByteVectorType(SIGNATURE_BYTES) });

/** Size of a gossiped BID signature (fixed). */
export const BID_SIGNATURE_GOSSIP_BYTES = BidSignatureGossipSsz.maxSize;

/** Most signatures held for BIDs this beacon has not registered yet (about 3.3 KB each). */
export const MAX_HELD_SIGNATURES = 1_024;

/** The gossip payload of a BID signature. */
export function encodeBidSignatureGossip(bid: Uint8Array, s: BidSignature): Uint8Array {
  return BidSignatureGossipSsz.serialize({ bid, validatorIndex: s.validatorIndex, signature: s.signature });
}

/** Decodes a gossiped BID signature; MalformedError for anything else. */
export function decodeBidSignatureGossip(data: Uint8Array): { bid: string; signature: BidSignature } {
  if (data.length !== BID_SIGNATURE_GOSSIP_BYTES) throw new MalformedError('bid_signature', `expected ${BID_SIGNATURE_GOSSIP_BYTES} bytes, got ${data.length}`);
  let v;
  try {
    v = BidSignatureGossipSsz.deserialize(data);
  } catch (err) {
    throw new MalformedError('bid_signature', (err as Error).message);
  }
  if (!Number.isSafeInteger(v.validatorIndex)) throw new MalformedError('bid_signature.validator_index', 'integers must be below 2^53');
  return { bid: toHex(v.bid), signature: { validatorIndex: v.validatorIndex, signature: v.signature } };
}

/** Verified signatures of BIDs not registered yet, oldest dropped first past MAX_HELD_SIGNATURES. */
export class HeldSignatures {
  private readonly byBid = new Map<string, Map<number, Uint8Array>>();
  private size = 0;

  /** Holds one (the first per validator and BID is kept). */
  hold(bid: string, s: BidSignature): void {
    let m = this.byBid.get(bid);
    if (!m) this.byBid.set(bid, (m = new Map()));
    if (m.has(s.validatorIndex)) return;
    m.set(s.validatorIndex, s.signature);
    this.size++;
    for (const [old, held] of this.byBid) {
      if (this.size <= MAX_HELD_SIGNATURES) break;
      this.byBid.delete(old);
      this.size -= held.size;
    }
  }

  /** Takes (and forgets) what is held for `bid`. */
  take(bid: string): Map<number, Uint8Array> | undefined {
    const m = this.byBid.get(bid);
    if (m) {
      this.byBid.delete(bid);
      this.size -= m.size;
    }
    return m;
  }

  /** Signatures held. */
  get count(): number {
    return this.size;
  }
}
