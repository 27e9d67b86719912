/** Flags of the `svc contract` commands that send a transaction (deploy, call): `tx send`'s signing flags plus waiting. */
import { Flags } from '@oclif/core';
import { executionUrlFlag } from './flags.js';
import { valueTxFlags } from './tx-flags.js';
import type { Receipt } from '../api/execution.js';
import { type ContractTxResult, type TxSettings, receiptFailure, waitForReceipt } from '../client/contract.js';
import { ExecutionClient, resolveExecutionUrl } from '../client/execution.js';
import { SvcCommand } from './base.js';
import { readPassword } from './secrets.js';
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

/** The parsed values of contractTxFlags. */
export interface ContractTxFlagValues {
  from: string;
  value: string;
  'gas-price': string;
  'gas-limit'?: string | undefined;
  nonce?: string | undefined;
  'chain-id'?: string | undefined;
  wait: boolean;
  timeout: number;
  'password-file'?: string | undefined;
  'execution-url'?: string | undefined;
}

/** A command that sends a contract transaction (deploy, call): signs and sends it, and with --wait follows it into a block. */
export abstract class ContractTxCommand extends SvcCommand {
  /** Sends what `send` builds from the flags' settings, prints it, and with --wait its receipt; a status-0 receipt throws (exit 1). */
  protected async sendAndFollow(flags: ContractTxFlagValues, send: (s: TxSettings) => Promise<ContractTxResult>): Promise<ContractTxResult> {
    const client = new ExecutionClient(resolveExecutionUrl(flags['execution-url']));
    const settings: TxSettings = { client, from: flags.from, value: flags.value, gasPrice: flags['gas-price'], gasLimit: flags['gas-limit'], nonce: flags.nonce, chainId: flags['chain-id'], password: () => readPassword(flags['password-file']), warn: (l: string) => this.note(l) };
    const sent = await send(settings);
    for (const line of sentLines(sent)) this.say(line);
    if (!flags.wait) return sent;
    if (!this.jsonEnabled()) this.note(`Waiting up to ${flags.timeout} s for a block…`);
    const done = await waitForReceipt(client, sent, flags.timeout * 1000);
    for (const line of contractReceiptLines(done.receipt, done.state)) this.say(line);
    const failed = receiptFailure(done.receipt);
    if (failed) throw failed;
    return done;
  }
}
