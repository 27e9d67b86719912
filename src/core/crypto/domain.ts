/** Domain separation: every signed message is SHA3-256(tag ‖ chain_id ‖ payload). */
import { CHAIN_ID_BYTES } from '../constants.js';
import { CryptoError } from '../errors.js';
import { utf8 } from '../codec/bytes.js';
import { sha3 } from './hash.js';

/** ASCII tags, one per message kind; each is zero-padded to 32 bytes so no tag prefixes another. */
export const Domain = {
  Tx: 'svc/tx/v1',
  Authorization: 'svc/authorization/v1',
  Block: 'svc/block/v1',
  Vrf: 'svc/vrf/v1',
  Attestation: 'svc/attestation/v1',
  Randao: 'svc/randao/v1',
  /** A source-chain validator's signature over a BID id (docs/bridge.md). */
  BridgeBid: 'svc/bridge-bid/v1',
  /** A validator's consent to register a bridge counterpart on its own chain (docs/bridge.md). */
  BridgeRegistration: 'svc/bridge-registration/v1',
} as const;

export type DomainTag = (typeof Domain)[keyof typeof Domain];

const TAG_BYTES = 32;

/** The 32-byte zero-padded form of a domain tag. */
export function domainTagBytes(tag: DomainTag): Uint8Array {
  const out = new Uint8Array(TAG_BYTES);
  out.set(utf8(tag));
  return out;
}

/** Validates a chain id (1 to 12 bytes of UTF-8, no NUL) and returns its 12-byte zero-padded form. */
export function chainIdBytes(chainId: string): Uint8Array {
  const raw = utf8(chainId);
  if (raw.length === 0 || raw.length > CHAIN_ID_BYTES || raw.includes(0)) {
    throw new CryptoError(`chain id must be 1 to ${CHAIN_ID_BYTES} bytes of UTF-8 without NUL, got ${JSON.stringify(chainId)}`);
  }
  const out = new Uint8Array(CHAIN_ID_BYTES);
  out.set(raw);
  return out;
}

/** Domain-separated signing hash of `payload` for message kind `tag` on chain `chainId`. */
export function signingHash(tag: DomainTag, chainId: string, payload: Uint8Array): Uint8Array {
  return sha3(domainTagBytes(tag), chainIdBytes(chainId), payload);
}
