/** Flags of the `svc contract` commands that send a transaction (deploy, call): `tx send`'s signing flags plus waiting. */
import { Flags } from '@oclif/core';
import { executionUrlFlag } from './flags.js';
import { valueTxFlags } from './tx-flags.js';
import type { Receipt } from '../api/execution.js';
import type { ContractTxResult } from '../client/contract.js';
import { formatAmount } from './format.js';
import { normalizeAddress } from '../core/crypto/address.js';
import { SvcError } from '../core/errors.js';

const { from, value, 'gas-price': gasPrice, 'password-file': passwordFile } = valueTxFlags({ valueRequired: false });

/** Signing, fee, nonce and wait flags. */
export const contractTxFlags = {
  from,
  value,
  'gas-price': gasPrice,
  'gas-limit': Flags.string({ description: 'gas limit (default: the node\'s estimate; give one to send a transaction the node predicts to fail)' }),
  nonce: Flags.string({ description: 'sender nonce (default: the pending nonce from the node)' }),
  'chain-id': Flags.string({ description: 'chain id the signature is bound to (default: the node\'s)' }),
  wait: Flags.boolean({ description: 'wait until the transaction is in a block and print its receipt (exit 1 if it failed)' }),
  timeout: Flags.integer({ description: 'with --wait: seconds to wait before giving up (exit 1)', default: 60, min: 1, max: 86_400 }),
  'password-file': passwordFile,
  'execution-url': executionUrlFlag,
};

/** Human lines of a sent contract transaction. */
export function sentLines(sent: ContractTxResult): string[] {
  return [
    `Hash:      ${sent.hash}`,
    `From:      ${sent.from}`,
    `To:        ${sent.to ?? '(contract deployment)'}`,
    ...(sent.value !== '0' ? [`Value:     ${formatAmount(sent.value)}`] : []),
    `Nonce:     ${sent.nonce}`,
    `Gas:       ${sent.gas_limit}${sent.estimated_gas === undefined ? '' : ' (estimated)'} at ${sent.gas_price} wei`,
    `Pool:      ${sent.pool_status}${sent.pool_status === 'queued' ? ' (waits for a lower nonce)' : ''}`,
  ];
}

/** Human lines of a contract transaction's receipt. */
export function contractReceiptLines(r: Receipt, state: string | undefined): string[] {
  return [
    `State:     ${state ?? 'Confirmed'}`,
    `Block:     ${r.blockNumber} (${r.blockHash})`,
    `Result:    ${r.status === 1 ? 'success' : `failed${r.error ? `: ${r.error}` : ''}`}`,
    `Gas used:  ${r.gasUsed}`,
    `Fee:       ${r.fee} wei`,
    ...(r.contractAddress ? [`Contract:  ${r.contractAddress}`] : []),
    ...(r.logs.length ? [`Logs:      ${r.logs.length}`] : []),
  ];
}

/** A contract address argument; a malformed one is a usage error (exit 2). */
export function usageAddress(v: string): string {
  try {
    return normalizeAddress(v, 'address');
  } catch (err) {
    throw new SvcError('USAGE', (err as Error).message);
  }
}
