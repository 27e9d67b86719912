/**
 * How svc objects look on JSON-RPC: transactions, receipts and logs in Ethereum's shapes, so that
 * viem and ethers parse them (docs/execution.md, "Ethereum tooling"). Quantities are 0x hex.
 */
import type { LogJson, Receipt } from '../../../api/execution.js';
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import type { TxJson, ValueTxJson } from '../../../core/types/transaction-json.js';
import { logsBloom } from '../logs.js';
import { revertText } from './contracts.js';

/** A number as an Ethereum quantity. */
export const qty = (n: bigint | number): string => '0x' + BigInt(n).toString(16);

/** Offset Ethereum adds to a legacy signature's recovery bit (v = 27 + yParity). */
const LEGACY_V_BASE = 27;
const ZERO_WORD = '0x' + '00'.repeat(32);

/**
 * Ethereum's r, s, v and yParity for a transaction. An ML-DSA-signed transaction has no secp256k1
 * signature: r is zero, which no ECDSA signature can have (r is in [1, n-1]), so no tool recovers
 * a sender from it; s is SHA3-256 of the ML-DSA signature with its top bit cleared (a canonical-s
 * value that commits to the signature); v is 27, yParity 0. A type-3 (ECDSA-authorised)
 * transaction shows its real secp256k1 r, s and recovery bit.
 */
export function signatureFields(json: TxJson): { r: string; s: string; v: string; yParity: string } {
  const ecdsa = (json as Partial<ValueTxJson>).ecdsaSignature;
  if (ecdsa) {
    const sig = parseHex(ecdsa, 'ecdsaSignature', 65);
    const parity = sig[64]! & 1;
    return { r: toHex(sig.subarray(0, 32)), s: toHex(sig.subarray(32, 64)), v: qty(LEGACY_V_BASE + parity), yParity: qty(parity) };
  }
  const signature = (json as { signature?: string }).signature;
  const digest = signature ? sha3(parseHex(signature, 'signature')) : new Uint8Array(32);
  digest[0]! &= 0x7f;
  return { r: ZERO_WORD, s: toHex(digest), v: qty(LEGACY_V_BASE), yParity: '0x0' };
}

/**
 * A transaction object. `type` is 0x0 (legacy: one gas price, no access list) whatever the svc
 * envelope type, which `svcType` carries: Ethereum's types 1-3 mean access-list, fee-market and
 * blob transactions, and tooling would look for their fields.
 */
export function rpcTx(json: TxJson, chainId: number, at: { hash: string; number: number } | undefined, index: number | undefined) {
  const v = json as Partial<ValueTxJson>;
  return {
    hash: json.hash,
    type: '0x0',
    svcType: qty(json.type),
    nonce: qty(json.nonce),
    from: json.from,
    to: v.to ?? null,
    value: qty(BigInt(v.value ?? '0')),
    gas: qty(v.gasLimit ?? 0),
    gasPrice: qty(BigInt(v.gasPrice ?? '0')),
    input: v.data ?? '0x',
    chainId: qty(chainId),
    ...signatureFields(json),
    blockHash: at?.hash ?? null,
    blockNumber: at ? qty(at.number) : null,
    transactionIndex: index === undefined ? null : qty(index),
  };
}

/** Selector of Solidity's `Error(string)`: the first 4 bytes of keccak256("Error(string)"). */
export const ERROR_STRING_SELECTOR = '0x08c379a0';

/**
 * A revert reason as EVM clients carry it: ABI-encoded `Error(string)` (selector, the offset 0x20,
 * the UTF-8 length, the bytes right-padded to 32), which viem and ethers decode into a reason.
 */
export function abiErrorString(reason: string | Uint8Array): string {
  const bytes = typeof reason === 'string' ? new TextEncoder().encode(reason) : reason;
  const padded = new Uint8Array(Math.ceil(bytes.length / 32) * 32);
  padded.set(bytes);
  const word = (n: number) => n.toString(16).padStart(64, '0');
  return ERROR_STRING_SELECTOR + word(32) + word(bytes.length) + toHex(padded).slice(2);
}

/** The ABI-encoded reason of a failed receipt's error when it reverted, else undefined (out of gas, a trap: no revert data). */
export function receiptRevertData(error: string | undefined): string | undefined {
  const reason = revertText(error);
  return reason === undefined ? undefined : abiErrorString(reason);
}

function revertField(error: string | undefined): { revertReason?: string } {
  const data = receiptRevertData(error);
  return data === undefined ? {} : { revertReason: data };
}

/** A log in eth_getLogs' and receipts' shape (`removed`: it left the canonical chain, as a filter reports it). */
export function rpcLog(l: LogJson, removed = false) {
  return {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: qty(l.blockNumber),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    transactionIndex: qty(l.transactionIndex),
    logIndex: qty(l.logIndex),
    removed,
  };
}

/**
 * A receipt with its logs, their bloom and the deployed contract's address. A reverted one carries
 * `revertReason` ABI-encoded as `Error(string)`, as EVM clients do (svc's REST keeps the raw text).
 */
export function rpcReceipt(r: Receipt) {
  return {
    transactionHash: r.transactionHash,
    transactionIndex: qty(r.transactionIndex),
    blockHash: r.blockHash,
    blockNumber: qty(r.blockNumber),
    from: r.from,
    to: r.to,
    cumulativeGasUsed: qty(r.cumulativeGasUsed),
    gasUsed: qty(r.gasUsed),
    effectiveGasPrice: qty(BigInt(r.effectiveGasPrice)),
    contractAddress: r.contractAddress ?? null,
    logs: (r.logs ?? []).map((l) => rpcLog(l)),
    logsBloom: toHex(logsBloom(r.logs ?? [])),
    status: qty(r.status),
    type: '0x0',
    ...revertField(r.error),
  };
}
