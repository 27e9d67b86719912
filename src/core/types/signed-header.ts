/**
 * The SignedHeader: the fixed 100-byte form of a block header that a proposer signs (DECISIONS
 * "Encodings"). Apart from block.ts so slashing evidence (evidence.ts), which carries signed
 * headers, encodes them without importing the block types that carry evidence.
 */
import { chainIdBytes } from '../crypto/domain.js';
import { SignedHeaderSsz } from './ssz.js';

/** The canonical signed form of a header. */
export interface SignedHeader {
  chainId: string;
  index: number;
  /** Unix seconds: floor(wire ms / 1000). */
  timestamp: number;
  parentHash: Uint8Array;
  merkleRoot: Uint8Array;
  validatorIndex: number;
}

/** The 100-byte SSZ encoding of a SignedHeader. */
export function encodeSignedHeader(sh: SignedHeader): Uint8Array {
  return SignedHeaderSsz.serialize({ ...sh, chainId: chainIdBytes(sh.chainId) });
}
