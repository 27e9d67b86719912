import { Args } from '@oclif/core';
import { SvcCommand } from '../cli/base.js';
import { executionUrlFlag } from '../cli/flags.js';
import { formatTokens } from '../cli/format.js';
import { ExecutionClient, resolveExecutionUrl } from '../client/execution.js';
import { resolveAddress } from '../wallet/store.js';

export default class Account extends SvcCommand {
  static override summary = 'Show the balance, nonce and pending nonce of an address on the execution node';
  static override description =
    'The balance is at the head block. The pending nonce is the next nonce to use: the account nonce plus the sender\'s transactions waiting in the pool. --json gives the balance in wei as a base-10 string.';
  static override examples = ['<%= config.bin %> account 0x00000000000000000000000000000000000000aa', '<%= config.bin %> account alice --json'];
  static override args = { address: Args.string({ description: '0x address, or the name of a wallet in the store', required: true }) };
  static override flags = { 'execution-url': executionUrlFlag };

  async run() {
    const { args, flags } = await this.parse(Account);
    const address = await resolveAddress(args.address);
    const acc = await new ExecutionClient(resolveExecutionUrl(flags['execution-url'])).account(address);
    this.say(`Address:        ${acc.address}`);
    this.say(`Balance:        ${formatTokens(acc.balance)} tokens`);
    this.say(`Balance (wei):  ${acc.balance}`);
    this.say(`Nonce:          ${acc.nonce}`);
    this.say(`Pending nonce:  ${acc.pending_nonce}`);
    return acc;
  }
}
