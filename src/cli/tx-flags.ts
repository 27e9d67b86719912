/** Flags shared by the commands that build and sign a value transaction (`tx sign`, `tx send`). */
import { Flags } from '@oclif/core';
import type { ValueTxInput } from '../wallet/tx-builder.js';
import { passwordFileFlag } from './flags.js';

/** The fields of a value transaction except nonce and chain id, whose defaults differ per command. */
export function valueTxFlags(opts: { valueRequired: boolean }) {
  return {
    from: Flags.string({ description: 'signing wallet: name, address or file path', required: true }),
    to: Flags.string({ description: 'recipient 0x address', exactlyOne: ['to', 'deploy'] }),
    deploy: Flags.boolean({ description: 'contract deployment (no recipient; --data is the code)' }),
    value: opts.valueRequired
      ? Flags.string({ description: 'amount in wei (base-10)', required: true })
      : Flags.string({ description: 'amount in wei (base-10)', default: '0' }),
    'gas-price': Flags.string({ description: 'gas price in wei (base-10)', default: '1000000000' }),
    'gas-limit': Flags.string({ description: 'gas limit (default: the intrinsic gas of the transaction)' }),
    data: Flags.string({ description: 'call data or contract code, 0x hex', default: '0x' }),
    'password-file': passwordFileFlag,
  };
}

/** Parsed values of valueTxFlags. */
export interface ValueTxFlagValues {
  to?: string | undefined;
  deploy?: boolean | undefined;
  value: string;
  'gas-price': string;
  'gas-limit'?: string | undefined;
  data: string;
}

/** The builder's input from the flags and a nonce string. */
export function valueTxInput(flags: ValueTxFlagValues, nonce: string): ValueTxInput {
  return {
    to: flags.deploy ? null : flags.to!,
    value: flags.value,
    nonce,
    gasPrice: flags['gas-price'],
    gasLimit: flags['gas-limit'],
    data: flags.data,
  };
}
