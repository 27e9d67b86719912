/**
 * Gas of a bridge operation (docs/bridge.md, "Operations"). Apart from verify.ts so the
 * transaction rules (src/core/types/transaction.ts) can price a transaction to BRIDGE_ADDRESS
 * without importing the light client, which imports the block types, which import them.
 */
import { BRIDGE_ADDRESS, BRIDGE_BYTE_GAS, DILITHIUM_VERIFY_GAS, TX_BASE_GAS } from '../constants.js';
import { bytesEqual, parseHex } from '../codec/bytes.js';
import { BridgeOp } from './types.js';
import { decodeBridgeOp } from './ops.js';

/**
 * Gas of a transaction to BRIDGE_ADDRESS carrying `data`: 21,000 + 16 per byte + 50,000 per ML-DSA
 * signature in the payload (finality votes and BID signatures). Undecodable data pays the bytes only.
 */
export function bridgeGas(data: Uint8Array): bigint {
  const base = TX_BASE_GAS + BRIDGE_BYTE_GAS * BigInt(data.length);
  let signatures = 0;
  try {
    const o = decodeBridgeOp(data);
    if (o.op === BridgeOp.Release) signatures = o.body.proof.update.attestations.length + o.body.signatures.length;
    else if (o.op === BridgeOp.Refund || o.op === BridgeOp.Complete) signatures = o.body.proof.update.attestations.length;
    else if (o.op === BridgeOp.UpdateSet) signatures = o.body.finality.attestations.length;
  } catch {
    // A malformed payload fails in the block (and is refused at admission): it still pays for its bytes.
  }
  return base + DILITHIUM_VERIFY_GAS * BigInt(signatures);
}

const BRIDGE_BYTES = parseHex(BRIDGE_ADDRESS, 'BRIDGE_ADDRESS', 20);

/** True when a transaction's recipient is the bridge system address (0x hex or 20 bytes). */
export function isBridgeAddress(to: Uint8Array | string | null): boolean {
  if (to === null) return false;
  // Bytes are compared as bytes: admission and block import ask this of every transaction, where a hex string each cost more than the check.
  return typeof to === 'string' ? to.toLowerCase() === BRIDGE_ADDRESS : bytesEqual(to, BRIDGE_BYTES);
}
