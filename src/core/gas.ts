/**
 * Intrinsic gas: what a transaction pays before it runs (transfers and calls, bridge operations,
 * deployments), and the gas-limit rule built on it. Apart from the transaction types
 * (src/core/types/transaction.ts) because pricing a bridge operation decodes it
 * (src/core/bridge/gas.ts), and the bridge's types reach the block types, which carry
 * transactions: here that chain runs one way only.
 */
import { DEPLOY_BASE_GAS, DEPLOY_BYTE_GAS, TX_BASE_GAS } from './constants.js';
import { TxError } from './errors.js';
import { bridgeGas, isBridgeAddress } from './bridge/gas.js';
import { type Transaction, isAuthorization } from './types/transaction.js';

/** Intrinsic gas: 21,000 for transfers and calls, bridgeGas for bridge operations, 32,000 + 200 per code byte for deployments, 0 for authorisations. */
export function intrinsicGas(tx: Transaction): bigint {
  if (isAuthorization(tx)) return 0n;
  return callIntrinsicGas(tx.to, tx.data);
}

/**
 * Intrinsic gas of a call (21,000), a bridge operation (bridgeGas: its bytes and signatures) or a
 * deployment (32,000 + 200 per code byte). Deploy data is `u32 LE code length ‖ code ‖ constructor
 * args`: only the code is priced per byte; data that does not frame that way (refused at
 * admission, a status-0 receipt in a block) pays for every byte.
 */
export function callIntrinsicGas(to: Uint8Array | string | null, data: Uint8Array): bigint {
  if (isBridgeAddress(to)) return bridgeGas(data);
  if (to !== null) return TX_BASE_GAS;
  const framed = data.length >= 4 ? new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) : -1;
  const codeBytes = framed >= 0 && framed <= data.length - 4 ? framed : data.length;
  return DEPLOY_BASE_GAS + DEPLOY_BYTE_GAS * BigInt(codeBytes);
}

/** Enforces ErrGasTooLow (below intrinsic gas) and ErrGasTooHigh (above `maxGas`). */
export function checkGasLimit(tx: Transaction, maxGas: bigint): void {
  if (isAuthorization(tx)) return;
  if (tx.gasLimit > maxGas) throw new TxError('ErrGasTooHigh', `gas limit ${tx.gasLimit} exceeds protocol max ${maxGas}`);
  const need = intrinsicGas(tx);
  if (tx.gasLimit < need) throw new TxError('ErrGasTooLow', `intrinsic gas too low: gas limit ${tx.gasLimit} < ${need}`);
}

